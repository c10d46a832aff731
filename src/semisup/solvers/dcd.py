"""Dual coordinate descent for the L2-SVM (squared hinge) with a certified stopping rule.

The supervised problem of eq. 2 of the SVMlin paper with ``R = lambda I``,

    f(w) = (lambda/2) ||w||^2 + (1/2) sum_i c_i max(0, 1 - y_i w^T x_i)^2,

has the dual (Hsieh, Chang, Lin, Keerthi & Sundararajan, ICML 2008, eq. 4 with
``D_ii = lambda / c_i``; ``alpha >= 0``, ``w(alpha) = sum_i alpha_i y_i x_i``)

    g(alpha) = lambda (sum_i alpha_i - (1/2) ||w(alpha)||^2 - (lambda/2) sum_i alpha_i^2 / c_i).

Coordinate descent on ``alpha`` costs ``O(nnz(x_i))`` per coordinate and keeps ``w(alpha)``
up to date; coordinates stuck at their bound are shrunk away as in liblinear.  Weak duality
``g(alpha) <= f(w)`` for every ``alpha`` gives the stopping rule: the relative duality gap
``(f(w(alpha)) - g(alpha)) / f(w(alpha))`` bounds the relative distance of the objective to
its minimum, so the solver's ``tol`` means the same as the objective gap used to compare
solvers.  The gap costs one product ``X w``; it is checked at epochs extrapolated from the
linear convergence of the previous checks, and the shrinking state survives the checks.

The finite Newton method (:mod:`.mfn`) remains the solver for the semi-supervised methods,
whose regularisers (graph terms) and re-weighted terms it handles in one place; this one is
the fast route for the supervised fit when the regulariser is the plain ridge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from semisup._accel import njit
from semisup._logging import get_logger
from semisup.losses import HingeTerms
from semisup.solvers._kernels import row_axpy, row_dot

logger = get_logger(__name__)


@dataclass
class DCDResult:
    """Outcome of :func:`l2svm_dual_cd`.

    Attributes
    ----------
    w : ndarray
        Weights (bias last when the design has one).
    outputs : ndarray
        ``X w`` over the design's rows.
    objective : float
        Primal objective ``f(w)``.
    dual_objective : float
        ``g(alpha)``, a lower bound on ``min f``.
    alpha : ndarray
        Dual variables, one per term (zero for terms of zero cost).
    n_iter : int
        Epochs (passes over the non-shrunk coordinates).
    converged : bool
        Whether the relative duality gap reached ``tol``.
    history : list of float
        Primal objective at each duality-gap check.
    gave_up : bool
        Whether the run stopped early under ``give_up_epochs`` (too slow to reach ``tol``).
    """

    w: np.ndarray
    outputs: np.ndarray
    objective: float
    dual_objective: float
    alpha: np.ndarray
    n_iter: int
    converged: bool
    history: list = field(default_factory=list)
    gave_up: bool = False

    @property
    def duality_gap(self) -> float:
        """Relative duality gap ``(f - g) / f``."""
        return (self.objective - self.dual_objective) / max(abs(self.objective), 1e-300)


@njit(cache=True, nogil=True)
def _dcd_epochs(indptr, indices, data, rows, s, y, qd, dd, alpha, w, eps, max_epochs,
                seed, index, state):
    """Coordinate descent with shrinking, resumable: at most ``max_epochs`` epochs.

    ``w`` has one more entry than there are features: the weight of the constant ``s``
    (``s = 0`` without intercept).  ``index`` (the coordinate order, active ones first) and
    ``state = [n_active, pg_max_old]`` carry the shrinking across calls.  Returns the epochs
    run and whether the projected-gradient range fell to ``eps`` over every coordinate.
    """
    rand = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) | np.uint64(1)  # xorshift state
    n = rows.shape[0]
    nf = w.shape[0] - 1
    active = int(state[0])
    pg_max_old = state[1]
    epoch = 0
    done = False
    while epoch < max_epochs:
        for i in range(active):  # a fresh random order of the active coordinates
            # xorshift64 and a multiply-shift draw in [0, active - i): a few cycles, where
            # numpy's generator costs as much as a short row's dot product
            rand ^= rand << np.uint64(13)
            rand ^= rand >> np.uint64(7)
            rand ^= rand << np.uint64(17)
            j = i + int(((rand >> np.uint64(32)) * np.uint64(active - i)) >> np.uint64(32))
            index[i], index[j] = index[j], index[i]
        pg_max = -np.inf
        pg_min = np.inf
        i = 0
        while i < active:
            t = index[i]
            r = rows[t]
            g = y[t] * (row_dot(indptr, indices, data, r, w) + w[nf] * s) - 1.0 \
                + dd[t] * alpha[t]
            pg = g
            if alpha[t] == 0.0:
                if g > pg_max_old:
                    # at its bound and likely to stay there: drop from this round
                    active -= 1
                    index[i], index[active] = index[active], index[i]
                    continue
                if g > 0.0:
                    pg = 0.0
            if pg > pg_max:
                pg_max = pg
            if pg < pg_min:
                pg_min = pg
            if pg != 0.0:
                old = alpha[t]
                new = max(old - g / qd[t], 0.0)
                alpha[t] = new
                step = (new - old) * y[t]
                row_axpy(indptr, indices, data, r, step, w)
                w[nf] += step * s
            i += 1
        epoch += 1
        if pg_max - pg_min <= eps:
            if active == n:
                done = True
                break
            active = n  # converged on the shrunk problem: recheck every coordinate
            pg_max_old = np.inf
            continue
        pg_max_old = pg_max if pg_max > 0.0 else np.inf
    state[0] = active
    state[1] = pg_max_old
    return epoch, done


FIRST_CHECK = 4  # epochs before the first duality-gap check
# First projected-gradient tolerance of the shrinking rounds (liblinear's default is 0.1);
# divided by 10 whenever a round converges but the duality gap is still above ``tol``.
EPS0 = 0.1


def _next_check(checks: list, epochs: int, gap: float, tol: float, chunk: int) -> int:
    """Epochs to run before the next gap check (appends ``(epochs, log gap)`` to ``checks``).

    Dual CD converges linearly, so ``log gap`` falls about linearly in the epochs: the
    next check is placed where the last two checks extrapolate the gap to reach ``tol``,
    at most twice as far as the last chunk.  A check costs one product ``X w`` (half an
    epoch at most), so checks are few yet the run overshoots the target by little.
    """
    checks.append((epochs, np.log(max(gap, 1e-300))))
    remaining = _epochs_to_tol(checks, tol)
    if remaining is None:
        return chunk if len(checks) < 2 else 2 * chunk
    return int(min(2 * chunk, max(1, remaining)))


def _epochs_to_tol(checks: list, tol: float) -> int | None:
    """Epochs after the last check at which the last two checks' linear rate puts the gap at
    ``tol``; ``None`` when there is no falling trend (one check, or the gap rose)."""
    if len(checks) < 2:
        return None
    (e0, l0), (e1, l1) = checks[-2], checks[-1]
    rate = (l1 - l0) / max(e1 - e0, 1)
    if rate >= 0.0:
        return None
    return int(np.ceil((np.log(tol) - l1) / rate))


def l2svm_dual_cd(A, terms: HingeTerms, lam: float, tol: float = 1e-6,
                  max_epochs: int = 10_000, random_state: int = 0,
                  verbose: int = 0, give_up_epochs: int | None = None) -> DCDResult:
    """Minimise eq. 2 (``R = lam I``) by dual coordinate descent until the gap is ``<= tol``.

    Parameters
    ----------
    A : Design
        Sparse data rows, with the intercept column if any.
    terms : HingeTerms
        Squared hinge terms over the rows of ``A`` (terms may share rows).
    lam : float
        Ridge strength ``lambda > 0``.
    tol : float
        Relative duality gap at which to stop.
    max_epochs : int
        Limit on passes over the coordinates, summed over the rounds.
    random_state : int
        Seed of the coordinate order.
    verbose : int
        Log the gap after every round (DEBUG, logger ``semisup.solvers.dcd``) when > 1.
    give_up_epochs : int, optional
        Stop early, unconverged (``DCDResult.gave_up``), once two successive gap checks
        extrapolate ``tol`` beyond this many epochs in all, or the epochs reach it.  Dual CD
        converges linearly at a rate set by the conditioning of the dual; with a small
        ``lam`` and more rows than features (a rank-deficient dual Hessian plus
        ``lam / c_i`` on its diagonal) the rate can be too slow to reach ``tol`` in any
        reasonable time (SecStr one-hot, 1,000 labels, ``lam=1e-3``: gap 0.33 after 10,000
        epochs).  A caller such as ``L2SVM(solver="auto")`` then hands the weights to the
        finite Newton method.

    Returns
    -------
    DCDResult
    """
    if not A.sparse:
        raise ValueError("l2svm_dual_cd needs a sparse design; use l2svm_mfn for dense data")
    if lam <= 0:
        raise ValueError(f"lam must be > 0 for the dual solver, got {lam}")
    if terms.margin is not None:
        raise ValueError("l2svm_dual_cd supports margin-1 terms only: use l2svm_mfn for terms "
                         "with margins")
    term_rows = np.arange(terms.y.size) if terms.rows is None else terms.rows
    keep = np.flatnonzero(terms.cost > 0)
    rows = A.rows[term_rows[keep]]
    y, c = terms.y[keep], terms.cost[keep]
    s = A.intercept_scaling if A.fit_intercept else 0.0
    indptr, indices, data = A._indptr, A._indices, A._data
    dd = lam / c
    qd = A.row_sq_norms()[term_rows[keep]] + dd
    alpha = np.zeros(rows.size)
    w = np.zeros(A.n_features + 1)
    index = np.arange(rows.size)
    state = np.array([rows.size, np.inf])  # shrinking: active count, last max gradient
    eps, epochs, history, checks = EPS0, 0, [], []
    chunk = FIRST_CHECK
    rng = np.random.default_rng(random_state)
    slow_checks, gave_up = 0, False
    while True:
        ran, at_eps = _dcd_epochs(indptr, indices, data, rows, s, y, qd, dd, alpha, w, eps,
                                  min(chunk, max_epochs - epochs),
                                  int(rng.integers(2**31 - 1)), index, state)
        epochs += ran
        weights = w if A.fit_intercept else w[:-1]
        o = A.matvec(weights)
        f = 0.5 * lam * float(weights @ weights) + terms.value(o)
        g = lam * (alpha.sum() - 0.5 * float(w @ w) - 0.5 * lam * float(alpha @ (alpha / c)))
        history.append(f)
        gap = (f - g) / max(abs(f), 1e-300)
        if verbose > 1:
            logger.debug("dcd epochs=%d eps=%.1e f=%.10g gap=%.2e active=%d", epochs, eps, f,
                         gap, int(state[0]))
        if gap <= tol or epochs >= max_epochs:
            break
        if at_eps:
            eps *= 0.1  # every projected gradient is within eps, yet the gap is too wide
        chunk = _next_check(checks, epochs, gap, tol, chunk)
        if give_up_epochs is not None:
            remaining = _epochs_to_tol(checks, tol)
            if remaining is not None:  # a rising gap (no trend) neither counts nor clears
                # two checks in a row: one early rate alone is noisy
                slow_checks = slow_checks + 1 if epochs + remaining > give_up_epochs else 0
            if slow_checks >= 2 or epochs >= give_up_epochs:
                gave_up = True
                break
    full_alpha = np.zeros(terms.y.size)
    full_alpha[keep] = alpha
    return DCDResult(w=weights.copy(), outputs=o, objective=f, dual_objective=g,
                     alpha=full_alpha, n_iter=epochs, converged=gap <= tol, history=history,
                     gave_up=gave_up)
