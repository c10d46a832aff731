"""Shared plumbing of the kernel transductive estimators: validation, binary targets, kernels."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from semisup._validation import (
    check_finite,
    check_int,
    check_positive,
    check_real,
    check_semi_supervised,
    check_X,
)
from semisup.base import SemiSupervisedClassifierMixin
from semisup.kernels import default_gamma, kernel_matrix


def centre_kernel(K: np.ndarray):
    """Double-centre a kernel (``H K H``); return it with the row means and grand mean."""
    row_mean = K.mean(axis=1)
    grand = float(row_mean.mean())
    # in place: one n x n temporary at a time (n = 8,000 is 512 MB per copy)
    Kc = K - row_mean[:, None]
    Kc -= row_mean[None, :]
    Kc += grand
    np.add(Kc, Kc.T, out=Kc)
    Kc *= 0.5
    return Kc, row_mean, grand


def check_psd_kernel(K: np.ndarray, name: str = "X") -> None:
    """Reject a precomputed kernel that is not square, symmetric and PSD (clear message)."""
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"with kernel='precomputed', {name} must be a square kernel matrix, "
                         f"got shape {K.shape}")
    scale = max(1.0, float(np.abs(np.diag(K)).max()))
    if not np.allclose(K, K.T, atol=1e-8 * scale):
        raise ValueError(f"with kernel='precomputed', {name} must be symmetric; symmetrise it "
                         "with (K + K.T) / 2")
    low = float(np.linalg.eigvalsh(K)[0])
    if low < -1e-8 * scale * K.shape[0]:
        raise ValueError(f"with kernel='precomputed', {name} must be positive semi-definite; its "
                         f"smallest eigenvalue is {low:.3g}: clip the negative eigenvalues or "
                         "add a multiple of the identity")


class KernelTransductiveBase(SemiSupervisedClassifierMixin, ClassifierMixin, BaseEstimator):
    """Binary kernel estimator that learns from labeled (``y != -1``) and unlabeled rows."""

    def _check_kernel_params(self) -> None:
        """Validate the kernel hyper-parameters shared by every subclass (before any work)."""
        check_real(self.gamma, "gamma", positive=True, allow_none=True)
        check_int(self.degree, "degree")
        check_finite(self.coef0, "coef0")

    def _check_common(self, X, y):
        self._check_kernel_params()
        data = check_semi_supervised(X, y, accept_sparse=self.kernel != "precomputed",
                                     estimator=self)
        if data.classes.size != 2:
            raise ValueError(f"{type(self).__name__} is a binary classifier; y has "
                             f"{data.classes.size} classes among its labeled rows: "
                             "train one estimator per pair of classes")
        if data.unlabeled.size == 0:
            raise ValueError(f"{type(self).__name__} is transductive and y has no unlabeled "
                             "rows (no -1 entries): mark the rows to transduce with -1, or use "
                             "a supervised SVM")
        for cls in (0, 1):
            if not np.any(data.y_index == cls):
                raise ValueError("each class needs at least one labeled row")
        return data

    def _kernel_params(self, X):
        if self.kernel == "precomputed":
            return None
        if self.kernel in ("rbf", "poly"):
            if self.gamma is None:
                return default_gamma(X)
            return check_positive(self.gamma, "gamma")
        return None

    def _train_kernel(self, X):
        if self.kernel == "precomputed":
            K = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
            check_psd_kernel(K)
            return 0.5 * (K + K.T)
        return kernel_matrix(X, kernel=self.kernel, gamma=self.gamma_, degree=self.degree,
                             coef0=self.coef0)

    def _test_kernel(self, X):
        check_is_fitted(self, "classes_")
        if self.kernel == "precomputed":
            K = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
            if K.ndim != 2 or K.shape[1] != self.n_train_:
                raise ValueError("with kernel='precomputed', X must hold the kernel between "
                                 f"the rows to predict and the {self.n_train_} training rows, "
                                 f"got shape {K.shape}")
            return K
        X = check_X(X, estimator=self)
        if X.shape[1] != self.X_fit_.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} was "
                             f"fitted with {self.X_fit_.shape[1]}")
        return kernel_matrix(X, self.X_fit_, kernel=self.kernel, gamma=self.gamma_,
                             degree=self.degree, coef0=self.coef0)

    def predict(self, X) -> np.ndarray:
        """Class labels (out of sample, by the rule of ``decision_function``)."""
        f = self.decision_function(X)
        return self.classes_[(f > 0).astype(int)]

    def _more_tags(self):
        return {"binary_only": True}

