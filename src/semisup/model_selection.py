"""Model selection with unlabeled rows: split and score on the labeled rows only.

scikit-learn's splitters treat ``y == -1`` as a class: ``StratifiedKFold`` puts unlabeled
rows into test folds (where they cannot be scored, and where the model never sees them)
and the ``"accuracy"`` scorer counts them as errors. The splitters here cross-validate the
labeled rows and keep **every unlabeled row in every training fold**; the scorers here
ignore ``-1`` rows. Both plug into ``GridSearchCV``, ``cross_val_score``,
``cross_validate`` and ``HalvingGridSearchCV``::

    from sklearn.model_selection import GridSearchCV
    from semisup.model_selection import LabeledStratifiedKFold, labeled_scorer

    search = GridSearchCV(TransductiveSVM(), {"lam": [1e-3, 1e-2], "lam_u": [0.1, 1]},
                          cv=LabeledStratifiedKFold(5, random_state=0),
                          scoring=labeled_scorer("accuracy"))
    search.fit(X, y)          # y == -1 marks the unlabeled rows

Every semisup classifier's own ``score`` already ignores ``-1`` rows, so ``scoring=None``
gives the same numbers as ``labeled_scorer("accuracy")``.

With these, the estimate is inductive: a held-out labeled row is left out of the training
fold altogether. The transductive estimate of the SSL book (the held-out labeled rows stay
in the fit as unlabeled rows, and are scored) needs their labels hidden, which
scikit-learn's splitter API cannot express (``GridSearchCV`` passes ``y[train]`` to
``fit``): :func:`transductive_cross_validate`, :func:`transductive_cross_val_score` and
:class:`TransductiveGridSearchCV` implement it::

    search = TransductiveGridSearchCV(LapRLS(), {"gamma_I": [1e2, 1e3, 1e4]}, cv=5,
                                      random_state=0).fit(X, y)
"""

from __future__ import annotations

import numbers
import time
import warnings

import numpy as np
from sklearn.base import BaseEstimator, MetaEstimatorMixin
from sklearn.metrics import get_scorer
from sklearn.model_selection import (
    BaseCrossValidator,
    StratifiedKFold,
    StratifiedShuffleSplit,
    check_cv,
)
from sklearn.utils.metaestimators import available_if

from semisup._logging import get_logger, warn_at_caller
from semisup._validation import (  # the automatic-mode checks: re-exported
    check_positive_or_auto,  # noqa: F401
    is_auto,  # noqa: F401
    unlabeled_mask,
)
from semisup.base import labeled_rows

logger = get_logger(__name__)

__all__ = ["LabeledSplit", "LabeledStratifiedKFold", "LabeledStratifiedShuffleSplit",
           "ParameterSelection", "TransductiveGridSearchCV", "auto_folds", "labeled_scorer",
           "labeled_cv", "select_parameter", "transductive_cross_val_score",
           "transductive_cross_validate"]


class LabeledSplit(BaseCrossValidator):
    """Apply any scikit-learn splitter to the labeled rows only.

    Each split's training indices are the labeled training rows of the wrapped splitter
    plus every unlabeled row; its test indices are labeled rows only.

    Parameters
    ----------
    cv : cross-validation generator
        A scikit-learn splitter (e.g. ``StratifiedKFold``, ``RepeatedStratifiedKFold``,
        ``GroupKFold``); it sees the labeled rows and their labels.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import KFold
    >>> from semisup.model_selection import LabeledSplit
    >>> y = np.array([0, 0, 1, 1, -1, -1])          # rows 4 and 5 are unlabeled
    >>> for train, test in LabeledSplit(KFold(2)).split(np.zeros((6, 1)), y):
    ...     print(train.tolist(), test.tolist())
    [2, 3, 4, 5] [0, 1]
    [0, 1, 4, 5] [2, 3]
    """

    def __init__(self, cv):
        self.cv = cv

    def _inner(self):
        return self.cv

    def split(self, X, y, groups=None):
        """Generate ``(train, test)`` index arrays.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The rows (only their number is used).
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for unlabeled rows (required).
        groups : array-like of shape (n_samples,), optional
            Passed on (restricted to the labeled rows) to group-aware splitters.

        Yields
        ------
        train : ndarray of int
            The labeled training rows of the split and every unlabeled row, sorted.
        test : ndarray of int
            The held-out labeled rows.
        """
        if y is None:
            raise ValueError(f"{type(self).__name__}.split needs y to tell labeled rows "
                             "(class labels) from unlabeled rows (-1)")
        y = np.asarray(y)
        unl = unlabeled_mask(y)
        labeled = np.flatnonzero(~unl)
        unlabeled = np.flatnonzero(unl)
        if labeled.size == 0:
            raise ValueError("y has no labeled rows (every entry is -1): nothing to "
                             "cross-validate")
        self._check_labels(y[labeled])
        inner_groups = None if groups is None else np.asarray(groups)[labeled]
        X_labeled = np.zeros((labeled.size, 1))  # splitters only look at its length
        with warnings.catch_warnings():
            # _check_labels has already said it, in the labeled rows' terms
            warnings.filterwarnings("ignore", "The least populated class", UserWarning)
            # class codes: labels of any kind (ints as objects beside None) stratify alike
            codes = np.unique(y[labeled], return_inverse=True)[1]
            splits = list(self._inner().split(X_labeled, codes, inner_groups))
        for train, test in splits:
            yield np.sort(np.concatenate([labeled[train], unlabeled])), labeled[test]

    def _check_labels(self, y_labeled: np.ndarray) -> None:
        """Hook: validate the labeled rows before splitting."""

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """Return the number of splits of the wrapped splitter.

        Parameters
        ----------
        X, y, groups : object
            Passed on to the wrapped splitter's ``get_n_splits``.

        Returns
        -------
        int
            Number of ``(train, test)`` pairs :meth:`split` yields.
        """
        return self._inner().get_n_splits(X, y, groups)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.cv!r})"


