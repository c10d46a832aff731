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

The estimate is inductive: a held-out labeled row is left out of the training fold
altogether (it is not added as an unlabeled row, which would need its label hidden).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.metrics import get_scorer
from sklearn.model_selection import (
    BaseCrossValidator,
    StratifiedKFold,
    StratifiedShuffleSplit,
    check_cv,
)

from semisup._validation import unlabeled_mask
from semisup.base import labeled_rows

__all__ = ["LabeledSplit", "LabeledStratifiedKFold", "LabeledStratifiedShuffleSplit",
           "labeled_scorer", "labeled_cv"]


class LabeledSplit(BaseCrossValidator):
    """Apply any scikit-learn splitter to the labeled rows only.

    Each split's training indices are the labeled training rows of the wrapped splitter
    plus every unlabeled row; its test indices are labeled rows only.

    Parameters
    ----------
    cv : cross-validation generator
        A scikit-learn splitter (e.g. ``StratifiedKFold``, ``RepeatedStratifiedKFold``,
        ``GroupKFold``); it sees the labeled rows and their labels.
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
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for unlabeled rows (required).
        groups : array-like of shape (n_samples,), optional
            Passed on (restricted to the labeled rows) to group-aware splitters.
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
            splits = list(self._inner().split(X_labeled, y[labeled], inner_groups))
        for train, test in splits:
            yield np.sort(np.concatenate([labeled[train], unlabeled])), labeled[test]

    def _check_labels(self, y_labeled: np.ndarray) -> None:
        """Hook: validate the labeled rows before splitting."""

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """Number of splits of the wrapped splitter."""
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
            warnings.warn(f"The least populated labeled class ({small!r}) has only "
                          f"{counts.min()} rows, fewer than n_splits={self.n_splits}: some "
                          "test folds miss it; lower n_splits for balanced folds",
                          UserWarning, stacklevel=3)

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """Returns ``n_splits``."""
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
    """

    def __init__(self, n_splits: int = 10, *, test_size=0.2, random_state=None):
        self.n_splits = n_splits
        self.test_size = test_size
        self.random_state = random_state

    def _inner(self):
        return StratifiedShuffleSplit(self.n_splits, test_size=self.test_size,
                                      random_state=self.random_state)

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """Returns ``n_splits``."""
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

