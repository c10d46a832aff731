"""Semi-infinite linear programming for MKL (Sonnenburg et al. 2006; Xu's thesis eq. 4.2).

The next weights minimise the cutting-plane model ``max_j f(p, alpha^j)`` over the simplex
(an LP), with no regularisation: the minimiser is a vertex of the model and jumps between
iterations (the oscillation of Fig. 4.3).  The bounds ``f_low`` (the LP value) and ``f_up``
are those of the level method; the stopping rule is the common duality gap.
"""

from __future__ import annotations

import logging

import numpy as np

from semisup.mkl._common import CuttingPlaneModel, check_solver_args, new_trace, record
from semisup.mkl.problem import MKLProblem, MKLResult

logger = logging.getLogger("semisup.mkl")


def silp_mkl(problem: MKLProblem, tol: float = 0.01, max_iter: int = 500,
             relative_gap: bool = True, p0: np.ndarray | None = None,
             record_weights: bool = False) -> MKLResult:
    """Minimise eq. 4.1 by SILP.

    Parameters
    ----------
    problem : MKLProblem
        The problem of eq. 4.1: a kernel bank, ``+1/-1`` labels and ``C``.
    tol : float
        Stopping tolerance on the duality gap.
    max_iter : int
        Outer iterations (cutting planes added).
    relative_gap : bool
        Duality gap relative to the objective.
    p0 : ndarray of shape (m,), optional
        Starting weights (default uniform).
    record_weights : bool
        Keep every iteration's weights in ``trace['weights']``.

    Returns
    -------
    MKLResult
        ``trace`` holds ``objective``, ``gap``, ``f_low`` and ``f_up`` per iteration.
    """
    p = check_solver_args(problem, tol, max_iter, p0)
    trace = new_trace(("f_low", "f_up"))
    model = CuttingPlaneModel(problem.n_kernels)
    converged = False
    for it in range(1, max_iter + 1):
        point = problem.solve_svm(p)
        model.add(point)
        gap = point.gap(relative_gap)
        record(trace, point, gap, record_weights, f_low=model.f_low, f_up=model.f_up)
        logger.debug("silp it=%d J=%.6g gap=%.3g", it, point.objective, gap)
        best = model.best
        if gap <= tol:
            converged, best = True, point
            break
        p = model.p_lp
    return MKLResult(weights=best.p, alpha=best.alpha, bias=best.bias,
                     objective=best.objective, n_iter=it, n_svm=problem.n_svm,
                     converged=converged, trace=trace)
