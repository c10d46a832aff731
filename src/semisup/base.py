"""Behaviour shared by every semisup classifier, whatever its solver."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import accuracy_score

from semisup._validation import unlabeled_mask


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


class SemiSupervisedClassifierMixin:
    """Mixin for semisup classifiers: ``score`` ignores unlabeled (``y == -1``) rows.

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


class SemiSupervisedRegressorMixin:
    """Mixin for semisup regressors: ``score`` is R^2 on the rows whose target is known.

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
