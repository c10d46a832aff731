"""Sparse codes of many rows over one dictionary, with a hinge term: step I(b) of SSTL.

Self-taught learning codes every row ``x`` over a dictionary ``D`` (atoms as rows) by

``min_a ||x - a D||^2 + beta ||a||_1``                                   (thesis eq. 6.1, I(a))

(scikit-learn's ``sparse_encode``, :func:`semisup.weak.selftaught.encode`), and the
supervised variant codes the labeled rows with the classifier's hinge terms added,

``min_a ||x - a D||^2 + beta ||a||_1 + mu sum_o max(0, 1 - y_o (w_o . a + c_o))``  (I(b)).

The lasso with a linear term (:func:`lasso_codes`, which scikit-learn's lasso does not
take) is solved here row by row by compiled coordinate descent on the Gram matrix
``G = D D^T`` (Friedman et al., 2010), each row until no coordinate moves or feature-sign
search (Lee et al., 2007) from the descent's point reaches the exact solution.  The problem
with one hinge term (two classes) is solved through the hinge's dual variable:
``max(0, 1 - m) = max_{0 <= alpha <= 1} alpha (1 - m)`` turns it into a lasso with the
linear term ``mu alpha y w . a``, whose margin ``m(alpha)`` does not decrease with
``alpha``.  The optimal ``alpha`` is 0 (margin at least 1 without the hinge), 1 (margin at
most 1 with the whole hinge slope) or the root of ``m(alpha) = 1``, found by regula falsi;
there the codes are taken on the segment between the bracketing solutions at margin 1 (a
minimiser of the same convex problem, so a KKT point of the original one).  This needs the
lasso to be strictly convex, i.e. a dictionary of full row rank (no more atoms than
features): otherwise a combination of atoms that cancels in ``a D`` costs only its l1 norm,
the linear reward can outweigh it, and the lasso at a large ``alpha`` is unbounded below.
Coordinate descent also slows down as ``D D^T`` loses conditioning, so the route is taken
only on a well-conditioned dictionary (:func:`well_conditioned`).
"""

from __future__ import annotations

import numpy as np

from semisup._accel import njit

#: sweeps after which a row's coordinate descent is reported as unconverged
MAX_SWEEPS = 2000
#: root-finding steps on the hinge's dual variable (regula falsi, Illinois variant)
ROOT_STEPS = 60
#: a margin this close to 1 is the root
MARGIN_TOL = 1e-10


#: largest condition number of ``D D^T`` for :func:`hinge_lasso_codes` (a learned dictionary
#: of 50 atoms: 1.5 on the SSL book's g241c, about 1e4 on digit1 and usps, 1e7 on sonar's 60
#: features, infinite with fewer features than atoms)
MAX_CONDITION = 1e5


def well_conditioned(D: np.ndarray) -> bool:
    """Whether ``D D^T`` is positive definite with condition number at most
    :data:`MAX_CONDITION` (so the lasso is strictly convex and coordinate descent fast)."""
    D = np.asarray(D, dtype=np.float64)
    if D.shape[0] > D.shape[1]:
        return False
    eig = np.linalg.eigvalsh(D @ D.T)
    return bool(eig.size and eig[0] > 0 and eig[-1] <= MAX_CONDITION * eig[0])


