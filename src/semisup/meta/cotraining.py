"""Co-training (Blum & Mitchell 1998): two views of the features teach each other.

Blum, A. and Mitchell, T. "Combining labeled and unlabeled data with co-training", COLT
1998, Section 5 (the algorithm of Table 1): draw a pool ``U'`` of ``u`` unlabeled rows; each
round train one classifier per view on the labeled set ``L``, let each label ``p`` positive
and ``n`` negative rows of ``U'`` (its most confident ones), add them to ``L``, and refill
``U'`` from ``U`` with as many rows; predict by multiplying the views' class probabilities.
The paper's values are ``p = 1, n = 3`` (the class ratio of its labeled data), ``k = 30``
rounds and ``u = 75``.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from semisup._logging import get_logger, progress, verbosity
from semisup._validation import check_int, warn_if_collapsed
from semisup.meta.self_training import (
    COLLAPSE_HINT,
    MetaClassifier,
    base_scores,
    check_base,
    check_max_iter,
    class_quota,
    fit_base,
    take_rows,
    uses_unlabeled,
)

logger = get_logger(__name__)

__all__ = ["CoTraining", "split_views"]


def split_views(n_features: int, random_state=None) -> list[np.ndarray]:
    """A random balanced split of the feature indices into two views (sorted halves).

    Parameters
    ----------
    n_features : int
        At least 2.
    random_state : int, RandomState instance or None

    Returns
    -------
    list of two ndarray of int

    Examples
    --------
    >>> [v.size for v in split_views(7, random_state=0)]
    [3, 4]
    """
    if n_features < 2:
        raise ValueError(f"co-training needs at least 2 features to split into two views, "
                         f"got n_features = {n_features}; pass views= explicitly or use "
                         "SelfTraining")
    perm = check_random_state(random_state).permutation(n_features)
    half = n_features // 2
    return [np.sort(perm[:half]), np.sort(perm[half:])]


def _resolve_views(views, n_features: int, random_state) -> list[np.ndarray]:
    if views is None:
        return split_views(n_features, random_state)
    bad = ("views must be a list of two or more column selections (each a slice, a list of "
           "column indices or a boolean mask over the features), or None for a random split")
    if isinstance(views, (str, bytes)) or not hasattr(views, "__len__") or len(views) < 2:
        raise ValueError(f"{bad}; got {views!r}")
    cols = np.arange(n_features)
    out = []
    for v in views:
        if isinstance(v, (str, bytes, numbers.Number)):
            raise ValueError(f"{bad}; got the entry {v!r}")
        if not isinstance(v, slice) and np.size(v) == 0:
            raise ValueError(f"{bad}; the entry {v!r} selects no column")
        try:
            idx = cols[v] if isinstance(v, slice) else cols[np.asarray(v)]
        except (IndexError, TypeError, ValueError):
            raise ValueError(f"{bad}; the entry {v!r} does not select columns of X "
                             f"(which has {n_features})") from None
        idx = np.atleast_1d(idx)
        if idx.size == 0:
            raise ValueError(f"{bad}; the entry {v!r} selects no column")
        out.append(idx)
    return out


class CoTraining(MetaClassifier):
    """Co-training over two views of the features (Blum & Mitchell 1998).

    Each round, one clone of ``estimator`` per view is fitted on the labeled rows seen
    through that view; each labels, from a pool of ``pool_size`` unlabeled rows, its most
    confident rows of every class (``class_counts``: by default in proportion to the
    labeled class prior, the rarest class getting one row -- the paper's ``p = 1, n = 3``
    on its 22 % / 78 % data); those rows join the labeled set and the pool is refilled
    with as many rows drawn at random from the remaining unlabeled ones. With more than
    two classes the same rule gives every class its share. A view labels only rows it
    predicts in that class, and the second view chooses among the rows the first left.
    Prediction multiplies the views' class probabilities (the paper's combined
    classifier) and normalises them.

    Parameters
    ----------
    estimator : classifier or None, default=None
        The classifier fitted on each view (cloned); it needs ``predict_proba``.
        ``None`` means scikit-learn's ``LogisticRegression()``. A semi-supervised one
        (semisup, ``sklearn.semi_supervised``) also sees the rows not labeled yet as -1.
    views : list of column selections or None, default=None
        Two (or more) views, each a slice, a list of column indices or a boolean mask;
        ``None`` splits the features at random into two halves (``random_state``).
    pool_size : int, default=75
        Size ``u`` of the pool ``U'`` the views label from.
    class_counts : array-like of int or None, default=None
        Rows each view labels per class and round, in the order of ``classes_`` (for
        classes ``[0, 1]``, ``[n, p]`` in the paper's notation). ``None``: ``round(prior_c /
        min prior)`` per class (at least 1).
    max_iter : int or None, default=30
        Rounds ``k``; ``None`` runs until the pool is exhausted or nothing is added.
    random_state : int, RandomState instance or None, default=None
        Seeds the view split and the pool draws, and the folds of ``fallback="cv"``.
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: keep the pseudo-labels only when labeled-only cross-validation says they
        help (:meth:`semisup.meta.self_training.MetaClassifier._fit_guarded`), else return
        ``estimator`` fitted on the labeled rows (``fallback_ is True``); ``"none"``: the
        method as published.  Measured on official split 2 of the SSL-book sets (10 and
        100 labels; the 11 cells of g241c to coil at 10 labels): cells within 1 point of
        LogisticRegression 6 of 11 unguarded, 9 of 11 guarded
        (``benchmarks/results/defaults_round3.md``).
    verbose : int, default=0
        Log each round (``1``) through the ``semisup`` logger, with a progress bar.

    Attributes
    ----------
    estimators_ : list of classifier
        One fitted classifier per view (fitted on class indices ``0 .. n_classes - 1``).
    views_ : list of ndarray of int
        The column indices of each view.
    class_counts_ : ndarray of int
        Rows labeled per class, per view and round.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows: given, co-trained, or predicted by the final views.
    labeled_iter_ : ndarray of shape (n_samples,)
        Round in which each row was labeled: 0 for the given labels, ``-1`` never.
    n_iter_ : int
        Rounds run.
    termination_condition_ : {"max_iter", "no_change", "all_labeled"}
        Why the rounds stopped (``"all_labeled"``: the pool ran out).
    n_features_in_ : int
        Number of features seen in ``fit``.
    fallback_ : bool
        Whether the labeled-only CV chose ``estimator`` alone, fitted on the labeled rows
        (``supervised_estimator_``; then ``n_iter_ == 0`` and ``termination_condition_ ==
        "supervised_fallback"``).
    cv_scores_ : dict or None
        Mean held-out accuracy of the wrapper and of ``estimator`` alone, and the number
        of folds (None without CV).

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.meta.cotraining import CoTraining
    >>> rng = np.random.default_rng(0)
    >>> y_true = np.repeat([0, 1], 100)
    >>> X = rng.normal(size=(200, 4)) + 1.5 * (2 * y_true[:, None] - 1)
    >>> y = np.full(200, -1)
    >>> y[[0, 1, 100, 101]] = [0, 0, 1, 1]
    >>> model = CoTraining(views=[[0, 1], [2, 3]], random_state=0).fit(X, y)
    >>> float(np.mean(model.transduction_ == y_true)) > 0.95
    True
    """

    def __init__(self, estimator=None, *, views=None, pool_size: int = 75,
                 class_counts=None, max_iter: int | None = 30, random_state=None,
                 fallback: str = "cv", verbose: int = 0):
        self.estimator = estimator
        self.fallback = fallback
        self.views = views
        self.pool_size = pool_size
        self.class_counts = class_counts
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def _counts(self, prior: np.ndarray) -> np.ndarray:
        k = prior.size
        if self.class_counts is None:
            return class_quota(prior, 1.0 / prior[prior > 0].min())
        try:
            c = np.asarray(self.class_counts)
            ok = c.shape == (k,) and c.dtype.kind in "iu" and np.all(c >= 0) and c.sum() > 0
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError(f"class_counts must be {k} non-negative integers (rows labeled "
                             f"per class and round, in the order of classes_ = "
                             f"{self.classes_.tolist()}), not all 0, or None; got "
                             f"{self.class_counts!r}")
        return c.astype(np.int64)

    def fit(self, X, y) -> CoTraining:
        """Fit by co-training on ``(X, y)``; rows with ``y == -1`` are the unlabeled data.

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
        base = check_base(self._base(), type(self).__name__, ("predict_proba",))
        pool_size = check_int(self.pool_size, "pool_size")
        max_iter = check_max_iter(self.max_iter)
        rng = check_random_state(self.random_state)
        X = data.X
        k = self.classes_.size
        prior = np.bincount(data.y_index, minlength=k) / data.y_index.size
        counts = self._counts(prior)
        views = _resolve_views(self.views, X.shape[1], rng)
        semi = uses_unlabeled(base)
        # drawing from a random permutation of U = drawing at random without replacement
        queue = rng.permutation(data.unlabeled)
        pool, queue = queue[:pool_size], queue[pool_size:]
        labeled_iter = np.where(codes >= 0, 0, -1)
        name = type(self).__name__
        it, condition = 0, "all_labeled"
        limit = np.inf if max_iter is None else max_iter
        with progress(max_iter, name, self.verbose, "round") as bar:
            while it < limit:
                if pool.size == 0:
                    condition = "all_labeled"
                    break
                it += 1
                models = [fit_base(clone(base), X, codes, cols, semi=semi) for cols in views]
                free = np.ones(pool.size, dtype=bool)
                for model, cols in zip(models, views, strict=True):
                    P = base_scores(model, take_rows(X, pool, cols), k)
                    pred = P.argmax(axis=1)
                    for c in range(k):
                        rows = np.flatnonzero(free & (pred == c))
                        best = rows[np.argsort(-P[rows, c], kind="stable")[:counts[c]]]
                        codes[pool[best]] = c
                        free[best] = False
                bar.update()
                picked = pool[~free]
                if picked.size == 0:
                    condition = "no_change"
                    break
                labeled_iter[picked] = it
                logger.info("%s: round %d labeled %d rows (per class %s)", name, it,
                            picked.size, np.bincount(codes[picked], minlength=k).tolist())
                refill = pool_size - int(free.sum())
                pool = np.concatenate([pool[free], queue[:refill]])
                queue = queue[refill:]
            else:
                condition = "max_iter"
        self.views_ = views
        self.class_counts_ = counts
        self.estimators_ = [fit_base(clone(base), X, codes, cols, semi=semi) for cols in views]
        self.labeled_iter_ = labeled_iter
        self.n_iter_ = it
        self.termination_condition_ = condition
        rest = np.flatnonzero(codes < 0)
        predicted = self._combined(take_rows(X, rest)).argmax(axis=1) if rest.size else None
        self._finish(data, codes, predicted)
        warn_if_collapsed(self, self.transduction_[data.unlabeled], k, hint=COLLAPSE_HINT)

    def _combined(self, X) -> np.ndarray:
        """Log of the normalised product of the views' probabilities, ``(n, n_classes)``."""
        log_p = np.zeros((X.shape[0], self.classes_.size))
        for model, cols in zip(self.estimators_, self.views_, strict=True):
            # floored: two views certain of different classes must not give 0 / 0
            P = base_scores(model, X[:, cols], self.classes_.size)
            log_p += np.log(np.maximum(P, 1e-300))
        log_p -= log_p.max(axis=1, keepdims=True)
        return log_p - np.log(np.exp(log_p).sum(axis=1, keepdims=True))

    def predict(self, X) -> np.ndarray:
        """Class of highest combined probability.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        out = self._fallback_output(X, "predict")
        if out is not None:
            return out
        X = self._check_predict_X(X)
        return self.classes_[self._combined(X).argmax(axis=1)]

    def predict_proba(self, X) -> np.ndarray:
        """Product of the views' class probabilities, normalised to sum to one.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Class probabilities, columns in the order of ``classes_``.
        """
        out = self._fallback_output(X, "predict_proba")
        if out is not None:
            return out
        X = self._check_predict_X(X)
        return np.exp(self._combined(X))

    def decision_function(self, X) -> np.ndarray:
        """Compute the log-odds of the combined classifier.

        For two classes, the 1-D log-odds of ``classes_[1]`` against ``classes_[0]``; the
        log of :meth:`predict_proba` for more.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Decision values: the score of ``classes_[1]``, or one column per class.
        """
        out = self._fallback_output(X, "decision_function")
        if out is not None:
            return out
        X = self._check_predict_X(X)
        log_p = self._combined(X)
        return log_p[:, 1] - log_p[:, 0] if log_p.shape[1] == 2 else log_p

    def view_predict_proba(self, X, view: int) -> np.ndarray:
        """Class probabilities of one view's classifier (e.g. to compare the views).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            All the features (the view's columns are taken here).
        view : int
            Index into ``views_``.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            That view's class probabilities, columns in the order of ``classes_``.
        """
        check_is_fitted(self, "estimators_")
        X = self._check_predict_X(X)
        view = check_int(view, "view", low=0)
        if view >= len(self.views_):
            raise ValueError(f"view must be below {len(self.views_)}, got {view}")
        return base_scores(self.estimators_[view], X[:, self.views_[view]],
                           self.classes_.size)

