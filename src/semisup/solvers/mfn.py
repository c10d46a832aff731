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

from semisup._accel import njit, use_compiled_vectors
from semisup._logging import get_logger, report_unconverged
from semisup.losses import HingeTerms
from semisup.solvers.cgls import LocalRows, cgls_rows
from semisup.solvers.line_search import exact_line_search
from semisup.solvers.preconditioners import make_preconditioner

# rebuild the CGLS preconditioner once the row costs of the Newton system (zero for inactive
# rows) have moved by more than this fraction, in l1 norm, since it was built
REUSE_PRECONDITIONER = 0.05

logger = get_logger(__name__)


@njit(cache=True, nogil=True)
def _cost_change(row_cost, built_for):
    """``(sum |row_cost - built_for|, sum built_for)`` in one pass (numpy: three temporaries)."""
    moved = 0.0
    total = 0.0
    for i in range(row_cost.shape[0]):
        moved += abs(row_cost[i] - built_for[i])
        total += built_for[i]
    return moved, total


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
    return mfn_rows(LocalMFNRows(A, terms, outputs0), reg, A.shape[1], w0=w0, tol=tol,
                    max_iter=max_iter, max_cg_iter=max_cg_iter, loose_tol=loose_tol,
                    loose_cg_iter=loose_cg_iter, obj_rtol=obj_rtol, precondition=precondition,
                    preconditioner0=preconditioner0, verbose=verbose)