def lasso_codes(X: np.ndarray, D: np.ndarray, beta: float, *, linear: np.ndarray | None = None,
                init: np.ndarray | None = None, tol: float = 1e-9,
                max_sweeps: int = MAX_SWEEPS) -> tuple[np.ndarray, int]:
    """Minimise ``||x_i - a_i D||^2 + beta ||a_i||_1 - v_i a_i^T`` for every row ``i``.

    Meant for a well-conditioned dictionary (:func:`well_conditioned`); with more atoms
    than features the problem may be unbounded (``v != 0``) or the descent slow.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Rows to code.
    D : ndarray of shape (p, d)
        Dictionary, one atom per row (an all-zero atom gets code 0).
    beta : float
        Weight of the l1 term (``>= 0``).
    linear : ndarray of shape (n, p), optional
        ``v_i``, a linear reward per row (``None``: 0, the plain lasso).
    init : ndarray of shape (n, p), optional
        Warm start.
    tol : float, default=1e-9
        A row stops when no coordinate moved by more than ``tol`` times its largest code
        (plus ``tol`` in absolute terms) in a sweep.
    max_sweeps : int, default=MAX_SWEEPS
        Sweeps before a row is given up as unconverged.

    Returns
    -------
    codes : ndarray of shape (n, p)
        The minimising codes, one row per row of ``X``.
    n_unconverged : int
        Rows still moving after ``max_sweeps`` sweeps.
    """
    X = np.asarray(X, dtype=np.float64)
    D = np.asarray(D, dtype=np.float64)
    n, p = X.shape[0], D.shape[0]
    G = np.ascontiguousarray(D @ D.T)
    # coordinate j of row i minimises at S(q_ij - sum_{k != j} G_jk a_ik, beta/2) / G_jj
    Q = X @ D.T
    if linear is not None:
        Q = Q + 0.5 * np.asarray(linear, dtype=np.float64)
    A = np.zeros((n, p)) if init is None else np.array(init, dtype=np.float64, copy=True)
    A[:, np.diag(G) <= 0] = 0.0
    unconverged = _cd_rows(G, np.ascontiguousarray(Q), A, 0.5 * float(beta), float(tol),
                           int(max_sweeps))
    return A, int(unconverged)


#: sweeps between two attempts to finish a row exactly on its support (:func:`_cd_rows`)
POLISH_EVERY = 10


@njit(cache=True, nogil=True)
def _cd_rows(G, Q, A, half, tol, max_sweeps):
    """Coordinate descent on every row of ``A`` in place; returns the rows not converged.

    Every :data:`POLISH_EVERY` sweeps the row is handed to feature-sign search
    (:func:`_polish`), which finishes it exactly once the descent has found roughly the
    right signs; on an ill-conditioned ``G`` coordinate descent alone converges slowly.
    """
    n, p = A.shape
    r = np.empty(p)
    trial = np.empty(p)
    unconverged = 0
    for i in range(n):
        for j in range(p):                      # r = q_i - G a_i
            acc = Q[i, j]
            for k in range(p):
                acc -= G[j, k] * A[i, k]
            r[j] = acc
        converged = False
        for sweep in range(max_sweeps):
            moved = 0.0
            largest = 0.0
            for j in range(p):
                g = G[j, j]
                if g <= 0.0:
                    continue
                old = A[i, j]
                z = r[j] + g * old
                if z > half:
                    new = (z - half) / g
                elif z < -half:
                    new = (z + half) / g
                else:
                    new = 0.0
                delta = new - old
                if delta != 0.0:
                    A[i, j] = new
                    for k in range(p):
                        r[k] -= delta * G[j, k]
                    if abs(delta) > moved:
                        moved = abs(delta)
                if abs(new) > largest:
                    largest = abs(new)
            if moved <= tol * (1.0 + largest):
                converged = True
                break
            if (sweep + 1) % POLISH_EVERY == 0 and _polish(G, Q[i], A[i], half, trial):
                converged = True
                break
        if not converged:
            unconverged += 1
    return unconverged


@njit(cache=True, nogil=True)
def _objective(G, q, x, half):
    """``x G x - 2 q . x + 2 half ||x||_1`` (the row's lasso up to a constant)."""
    p = x.size
    value = 0.0
    for j in range(p):
        if x[j] == 0.0:
            continue
        acc = 0.0
        for k in range(p):
            acc += G[j, k] * x[k]
        value += x[j] * acc - 2.0 * q[j] * x[j] + 2.0 * half * abs(x[j])
    return value


