"""CGLS: conjugate gradients for weighted regularised least squares.

Solves ``[R + A^T C A] x = A^T C t`` (eq. 4 of the SVMlin paper with ``R = lambda I``)
where ``A`` is an operator with ``matvec``/``rmatvec`` (typically the data rows of the
active set), ``C`` a diagonal of non-negative costs and ``t`` the targets.  Like the
classical CGLS it updates the weighted data residual ``z = C (t - A x)`` instead of
forming normal equations, which keeps it numerically well behaved; unlike it, ``R`` may
be any symmetric positive definite operator (``lambda I`` or a graph regulariser).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semisup._accel import njit, use_compiled_vectors
from semisup.solvers.preconditioners import Diagonal, make_preconditioner


@dataclass
class CGLSResult:
    """Solution of a CGLS call.

    Attributes
    ----------
    x : ndarray
        The approximate solution.
    n_iter : int
        Conjugate-gradient iterations performed.
    converged : bool
        Whether the relative residual reached ``tol``.
    residual : float
        Final ``||A^T C (t - A x) - R x|| / ||A^T C t||``.
    """

    x: np.ndarray
    n_iter: int
    converged: bool
    residual: float


# The vector work of an iteration fused into three compiled passes: as a dozen numpy calls
# it cost about half of the two mat-vecs on text-sized problems (bench_cgls_overhead.py).
@njit(cache=True, nogil=True)
def _weighted_sq(q, cost, Cq) -> float:
    """``Cq = C q``; returns ``q^T C q``."""
    b = 0.0
    for k in range(q.shape[0]):
        Cq[k] = cost[k] * q[k]
        b += q[k] * Cq[k]
    return b


@njit(cache=True, nogil=True)
def _dot(p, Rp) -> float:
    a = 0.0
    for i in range(p.shape[0]):
        a += p[i] * Rp[i]
    return a


@njit(cache=True, nogil=True)
def _axpy(gamma, v, out) -> None:
    """``out -= gamma v``."""
    for k in range(out.shape[0]):
        out[k] -= gamma * v[k]


@njit(cache=True, nogil=True)
def _step(gamma, p, Rp, x, Rx) -> None:
    """``x += gamma p``, ``Rx += gamma R p``."""
    for i in range(x.shape[0]):
        x[i] += gamma * p[i]
        Rx[i] += gamma * Rp[i]


@njit(cache=True, nogil=True)
def _next_direction_diagonal(r, Rx, inverse, p, rho):
    """As :func:`_next_direction` with ``r -= Rx`` and ``s = inverse * r`` in the same pass."""
    rho_new = 0.0
    omega = 0.0
    for i in range(r.shape[0]):
        r[i] -= Rx[i]
        rho_new += inverse[i] * r[i] * r[i]
        omega += r[i] * r[i]
    beta = rho_new / rho
    for i in range(p.shape[0]):
        p[i] = inverse[i] * r[i] + beta * p[i]
    return rho_new, omega


@njit(cache=True, nogil=True)
def _next_direction(r, s, p, rho):
    """``p = s + (r^T s / rho) p``; returns ``(r^T s, r^T r)``."""
    rho_new = 0.0
    omega = 0.0
    for i in range(r.shape[0]):
        rho_new += r[i] * s[i]
        omega += r[i] * r[i]
    beta = rho_new / rho
    for i in range(p.shape[0]):
        p[i] = s[i] + beta * p[i]
    return rho_new, omega


def cgls(A, cost: np.ndarray, target: np.ndarray, reg, x0: np.ndarray | None = None,
         tol: float = 1e-6, max_iter: int = 10_000, precondition="auto") -> CGLSResult:
    """Solve ``[R + A^T C A] x = A^T C t`` by conjugate gradients, seeded at ``x0``.

    Parameters
    ----------
    A : operator
        ``A.matvec(x)`` (length ``n_rows``) and ``A.rmatvec(q)`` (length ``n_weights``);
        with ``precondition``, also ``A.weighted_column_sq(c)`` = ``diag(A^T diag(c) A)``,
        and for the sketch ``A.row_sq_norms()``, ``A.restrict`` and ``A.materialize``.
    cost : ndarray of shape (n_rows,)
        Diagonal of ``C`` (non-negative).
    target : ndarray of shape (n_rows,)
        Right-hand side targets ``t``.
    reg : regulariser
        ``reg.matvec(p)`` returns ``R p`` (see :mod:`semisup.regularizers`); with
        ``precondition``, ``reg.diagonal(n)`` returns (a lower bound of) ``diag(R)``.
    x0 : ndarray, optional
        Seed (warm start); zero when omitted.
    tol : float
        Stop when the residual of the normal equations falls below ``tol`` times the
        norm of the right-hand side ``A^T C t`` (the paper's relative stopping rule).
    max_iter : int
        Maximum number of iterations.
    precondition : {"auto", "jacobi", "sketch"}, bool or callable
        Preconditioner of :mod:`semisup.solvers.preconditioners`: Jacobi
        (``diag(R + A^T C A)``, one pass over the rows) or a Cholesky factor of a
        row-sampled ``R + A^T C A`` (small ``d``); ``"auto"``/``True`` picks by shape,
        ``False`` runs plain CGLS, a callable ``r -> M^-1 r`` is used as it is (one built
        for a nearby system: see :func:`~semisup.solvers.mfn.l2svm_mfn`).  The stopping rule
        is unchanged.

    Returns
    -------
    CGLSResult
    """
    n = A.shape[1]
    x = np.zeros(n) if x0 is None else np.array(x0, dtype=np.float64, copy=True)
    cost = np.asarray(cost, dtype=np.float64)
    M = precondition if callable(precondition) else make_preconditioner(precondition, A,
                                                                          cost, reg)
    return cgls_rows(LocalRows(A, cost, target), reg, x, M, tol, max_iter,
                     compiled=use_compiled_vectors(max(A.shape)), zero_seed=x0 is None)


class LocalRows:
    """The row half of a CGLS iteration held in this process: ``z = C (t - A x)``, ``q = A p``.

    :func:`cgls_rows` talks to the rows only through :meth:`start`, :meth:`curvature` and
    :meth:`update` (``n``-vectors in, ``d``-vectors and scalars out), so the same iteration
    runs on rows held elsewhere (:mod:`semisup.distributed`).

    With an operator whose :meth:`~semisup.solvers.design.Design.normal_product` reads the
    rows once (large sparse data), an iteration makes one pass over the rows instead of two:
    ``q^T C q`` and ``A^T C q`` together, and ``A^T z`` follows by ``A^T z -= gamma A^T C q``
    (the same vector as the product of the updated ``z``, up to round-off; the distributed
    iteration updates it the same way).  ``fused=False`` keeps the two products.
    """

    def __init__(self, A, cost: np.ndarray, target: np.ndarray,
                 outputs: np.ndarray | None = None, fused: bool = True):
        self.A, self.cost, self.target = A, cost, target
        self.compiled = use_compiled_vectors(max(A.shape))
        # ``A x`` at the seed ``x`` when the caller knows it (MFN keeps the outputs)
        self.outputs = outputs
        self.fused = fused and bool(getattr(A, "fused_normal_product", False))

    def start(self, x: np.ndarray, rhs_norm: bool) -> tuple[np.ndarray, float | None]:
        """``z = C (t - A x)``; returns ``A^T z`` and, if asked, ``||A^T C t||``."""
        A = self.A
        Ax = A.matvec(x) if self.outputs is None else self.outputs
        self.outputs = None
        self.z = self.cost * (self.target - Ax)
        self.Cq = np.empty(A.shape[0])
        rmatvec_pair = getattr(A, "rmatvec_pair", None)
        if not rhs_norm:
            Atz, norm = A.rmatvec(self.z), None
        elif rmatvec_pair is None:
            norm = float(np.linalg.norm(A.rmatvec(self.cost * self.target)))
            Atz = A.rmatvec(self.z)
        else:  # both products in one pass over the rows
            Atz, Atct = rmatvec_pair(self.z, self.cost * self.target)
            norm = float(np.linalg.norm(Atct))
        if self.fused:
            self.Atz = Atz.copy()
        return Atz, norm

    def curvature(self, p: np.ndarray) -> float:
        """``q = A p``, ``C q`` kept; returns ``q^T C q``."""
        if self.fused:
            curvature, self.AtCq = self.A.normal_product(p, self.cost)
            return curvature
        q = self.A.matvec(p)
        if self.compiled:
            return _weighted_sq(q, self.cost, self.Cq)
        np.multiply(self.cost, q, out=self.Cq)
        return float(q @ self.Cq)

    def update(self, gamma: float) -> np.ndarray:
        """``z -= gamma C q``; returns ``A^T z``."""
        if self.fused:
            if self.compiled:
                _axpy(gamma, self.AtCq, self.Atz)
            else:
                self.Atz -= gamma * self.AtCq
            return self.Atz.copy()  # the caller works on its residual in place
        if self.compiled:
            _axpy(gamma, self.Cq, self.z)
        else:
            self.z -= gamma * self.Cq
        return self.A.rmatvec(self.z)


def cgls_rows(rows, reg, x: np.ndarray, M, tol: float, max_iter: int, compiled: bool = False,
              zero_seed: bool = False) -> CGLSResult:
    """The CGLS iteration of :func:`cgls` on a row object (:class:`LocalRows` or one whose
    rows live elsewhere), starting from ``x`` (updated in place).

    Parameters
    ----------
    rows : LocalRows-like
        ``start``, ``curvature``, ``update`` as :class:`LocalRows`.
    reg : regulariser
    x : ndarray of shape (n_weights,)
    M : callable, Diagonal or None
        Preconditioner ``r -> M^-1 r``.
    tol, max_iter : as :func:`cgls`.
    compiled : bool
        Fuse the ``d``-vector work into compiled passes.
    zero_seed : bool
        ``x`` is zero: the initial residual is the right-hand side (saves one product).
    """
    data_r, b_norm = rows.start(x, not zero_seed)
    Rx = reg.matvec(x)
    r = data_r - Rx                             # residual of the normal equations
    # the right-hand side norm; with a zero seed it is the initial residual
    if b_norm is None:
        b_norm = float(np.linalg.norm(r))
    if b_norm == 0.0:
        b_norm = 1.0
    inverse = M.inverse if isinstance(M, Diagonal) else None
    s = r if M is None else M(r)
    rho = float(r @ s)
    omega = float(r @ r)
    p = s.copy()
    threshold = (tol * b_norm) ** 2
    it = 0
    while omega > threshold and it < max_iter:
        Rp = reg.matvec(p)
        curvature = (_dot(p, Rp) if compiled else float(p @ Rp)) + rows.curvature(p)
        if curvature <= 0.0:  # R + A^T C A is singular along p: nothing left to gain
            break
        gamma = rho / curvature
        if compiled:
            _step(gamma, p, Rp, x, Rx)
        else:
            x += gamma * p
            Rx += gamma * Rp
        r = rows.update(gamma)
        if compiled and inverse is not None:
            rho_new, omega = _next_direction_diagonal(r, Rx, inverse, p, rho)
        else:
            r -= Rx
            s = r if M is None else M(r)
            if compiled:
                rho_new, omega = _next_direction(r, s, p, rho)
            else:
                rho_new, omega = float(r @ s), float(r @ r)
                p *= rho_new / rho
                p += s
        rho = rho_new
        it += 1
    return CGLSResult(x=x, n_iter=it, converged=omega <= threshold,
                      residual=float(np.sqrt(omega)) / b_norm)
