"""Linear programs solved by HiGHS (through its own Python interface, ``highspy``).

The one LP the library needs is the minimum over the probability simplex of a maximum of
affine functions (a cutting-plane model),

    min_{p in simplex, theta}  theta   s.t.  c_j - a_j^T p <= theta,  j = 1..J,       (*)

which is the SILP master problem (Sonnenburg et al. 2006) and the lower bound ``f_low`` of
the level method for multiple kernel learning (Xu et al. 2009, eq. 4.6).  Both add one cut
per iteration, so :class:`CuttingPlaneLP` keeps one HiGHS model alive and re-solves it from
the previous basis (dual simplex after a new row): well under a millisecond a cut where a
fresh :func:`scipy.optimize.linprog` call costs tens of milliseconds.
"""

from __future__ import annotations

import numpy as np


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
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
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