@njit(cache=True, nogil=True)
def _polish(G, q, a, half, trial):
    """Finish a row exactly by feature-sign search (Lee, Battle, Raina & Ng, 2007).

    Starting from the descent's current ``a``: solve the quadratic on the current signs,
    move to the best point of the segment towards it (the objective with ``|x|`` checked at
    the end and at every zero crossing, so it never increases), activate the coordinate
    that violates its optimality condition most; stop when every condition holds (then
    ``a`` is replaced by the exact solution and True returned) or when a step makes no
    progress (False: the descent goes on).
    """
    p = a.size
    x = trial
    for j in range(p):
        x[j] = a[j]
    theta = np.sign(x)
    r = np.empty(p)
    cand = np.empty(p)
    for _ in range(4 * p + 4):
        for j in range(p):
            acc = q[j]
            for k in range(p):
                acc -= G[j, k] * x[k]
            r[j] = acc
        balanced = True                          # (q - G x)_j = half theta_j on the support
        for j in range(p):
            if theta[j] != 0.0 and abs(r[j] - half * theta[j]) > 1e-10 * (1.0 + half):
                balanced = False
                break
        if balanced:
            worst, jw = half * (1.0 + 1e-12) + 1e-12, -1
            for j in range(p):
                if theta[j] == 0.0 and abs(r[j]) > worst:
                    worst, jw = abs(r[j]), j
            if jw < 0:
                for j in range(p):
                    a[j] = x[j]
                return True
            theta[jw] = 1.0 if r[jw] > 0 else -1.0
        support = np.flatnonzero(theta != 0.0)
        m = support.size
        M = np.empty((m, m))
        b = np.empty(m)
        for s in range(m):
            b[s] = q[support[s]] - half * theta[support[s]]
            for t in range(m):
                M[s, t] = G[support[s], support[t]]
        try:
            z = np.linalg.solve(M, b)
        except Exception:  # noqa: BLE001  (a singular block: leave the row to the descent)
            return False
        for j in range(p):
            cand[j] = 0.0
        for s in range(m):
            cand[support[s]] = z[s]
        # the best of the segment's end and its zero crossings
        best_t, best_f = 0.0, _objective(G, q, x, half)
        step = np.empty(p)
        for trial_t in range(m + 1):
            if trial_t == m:
                t = 1.0
            else:
                j = support[trial_t]
                if x[j] == 0.0 or x[j] * cand[j] >= 0.0:
                    continue
                t = x[j] / (x[j] - cand[j])
            for k in range(p):
                step[k] = x[k] + t * (cand[k] - x[k])
                if trial_t < m and k == support[trial_t]:
                    step[k] = 0.0
            f = _objective(G, q, step, half)
            if f < best_f - 1e-15 * (1.0 + abs(best_f)):
                best_t, best_f = t, f
                for k in range(p):
                    r[k] = step[k]
        if best_t == 0.0:
            return False
        for k in range(p):
            x[k] = r[k] if abs(r[k]) > 1e-300 else 0.0
            theta[k] = np.sign(x[k])
    return False


