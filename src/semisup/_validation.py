"""Input validation shared by every estimator: one place for the labeled/unlabeled split.

Convention (as :mod:`sklearn.semi_supervised`): ``y == -1`` marks an unlabeled row; any
other value is a class label.  In a string or object label array the string ``'-1'`` marks an
unlabeled row as well (labels read from text files arrive as strings; a class named ``'-1'``
would silently turn the unlabeled marker into a class).  A missing value marks an unlabeled
row too, in every estimator: ``None``, NaN (float or ``numpy.nan`` in an object array), and
pandas' missing values (``pd.NA``, ``pd.NaT``, the NaN of a ``Categorical`` or of a nullable
``Int64`` / ``string`` column).  Missing values never become classes: ``classes_`` and
``transduction_`` hold the other labels only, and an object array whose other labels are all
integers (a nullable pandas integer column) gives integer classes.  Infinity is refused.
Labels that are exactly ``{-1, 0, +1}`` with more ``0`` than ``-1`` rows look like SVMlin's
coding (``0`` = unlabeled) and draw a :class:`LabelCodingWarning` pointing to
:func:`semisup.io.svmlin_to_labels`.

The parameter checks (:func:`check_positive`, :func:`check_fraction`, :func:`check_int`,
:func:`check_real`, :func:`check_finite`, :func:`check_bool`, :func:`check_choice`) are the
one set every estimator validates its hyper-parameters with.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from semisup._logging import warn_at_caller

# scikit-learn's validators are imported inside the functions that use them: the SVMlin
# command line uses the scale check and the warnings here without importing scikit-learn

UNLABELED = -1

#: Largest / smallest magnitude of a non-zero feature value accepted without computing the
#: row norms exactly (squares of values beyond these bounds may overflow / underflow).
_SCALE_HIGH = 1e150
_SCALE_LOW = 1e-150


class LabelCodingWarning(UserWarning):
    """``y`` looks like SVMlin's label coding (``0`` = unlabeled) rather than semisup's."""


class CollapseWarning(UserWarning):
    """A semi-supervised fit gave every unlabeled row the same class."""


#: Fewest unlabeled rows for which one class for all of them is reported as a collapse.
MIN_COLLAPSE_ROWS = 10


def is_collapsed(transduction_unlabeled: np.ndarray, n_classes: int) -> bool:
    """Whether every unlabeled row got the same class while the labeled rows hold
    ``n_classes >= 2`` classes, over at least :data:`MIN_COLLAPSE_ROWS` unlabeled rows."""
    if n_classes < 2 or transduction_unlabeled.size < MIN_COLLAPSE_ROWS:
        return False
    return bool(np.all(transduction_unlabeled == transduction_unlabeled[0]))


def warn_if_collapsed(estimator, transduction_unlabeled: np.ndarray, n_classes: int,
                      hint: str | None = None) -> None:
    """Warn (:class:`CollapseWarning`) when every unlabeled row got the same class.

    With two or more labeled classes and at least :data:`MIN_COLLAPSE_ROWS` unlabeled rows,
    one class for all of them almost always means the semi-supervised solution collapsed
    (e.g. a regularization weight so large that only the bias is left), not a property of
    the data.  ``hint`` replaces the default advice (the linear methods' parameters).  The
    warning points at the user's call (:func:`semisup._logging.warn_at_caller`).
    """
    if is_collapsed(transduction_unlabeled, n_classes):
        first = transduction_unlabeled[0]
        first = first.item() if isinstance(first, np.generic) else first
        warn_at_caller(f"{type(estimator).__name__}: every one of the "
                       f"{transduction_unlabeled.size} unlabeled rows was assigned class "
                       f"{first!r}: the solution collapsed to one class. " + (
                          hint or "The regularization is probably too strong for the scale "
                          "of X (lower lam / gamma_A, or rescale X), or the positive fraction "
                          "is wrong"), CollapseWarning)


class DegenerateFitWarning(CollapseWarning):
    """A fit finished but its solution is degenerate (all-zero codes, an inexact SDP, ...)."""


def warn_degenerate(estimator, what: str, fix: str) -> None:
    """Warn (:class:`DegenerateFitWarning`) that a fit is degenerate: ``what`` and the ``fix``.

    The one rule for "finished, but do not trust it" besides :func:`warn_if_collapsed`:
    every sparse code zero (self-taught learning: the classifier sees only its bias), a
    conic solver stopped ``optimal_inaccurate``, fewer prototypes than classes.  A subclass
    of :class:`CollapseWarning`, so one filter silences (or raises) both.
    """
    warn_at_caller(f"{type(estimator).__name__}: {what}; {fix}", DegenerateFitWarning)


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

    def codes(self, dtype=np.int64) -> np.ndarray:
        """Class index of every row, ``-1`` for the unlabeled ones (the form the meta-
        estimators and the cross-validation helpers fit on)."""
        out = np.full(self.X.shape[0], -1, dtype=dtype)
        out[self.labeled] = self.y_index
        return out

    def binary_targets(self, positive: int = 1) -> np.ndarray:
        """``+1/-1`` targets of the labeled rows, class ``classes[positive]`` positive."""
        return np.where(self.y_index == positive, 1.0, -1.0)


def _is_missing(value) -> bool:
    """``None``, a float NaN, or pandas' ``NA`` / ``NaT`` (recognised without importing it)."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, (float, np.floating)) and value != value


def unlabeled_mask(y: np.ndarray) -> np.ndarray:
    """Boolean mask of the rows marked unlabeled: ``-1`` (``'-1'`` in text) or missing.

    Missing means ``None``, NaN or pandas' ``NA`` / ``NaT`` (module docstring).
    """
    if y.dtype.kind in "iu":
        return y == UNLABELED
    if y.dtype.kind == "f":
        return (y == UNLABELED) | np.isnan(y)
    if y.dtype.kind == "b":
        return np.zeros(y.shape, dtype=bool)
    if y.dtype.kind == "U":
        return y == str(UNLABELED)
    # missing first: comparing pd.NA with -1 gives NA, whose truth value is an error
    return np.array([_is_missing(v) or (isinstance(v, numbers.Number) and v == UNLABELED)
                     or (isinstance(v, str) and v == str(UNLABELED)) for v in y], dtype=bool)


def _labels_as_numbers(y_labeled: np.ndarray) -> np.ndarray:
    """An object array of only integers (or only reals) as int64 (float64): the labels of a
    nullable pandas column once its missing values are gone."""
    if y_labeled.dtype != object or y_labeled.size == 0:
        return y_labeled
    values = y_labeled.tolist()
    if any(isinstance(v, (bool, np.bool_)) for v in values):
        return y_labeled
    if all(isinstance(v, numbers.Integral) for v in values):
        return np.array(values, dtype=np.int64)
    if all(isinstance(v, numbers.Real) for v in values):
        return np.array(values, dtype=np.float64)
    return y_labeled


def check_scale(X) -> None:
    """Refuse inputs whose squared row norms overflow or underflow float64.

    Kernel widths, Gram matrices and the Newton systems of the linear models are all built
    from squared norms and inner products; beyond ``|x| ~ 1e154`` they overflow to ``inf``
    and below ``|x| ~ 1e-154`` they vanish, so every model would silently collapse to one
    class.  Computes the exact row norms only when the largest magnitude is outside
    ``[1e-150, 1e150]`` (one pass over the non-zeros otherwise).

    Raises
    ------
    ValueError
        Saying to rescale ``X``.
    """
    values = X.data if hasattr(X, "tocsr") else X
    if values.size == 0:
        return
    big = max(float(np.max(values)), -float(np.min(values)))
    if big == 0.0 or _SCALE_LOW <= big <= _SCALE_HIGH:
        return
    with np.errstate(over="ignore", under="ignore"):
        sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if hasattr(X, "tocsr") \
            else np.einsum("ij,ij->i", X, X)
    fix = ("rescale X, e.g. with sklearn.preprocessing.StandardScaler or MaxAbsScaler "
           "(semisup models are not scale invariant)")
    if not np.all(np.isfinite(sq)):
        raise ValueError(f"X is too large in magnitude (largest |value| {big:.3g}): squared "
                         f"row norms overflow float64; {fix}")
    if float(sq.max()) < np.finfo(np.float64).tiny:
        raise ValueError(f"X is too small in magnitude (largest |value| {big:.3g}): squared "
                         f"row norms underflow to zero, so distances and kernel widths are "
                         f"degenerate; {fix}")


#: ``dtype`` of :func:`check_X` for the estimators that keep float32 input as it is
FLOAT_DTYPES = (np.float64, np.float32)


def check_X(X, *, accept_sparse: bool = True, estimator=None, reset: bool | None = None,
            scale: bool = False, dtype=np.float64):
    """Validate inputs: 2-D, finite, float64; CSR when sparse.

    ``dtype=FLOAT_DTYPES`` keeps float32 input as float32 (other dtypes become float64),
    for the estimators whose solvers accept it (user guide, "float32 input").

    With ``estimator`` and ``reset`` given, through scikit-learn's ``validate_data``:
    ``reset=True`` (in ``fit``) records ``n_features_in_`` and, for a pandas DataFrame,
    ``feature_names_in_``; ``reset=False`` (in ``predict``/``transform``) checks them.
    ``scale=True`` (used when fitting) also applies :func:`check_scale`.
    """
    kwargs = dict(accept_sparse="csr" if accept_sparse else False, dtype=dtype)
    if estimator is not None and reset is not None:
        from sklearn.utils.validation import validate_data

        X = validate_data(estimator, X, reset=reset, **kwargs)
    else:
        from sklearn.utils.validation import check_array

        X = check_array(X, estimator=estimator, **kwargs)
    if hasattr(X, "has_canonical_format") and not X.has_canonical_format:
        # duplicate entries mean their sum and indices may come unsorted; kernels, graphs and
        # compiled row loops assume neither, so canonicalise a copy (the caller's is kept)
        X = X.copy()
        X.sum_duplicates()
    if scale:
        check_scale(X)
    return X


def _warn_svmlin_coding(y: np.ndarray, unlabeled: np.ndarray) -> None:
    """Warn when ``y`` is exactly {-1, 0, +1} with more 0 than -1 rows (SVMlin's coding)."""
    if y.dtype.kind not in "iuf":
        return
    n_zero = int(np.count_nonzero(y == 0))
    if n_zero <= unlabeled.size or not np.all(np.isin(y, (-1, 0, 1))) or \
            not np.any(y == 1) or unlabeled.size == 0:
        return
    warn_at_caller(f"y holds exactly the values -1, 0 and +1 with more 0 ({n_zero}) than -1 "
                   f"({unlabeled.size}) rows: this looks like SVMlin's coding (0 = unlabeled), "
                   "but semisup reads -1 as unlabeled and 0 as a class. Convert with "
                   "semisup.io.svmlin_to_labels(y); if 0 is really a class, silence this "
                   "with warnings.simplefilter('ignore', semisup._validation.LabelCodingWarning)",
                   LabelCodingWarning)


def check_semi_supervised(X, y, *, accept_sparse: bool = True, require_unlabeled: bool = False,
                          min_classes: int = 2, estimator=None,
                          dtype=np.float64) -> SemiSupervisedData:
    """Validate ``(X, y)`` and split it into labeled and unlabeled rows.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Class labels, ``-1`` (or a missing value: None, NaN, ``pd.NA``) for unlabeled rows.
    accept_sparse : bool
        Accept scipy.sparse input (converted to CSR).
    require_unlabeled : bool
        Warn when there is no unlabeled row (a semi-supervised method then reduces to
        its supervised counterpart).
    min_classes : int
        Minimum number of distinct labeled classes.
    dtype : dtype or tuple of dtypes
        Passed to :func:`check_X` (``FLOAT_DTYPES`` keeps float32).

    Raises
    ------
    ValueError
        With the argument at fault and how to fix it.
    """
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_consistent_length, column_or_1d

    X = check_X(X, accept_sparse=accept_sparse, estimator=estimator,
                reset=None if estimator is None else True, scale=True, dtype=dtype)
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
    if y.dtype.kind == "f" and np.any(np.isinf(y)):
        raise ValueError("y contains infinity; give class labels, and -1 (or NaN / None) for "
                         "unlabeled rows")
    unl = unlabeled_mask(y)
    labeled = np.flatnonzero(~unl)
    unlabeled = np.flatnonzero(unl)
    if labeled.size == 0:
        raise ValueError("y has no labeled rows (every entry is -1 or missing); label at "
                         "least one row of each class")
    y_labeled = y[labeled]
    if y.dtype == object and any(_is_missing(v) for v in y[unlabeled]):
        # numbers with None / pd.NA (a nullable column) arrive as objects: numeric classes
        y_labeled = _labels_as_numbers(y_labeled)
    if not (y.dtype.kind in "iub" or (y.dtype.kind == "f" and np.all(y_labeled % 1 == 0))):
        # integer-valued labels are always classes; everything else gets scikit-learn's
        # full (and slower) check, which rejects continuous and mixed-type targets
        check_classification_targets(y_labeled)
    _warn_svmlin_coding(y, unlabeled)
    classes, y_index = np.unique(y_labeled, return_inverse=True)
    if classes.size < min_classes:
        hint = "label rows of every class"
        if unlabeled.size:
            hint = (f"{unlabeled.size} rows are -1, which marks unlabeled rows; if -1 is a "
                    "class, recode it (e.g. np.where(y == -1, 0, y), or "
                    "semisup.io.svmlin_to_labels for SVMlin's +1/-1/0 labels)")
        raise ValueError(f"y contains {classes.size} class among its labeled rows "
                         f"({classes.tolist()}); at least {min_classes} are needed: {hint}")
    if require_unlabeled and unlabeled.size == 0:
        warn_at_caller("y has no unlabeled rows (no -1 entries): the semi-supervised method "
                       "reduces to its supervised counterpart", UserWarning)
    return SemiSupervisedData(X=X, classes=classes, labeled=labeled, unlabeled=unlabeled,
                              y_index=y_index.astype(np.int64))


def regression_targets(y) -> np.ndarray:
    """Real targets as float64, NaN where missing (NaN, ``None``, ``pd.NA``).

    Raises
    ------
    ValueError
        For non-numeric or infinite targets.
    """
    y = np.asarray(y)
    if y.dtype == object:
        values = y.tolist()
        bad = [v for v in values if not _is_missing(v) and (
            not isinstance(v, numbers.Real) or isinstance(v, (bool, np.bool_)))]
        if bad:
            raise ValueError(f"y must hold real numbers (NaN, None or pd.NA for unlabeled "
                             f"rows), got {bad[0]!r}; encode the targets as floats")
        y = np.array([np.nan if _is_missing(v) else float(v) for v in values])
    elif y.dtype.kind not in "iuf":
        raise ValueError(f"y must hold real numbers (NaN for unlabeled rows), got dtype "
                         f"{y.dtype}; a regressor needs numeric targets")
    y = y.astype(np.float64)
    if np.any(np.isinf(y)):
        raise ValueError("y contains infinity; give finite real targets, and NaN (or None) "
                         "for unlabeled rows")
    return y


@dataclass
class SemiSupervisedRegressionData:
    """A validated partially labeled regression set: ``X``, float ``y`` (NaN where
    unlabeled), and the indices of the labeled and unlabeled rows."""

    X: object
    y: np.ndarray
    labeled: np.ndarray
    unlabeled: np.ndarray


def check_semi_supervised_regression(X, y, *, accept_sparse: bool = True,
                                     require_unlabeled: bool = True,
                                     estimator=None) -> SemiSupervisedRegressionData:
    """Validate ``(X, y)`` for a regressor and split it into labeled and unlabeled rows.

    Unlabeled rows are the *missing* targets: NaN, ``None`` or ``pd.NA``.  ``-1`` is an
    ordinary real target here (unlike :func:`check_semi_supervised`).

    Raises
    ------
    ValueError
        With the argument at fault and how to fix it.
    """
    from sklearn.utils.validation import check_consistent_length, column_or_1d

    X = check_X(X, accept_sparse=accept_sparse, estimator=estimator,
                reset=None if estimator is None else True, scale=True)
    if y is None:
        raise ValueError(f"{type(estimator).__name__} requires y to be passed, but the target "
                         "y is None: give real targets, and NaN for unlabeled rows")
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = column_or_1d(y, warn=True)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional, got shape {y.shape}; give one real "
                         "target per row of X (NaN for unlabeled rows)")
    check_consistent_length(X, y)
    if X.shape[0] < 2:
        raise ValueError(f"{type(estimator).__name__} needs at least 2 rows, got n_samples = "
                         f"{X.shape[0]}; pass labeled and unlabeled rows together")
    y = regression_targets(y)
    unl = np.isnan(y)
    labeled = np.flatnonzero(~unl)
    unlabeled = np.flatnonzero(unl)
    if labeled.size == 0:
        raise ValueError("y has no labeled rows (every target is NaN / missing); give the "
                         "real target of at least one row")
    if require_unlabeled and unlabeled.size == 0:
        warn_at_caller("y has no unlabeled rows (no NaN entries): the semi-supervised method "
                       "reduces to its supervised counterpart", UserWarning)
    return SemiSupervisedRegressionData(X=X, y=y, labeled=labeled, unlabeled=unlabeled)


