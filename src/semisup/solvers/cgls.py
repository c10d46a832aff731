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
def _curvature(p, Rp, q, cost, Cq) -> float:
    """``Cq = C q``; returns ``p^T R p + q^T C q``."""
    a = 0.0
    for i in range(p.shape[0]):
        a += p[i] * Rp[i]
    b = 0.0
    for k in range(q.shape[0]):
        Cq[k] = cost[k] * q[k]
        b += q[k] * Cq[k]
    return a + b


@njit(cache=True, nogil=True)
def _update(gamma, p, Rp, Cq, x, Rx, z) -> None:
    """``x += gamma p``, ``Rx += gamma R p``, ``z -= gamma C q``."""
    for i in range(x.shape[0]):
        x[i] += gamma * p[i]
        Rx[i] += gamma * Rp[i]
    for k in range(z.shape[0]):
        z[k] -= gamma * Cq[k]


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
    z = cost * (target - A.matvec(x))           # weighted data residual
    Rx = reg.matvec(x)
    r = A.rmatvec(z) - Rx                       # residual of the normal equations
    # the right-hand side norm; with a zero seed it is the initial residual
    b_norm = float(np.linalg.norm(A.rmatvec(cost * target))) if x0 is not None \
        else float(np.linalg.norm(r))
    if b_norm == 0.0:
        b_norm = 1.0
    M = precondition if callable(precondition) else make_preconditioner(precondition, A,
                                                                          cost, reg)
    inverse = M.inverse if isinstance(M, Diagonal) else None
    s = r if M is None else M(r)
    rho = float(r @ s)
    omega = float(r @ r)
    p = s.copy()
    Cq = np.empty(A.shape[0])
    threshold = (tol * b_norm) ** 2
    # small systems: numpy's vector operations (no numba import, no compilation)
    compiled = use_compiled_vectors(max(A.shape))
    it = 0
    while omega > threshold and it < max_iter:
        q = A.matvec(p)
        Rp = reg.matvec(p)
        if compiled:
            curvature = _curvature(p, Rp, q, cost, Cq)
        else:
            np.multiply(cost, q, out=Cq)
            curvature = float(p @ Rp) + float(q @ Cq)
        if curvature <= 0.0:  # R + A^T C A is singular along p: nothing left to gain
            break
        gamma = rho / curvature
        if compiled:
            _update(gamma, p, Rp, Cq, x, Rx, z)
        else:
            x += gamma * p
            Rx += gamma * Rp
            z -= gamma * Cq
        r = A.rmatvec(z)
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