def hinge_lasso_codes(X: np.ndarray, D: np.ndarray, beta: float, y: np.ndarray,
                      w: np.ndarray, c: float, mu: float, *, init: np.ndarray | None = None,
                      tol: float = 1e-9) -> tuple[np.ndarray, int]:
    """Minimise ``||x_i - a_i D||^2 + beta ||a_i||_1 + mu max(0, 1 - y_i (w a_i^T + c))``.

    One hinge term per row (a two-class classifier ``(w, c)``), solved exactly through the
    dual variable of the hinge (module docstring).  ``D D^T`` must be well conditioned
    (:func:`well_conditioned`).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Rows to code.
    D : ndarray of shape (p, d)
        Dictionary.
    beta : float
        Weight of the l1 term.
    y : ndarray of shape (n,)
        ``+1/-1`` label of each row.
    w : ndarray of shape (p,)
        Classifier weights on the codes.
    c : float
        Its bias.
    mu : float
        Weight of the hinge term (``>= 0``).
    init : ndarray of shape (n, p), optional
        Warm start of the lasso solves.
    tol : float, default=1e-9
        Tolerance of each lasso solve (:func:`lasso_codes`).

    Returns
    -------
    codes : ndarray of shape (n, p)
        The minimising codes, one row per row of ``X``.
    n_unconverged : int
        Rows whose last lasso solve did not converge.

    Raises
    ------
    ValueError
        When ``D D^T`` is singular or ill-conditioned.
    """
    if not well_conditioned(D):
        raise ValueError("hinge_lasso_codes needs a well-conditioned dictionary (no more "
                         "atoms than features and cond(D D^T) <= MAX_CONDITION): with D of "
                         f"shape {np.shape(D)} the lasso with the hinge's reward can be "
                         "unbounded or slow; solve the problem as a conic program instead")
    y = np.asarray(y, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    n = y.shape[0]
    slope = mu * y[:, None] * w[None, :]       # d/d alpha of the linear reward

    def solve(alpha, start):
        return lasso_codes(X, D, beta, linear=alpha[:, None] * slope, init=start, tol=tol)

    def margin(codes):
        return y * (codes @ w + c)

    lo_codes, bad = solve(np.zeros(n), init)
    if mu == 0.0 or not w.any():
        return lo_codes, bad
    hi_codes, bad_hi = solve(np.ones(n), lo_codes)
    m_lo, m_hi = margin(lo_codes), margin(hi_codes)
    codes = np.where((m_lo >= 1.0)[:, None], lo_codes, hi_codes)
    unconverged = np.where(m_lo >= 1.0, bad > 0, bad_hi > 0)
    inner = np.flatnonzero((m_lo < 1.0) & (m_hi > 1.0))
    if inner.size:
        codes[inner] = _margin_root(X[inner], D, beta, slope[inner], y[inner], w, c,
                                    lo_codes[inner], hi_codes[inner], m_lo[inner],
                                    m_hi[inner], tol)
    return codes, int(np.count_nonzero(unconverged))


def _margin_root(X, D, beta, slope, y, w, c, lo_c, hi_c, m_lo, m_hi, tol):
    """Codes at margin 1 of rows whose margin crosses 1 between ``alpha = 0`` and 1.

    The lasso's solution is piecewise linear in its linear term, so the margin is piecewise
    linear in ``alpha`` and regula falsi (with the Illinois halving against a stalled end)
    lands on the root in a few solves.  The answer is the point at margin 1 on the segment
    between the final bracket's codes.
    """
    n = y.size
    lo_a, hi_a = np.zeros(n), np.ones(n)
    f_lo, f_hi = m_lo - 1.0, m_hi - 1.0          # negative and positive
    side = np.zeros(n, dtype=np.int8)            # which end moved last (-1 lo, +1 hi)
    active = np.arange(n)
    for _ in range(ROOT_STEPS):
        if active.size == 0:
            break
        a, b, fa, fb = lo_a[active], hi_a[active], f_lo[active], f_hi[active]
        mid = a - fa * (b - a) / (fb - fa)
        mid = np.where((mid > a) & (mid < b), mid, 0.5 * (a + b))
        start = lo_c[active] + ((mid - a) / (b - a))[:, None] * (hi_c[active] - lo_c[active])
        mid_c, _ = lasso_codes(X[active], D, beta, linear=mid[:, None] * slope[active],
                               init=start, tol=tol)
        fm = y[active] * (mid_c @ w + c) - 1.0
        below = fm < 0.0
        # move the end on the root's far side; halve a stalled end's value (Illinois)
        lo_idx, hi_idx = active[below], active[~below]
        lo_a[lo_idx], lo_c[lo_idx], f_lo[lo_idx] = mid[below], mid_c[below], fm[below]
        hi_a[hi_idx], hi_c[hi_idx], f_hi[hi_idx] = mid[~below], mid_c[~below], fm[~below]
        f_hi[lo_idx[side[lo_idx] == -1]] *= 0.5
        f_lo[hi_idx[side[hi_idx] == 1]] *= 0.5
        side[lo_idx], side[hi_idx] = -1, 1
        exact = np.abs(fm) <= MARGIN_TOL
        lo_a[active[exact]] = hi_a[active[exact]] = mid[exact]
        lo_c[active[exact]] = hi_c[active[exact]] = mid_c[exact]
        active = active[~exact & (hi_a[active] - lo_a[active] > 1e-15)]
    # margins are affine in the codes: the point of the bracket's segment at margin 1
    m_a, m_b = y * (lo_c @ w + c), y * (hi_c @ w + c)
    gap = m_b - m_a
    theta = np.clip(np.where(gap > 0, (1.0 - m_a) / np.where(gap > 0, gap, 1.0), 0.0), 0, 1)
    return lo_c + theta[:, None] * (hi_c - lo_c)
