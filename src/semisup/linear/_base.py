"""Shared skeleton of the linear estimators: validate, split, one-vs-rest, store results."""

from __future__ import annotations

from abc import ABCMeta

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.validation import check_is_fitted

from semisup._validation import FLOAT_DTYPES, check_semi_supervised
from semisup.base import SemiSupervisedClassifierMixin
from semisup.calibration import ProbabilityMixin

# the fit skeleton and the positive-fraction helpers live in the scikit-learn-free core;
# re-exported here, where the other estimators import them from
from semisup.linear._core import (  # noqa: F401
    LinearClassifierCore,
    check_positive_fraction,
    class_fractions,
)
from semisup.model_selection import is_auto, select_parameter


class LinearSemiSupervisedClassifier(LinearClassifierCore, SemiSupervisedClassifierMixin,
                                     ProbabilityMixin, LinearClassifierMixin, ClassifierMixin,
                                     BaseEstimator, metaclass=ABCMeta):
    """Base class: subclasses implement ``_fit_binary``.

    Problems with more than two classes are solved one-vs-rest; every binary problem
    keeps all unlabeled rows unlabeled and takes its positive fraction from the prior
    of its class among the labeled rows.  The fit itself is
    :meth:`semisup.linear._core.LinearClassifierCore._fit_data` (shared with the command
    line's scikit-learn-free route); this class adds scikit-learn's validation and API, the
    ``'auto'`` modes, ``probability=True`` and distributed row blocks.
    """

    def fit(self, X, y):
        """Fit on ``(X, y)``; rows with ``y == -1`` are the unlabeled data.

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
        return self._fit(X, y)

    def _fit_routed(self, X, y, sample_weight=None) -> None:
        """An ``'auto'`` parameter: select it, then refit; otherwise the plain fit."""
        auto = [p for p in self._auto_parameters if is_auto(getattr(self, p, None))]
        if auto:
            self._fit_auto(auto[0], X, y, sample_weight)
        else:
            for attr in ("cv_results_", *(f"{p}_" for p in self._auto_parameters)):
                self.__dict__.pop(attr, None)   # from an earlier automatic fit
            self._fit_inner(X, y, sample_weight)

    #: parameters that accept ``"auto"`` -> the documented default used without CV
    _auto_parameters: dict = {}

    def _auto_grid(self, name: str, data, shared: dict) -> np.ndarray:
        """Candidate values of ``name``, strongest regularisation first (``shared``: what
        :meth:`_auto_shared` computed). Every estimator listing ``_auto_parameters``
        defines it."""
        raise TypeError(f"{type(self).__name__} lists automatic parameters "
                        f"({sorted(self._auto_parameters)}) but defines no grid for {name!r}")

    def _auto_shared(self, data) -> dict:
        """Parameters computed once from ``X`` and shared by every CV fit (e.g. the graph)."""
        return {}

    def _auto_held_out(self, data, shared: dict):
        """A callable scoring every fold of one value at once (see
        :func:`semisup.model_selection.select_parameter`), or ``None`` to refit."""
        return None

    def _fit_auto(self, name: str, X, y, sample_weight=None) -> None:
        """Choose ``name`` by :func:`semisup.model_selection.select_parameter`, then refit.

        Sets ``<name>_`` and ``cv_results_``; the fitted model is the refit at the chosen
        value on all rows with every label.
        """
        from sklearn.base import clone

        if getattr(type(X), "_semisup_distributed", False):
            raise ValueError(f"{name}='auto' is not available on distributed row blocks: "
                             f"select {name} on a sample and pass the number")
        data = check_semi_supervised(X, y, require_unlabeled=self._semi_supervised,
                                     estimator=self,
                                     dtype=FLOAT_DTYPES if self._float32 else np.float64)
        # the other parameters are checked before any CV fit
        probe = clone(self).set_params(**{name: self._auto_parameters[name]})
        probe._validate_params()
        probe._validate_params_common()
        codes = data.codes(np.intp)
        shared = self._auto_shared(data)
        values = [float(v) for v in self._auto_grid(name, data, shared)]
        fit_params = {} if sample_weight is None else {"sample_weight": sample_weight}
        X_cv = data.X
        if not self._semi_supervised:
            # a supervised fit ignores unlabeled rows: the same folds on the labeled rows
            X_cv, codes = X_cv[data.labeled], codes[data.labeled]
        held_out = self._auto_held_out(data, shared) if sample_weight is None else None
        sel = select_parameter(probe.set_params(**shared), X_cv, codes, name, values,
                               default=self._auto_parameters[name],
                               random_state=getattr(self, "random_state", None),
                               fit_params=fit_params, held_out=held_out)
        saved = {k: getattr(self, k) for k in (name, *shared)}
        try:
            self.set_params(**{name: sel.best}, **shared)
            self._fit_inner(X, y, sample_weight)
        finally:
            self.set_params(**saved)
        setattr(self, f"{name}_", sel.best)
        self.cv_results_ = sel.cv_results

    def _fit_inner(self, X, y, sample_weight=None):
        """scikit-learn's validation of any input (or distributed row blocks), the core's
        fit, then the probability sigmoids."""
        self._check_probability()
        if getattr(type(X), "_semisup_distributed", False):  # row blocks on a Dask cluster
            from semisup.distributed._estimators import fit_distributed

            fit_distributed(self, X, y, sample_weight)
            return
        data = check_semi_supervised(X, y, require_unlabeled=self._semi_supervised,
                                     estimator=self,
                                     dtype=FLOAT_DTYPES if self._float32 else np.float64)
        self._fit_data(data, sample_weight)
        self._fit_probability(data.X, y, sample_weight)
        return self

    def decision_function(self, X):
        """Signed distance to the hyperplane (``w^T x + b``); one column per class if > 2.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Decision values: the score of ``classes_[1]``, or one column per class.
        """
        check_is_fitted(self)
        return super().decision_function(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
