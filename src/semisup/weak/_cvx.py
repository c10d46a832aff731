"""Small convex programs of the weak-supervision estimators, written in cvxpy.

Every function here builds one problem, solves it and returns plain arrays.  cvxpy (an
optional dependency, the ``sdp`` extra) is imported through
:func:`semisup.solvers.convex.cvxpy_module`, the one place where a missing install fails
with the fix.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def import_cvxpy():
    """cvxpy, or an ``ImportError`` naming the extra that installs it."""
    from semisup.solvers.convex import cvxpy_module

    return cvxpy_module()


def check_solver(value, name: str = "solver") -> None:
    """Refuse a cvxpy solver name that is not a string naming an installed solver.

    ``None`` (the default choice of :func:`default_solver`) is always accepted; a name is
    checked against :func:`cvxpy.installed_solvers` only when cvxpy is importable (the
    missing install is reported by the route that needs it).
    """
    if value is None:
        return
    if not isinstance(value, str):
        raise ValueError(f"{name} must be None or the name of a cvxpy solver, got {value!r}")
    try:
        import cvxpy as cp
    except ImportError:  # pragma: no cover - exercised only without cvxpy
        return
    installed = cp.installed_solvers()
    if value.upper() not in installed:
        raise ValueError(f"{name} must be None or one of the installed cvxpy solvers "
                         f"{tuple(installed)}, got {value!r}")


def default_solver(cp, psd: bool = False) -> str:
    """SCS for SDPs (Clarabel's memory grows too fast with the LMI), else Clarabel or OSQP."""
    installed = cp.installed_solvers()
    if psd:
        return "SCS"
    if "CLARABEL" in installed:
        return "CLARABEL"
    return "OSQP" if "OSQP" in installed else "SCS"


def solver_options(name: str, tol: float | None = None, max_iter: int | None = None) -> dict:
    """Accuracy options of a cvxpy solver: ``tol`` is SCS's ``eps_abs = eps_rel`` (default
    1e-6) or Clarabel's absolute and relative gap tolerances; ``max_iter`` caps SCS's
    iterations (default 100,000) or Clarabel's; other solvers keep their defaults."""
    if name == "SCS":
        eps = 1e-6 if tol is None else tol
        return {"eps_abs": eps, "eps_rel": eps,
                "max_iters": 100_000 if max_iter is None else int(max_iter)}
    out: dict = {}
    if name == "CLARABEL":
        if tol is not None:
            out.update(tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol)
        if max_iter is not None:
            out["max_iter"] = int(max_iter)
    return out


def solve(cp, problem, solver: str | None, psd: bool = False, tol: float | None = None,
          max_iter: int | None = None, **kwargs) -> None:
    """Solve ``problem``; raise a clear error when the solver does not reach optimality.

    ``kwargs`` go to :meth:`cvxpy.Problem.solve` (``warm_start``, a solver's own options)
    and take precedence over :func:`solver_options`.
    """
    name = solver or default_solver(cp, psd)
    # explicit options (SCS's scale, a time limit, ...) override the accuracy defaults
    options = {**solver_options(name.upper(), tol, max_iter), **kwargs}
    try:
        problem.solve(solver=name, **options)
    except cp.error.SolverError:
        if solver is not None:
            raise
        problem.solve(solver="SCS", eps_abs=1e-7, eps_rel=1e-7, max_iters=200_000, **kwargs)
    if problem.status not in ("optimal", "optimal_inaccurate"):
        raise RuntimeError(f"cvxpy ({name}) ended with status {problem.status!r}")


def hinge_universum_qp(Z, y: np.ndarray, Z_u, cost: np.ndarray | float, cost_u: float,
                       epsilon: float, fit_bias: bool = True, solver: str | None = None):
    """Universum SVM with hinge and epsilon-insensitive losses (Weston et al. 2006).

    Solves the primal (digest section 1.6; Problem II of the thesis with ``y`` and ``d``
    fixed)

    ``min_{w,b} (1/2)||w||^2 + sum_i c_i max(0, 1 - y_i (z_i.w + b))
    + C_U sum_u max(0, |z_u.w + b| - eps)``

    Parameters
    ----------
    Z : ndarray or sparse matrix of shape (l, r)
        Features of the labeled rows (data rows, or a kernel factor).
    y : ndarray of shape (l,)
        ``+1/-1`` labels.
    Z_u : ndarray or sparse matrix of shape (u, r)
        Features of the universum rows (``u`` may be 0).
    cost : float or ndarray of shape (l,)
        ``c_i`` (``C`` of the labeled rows, possibly one per row).
    cost_u : float
        ``C_U``.
    epsilon : float
        Width of the insensitive zone.
    fit_bias : bool
        Free, unregularised bias ``b``; without it ``b = 0`` (put a constant feature in
        ``Z`` for a regularised bias).

    Returns
    -------
    w : ndarray of shape (r,)
    b : float
    objective : float
        The primal objective at the solution.
    """
    cp = import_cvxpy()
    r = Z.shape[1]
    w = cp.Variable(r)
    b = cp.Variable() if fit_bias else 0.0
    cost = np.broadcast_to(np.asarray(cost, dtype=np.float64), (Z.shape[0],))
    Zc = sp.csr_matrix(Z) if sp.issparse(Z) else np.asarray(Z, dtype=np.float64)
    obj = 0.5 * cp.sum_squares(w) + cost @ cp.pos(1 - cp.multiply(y, Zc @ w + b))
    if Z_u is not None and Z_u.shape[0]:
        Zu = sp.csr_matrix(Z_u) if sp.issparse(Z_u) else np.asarray(Z_u, dtype=np.float64)
        obj = obj + cost_u * cp.sum(cp.pos(cp.abs(Zu @ w + b) - epsilon))
    problem = cp.Problem(cp.Minimize(obj))
    solve(cp, problem, solver)
    b_value = float(b.value) if fit_bias else 0.0
    return np.asarray(w.value, dtype=np.float64), b_value, float(problem.value)
