"""Class probabilities for margin classifiers: Platt scaling fitted on the labeled rows only.

Every semisup classifier with a ``decision_function`` gets ``predict_proba`` and
``predict_log_proba`` from :class:`ProbabilityMixin` when built with
``probability=True`` (as :class:`sklearn.svm.SVC`): ``fit`` then also runs a stratified
cross-validation over the **labeled** rows (:class:`semisup.model_selection.LabeledStratifiedKFold`,
every unlabeled row in every training fold), collects the out-of-fold decision values of
the labeled rows and fits a sigmoid ``P(y = 1 | f) = 1 / (1 + exp(A f))`` to them by
maximum likelihood (Platt, 1999, with the smoothed targets and Newton method of Lin, Lin &
Weng, 2007). Platt's offset ``B`` is fixed at 0 so that ``predict_proba``'s arg max is
always ``predict`` (scikit-learn's contract, and what ``SelfTrainingClassifier`` needs to
pseudo-label consistently); with more than two classes one slope ``A`` is fitted to the
pooled one-vs-rest outputs and the sigmoids are normalised to sum to one, which keeps the
ranking of the decision values. This costs ``n_folds`` (5, fewer when a labeled class is
smaller) extra fits, hence opt-in. A class needs at least 2 labeled rows.

A new estimator opts in by inheriting :class:`ProbabilityMixin` (before
``ClassifierMixin``), having a ``probability`` parameter, and calling
``self._fit_probability(X, y, sample_weight)`` at the end of ``fit`` with the validated
``X``.

Other routes, for scikit-learn's meta-estimators (which re-encode ``y`` and would treat
``-1`` as a class):

- ``CalibratedClassifierCV(FrozenEstimator(fitted_model), method="isotonic")`` fitted on
  held-out *labeled* rows: isotonic or sigmoid calibration of a semi-supervised fit.
- ``VotingClassifier([(name, FrozenEstimator(fitted_model)), ...], voting="soft")``
  fitted on labeled rows: soft voting over semi-supervised fits.
- ``SelfTrainingClassifier(L2SVM(probability=True))`` works directly (it fits its
  estimator on labeled rows).
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.special import expit, log_expit
from sklearn.base import clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from semisup._validation import check_bool, unlabeled_mask

#: folds of the internal cross-validation (fewer when a labeled class is smaller)
N_FOLDS = 5


def platt_sigmoid(f: np.ndarray, positive: np.ndarray, sample_weight: np.ndarray | None = None,
                  fit_intercept: bool = True, max_iter: int = 100,
                  tol: float = 1e-10) -> tuple[float, float]:
    """Fit ``P(positive | f) = 1 / (1 + exp(A f + B))`` by maximum likelihood.

    Targets are Platt's smoothed ``(N+ + 1) / (N+ + 2)`` and ``1 / (N- + 2)``, which keep
    the fit finite on separable decision values; the minimiser of the cross-entropy is
    found by Newton's method with backtracking (Lin, Lin & Weng, 2007, Algorithm 1).

    Parameters
    ----------
    f : ndarray of shape (n,)
        Decision values (out of fold).
    positive : ndarray of bool, shape (n,)
        Whether each row belongs to the positive class.
    sample_weight : ndarray of shape (n,), optional
    fit_intercept : bool, default=True
        Fit ``B``; with ``False``, ``B = 0``: the sigmoid crosses 1/2 where ``f = 0``, so
        thresholding the probability at 1/2 gives the classifier's own predictions.

    Returns
    -------
    A, B : float
    """
    f = np.asarray(f, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    w = np.ones_like(f) if sample_weight is None else np.asarray(sample_weight, np.float64)
    n_pos, n_neg = float(w[positive].sum()), float(w[~positive].sum())
    t = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    theta = np.array([0.0, np.log((n_neg + 1.0) / (n_pos + 1.0)) if fit_intercept else 0.0])
    free = slice(0, 2) if fit_intercept else slice(0, 1)

    def loss(th: np.ndarray) -> float:
        z = th[0] * f + th[1]  # P = expit(-z); the cross-entropy written stably in z
        return float(w @ (t * -log_expit(-z) + (1.0 - t) * -log_expit(z)))

    value = loss(theta)
    for _ in range(max_iter):
        p = expit(-(theta[0] * f + theta[1]))
        d = w * (t - p)                    # derivative of the loss in z
        h = np.maximum(w * p * (1.0 - p), 1e-12)
        g = np.array([f @ d, d.sum()])[free]
        H = np.array([[f @ (h * f) + 1e-12, f @ h], [f @ h, h.sum() + 1e-12]])[free, free]
        if np.abs(g).max() < tol * max(1.0, float(w.sum())):
            break
        step = np.zeros(2)
        step[free] = np.linalg.solve(H, -g)
        s = 1.0
        while s >= 1e-10:
            trial = theta + s * step
            new = loss(trial)
            if new < value + 1e-4 * s * float(g @ step[free]):
                break
            s /= 2.0
        else:
            break
        theta, value = trial, new
    return float(theta[0]), float(theta[1])


def _as_1d(y) -> np.ndarray:
    y = np.asarray(y)
    return y.ravel() if y.ndim == 2 and y.shape[1] == 1 else y


def _rows(X, rows, cols=None):
    X_rows = X.iloc[rows] if hasattr(X, "iloc") else X[rows]
    if cols is None:
        return X_rows
    return X_rows.iloc[:, cols] if hasattr(X_rows, "iloc") else X_rows[:, cols]


def out_of_fold_decisions(estimator, X, y, sample_weight=None, n_folds: int = N_FOLDS,
                          random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """Decision values of the labeled rows, each from a fit that did not see its label.

    Folds: :class:`~semisup.model_selection.LabeledStratifiedKFold` with
    ``min(n_folds, smallest class)`` folds; every unlabeled row is in every training fold.
    A ``kernel="precomputed"`` Gram matrix is cut on both axes.

    Returns
    -------
    labeled : ndarray of int
        Indices of the labeled rows.
    decisions : ndarray of shape (n_labeled,) or (n_labeled, n_outputs)
    """
    from semisup.model_selection import LabeledStratifiedKFold

    y = _as_1d(y)
    if sp.issparse(X):
        X = X.tocsr()  # row indexing (COO, DIA... have none)
    elif not hasattr(X, "iloc"):
        X = np.asarray(X)
    labeled = np.flatnonzero(~unlabeled_mask(y))
    _, counts = np.unique(y[labeled], return_counts=True)
    k = int(min(n_folds, counts.min()))
    if k < 2:
        raise ValueError("probability=True needs at least 2 labeled rows in every class (the "
                         "sigmoid is fitted on out-of-fold decision values); label more rows "
                         "or use probability=False")
    precomputed = getattr(estimator, "kernel", None) == "precomputed"
    position = np.full(y.shape[0], -1)
    position[labeled] = np.arange(labeled.size)
    decisions = None
    cv = LabeledStratifiedKFold(k, random_state=0 if random_state is None else random_state)
    for train, test in cv.split(X, y):
        model = clone(estimator).set_params(probability=False)
        if "fallback" in model.get_params(deep=False):
            # calibrate the model's own decision values, not a fold's guard decision
            model.set_params(fallback="none")
        fit_kwargs = {} if sample_weight is None else {
            "sample_weight": np.asarray(sample_weight)[train]}
        model.fit(_rows(X, train, train if precomputed else None), y[train], **fit_kwargs)
        dec = np.asarray(model.decision_function(
            _rows(X, test, train if precomputed else None)))
        if decisions is None:
            decisions = np.empty((labeled.size,) + dec.shape[1:])
        decisions[position[test]] = dec
    return labeled, decisions


def _has_probability(estimator) -> bool:
    if not getattr(estimator, "probability", False):
        raise AttributeError(f"predict_proba is not available when probability=False: build "
                             f"{type(estimator).__name__}(probability=True) (it fits a sigmoid "
                             "on cross-validated decision values of the labeled rows)")
    return True


class ProbabilityMixin:
    """``predict_proba`` / ``predict_log_proba`` by Platt scaling (``probability=True``).

    Attributes
    ----------
    probA_, probB_ : ndarray of shape (n_outputs,)
        Set by ``fit`` when ``probability=True``: sigmoid parameters ``A`` (shared by
        the outputs) and ``B`` (0) per output (one output for two classes).
    """

    def _check_probability(self) -> None:
        """Validate the ``probability`` flag; every base calls this at the start of ``fit``.

        Raises
        ------
        ValueError
            When ``probability`` is not ``True`` / ``False``.
        """
        check_bool(getattr(self, "probability", False), "probability")

    def _fit_probability(self, X, y, sample_weight=None) -> None:
        """Fit the sigmoids (called at the end of ``fit``); a no-op for ``probability=False``."""
        self._check_probability()
        for name in ("probA_", "probB_"):
            if hasattr(self, name):
                delattr(self, name)
        if not getattr(self, "probability", False):
            return
        labeled, dec = out_of_fold_decisions(self, X, y, sample_weight,
                                             random_state=getattr(self, "random_state", None))
        y_l = _as_1d(y)[labeled]
        w_l = None if sample_weight is None else np.asarray(sample_weight)[labeled]
        if dec.ndim == 1:
            A, B = platt_sigmoid(dec, y_l == self.classes_[1], w_l, fit_intercept=False)
        else:
            # one slope for every one-vs-rest output, fitted on them pooled: the
            # probabilities then rank the classes as the decision values do
            positive = y_l[:, None] == self.classes_[None, :]
            w_pool = None if w_l is None else np.repeat(w_l, dec.shape[1])
            A, B = platt_sigmoid(dec.ravel(), positive.ravel(), w_pool, fit_intercept=False)
        n_outputs = 1 if dec.ndim == 1 else dec.shape[1]
        self.probA_ = np.full(n_outputs, A)
        self.probB_ = np.full(n_outputs, B)

    @available_if(_has_probability)
    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities: Platt sigmoids of ``decision_function`` (``probability=True``).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        check_is_fitted(self, "probA_")
        dec = np.asarray(self.decision_function(X))
        if dec.ndim == 1:
            p = expit(-(self.probA_[0] * dec + self.probB_[0]))
            return np.column_stack([1.0 - p, p])
        P = expit(-(dec * self.probA_ + self.probB_))
        total = P.sum(axis=1, keepdims=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            P = np.where(total > 0, P / total, 1.0 / P.shape[1])
        return P

    @available_if(_has_probability)
    def predict_log_proba(self, X) -> np.ndarray:
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Logarithm of the class probabilities.
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
