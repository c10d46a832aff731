"""Linear programs solved by HiGHS (through its own Python interface, ``highspy``).

Two problems: the minimum over the probability simplex of a maximum of affine functions (a
cutting-plane model),

    min_{p in simplex, theta}  theta   s.t.  c_j - a_j^T p <= theta,  j = 1..J,       (*)

which is the SILP master problem (Sonnenburg et al. 2006) and the lower bound ``f_low`` of
the level method for multiple kernel learning (Xu et al. 2009, eq. 4.6).  Both add one cut
per iteration, so :class:`CuttingPlaneLP` keeps one HiGHS model alive and re-solves it from
the previous basis (dual simplex after a new row): well under a millisecond a cut where a
fresh :func:`scipy.optimize.linprog` call costs tens of milliseconds; and the maximum over a
box (or its vertices) of a minimum of affine functions, S4VM's label step
(:func:`max_min_affine_on_box`).
"""

from __future__ import annotations

import os
import sys

import numpy as np

_banner_silenced = False


def new_highs():
    """A HiGHS model that prints nothing.

    HiGHS writes its banner to standard output when the first model of a process is built,
    before any option can be set; that one construction runs with file descriptor 1 pointed
    at ``/dev/null``, so the banner never reaches a user's output (the CLI's included).
    """
    global _banner_silenced
    import highspy

    if _banner_silenced:
        h = highspy.Highs()
    else:
        sys.stdout.flush()
        saved = os.dup(1)
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 1)
            h = highspy.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)
            os.close(null)
        _banner_silenced = True
    h.setOptionValue("output_flag", False)
    return h


class CuttingPlaneLP:
    """(*) with cuts added one at a time, re-solved warm.

    Parameters
    ----------
    n_weights : int
        ``m``, the dimension of the simplex.
    """

    def __init__(self, n_weights: int):
        import highspy

        m = int(n_weights)
        if m < 1:
            raise ValueError(f"n_weights must be a positive integer, got {n_weights!r}")
        self.m = m
        self._inf = highspy.kHighsInf
        h = new_highs()
        # columns (p_1..p_m, theta): p >= 0, theta free; minimise theta
        h.addVars(m + 1, np.r_[np.zeros(m), -self._inf], np.full(m + 1, self._inf))
        h.changeColCost(m, 1.0)
        h.addRow(1.0, 1.0, m, np.arange(m, dtype=np.int32), np.ones(m))
        self._h = h
        self._idx = np.arange(m + 1, dtype=np.int32)
        self.c: list[float] = []
        self.A: list[np.ndarray] = []

    @property
    def n_cuts(self) -> int:
        return len(self.c)

    def add(self, c_j: float, a_j: np.ndarray) -> None:
        """Add the cut ``c_j - a_j^T p <= theta``."""
        a_j = np.asarray(a_j, dtype=np.float64)
        if a_j.shape != (self.m,) or not np.all(np.isfinite(a_j)) or not np.isfinite(c_j):
            raise ValueError(f"a cut needs a finite offset and {self.m} finite slopes")
        # -a_j p - theta <= -c_j
        self._h.addRow(-self._inf, -float(c_j), self.m + 1, self._idx, np.r_[-a_j, -1.0])
        self.c.append(float(c_j))
        self.A.append(a_j)

    def solve(self) -> tuple[np.ndarray, float]:
        """A minimiser of (*) over the cuts so far (a vertex) and the optimal value.

        Raises
        ------
        RuntimeError
            When HiGHS reports no optimum (the LP is always feasible and bounded once it
            has a cut).
        """
        import highspy

        if not self.c:
            raise RuntimeError("the cutting-plane LP has no cut yet")
        self._h.run()
        status = self._h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"HiGHS failed on the cutting-plane LP: {status}")
        x = np.asarray(self._h.getSolution().col_value)
        p = np.clip(x[: self.m], 0.0, None)
        p /= p.sum()
        theta = float(np.max(np.asarray(self.c) - np.asarray(self.A) @ p))
        return p, theta


