"""L2-SVM-MFN: the modified finite Newton method (section 2 of the SVMlin paper).

Minimises ``f(w) = (1/2) w^T R w + (1/2) sum_i c_i max(0, 1 - y_i w^T x_i)^2`` (eq. 2,
``R = lambda I`` in SVMlin).  Each iteration solves the regularised least-squares
problem of eq. 4 over the active set ``j(w)`` by CGLS seeded at ``w``, then takes the
exact line search step of eq. 5.  The method terminates finitely: when the active set at
the Newton point equals the one used to compute it, that point is the minimiser.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from semisup._logging import get_logger, report_unconverged
from semisup.losses import HingeTerms
from semisup.solvers.cgls import cgls
from semisup.solvers.line_search import exact_line_search
from semisup.solvers.preconditioners import make_preconditioner

# rebuild the CGLS preconditioner once the row costs of the Newton system (zero for inactive
# rows) have moved by more than this fraction, in l1 norm, since it was built
REUSE_PRECONDITIONER = 0.05

logger = get_logger(__name__)


@dataclass
class MFNResult:
    """Outcome of :func:`l2svm_mfn`.

    Attributes
    ----------
    w : ndarray
        Weights (bias last when the design has one).
    outputs : ndarray
        ``X w`` over the operator's rows.
    objective : float
        ``f(w)``.
    n_iter : int
        Newton iterations.
    n_cg_iter : int
        CGLS iterations summed over the Newton iterations.
    converged : bool
        Whether the finite-termination (or objective) criterion was met.
    history : list of float
        Objective after each Newton iteration (non-increasing).
    preconditioner : tuple or None
        The last CGLS preconditioner and the row costs it was built for; pass it as
        ``preconditioner0`` to a following call on the same operator.
    """

    w: np.ndarray
    outputs: np.ndarray
    objective: float
    n_iter: int
    n_cg_iter: int
    converged: bool
    history: list = field(default_factory=list)
    preconditioner: tuple | None = field(default=None, repr=False)

    def __getstate__(self):
        # the preconditioner is a closure over a factor: working state, not part of the model
        state = dict(self.__dict__)
        state["preconditioner"] = None
        return state


def l2svm_mfn(A, terms: HingeTerms, reg, w0: np.ndarray | None = None,
              outputs0: np.ndarray | None = None, tol: float = 1e-6, max_iter: int = 50,
              max_cg_iter: int = 10_000, loose_tol: float = 1e-2, loose_cg_iter: int = 10,
              obj_rtol: float = 1e-9, precondition="auto", preconditioner0: tuple | None = None,
              verbose: int = 0) -> MFNResult:
    """Minimise eq. 2 by the modified finite Newton method.

    Parameters
    ----------
    A : Design
        Data rows (operator with ``matvec``, ``rmatvec``, ``restrict``).
    terms : HingeTerms
        Loss terms over the rows of ``A``.
    reg : regulariser
        ``R`` (e.g. :class:`semisup.regularizers.Ridge`).
    w0 : ndarray, optional
        Seed.  Without one the method starts at zero with the two-pass heuristic: a
        loose first pass (``loose_tol``, at most ``loose_cg_iter`` CG iterations per
        system) until its termination test holds, then the tight tolerance ``tol``.
    outputs0 : ndarray, optional
        ``A.matvec(w0)`` when the caller already has it (saves one product).
    tol : float
        Relative residual tolerance of CGLS in the tight pass.
    max_iter, max_cg_iter : int
        Limits on Newton iterations and on CG iterations per system.
    obj_rtol : float
        Also stop when the objective decreases by less than this, relatively.
    precondition : {"auto", "jacobi", "sketch"} or bool
        CGLS preconditioner (:func:`~semisup.solvers.preconditioners.make_preconditioner`);
        it is rebuilt only when the row costs of the Newton system (eq. 4; zero for rows
        outside the active set) have moved by more than 5% (l1) since it was built.
    preconditioner0 : tuple, optional
        ``MFNResult.preconditioner`` of a previous call on the same operator (TSVM rounds,
        DA w-steps): reused under the same rule.
    verbose : int
        Log one line per Newton iteration (DEBUG, ``semisup.solvers.mfn``) when > 1.

    Returns
    -------
    MFNResult
    """
    n = A.shape[1]
    w = np.zeros(n) if w0 is None else np.array(w0, dtype=np.float64, copy=True)
    if outputs0 is not None:
        o = np.array(outputs0, dtype=np.float64, copy=True)
    else:
        o = np.zeros(A.shape[0]) if w0 is None else A.matvec(w)
    loose = w0 is None
    f = reg.value(w) + terms.value(o)
    history = [f]
    n_cg = 0
    converged = False
    it = 0
    M, M_cost = (None, None) if preconditioner0 is None else preconditioner0
    row_cost = np.zeros(A.shape[0])
    while it < max_iter:
        it += 1
        cg_tol, cg_max = (loose_tol, loose_cg_iter) if loose else (tol, max_cg_iter)
        active = terms.active(o)
        rows, cost, target = terms.newton_system(active)
        A_j = A.restrict(rows)
        row_cost[:] = 0.0
        row_cost[rows] = cost
        if M is None or M_cost.shape != row_cost.shape or \
                np.abs(row_cost - M_cost).sum() > REUSE_PRECONDITIONER * M_cost.sum():
            # the Hessian of eq. 4 changes only through the row costs (rows entering or
            # leaving the active set, DA's beliefs): one built for nearby costs still serves
            M, M_cost = make_preconditioner(precondition, A_j, cost, reg), row_cost.copy()
        res = cgls(A_j, cost, target, reg, x0=w, tol=cg_tol, max_iter=cg_max,
                   precondition=False if M is None else M)
        n_cg += res.n_iter
        w_bar = res.x
        o_bar = A.matvec(w_bar)
        if res.converged and np.array_equal(terms.active(o_bar), active):
            # Newton point keeps the active set it was computed on: it is the minimiser
            # of eq. 2 (up to the CG tolerance); no line search is needed.
            w, o = w_bar, o_bar
            f_new = reg.value(w) + terms.value(o)
            history.append(f_new)
            if loose:
                loose = False
                f = f_new
                continue
            converged = True
            break
        step = w_bar - w
        Rstep = reg.matvec(step)
        delta = exact_line_search(o, o_bar, terms.y, terms.cost, float(w @ Rstep),
                                  float(step @ Rstep), rows=terms.rows, margin=terms.margin)
        w += delta * step
        o += delta * (o_bar - o)
        f_new = reg.value(w) + terms.value(o)
        history.append(f_new)
        if verbose > 1:
            logger.debug("mfn it=%d f=%.10g delta=%.3g |j|=%d cg=%d", it, f_new, delta,
                         rows.size, res.n_iter)
        if not loose and f - f_new <= obj_rtol * abs(f_new):
            converged = True
            break
        f = f_new
    o = A.matvec(w)  # drop the round-off accumulated by the output updates
    if not converged:
        report_unconverged("mfn", f"Newton max_iter={max_iter}")
    return MFNResult(w=w, outputs=o, objective=reg.value(w) + terms.value(o), n_iter=it,
                     n_cg_iter=n_cg, converged=converged, history=history,
                     preconditioner=None if M is None else (M, M_cost))