class LabeledStratifiedKFold(LabeledSplit):
    """Stratified k-fold over the labeled rows; every unlabeled row in every training fold.

    Parameters
    ----------
    n_splits : int, default=5
        Number of folds; at most the size of the smallest labeled class.
    shuffle : bool, default=True
        Shuffle the labeled rows of each class before splitting. Labeled rows usually
        come sorted by class or by time, so shuffling is the default (unlike
        ``StratifiedKFold``).
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffle; an int gives the same folds on every call.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.model_selection import LabeledStratifiedKFold
    >>> y = np.array([0, 0, 1, 1, -1, -1])
    >>> cv = LabeledStratifiedKFold(2, random_state=0)
    >>> for train, test in cv.split(np.zeros((6, 1)), y):
    ...     print(train.tolist(), test.tolist())
    [0, 3, 4, 5] [1, 2]
    [1, 2, 4, 5] [0, 3]
    """

    def __init__(self, n_splits: int = 5, *, shuffle: bool = True, random_state=None):
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state

    def _inner(self):
        if not isinstance(self.n_splits, numbers.Integral) or self.n_splits < 2:
            raise ValueError(f"n_splits must be an integer >= 2, got {self.n_splits!r}")
        return StratifiedKFold(self.n_splits, shuffle=self.shuffle,
                               random_state=self.random_state if self.shuffle else None)

    def _check_labels(self, y_labeled: np.ndarray) -> None:
        classes, counts = np.unique(y_labeled, return_counts=True)
        if counts.min() < self.n_splits:
            small = classes[np.argmin(counts)]
            if counts.max() < self.n_splits:
                raise ValueError(
                    f"n_splits={self.n_splits} is larger than every labeled class (largest "
                    f"has {counts.max()} rows): lower n_splits, or use "
                    "LabeledStratifiedShuffleSplit")
            warn_at_caller(f"The least populated labeled class ({small!r}) has only "
                           f"{counts.min()} rows, fewer than n_splits={self.n_splits}: some "
                           "test folds miss it; lower n_splits for balanced folds",
                           UserWarning)

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """Return ``n_splits``.

        Parameters
        ----------
        X, y, groups : object
            Ignored; present for the scikit-learn splitter API.

        Returns
        -------
        int
            Number of ``(train, test)`` pairs :meth:`split` yields.
        """
        return self.n_splits

    def __repr__(self) -> str:
        return (f"LabeledStratifiedKFold(n_splits={self.n_splits}, shuffle={self.shuffle}, "
                f"random_state={self.random_state!r})")


class LabeledStratifiedShuffleSplit(LabeledSplit):
    """Repeated stratified random splits of the labeled rows (for very few labels).

    Parameters
    ----------
    n_splits : int, default=10
        Number of re-shuffles.
    test_size : float or int, default=0.2
        Fraction (or number) of the labeled rows held out in each split.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffles; an int gives the same splits on every call.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.model_selection import LabeledStratifiedShuffleSplit
    >>> y = np.array([0, 0, 1, 1, -1, -1])
    >>> cv = LabeledStratifiedShuffleSplit(2, test_size=0.5, random_state=0)
    >>> for train, test in cv.split(np.zeros((6, 1)), y):
    ...     print(train.tolist(), sorted(test.tolist()))
    [1, 2, 4, 5] [0, 3]
    [0, 2, 4, 5] [1, 3]
    """

    def __init__(self, n_splits: int = 10, *, test_size=0.2, random_state=None):
        self.n_splits = n_splits
        self.test_size = test_size
        self.random_state = random_state

    def _inner(self):
        return StratifiedShuffleSplit(self.n_splits, test_size=self.test_size,
                                      random_state=self.random_state)

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """Return ``n_splits``.

        Parameters
        ----------
        X, y, groups : object
            Ignored; present for the scikit-learn splitter API.

        Returns
        -------
        int
            Number of ``(train, test)`` pairs :meth:`split` yields.
        """
        return self.n_splits

    def __repr__(self) -> str:
        return (f"LabeledStratifiedShuffleSplit(n_splits={self.n_splits}, "
                f"test_size={self.test_size!r}, random_state={self.random_state!r})")


def labeled_cv(cv=5, *, random_state=None) -> LabeledSplit:
    """Turn a ``cv`` argument into a splitter over the labeled rows.

    Parameters
    ----------
    cv : int, splitter or LabeledSplit, default=5
        An int gives :class:`LabeledStratifiedKFold` with that many folds; a
        scikit-learn splitter is wrapped in :class:`LabeledSplit`; a ``LabeledSplit`` is
        returned unchanged.
    random_state : int or None
        Seed for the folds when ``cv`` is an int.

    Returns
    -------
    LabeledSplit
        A splitter whose test folds are labeled rows and whose training folds hold every
        unlabeled row.
    """
    if isinstance(cv, LabeledSplit):
        return cv
    if isinstance(cv, numbers.Integral):
        return LabeledStratifiedKFold(int(cv), random_state=random_state)
    return LabeledSplit(check_cv(cv, classifier=True))


class _LabeledScorer:
    """A scorer that drops the rows with ``y == -1`` before calling the wrapped one."""

    def __init__(self, scorer, name: str):
        self._scorer = scorer
        self._name = name

    def __call__(self, estimator, X, y, sample_weight=None, **kwargs) -> float:
        keep, weights = labeled_rows(y, sample_weight)
        y = np.asarray(y)
        if not keep.all():
            rows = np.flatnonzero(keep)
            X = X.iloc[rows] if hasattr(X, "iloc") else X[rows]
            y = y[keep]
        if weights is not None:
            kwargs["sample_weight"] = weights
        return self._scorer(estimator, X, y, **kwargs)

    def __repr__(self) -> str:
        return f"labeled_scorer({self._name!r})"


def labeled_scorer(scoring="accuracy"):
    """A scikit-learn scorer that ignores unlabeled (``y == -1``) rows.

    Parameters
    ----------
    scoring : str or callable, default="accuracy"
        Any of scikit-learn's scoring names (``"accuracy"``, ``"balanced_accuracy"``,
        ``"f1"``, ``"roc_auc"``, ``"neg_log_loss"``...) or a scorer callable
        ``scorer(estimator, X, y)``.

    Returns
    -------
    callable
        ``scorer(estimator, X, y, sample_weight=None)``; usable as ``scoring=`` in
        ``GridSearchCV`` and ``cross_val_score``.
    """
    if isinstance(scoring, str):
        return _LabeledScorer(get_scorer(scoring), scoring)
    if callable(scoring):
        return _LabeledScorer(scoring, getattr(scoring, "__name__", repr(scoring)))
    raise ValueError(f"scoring must be a scoring name or a callable, got {scoring!r}")



