"""Sequential minimal optimisation for the SVM dual on a dense precomputed kernel.

    min_a  1/2 a^T Q a - e^T a,   Q = (y y^T) o K,   y^T a = 0,   0 <= a <= C        (*)

Working-set selection by second-order information (Fan, Chen & Lin, JMLR 2005, WSS 2): the
first index maximises the KKT violation ``-y_t G_t`` over the indices that can move up, the
second minimises the second-order decrease ``-b^2 / a`` over those that can move down.  The
pair moves along ``d = y_i e_i - y_j e_j`` (which keeps ``y^T a = 0``) by the exact line
minimiser ``b / a``, clipped to the box.  Stops when the maximal violation
``m(a) - M(a) <= tol``, the criterion of libsvm.

Unlike libsvm this starts from any feasible ``a``: multiple kernel learning solves a
sequence of SVMs on slowly changing kernels, and the previous solution is feasible for every
kernel (the constraints do not depend on ``K``).
"""

from __future__ import annotations

import numpy as np

from semisup._accel import import_numba

numba = import_numba()

TAU = 1e-12


@numba.njit(cache=True)
def _smo(K, y, C, alpha, tol, max_iter):  # pragma: no cover - compiled
    n = y.size
    G = -np.ones(n)
    for s in range(n):
        if alpha[s] != 0.0:
            ys = y[s] * alpha[s]
            for t in range(n):
                G[t] += y[t] * ys * K[t, s]
    it = 0
    gap = np.inf
    while it < max_iter:
        # i: argmax over I_up of -y_t G_t
        i = -1
        gmax = -np.inf
        gmin = np.inf
        for t in range(n):
            v = -y[t] * G[t]
            up = (y[t] > 0 and alpha[t] < C) or (y[t] < 0 and alpha[t] > 0)
            low = (y[t] < 0 and alpha[t] < C) or (y[t] > 0 and alpha[t] > 0)
            if up and v > gmax:
                gmax = v
                i = t
            if low and v < gmin:
                gmin = v
        gap = gmax - gmin
        if gap <= tol or i < 0:
            break
        j = -1
        best = np.inf
        for t in range(n):
            low = (y[t] < 0 and alpha[t] < C) or (y[t] > 0 and alpha[t] > 0)
            if not low:
                continue
            v = -y[t] * G[t]
            b = gmax - v
            if b > 0:
                a = K[i, i] + K[t, t] - 2.0 * K[i, t]
                if a <= 0:
                    a = TAU
                score = -b * b / a
                if score < best:
                    best = score
                    j = t
        if j < 0:
            break
        a = K[i, i] + K[j, j] - 2.0 * K[i, j]
        if a <= 0:
            a = TAU
        b = gmax + y[j] * G[j]
        step = b / a
        # box: alpha_i + step y_i and alpha_j - step y_j stay in [0, C]
        lim_i = C - alpha[i] if y[i] > 0 else alpha[i]
        lim_j = alpha[j] if y[j] > 0 else C - alpha[j]
        if lim_i < step:
            step = lim_i
        if lim_j < step:
            step = lim_j
        alpha[i] += step * y[i]
        alpha[j] -= step * y[j]
        # round-off can leave a bound variable a hair outside the box
        alpha[i] = min(max(alpha[i], 0.0), C)
        alpha[j] = min(max(alpha[j], 0.0), C)
        for t in range(n):
            G[t] += step * y[t] * (K[t, i] - K[t, j])
        it += 1
    # bias from the free support vectors (y_t f(x_t) = 1 gives b = -y_t G_t)
    total = 0.0
    count = 0
    up_min = np.inf
    low_max = -np.inf
    for t in range(n):
        v = -y[t] * G[t]
        if 0.0 < alpha[t] < C:
            total += v
            count += 1
    if count > 0:
        bias = total / count
    else:
        for t in range(n):
            v = -y[t] * G[t]
            up = (y[t] > 0 and alpha[t] < C) or (y[t] < 0 and alpha[t] > 0)
            if up:
                up_min = min(up_min, v)
            else:
                low_max = max(low_max, v)
        bias = 0.5 * (up_min + low_max) if np.isfinite(up_min + low_max) else 0.0
    return alpha, bias, it, gap


def smo(K: np.ndarray, y: np.ndarray, C: float, alpha0: np.ndarray | None = None,
        tol: float = 1e-6, max_iter: int = 10_000_000) -> tuple[np.ndarray, float, int, bool]:
    """Solve (*) from ``alpha0`` (zero by default).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric PSD kernel (float64, C-contiguous).
    y : ndarray of shape (n,)
        ``+1/-1``.
    C : float
    alpha0 : ndarray of shape (n,), optional
        A feasible start: ``0 <= alpha0 <= C`` and ``y^T alpha0 = 0`` (it is projected onto
        the box; the caller keeps the equality).
    tol : float
        On the maximal KKT violation ``m(a) - M(a)``.
    max_iter : int

    Returns
    -------
    alpha : ndarray of shape (n,)
    bias : float
    n_iter : int
    converged : bool
    """
    y = np.ascontiguousarray(y, dtype=np.float64)
    K = np.ascontiguousarray(K, dtype=np.float64)
    alpha = np.zeros(y.size) if alpha0 is None else np.clip(
        np.array(alpha0, dtype=np.float64), 0.0, C)
    alpha, bias, it, gap = _smo(K, y, float(C), alpha, float(tol), int(max_iter))
    return alpha, float(bias), int(it), bool(gap <= tol)
