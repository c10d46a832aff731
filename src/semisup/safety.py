"""Safe use of unlabeled data: keep a semi-supervised fit only where labeled rows vouch for it.

With a handful of labels a semi-supervised method hurts about as often as it helps
(Oliver et al., 2018; Li & Zhou, 2015, "Towards making unlabeled data never hurt").  The
guard here is the one rule the library applies for that, wherever an estimator has
``fallback="cv"``:

1. split the labeled rows into ``min(3, smallest class)`` stratified folds
   (:func:`guard_folds`);
2. in each fold fit the semi-supervised method with the held-out labeled rows hidden among
   the unlabeled rows (the transductive protocol of
   :func:`semisup.model_selection.transductive_cross_validate`), and its supervised
   counterpart on the labeled rows kept; score both by accuracy on the held-out rows;
3. keep the semi-supervised fit only when its mean held-out accuracy is strictly higher
   (:func:`guard`); otherwise (a tie included: the simpler model) the estimator becomes its
   supervised counterpart fitted on every labeled row (``fallback_ is True``).

Three folds, not five, because each fold costs one semi-supervised fit: the guard costs
about four fits in all.  With a class of a single labeled row no fold exists and the
semi-supervised fit is kept.  This module imports neither scikit-learn nor the estimators,
so that the command line's scikit-learn-free fit (:mod:`semisup.linear._core`) applies the
same rule as the estimators.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Callable

import numpy as np

from semisup._logging import get_logger
from semisup._validation import check_choice

logger = get_logger(__name__)

#: values of every ``fallback`` parameter
FALLBACKS = ("cv", "none")
#: most folds of the guard (fewer when a labeled class is smaller)
GUARD_FOLDS = 3


def check_fallback(value) -> str:
    """Validate a ``fallback`` parameter (``"cv"`` or ``"none"``)."""
    return check_choice(value, "fallback", FALLBACKS)


def guard_folds(codes: np.ndarray, random_state=None,
                n_folds: int = GUARD_FOLDS) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Stratified folds over the labeled rows: ``(labeled rows kept, labeled rows held out)``.

    The labeled rows of each class are shuffled (seed ``random_state``, 0 when ``None``) and
    dealt round-robin to ``k = min(n_folds, smallest class)`` folds, continuing the deal
    from class to class so that the folds' sizes differ by at most one row.

    Parameters
    ----------
    codes : ndarray of shape (n_samples,)
        Class index of every row, ``-1`` for unlabeled rows.
    random_state : int or None
        Seed of the shuffle.
    n_folds : int
        Most folds.

    Returns
    -------
    list of (ndarray, ndarray) or None
        Row indices of each fold; ``None`` when a class has fewer than 2 labeled rows or
        there are fewer than 2 classes (no fold can hold out a row of every class).

    Examples
    --------
    >>> import numpy as np
    >>> folds = guard_folds(np.array([0, 0, 0, 1, 1, 1, -1]), random_state=0)
    >>> [sorted(test.tolist()) for _, test in folds]
    [[2, 5], [0, 4], [1, 3]]
    """
    codes = np.asarray(codes)
    labeled = np.flatnonzero(codes >= 0)
    classes, counts = np.unique(codes[labeled], return_counts=True)
    if classes.size < 2 or counts.min() < 2:
        return None
    k = int(min(n_folds, counts.min()))
    rng = np.random.default_rng(0 if random_state is None else random_state)
    fold_of = np.empty(codes.size, dtype=np.int64)
    start = 0
    for c in classes:
        rows = rng.permutation(labeled[codes[labeled] == c])
        fold_of[rows] = (start + np.arange(rows.size)) % k
        start = (start + rows.size) % k
    return [(labeled[fold_of[labeled] != f], labeled[fold_of[labeled] == f])
            for f in range(k)]


def hide_rows(codes: np.ndarray, train: np.ndarray) -> np.ndarray:
    """``codes`` with every row outside ``train`` marked unlabeled (``-1``)."""
    out = np.full(codes.size, -1, dtype=codes.dtype)
    out[train] = codes[train]
    return out


@contextlib.contextmanager
def _quiet():
    """The fold fits' own log lines (progress, solver summaries) silenced: with ``verbose``
    the user follows the fit, of which a fold is a detail; the guard logs its result."""
    root = logging.getLogger("semisup")
    old = root.level
    root.setLevel(logging.WARNING)
    try:
        yield
    finally:
        root.setLevel(old)


def guard(fit_predict: Callable[[str, np.ndarray, np.ndarray], np.ndarray],
          codes: np.ndarray, random_state=None, owner: str = "estimator") -> dict | None:
    """Compare a semi-supervised fit with its supervised counterpart on labeled-only folds.

    Parameters
    ----------
    fit_predict : callable
        ``fit_predict(which, train, test) -> predicted class indices of the rows test``,
        ``which`` being ``"semi_supervised"`` (fit with every row outside ``train``
        unlabeled) or ``"supervised"`` (fit on the rows ``train`` only).  The fold fits'
        warnings and log lines are silenced: a fold is one estimate among several, and the
        final fit warns for itself.
    codes : ndarray of shape (n_samples,)
        Class index of every row, ``-1`` for unlabeled rows.
    random_state : int or None
        Seed of the folds (:func:`guard_folds`).
    owner : str
        Name used in the log.

    Returns
    -------
    dict or None
        ``semi_supervised`` and ``supervised`` (mean held-out accuracy), ``n_folds``,
        ``split_scores`` (array ``[2, n_folds]``) and ``keep`` (whether the semi-supervised
        fit wins: strictly higher mean accuracy); ``None`` when no fold exists
        (:func:`guard_folds`) or no row is unlabeled.
    """
    codes = np.asarray(codes)
    folds = guard_folds(codes, random_state)
    if folds is None or not np.any(codes < 0):
        return None
    acc = np.zeros((2, len(folds)))
    for f, (train, test) in enumerate(folds):
        for i, which in enumerate(("semi_supervised", "supervised")):
            with warnings.catch_warnings(), _quiet():
                # collapse, label-coding, graph and convergence warnings of a fold are about
                # a fit the user never sees; the final fit warns for itself
                warnings.simplefilter("ignore")
                predicted = np.asarray(fit_predict(which, train, test))
            acc[i, f] = np.mean(predicted == codes[test])
    mean = acc.mean(axis=1)
    keep = bool(mean[0] > mean[1])
    logger.info("%s: labeled-only CV accuracy %.4f (semi-supervised) vs %.4f (supervised "
                "counterpart) over %d folds: %s", owner, mean[0], mean[1], len(folds),
                "semi-supervised fit kept" if keep else "supervised counterpart used")
    return {"semi_supervised": float(mean[0]), "supervised": float(mean[1]),
            "n_folds": len(folds), "split_scores": acc, "keep": keep}

