"""Shared skeleton of the linear estimators: validate, split, one-vs-rest, store results."""

from __future__ import annotations

from abc import ABCMeta, abstractmethod

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.validation import check_is_fitted

from semisup._logging import convergence_check, get_logger, progress, verbosity
from semisup._validation import (
    FLOAT_DTYPES,
    check_bool,
    check_fraction,
    check_positive,
    check_semi_supervised,
    warn_if_collapsed,
)
from semisup.base import SemiSupervisedClassifierMixin
from semisup.calibration import ProbabilityMixin
from semisup.model_selection import is_auto, select_parameter
from semisup.solvers._kernels import sparse_solver_threads
from semisup.solvers.design import Design

logger = get_logger(__name__)


def check_positive_fraction(value, name: str = "positive_fraction") -> None:
    """Validate ``None``, one fraction in (0, 1), or a 1-D array of them (one per class)."""
    if value is None:
        return
    if np.ndim(value) == 0:
        check_fraction(value, name)
        return
    try:
        r = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        r = None
    if r is None or r.ndim != 1 or not np.all((r > 0) & (r < 1)):
        raise ValueError(f"{name} must be a number in (0, 1), one such number per class, or "
                         f"None; got {value!r}")


def class_fractions(value, classes: np.ndarray) -> np.ndarray | None:
    """Positive fraction of each one-vs-rest problem from a per-class ``positive_fraction``.

    ``None`` when ``value`` is ``None`` or one number (the caller's own rule applies);
    otherwise the entries in the order of the binary problems: ``value[1]`` alone for two
    classes (``classes[1]`` is the positive class), all of them for more.
    """
    if value is None or np.ndim(value) == 0:
        return None
    r = np.asarray(value, dtype=np.float64)
    if r.shape != (classes.size,):
        raise ValueError(f"positive_fraction has {r.size} entries but there are "
                         f"{classes.size} classes: give one fraction per class, in the order "
                         "of classes_ (sorted labels)")
    return r[1:] if r.size == 2 else r


