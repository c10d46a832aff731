"""The SVM dual quadratic program, solved by libsvm through scikit-learn.

    max_beta  sum_i beta_i - (1/2) sum_ij beta_i beta_j y_i y_j G_ij
    s.t.      sum_i y_i beta_i = 0,   0 <= beta_i <= C                          (*)

for any symmetric positive semi-definite ``G`` and labels ``y`` in ``{-1, +1}``.  This is
the dual of ``min (1/2)||w||^2 + C sum_i max(0, 1 - y_i (<w, phi_i> + b))`` with
``<phi_i, phi_j> = G_ij``; the equality constraint comes from the free bias ``b``.
:class:`sklearn.svm.SVC` with ``kernel='precomputed'`` solves exactly (*) (SMO with
second-order working-set selection); its ``dual_coef_`` holds ``y_i beta_i`` for the
support vectors and its decision values are ``sum_j y_j beta_j G_ij + b``.

Without the bias (``fit_intercept=False``) the dual has no equality constraint:

    max_beta  sum_i beta_i - (1/2) sum_ij beta_i beta_j y_i y_j G_ij,   0 <= beta_i <= C  (**)

(e.g. the hinge dual of the prototype vector machine, eq. 27 of its paper).  libsvm always
has a bias, so it is given the symmetrised set ``{(phi_i, y_i)} U {(-phi_i, -y_i)}``
(kernel ``[[G, -G], [-G, G]]``) with ``C / 2``.  That problem's objective is invariant under
``b -> -b``, so by convexity ``b = 0`` is optimal and ``w`` (unique) minimises
``(1/2)||w||^2 + C sum_i max(0, 1 - y_i <w, phi_i>)``; the dual variables of (**) are
``beta_i = beta_i^+ + beta_i^-``, with the same objective value.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.svm import SVC


@dataclass
class SVMDualResult:
    """Solution of the SVM dual (*).

    Attributes
    ----------
    beta : ndarray of shape (l,)
        Dual variables, in ``[0, C]``.
    bias : float
        The bias ``b`` (from the KKT conditions of the free support vectors).
    objective : float
        Dual objective ``sum beta - (1/2) beta^T (Y G Y) beta``.
    n_iter : int
        SMO iterations.
    at_bound : int
        Number of ``beta_i`` equal to ``C``.
    """

    beta: np.ndarray
    bias: float
    objective: float
    n_iter: int
    at_bound: int


def svm_dual(G: np.ndarray, y: np.ndarray, C: float, tol: float = 1e-5,
             max_iter: int = -1, cache_size: float = 200.0,
             fit_intercept: bool = True) -> SVMDualResult:
    """Solve the SVM dual (*) with libsvm, or (**) without the bias.

    Parameters
    ----------
    G : ndarray of shape (l, l)
        Symmetric PSD kernel matrix.
    y : ndarray of shape (l,)
        Labels ``+1/-1``, both present.
    C : float
        Upper bound of the box (``> 0``).
    tol : float
        libsvm's stopping tolerance on the maximal KKT violation (its default is 1e-3;
        a tighter default makes different routes agree to several digits).
    max_iter : int
        SMO iteration limit (``-1``: none).
    cache_size : float
        libsvm kernel cache in MB.
    fit_intercept : bool
        With a free bias (the dual (*)) or without one (the dual (**), solved through the
        symmetrised problem of size ``2 l``; ``bias`` is then 0 and ``y`` may hold a
        single class).

    Returns
    -------
    SVMDualResult
    """
    y = np.asarray(y, dtype=np.float64)
    if not fit_intercept:
        return _svm_dual_without_bias(G, y, C, tol, max_iter, cache_size)
    if not np.all(np.isin(y, (-1.0, 1.0))) or np.unique(y).size != 2:
        raise ValueError("y must hold +1 and -1 labels, both present")
    if not C > 0:
        raise ValueError(f"C must be > 0, got {C!r}")
    G = np.asarray(G, dtype=np.float64)
    svc = SVC(kernel="precomputed", C=float(C), tol=tol, max_iter=max_iter,
              cache_size=cache_size, shrinking=True)
    svc.fit(G, y)
    coef = np.zeros(y.size)
    coef[svc.support_] = svc.dual_coef_[0]          # y_i beta_i
    beta = np.clip(coef * y, 0.0, C)
    yb = y * beta
    objective = float(beta.sum() - 0.5 * yb @ (G @ yb))
    n_iter = int(np.sum(getattr(svc, "n_iter_", [0])))
    at_bound = int(np.count_nonzero(beta >= C * (1 - 1e-12)))
    return SVMDualResult(beta=beta, bias=float(svc.intercept_[0]), objective=objective,
                         n_iter=n_iter, at_bound=at_bound)


def _svm_dual_without_bias(G: np.ndarray, y: np.ndarray, C: float, tol: float, max_iter: int,
                           cache_size: float) -> SVMDualResult:
    """(**) as (*) on the symmetrised set (see the module docstring)."""
    l = y.size
    G2 = np.empty((2 * l, 2 * l))
    G2[:l, :l] = G2[l:, l:] = G
    G2[:l, l:] = G2[l:, :l] = -G
    res = svm_dual(G2, np.r_[y, -y], 0.5 * C, tol=tol, max_iter=max_iter,
                   cache_size=cache_size)
    beta = res.beta[:l] + res.beta[l:]
    at_bound = int(np.count_nonzero(beta >= C * (1 - 1e-12)))
    return SVMDualResult(beta=beta, bias=0.0, objective=res.objective, n_iter=res.n_iter,
                         at_bound=at_bound)


def svm_dual_precomputed(K: np.ndarray, y: np.ndarray, C: float, tol: float = 1e-6,
                         alpha0: np.ndarray | None = None, max_iter: int = -1,
                         fit_intercept: bool = True) -> SVMDualResult:
    """The SVM dual (*) on a precomputed kernel, optionally warm-started.

    The library's one "SVM on a precomputed Gram matrix" (the model-level
    :func:`semisup.solvers.svm.fit_precomputed_svm` wraps it): without ``alpha0`` it is
    :func:`svm_dual` (libsvm; also the dual (**) without a bias); with a feasible
    ``alpha0`` (``0 <= alpha0 <= C``, ``y^T alpha0 = 0``, e.g. the solution for a
    neighbouring kernel) it runs the second-order SMO of :mod:`semisup.solvers.smo` from
    there, which is what sequences of SVMs on slowly changing kernels (multiple kernel
    learning, alternating methods) need.

    Parameters
    ----------
    K : ndarray of shape (l, l)
        Symmetric PSD kernel matrix.
    y : ndarray of shape (l,)
        ``+1/-1`` labels, both present (with a bias).
    C : float
        ``> 0``.
    tol : float
        Maximal KKT violation at the solution (both routes use libsvm's criterion).
    alpha0 : ndarray of shape (l,), optional
        Warm start (with a bias only: the start must satisfy ``y^T alpha0 = 0``).
    max_iter : int
        SMO iteration limit (``-1``: none).
    fit_intercept : bool
        The dual (*) with a free bias, or (**) without one (cold start only).

    Returns
    -------
    SVMDualResult
    """
    if alpha0 is None:
        return svm_dual(K, y, C, tol=tol, max_iter=max_iter, fit_intercept=fit_intercept)
    if not fit_intercept:
        raise ValueError("alpha0 (a warm start) needs fit_intercept=True: the warm-started "
                         "SMO keeps y^T alpha = 0; drop alpha0 for the dual without a bias")
    from semisup.solvers.smo import smo

    y = np.asarray(y, dtype=np.float64)
    if not np.all(np.isin(y, (-1.0, 1.0))) or np.unique(y).size != 2:
        raise ValueError("y must hold +1 and -1 labels, both present")
    if not C > 0:
        raise ValueError(f"C must be > 0, got {C!r}")
    alpha0 = np.asarray(alpha0, dtype=np.float64)
    if alpha0.shape != y.shape or abs(float(alpha0 @ y)) > 1e-6 * max(1.0, C * y.size):
        raise ValueError("alpha0 must have the shape of y and satisfy y @ alpha0 = 0")
    K = np.asarray(K, dtype=np.float64)
    beta, bias, n_iter, _ = smo(K, y, C, alpha0=alpha0, tol=tol,
                                max_iter=2**62 if max_iter < 0 else max_iter)
    yb = y * beta
    objective = float(beta.sum() - 0.5 * yb @ (K @ yb))
    at_bound = int(np.count_nonzero(beta >= C * (1 - 1e-12)))
    return SVMDualResult(beta=beta, bias=bias, objective=objective, n_iter=n_iter,
                         at_bound=at_bound)
