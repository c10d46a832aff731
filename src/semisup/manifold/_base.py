"""Shared skeleton of LapRLS and LapSVM: validate, build ``K`` and ``L``, predict (eq. 7)."""

from __future__ import annotations

from abc import ABCMeta, abstractmethod

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from semisup._logging import convergence_check, verbosity
from semisup._validation import SemiSupervisedData, check_semi_supervised
from semisup.base import SemiSupervisedClassifierMixin
from semisup.calibration import ProbabilityMixin
from semisup.manifold._rkhs import KernelGraphMixin, _check_int, _check_real


class ManifoldClassifier(SemiSupervisedClassifierMixin, ProbabilityMixin, KernelGraphMixin,
                         ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """Base class of the manifold-regularised kernel classifiers.

    A fitted estimator holds the expansion ``f_k(x) = sum_i alpha_ik K(x_i, x) + b_k``
    (eq. 7) over all ``l + u`` training rows: ``alpha_`` of shape ``(n_train, n_outputs)``
    and ``intercept_`` of shape ``(n_outputs,)``, one output for two classes (positive
    class ``classes_[1]``), one per class otherwise.
    """

    def fit(self, X, y):
        """Fit on labeled and unlabeled rows (``y == -1`` marks unlabeled rows).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Or the ``(n, n)`` Gram matrix with ``kernel='precomputed'``.
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for unlabeled rows.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        self._check_probability()
        with verbosity(self.verbose), convergence_check(self, {"pcg": "max_iter",
                                                               "smo": "max_iter"}):
            self._fit(X, y)
            self._fit_probability(X, y)
        return self

    @abstractmethod
    def _fit(self, X, y):
        """Solve the method's problem (eq. 8 for LapRLS, eqs. 9-11 for LapSVM); return self."""

    def _check_regularization(self) -> None:
        _check_real(self.gamma_A, "gamma_A", positive=True)
        _check_real(self.gamma_I, "gamma_I", positive=False)
        _check_int(self.verbose, "verbose", low=0)

    def _setup(self, X, y) -> tuple[SemiSupervisedData, np.ndarray, object, float]:
        """Validate; return the split data, ``K``, ``L`` and the graph scale ``s``."""
        data = check_semi_supervised(X, y, accept_sparse=self.kernel != "precomputed",
                                     require_unlabeled=True, estimator=self)
        self._check_regularization()
        self._check_kernel_graph_params()
        K, L, scale = self._fit_kernel_graph(data.X)
        self.classes_ = data.classes
        return data, K, L, scale

    @staticmethod
    def _binary_targets(data: SemiSupervisedData) -> list[np.ndarray]:
        """``+1/-1`` targets of the labeled rows: one vector (2 classes) or one per class."""
        n_classes = data.classes.size
        positives = [1] if n_classes == 2 else list(range(n_classes))
        return [data.binary_targets(k) for k in positives]

    def _store(self, data: SemiSupervisedData, alpha: np.ndarray, intercept: np.ndarray,
               K_alpha: np.ndarray) -> None:
        """Set ``alpha_``, ``intercept_`` and ``transduction_`` (from ``K alpha + b``)."""
        self.alpha_ = np.asarray(alpha, dtype=np.float64).reshape(self.n_train_, -1)
        self.intercept_ = np.asarray(intercept, dtype=np.float64).ravel()
        scores = np.asarray(K_alpha).reshape(self.n_train_, -1) + self.intercept_
        transduction = self._labels_from_scores(scores)
        transduction[data.labeled] = data.classes[data.y_index]
        self.transduction_ = transduction
        self.training_scores_ = scores[:, 0] if scores.shape[1] == 1 else scores

    def _labels_from_scores(self, scores: np.ndarray) -> np.ndarray:
        if scores.shape[1] == 1:
            return self.classes_[(scores[:, 0] > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

    def decision_function(self, X) -> np.ndarray:
        """``f(x) = sum_i alpha_i K(x_i, x) + b`` (eq. 7) for new rows.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, n_features)
            With ``kernel='precomputed'``: the ``(n, n_train)`` kernel between the new rows
            and the training rows.

        Returns
        -------
        ndarray of shape (n,) or (n, n_classes)
            ``f`` of each row: one column for two classes (positive: ``classes_[1]``), else
            one column per class.
        """
        check_is_fitted(self, "alpha_")
        scores = self._validated_test_gram(X) @ self.alpha_ + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X) -> np.ndarray:
        """Class labels of new rows (sign of ``f`` for two classes, else arg max).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        scores = self.decision_function(X)
        return self._labels_from_scores(scores.reshape(scores.shape[0], -1))

    def __sklearn_tags__(self):
        return self._adjust_tags(super().__sklearn_tags__())