class LocalMFNRows:
    """The per-row half of L2-SVM-MFN in this process: outputs ``o``, the active set.

    :func:`mfn_rows` reaches the rows only through these methods (``d``-vectors in, scalars
    and ``d``-vectors out), so the same Newton iteration runs on rows held elsewhere
    (:mod:`semisup.distributed`).
    """

    def __init__(self, A, terms: HingeTerms, outputs0: np.ndarray | None = None):
        self.A, self.terms, self.outputs0 = A, terms, outputs0

    def start(self, w: np.ndarray | None) -> float:
        """Outputs at the seed ``w`` (zero without one); returns the loss there."""
        if self.outputs0 is not None:
            self.o = np.array(self.outputs0, dtype=np.float64, copy=True)
        else:
            self.o = np.zeros(self.A.shape[0]) if w is None else self.A.matvec(w)
        self.row_cost = np.zeros(self.A.shape[0])
        # the loss at outputs that are the product ``A w`` itself (not updated along a
        # step): :meth:`finish` returns them instead of multiplying again
        self.exact = None
        return self.terms.value(self.o)

    def newton_system(self) -> int:
        """Active set ``j(w)`` and the least-squares rows of eq. 4; returns their number."""
        self.active = self.terms.active(self.o)
        self.rows, self.cost, self.target = self.terms.newton_system(self.active)
        self.A_j = None  # the old restriction may hold a copy of rows: free it first
        self.A_j = self.A.restrict(self.rows)
        self.row_cost[:] = 0.0
        self.row_cost[self.rows] = self.cost
        return self.rows.size

    def preconditioner(self, kind, reg, previous: tuple | None) -> tuple:
        """``previous`` while the row costs moved by at most 5% (l1) since it was built, a
        new ``(M, row costs)`` otherwise: the Hessian of eq. 4 changes only through the row
        costs (rows entering or leaving the active set, DA's beliefs)."""
        M, M_cost = (None, None) if previous is None else previous
        if M is None or M_cost.shape != self.row_cost.shape:
            rebuild = True
        elif use_compiled_vectors(M_cost.shape[0]):
            moved, total = _cost_change(self.row_cost, M_cost)
            rebuild = moved > REUSE_PRECONDITIONER * total
        else:
            rebuild = np.abs(self.row_cost - M_cost).sum() > REUSE_PRECONDITIONER * M_cost.sum()
        if rebuild:
            M, M_cost = make_preconditioner(kind, self.A_j, self.cost, reg), self.row_cost.copy()
        return M, M_cost

    def cg_rows(self) -> LocalRows:
        # CGLS starts at the current w, whose outputs are known here: no product to start
        return LocalRows(self.A_j, self.cost, self.target, outputs=self.o[self.rows])

    def compiled(self) -> bool:
        return use_compiled_vectors(max(self.A_j.shape))

    def newton_point(self, w_bar: np.ndarray) -> bool:
        """Whether the Newton point keeps the active set it was computed on."""
        self.o_bar = self.A.matvec(w_bar)
        return np.array_equal(self.terms.active(self.o_bar), self.active)

    def accept_newton_point(self) -> float:
        self.o = self.o_bar
        self.exact = self.terms.value(self.o)
        return self.exact

    def line_search(self, reg_cross: float, reg_curv: float) -> float:
        t = self.terms
        return exact_line_search(self.o, self.o_bar, t.y, t.cost, reg_cross, reg_curv,
                                 rows=t.rows, margin=t.margin)

    def step(self, delta: float) -> float:
        self.o += delta * (self.o_bar - self.o)
        self.exact = None
        return self.terms.value(self.o)

    def finish(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        """Loss and outputs recomputed at ``w`` (drops the round-off of the updates).

        After an accepted Newton point the outputs already are ``A w`` (``w`` is that point):
        they and their loss are returned as they are, the same numbers a new product gives.
        """
        if self.exact is not None:
            return self.exact, self.o
        self.o = self.A.matvec(w)
        return self.terms.value(self.o), self.o


def mfn_rows(rows, reg, n_weights: int, w0: np.ndarray | None = None, tol: float = 1e-6,
             max_iter: int = 50, max_cg_iter: int = 10_000, loose_tol: float = 1e-2,
             loose_cg_iter: int = 10, obj_rtol: float = 1e-9, precondition="auto",
             preconditioner0: tuple | None = None, verbose: int = 0) -> MFNResult:
    """The Newton iteration of :func:`l2svm_mfn` on a row object (:class:`LocalMFNRows` or
    one whose rows live elsewhere); the parameters are those of :func:`l2svm_mfn`."""
    w = np.zeros(n_weights) if w0 is None else np.array(w0, dtype=np.float64, copy=True)
    loose = w0 is None
    f = reg.value(w) + rows.start(None if w0 is None else w)
    history = [f]
    n_cg = 0
    converged = False
    it = 0
    M = preconditioner0
    while it < max_iter:
        it += 1
        cg_tol, cg_max = (loose_tol, loose_cg_iter) if loose else (tol, max_cg_iter)
        n_rows = rows.newton_system()
        M = rows.preconditioner(precondition, reg, M)
        res = cgls_rows(rows.cg_rows(), reg, w.copy(), M[0], cg_tol, cg_max,
                        compiled=rows.compiled())
        n_cg += res.n_iter
        w_bar = res.x
        if rows.newton_point(w_bar) and res.converged:
            # Newton point keeps the active set it was computed on: it is the minimiser
            # of eq. 2 (up to the CG tolerance); no line search is needed.
            w = w_bar
            f_new = reg.value(w) + rows.accept_newton_point()
            history.append(f_new)
            if loose:
                loose = False
                f = f_new
                continue
            converged = True
            break
        step = w_bar - w
        Rstep = reg.matvec(step)
        delta = rows.line_search(float(w @ Rstep), float(step @ Rstep))
        w += delta * step
        f_new = reg.value(w) + rows.step(delta)
        history.append(f_new)
        if verbose > 1:
            logger.debug("mfn it=%d f=%.10g delta=%.3g |j|=%d cg=%d", it, f_new, delta,
                         n_rows, res.n_iter)
        if not loose and f - f_new <= obj_rtol * abs(f_new):
            converged = True
            break
        f = f_new
    loss, o = rows.finish(w)
    if not converged:
        report_unconverged("mfn", f"Newton max_iter={max_iter}")
    return MFNResult(w=w, outputs=o, objective=reg.value(w) + loss, n_iter=it,
                     n_cg_iter=n_cg, converged=converged, history=history,
                     preconditioner=None if M is None or M[0] is None else M)
