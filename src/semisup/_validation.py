"""Input validation shared by every estimator: one place for the labeled/unlabeled split.

Convention (as :mod:`sklearn.semi_supervised`): ``y == -1`` marks an unlabeled row; any
other value is a class label.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_array,
    check_consistent_length,
    column_or_1d,
    validate_data,
)

UNLABELED = -1


@dataclass
class SemiSupervisedData:
    """A validated partially labeled data set.

    Attributes
    ----------
    X : ndarray or csr_matrix
        Validated inputs (float64).
    classes : ndarray
        Sorted distinct class labels of the labeled rows.
    labeled : ndarray of int
        Indices of the labeled rows.
    unlabeled : ndarray of int
        Indices of the unlabeled rows.
    y_index : ndarray of int
        For each labeled row, the index of its class in ``classes``.
    """

    X: object
    classes: np.ndarray
    labeled: np.ndarray
    unlabeled: np.ndarray
    y_index: np.ndarray

    def binary_targets(self, positive: int = 1) -> np.ndarray:
        """``+1/-1`` targets of the labeled rows, class ``classes[positive]`` positive."""
        return np.where(self.y_index == positive, 1.0, -1.0)


def unlabeled_mask(y: np.ndarray) -> np.ndarray:
    """Boolean mask of the rows marked unlabeled (``y == -1``)."""
    if y.dtype.kind in "iuf":
        return y == UNLABELED
    if y.dtype.kind == "b":
        return np.zeros(y.shape, dtype=bool)
    return np.array([isinstance(v, numbers.Number) and v == UNLABELED for v in y], dtype=bool)


def check_X(X, *, accept_sparse: bool = True, estimator=None, reset: bool | None = None):
    """Validate inputs: 2-D, finite, float64; CSR when sparse.

    With ``estimator`` and ``reset`` given, through scikit-learn's ``validate_data``:
    ``reset=True`` (in ``fit``) records ``n_features_in_`` and, for a pandas DataFrame,
    ``feature_names_in_``; ``reset=False`` (in ``predict``/``transform``) checks them.
    """
    kwargs = dict(accept_sparse="csr" if accept_sparse else False, dtype=np.float64)
    if estimator is not None and reset is not None:
        return validate_data(estimator, X, reset=reset, **kwargs)
    return check_array(X, estimator=estimator, **kwargs)


def check_semi_supervised(X, y, *, accept_sparse: bool = True, require_unlabeled: bool = False,
                          min_classes: int = 2, estimator=None) -> SemiSupervisedData:
    """Validate ``(X, y)`` and split it into labeled and unlabeled rows.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels, ``-1`` for unlabeled rows.
    accept_sparse : bool
        Accept scipy.sparse input (converted to CSR).
    require_unlabeled : bool
        Warn when there is no unlabeled row (a semi-supervised method then reduces to
        its supervised counterpart).
    min_classes : int
        Minimum number of distinct labeled classes.

    Raises
    ------
    ValueError
        With the argument at fault and how to fix it.
    """
    X = check_X(X, accept_sparse=accept_sparse, estimator=estimator,
                reset=None if estimator is None else True)
    if y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the target "
                         "y is None: give class labels, and -1 for unlabeled rows")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = column_or_1d(y, warn=True)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got shape {y.shape}; give one label per "
                         "row of X (-1 for unlabeled rows)")
    check_consistent_length(X, y)
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity; mark unlabeled rows with -1 instead")
    unl = unlabeled_mask(y)
    labeled = np.flatnonzero(~unl)
    unlabeled = np.flatnonzero(unl)
    if labeled.size == 0:
        raise ValueError("y has no labeled rows (every entry is -1); label at least one row "
                         "of each class")
    y_labeled = y[labeled]
    if not (y.dtype.kind in "iub" or (y.dtype.kind == "f" and np.all(y_labeled % 1 == 0))):
        # integer-valued labels are always classes; everything else gets scikit-learn's
        # full (and slower) check, which rejects continuous and mixed-type targets
        check_classification_targets(y_labeled)
    classes, y_index = np.unique(y_labeled, return_inverse=True)
    if classes.size < min_classes:
        raise ValueError(f"y contains {classes.size} class among its labeled rows "
                         f"({classes.tolist()}); at least {min_classes} are needed: label rows "
                         "of every class")
    if require_unlabeled and unlabeled.size == 0:
        warnings.warn("y has no unlabeled rows (no -1 entries): the semi-supervised method "
                      "reduces to its supervised counterpart", UserWarning, stacklevel=3)
    return SemiSupervisedData(X=X, classes=classes, labeled=labeled, unlabeled=unlabeled,
                              y_index=y_index.astype(np.int64))


def check_fraction(value, name: str) -> float:
    """Validate a fraction in the open interval (0, 1)."""
    if not isinstance(value, numbers.Real) or not 0.0 < float(value) < 1.0:
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    return float(value)


def check_positive(value, name: str, *, allow_zero: bool = False) -> float:
    """Validate a positive (or non-negative) real hyper-parameter."""
    ok = isinstance(value, numbers.Real) and np.isfinite(value) and (
        value >= 0 if allow_zero else value > 0)
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    return float(value)
