"""Shared skeleton of LapRLS and LapSVM: validate, build ``K`` and ``L``, choose ``gamma_I="auto"``
by labeled-only CV, predict (eq. 7)."""

from __future__ import annotations

import warnings
from abc import ABCMeta, abstractmethod

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from semisup._logging import convergence_check, verbosity
from semisup._validation import SemiSupervisedData, check_semi_supervised
from semisup.base import SemiSupervisedClassifierMixin, SupervisedFallbackMixin
from semisup.calibration import ProbabilityMixin
from semisup.manifold._rkhs import KernelGraphMixin, _check_int, _check_real
from semisup.model_selection import check_positive_or_auto, is_auto, select_parameter


class ManifoldClassifier(SemiSupervisedClassifierMixin, ProbabilityMixin, KernelGraphMixin,
                         ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """Base class of the manifold-regularised kernel classifiers.

    A fitted estimator holds the expansion ``f_k(x) = sum_i alpha_ik K(x_i, x) + b_k``
    (eq. 7) over all ``l + u`` training rows: ``alpha_`` of shape ``(n_train, n_outputs)``
    and ``intercept_`` of shape ``(n_outputs,)``, one output for two classes (positive
    class ``classes_[1]``), one per class otherwise.
    """

    #: the fixed ``gamma_I`` used by ``gamma_I="auto"`` when no CV is possible (a class with
    #: a single labeled row)
    _default_gamma_I = 1e4

    def fit(self, X, y):
        """Fit on labeled and unlabeled rows (``y == -1`` marks unlabeled rows).

        With ``gamma_I="auto"`` the value is first chosen by transductive labeled-only CV
        (see the ``gamma_I`` parameter), then the model is refitted at it.

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
        check_positive_or_auto(self.gamma_I, "gamma_I", allow_zero=True)
        if not is_auto(self.gamma_I):
            self.__dict__.pop("gamma_I_", None)
            self.__dict__.pop("cv_results_", None)
            return self._fit_at_gamma_I(X, y)
        sel = self._select_gamma_I(X, y)
        try:
            self.gamma_I = sel.best
            self._fit_at_gamma_I(X, y)
        finally:
            self.gamma_I = "auto"
        self.gamma_I_ = sel.best
        self.cv_results_ = sel.cv_results
        return self

    def _fit_at_gamma_I(self, X, y):
        """One fit at the numeric ``gamma_I`` (and the probability model when asked)."""
        self._check_probability()
        with verbosity(self.verbose), convergence_check(self, {"pcg": "max_iter",
                                                               "smo": "max_iter"}):
            self._fit(X, y)
            self._fit_probability(X, y)
        return self

    def _select_gamma_I(self, X, y):
        """``gamma_I`` by :func:`semisup.model_selection.select_parameter`, each value
        scored on every fold from one factorisation (:meth:`_held_out_scores`).

        Candidates: :func:`semisup.linear.laplacian.gamma_I_grid` (the mean eigenvalue of
        ``gamma_I s L K`` at ``10^k gamma_A``, ``k = 4..-2``) and 0, the supervised kernel
        machine on the labeled rows.  The kernel and the graph depend on ``X`` alone, so
        they are built once for every value and fold.
        """
        from sklearn.exceptions import ConvergenceWarning

        from semisup.graph import GraphWarning
        from semisup.linear.laplacian import gamma_I_grid

        _check_real(self.gamma_A, "gamma_A", positive=True)
        probe = self._probe_at(0.0)
        probe._check_kernel_graph_params()
        data = check_semi_supervised(X, y, accept_sparse=self.kernel != "precomputed",
                                     require_unlabeled=True, estimator=probe)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", GraphWarning)   # the refit says it once
            W, _, _ = probe._graph_laplacian(data.X)
            probe.set_params(graph=W)
            data, K, L, scale = probe._setup(X, y)
        n = K.shape[0]
        fixed = probe._probe_at(0.0).set_params(kernel="precomputed")
        trace = float(L.multiply(K).sum()) if hasattr(L, "multiply") else float(np.sum(L * K))
        values = gamma_I_grid(trace, n, float(self.gamma_A), scale)
        codes = data.codes(np.intp)
        position = np.empty(n, dtype=np.intp)
        position[data.labeled] = np.arange(data.labeled.size)

        def held_out(value, folds):
            est = fixed._probe_at(float(value))
            with warnings.catch_warnings():
                # said once by the graph build above and once by the refit; a fold is one
                # estimate among many, and the refit reports its own convergence
                warnings.simplefilter("ignore", GraphWarning)
                warnings.simplefilter("ignore", ConvergenceWarning)
                scores = est._held_out_scores(K, codes,
                                              [(position[tr], te) for tr, te in folds])
            labels = [np.asarray(s).reshape(n, -1) for s in scores]
            return [est._labels_from_scores(s)[te] for s, (_, te) in zip(labels, folds,
                                                                          strict=True)]

        return select_parameter(self, data.X, codes, "gamma_I", [float(v) for v in values],
                                default=self._default_gamma_I, random_state=self.random_state,
                                held_out=held_out)

    def _probe_at(self, gamma_I: float):
        from sklearn.base import clone

        return clone(self).set_params(gamma_I=gamma_I, verbose=0, probability=False)

    @abstractmethod
    def _held_out_scores(self, X, y, folds) -> list[np.ndarray]:
        """Per fold ``(train, test)`` (positions into the labeled rows), the
        ``training_scores_`` of a refit with the labels of ``test`` hidden."""

    def _auto_held_out_scores(self, X, y, folds) -> list[np.ndarray]:
        """:meth:`_held_out_scores` with ``gamma_I="auto"``: what a refit does, i.e. each
        fold chooses ``gamma_I`` by the same labeled-only CV over its own labeled rows
        (nested CV, about one automatic fit per fold), then is scored at that value."""
        data = check_semi_supervised(X, y, accept_sparse=self.kernel != "precomputed",
                                     require_unlabeled=True, estimator=self)
        y = np.asarray(y)
        out = []
        for train, test in folds:
            y_fold = y.copy()
            y_fold[data.labeled[np.asarray(test)]] = -1
            best = self._select_gamma_I(X, y_fold).best
            out.extend(self._probe_at(best)._held_out_scores(X, y, [(train, test)]))
        return out

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


class GuardedManifoldClassifier(SupervisedFallbackMixin, ManifoldClassifier):
    """A manifold classifier with the guard of :mod:`semisup.safety` (``fallback="cv"``,
    counterpart ``SVC()``)."""

    def fit(self, X, y):
        """Fit on labeled and unlabeled rows (``y == -1`` marks unlabeled rows).

        With ``fallback="cv"`` (the default) the guard of :mod:`semisup.safety` first
        compares the method (``gamma_I="auto"`` included: each fold chooses its own value)
        with ``SVC()`` by labeled-only CV; with ``gamma_I="auto"`` the value is then chosen
        by transductive labeled-only CV (see the ``gamma_I`` parameter) and the model
        refitted at it.

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
        return self._fit_guarded(X, y)

    def _fit_plain(self, X, y) -> None:
        """The method as published (``fallback="none"``)."""
        ManifoldClassifier.fit(self, X, y)

    def _guard_applies(self, X) -> bool:
        # a precomputed kernel is no feature matrix for SVC(); a given graph is the
        # user's modelling choice, fitted as published
        return super()._guard_applies(X) and isinstance(self.graph, str)
