"""Behaviour shared by every semisup classifier, whatever its solver."""

from __future__ import annotations

import functools
import threading

import numpy as np
from sklearn.metrics import accuracy_score
from sklearn.utils.metaestimators import available_if

from semisup._validation import unlabeled_mask
from semisup.safety import check_fallback, decision_values, guard, hide_rows


def labeled_rows(y, sample_weight=None):
    """Boolean mask of the rows of ``y`` that carry a label (``y != -1``) and their weights.

    Raises
    ------
    ValueError
        When ``y`` has no labeled row, so there is nothing to score.
    """
    y = np.asarray(y)
    keep = ~unlabeled_mask(y)
    if not keep.any():
        raise ValueError("y has no labeled rows to score (every entry is -1): score on rows "
                         "with known labels, e.g. the test folds of "
                         "semisup.model_selection.LabeledStratifiedKFold")
    weights = None if sample_weight is None else np.asarray(sample_weight)[keep]
    return keep, weights


_FIT_STATE = threading.local()


def fit_thread_policy(fit):
    """``fit`` under the library's thread policy for busy machines (one decision per fit).

    When another process's thread is runnable as the outermost fit starts
    (:func:`~semisup.solvers._kernels.machine_busy`), BLAS runs on one thread for the whole
    fit, nested fits included (one-vs-rest problems, the guard's folds, the automatic
    classifier's candidates); otherwise BLAS keeps its team.  On a machine whose cores are
    taken a thread team waits for time slices and its spinning threads take CPU from the
    others.  Every default classifier on satimage with 2 labels per class, 4 competing
    processes on 2 cores, single runs (``benchmarks/results/bench_fit_threads.md``): over the
    fits of more than half a second, this policy took a median 0.74x the team's wall time
    (0.19-1.35x; the one above 1.1, LinearLapSVM at 0.7 -> 0.95 s, was as slow with one
    thread forced); MixtureSSL 12.3 -> 2.9 s, CoTraining 7.1 -> 1.3 s, ConvexTSVM 45 -> 35
    s.  Idle: a median 1.01x (0.85-1.08x; the policy keeps the team).
    The linear family and S4VM keep one thread on narrow dense designs whatever the load
    (:func:`semisup.linear._core.solver_threads`), and so do the self-, co- and
    tri-training wrappers, the automatic classifier, MixtureSSL and SelfTaughtClassifier
    (:func:`semisup.solvers._kernels.narrow_data_threads`).
    """

    @functools.wraps(fit)
    def fit_with_policy(self, *args, **kwargs):
        if getattr(_FIT_STATE, "inside", False):
            return fit(self, *args, **kwargs)
        from semisup.solvers._kernels import busy_machine_threads

        _FIT_STATE.inside = True
        try:
            with busy_machine_threads():
                return fit(self, *args, **kwargs)
        finally:
            _FIT_STATE.inside = False

    fit_with_policy.thread_policy = True
    return fit_with_policy


class _ThreadPolicyFit:
    """Every subclass's ``fit`` (its own, or one inherited from a class outside this
    hierarchy, as the linear core's) runs under :func:`fit_thread_policy`."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        fit = getattr(cls, "fit", None)
        if fit is not None and not getattr(fit, "thread_policy", False):
            cls.fit = fit_thread_policy(fit)


class SemiSupervisedClassifierMixin(_ThreadPolicyFit):
    """Mixin for semisup classifiers: ``score`` ignores unlabeled (``y == -1``) rows.

    Its subclasses' ``fit`` runs under the library's thread policy (:func:`fit_thread_policy`).
    Place it before :class:`sklearn.base.ClassifierMixin` in the bases. scikit-learn's
    ``ClassifierMixin.score`` would count ``-1`` as a class that no model predicts, so a
    cross-validation fold holding unlabeled rows would report a fraction of the true
    accuracy.
    """

    def score(self, X, y, sample_weight=None) -> float:
        """Accuracy on the labeled rows of ``(X, y)``; rows with ``y == -1`` are ignored.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.
        y : array-like of shape (n_samples,)
            True labels, ``-1`` for rows whose label is unknown.
        sample_weight : array-like of shape (n_samples,), optional
            Per-row weights; ``None`` weighs every row 1.

        Returns
        -------
        float
            Mean accuracy of ``predict`` on the labeled rows.
        """
        keep, weights = labeled_rows(y, sample_weight)
        y = np.asarray(y)
        if keep.all():
            return float(accuracy_score(y, self.predict(X), sample_weight=weights))
        rows = np.flatnonzero(keep)
        X_rows = X.iloc[rows] if hasattr(X, "iloc") else X[rows]
        return float(accuracy_score(y[keep], self.predict(X_rows), sample_weight=weights))


class SemiSupervisedRegressorMixin(_ThreadPolicyFit):
    """Mixin for semisup regressors: ``score`` is R^2 on the rows whose target is known.

    Its subclasses' ``fit`` runs under the library's thread policy (:func:`fit_thread_policy`).

    Place it before :class:`sklearn.base.RegressorMixin` in the bases.  Unlabeled rows are
    the missing targets (NaN, ``None``, ``pd.NA``); ``-1`` is an ordinary real target.
    """

    def score(self, X, y, sample_weight=None) -> float:
        """R^2 of ``predict`` on the rows of ``(X, y)`` whose target is not missing.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.
        y : array-like of shape (n_samples,)
            True targets, NaN (or None / ``pd.NA``) for rows whose target is unknown.
        sample_weight : array-like of shape (n_samples,), optional
            Per-row weights; ``None`` weighs every row 1.

        Returns
        -------
        float
            R^2 on the rows with a known target.
        """
        from sklearn.metrics import r2_score

        from semisup._validation import regression_targets

        y = regression_targets(np.asarray(y).ravel())
        keep = ~np.isnan(y)
        if not keep.any():
            raise ValueError("y has no rows with a known target to score (every entry is "
                             "NaN / missing): score on rows whose targets are known")
        weights = None if sample_weight is None else np.asarray(sample_weight)[keep]
        if keep.all():
            return float(r2_score(y, self.predict(X), sample_weight=weights))
        rows = np.flatnonzero(keep)
        X_rows = X.iloc[rows] if hasattr(X, "iloc") else X[rows]
        return float(r2_score(y[keep], self.predict(X_rows), sample_weight=weights))


def _has_parent(method: str):
    """``available_if`` check: the estimator's own class (after the mixin) has ``method``."""
    return lambda self: hasattr(super(SupervisedFallbackMixin, self), method)


