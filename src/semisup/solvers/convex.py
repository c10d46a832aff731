"""Adapters to the conic solvers behind cvxpy (SCS, Clarabel).

Estimators never build solver objects: they build a :class:`cvxpy.Problem` through
:func:`cvxpy_module` and hand it to :func:`solve_conic`, which picks the solver, maps its
options, checks the status and turns every solver failure into one clear exception.  A
missing optional dependency fails here, in one place, with a one-line message naming the
``pip install`` that fixes it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

logger = logging.getLogger("semisup.solvers.convex")

INSTALL_HINT = 'pip install "semisup[sdp]"  (or: pip install cvxpy scs clarabel)'
SOLVERS = ("scs", "clarabel")


def cvxpy_module():
    """Import and return :mod:`cvxpy`, or raise one ``ImportError`` naming the install."""
    try:
        import cvxpy
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(f"this solver needs cvxpy: {INSTALL_HINT}") from exc
    return cvxpy


def check_solver(name: str) -> str:
    """Validate a solver name and check that it is installed; return cvxpy's name for it."""
    if not isinstance(name, str) or name.lower() not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {name!r}")
    cp = cvxpy_module()
    cp_name = name.upper()
    if cp_name not in cp.installed_solvers():
        raise ImportError(f"the {name!r} SDP solver is not installed: {INSTALL_HINT}")
    return cp_name


@dataclass
class ConicResult:
    """Outcome of :func:`solve_conic`.

    Attributes
    ----------
    status : str
        cvxpy's status (``optimal`` or ``optimal_inaccurate``).
    objective : float
        Optimal value.
    solve_time : float
        Seconds reported by the solver (or measured).
    n_iter : int
        Solver iterations (``-1`` when the solver does not say).
    solver : str
        The solver used.
    """

    status: str
    objective: float
    solve_time: float
    n_iter: int
    solver: str


def solve_conic(problem, solver: str = "scs", *, tol: float = 1e-6, max_iter: int = 100_000,
                verbose: bool = False) -> ConicResult:
    """Solve a cvxpy problem with SCS or Clarabel and check the outcome.

    Parameters
    ----------
    problem : cvxpy.Problem
    solver : {'scs', 'clarabel'}
        ``scs`` (first-order splitting; scales to a few hundred rows of an SDP) or
        ``clarabel`` (interior point; more accurate, much more memory).
    tol : float
        Relative accuracy: SCS's ``eps_abs``/``eps_rel``, Clarabel's ``tol_gap_*``/``tol_feas``.
    max_iter : int
        Iteration limit.
    verbose : bool
        Let the solver print its log.

    Returns
    -------
    ConicResult

    Raises
    ------
    RuntimeError
        When the solver fails or reports the problem infeasible/unbounded.
    """
    import time

    cp = cvxpy_module()
    name = check_solver(solver)
    if name == "SCS":
        opts = dict(eps_abs=tol, eps_rel=tol, max_iters=int(max_iter))
    else:
        opts = dict(tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol,
                    max_iter=int(min(max_iter, 500)))
    start = time.perf_counter()
    try:
        problem.solve(solver=name, verbose=verbose, **opts)
    except cp.error.SolverError as exc:
        raise RuntimeError(f"{name} failed on the SDP ({exc}); try solver='scs' with a larger "
                           "max_iter, or a larger ridge") from exc
    elapsed = time.perf_counter() - start
    status = problem.status
    if status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"{name} returned status {status!r} on the SDP; check the data "
                           "(e.g. a larger ridge) or raise max_iter")
    if status == "optimal_inaccurate":
        logger.info("%s returned optimal_inaccurate", name)
    stats = problem.solver_stats
    n_iter = getattr(stats, "num_iters", None)
    return ConicResult(status=status, objective=float(problem.value),
                       solve_time=float(getattr(stats, "solve_time", None) or elapsed),
                       n_iter=-1 if n_iter is None else int(n_iter), solver=name.lower())