# --------------------------------------------------------------------------------------------
# transductive cross-validation: held-out labeled rows stay in the fit as unlabeled rows
# --------------------------------------------------------------------------------------------


def _hide(y: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Copy of ``y`` with every labeled row outside ``keep`` marked unlabeled (``-1``)."""
    if y.dtype.kind == "U" and y.dtype.itemsize < 2 * np.dtype("<U1").itemsize:
        y = y.astype("<U2")   # room for the string '-1'
    y_fit = y.copy()
    hidden = np.ones(y.shape[0], dtype=bool)
    hidden[keep] = False
    y_fit[hidden & ~unlabeled_mask(y)] = -1
    return y_fit


def _transductive_splits(cv, X, y: np.ndarray, groups, random_state) -> list:
    """``[(train_labeled, test), ...]``: the labeled rows whose labels each fit keeps, and
    the held-out labeled rows it is scored on."""
    if y.dtype.kind == "b":
        raise ValueError("y is boolean, so it cannot mark hidden rows with -1: use integer "
                         "or string class labels")
    unl = unlabeled_mask(y)
    labeled = np.flatnonzero(~unl)
    if labeled.size == 0:
        raise ValueError("y has no labeled rows (every entry is -1): transductive "
                         "cross-validation needs labeled rows to hold out")
    if isinstance(cv, numbers.Integral) or isinstance(cv, LabeledStratifiedKFold):
        cv = labeled_cv(cv, random_state=random_state)
        classes, counts = np.unique(y[labeled], return_counts=True)
        if counts.min() < cv.n_splits:
            raise ValueError(
                f"class {classes[np.argmin(counts)]!r} has {counts.min()} labeled rows, "
                f"fewer than the {cv.n_splits} folds (cv={cv.n_splits}): lower cv to at most "
                "the smallest labeled class, or pass "
                "cv=LabeledStratifiedShuffleSplit(...) or explicit (train, test) folds")
    if isinstance(cv, str):
        raise ValueError("cv must be an int, a splitter with a split method or an iterable "
                         f"of (train, test) index arrays, got {cv!r}")
    if hasattr(cv, "split"):
        splitter = cv if isinstance(cv, LabeledSplit) else LabeledSplit(cv)
        folds = list(splitter.split(X, y, groups))
    else:   # an iterable of (train, test) index arrays
        try:
            folds = [(np.asarray(tr), np.asarray(te)) for tr, te in cv]
        except (TypeError, ValueError):
            raise ValueError("cv must be an int, a splitter with a split method or an "
                             f"iterable of (train, test) index arrays, got {cv!r}") from None
    if not folds:
        raise ValueError("cv gave no folds")
    out = []
    n = y.shape[0]
    for train, test in folds:
        train, test = np.asarray(train, dtype=np.intp), np.asarray(test, dtype=np.intp)
        if test.size == 0:
            raise ValueError("a fold of cv has an empty test set")
        if train.size and (train.min() < -n or train.max() >= n) \
                or test.min() < -n or test.max() >= n:
            raise ValueError(f"cv gave row indices outside the {n} rows of X")
        test = np.sort(test % n)
        if unl[test].any():
            raise ValueError("cv holds out unlabeled rows (y == -1), which cannot be "
                             "scored: use a LabeledSplit, or folds over labeled rows only")
        train = np.setdiff1d(train % n, test)
        out.append((train[~unl[train]], test))
    return out


def _multimetric(scoring):
    """``(scorers, multimetric)``: a dict name -> scorer callable."""
    if scoring is None or isinstance(scoring, str) or callable(scoring):
        return {"score": scoring}, False
    if isinstance(scoring, dict):
        if not scoring:
            raise ValueError("scoring is an empty dict: give at least one scorer")
        return dict(scoring), True
    if isinstance(scoring, (list, tuple, set)):
        names = list(scoring)
        if not names or not all(isinstance(s, str) for s in names) \
                or len(set(names)) != len(names):
            raise ValueError("scoring as a list must hold distinct scorer names, got "
                             f"{scoring!r}")
        return {s: s for s in names}, True
    raise ValueError("scoring must be None, a scorer name, a callable, or a list/dict of "
                     f"them, got {scoring!r}")


def _check_scorers(estimator, scoring) -> tuple[dict, bool]:
    from sklearn.metrics import check_scoring

    scorers, multi = _multimetric(scoring)
    return {k: check_scoring(estimator, v) for k, v in scorers.items()}, multi


def _index_rows(X, rows):
    from sklearn.utils import _safe_indexing

    return _safe_indexing(X, rows, axis=0)


def _fit_and_score_path(estimator, X, y, train, test, candidates, scorers, fit_params,
                        return_train_score, return_estimator, error_score):
    """Fit ``estimator`` on all rows of ``X`` with only ``y[train]`` labeled, once per
    candidate (in order, on one estimator object so that ``warm_start`` carries over), and
    score each fit on the held-out rows ``test``."""
    from sklearn.base import clone
    from sklearn.exceptions import FitFailedWarning

    y_fit = _hide(y, train)
    X_test, y_test = _index_rows(X, test), y[test]
    if return_train_score:
        X_train, y_train = _index_rows(X, train), y[train]
    est = clone(estimator)
    results = []
    for params in candidates:
        est.set_params(**{k: clone(v, safe=False) for k, v in params.items()})
        res = {}
        t0 = time.perf_counter()
        try:
            est.fit(X, y_fit, **fit_params)
            failed = None
        except Exception as exc:   # noqa: BLE001 - reported as error_score, as scikit-learn
            if isinstance(error_score, str) and error_score == "raise":
                raise
            failed = exc
        res["fit_time"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        if failed is None:
            res["test"] = {k: _score(s, est, X_test, y_test, error_score)
                           for k, s in scorers.items()}
            if return_train_score:
                res["train"] = {k: _score(s, est, X_train, y_train, error_score)
                                for k, s in scorers.items()}
        else:
            warn_at_caller(f"a fit failed ({type(failed).__name__}: {failed}) with "
                           f"{params}; its scores are error_score={error_score!r}",
                           FitFailedWarning)
            res["test"] = dict.fromkeys(scorers, error_score)
            if return_train_score:
                res["train"] = dict.fromkeys(scorers, error_score)
        res["score_time"] = time.perf_counter() - t0
        if return_estimator:
            res["estimator"] = clone(est).set_params(**params) if failed else \
                _snapshot(est)
        results.append(res)
    return results


def _snapshot(est):
    """An independent copy of a fitted estimator (the path goes on refitting ``est``)."""
    import copy

    return copy.deepcopy(est)


def _score(scorer, est, X, y, error_score) -> float:
    try:
        value = scorer(est, X, y)
    except Exception:
        if isinstance(error_score, str) and error_score == "raise":
            raise
        warn_at_caller("scoring failed; the score is error_score="
                       f"{error_score!r}", UserWarning)
        return error_score
    return float(value)


def _run(estimator, X, y, groups, candidates, path, cv, scoring, n_jobs, fit_params,
         return_train_score, return_estimator, error_score, random_state, pre_dispatch):
    """Evaluate every candidate on every fold; ``(folds, scorers, multimetric, table)`` where
    ``table[c][f]`` is the result of candidate ``c`` on fold ``f``."""
    from sklearn.utils.parallel import Parallel, delayed

    y = np.asarray(y)
    n = _n_rows(X)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y must be 1-d with one entry per row of X ({n}), got shape "
                         f"{y.shape}")
    if isinstance(error_score, str) and error_score != "raise" \
            or not isinstance(error_score, str) and not isinstance(error_score, numbers.Number):
        raise ValueError(f"error_score must be a number or 'raise', got {error_score!r}")
    folds = _transductive_splits(cv, X, y, groups, random_state)
    scorers, multi = _check_scorers(estimator, scoring)
    groups_of = _path_groups(candidates, path)
    fit_params = {} if fit_params is None else dict(fit_params)
    logger.info("transductive CV: %d candidates x %d folds = %d fits (%d jobs)",
                len(candidates), len(folds), len(candidates) * len(folds),
                len(groups_of) * len(folds))
    jobs = [(g, f) for g in range(len(groups_of)) for f in range(len(folds))]
    out = Parallel(n_jobs=n_jobs, pre_dispatch=pre_dispatch)(
        delayed(_fit_and_score_path)(estimator, X, y, folds[f][0], folds[f][1],
                                     [candidates[c] for c in groups_of[g]], scorers,
                                     fit_params, return_train_score, return_estimator,
                                     error_score)
        for g, f in jobs)
    table = [[None] * len(folds) for _ in candidates]
    for (g, f), results in zip(jobs, out, strict=True):
        for c, res in zip(groups_of[g], results, strict=True):
            table[c][f] = res
    return folds, scorers, multi, table


def _n_rows(X) -> int:
    shape = getattr(X, "shape", None)
    return int(shape[0]) if shape is not None else len(X)


def _path_groups(candidates: list, path) -> list:
    """Candidate indices grouped into runs that differ only in the ``path`` parameter."""
    if path is None:
        return [[c] for c in range(len(candidates))]
    groups, index = [], {}
    for c, params in enumerate(candidates):
        if path not in params:
            raise ValueError(f"path={path!r} is not a parameter of every grid point (missing "
                             f"from {params}): name a parameter of param_grid or use None")
        # values come from the grid's own lists: the same object means the same value
        key = tuple((k, id(v)) for k, v in sorted(params.items()) if k != path)
        if key not in index:
            index[key] = len(groups)
            groups.append([])
        groups[index[key]].append(c)
    return groups


def transductive_cross_validate(estimator, X, y, *, groups=None, cv=5, scoring=None,
                                n_jobs: int | None = None, fit_params: dict | None = None,
                                return_train_score: bool = False,
                                return_estimator: bool = False, return_indices: bool = False,
                                error_score=np.nan, random_state=None,
                                pre_dispatch="2*n_jobs") -> dict:
    """Transductive cross-validation: held-out labeled rows stay in the fit, unlabeled.

    In each fold the estimator is fitted on **all** rows of ``X``; the held-out labeled
    rows get the label ``-1`` (they stay in the graph, the kernel and the unlabeled part
    of the objective, exactly as the rows to be predicted in the final fit), and the fold
    is scored on them with their true labels. This is the protocol of the SSL book
    (Chapelle, Schölkopf & Zien, ch. 21) and of the manifold-regularization and PVM
    papers. scikit-learn's splitter API cannot express it: ``cross_validate`` and
    ``GridSearchCV`` pass ``y[train]`` to ``fit`` and drop the test rows from ``X``
    (:class:`LabeledStratifiedKFold` gives the inductive estimate instead).

    Because ``X`` is the same in every fold, anything computed from ``X`` alone (a graph,
    a Gram matrix) is the same in every fold and for every candidate: compute it once and
    pass it (e.g. ``graph=W`` and ``kernel="precomputed"`` with ``X`` the Gram matrix).

    Parameters
    ----------
    estimator : estimator
        A classifier following the ``y == -1`` convention (cloned for every fold).
    X : array-like or sparse matrix of shape (n_samples, n_features)
        All rows: labeled and unlabeled (a precomputed Gram matrix over all rows works as
        well, since the rows are never subset for fitting).
    y : array-like of shape (n_samples,)
        Class labels, ``-1`` for unlabeled rows.
    groups : array-like of shape (n_samples,), optional
        Group labels for a group-aware splitter ``cv``.
    cv : int, splitter or iterable, default=5
        An int gives :class:`LabeledStratifiedKFold` with that many folds (shuffled with
        ``random_state``); it must not exceed the smallest labeled class. A scikit-learn
        splitter is applied to the labeled rows only (:class:`LabeledSplit`). An iterable
        of ``(train, test)`` index arrays into the rows of ``X`` is used as given: each fit
        keeps the labels of the labeled rows in ``train`` only, and ``test`` must hold
        labeled rows only.
    scoring : str, callable, list, dict or None, default=None
        A scikit-learn scorer name or callable ``scorer(estimator, X, y)``; a list of
        names or a dict name -> scorer for several metrics. ``None`` uses
        ``estimator.score``.
    n_jobs : int or None, default=None
        Folds (and grid points) run in parallel through joblib.
    fit_params : dict or None, default=None
        Passed to every ``fit`` (e.g. ``sample_weight`` over all rows).
    return_train_score : bool, default=False
        Also score each fit on the labeled rows it was fitted with.
    return_estimator : bool, default=False
        Keep the fitted estimator of every fold.
    return_indices : bool, default=False
        Return the labeled rows kept (``"train"``) and held out (``"test"``) in each fold.
    error_score : 'raise' or float, default=np.nan
        Score of a fold whose fit fails (with a ``FitFailedWarning``); ``'raise'``
        re-raises the error.
    random_state : int, RandomState instance or None, default=None
        Seed of the folds when ``cv`` is an int; an int gives the same folds every call.
    pre_dispatch : int or str, default='2*n_jobs'
        Passed to :class:`joblib.Parallel`.

    Returns
    -------
    dict
        Arrays of length ``n_splits``: ``fit_time``, ``score_time``, ``test_score`` (or
        ``test_<name>`` for several metrics), ``train_score`` / ``train_<name>`` if asked,
        ``estimator`` (list) and ``indices`` (dict of lists) if asked.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import L2SVM
    >>> from semisup.model_selection import transductive_cross_validate
    >>> X = np.array([[-2.0], [-1.5], [-1.0], [1.0], [1.5], [2.0], [-0.5], [0.5]])
    >>> y = np.array([1, 1, 1, 2, 2, 2, -1, -1])
    >>> res = transductive_cross_validate(L2SVM(), X, y, cv=3, random_state=0)
    >>> res["test_score"]
    array([1., 1., 1.])
    """
    folds, scorers, multi, table = _run(
        estimator, X, y, groups, [{}], None, cv, scoring, n_jobs, fit_params,
        return_train_score, return_estimator, error_score, random_state, pre_dispatch)
    rows = table[0]
    out = {"fit_time": np.array([r["fit_time"] for r in rows]),
           "score_time": np.array([r["score_time"] for r in rows])}
    for name in scorers:
        key = name if multi else "score"
        out[f"test_{key}"] = np.array([r["test"][name] for r in rows])
        if return_train_score:
            out[f"train_{key}"] = np.array([r["train"][name] for r in rows])
    if return_estimator:
        out["estimator"] = [r["estimator"] for r in rows]
    if return_indices:
        out["indices"] = {"train": [tr for tr, _ in folds], "test": [te for _, te in folds]}
    return out


def transductive_cross_val_score(estimator, X, y, *, groups=None, cv=5, scoring=None,
                                 n_jobs: int | None = None, fit_params: dict | None = None,
                                 error_score=np.nan, random_state=None) -> np.ndarray:
    """Return the scores of :func:`transductive_cross_validate`, one per fold.

    Parameters
    ----------
    estimator : estimator
        A classifier following the ``y == -1`` convention.
    X : array-like or sparse matrix of shape (n_samples, n_features)
        All rows, labeled and unlabeled.
    y : array-like of shape (n_samples,)
        Class labels, ``-1`` for unlabeled rows.
    groups : array-like of shape (n_samples,), optional
        Group labels for a group-aware splitter ``cv``.
    cv : int, splitter or iterable, default=5
        As in :func:`transductive_cross_validate`.
    scoring : str, callable or None, default=None
        One scorer name or callable; ``None`` uses ``estimator.score``.
    n_jobs : int or None, default=None
        Folds run in parallel through joblib.
    fit_params : dict or None, default=None
        Passed to every ``fit``.
    error_score : 'raise' or float, default=np.nan
        Score of a fold whose fit fails.
    random_state : int, RandomState instance or None, default=None
        Seed of the folds when ``cv`` is an int.

    Returns
    -------
    ndarray of shape (n_splits,)
        The score of each fold on its held-out labeled rows.
    """
    if isinstance(scoring, (list, tuple, set, dict)):
        raise ValueError("transductive_cross_val_score takes one scorer; use "
                         "transductive_cross_validate for several")
    return transductive_cross_validate(
        estimator, X, y, groups=groups, cv=cv, scoring=scoring, n_jobs=n_jobs,
        fit_params=fit_params, error_score=error_score,
        random_state=random_state)["test_score"]


def _rank(means: np.ndarray) -> np.ndarray:
    """Rank 1 = best (largest) mean; NaN ranks last, as scikit-learn's searches."""
    from scipy.stats import rankdata

    if np.isnan(means).all():
        return np.ones(means.size, dtype=np.int32)
    filled = np.where(np.isnan(means), np.nanmin(means) - 1.0, means)
    return rankdata(-filled, method="min").astype(np.int32)


def _estimator_has(attr: str):
    def check(self) -> bool:
        if hasattr(self, "best_estimator_"):
            return hasattr(self.best_estimator_, attr)
        return hasattr(self.estimator, attr)
    return check


class TransductiveGridSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Exhaustive grid search scored by transductive cross-validation.

    Every grid point is evaluated as in :func:`transductive_cross_validate`: in each fold
    the estimator is fitted on **all** rows with the held-out labeled rows relabeled
    ``-1`` and scored on those rows with their true labels (the SSL book's protocol:
    the held-out rows stay in the graph and the unlabeled data). scikit-learn's
    ``GridSearchCV`` cannot do this, since it passes the held-out labels in ``y[train]``.
    The attributes follow ``GridSearchCV``: ``cv_results_``, ``best_params_``,
    ``best_score_``, ``best_estimator_`` (refitted on all rows with every label).

    Parameters
    ----------
    estimator : estimator
        A classifier following the ``y == -1`` convention.
    param_grid : dict or list of dict
        Parameter names -> lists of values, as in ``GridSearchCV``. Grid points are
        evaluated in ``ParameterGrid`` order and ties go to the first one.
    scoring : str, callable, list, dict or None, default=None
        A scikit-learn scorer name or callable ``scorer(estimator, X, y)``, or a list/dict
        of them (then ``refit`` names the one that picks the best). ``None`` uses
        ``estimator.score``.
    n_jobs : int or None, default=None
        Fits run in parallel through joblib (``-1``: all cores).
    refit : bool, str or callable, default=True
        Refit the best grid point on all rows with all labels (``best_estimator_``). With
        several metrics, the name of the one that picks it; a callable takes
        ``cv_results_`` and returns the index of the best grid point.
    cv : int, splitter or iterable, default=5
        As in :func:`transductive_cross_validate`: an int gives
        :class:`LabeledStratifiedKFold` seeded by ``random_state``; a splitter is applied
        to the labeled rows; explicit ``(train, test)`` index arrays are used as given.
        The folds are drawn once and shared by every grid point.
    path : str or None, default=None
        A parameter of the grid whose values are fitted in grid order by one estimator
        object per fold and per combination of the other parameters, so that an estimator
        with ``warm_start=True`` starts each fit from the previous solution (e.g.
        ``path="gamma_I"`` for ``LinearLapRLS``). ``None`` fits every grid point afresh.
    random_state : int, RandomState instance or None, default=None
        Seed of the folds when ``cv`` is an int; an int makes ``cv_results_`` (apart from
        times) the same on every call.
    error_score : 'raise' or float, default=np.nan
        Score of a fit that fails (with a ``FitFailedWarning``); ``'raise'`` re-raises.
    return_train_score : bool, default=False
        Also score each fit on the labeled rows it kept.
    pre_dispatch : int or str, default='2*n_jobs'
        Passed to :class:`joblib.Parallel`.

    Attributes
    ----------
    cv_results_ : dict of ndarray
        scikit-learn's layout: ``params``, ``param_<name>`` (masked arrays),
        ``split<k>_test_<score>``, ``mean_test_<score>``, ``std_test_<score>``,
        ``rank_test_<score>`` (``<score>`` is ``score`` for one metric), the train
        versions if asked, and ``mean_fit_time``, ``std_fit_time``, ``mean_score_time``,
        ``std_score_time``.
    best_index_ : int
        Index of the best grid point in ``cv_results_`` (first of the best on ties).
    best_params_ : dict
        Its parameters.
    best_score_ : float
        Its mean cross-validated score (not set when ``refit`` is a callable).
    best_estimator_ : estimator
        The best grid point refitted on all rows with every label (if ``refit``).
    refit_time_ : float
        Seconds of that refit.
    scorer_ : callable or dict
        The scorer(s) used.
    multimetric_ : bool
        Whether several metrics were evaluated.
    n_splits_ : int
        Number of folds.
    folds_ : list of tuple of ndarray
        ``(train_labeled, test)`` row indices of every fold: the labeled rows each fit
        kept and the held-out rows it was scored on.
    classes_ : ndarray
        Class labels of ``best_estimator_``.
    n_features_in_ : int
        Number of features of ``best_estimator_``.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import L2SVM
    >>> from semisup.model_selection import TransductiveGridSearchCV
    >>> X = np.array([[-2.0], [-1.5], [-1.0], [1.0], [1.5], [2.0], [-0.5], [0.5]])
    >>> y = np.array([1, 1, 1, 2, 2, 2, -1, -1])
    >>> search = TransductiveGridSearchCV(L2SVM(), {"lam": [1e-2, 1.0]}, cv=3,
    ...                                   random_state=0).fit(X, y)
    >>> search.best_params_
    {'lam': 0.01}
    """

    def __init__(self, estimator, param_grid, *, scoring=None, n_jobs: int | None = None,
                 refit=True, cv=5, path: str | None = None, random_state=None,
                 error_score=np.nan, return_train_score: bool = False,
                 pre_dispatch="2*n_jobs"):
        self.estimator = estimator
        self.param_grid = param_grid
        self.scoring = scoring
        self.n_jobs = n_jobs
        self.refit = refit
        self.cv = cv
        self.path = path
        self.random_state = random_state
        self.error_score = error_score
        self.return_train_score = return_train_score
        self.pre_dispatch = pre_dispatch

    def fit(self, X, y, groups=None, **fit_params) -> TransductiveGridSearchCV:
        """Evaluate every grid point by transductive CV, then refit the best.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            All rows, labeled and unlabeled (or a precomputed Gram matrix over them).
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for unlabeled rows.
        groups : array-like of shape (n_samples,), optional
            Group labels for a group-aware splitter ``cv``.
        **fit_params : dict
            Passed to every ``fit`` of the estimator (e.g. ``sample_weight``).

        Returns
        -------
        self : TransductiveGridSearchCV
            The fitted search.
        """
        from sklearn.base import clone
        from sklearn.model_selection import ParameterGrid

        try:
            candidates = list(ParameterGrid(self.param_grid))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"param_grid: {exc}") from None
        if not candidates:
            raise ValueError("param_grid is empty: give at least one grid point")
        if self.path is not None and not isinstance(self.path, str):
            raise ValueError(f"path must be a parameter name or None, got {self.path!r}")
        self._refit_metric(*_multimetric(self.scoring))   # before any fit
        folds, scorers, multi, table = _run(
            self.estimator, X, y, groups, candidates, self.path, self.cv, self.scoring,
            self.n_jobs, fit_params, self.return_train_score, False, self.error_score,
            self.random_state, self.pre_dispatch)
        refit_metric = self._refit_metric(scorers, multi)
        self.multimetric_ = multi
        self.scorer_ = scorers if multi else scorers["score"]
        self.n_splits_ = len(folds)
        self.folds_ = folds
        self.cv_results_ = self._results(candidates, table, scorers, multi)
        if callable(self.refit):
            self.best_index_ = int(self.refit(self.cv_results_))
            if not 0 <= self.best_index_ < len(candidates):
                raise ValueError(f"refit returned {self.best_index_}, not the index of a "
                                 f"grid point (0..{len(candidates) - 1})")
        elif refit_metric is not None:
            rank = self.cv_results_[f"rank_test_{refit_metric}"]
            self.best_index_ = int(np.argmin(rank))    # first of the best on ties
            self.best_score_ = float(
                self.cv_results_[f"mean_test_{refit_metric}"][self.best_index_])
        if hasattr(self, "best_index_"):
            self.best_params_ = candidates[self.best_index_]
        if self.refit:
            est = clone(self.estimator).set_params(
                **{k: clone(v, safe=False) for k, v in self.best_params_.items()})
            t0 = time.perf_counter()
            est.fit(X, y, **fit_params)
            self.refit_time_ = time.perf_counter() - t0
            self.best_estimator_ = est
            for attr in ("n_features_in_", "feature_names_in_"):
                if hasattr(est, attr):
                    setattr(self, attr, getattr(est, attr))
        return self

    def _refit_metric(self, scorers: dict, multi: bool):
        if not multi:
            return "score"
        if callable(self.refit):
            return None
        if isinstance(self.refit, str):
            if self.refit not in scorers:
                raise ValueError(f"refit={self.refit!r} is not one of the scorers "
                                 f"{sorted(scorers)}")
            return self.refit
        if self.refit:
            raise ValueError("with several metrics, refit must name the one that picks "
                             f"the best grid point (one of {sorted(scorers)}), be a "
                             "callable, or be False")
        return None

    def _results(self, candidates: list, table: list, scorers: dict, multi: bool) -> dict:
        n_c, n_f = len(candidates), len(table[0])
        res = {}
        for key in ("fit_time", "score_time"):
            arr = np.array([[table[c][f][key] for f in range(n_f)] for c in range(n_c)])
            res[f"mean_{key}"] = arr.mean(axis=1)
            res[f"std_{key}"] = arr.std(axis=1)
        names = sorted({k for params in candidates for k in params})
        for name in names:
            col = np.ma.MaskedArray(np.empty(n_c, dtype=object), mask=True)
            for c, params in enumerate(candidates):
                if name in params:
                    col[c] = params[name]
            res[f"param_{name}"] = col
        res["params"] = candidates
        sets = ("test", "train") if self.return_train_score else ("test",)
        for which in sets:
            for name in scorers:
                key = name if multi else "score"
                arr = np.array([[table[c][f][which][name] for f in range(n_f)]
                                for c in range(n_c)], dtype=float)
                for f in range(n_f):
                    res[f"split{f}_{which}_{key}"] = arr[:, f]
                res[f"mean_{which}_{key}"] = arr.mean(axis=1)
                res[f"std_{which}_{key}"] = arr.std(axis=1)
                if which == "test":
                    res[f"rank_test_{key}"] = _rank(res[f"mean_test_{key}"])
        return res

    def _check_refitted(self, method: str):
        if not hasattr(self, "best_estimator_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"{method} needs the refitted best estimator: call fit with "
                                 "refit=True first")
        return self.best_estimator_

    @available_if(_estimator_has("predict"))
    def predict(self, X):
        """Predict with the refitted best estimator.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        return self._check_refitted("predict").predict(X)

    @available_if(_estimator_has("decision_function"))
    def decision_function(self, X):
        """Decision values of the refitted best estimator.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray
            The best estimator's ``decision_function`` output.
        """
        return self._check_refitted("decision_function").decision_function(X)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """Class probabilities of the refitted best estimator.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Class probabilities, columns in the order of ``classes_``.
        """
        return self._check_refitted("predict_proba").predict_proba(X)

    def score(self, X, y) -> float:
        """Score of the refitted best estimator with the search's (refit) scorer.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Rows to score.
        y : array-like of shape (n_samples,)
            True labels; ``-1`` rows are ignored.

        Returns
        -------
        float
            The refit scorer's value on the labeled rows.
        """
        est = self._check_refitted("score")
        if self.multimetric_ and not isinstance(self.refit, str):
            raise ValueError("score needs one metric: with several, set refit to its name")
        scorer = self.scorer_[self.refit] if self.multimetric_ else self.scorer_
        keep, _ = labeled_rows(y)
        return float(scorer(est, _index_rows(X, np.flatnonzero(keep)), np.asarray(y)[keep]))

    @property
    def classes_(self) -> np.ndarray:
        """Class labels of the refitted best estimator."""
        return self._check_refitted("classes_").classes_

    @property
    def transduction_(self) -> np.ndarray:
        """Labels the refitted best estimator gave to the rows it was fitted on."""
        return self._check_refitted("transduction_").transduction_


# --------------------------------------------------------------------------------------------
# automatic parameter modes (lam="auto", gamma_I="auto"): one selection routine for all
# --------------------------------------------------------------------------------------------

#: Most folds of an automatic mode; fewer when the smallest labeled class is smaller.
AUTO_MAX_FOLDS = 5


def auto_folds(y, random_state=None) -> list | None:
    """Return the folds of the automatic modes: ``[(train_labeled, test), ...]`` or ``None``.

    Stratified k-fold over the labeled rows with ``k = min(5, smallest class)``, repeated
    ``ceil(5 / k)`` times with fresh shuffles when ``k < 5`` (so that every value is judged
    on at least 5 held-out splits even with 2 labels per class). ``None`` when a class has
    a single labeled row: it cannot be both kept and held out.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Class labels, ``-1`` for unlabeled rows.
    random_state : int, RandomState instance or None, default=None
        Seed of the shuffles; ``None`` means a fixed seed (0), so fits repeat.

    Returns
    -------
    list of (ndarray, ndarray) or None
        Labeled rows kept and labeled rows held out (row indices into ``y``).

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.model_selection import auto_folds
    >>> y = np.array([0, 0, 1, 1, -1, -1])
    >>> len(auto_folds(y, random_state=0))     # k = 2 folds, repeated 3 times
    6
    >>> auto_folds(np.array([0, 1, 1, -1])) is None
    True
    """
    from sklearn.model_selection import RepeatedStratifiedKFold

    y = np.asarray(y)
    labeled = ~unlabeled_mask(y)
    _, counts = np.unique(y[labeled], return_counts=True)
    if counts.size < 2 or counts.min() < 2:
        return None
    k = int(min(AUTO_MAX_FOLDS, counts.min()))
    repeats = -(-AUTO_MAX_FOLDS // k)
    seed = 0 if random_state is None else random_state
    cv = LabeledSplit(RepeatedStratifiedKFold(n_splits=k, n_repeats=repeats,
                                              random_state=seed))
    return _transductive_splits(cv, None, y, None, None)


class ParameterSelection:
    """Result of :func:`select_parameter`.

    Parameters
    ----------
    name, best, cv_results, folds, fallback : object
        Stored as the attributes of the same names.

    Attributes
    ----------
    name : str
        The parameter selected.
    best : float
        The chosen value (the documented default when there was no CV).
    cv_results : dict
        ``params``, ``param_<name>``, ``split<k>_test_score``, ``mean_test_score``,
        ``std_test_score`` and ``rank_test_score`` over the values in the order tried
        (held-out accuracy; scikit-learn's layout). Scores are NaN without CV.
    folds : list or None
        ``(train_labeled, test)`` row indices of every fold.
    fallback : bool
        Whether the default was used because a class had a single labeled row.
    """

    def __init__(self, name, best, cv_results, folds, fallback):
        self.name = name
        self.best = best
        self.cv_results = cv_results
        self.folds = folds
        self.fallback = fallback


def _path_held_out(estimator, X, y, name, values, folds, fit_params) -> np.ndarray:
    """Held-out accuracy ``[value, fold]`` by refitting ``estimator`` along ``values``.

    One estimator object per fold fits the values in order with ``warm_start=True`` (where
    the estimator has it), so each fit starts from the previous value's solution.
    """
    from sklearn.base import clone
    from sklearn.exceptions import ConvergenceWarning

    from semisup._validation import CollapseWarning, LabelCodingWarning

    params = estimator.get_params(deep=False)
    # the guard of semisup.safety is a selection of its own: every CV fit is the plain method
    fixed = {k: v for k, v in (("verbose", 0), ("probability", False), ("warm_start", True),
                               ("fallback", "none")) if k in params}
    acc = np.empty((len(values), len(folds)))
    for f, (train, test) in enumerate(folds):
        est = clone(estimator).set_params(**fixed)
        y_fit = _hide(y, train)
        X_test = _index_rows(X, test)
        for v, value in enumerate(values):
            est.set_params(**{name: value})
            with warnings.catch_warnings():
                # a fold fit is one estimate among many; the final refit warns for itself
                warnings.simplefilter("ignore", CollapseWarning)
                warnings.simplefilter("ignore", ConvergenceWarning)
                # hiding labels can make a 0/1 y look like SVMlin's -1/0/+1 coding
                warnings.simplefilter("ignore", LabelCodingWarning)
                est.fit(X, y_fit, **fit_params)
            acc[v, f] = np.mean(est.predict(X_test) == y[test])
    return acc


def select_parameter(estimator, X, y, name: str, values, *, default,
                     random_state=None, fit_params: dict | None = None,
                     held_out=None) -> ParameterSelection:
    """Choose one parameter from ``values`` by transductive, labeled-only cross-validation.

    The routine behind every ``"auto"`` parameter of the library (``lam="auto"``,
    ``gamma_I="auto"``). Folds come from :func:`auto_folds` (stratified over the labeled
    rows, ``k = min(5, smallest class)``, repeated when the classes are tiny); in each
    fold the held-out labeled rows stay in the fit as unlabeled rows (the protocol of
    :func:`transductive_cross_validate`) and the fold is scored by accuracy on them.
    ``values`` must be ordered from the strongest regularisation to the weakest: each fold
    fits them in that order on one estimator object with ``warm_start=True`` (a small
    multiple of one fit), and ties go to the first, i.e. the simpler model. With a class
    of a single labeled row there is no CV: ``default`` is returned with one warning.

    Parameters
    ----------
    estimator : estimator
        A classifier following the ``y == -1`` convention, with every other parameter set
        (cloned; never fitted itself).
    X : array-like or sparse matrix of shape (n_samples, n_features)
        All rows, labeled and unlabeled.
    y : array-like of shape (n_samples,)
        Class labels, ``-1`` for unlabeled rows.
    name : str
        The parameter to select.
    values : sequence of float
        Candidate values, strongest regularisation first.
    default : float
        The value used when no CV is possible.
    random_state : int, RandomState instance or None, default=None
        Seed of the folds (``None``: a fixed seed).
    fit_params : dict or None, default=None
        Passed to every fit (e.g. ``sample_weight`` over all rows).
    held_out : callable or None, default=None
        ``held_out(value, folds) -> list of predicted labels of each fold's test rows``:
        a faster route for estimators that score every fold at once (LapRLS); ``None``
        refits ``estimator`` along the path.

    Returns
    -------
    ParameterSelection
        The chosen value, the per-value CV scores and the folds.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import L2SVM
    >>> from semisup.model_selection import select_parameter
    >>> X = np.array([[-2.0], [-1.5], [-1.0], [1.0], [1.5], [2.0], [-0.5], [0.5]])
    >>> y = np.array([0, 0, 0, 1, 1, 1, -1, -1])
    >>> sel = select_parameter(L2SVM(), X, y, "lam", [10.0, 1.0, 0.1], default=1.0)
    >>> sel.best, sel.cv_results["mean_test_score"].tolist()
    (10.0, [1.0, 1.0, 1.0])
    """
    y = np.asarray(y)
    values = list(values)
    if not values:
        raise ValueError(f"values for {name} is empty: give at least one candidate")
    folds = auto_folds(y, random_state)
    if folds is None:
        classes, counts = np.unique(y[~unlabeled_mask(y)], return_counts=True)
        small = classes[np.argmin(counts)] if classes.size else None
        warn_at_caller(f"{type(estimator).__name__}: {name}='auto' needs at least 2 labeled "
                       f"rows in every class to cross-validate, but class {small!r} has "
                       f"{counts.min() if counts.size else 0}: using the default {name}="
                       f"{default!r}; label one more row of that class or set {name}",
                       UserWarning)
        res = {"params": [{name: default}], f"param_{name}": np.array([default], dtype=float),
               "mean_test_score": np.array([np.nan]), "std_test_score": np.array([np.nan]),
               "rank_test_score": np.array([1], dtype=np.int32)}
        return ParameterSelection(name, default, res, None, True)
    t0 = time.perf_counter()
    if held_out is None:
        acc = _path_held_out(estimator, X, y, name, values, folds,
                             {} if fit_params is None else dict(fit_params))
    else:
        acc = np.array([[np.mean(np.asarray(pred) == y[test])
                         for pred, (_, test) in zip(held_out(value, folds), folds,
                                                    strict=True)]
                        for value in values])
    mean, std = acc.mean(axis=1), acc.std(axis=1)
    # ties (within round-off) go to the first value: the strongest regularisation
    best = int(np.flatnonzero(mean >= mean.max() - 1e-12)[0])
    res = {"params": [{name: v} for v in values],
           f"param_{name}": np.array(values, dtype=float)}
    for f in range(len(folds)):
        res[f"split{f}_test_score"] = acc[:, f]
    res["mean_test_score"], res["std_test_score"] = mean, std
    res["rank_test_score"] = _rank(mean)
    logger.info("%s: %s=%g chosen by %d-fold transductive CV over %d values (%.3g s; held-out "
                "accuracy %.4f)", type(estimator).__name__, name, values[best], len(folds),
                len(values), time.perf_counter() - t0, mean[best])
    return ParameterSelection(name, values[best], res, folds, False)