class SupervisedFallbackMixin:
    """``fallback="cv"``: the guard of :mod:`semisup.safety` around an estimator's own fit.

    Place it first in the bases.  The estimator defines ``_fit_plain(X, y)`` (its fit as
    published), a ``fit`` that returns ``self._fit_guarded(X, y)``, a ``fallback``
    parameter, and may override :meth:`_supervised_counterpart` (scikit-learn's ``SVC()``
    with ``break_ties=True``,
    the counterpart of the kernel and graph methods) and :meth:`_guard_applies`.  Under a
    fallback the estimator is its supervised counterpart: ``supervised_estimator_`` (fitted on
    the labeled rows, class indices ``0 .. n_classes - 1``) answers ``predict`` and
    ``decision_function``, and ``predict_proba`` (where the estimator has one) is its
    ``predict_proba``, or the logistic (two classes) or softmax of its decision values; the
    estimator's own fitted attributes are then absent.  Attributes: ``fallback_`` (bool),
    ``cv_scores_`` (see :func:`semisup.safety.guard`; ``None`` when no fold existed).
    """

    #: whether the guard folds around a class of a single labeled row
    #: (:func:`semisup.safety.guard_folds`); measured to help with a linear counterpart only
    _guard_keeps_singletons = False
    #: most unlabeled rows in a fold fit of the guard (``None``: all of them).  A method
    #: whose fit grows faster than linearly in ``n`` sets it; each fold then fits the
    #: labeled rows and this many unlabeled rows drawn once (seed ``random_state``), and
    #: scores every row out of sample as before
    _guard_max_unlabeled: int | None = None

    def _supervised_counterpart(self):
        """The unfitted supervised counterpart (fitted on the labeled rows only)."""
        from sklearn.svm import SVC

        # break_ties: predict agrees with the argmax of decision_function (predict_proba)
        return SVC(break_ties=True)

    def _guard_fold_params(self, X) -> dict:
        """Parameters of the guard's fold fits that differ from the estimator's (none by
        default): the folds only compare held-out accuracies, so a method may fit them to a
        looser tolerance where that was measured to give the same labels."""
        return {}

    def _guard_applies(self, X) -> bool:
        """Whether the guard can run on ``X`` (not, e.g., on a precomputed kernel)."""
        return getattr(self, "kernel", None) != "precomputed" and \
            not getattr(type(X), "_semisup_distributed", False)

    def _fit_guarded(self, X, y, fallback: str | None = None, **fit_params):
        """Fit with the guard (``fallback="cv"``) or as published (``"none"``); ``fallback``
        overrides the parameter of the same name (an estimator that resolves a value of its
        own, e.g. ``"auto"``, passes the result)."""
        from sklearn.base import clone

        from semisup._validation import check_semi_supervised

        fallback = check_fallback(self.fallback if fallback is None else fallback)
        for attr in ("cv_scores_", "supervised_estimator_"):
            self.__dict__.pop(attr, None)   # from an earlier fit
        self.fallback_ = False
        self.cv_scores_ = None
        if fallback == "none" or not self._guard_applies(X):
            self._fit_plain(X, y, **fit_params)
            return self
        data = check_semi_supervised(X, y, estimator=self)
        codes = data.codes()
        quiet = {"verbose": 0} if "verbose" in self.get_params(deep=False) else {}
        inner = clone(self).set_params(fallback="none", **quiet,
                                       **self._guard_fold_params(data.X))
        counterpart = self._supervised_counterpart()

        fit_rows = self._guard_fit_rows(data)
        X_fit = data.X if fit_rows is None else data.X[fit_rows]   # sliced once for all folds

        def fit_predict(which: str, train: np.ndarray, rows: np.ndarray):
            if which == "supervised":
                model = clone(counterpart).fit(data.X[train], codes[train])
            else:
                hidden = hide_rows(codes, train)
                model = inner.fit(X_fit, hidden if fit_rows is None else hidden[fit_rows],
                                  **fit_params)
            X_rows = data.X[rows]
            return model.predict(X_rows), decision_values(model, X_rows, proba=True)

        result = guard(fit_predict, codes, getattr(self, "random_state", None),
                       type(self).__name__, keep_singletons=self._guard_keeps_singletons)
        if result is None or result["keep"]:
            self._fit_plain(X, y, **fit_params)
            self.fallback_ = False
            self.cv_scores_ = result
            return self
        return self._use_counterpart(data, result)

    def _guard_fit_rows(self, data) -> np.ndarray | None:
        """The rows of the guard's semi-supervised fold fits: every labeled row and at most
        :attr:`_guard_max_unlabeled` unlabeled rows drawn once for all folds (``None``: every
        row)."""
        cap = self._guard_max_unlabeled
        if cap is None or data.unlabeled.size <= cap:
            return None
        seed = getattr(self, "random_state", None)
        rng = np.random.default_rng(seed if isinstance(seed, (int, np.integer)) else 0)
        keep = rng.choice(data.unlabeled, size=cap, replace=False)
        return np.sort(np.concatenate([data.labeled, keep]))

    def _use_counterpart(self, data, cv_scores=None):
        """Replace the fit by the supervised counterpart on the labeled rows of ``data``
        (``fallback_ = True``; the earlier fit's attributes are dropped)."""
        from sklearn.base import clone

        from semisup._validation import warn_if_collapsed

        codes = data.codes()
        labeled = data.labeled
        for attr in [a for a in vars(self) if a.endswith("_") and not a.startswith("_")
                     and a not in ("n_features_in_", "feature_names_in_")]:
            del self.__dict__[attr]    # an earlier fit's attributes describe another model
        self.supervised_estimator_ = clone(self._supervised_counterpart()).fit(
            data.X[labeled], codes[labeled])
        self.classes_ = data.classes
        self.fallback_ = True
        self.cv_scores_ = cv_scores
        transduction = codes.copy()
        if data.unlabeled.size:
            transduction[data.unlabeled] = self.supervised_estimator_.predict(
                data.X[data.unlabeled])
        self.transduction_ = data.classes[transduction]
        name = type(self.supervised_estimator_).__name__
        warn_if_collapsed(self, self.transduction_[data.unlabeled], data.classes.size, hint=(
            f"The estimator is its supervised counterpart, {name}() on the labeled rows "
            f"(fallback_=True), and that fit put them there ({name}() on a few labels can "
            "predict one class everywhere): label more rows, or pass fallback='none' for "
            f"the {type(self).__name__} fit as published"))
        return self

    def _fallback_answer(self, X, method: str):
        """Under a fallback, ``method`` (``"predict"`` or ``"decision_function"``) of the
        counterpart on ``X`` checked as the estimator checks new rows (feature names, width,
        values: the counterpart was fitted on an array); ``None`` otherwise.  Estimators that
        define their own ``predict`` / ``decision_function`` start them with it."""
        if not getattr(self, "fallback_", False):
            return None
        from semisup._validation import check_X

        out = getattr(self.supervised_estimator_, method)(check_X(X, estimator=self,
                                                                   reset=False))
        return self.classes_[out] if method == "predict" else out

    def predict(self, X):
        """Class labels of the rows of ``X`` (the supervised counterpart's under a fallback).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        out = self._fallback_answer(X, "predict")
        return super().predict(X) if out is None else out

    @available_if(_has_parent("decision_function"))
    def decision_function(self, X):
        """Decision values (the supervised counterpart's under a fallback).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Score of ``classes_[1]``, or one column per class.
        """
        out = self._fallback_answer(X, "decision_function")
        return super().decision_function(X) if out is None else out

    @available_if(_has_parent("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities (the supervised counterpart's under a fallback).

        Under a fallback: the counterpart's ``predict_proba`` where it has one, else the
        logistic (two classes) or softmax of its decision values, consistent with
        ``predict``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Probabilities in the order of ``classes_``.
        """
        if not getattr(self, "fallback_", False):
            return super().predict_proba(X)
        sup = self.supervised_estimator_
        if hasattr(sup, "predict_proba"):
            from semisup._validation import check_X

            return sup.predict_proba(check_X(X, estimator=self, reset=False))
        d = np.asarray(self._fallback_answer(X, "decision_function"), dtype=np.float64)
        if d.ndim == 1:
            d = np.column_stack([-d, d]) / 2
        e = np.exp(d - d.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
