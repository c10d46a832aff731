"""Preconditioned conjugate gradients: linear systems and squared-hinge primal problems.

:func:`pcg` is the textbook preconditioned CG for a symmetric positive definite system.

:func:`squared_hinge_pcg` minimises the piecewise-quadratic objective

    F(x) = (1/2) x^T R x + (1/2) sum_i c_i max(0, 1 - y_i o_i(x))^2,   o(x) = A x,   (**)

(``R`` symmetric PSD) by non-linear preconditioned CG (Polak-Ribiere+, restarted when a
direction is not a descent direction) with the exact line search of
:func:`semisup.solvers.line_search.exact_line_search`: along a line ``F`` is a convex
piecewise quadratic, so the step is exact and inside a fixed active set the method *is*
linear PCG.  This is the solver of the primal Laplacian SVM (Melacci & Belkin, JMLR 2011),
but it knows nothing about kernels: the problem is described by a
:class:`SquaredHingeProblem`, whose central idea is an *image* ``T v`` of a vector -- the
one expensive linear map per iteration (a kernel matrix-vector product for LapSVM).  The
solver keeps the images of the iterate, of the preconditioned gradient and of the search
direction, which are updated by the same linear recurrences as the vectors themselves, so
every other quantity (outputs, quadratic forms, preconditioned gradient) is cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from semisup._logging import get_logger
from semisup.losses import squared_hinge
from semisup.solvers.line_search import exact_line_search

logger = get_logger(__name__)

# ----------------------------------------------------------------------------------------
# linear PCG
# ----------------------------------------------------------------------------------------


@dataclass
class PCGResult:
    """Solution of :func:`pcg`: ``x``, iterations, convergence flag, relative residual."""

    x: np.ndarray
    n_iter: int
    converged: bool
    residual: float


def pcg(matvec: Callable[[np.ndarray], np.ndarray], b: np.ndarray,
        precond: Callable[[np.ndarray], np.ndarray] | None = None,
        x0: np.ndarray | None = None, tol: float = 1e-8, max_iter: int = 1000) -> PCGResult:
    """Solve ``H x = b`` (``H`` SPD) by preconditioned conjugate gradients.

    Parameters
    ----------
    matvec : callable
        ``v -> H v``.
    b : ndarray
        Right-hand side.
    precond : callable, optional
        ``r -> P^-1 r`` for an SPD preconditioner ``P`` (identity when omitted).
    x0 : ndarray, optional
        Seed.
    tol : float
        Stop when ``||b - H x|| <= tol ||b||``.
    max_iter : int

    Returns
    -------
    PCGResult
    """
    b = np.asarray(b, dtype=np.float64)
    x = np.zeros_like(b) if x0 is None else np.array(x0, dtype=np.float64, copy=True)
    r = b - matvec(x) if x0 is not None else b.copy()
    b_norm = float(np.linalg.norm(b)) or 1.0
    z = precond(r) if precond is not None else r
    p = z.copy()
    rz = float(r @ z)
    res = float(np.linalg.norm(r)) / b_norm
    it = 0
    while res > tol and it < max_iter:
        it += 1
        Hp = matvec(p)
        curv = float(p @ Hp)
        if curv <= 0.0:  # H not positive definite along p (or p = 0): stop
            break
        step = rz / curv
        x += step * p
        r -= step * Hp
        res = float(np.linalg.norm(r)) / b_norm
        z = precond(r) if precond is not None else r
        rz_new = float(r @ z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return PCGResult(x=x, n_iter=it, converged=res <= tol, residual=res)


# ----------------------------------------------------------------------------------------
# non-linear PCG for the squared-hinge primal
# ----------------------------------------------------------------------------------------


class SquaredHingeProblem(Protocol):
    """Description of (**) for :func:`squared_hinge_pcg`.

    ``y`` (signs) and ``cost`` (``c_i >= 0``) of the ``m`` loss terms; ``T`` is a linear
    map chosen by the problem such that the methods below are cheap given ``v`` and
    ``T v``; ``M`` is the SPD preconditioner.
    """

    y: np.ndarray
    cost: np.ndarray

    def image(self, v: np.ndarray) -> np.ndarray:
        """``T v`` (the one expensive product per iteration)."""

    def outputs(self, v: np.ndarray, Tv: np.ndarray) -> np.ndarray:
        """``A v`` (length ``m``)."""

    def reg(self, u: np.ndarray, Tu: np.ndarray, v: np.ndarray, Tv: np.ndarray) -> float:
        """``u^T R v``."""

    def precond_gradient(self, x: np.ndarray, Tx: np.ndarray,
                         loss_grad: np.ndarray) -> np.ndarray:
        """``M^-1 (R x + A^T g)`` where ``g`` (length ``m``) is ``loss_grad``."""

    def metric(self, u: np.ndarray, v: np.ndarray, Tv: np.ndarray) -> float:
        """``u^T M v``."""


@dataclass
class SquaredHingePCGResult:
    """Outcome of :func:`squared_hinge_pcg`.

    Attributes
    ----------
    x, Tx : ndarray
        Solution and its image.
    objective : float
        ``F(x)``.
    n_iter : int
        Iterations (one image product each, plus one at the start and one at the end).
    converged : bool
        Whether the preconditioned gradient norm reached ``tol``.
    stopped_early : bool
        Whether ``callback`` stopped the run.
    grad_norm : float
        Final ``sqrt(g^T M^-1 g) / sqrt(g0^T M^-1 g0)``.
    history : list of float
        ``F`` after each iteration (non-increasing).
    """

    x: np.ndarray
    Tx: np.ndarray
    objective: float
    n_iter: int
    converged: bool
    stopped_early: bool
    grad_norm: float
    history: list = field(default_factory=list)


def _loss_value(o, y, cost) -> float:
    # np.sum of the products, not HingeTerms.value's dot product: keeps the historical rounding
    return 0.5 * float(np.sum(cost * squared_hinge(y * o)))


def _loss_grad(o, y, cost) -> np.ndarray:
    # d/do of (1/2) c max(0, 1 - y o)^2 = c (o - y) on the active terms (y^2 = 1)
    return np.where(y * o < 1.0, cost * (o - y), 0.0)


def squared_hinge_pcg(problem: SquaredHingeProblem, x0: np.ndarray, tol: float = 1e-6,
                      max_iter: int = 1000,
                      callback: Callable[[int, np.ndarray, np.ndarray], bool] | None = None,
                      verbose: int = 0) -> SquaredHingePCGResult:
    """Minimise (**) by non-linear preconditioned CG with exact line search.

    Parameters
    ----------
    problem : SquaredHingeProblem
    x0 : ndarray
        Starting point.
    tol : float
        Stop when the preconditioned gradient norm ``sqrt(g^T M^-1 g)`` falls below ``tol``
        times its value at ``x0``.
    max_iter : int
        Iteration limit.
    callback : callable, optional
        ``callback(it, x, Tx) -> bool`` after every iteration; ``True`` stops the run
        (early stopping).
    verbose : int
        Log one line per iteration (DEBUG, logger ``semisup.solvers.pcg``) when > 1.

    Returns
    -------
    SquaredHingePCGResult
    """
    y, cost = problem.y, problem.cost
    x = np.array(x0, dtype=np.float64, copy=True)
    Tx = problem.image(x)
    o = problem.outputs(x, Tx)
    h = problem.precond_gradient(x, Tx, _loss_grad(o, y, cost))
    Th = problem.image(h)
    gg = problem.metric(h, h, Th)                 # g^T M^-1 g = h^T M h
    gg0 = gg if gg > 0 else 1.0
    f = 0.5 * problem.reg(x, Tx, x, Tx) + _loss_value(o, y, cost)
    history = [f]
    d, Td = -h, -Th
    it = 0
    converged = gg <= (tol ** 2) * gg0 or gg == 0.0
    stopped = False
    while not converged and it < max_iter:
        it += 1
        if problem.metric(h, d, Td) >= 0.0:       # g^T d = h^T M d: not a descent direction
            d, Td = -h, -Th
        o_d = problem.outputs(d, Td)
        delta = exact_line_search(o, o + o_d, y, cost, problem.reg(x, Tx, d, Td),
                                  problem.reg(d, Td, d, Td))
        x += delta * d
        Tx += delta * Td
        o += delta * o_d
        h_new = problem.precond_gradient(x, Tx, _loss_grad(o, y, cost))
        Th_new = problem.image(h_new)
        gg_new = problem.metric(h_new, h_new, Th_new)
        # Polak-Ribiere+ in the M^-1 inner product: g_new^T (h_new - h_old) / g_old^T h_old
        cross = problem.metric(h, h_new, Th_new)
        beta = max(0.0, (gg_new - cross) / gg) if gg > 0 else 0.0
        h, Th, gg = h_new, Th_new, gg_new
        d, Td = -h + beta * d, -Th + beta * Td
        f = 0.5 * problem.reg(x, Tx, x, Tx) + _loss_value(o, y, cost)
        history.append(f)
        if verbose > 1:
            logger.debug("pcg it=%d F=%.12g step=%.3g |g|=%.3g", it, f, delta,
                         np.sqrt(gg / gg0))
        if gg <= (tol ** 2) * gg0:
            converged = True
            break
        if callback is not None and callback(it, x, Tx):
            stopped = True
            break
    Tx = problem.image(x)                         # drop round-off of the image updates
    o = problem.outputs(x, Tx)
    f = 0.5 * problem.reg(x, Tx, x, Tx) + _loss_value(o, y, cost)
    return SquaredHingePCGResult(x=x, Tx=Tx, objective=f, n_iter=it, converged=converged,
                                 stopped_early=stopped, grad_norm=float(np.sqrt(gg / gg0)),
                                 history=history)