def check_fraction(value, name: str) -> float:
    """Validate a fraction in the open interval (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not 0.0 < float(value) < 1.0:
        raise ValueError(f"{name} must be a number in (0, 1), got {value!r}")
    return float(value)


def check_positive(value, name: str, *, allow_zero: bool = False) -> float:
    """Validate a positive (or non-negative) real hyper-parameter."""
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and \
        np.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    return float(value)


def check_int(value, name: str, low: int = 1) -> int:
    """Validate an integer hyper-parameter ``>= low`` (``bool`` is not an integer here)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def check_real(value, name: str, *, positive: bool, allow_none: bool = False):
    """Validate a finite real ``> 0`` (``positive``) or ``>= 0``; ``None`` if ``allow_none``."""
    if value is None and allow_none:
        return None
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and np.isfinite(value)
    ok = ok and (value > 0 if positive else value >= 0)
    if not ok:
        bound = "> 0" if positive else ">= 0"
        extra = " (or None for the default)" if allow_none else ""
        raise ValueError(f"{name} must be a finite number {bound}{extra}, got {value!r}")
    return float(value)


def check_finite(value, name: str) -> float:
    """Validate a finite real hyper-parameter of any sign (e.g. a kernel's ``coef0``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def check_bool(value, name: str) -> bool:
    """Validate a boolean flag (``True``/``False``, numpy booleans included)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_choice(value, name: str, choices) -> str:
    """Validate a string option among ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {value!r}")
    return value


def is_auto(value) -> bool:
    """Whether a parameter value asks for the automatic mode (the string ``'auto'``)."""
    return isinstance(value, str) and value == "auto"


def check_positive_or_auto(value, name: str, *, allow_zero: bool = False) -> None:
    """Validate a finite number ``> 0`` (``>= 0`` with ``allow_zero``) or ``'auto'``."""
    if is_auto(value):
        return
    ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and \
        np.isfinite(value) and (value >= 0 if allow_zero else value > 0)
    if not ok:
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound} or 'auto' (chosen by "
                         f"labeled-only cross-validation), got {value!r}")
