"""One helper for "an SVM on a precomputed kernel", shared by every kernel-SVM step.

:func:`fit_precomputed_svm` trains ``min (1/2)||f||_H^2 + C sum_i s_i max(0, 1 - y_i f(x_i))``
with ``f(x) = sum_j coef_j K(x, x_j) + bias`` on a precomputed Gram matrix, and
:class:`PrecomputedSVM` evaluates it on any rows of a kernel matrix.  The solve itself is
:func:`semisup.solvers.qp.svm_dual_precomputed` (libsvm cold, a second-order SMO when
warm-started), the same routine the MKL inner SVM calls: one implementation, two views
(the dual result for solvers, a model with ``decision_function`` for estimators).  Used by
the transductive estimators (out-of-sample refits, the rho-TSVM routes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semisup.solvers.qp import svm_dual_precomputed


@dataclass
class PrecomputedSVM:
    """A trained kernel SVM.

    Attributes
    ----------
    coef : ndarray of shape (n_train,)
        Expansion coefficients ``y_i beta_i`` (zero off the support vectors).
    bias : float
        Intercept (0 without one).
    beta : ndarray of shape (n_train,)
        Dual variables in ``[0, C]``.
    objective : float
        Dual objective ``sum beta - (1/2) beta^T (Y K Y) beta``.
    n_iter : int
        SMO iterations.
    """

    coef: np.ndarray
    bias: float
    beta: np.ndarray
    objective: float
    n_iter: int

    def decision_function(self, K_rows: np.ndarray) -> np.ndarray:
        """``f`` on rows given by their kernel against the training rows, shape (m, n_train)."""
        return np.asarray(K_rows) @ self.coef + self.bias


def fit_precomputed_svm(K: np.ndarray, y: np.ndarray, C: float, *, fit_intercept: bool = True,
                        tol: float = 1e-6, max_iter: int = -1,
                        alpha0: np.ndarray | None = None) -> PrecomputedSVM:
    """Train a binary SVM on a precomputed PSD kernel (eqs. 2.3-2.5 of the thesis).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Symmetric PSD Gram matrix of the training rows.
    y : ndarray of shape (n,)
        Labels ``+1/-1`` (both present when ``fit_intercept``).
    C : float
        Hinge-loss weight (``> 0``).
    fit_intercept : bool
        Free bias (libsvm's problem) or none.
    tol : float
        libsvm's KKT tolerance (tight by default, so routes agree to several digits).
    max_iter : int
        SMO iteration limit (``-1``: none).
    alpha0 : ndarray of shape (n,), optional
        Warm start: feasible dual variables (``0 <= alpha0 <= C``, ``y^T alpha0 = 0``), e.g.
        the ``beta`` of a fit on a neighbouring kernel; needs ``fit_intercept``.

    Returns
    -------
    PrecomputedSVM
    """
    y = np.asarray(y, dtype=np.float64)
    res = svm_dual_precomputed(np.asarray(K, dtype=np.float64), y, C, tol=tol,
                               alpha0=alpha0, max_iter=max_iter,
                               fit_intercept=fit_intercept)
    return PrecomputedSVM(coef=y * res.beta, bias=float(res.bias), beta=res.beta,
                          objective=res.objective, n_iter=res.n_iter)
