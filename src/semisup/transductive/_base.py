"""Shared plumbing of the binary transductive estimators: one-vs-rest, validation, kernels.

:class:`OneVsRestMixin` is the one one-vs-rest mechanism of the estimators that solve a
binary problem as a whole (the thesis methods here and in :mod:`semisup.weak`); the linear
family has its own loop over binary problems inside one fit
(:class:`semisup.linear._base.LinearSemiSupervisedClassifier`) and shares its per-class
``positive_fraction`` rule (:func:`semisup.linear._base.class_fractions`) with this one.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from semisup._logging import get_logger, progress
from semisup._validation import (
    CollapseWarning,
    check_finite,
    check_int,
    check_positive,
    check_real,
    check_semi_supervised,
    check_X,
    warn_if_collapsed,
)
from semisup.base import SemiSupervisedClassifierMixin
from semisup.kernels import default_gamma, kernel_matrix

#: Rank of the truncated kernel factor of the relaxations beyond two classes (one problem
#: per class on one factor: ConvexTSVM's spectral route, SDPRelaxedTSVM's leading
#: eigenpairs), and ConvexTSVM's ``n_components='auto'`` with ``solver='spectral'``
#: (``benchmarks/results/ctsvm_multiclass.md``, ``rtsvm_multiclass.md``).
SPECTRAL_RANK = 300

logger = get_logger(__name__)


class OneVsRestMixin:
    """One-vs-rest for an estimator whose ``fit`` solves one binary problem.

    With more than two labeled classes, ``fit`` calls :meth:`_fit_one_vs_rest` right after
    validating ``(X, y)``: one clone of the estimator per class ``k`` is fitted on
    ``y_k = 1`` for the labeled rows of class ``k``, ``0`` for the other labeled rows and
    ``-1`` for every unlabeled row (so each binary problem keeps all unlabeled rows
    unlabeled, and its balance or positive fraction comes from its own labeled rows, i.e.
    the labeled prior of class ``k``; a per-class ``positive_fraction`` array gives
    ``positive_fraction[k]`` instead).  ``decision_function`` has one column per class
    (the binary problems' scores) and ``predict`` / ``transduction_`` take the argmax.
    Collapse is judged once, on the multi-class labels (a binary problem that puts every
    unlabeled row in "rest" is not a collapse by itself).

    Subclasses may override :meth:`_binary_training_scores` (the binary estimator's own
    scores of its training rows, e.g. a relaxation's transduced values) and
    :meth:`_combine_one_vs_rest` (fitted attributes built from the binary estimators).

    Attributes set by a multi-class fit: ``estimators_`` (one binary estimator per class,
    positive class ``1``), ``classes_``, ``transduction_``.
    """

    def _fit_one_vs_rest(self, data, fit_params: dict | None = None,
                         shared: dict | None = None) -> bool:
        """Fit one binary clone per class when ``data`` has more than two; ``True`` if done.

        ``shared``: private attributes set on every clone before its fit (what the binary
        problems have in common, e.g. a kernel factor computed once)."""
        self.__dict__.pop("estimators_", None)
        classes = data.classes
        if classes.size <= 2:
            return False
        fractions = self._one_vs_rest_fractions(classes)
        n = data.X.shape[0]
        estimators = []
        name = type(self).__name__
        with progress(classes.size, f"{name} one-vs-rest", getattr(self, "verbose", 0),
                      "class") as bar:
            for k in range(classes.size):
                logger.info("%s: class %r vs rest", name, classes[k])
                y_k = np.full(n, -1, dtype=np.int64)
                y_k[data.labeled] = (data.y_index == k).astype(np.int64)
                est = clone(self)
                est.__dict__.update(shared or {})
                if "fallback" in est.get_params(deep=False):
                    # the guard judges the multi-class fit: the binary ones are as published
                    est.set_params(fallback="none")
                if fractions is not None:
                    est.set_params(positive_fraction=float(fractions[k]))
                with warnings.catch_warnings():
                    # collapse is judged on the multi-class labels below
                    warnings.filterwarnings("ignore", message=".*collapsed to one class",
                                            category=CollapseWarning)
                    est.fit(data.X, y_k, **(fit_params or {}))
                estimators.append(est)
                bar.update()
        self.estimators_ = estimators
        self.classes_ = classes
        if all(hasattr(e, "n_iter_") for e in estimators):
            self.n_iter_ = np.array([np.max(e.n_iter_) for e in estimators])
        else:
            self.__dict__.pop("n_iter_", None)
        scores = np.column_stack([self._binary_training_scores(e, data.X) for e in estimators])
        transduction = np.empty(n, dtype=classes.dtype)
        transduction[data.labeled] = classes[data.y_index]
        transduction[data.unlabeled] = classes[np.argmax(scores[data.unlabeled], axis=1)]
        self.transduction_ = transduction
        self._combine_one_vs_rest(estimators, data)
        warn_if_collapsed(self, transduction[data.unlabeled], classes.size)
        return True

    def _one_vs_rest_fractions(self, classes):
        value = self.get_params().get("positive_fraction")
        if value is None or np.ndim(value) == 0:
            return None
        from semisup.linear._base import class_fractions

        return class_fractions(value, classes)

    @staticmethod
    def _binary_training_scores(estimator, X) -> np.ndarray:
        """Scores of a fitted binary estimator on its training rows ``X``."""
        return np.asarray(estimator.decision_function(X), dtype=np.float64)

    def _combine_one_vs_rest(self, estimators: list, data) -> None:
        """Hook: fitted attributes of the multi-class estimator from the binary ones."""

    def _is_one_vs_rest(self) -> bool:
        return self.__dict__.get("estimators_") is not None

    def _one_vs_rest_decision(self, X) -> np.ndarray:
        """``(n, n_classes)`` scores: each binary estimator's ``decision_function``."""
        X = check_X(X, estimator=self, reset=False)
        return np.column_stack([e.decision_function(X) for e in self.estimators_])


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


class KernelTransductiveBase(OneVsRestMixin, SemiSupervisedClassifierMixin, ClassifierMixin,
                             BaseEstimator):
    """Kernel estimator that learns from labeled (``y != -1``) and unlabeled rows.

    Binary at heart; more than two classes one-vs-rest (:class:`OneVsRestMixin`).
    """

    def _check_kernel_params(self) -> None:
        """Validate the kernel hyper-parameters shared by every subclass (before any work)."""
        check_real(self.gamma, "gamma", positive=True, allow_none=True)
        check_int(self.degree, "degree")
        check_finite(self.coef0, "coef0")

    def _check_common(self, X, y):
        self._check_kernel_params()
        # no unlabeled row: warn and fit the supervised limit (as TransductiveSVM does), so
        # the estimator stays usable in scikit-learn's tools (CV on labeled rows, checks)
        return check_semi_supervised(X, y, accept_sparse=self.kernel != "precomputed",
                                     require_unlabeled=True, estimator=self)

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
        X = check_X(X, estimator=self, reset=False)
        if X.shape[1] != self.X_fit_.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} was "
                             f"fitted with {self.X_fit_.shape[1]}")
        return kernel_matrix(X, self.X_fit_, kernel=self.kernel, gamma=self.gamma_,
                             degree=self.degree, coef0=self.coef0)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # the kernel of sparse rows is computed from them directly; a precomputed kernel is
        # a square dense matrix between rows
        tags.input_tags.sparse = self.kernel != "precomputed"
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def predict(self, X) -> np.ndarray:
        """Predict class labels of new rows (out of sample).

        By the rule of ``decision_function``: its sign for two classes, the arg max of its
        columns beyond two classes.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        f = self.decision_function(X)
        if f.ndim == 2:
            return self.classes_[np.argmax(f, axis=1)]
        return self.classes_[(f > 0).astype(int)]

