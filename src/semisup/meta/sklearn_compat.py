"""scikit-learn's ensemble and calibration meta-estimators with unlabeled rows (``y == -1``).

scikit-learn's ``CalibratedClassifierCV``, ``VotingClassifier`` and ``StackingClassifier``
re-encode ``y`` with a ``LabelEncoder``: given ``y`` with ``-1`` rows they learn ``-1`` as
one more class (``classes_ == [-1, 0, 1]``), hand their members class codes in which no
row is unlabeled any more, and calibrate or stack on unlabeled rows as if ``-1`` were a
label.  Nothing fails; the model is silently wrong.  This module gives each one
semi-supervised semantics, and :func:`check_meta_estimator` turns the silent failure into
an error naming the replacement:

===============================  ===========================================================
scikit-learn                     semi-supervised counterpart
===============================  ===========================================================
``CalibratedClassifierCV``       :class:`SemiSupervisedCalibratedClassifier`
``VotingClassifier``             :class:`SemiSupervisedVotingClassifier`
``StackingClassifier``           :class:`SemiSupervisedStackingClassifier`
``SelfTrainingClassifier``       works with ``-1`` rows as documented by scikit-learn, but
                                 it fits its estimator on labeled (and pseudo-labeled) rows
                                 only; :class:`semisup.SelfTraining` gives a semi-supervised
                                 estimator every row
===============================  ===========================================================

The rule they share (that of :mod:`semisup.meta.self_training`): a semi-supervised member
(from :mod:`semisup` or :mod:`sklearn.semi_supervised`) is fitted on **every** row, the
unlabeled ones marked ``-1``; any other member on the labeled rows only.  Calibrators and
stackers learn on **labeled** rows only, from out-of-fold outputs: the folds are those of
:func:`semisup.model_selection.labeled_cv` (stratified k-fold over the labeled rows, every
unlabeled row in every training fold), so a labeled row is never scored by a model that
saw its label.  Members are always fitted on class indices ``0 .. n_classes - 1``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    MetaEstimatorMixin,
    TransformerMixin,
    clone,
)
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from semisup._logging import warn_at_caller
from semisup._validation import check_choice, check_semi_supervised, check_X, unlabeled_mask
from semisup.base import SemiSupervisedClassifierMixin
from semisup.calibration import platt_sigmoid
from semisup.meta.self_training import (
    base_predict,
    base_scores,
    check_base,
    fit_base,
    take_rows,
    uses_unlabeled,
)
from semisup.model_selection import labeled_cv

__all__ = ["SemiSupervisedCalibratedClassifier", "SemiSupervisedStackingClassifier",
           "SemiSupervisedVotingClassifier", "check_meta_estimator"]

#: scikit-learn meta-estimator -> the name of its semi-supervised counterpart here
_REPLACEMENTS = {
    "CalibratedClassifierCV": "SemiSupervisedCalibratedClassifier",
    "VotingClassifier": "SemiSupervisedVotingClassifier",
    "StackingClassifier": "SemiSupervisedStackingClassifier",
}


# ------------------------------------------------------------------------ shared helpers


def _validate(owner, X, y):
    """Validated ``(data, codes)``: ``codes`` are class indices, ``-1`` for unlabeled rows."""
    data = check_semi_supervised(X, y, estimator=owner)
    owner.classes_ = data.classes
    return data, data.codes()


def _fit_member(estimator, X, codes: np.ndarray, rows: np.ndarray | None = None):
    """Fit a clone of ``estimator`` on ``rows`` (default all): every row for a
    semi-supervised member, the labeled ones for any other."""
    model = clone(estimator)
    rows = np.arange(codes.size) if rows is None else rows
    if not uses_unlabeled(model):
        rows = rows[codes[rows] >= 0]
    return fit_base(model, X, codes, rows=rows)


def _sparse_tag(tags, members: list):
    """Accept sparse input when every member does (the members see ``X`` as given)."""
    from sklearn.utils import get_tags

    try:
        tags.input_tags.sparse = all(get_tags(m).input_tags.sparse for m in members)
    except (TypeError, AttributeError, ValueError):
        tags.input_tags.sparse = False
    return tags


def _members(estimators) -> list:
    """The estimators of a ``[(name, estimator), ...]`` list, ``[]`` when malformed."""
    try:
        return [e for _, e in estimators]
    except (TypeError, ValueError):
        return []


def _check_fold_classes(codes: np.ndarray, train: np.ndarray, n_classes: int,
                        owner: str) -> None:
    """Every class must be labeled in every training fold (else a member cannot learn it)."""
    seen = np.unique(codes[train][codes[train] >= 0]).size
    if seen != n_classes:
        raise ValueError(f"{owner}: a training fold holds labeled rows of only {seen} of "
                         f"the {n_classes} classes; use fewer folds (cv) or label more rows "
                         "of the smallest class")


def _folds(cv, codes: np.ndarray, random_state, estimators: list, owner: str) -> list:
    """``(train, test)`` folds over the labeled rows, unlabeled rows in every train."""
    for est in estimators:
        if getattr(est, "kernel", None) == "precomputed":
            # a fold would need the Gram matrix cut on both axes, which take_rows does not
            raise ValueError(f"{owner}: kernel='precomputed' members are not supported; "
                             "pass the feature rows and let the member build its kernel")
    return list(labeled_cv(cv, random_state=random_state).split(codes, codes))


def _response(estimator, method: str, candidates: tuple) -> str:
    """The response method to use: ``method``, or the first available for ``'auto'``."""
    names = candidates if method == "auto" else (method,)
    for name in names:
        if hasattr(estimator, name):
            return name
    raise ValueError(f"{type(estimator).__name__} has none of {names}: choose an estimator "
                     f"with {' or '.join(names)}")


# ---------------------------------------------------------------------- the check


def check_meta_estimator(estimator, y) -> None:
    """Refuse a scikit-learn meta-estimator that would learn ``-1`` as a class.

    ``CalibratedClassifierCV``, ``VotingClassifier`` and ``StackingClassifier`` (also as
    the last step of a ``Pipeline``) re-encode ``y``, so with unlabeled rows they learn a
    class ``-1`` without a warning.  This check raises instead, naming the semisup
    counterpart.  A ``SelfTrainingClassifier`` is accepted (it handles ``-1`` rows) unless
    its estimator lacks ``predict_proba``; around a semi-supervised estimator it warns
    that the estimator never sees the unlabeled rows.

    Parameters
    ----------
    estimator : estimator instance
        The model about to be fitted on ``y``.
    y : array-like of shape (n_samples,)
        Class labels, ``-1`` (or None / NaN) for unlabeled rows.  Without unlabeled rows
        every meta-estimator is fine and the check returns at once.

    Raises
    ------
    ValueError
        When ``estimator`` would treat ``-1`` as a class, or a ``SelfTrainingClassifier``
        wraps an estimator without ``predict_proba``.

    Warns
    -----
    UserWarning
        When a ``SelfTrainingClassifier`` wraps a semi-supervised estimator.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.calibration import CalibratedClassifierCV
    >>> from semisup import LapRLS
    >>> from semisup.meta.sklearn_compat import check_meta_estimator
    >>> y = np.array([0, 1, 0, 1, -1, -1])
    >>> check_meta_estimator(CalibratedClassifierCV(LapRLS()), y[:4])   # all labeled: fine
    >>> try:
    ...     check_meta_estimator(CalibratedClassifierCV(LapRLS()), y)
    ... except ValueError as err:
    ...     print(str(err).split(":")[0])
    CalibratedClassifierCV would learn the unlabeled marker -1 as a class
    """
    y = np.asarray(y)
    if y.ndim != 1 or not unlabeled_mask(y).any():
        return
    if hasattr(estimator, "steps"):   # a Pipeline: its last step sees y
        check_meta_estimator(estimator.steps[-1][1], y)
        return
    name = type(estimator).__name__
    module = type(estimator).__module__
    if module.startswith("sklearn.") and name in _REPLACEMENTS:
        raise ValueError(
            f"{name} would learn the unlabeled marker -1 as a class: use "
            f"semisup.meta.sklearn_compat.{_REPLACEMENTS[name]} (same parameters), which fits "
            "semi-supervised members on every row and learns on the labeled rows only; or "
            f"fit {name} on the labeled rows (y != -1) alone")
    if module.startswith("sklearn.") and name == "SelfTrainingClassifier":
        base = estimator.estimator
        if base is not None and not hasattr(base, "predict_proba"):
            raise ValueError(
                f"SelfTrainingClassifier needs predict_proba, which {type(base).__name__} "
                "lacks: build it with probability=True (semisup margin classifiers), or use "
                "semisup.SelfTraining, which also works from decision values")
        if base is not None and uses_unlabeled(base):
            warn_at_caller(
                f"SelfTrainingClassifier fits {type(base).__name__} on the labeled and "
                "pseudo-labeled rows only, so this semi-supervised estimator never sees the "
                "unlabeled rows; semisup.SelfTraining gives it every row", UserWarning)


# ------------------------------------------------------------------ calibration


class SemiSupervisedCalibratedClassifier(SemiSupervisedClassifierMixin, ClassifierMixin,
                                         MetaEstimatorMixin, BaseEstimator):
    """Probability calibration of a (semi-supervised) classifier on its labeled rows.

    The counterpart of ``CalibratedClassifierCV(estimator, cv=cv, ensemble=False)`` for
    ``y`` with unlabeled rows.  For each fold of :func:`~semisup.model_selection.labeled_cv`
    a clone is fitted on the training rows (every unlabeled row included) and scores the
    held-out labeled rows; one calibrator per class (one in total for two classes) maps
    these out-of-fold scores to probabilities: Platt's sigmoid
    ``P = 1 / (1 + exp(A f + B))`` fitted by maximum likelihood
    (:func:`semisup.calibration.platt_sigmoid`; Platt, 1999) or isotonic regression
    (Zadrozny & Elkan, 2002).  The model used for prediction is a clone fitted on all
    rows; with more than two classes the calibrated one-vs-rest probabilities are
    normalised to sum to one.

    Parameters
    ----------
    estimator : estimator instance
        The classifier to calibrate; its ``decision_function`` is used, else its
        ``predict_proba``.
    method : {'sigmoid', 'isotonic'}, default='sigmoid'
        Calibration map.  Isotonic regression needs many labeled rows (hundreds) not to
        overfit; the sigmoid suits the few labels of semi-supervised problems.
    cv : int, scikit-learn splitter or LabeledSplit, default=5
        Folds over the labeled rows, as :func:`semisup.model_selection.labeled_cv`.
    random_state : int, RandomState instance or None, default=None
        Seed of the folds when ``cv`` is an int.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (the labeled rows' values; never ``-1``).
    estimator_ : estimator instance
        The clone fitted on all rows, used for prediction.
    calibrators_ : list
        ``(A, B)`` pairs (sigmoid) or fitted ``IsotonicRegression`` instances, one per
        class (one for two classes: that of ``classes_[1]``).
    response_method_ : str
        ``'decision_function'`` or ``'predict_proba'``.
    n_features_in_ : int
        Number of features seen in ``fit``.

    See Also
    --------
    semisup.calibration : Platt scaling built into semisup margin classifiers
        (``probability=True``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from semisup import LapRLS
    >>> from semisup.meta.sklearn_compat import SemiSupervisedCalibratedClassifier
    >>> X, y_true = make_moons(100, noise=0.1, random_state=0)
    >>> y = np.where(np.arange(100) < 20, y_true, -1)      # 20 labels, 80 unlabeled
    >>> clf = SemiSupervisedCalibratedClassifier(LapRLS(gamma=10.0), cv=3,
    ...                                          random_state=0).fit(X, y)
    >>> clf.classes_.tolist(), clf.predict_proba(X[:2]).shape
    ([0, 1], (2, 2))
    >>> float(clf.score(X, y_true))
    1.0
    """

    def __init__(self, estimator, *, method: str = "sigmoid", cv=5, random_state=None):
        self.estimator = estimator
        self.method = method
        self.cv = cv
        self.random_state = random_state

    def fit(self, X, y) -> SemiSupervisedCalibratedClassifier:
        """Fit the calibrators on out-of-fold scores of the labeled rows, then the model.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for unlabeled rows.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        check_choice(self.method, "method", ("sigmoid", "isotonic"))
        base = check_base(self.estimator, type(self).__name__)
        data, codes = _validate(self, X, y)
        k = self.classes_.size
        self.response_method_ = _response(base, "auto", ("decision_function", "predict_proba"))
        scores, truth = [], []
        for train, test in _folds(self.cv, codes, self.random_state, [base],
                                   type(self).__name__):
            _check_fold_classes(codes, train, k, type(self).__name__)
            model = _fit_member(base, data.X, codes, train)
            scores.append(self._columns(model, take_rows(data.X, test)))
            truth.append(codes[test])
        scores, truth = np.concatenate(scores), np.concatenate(truth)
        # one calibrator per class, against the rest; with two classes only classes_[1]'s
        columns = [1] if k == 2 else range(k)
        self.calibrators_ = [self._fit_map(scores[:, j], truth == c)
                             for j, c in zip(range(scores.shape[1]), columns, strict=True)]
        self.estimator_ = _fit_member(base, data.X, codes)
        return self

    def __sklearn_tags__(self):
        return _sparse_tag(super().__sklearn_tags__(), [self.estimator])

    def _columns(self, model, X) -> np.ndarray:
        """Scores ``(n, 1)`` for two classes (``classes_[1]``), ``(n, k)`` otherwise."""
        s = base_scores(model, X, self.classes_.size, self.response_method_)
        return s[:, 1:] if self.classes_.size == 2 else s

    def _fit_map(self, f: np.ndarray, positive: np.ndarray):
        if self.method == "sigmoid":
            return platt_sigmoid(f, positive)
        from sklearn.isotonic import IsotonicRegression

        return IsotonicRegression(out_of_bounds="clip").fit(f, positive.astype(np.float64))

    def predict_proba(self, X) -> np.ndarray:
        """Calibrated class probabilities.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Class probabilities, columns in the order of ``classes_``.
        """
        check_is_fitted(self, "calibrators_")
        X = check_X(X, estimator=self, reset=False)
        s = self._columns(self.estimator_, X)
        P = np.column_stack([
            expit(-(c[0] * s[:, j] + c[1])) if isinstance(c, tuple) else c.predict(s[:, j])
            for j, c in enumerate(self.calibrators_)])
        if self.classes_.size == 2:
            return np.column_stack([1.0 - P[:, 0], P[:, 0]])
        total = P.sum(axis=1, keepdims=True)
        uniform = np.full_like(P, 1.0 / P.shape[1])
        return np.divide(P, total, out=uniform, where=total > 0)

    def predict(self, X) -> np.ndarray:
        """Class of highest calibrated probability.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        proba = self.predict_proba(X)   # first: it raises NotFittedError before fit
        return self.classes_[np.argmax(proba, axis=1)]


# ------------------------------------------------------------------------ voting


def _check_estimators(estimators, owner: str) -> list:
    """Validate a ``[(name, estimator), ...]`` list; returns it as a list."""
    if not isinstance(estimators, (list, tuple)) or not estimators or not all(
            isinstance(p, (list, tuple)) and len(p) == 2 and isinstance(p[0], str)
            for p in estimators):
        raise ValueError(f"{owner}: estimators must be a non-empty list of (name, estimator) "
                         f"pairs, e.g. [('lap', LapRLS()), ('tsvm', TransductiveSVM())]; got "
                         f"{estimators!r}")
    names = [n for n, _ in estimators]
    if len(set(names)) != len(names):
        raise ValueError(f"{owner}: estimator names must be unique, got {names}")
    for n, est in estimators:
        check_base(est, f"{owner} ({n!r})")
    return list(estimators)


def _has_soft(self) -> bool:
    if self.voting != "soft":
        raise AttributeError("predict_proba is not available when voting='hard': build "
                             "SemiSupervisedVotingClassifier(..., voting='soft')")
    return True


class SemiSupervisedVotingClassifier(SemiSupervisedClassifierMixin, ClassifierMixin,
                                     MetaEstimatorMixin, BaseEstimator):
    """Majority or soft voting over classifiers fitted with the unlabeled rows.

    The counterpart of ``VotingClassifier`` for ``y`` with unlabeled rows: each member is
    fitted on every row (semi-supervised members) or on the labeled rows (any other), and
    ``classes_`` are the labeled rows' classes.  ``'hard'`` predicts the class with the
    largest summed weight of member votes (ties: the first such class in ``classes_``);
    ``'soft'`` the arg max of the weighted mean of the members' ``predict_proba``.

    Parameters
    ----------
    estimators : list of (str, estimator) tuples
        Named members, e.g. ``[('lap', LapRLS()), ('tsvm', TransductiveSVM())]``.
    voting : {'hard', 'soft'}, default='hard'
        ``'soft'`` needs ``predict_proba`` of every member (``probability=True`` for the
        semisup margin classifiers).
    weights : array-like of shape (n_estimators,), default=None
        Weight of each member's vote or probabilities; ``None``: equal weights.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (never ``-1``).
    estimators_ : list of estimator instances
        The fitted members, in the order of ``estimators`` (fitted on class indices
        ``0 .. n_classes - 1``).
    named_estimators_ : dict
        The fitted members by name.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from sklearn.linear_model import LogisticRegression
    >>> from semisup import LabelSpreading, LapRLS
    >>> from semisup.meta.sklearn_compat import SemiSupervisedVotingClassifier
    >>> X, y_true = make_moons(100, noise=0.1, random_state=0)
    >>> y = np.where(np.arange(100) < 10, y_true, -1)
    >>> vote = SemiSupervisedVotingClassifier(
    ...     [("lap", LapRLS(gamma=10.0)), ("spread", LabelSpreading()),
    ...      ("logreg", LogisticRegression())]).fit(X, y)   # logreg: the 10 labels only
    >>> vote.classes_.tolist(), float(vote.score(X, y_true))
    ([0, 1], 1.0)
    """

    def __init__(self, estimators, *, voting: str = "hard", weights=None):
        self.estimators = estimators
        self.voting = voting
        self.weights = weights

    def __sklearn_tags__(self):
        return _sparse_tag(super().__sklearn_tags__(), _members(self.estimators))

    def _weights(self) -> np.ndarray:
        n = len(self.estimators)
        if self.weights is None:
            return np.ones(n)
        w = np.asarray(self.weights, dtype=np.float64)
        if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(f"weights must be {n} finite non-negative numbers (one per "
                             f"estimator) with a positive sum, got {self.weights!r}")
        return w

    def fit(self, X, y) -> SemiSupervisedVotingClassifier:
        """Fit every member on ``(X, y)`` by the semi-supervised rule.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for unlabeled rows.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        estimators = _check_estimators(self.estimators, type(self).__name__)
        check_choice(self.voting, "voting", ("hard", "soft"))
        self._weights()
        if self.voting == "soft":
            for n, est in estimators:
                if not hasattr(est, "predict_proba"):
                    raise ValueError(f"voting='soft' needs predict_proba, which {n!r} lacks: "
                                     "build it with probability=True, or use voting='hard'")
        data, codes = _validate(self, X, y)
        self.estimators_ = [_fit_member(est, data.X, codes) for _, est in estimators]
        self.named_estimators_ = {n: e for (n, _), e in
                                  zip(estimators, self.estimators_, strict=True)}
        return self

    @available_if(_has_soft)
    def predict_proba(self, X) -> np.ndarray:
        """Weighted mean of the members' class probabilities (``voting='soft'``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Class probabilities, columns in the order of ``classes_``.
        """
        check_is_fitted(self, "estimators_")
        X = check_X(X, estimator=self, reset=False)
        w = self._weights()
        k = self.classes_.size
        P = sum(wi * base_scores(e, X, k) for wi, e in zip(w, self.estimators_, strict=True))
        return P / w.sum()

    def predict(self, X) -> np.ndarray:
        """Predict by majority (``'hard'``) or mean probability (``'soft'``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        if self.voting == "soft":
            proba = self.predict_proba(X)   # first: it raises NotFittedError before fit
            return self.classes_[np.argmax(proba, axis=1)]
        check_is_fitted(self, "estimators_")
        X = check_X(X, estimator=self, reset=False)
        w = self._weights()
        votes = np.zeros((X.shape[0], self.classes_.size))
        rows = np.arange(X.shape[0])
        for wi, e in zip(w, self.estimators_, strict=True):
            votes[rows, base_predict(e, X)] += wi
        return self.classes_[np.argmax(votes, axis=1)]


# ---------------------------------------------------------------------- stacking


def _final_has(attr: str):
    """For ``available_if``: the final estimator (fitted, else as given) has ``attr``;
    the default ``LogisticRegression`` has both probabilities and decision values."""
    def check(self) -> bool:
        final = getattr(self, "final_estimator_", None)
        if final is None:
            final = self.final_estimator
        return final is None or hasattr(final, attr)
    return check


class SemiSupervisedStackingClassifier(SemiSupervisedClassifierMixin, ClassifierMixin,
                                       MetaEstimatorMixin, TransformerMixin, BaseEstimator):
    """Stacked generalisation whose members see the unlabeled rows.

    The counterpart of ``StackingClassifier`` for ``y`` with unlabeled rows (Wolpert,
    1992).  The members are fitted on all rows by the semi-supervised rule
    (``estimators_``).  The final estimator learns on the labeled rows only, from the
    members' out-of-fold outputs: for each fold of :func:`~semisup.model_selection.labeled_cv`
    the members are refitted on the training rows (every unlabeled row included) and
    describe the held-out labeled rows.  ``stack_method`` and ``passthrough`` follow
    ``StackingClassifier``: with two classes a member contributes one column (the
    probability or score of ``classes_[1]``), else one per class.

    Parameters
    ----------
    estimators : list of (str, estimator) tuples
        Named members.
    final_estimator : estimator instance, default=None
        Classifier on the stacked outputs; ``None``: ``LogisticRegression()``.  It is
        fitted on class indices ``0 .. n_classes - 1``.
    cv : int, scikit-learn splitter or LabeledSplit, default=5
        Folds over the labeled rows, as :func:`semisup.model_selection.labeled_cv`; each
        labeled row must be held out exactly once (a k-fold splitter).
    stack_method : {'auto', 'predict_proba', 'decision_function', 'predict'}, default='auto'
        Member output stacked; ``'auto'`` takes the first a member has in this order.
    passthrough : bool, default=False
        Also give the final estimator the original features.
    random_state : int, RandomState instance or None, default=None
        Seed of the folds when ``cv`` is an int.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (never ``-1``).
    estimators_ : list of estimator instances
        The members fitted on all rows.
    named_estimators_ : dict
        The fitted members by name.
    final_estimator_ : estimator instance
        The final classifier, fitted on the labeled rows' out-of-fold outputs.
    stack_method_ : list of str
        The output used for each member.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from semisup import LabelSpreading, LapRLS
    >>> from semisup.meta.sklearn_compat import SemiSupervisedStackingClassifier
    >>> X, y_true = make_moons(100, noise=0.1, random_state=0)
    >>> y = np.where(np.arange(100) < 20, y_true, -1)
    >>> stack = SemiSupervisedStackingClassifier(
    ...     [("lap", LapRLS(gamma=10.0)), ("spread", LabelSpreading())], cv=3,
    ...     random_state=0).fit(X, y)
    >>> stack.stack_method_, stack.transform(X[:4]).shape
    (['decision_function', 'predict_proba'], (4, 2))
    >>> float(stack.score(X, y_true))
    1.0
    """

    def __init__(self, estimators, final_estimator=None, *, cv=5, stack_method: str = "auto",
                 passthrough: bool = False, random_state=None):
        self.estimators = estimators
        self.final_estimator = final_estimator
        self.cv = cv
        self.stack_method = stack_method
        self.passthrough = passthrough
        self.random_state = random_state

    def fit(self, X, y) -> SemiSupervisedStackingClassifier:
        """Fit the members on all rows and the final estimator on out-of-fold outputs.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for unlabeled rows.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        owner = type(self).__name__
        estimators = _check_estimators(self.estimators, owner)
        check_choice(self.stack_method, "stack_method",
                     ("auto", "predict_proba", "decision_function", "predict"))
        if not isinstance(self.passthrough, (bool, np.bool_)):
            raise ValueError(f"passthrough must be True or False, got {self.passthrough!r}")
        final = check_base(self.final_estimator, owner)
        data, codes = _validate(self, X, y)
        self.stack_method_ = [
            _response(est, self.stack_method, ("predict_proba", "decision_function", "predict"))
            for _, est in estimators]
        labeled = np.flatnonzero(codes >= 0)
        position = np.full(codes.size, -1)
        position[labeled] = np.arange(labeled.size)
        features = None
        seen = np.zeros(labeled.size, dtype=np.int64)
        for train, test in _folds(self.cv, codes, self.random_state,
                                  [e for _, e in estimators], owner):
            _check_fold_classes(codes, train, self.classes_.size, owner)
            models = [_fit_member(est, data.X, codes, train) for _, est in estimators]
            block = self._stack(models, take_rows(data.X, test))
            if features is None:
                features = np.empty((labeled.size, block.shape[1]))
            features[position[test]] = block
            seen[position[test]] += 1
        if not np.all(seen == 1):
            raise ValueError(f"{owner}: cv must hold out every labeled row exactly once (a "
                             f"k-fold splitter such as LabeledStratifiedKFold), got {self.cv!r}")
        self.final_estimator_ = fit_base(final, self._passthrough(
            features, take_rows(data.X, labeled)), codes[labeled])
        self.estimators_ = [_fit_member(est, data.X, codes) for _, est in estimators]
        self.named_estimators_ = {n: e for (n, _), e in
                                  zip(estimators, self.estimators_, strict=True)}
        return self

    def __sklearn_tags__(self):
        final = self.final_estimator
        if final is None:
            from sklearn.linear_model import LogisticRegression

            final = LogisticRegression()
        return _sparse_tag(super().__sklearn_tags__(), _members(self.estimators) + [final])

    def _stack(self, models: list, X) -> np.ndarray:
        k = self.classes_.size
        cols = []
        for model, method in zip(models, self.stack_method_, strict=True):
            if method == "predict":
                cols.append(base_predict(model, X).astype(np.float64)[:, None])
                continue
            s = base_scores(model, X, k, method)
            cols.append(s[:, 1:] if k == 2 else s)
        return np.hstack(cols)

    def _passthrough(self, features: np.ndarray, X):
        if not self.passthrough:
            return features
        import scipy.sparse as sp

        return sp.hstack([features, X], format="csr") if sp.issparse(X) else np.hstack(
            [features, X])

    def transform(self, X):
        """Stack the members' outputs on new rows (the final estimator's input).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray or sparse matrix of shape (n_samples, n_stacked)
            Member outputs, followed by ``X`` with ``passthrough=True``.
        """
        check_is_fitted(self, "final_estimator_")
        X = check_X(X, estimator=self, reset=False)
        return self._passthrough(self._stack(self.estimators_, X), X)

    def predict(self, X) -> np.ndarray:
        """Predict with the final estimator on the stacked outputs.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        Xt = self.transform(X)   # first: it raises NotFittedError before fit
        return self.classes_[base_predict(self.final_estimator_, Xt)]

    @available_if(_final_has("predict_proba"))
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities of the final estimator.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Class probabilities, columns in the order of ``classes_``.
        """
        Xt = self.transform(X)   # first: it raises NotFittedError before fit
        return base_scores(self.final_estimator_, Xt, self.classes_.size)

    @available_if(_final_has("decision_function"))
    def decision_function(self, X) -> np.ndarray:
        """Decision values of the final estimator.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Decision values: the score of ``classes_[1]``, or one column per class.
        """
        Xt = self.transform(X)   # it raises NotFittedError before fit
        return self.final_estimator_.decision_function(Xt)
