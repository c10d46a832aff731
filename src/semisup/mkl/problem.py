"""The multiple kernel learning problem shared by the three solvers (Xu's thesis, eq. 4.1).

    min_{p in P} max_{alpha in Q}  f(p, alpha) = alpha^T e - 1/2 (alpha o y)^T K(p) (alpha o y)

with ``K(p) = sum_k p_k K_k``, ``P`` the simplex and ``Q = {0 <= alpha <= C, alpha^T y = 0}``.
``f`` is linear in ``p``: for a fixed ``alpha^j`` with ``s_j = sum(alpha^j)`` and
``q^j_k = (alpha^j o y)^T K_k (alpha^j o y)``,  ``f(p, alpha^j) = s_j - 1/2 q^j . p``  (a *cut*).
``J(p) = max_alpha f(p, alpha)`` is the SVM dual optimum on ``K(p)``; it is convex in ``p``
with subgradient ``-q/2`` at the SVM solution.

Duality gap (§4.3.1, the rule of SimpleMKL used for every solver): at ``(p, alpha)``,
``min_{p'} f(p', alpha) = s - 1/2 max_k q_k`` is a lower bound on the optimum and
``J(p) = s - 1/2 q . p`` an upper bound, so ``max_k q_k - q . p`` is twice the gap.  The
thesis stops when it is below 0.01; ``relative=True`` divides the gap by ``J(p)`` (SimpleMKL's
relative duality gap), which makes the tolerance independent of ``C`` and ``n``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from semisup.mkl.bank import KernelBank, StreamingKernelBank
from semisup.solvers.qp import svm_dual_precomputed

logger = logging.getLogger("semisup.mkl")


@dataclass
class SVMPoint:
    """The inner SVM solved at kernel weights ``p``.

    Attributes
    ----------
    p : ndarray of shape (m,)
    alpha : ndarray of shape (n,)
    bias : float
    objective : float
        ``J(p) = f(p, alpha)``.
    s : float
        ``sum(alpha)``.
    q : ndarray of shape (m,) or None
        ``(alpha o y)^T K_k (alpha o y)``; ``-q/2`` is the gradient of ``J`` at ``p``
        (``None`` for a line-search trial point, see :meth:`MKLProblem.solve_svm`).
    """

    p: np.ndarray
    alpha: np.ndarray
    bias: float
    objective: float
    s: float
    q: np.ndarray | None

    def gap(self, relative: bool = True) -> float:
        """The stopping criterion ``max_k q_k - q . p`` (over ``2 J(p)`` if ``relative``)."""
        g = float(np.max(self.q) - self.q @ self.p)
        if relative:
            return g / max(2.0 * abs(self.objective), np.finfo(float).tiny)
        return g


@dataclass
class MKLResult:
    """What an MKL solver returns.

    Attributes
    ----------
    weights : ndarray of shape (m,)
        Kernel weights on the simplex.
    alpha : ndarray of shape (n,)
        SVM dual variables at ``weights``.
    bias : float
    objective : float
        ``J(weights)``.
    n_iter : int
        Outer iterations.
    n_svm : int
        Inner SVM solves.
    converged : bool
        Whether the duality gap reached ``tol``.
    trace : dict of lists
        Per outer iteration: ``objective``, ``gap``, and solver-specific entries
        (``f_low``/``f_up`` for the level method and SILP), ``weights`` when recorded.
    """

    weights: np.ndarray
    alpha: np.ndarray
    bias: float
    objective: float
    n_iter: int
    n_svm: int
    converged: bool
    trace: dict = field(default_factory=dict)


class MKLProblem:
    """Eq. 4.1 on a :class:`KernelBank` and ``+1/-1`` labels: SVM solves and cuts.

    Parameters
    ----------
    bank : KernelBank or StreamingKernelBank
        Anything with ``n_kernels``, ``n_samples``, ``combine(p)`` and
        ``quadratic_forms(u)``.
    y : ndarray of shape (n,)
        ``+1/-1``, both present.
    C : float
        ``> 0``.
    svm_tol : float
        Tolerance of the inner SVM (KKT violation); an inexact SVM makes ``J`` and the cuts
        inexact, so it is kept tight.
    warm_start : bool
        Start each SVM from the previous ``alpha`` (feasible for every ``p``).
    """

    def __init__(self, bank: KernelBank | StreamingKernelBank, y: np.ndarray, C: float,
                 svm_tol: float = 1e-6, warm_start: bool = True):
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (bank.n_samples,):
            raise ValueError(f"y must have shape ({bank.n_samples},) to match the kernels, "
                             f"got {y.shape}")
        if not np.all(np.isin(y, (-1.0, 1.0))) or np.unique(y).size != 2:
            raise ValueError("y must hold +1 and -1 labels, both present")
        if not (isinstance(C, (int, float, np.floating)) and np.isfinite(C) and C > 0):
            raise ValueError(f"C must be a positive number, got {C!r}")
        self.bank = bank
        self.y = y
        self.C = float(C)
        self.svm_tol = float(svm_tol)
        self.warm_start = bool(warm_start)
        self.n_svm = 0
        self._alpha = None

    @property
    def n_kernels(self) -> int:
        return self.bank.n_kernels

    def solve_svm(self, p: np.ndarray, *, K: np.ndarray | None = None,
                  cut: bool = True) -> SVMPoint:
        """``alpha = argmax_alpha f(p, alpha)`` on ``K(p)``, and its cut.

        Parameters
        ----------
        p : ndarray of shape (m,)
        K : ndarray of shape (n, n), optional
            ``K(p)`` when the caller has it already (a line search along a direction forms
            it as ``K(p0) + gamma K(D)`` in ``O(n^2)`` instead of ``O(n^2 m)``).
        cut : bool
            Compute the cut ``q`` (one pass over the bank).  A trial point of a line search
            needs only ``J(p) = s - 1/2 u^T K(p) u``; :meth:`add_cut` completes it later.
        """
        p = np.asarray(p, dtype=np.float64)
        if K is None:
            K = self.bank.combine(p)
        res = svm_dual_precomputed(K, self.y, self.C, tol=self.svm_tol,
                                   alpha0=self._alpha if self.warm_start else None)
        self.n_svm += 1
        self._alpha = res.beta
        s = float(res.beta.sum())
        point = SVMPoint(p=p.copy(), alpha=res.beta, bias=res.bias, objective=np.nan, s=s,
                         q=None)
        if cut:
            return self.add_cut(point)
        u = res.beta * self.y
        S = np.flatnonzero(u)
        point.objective = s - 0.5 * float(u[S] @ (K[np.ix_(S, S)] @ u[S]))
        return point

    def add_cut(self, point: SVMPoint) -> SVMPoint:
        """Fill ``point.q`` (and ``J = s - 1/2 q . p`` from it) if it is missing."""
        if point.q is None:
            point.q = self.bank.quadratic_forms(point.alpha * self.y)
            point.objective = point.s - 0.5 * float(point.q @ point.p)
        return point