class LinearSemiSupervisedClassifier(SemiSupervisedClassifierMixin, ProbabilityMixin,
                                     LinearClassifierMixin, ClassifierMixin, BaseEstimator,
                                     metaclass=ABCMeta):
    """Base class: subclasses implement ``_fit_binary``.

    Problems with more than two classes are solved one-vs-rest; every binary problem
    keeps all unlabeled rows unlabeled and takes its positive fraction from the prior
    of its class among the labeled rows.
    """

    _semi_supervised = True
    #: keep float32 input (sparse data on the compiled path stays float32 in the Design)
    _float32 = False
    _defaultable: tuple = ()  # parameters whose ``None`` means a solver-dependent default
    #: estimator parameter bounding each solver that may stop early (named in the warning)
    _convergence_parameters: dict = {"mfn": "max_iter", "dcd": "max_iter",
                                     "cgls": "max_cg_iter"}

    @abstractmethod
    def _fit_binary(self, design: Design, data, y_pm: np.ndarray, positive_fraction: float,
                    sample_weight: np.ndarray | None, context=None, seed=None):
        """Fit one binary problem (``y_pm`` are the +1/-1 targets of the labeled rows).

        ``context`` is what :meth:`_prepare` computed once for all binary problems;
        ``seed`` the previous solution of this problem when ``warm_start`` applies.
        """

    def _prepare(self, design: Design, data):
        """Work shared by the binary problems of one fit (e.g. a graph); ``None`` by default."""
        return None

    def _seeds(self, design: Design, data, n_problems: int) -> list:
        """Previous weights to seed each binary problem with (``warm_start=True``)."""
        if not getattr(self, "warm_start", False) or not hasattr(self, "coef_") or \
                self.coef_.shape != (n_problems, design.n_features) or \
                not np.array_equal(getattr(self, "classes_", None), data.classes):
            return [None] * n_problems
        tail = self.intercept_[:, None] / design.intercept_scaling if design.fit_intercept \
            else np.empty((n_problems, 0))
        return list(np.hstack([self.coef_, tail]))

    def _validate_params_common(self) -> None:
        check_bool(self.fit_intercept, "fit_intercept")
        if hasattr(self, "warm_start"):
            check_bool(self.warm_start, "warm_start")
        check_positive(self.intercept_scaling, "intercept_scaling")
        check_positive(self.tol, "tol")
        for name in ("max_iter", "max_cg_iter"):
            v = getattr(self, name)
            if v is None and name in self._defaultable:
                continue
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")

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

    def _fit(self, X, y, sample_weight=None):
        with verbosity(self.verbose), convergence_check(self, self._convergence_parameters):
            auto = [p for p in self._auto_parameters if is_auto(getattr(self, p, None))]
            if auto:
                self._fit_auto(auto[0], X, y, sample_weight)
            else:
                for attr in ("cv_results_", *(f"{p}_" for p in self._auto_parameters)):
                    self.__dict__.pop(attr, None)   # from an earlier automatic fit
                self._fit_inner(X, y, sample_weight)
        return self

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
        self._check_probability()
        if getattr(type(X), "_semisup_distributed", False):  # row blocks on a Dask cluster
            from semisup.distributed._estimators import fit_distributed

            fit_distributed(self, X, y, sample_weight)
            return
        data = check_semi_supervised(X, y, require_unlabeled=self._semi_supervised,
                                     estimator=self,
                                     dtype=FLOAT_DTYPES if self._float32 else np.float64)
        self._validate_params()
        self._validate_params_common()
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
            if sample_weight.shape != (data.X.shape[0],) or np.any(sample_weight < 0) \
                    or not np.all(np.isfinite(sample_weight)):
                raise ValueError("sample_weight must be a finite non-negative array with one "
                                 "entry per row of X")
            if not np.any(sample_weight[data.labeled] > 0):
                raise ValueError("sample_weight is zero for every labeled row: give at least "
                                 "one labeled row a positive weight")
        design = Design(data.X, self.fit_intercept, self.intercept_scaling)
        n_classes = data.classes.size
        positives = [1] if n_classes == 2 else list(range(n_classes))
        # a per-class positive_fraction (one-vs-rest balance) replaces the labeled prior
        fractions = class_fractions(getattr(self, "positive_fraction", None), data.classes)
        context = self._prepare(design, data)
        seeds = self._seeds(design, data, len(positives))
        results = []
        name = type(self).__name__
        with sparse_solver_threads(design.sparse), \
                progress(len(positives), f"{name} one-vs-rest", self.verbose, "class") as bar:
            for i, (k, seed) in enumerate(zip(positives, seeds, strict=True)):
                if n_classes > 2:
                    logger.info("%s: class %r vs rest", name, data.classes[k])
                y_pm = data.binary_targets(k)
                prior = float(np.average(y_pm > 0, weights=None if sample_weight is None
                                         else sample_weight[data.labeled])) \
                    if fractions is None else float(fractions[i])
                results.append(self._fit_binary(design, data, y_pm, prior, sample_weight,
                                                context=context, seed=seed))
                bar.update()
        coefs, intercepts = zip(*(design.weights_to_coef(r.w) for r in results), strict=True)
        self.classes_ = data.classes
        self.coef_ = np.vstack(coefs)
        self.intercept_ = np.asarray(intercepts, dtype=np.float64)
        self.n_features_in_ = data.X.shape[1]
        self.fit_results_ = results
        self.objective_ = results[0].objective if len(results) == 1 \
            else np.array([r.objective for r in results])
        self.n_iter_ = np.array([r.n_iter for r in results])
        transduction = np.empty(data.X.shape[0], dtype=data.classes.dtype)
        transduction[data.labeled] = data.classes[data.y_index]
        if data.unlabeled.size:
            # predicting every row costs little more and never copies the unlabeled rows
            if design.X.dtype == np.float32:
                # the compiled products: scipy would make a float64 copy of the values
                scores = np.column_stack([design.matvec(r.w) for r in results])
            else:
                scores = safe_sparse_dot(data.X, self.coef_.T) + self.intercept_
            winner = (scores[:, 0] > 0).astype(np.intp) if scores.shape[1] == 1 \
                else scores.argmax(axis=1)
            transduction[data.unlabeled] = self.classes_[winner[data.unlabeled]]
            warn_if_collapsed(self, transduction[data.unlabeled], n_classes)
        self.transduction_ = transduction
        self._fit_probability(data.X, y, sample_weight)
        return self

    def _validate_params(self) -> None:
        """Hook for estimator-specific parameter checks."""

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
