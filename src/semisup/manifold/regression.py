"""Laplacian Regularized Least Squares for real-valued targets (Belkin, Niyogi & Sindhwani).

The squared loss of eq. 6 needs no class coding: eq. 8 with the real targets of the labeled
rows in place of the ``+1/-1`` columns is the semi-supervised regressor.  It shares every
piece of :class:`semisup.manifold.LapRLS` (the kernel and graph of
:class:`~semisup.manifold._rkhs.KernelGraphMixin`, the reduction to the deformed labeled
Gram matrix and its kernel ridge solve), so the two give the same ``f`` on the same targets.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from semisup._logging import get_logger, verbosity
from semisup._validation import check_semi_supervised_regression
from semisup.base import SemiSupervisedRegressorMixin
from semisup.manifold._rkhs import (
    KernelGraphMixin,
    _check_int,
    _check_real,
    deformation_columns,
    deformed_gram,
    kernel_graph_params,
    laplacian_objective,
)
from semisup.manifold.laprls import laprls_coefficients

logger = get_logger(__name__)


class LapRLSRegressor(SemiSupervisedRegressorMixin, KernelGraphMixin, RegressorMixin,
                      BaseEstimator):
    """Laplacian RLS regressor: manifold-regularised kernel ridge regression (eq. 8).

    Minimises eq. 6 with the squared loss over ``f(x) = sum_i alpha_i K(x_i, x)`` (+ ``b``
    with ``fit_intercept=True``), ``i`` running over labeled *and* unlabeled rows,

        (1/l) sum_labeled (y_i - f(x_i))^2 + gamma_A ||f||_K^2 + gamma_I s f^T L f,

    whose minimiser is eq. 8, ``alpha = (J K + gamma_A l I + gamma_I l s L K)^-1 Y`` with
    ``Y`` the real targets (zeros on the unlabeled rows) and ``s = 1/(l+u)^2`` by default.
    Solved as :class:`semisup.manifold.LapRLS` (one LU factorisation of ``I + r L K``,
    ``r = gamma_I s / gamma_A``, then a Cholesky solve of size ``l``); ``gamma_I = 0`` is
    kernel ridge regression on the labeled rows (``sklearn.kernel_ridge.KernelRidge`` with
    ``alpha = gamma_A l``).

    **Unlabeled rows** are the rows whose target is *missing*: NaN (the natural missing
    value of a real target), ``None`` or ``pd.NA``.  ``-1`` is an ordinary target.

    The default graph is the paper's unnormalised ``L = D - W`` (not the classifier's
    normalised one): its null space holds the functions constant on each connected
    component, so the graph term never pulls a real target towards 0, while
    ``I - D^-1/2 W D^-1/2`` penalises constants: on two arcs with one labeled row each
    (the case of ``tests/test_regression.py``) its mean absolute error was 1.2 to 250
    times the unnormalised graph's over nine ``(gamma_I, gamma)`` settings.

    Parameters
    ----------
    gamma_A : float, default=1e-2
        Weight of the ambient RKHS norm ``||f||_K^2`` (``> 0``).  Larger than the
        classifier's 1e-4: real targets are noisier than ``+1/-1`` codes, and 1e-4 nearly
        interpolates the labeled rows (on the diabetes benchmark,
        ``benchmarks/results/regression.md``, 1e-2 had the lower RMSE at 10, 30 and 100
        labeled rows).
    gamma_I : float, default=100
        Weight of the intrinsic (graph) norm ``s f^T L f`` (``>= 0``); what matters is
        ``r = gamma_I s / gamma_A`` (the defaults give ``r = 1e4 / n^2``).  The
        classifier's 1e4 oversmoothed real targets on that benchmark.
    fit_intercept : bool, default=True
        Add an unpenalised bias ``b`` (left out of the graph term).  Unlike the classifier,
        on by default: real targets rarely have mean zero.
{kernel_graph_params}
    random_state : int, optional
        Seed of the approximate neighbour search.
    verbose : int, default=0
        Log progress to the ``semisup`` logger (1: INFO, 2: DEBUG).

    Attributes
    ----------
    alpha_ : ndarray of shape (n_train,)
        Expansion coefficients over the training rows (eq. 7).
    intercept_ : float
        Bias (0 without ``fit_intercept``).
    transduction_ : ndarray of shape (n_train,)
        The fitted values ``f(x_i)`` at *every* training row, labeled rows included (they
        are not replaced by the given targets).
    objective_ : float
        Value of the objective above at the solution.
    gamma_ : float or None
        Kernel width used.
    X_fit_ : ndarray or sparse matrix
        Training rows (kept for the out-of-sample extension; ``None`` when precomputed).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.manifold.regression import LapRLSRegressor
    >>> t = np.linspace(0, 3, 60)
    >>> X = np.column_stack([np.cos(t), np.sin(t)])
    >>> y = np.full(60, np.nan)
    >>> y[[0, 30, 59]] = t[[0, 30, 59]]     # three labeled rows
    >>> reg = LapRLSRegressor(gamma_A=1e-4, gamma_I=1.0, gamma=1.0).fit(X, y)
    >>> reg.transduction_.shape
    (60,)
    >>> bool(np.abs(reg.predict(X[[15]]) - t[15]) < 0.3)
    True
    """

    def __init__(self, gamma_A: float = 1e-2, gamma_I: float = 100.0, fit_intercept: bool = True,
                 kernel: str = "rbf", gamma: float | None = None, degree: int = 3,
                 coef0: float = 1.0, graph="knn", n_neighbors: int = 6,
                 graph_weight: str = "heat", t: float | None = None,
                 graph_metric: str = "euclidean", graph_method: str = "auto",
                 laplacian: str = "unnormalized", laplacian_power: int = 1,
                 graph_scale: str = "n2", random_state: int | None = None, verbose: int = 0):
        self.fit_intercept = fit_intercept
        self._set_kernel_graph_params(
            gamma_A=gamma_A, gamma_I=gamma_I, kernel=kernel, gamma=gamma, degree=degree,
            coef0=coef0, graph=graph, n_neighbors=n_neighbors, graph_weight=graph_weight, t=t,
            graph_metric=graph_metric, graph_method=graph_method, laplacian=laplacian,
            laplacian_power=laplacian_power, graph_scale=graph_scale, random_state=random_state)
        self.verbose = verbose

    def fit(self, X, y):
        """Fit on labeled and unlabeled rows (NaN / None / ``pd.NA`` in ``y``: unlabeled).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Or the ``(n, n)`` Gram matrix with ``kernel='precomputed'``.
        y : array-like of shape (n_samples,)
            Real targets; NaN (or None / ``pd.NA``) marks an unlabeled row.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        data = check_semi_supervised_regression(X, y, accept_sparse=self.kernel != "precomputed",
                                                estimator=self)
        _check_real(self.gamma_A, "gamma_A", positive=True)
        _check_real(self.gamma_I, "gamma_I", positive=False)
        _check_int(self.verbose, "verbose", low=0)
        self._check_kernel_graph_params()
        with verbosity(self.verbose):
            K, L, scale = self._fit_kernel_graph(data.X)
            lab = data.labeled
            l = lab.size
            gamma_I_s = float(self.gamma_I) * scale
            ratio = gamma_I_s / float(self.gamma_A)
            logger.info("LapRLSRegressor n=%d l=%d ratio gamma_I s / gamma_A=%.4g",
                        K.shape[0], l, ratio)
            Z = deformation_columns(K, L, ratio, lab)
            G = deformed_gram(K, Z, lab)
            c, b = laprls_coefficients(G, data.y[lab, None], float(self.gamma_A) * l,
                                       bool(self.fit_intercept))
        alpha = (Z @ c)[:, 0]
        K_alpha = K @ alpha
        self.alpha_ = alpha
        self.intercept_ = float(b[0])
        self.transduction_ = K_alpha + self.intercept_
        self.objective_ = laplacian_objective(self.transduction_[lab], data.y[lab], alpha,
                                              K_alpha, L, float(self.gamma_A), gamma_I_s,
                                              "squared")
        return self

    def predict(self, X) -> np.ndarray:
        """``f(x) = sum_i alpha_i K(x_i, x) + b`` (eq. 7) for new rows.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, n_features)
            With ``kernel='precomputed'``: the ``(n, n_train)`` kernel between the new rows
            and the training rows.

        Returns
        -------
        ndarray of shape (n,)
            Predicted targets.
        """
        check_is_fitted(self, "alpha_")
        return self._validated_test_gram(X) @ self.alpha_ + self.intercept_

    def __sklearn_tags__(self):
        return self._adjust_tags(super().__sklearn_tags__())


LapRLSRegressor.__doc__ = LapRLSRegressor.__doc__.replace("{kernel_graph_params}",
                                                          kernel_graph_params("unnormalized"))