def min_max_affine_on_simplex(c: np.ndarray, A: np.ndarray) -> tuple[np.ndarray, float]:
    """Solve (*): the minimum over the simplex of ``max_j (c_j - A[j] @ p)``.

    Parameters
    ----------
    c : ndarray of shape (J,)
        Offsets of the affine pieces.
    A : ndarray of shape (J, m)
        Slopes (with a minus sign) of the affine pieces.

    Returns
    -------
    p : ndarray of shape (m,)
        A minimiser on the simplex (a vertex of the LP's feasible set, as HiGHS returns).
    theta : float
        The optimal value.

    Raises
    ------
    RuntimeError
        When HiGHS reports a failure (the LP is always feasible and bounded).
    """
    c = np.asarray(c, dtype=np.float64)
    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    if c.shape != (A.shape[0],):
        raise ValueError(f"c must have shape ({A.shape[0]},) to match A, got {c.shape}")
    lp = CuttingPlaneLP(A.shape[1])
    for c_j, a_j in zip(c, A, strict=True):
        lp.add(c_j, a_j)
    return lp.solve()


def max_min_affine_on_box(A: np.ndarray, b: np.ndarray, *, integer: bool = False,
                          time_limit: float = 60.0) -> tuple[np.ndarray, float, bool]:
    """``max_y min_t (A[t] @ y + b[t])`` over ``y in [-1, 1]^m``, or ``{-1, +1}^m``.

    The worst case of affine gains, maximised: the label step of the safe S3VM (S4VM, Li &
    Zhou 2015), where row ``t`` is one candidate separator.  As ``max theta s.t. theta <=
    A[t] @ y + b[t]``, an LP (``integer=False``, the paper's relaxation) or, with
    ``integer=True``, a MIP over ``z = (y + 1) / 2`` in ``{0, 1}^m`` solved by HiGHS's
    branch and bound (a vertex of the LP has at most ``T`` fractional entries, so the tree
    stays small).

    Parameters
    ----------
    A : ndarray of shape (T, m)
        Gain of each label per candidate ``t``.
    b : ndarray of shape (T,)
        Constant gain per candidate.
    integer : bool
        Restrict ``y`` to ``{-1, +1}^m``.
    time_limit : float
        Seconds HiGHS may spend; past it the best integer point found is returned.

    Returns
    -------
    y : ndarray of shape (m,)
        The maximiser.
    value : float
        ``min_t (A[t] @ y + b[t])`` at the returned ``y``.
    optimal : bool
        Whether HiGHS proved ``y`` optimal (``False``: stopped by ``time_limit``).

    Raises
    ------
    RuntimeError
        When HiGHS returns no solution.
    """
    import highspy

    A = np.atleast_2d(np.asarray(A, dtype=np.float64))
    b = np.asarray(b, dtype=np.float64)
    T, m = A.shape
    if b.shape != (T,) or not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
        raise ValueError(f"b must be finite with shape ({T},) to match A, and A finite")
    inf = highspy.kHighsInf
    h = new_highs()
    h.setOptionValue("time_limit", float(time_limit))
    # y = 2 z - 1 turns A y + b into (2 A) z + (b - A 1) with z in [0, 1]
    slopes, offsets = (2.0 * A, b - A.sum(axis=1)) if integer else (A, b)
    lower = np.r_[np.zeros(m) if integer else -np.ones(m), -inf]
    h.addVars(m + 1, lower, np.r_[np.ones(m), inf])
    h.changeColCost(m, -1.0)  # maximise theta
    if integer:
        h.changeColsIntegrality(m, np.arange(m, dtype=np.int32),
                                np.full(m, highspy.HighsVarType.kInteger, dtype=np.uint8))
    idx = np.arange(m + 1, dtype=np.int32)
    for t in range(T):  # theta - slopes[t] @ x <= offsets[t]
        h.addRow(-inf, float(offsets[t]), m + 1, idx, np.r_[-slopes[t], 1.0])
    h.run()
    status = h.getModelStatus()
    solution = h.getSolution()
    optimal = status == highspy.HighsModelStatus.kOptimal
    if not optimal and not (status == highspy.HighsModelStatus.kTimeLimit
                            and solution.value_valid):
        raise RuntimeError(f"HiGHS failed on the max-min problem: {status}")
    x = np.asarray(solution.col_value)[:m]
    y = np.where(x > 0.5, 1.0, -1.0) if integer else np.clip(x, -1.0, 1.0)
    return y, float(np.min(A @ y + b)), bool(optimal)
