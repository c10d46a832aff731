"""The extended level method for multiple kernel learning (Xu's thesis, §4.2, Algorithm 2).

Each iteration solves one SVM at the current weights ``p^i``, which adds the cut
``f(p, alpha^i) = s_i - 1/2 q^i . p`` to the cutting-plane model ``g^i(p) = max_j f(p, alpha^j)``
(eq. 4.5), and then

* ``f_low = min_{p in P} g^i(p)`` (an LP, eq. 4.6) and ``f_up = min_j f(p^j, alpha^j)`` (the
  best SVM objective) bracket the optimum (Theorem 1);
* the level ``l = lambda f_up + (1 - lambda) f_low`` (eq. 4.7) defines the level set
  ``{p in P : g^i(p) <= l}``, and the next weights are the projection of ``p^i`` onto it
  (a QP, eq. 4.8).  The projection regularises the cutting-plane step of SILP: the weights
  move as little as needed, so they do not oscillate.

``lambda`` starts at 0.9 and is raised to 0.99 once ``Delta / l < 0.01`` (§4.3.1).  The run
stops when the duality gap at the current weights (see :mod:`semisup.mkl.problem`) falls
below ``tol``: the rule of §4.3.1 for all three solvers, so that SILP, SimpleMKL and the
level method are timed to the same accuracy.  Algorithm 2's own criterion, the relative
bound gap ``Delta / |f_up| <= tol``, is looser (``Delta <= J(p^i) - min_p f(p, alpha^i)``,
the duality gap, because ``f_up <= J(p^i)`` and ``f_low >= min_p f(p, alpha^i)``) and is
only used with ``bound_gap=True``.
"""

from __future__ import annotations

import logging

import numpy as np

from semisup.mkl._common import CuttingPlaneModel, check_solver_args, new_trace, record
from semisup.mkl.problem import MKLProblem, MKLResult
from semisup.solvers.projection import project_onto_simplex_polyhedron

logger = logging.getLogger("semisup.mkl")


def level_mkl(problem: MKLProblem, tol: float = 0.01, max_iter: int = 500,
              lam: float = 0.9, lam_final: float = 0.99, relative_gap: bool = True,
              p0: np.ndarray | None = None, record_weights: bool = False,
              bound_gap: bool = False) -> MKLResult:
    """Minimise eq. 4.1 by the level method (Algorithm 2).

    Parameters
    ----------
    problem : MKLProblem
        The problem of eq. 4.1: a kernel bank, ``+1/-1`` labels and ``C``.
    tol : float
        Stopping tolerance on the duality gap (and on ``Delta / |f_up|`` with
        ``bound_gap=True``).
    max_iter : int
        Outer iterations (the thesis uses 500).
    lam, lam_final : float
        ``lambda`` of eq. 4.7, raised from ``lam`` to ``lam_final`` when ``Delta / l <
        0.01``.
    relative_gap : bool
        Duality gap relative to the objective (see :meth:`SVMPoint.gap`).
    p0 : ndarray of shape (m,), optional
        Starting weights (default uniform).
    record_weights : bool
        Keep the weights of every iteration in ``trace['weights']``.
    bound_gap : bool
        Also stop when ``(f_up - f_low) / |f_up| <= tol`` (Algorithm 2's criterion; it
        stops earlier than the duality gap, so leave it off to compare with SILP and
        SimpleMKL).  Without it the run still ends when the bracket has closed to
        round-off (``Delta <= 1e-10 |f_up|``), reported as converged only if the best
        point's duality gap is below ``tol``.

    Returns
    -------
    MKLResult
        ``trace`` holds ``objective``, ``gap``, ``f_low``, ``f_up`` and ``lam`` per iteration.
    """
    p = check_solver_args(problem, tol, max_iter, p0)
    for name, v in (("lam", lam), ("lam_final", lam_final)):
        if not 0.0 < v < 1.0:
            raise ValueError(f"{name} must be in (0, 1), got {v!r}")
    trace = new_trace(("f_low", "f_up", "lam"))
    model = CuttingPlaneModel(problem.n_kernels)
    converged = False
    for it in range(1, max_iter + 1):
        point = problem.solve_svm(p)
        model.add(point)
        gap = point.gap(relative_gap)
        record(trace, point, gap, record_weights, f_low=model.f_low, f_up=model.f_up,
               lam=lam)
        logger.debug("level it=%d J=%.6g f_low=%.6g f_up=%.6g gap=%.3g", it,
                     point.objective, model.f_low, model.f_up, gap)
        best = model.best
        if gap <= tol:
            converged, best = True, point
            break
        scale = max(abs(model.f_up), np.finfo(float).tiny)
        if bound_gap and model.delta <= tol * scale:
            converged = True
            break
        if model.delta <= 1e-10 * scale:
            # the level set is the model's minimiser: the weights can no longer move
            converged = best.gap(relative_gap) <= tol
            break
        level = lam * model.f_up + (1.0 - lam) * model.f_low
        if lam < lam_final and model.delta / abs(level) < 0.01:
            lam = lam_final
            level = lam * model.f_up + (1.0 - lam) * model.f_low
        p = project_onto_simplex_polyhedron(p, *model.level_set(level))
    return MKLResult(weights=best.p, alpha=best.alpha, bias=best.bias,
                     objective=best.objective, n_iter=it, n_svm=problem.n_svm,
                     converged=converged, trace=trace)
