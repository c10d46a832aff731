"""Self-training over any classifier: add the most confident predictions, refit, repeat.

The wrappers of this package (:class:`SelfTraining`, :class:`~semisup.meta.cotraining.CoTraining`,
:class:`~semisup.meta.tritraining.TriTraining`) share the helpers defined here: how the wrapped
classifier is chosen and checked, how it is fitted on the rows labeled so far, and how its
scores are mapped onto the classes of the whole problem.

Convention for the wrapped classifier (``estimator``): it is always fitted on the **class
indices** ``0 .. n_classes - 1`` (``classes_[i]`` is the label), so string, boolean or
``{-1, +1}``-coded labels never reach it.  A semi-supervised classifier (one from
:mod:`semisup` or :mod:`sklearn.semi_supervised`, which follow the ``y == -1`` convention)
is given every row, the rows not labeled yet marked ``-1``; any other classifier is given
the labeled rows only.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from semisup._logging import get_logger, progress, verbosity
from semisup._validation import (
    CollapseWarning,
    LabelCodingWarning,
    check_bool,
    check_choice,
    check_int,
    check_semi_supervised,
    check_X,
    warn_if_collapsed,
)
from semisup.base import SemiSupervisedClassifierMixin
from semisup.safety import check_fallback, decision_values, guard, hide_rows
from semisup.solvers._kernels import narrow_data_threads

logger = get_logger(__name__)

__all__ = ["SelfTraining"]


# ------------------------------------------------------------------------ shared helpers


def default_estimator():
    """The classifier a wrapper uses when ``estimator=None``: a scikit-learn
    ``LogisticRegression`` (probabilities, decision values, sparse input, many classes)."""
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression()


def check_base(estimator, owner: str, need: tuple = ()):
    """A fresh clone of ``estimator`` (or the default), checked for the methods needed.

    Raises
    ------
    TypeError
        When ``estimator`` is not a classifier with ``fit``/``predict`` (and ``need``).
    """
    if estimator is None:
        estimator = default_estimator()
    if isinstance(estimator, type) or not (hasattr(estimator, "fit")
                                           and hasattr(estimator, "predict")
                                           and hasattr(estimator, "get_params")):
        raise TypeError(f"{owner}: estimator must be a scikit-learn classifier instance "
                        f"(with fit and predict), e.g. LogisticRegression() or "
                        f"semisup.L2SVM(probability=True); got {estimator!r}")
    for method in need:
        if not hasattr(estimator, method):
            raise TypeError(f"{owner}: estimator {type(estimator).__name__} has no {method}, "
                            "which this wrapper needs; use a probabilistic classifier "
                            "(LogisticRegression, semisup.L2SVM(probability=True), or "
                            "CalibratedClassifierCV around yours)")
    return clone(estimator)


def uses_unlabeled(estimator) -> bool:
    """Whether ``estimator`` follows the ``y == -1`` convention (semisup or
    ``sklearn.semi_supervised``), so it is given the rows not labeled yet as ``-1``."""
    module = type(estimator).__module__
    return module.startswith("semisup.") or module.startswith("sklearn.semi_supervised")


def take_rows(X, rows, cols=None):
    """Rows (and columns) of a dense array or CSR matrix."""
    X = X[rows]
    return X if cols is None else X[:, cols]


def fit_base(estimator, X, codes: np.ndarray, cols=None, semi: bool = False,
             rows: np.ndarray | None = None):
    """Fit ``estimator`` on the labeled rows of ``codes`` (class indices, ``-1`` = not yet).

    ``semi``: give it every row (``-1`` kept); otherwise the labeled rows only, in row
    order.  ``rows`` overrides the rows used (e.g. a bootstrap sample, repetitions kept).
    The label-coding, collapse and "no unlabeled rows" warnings of a semisup estimator
    are about the inner fit, not the user's data, and are silenced here: the wrapper
    checks the user's ``y`` and its own result.
    """
    if rows is None:
        rows = np.arange(codes.size) if semi else np.flatnonzero(codes >= 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LabelCodingWarning)
        warnings.simplefilter("ignore", CollapseWarning)
        warnings.filterwarnings("ignore", "y has no unlabeled rows", UserWarning)
        estimator.fit(take_rows(X, rows, cols), codes[rows])
    return estimator


def base_scores(estimator, X, n_classes: int, method: str = "predict_proba") -> np.ndarray:
    """``predict_proba`` or ``decision_function`` as an ``(n, n_classes)`` array.

    Columns follow the class indices; a class the fitted estimator never saw gets
    probability 0 (score ``-inf``).  A binary decision function ``d`` becomes ``[-d, d]``.
    """
    est_classes = np.asarray(estimator.classes_, dtype=np.int64)
    out = np.full((X.shape[0], n_classes), 0.0 if method == "predict_proba" else -np.inf)
    s = np.asarray(getattr(estimator, method)(X), dtype=np.float64)
    if s.ndim == 1:
        s = np.column_stack([-s, s])
    out[:, est_classes] = s
    return out


def base_predict(estimator, X) -> np.ndarray:
    """Class indices predicted by a wrapped estimator."""
    return np.asarray(estimator.predict(X), dtype=np.int64)


def class_quota(prior: np.ndarray, total: float) -> np.ndarray:
    """Rows per class out of ``total`` in proportion to ``prior``, at least 1 each."""
    return np.maximum(1, np.rint(prior * total)).astype(np.int64)


def check_max_iter(value, name: str = "max_iter"):
    """``None`` (no limit) or an integer >= 1."""
    return None if value is None else check_int(value, name)


#: advice of the collapse warning of the wrappers
COLLAPSE_HINT = ("the wrapped estimator's pseudo-labels drifted to one class: regularise the "
                 "estimator more, add fewer rows per round (k_best, class_counts) or raise "
                 "the threshold; SelfTraining(balance=True) keeps the classes at the labeled "
                 "prior")


class MetaClassifier(SemiSupervisedClassifierMixin, ClassifierMixin, MetaEstimatorMixin,
                     BaseEstimator):
    """Skeleton shared by the wrappers: validation, class mapping, predict-time checks, tags."""

    def _base(self) -> object:
        return default_estimator() if self.estimator is None else self.estimator

    def _fit_threads(self, X):
        """BLAS threads of ``fit``: one over a scikit-learn base model, whose fits are all on
        the labeled and pseudo-labeled rows, else by the width of ``X``
        (:func:`~semisup.solvers._kernels.narrow_data_threads`)."""
        return narrow_data_threads(X, small_fits=not uses_unlabeled(self._base()))

    def _fit_guarded(self, X, y) -> None:
        """Fit the wrapper unless labeled-only cross-validation says its pseudo-labels hurt.

        With ``fallback="cv"``: the guard of :mod:`semisup.safety`, the library's one rule
        for the safe use of unlabeled data (Li & Zhou, 2015; self-labeling is known to hurt
        with few labels, Oliver et al. 2018): stratified ``min(3, smallest class)``-fold
        labeled-only CV (seeded by ``random_state``, 0 when None); in each fold the wrapper
        (``fallback="none"``) is fitted with the held-out labeled rows hidden as unlabeled
        rows (the transductive protocol) and so is ``estimator`` on the labeled rows kept,
        and both are scored on the held-out rows by their margins (:func:`semisup.safety.guard`).
        The wrapper is kept only when it wins by a standard error of the paired difference;
        otherwise (a tie goes to the simpler model) the model is ``estimator`` fitted on all
        labeled rows.  Measured on official split 2 of the 8 SSL-book sets in
        ``benchmarks/results/defaults_round3.md``; on split 1 with the margin test,
        self-, co- and tri-training are within a point of logistic regression on 16, 15 and
        14 of 16 cells (``defaults_fallback_margin.md``).  A class of a single labeled row
        stays in every fold's training rows (:func:`semisup.safety.guard_folds`'s
        ``keep_singletons``; on coil at 10 labels, official splits 2-12, self-, co- and
        tri-training went from 4, 6 and 10 to 6, 10 and 11 of 11 cells within a point of
        logistic regression, ``benchmarks/results/guard_rule_study.md``).
        """
        fallback = check_fallback(self.fallback)
        self.fallback_ = False
        self.cv_scores_ = None
        self.__dict__.pop("supervised_estimator_", None)   # from an earlier fit
        if fallback == "none":
            self._fit(X, y)
            return
        data = check_semi_supervised(X, y, require_unlabeled=True, estimator=self)
        codes = data.codes()
        base = check_base(self._base(), type(self).__name__)
        semi = uses_unlabeled(base)
        inner = clone(self).set_params(fallback="none", verbose=0)

        def fit_predict(which: str, train: np.ndarray, rows: np.ndarray):
            y_fold = hide_rows(codes, train)
            X_rows = take_rows(data.X, rows)
            if which == "supervised":
                model = fit_base(clone(base), data.X, y_fold, semi=semi)
                return base_predict(model, X_rows), decision_values(model, X_rows, proba=True)
            model = inner.fit(data.X, y_fold)
            return np.asarray(model.predict(X_rows)), decision_values(model, X_rows, proba=True)

        # no row to pseudo-label: the wrapper is kept (a class of one labeled row stays
        # in every fold's training rows, as for the linear methods: semisup.safety)
        result = guard(fit_predict, codes, getattr(self, "random_state", None),
                       type(self).__name__, keep_singletons=True)
        self.cv_scores_ = result
        if result is None or result["keep"]:
            self._fit(X, y)
            return
        self.fallback_ = True
        self.classes_ = data.classes
        self.supervised_estimator_ = fit_base(clone(base), data.X, codes, semi=semi)
        # SelfTraining predicts with estimator_: the fallback is its zero-round result
        self.estimator_ = self.supervised_estimator_
        rest = np.flatnonzero(codes < 0)
        self._finish(data, codes, base_predict(self.supervised_estimator_,
                                               take_rows(data.X, rest)))
        self.n_iter_ = 0
        self.labeled_iter_ = np.where(codes >= 0, 0, -1)
        self.termination_condition_ = "supervised_fallback"
        warn_if_collapsed(self, self.transduction_[data.unlabeled], self.classes_.size,
                          hint=COLLAPSE_HINT)

    def _fallback_output(self, X, method: str):
        """``method`` of the supervised fallback model on ``X``, or None when not in use."""
        if not getattr(self, "fallback_", False):
            return None
        X = self._check_predict_X(X)
        est = self.supervised_estimator_
        if method == "predict":
            return self.classes_[base_predict(est, X)]
        if method == "predict_proba":
            return base_scores(est, X, self.classes_.size)
        return est.decision_function(X)

    def _validate_fit(self, X, y):
        data = check_semi_supervised(X, y, require_unlabeled=True, estimator=self)
        self.classes_ = data.classes
        return data, data.codes()

    def _finish(self, data, codes: np.ndarray, predicted: np.ndarray | None) -> None:
        """Store ``transduction_`` (pseudo-labels, ``predicted`` for rows never labeled).

        Each ``_fit`` then calls :func:`warn_if_collapsed` itself (with
        :data:`COLLAPSE_HINT`), so that the warning points at the user's ``fit`` call.
        """
        codes = codes.copy()
        if predicted is not None:
            rest = np.flatnonzero(codes < 0)
            codes[rest] = predicted
        self.transduction_ = self.classes_[codes]

    def _check_predict_X(self, X):
        check_is_fitted(self, "transduction_")
        return check_X(X, estimator=self, reset=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            from sklearn.utils import get_tags

            tags.input_tags.sparse = get_tags(self._base()).input_tags.sparse
        except (TypeError, AttributeError, ValueError):
            tags.input_tags.sparse = False
        return tags


def base_has(attr: str):
    """For ``available_if``: the wrapped estimator (fitted, else as given) has ``attr``."""
    def check(self) -> bool:
        est = getattr(self, "estimator_", None)
        if est is None:
            ests = getattr(self, "estimators_", None)
            est = ests[0] if ests else self._base()
        return hasattr(est, attr)
    return check


# ------------------------------------------------------------------------ self-training


def select_confident(scores: np.ndarray, prior: np.ndarray | None, criterion: str,
                     threshold: float, k_best: int) -> np.ndarray:
    """Indices (into the rows of ``scores``) of the rows to pseudo-label this round.

    Each row's predicted class is its arg max and its confidence that score.

    - ``prior is None`` (no balancing, scikit-learn's rule): ``"threshold"`` takes every
      row whose confidence exceeds ``threshold``; ``"k_best"`` the ``k_best`` most
      confident rows.
    - ``prior`` given (balanced): ``"k_best"`` takes, for each class ``c``, the
      ``max(1, round(k_best * prior[c]))`` most confident rows predicted ``c``;
      ``"threshold"`` takes, of the rows above the threshold, as many per class as keep
      the selection's class proportions at ``prior`` (the most confident ones), and none
      at all when a class has no row above it -- adding rows of the other classes only is
      exactly the drift that balancing prevents.

    Returns
    -------
    ndarray of int, sorted
    """
    n, k = scores.shape
    if n == 0:
        return np.empty(0, dtype=np.int64)
    pred = scores.argmax(axis=1)
    conf = scores[np.arange(n), pred]
    if prior is None:
        if criterion == "threshold":
            return np.flatnonzero(conf > threshold)
        if k_best >= n:
            return np.arange(n)
        return np.sort(np.argsort(-conf, kind="stable")[:k_best])
    candidates = []
    for c in range(k):
        rows = np.flatnonzero((pred == c) & ((conf > threshold) if criterion == "threshold"
                                             else True))
        candidates.append(rows[np.argsort(-conf[rows], kind="stable")])
    if criterion == "k_best":
        quota = class_quota(prior, k_best)
    else:
        sizes = np.array([r.size for r in candidates], dtype=np.float64)
        scale = float(np.min(sizes / prior))
        if scale == 0.0:
            return np.empty(0, dtype=np.int64)
        quota = class_quota(prior, scale)
    return np.sort(np.concatenate([r[:q] for r, q in zip(candidates, quota, strict=True)]))


class SelfTraining(MetaClassifier):
    """Self-training: pseudo-label the most confident unlabeled rows, refit, repeat.

    Each round fits ``estimator`` on the rows labeled so far, predicts the rest, and gives
    the most confident of them their predicted class (``criterion``); it stops when a
    round adds nothing (``"no_change"``), every row is labeled (``"all_labeled"``), or
    after ``max_iter`` rounds (``"max_iter"``), then fits ``estimator`` once more on every
    labeled and pseudo-labeled row. This is the classic wrapper method (Yarowsky 1995;
    the rule of scikit-learn's ``SelfTrainingClassifier``) with one change by default:
    the selection is **balanced** across classes in proportion to the labeled class
    prior, so a classifier whose most confident predictions all fall in one class cannot
    pull the whole unlabeled set into it.  ``balance=False`` gives scikit-learn's rule.

    A semi-supervised ``estimator`` (from semisup or ``sklearn.semi_supervised``) is given
    the rows not labeled yet as ``-1`` in every fit; any other the labeled rows only.

    Parameters
    ----------
    estimator : classifier or None, default=None
        The classifier to wrap (cloned); ``None`` means scikit-learn's
        ``LogisticRegression()``.  ``criterion="threshold"`` needs ``predict_proba``;
        ``"k_best"`` ranks by ``predict_proba`` or else by ``decision_function``.
    criterion : {"threshold", "k_best"}, default="threshold"
        ``"threshold"``: rows whose highest class probability exceeds ``threshold``;
        ``"k_best"``: the ``k_best`` most confident rows per round.
    threshold : float in [0, 1), default=0.75
        Probability a prediction must exceed to be added (``criterion="threshold"``).
    k_best : int, default=10
        Rows added per round (``criterion="k_best"``); with ``balance=True`` split across
        classes in proportion to the labeled prior, at least one per class.
    balance : bool, default=True
        Keep the class proportions of the rows added each round at the labeled prior (see
        :func:`select_confident`); ``False`` selects by confidence alone.
    max_iter : int or None, default=10
        Most rounds; ``None`` runs until no row is added or every row is labeled.
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: keep the pseudo-labels only when labeled-only cross-validation says they
        help (:meth:`MetaClassifier._fit_guarded`), else return ``estimator`` fitted on the
        labeled rows (``fallback_ is True``); ``"none"``: the method as published.  Measured
        on official split 2 of the SSL-book sets (10 and 100 labels): cells within 1 point
        of LogisticRegression 12 of 16 unguarded, 15 of 16 guarded
        (``benchmarks/results/defaults_round3.md``).
    verbose : int, default=0
        Log each round (``1``) through the ``semisup`` logger, with a progress bar.

    Attributes
    ----------
    estimator_ : classifier
        The wrapped classifier fitted on the labeled and pseudo-labeled rows (on class
        indices: its ``classes_`` are ``0 .. n_classes - 1``).
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows: the given labels, the pseudo-labels, and the final
        estimator's predictions for rows never selected (scikit-learn leaves ``-1`` there;
        ``labeled_iter_ == -1`` tells them apart).
    labeled_iter_ : ndarray of shape (n_samples,)
        Round in which each row was labeled: 0 for the given labels, ``-1`` never.
    n_iter_ : int
        Rounds run (fits before the final one).
    termination_condition_ : {"max_iter", "no_change", "all_labeled"}
        Why the rounds stopped.
    n_features_in_ : int
        Number of features seen in ``fit``.
    fallback_ : bool
        Whether the labeled-only CV chose ``estimator`` alone (then ``estimator_`` is it,
        ``n_iter_ == 0`` and ``termination_condition_ == "supervised_fallback"``).
    cv_scores_ : dict or None
        Mean held-out accuracy of the wrapper and of ``estimator`` alone, and the number
        of folds (None without CV).

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.meta.self_training import SelfTraining
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(-2, 1, (50, 2)), rng.normal(2, 1, (50, 2))]
    >>> y = np.full(100, -1)
    >>> y[[0, 1, 50, 51]] = [0, 0, 1, 1]
    >>> model = SelfTraining(max_iter=5, fallback="none").fit(X, y)
    >>> model.termination_condition_, model.n_iter_
    ('no_change', 3)
    >>> float(np.mean(model.transduction_ == np.repeat([0, 1], 50))) > 0.95
    True

    By default (``fallback="cv"``) two labels per class are too few for the labeled-only
    CV to show a gain, so the base estimator alone is kept:

    >>> SelfTraining(max_iter=5).fit(X, y).termination_condition_
    'supervised_fallback'
    """

    def __init__(self, estimator=None, *, criterion: str = "threshold",
                 threshold: float = 0.75, k_best: int = 10, balance: bool = True,
                 max_iter: int | None = 10, fallback: str = "cv", verbose: int = 0):
        self.estimator = estimator
        self.fallback = fallback
        self.criterion = criterion
        self.threshold = threshold
        self.k_best = k_best
        self.balance = balance
        self.max_iter = max_iter
        self.verbose = verbose

    def _validate_params(self) -> None:
        check_choice(self.criterion, "criterion", ("threshold", "k_best"))
        t = self.threshold
        if isinstance(t, bool) or not isinstance(t, numbers.Real) or not 0.0 <= t < 1.0:
            raise ValueError(f"threshold must be a probability in [0, 1), got {t!r}")
        check_int(self.k_best, "k_best")
        check_bool(self.balance, "balance")
        check_max_iter(self.max_iter)

    def fit(self, X, y) -> SelfTraining:
        """Fit by self-training on ``(X, y)``; rows with ``y == -1`` are the unlabeled data.

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
        with verbosity(self.verbose), self._fit_threads(X):
            self._fit_guarded(X, y)
        return self

    def _fit(self, X, y) -> None:
        data, codes = self._validate_fit(X, y)
        self._validate_params()
        base = self._base()
        has_proba = hasattr(base, "predict_proba")
        if self.criterion == "threshold" or not hasattr(base, "decision_function"):
            check_base(base, type(self).__name__, ("predict_proba",))
        else:
            check_base(base, type(self).__name__)
        method = "predict_proba" if has_proba else "decision_function"
        semi = uses_unlabeled(base)
        X = data.X
        k = self.classes_.size
        prior = np.bincount(data.y_index, minlength=k) / data.y_index.size \
            if self.balance else None
        labeled_iter = np.where(codes >= 0, 0, -1)
        max_iter = np.inf if self.max_iter is None else self.max_iter
        name = type(self).__name__
        est, fitted_on, condition, it = None, None, "all_labeled", 0
        with progress(None if self.max_iter is None else self.max_iter, name, self.verbose,
                      "round") as bar:
            while it < max_iter:
                rest = np.flatnonzero(codes < 0)
                if rest.size == 0:
                    condition = "all_labeled"
                    break
                it += 1
                est = fit_base(clone(base), X, codes, semi=semi)
                fitted_on = codes.copy()
                scores = base_scores(est, take_rows(X, rest), k, method)
                chosen = select_confident(scores, prior, self.criterion, self.threshold,
                                          self.k_best)
                bar.update()
                if chosen.size == 0:
                    condition = "no_change"
                    logger.info("%s: round %d added no row; stopping", name, it)
                    break
                rows = rest[chosen]
                codes[rows] = scores[chosen].argmax(axis=1)
                labeled_iter[rows] = it
                logger.info("%s: round %d labeled %d rows (per class %s), %d left", name, it,
                            rows.size, np.bincount(codes[rows], minlength=k).tolist(),
                            rest.size - rows.size)
                if rows.size == rest.size:
                    condition = "all_labeled"
                    break
            else:
                condition = "max_iter"
        if est is None or not np.array_equal(fitted_on, codes):
            est = fit_base(clone(base), X, codes, semi=semi)
        self.estimator_ = est
        self.labeled_iter_ = labeled_iter
        self.n_iter_ = it
        self.termination_condition_ = condition
        rest = np.flatnonzero(codes < 0)
        predicted = base_predict(est, take_rows(X, rest)) if rest.size else None
        self._finish(data, codes, predicted)
        warn_if_collapsed(self, self.transduction_[data.unlabeled], k, hint=COLLAPSE_HINT)

    def predict(self, X) -> np.ndarray:
        """Class labels predicted by the final estimator.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        X = self._check_predict_X(X)
        return self.classes_[base_predict(self.estimator_, X)]

    @available_if(base_has("predict_proba"))
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities of the final estimator, columns in the order of ``classes_``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Class probabilities, columns in the order of ``classes_``.
        """
        X = self._check_predict_X(X)
        return base_scores(self.estimator_, X, self.classes_.size)

    @available_if(base_has("decision_function"))
    def decision_function(self, X) -> np.ndarray:
        """Decision values of the final estimator (its own shape: 1-D for two classes).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Decision values: the score of ``classes_[1]``, or one column per class.
        """
        X = self._check_predict_X(X)
        return self.estimator_.decision_function(X)
