"""Euclidean projection onto a polyhedron inside the simplex.

    min_p  ||p - p0||^2   s.t.  sum(p) = 1,  p >= 0,  G p <= h                      (*)

This is the projection step of the level method (Xu et al. 2009, eq. 4.8): ``p0`` the
current kernel weights, one row of ``G p <= h`` per cutting plane ``f(p, alpha^j) <= level``.
The level method adds a cut per iteration but only a few are active at the projection, so
(*) is solved by constraint generation: the projection onto the simplex alone, then the QP
over a working set of cuts (Clarabel, an interior-point solver called directly), adding the
most violated cuts until every cut holds.  Measured on a semi-supervised MKL run of Table
4.3 (USPS 2 vs 7, 249 kernels, 328 level iterations): 15-60x faster than one Clarabel QP
over all cuts (209-580 ms at 80-327 cuts, against 2-27 ms with 5-36 cuts in the working
set), the same projection to 2e-6.
"""

from __future__ import annotations

import clarabel
import numpy as np
import scipy.sparse as sp

#: cuts added to the working set per round of constraint generation (the most violated)
CUTS_PER_ROUND = 5


def project_onto_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection of ``v`` onto the probability simplex ``{p >= 0, sum p = 1}``.

    The sort-based rule (Held, Wolfe & Crowder 1974): ``p = max(v - tau, 0)`` with the
    threshold ``tau`` that makes ``p`` sum to one.
    """
    v = np.asarray(v, dtype=np.float64)
    u = np.sort(v)[::-1]
    excess = np.cumsum(u) - 1.0
    k = np.arange(1, v.size + 1)
    r = int(np.flatnonzero(u - excess / k > 0)[-1]) + 1
    return np.maximum(v - excess[r - 1] / r, 0.0)


def project_onto_simplex_polyhedron(p0: np.ndarray, G: np.ndarray, h: np.ndarray,
                                    tol: float = 1e-9) -> np.ndarray:
    """Solve (*) by constraint generation (see the module docstring).

    The working set starts empty; each round adds the :data:`CUTS_PER_ROUND` cuts violated
    most (relative to ``max(1, |h_j|)``) and re-solves the QP over the working set.  When no
    cut is violated by more than ``tol`` the working-set solution solves (*): it is feasible
    for every cut, and optimal over a larger set.  Each round adds a new cut, so at worst the
    last round is the QP over all cuts.

    Parameters
    ----------
    p0 : ndarray of shape (m,)
        Point to project.
    G : ndarray of shape (J, m)
    h : ndarray of shape (J,)
        Extra linear constraints ``G p <= h``; the caller guarantees that the intersection
        with the simplex is non-empty.
    tol : float
        Clarabel's gap and feasibility tolerances, and the violation (relative to
        ``max(1, |h_j|)``) above which a cut joins the working set.

    Returns
    -------
    ndarray of shape (m,)
        The projection, clipped to ``p >= 0`` and renormalised to sum 1 (the interior-point
        solution is feasible only to ``tol``).

    Raises
    ------
    RuntimeError
        When Clarabel does not report a solution.
    """
    p0 = np.asarray(p0, dtype=np.float64)
    G = np.atleast_2d(np.asarray(G, dtype=np.float64))
    h = np.asarray(h, dtype=np.float64)
    scale = np.maximum(1.0, np.abs(h))
    p = project_onto_simplex(p0)
    working = np.zeros(h.size, dtype=bool)
    while True:
        excess = (G @ p - h) / scale
        excess[working] = -np.inf
        new = np.flatnonzero(excess > tol)
        if new.size == 0:
            return p
        working[new[np.argsort(-excess[new])[:CUTS_PER_ROUND]]] = True
        p = _project_qp(p0, G[working], h[working], tol)


def _project_qp(p0: np.ndarray, G: np.ndarray, h: np.ndarray, tol: float) -> np.ndarray:
    """(*) with all of ``G p <= h`` as constraints, by one Clarabel QP."""
    m = p0.size
    J = G.shape[0]
    P = sp.csc_matrix((np.full(m, 2.0), np.arange(m), np.arange(m + 1)), shape=(m, m))
    q = -2.0 * p0
    # Clarabel: A x + s = b, s in cones; rows: sum p = 1 (zero cone), G p <= h and
    # -p <= 0 (non-negative cone).  Column k of A holds (1, G[:, k], -1 at row J + 1 + k);
    # it is assembled directly because this runs once per level iteration
    data = np.column_stack([np.ones(m), G.T, -np.ones(m)]).ravel()
    indices = np.column_stack([np.zeros(m, dtype=np.int64),
                               np.broadcast_to(np.arange(1, J + 1), (m, J)),
                               J + 1 + np.arange(m)]).ravel()
    A = sp.csc_matrix((data, indices, np.arange(0, (J + 2) * (m + 1), J + 2)),
                      shape=(1 + J + m, m))
    b = np.r_[1.0, h, np.zeros(m)]
    cones = [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(G.shape[0] + m)]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = tol
    settings.tol_feas = tol
    # refinement of the KKT solves costs ~40 % of the time and changes p by ~1e-6: the
    # projection is only the next trial point of the level method, not a bound
    settings.iterative_refinement_enable = False
    solution = clarabel.DefaultSolver(P, q, A, b, cones, settings).solve()
    status = str(solution.status)
    if "Solved" not in status:
        raise RuntimeError(f"Clarabel failed on the level-set projection: {status}")
    p = np.clip(np.asarray(solution.x), 0.0, None)
    return p / p.sum()
