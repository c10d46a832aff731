"""The fit of the SVMlin-family estimators without scikit-learn: one implementation, two users.

The public estimators (:class:`semisup.linear.tsvm.TransductiveSVM`,
:class:`semisup.linear.da.DeterministicAnnealingSVM`, :class:`semisup.linear.svm.L2SVM`,
:class:`semisup.linear.svm.RLSClassifier`) are subclasses of the classes here:
they add scikit-learn's plumbing (``BaseEstimator``, ``ClassifierMixin``, the prediction
mixins, ``probability=True``, the ``'auto'`` modes, distributed row blocks) and the full
validation of ``(X, y)`` (:func:`semisup._validation.check_semi_supervised`), and then run
:meth:`LinearClassifierCore._fit_data` below, the one copy of the fit skeleton (the
one-vs-rest loop, the seeds, the fitted attributes, the collapse warning) and of the guard
of :mod:`semisup.safety` (``fallback="cv"``), so both routes make the same decision.

``semisup fit`` uses the classes here directly on the file it has already read and checked
(CSR float64 rows and class codes ``0..K-1``, ``-1`` for unlabeled rows), so that a fit on a
small file does not pay for importing scikit-learn (about 1.1 s of the 1.3 s such a command
took).  The core classes bear the public names, so that every message of a fit (collapse and
convergence warnings, progress) reads the same on both routes, and
:attr:`LinearClassifierCore._model_file_class` names the public class a model file records
(:mod:`semisup.cli._modelfile`): the file then loads as the estimator.
"""

from __future__ import annotations

import copy
from abc import ABCMeta, abstractmethod

import numpy as np

from semisup._logging import (
    convergence_check,
    get_logger,
    progress,
    report_unconverged,
    verbosity,
    warn_at_caller,
)
from semisup._validation import (
    SemiSupervisedData,
    check_bool,
    check_fraction,
    check_int,
    check_positive,
    check_positive_or_auto,
    check_scale,
    warn_if_collapsed,
)
from semisup.linear._defaults import default_lam
from semisup.losses import HingeTerms, split_sample_weight
from semisup.regularizers import GraphRidge, Ridge
from semisup.safety import check_fallback, guard
from semisup.solvers._kernels import NARROW_FEATURES, machine_busy, sparse_solver_threads
from semisup.solvers.cgls import cgls
from semisup.solvers.design import Design
from semisup.solvers.mfn import MFNResult, l2svm_mfn
from semisup.solvers.s3vm import deterministic_annealing, transductive_svm

logger = get_logger("semisup.linear._base")  # the estimators' logger, as before the split

#: CGLS and inner-loop tolerance of DA's guard fold fits (``DeterministicAnnealingSVM.
#: _guard_fold_params``): 2.2x less CPU for the guarded fit, as many cells within a point
#: of the counterpart (benchmarks/results/da_guard_tol.md)
GUARD_FOLD_TOL = 1e-3


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


#: dense designs of at most this many features solve with one BLAS thread
#: (:func:`solver_threads`; ``benchmarks/results/bench_dense_blas_threads.md``): the same
#: bound as the wrappers' (:data:`semisup.solvers._kernels.NARROW_FEATURES`)
DENSE_ONE_THREAD_MAX_FEATURES = NARROW_FEATURES


def solver_threads(design: Design):
    """BLAS limited to one thread for the solve on ``design``: sparse, or dense and narrow.

    On sparse data BLAS only sees vectors, yet OpenBLAS threads them and its threads
    spin-wait afterwards: without this limit (the compiled kernels' sizes only, before) TSVM
    on the SSL-book text set took 46 s end to end from the command line against 0.6 s for
    the estimator's fit, on a busy machine (benchmarks/results/bench_cli_speed.md).

    On dense data of at most :data:`DENSE_ONE_THREAD_MAX_FEATURES` features each BLAS call
    (``X @ w``, the preconditioner's ``d x d`` Gram product and Cholesky factor) is too
    small for a thread team to pay for itself. One thread against the team, best of 2
    (``benchmarks/results/bench_dense_blas_threads.md``): below 40 features within noise
    (fits of 20-600 ms); from 180 to 256 features (dna, digit1, ten-class USPS) DA took
    0.31-0.63x the team's wall time idle and 0.07-0.49x with twice as many competing
    processes as cores, TSVM 0.80-1.02x idle and 0.28-1.09x busy. At 784 features (MNIST,
    5,000 rows) one thread took 1.21-1.67x idle but 0.41-0.56x busy, so wider dense data
    keeps the team only while no other process's thread is runnable as the fit starts
    (:func:`~semisup.solvers._kernels.machine_busy`; there the default took 1.04-1.17x the
    team's time idle and 0.40-0.59x busy).
    """
    if not design.sparse:
        if design.n_features > DENSE_ONE_THREAD_MAX_FEATURES and not machine_busy():
            import contextlib

            return contextlib.nullcontext()
        if design.n_rows * design.n_features >= 100_000:
            # scipy's own OpenBLAS (the preconditioner's Cholesky), loaded before the limit
            # so that the limit reaches it (below); tiny problems keep their fast start
            import scipy.linalg  # noqa: F401

        return sparse_solver_threads(True)
    if design._compiled:
        # scipy.linalg loads scipy's own OpenBLAS, which the solvers use on large data (the
        # preconditioner's Cholesky factors).  The limit only reaches the BLAS libraries
        # loaded when it is first set; scikit-learn imports scipy.linalg, but a fit without
        # it (the command line) would load this one only during the solve, its threads then
        # unlimited.  Small problems never load it here (tests/test_startup.py).
        import scipy.linalg  # noqa: F401

    return sparse_solver_threads(True)


def coded_data(X, codes, *, require_unlabeled: bool = True) -> SemiSupervisedData:
    """The labeled/unlabeled split of rows already read and checked, without scikit-learn.

    What :func:`semisup._validation.check_semi_supervised` returns for the same input, for
    the input the command line has: ``X`` a float64 CSR matrix or 2-D array of finite values
    (the file reader refuses others) and ``codes`` the class codes ``0..K-1`` of the
    labeled rows, ``-1`` for the unlabeled ones.

    Parameters
    ----------
    X : csr_matrix or ndarray of shape (n_samples, n_features), float64
        The rows (duplicate sparse entries are summed into a copy, as the estimators do).
    codes : ndarray of int of shape (n_samples,)
        Class codes, ``-1`` for unlabeled rows.
    require_unlabeled : bool, default=True
        Warn when no row is unlabeled.

    Returns
    -------
    SemiSupervisedData

    Raises
    ------
    ValueError
        Naming the argument at fault and the fix.
    """
    values = X.data if hasattr(X, "tocsr") else X
    if getattr(X, "format", "csr") != "csr" or getattr(X, "ndim", 0) != 2 \
            or values.dtype != np.float64:
        raise ValueError(f"X must be a float64 CSR matrix or 2-D array, got "
                         f"{type(X).__name__} of dtype {values.dtype}; use the estimator "
                         "(semisup.TransductiveSVM...) for other input")
    if not np.all(np.isfinite(values)):
        raise ValueError("X contains NaN or infinity; give finite feature values")
    if hasattr(X, "has_canonical_format") and not X.has_canonical_format:
        X = X.copy()  # as semisup._validation.check_X: never the caller's matrix
        X.sum_duplicates()
    check_scale(X)
    codes = np.asarray(codes)
    if codes.dtype.kind not in "iu" or codes.shape != (X.shape[0],) or \
            np.any(codes < -1):
        raise ValueError(f"y must hold one integer class code >= 0 (-1 for unlabeled) per row "
                         f"of X, got dtype {codes.dtype} and shape {codes.shape}")
    unlabeled_rows = codes == -1
    labeled = np.flatnonzero(~unlabeled_rows)
    unlabeled = np.flatnonzero(unlabeled_rows)
    classes, y_index = np.unique(codes[labeled], return_inverse=True)
    if classes.size < 2:
        raise ValueError(f"y contains {classes.size} class among its labeled rows "
                         f"({classes.tolist()}); at least 2 are needed: label rows of every "
                         "class")
    if require_unlabeled and unlabeled.size == 0:
        # the words of check_semi_supervised, which the command line filters by them
        warn_at_caller("y has no unlabeled rows (no -1 entries): the semi-supervised method "
                       "reduces to its supervised counterpart", UserWarning)
    return SemiSupervisedData(X=X, classes=classes, labeled=labeled, unlabeled=unlabeled,
                              y_index=y_index.astype(np.int64))


class LinearClassifierCore(metaclass=ABCMeta):
    """The fit skeleton of the linear classifiers: validate, one-vs-rest, store results.

    Subclasses implement ``_fit_binary``.  Problems with more than two classes are solved
    one-vs-rest; every binary problem keeps all unlabeled rows unlabeled and takes its
    positive fraction from the prior of its class among the labeled rows.

    On its own (the command line's route) ``fit`` takes rows already checked and class codes
    (:func:`coded_data`); :class:`semisup.linear._base.LinearSemiSupervisedClassifier`
    overrides the input step with scikit-learn's validation and adds the ``'auto'`` modes,
    ``probability=True`` and distributed row blocks around the same :meth:`_fit_data`.
    """

    _semi_supervised = True
    #: keep float32 input (sparse data on the compiled path stays float32 in the Design)
    _float32 = False
    _defaultable: tuple = ()  # parameters whose ``None`` means a solver-dependent default
    #: estimator parameter bounding each solver that may stop early (named in the warning)
    _convergence_parameters: dict = {"mfn": "max_iter", "dcd": "max_iter",
                                     "cgls": "max_cg_iter"}
    #: ``module.Class`` of the public estimator a model file records for an object of this
    #: very class (read from the class's own namespace, so that subclasses never inherit it)
    _model_file_class: str | None = None

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

    def _validate_params(self) -> None:  # noqa: B027 - an optional hook, not abstract
        """Hook for estimator-specific parameter checks."""

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

    def _fit(self, X, y, sample_weight=None):
        with verbosity(self.verbose), convergence_check(self, self._convergence_parameters):
            self._fit_routed(X, y, sample_weight)
        return self

    def _fit_routed(self, X, y, sample_weight=None) -> None:
        """Choose how to fit (the estimators add their ``'auto'`` modes here)."""
        self._fit_inner(X, y, sample_weight)

    def _fit_inner(self, X, y, sample_weight=None):
        """Fit on checked rows and class codes (:func:`coded_data`)."""
        if check_bool(getattr(self, "probability", False), "probability"):
            raise ValueError(f"probability=True needs the estimator semisup.{type(self).__name__}"
                             " (its calibration uses scikit-learn)")
        data = coded_data(X, y, require_unlabeled=self._semi_supervised)
        self.n_features_in_ = data.X.shape[1]  # where scikit-learn's validate_data sets it
        return self._fit_data(data, sample_weight)

    def _fit_data(self, data: SemiSupervisedData, sample_weight=None):
        """The fit proper, on validated data: parameters, one-vs-rest, fitted attributes.

        With ``fallback="cv"`` (a semi-supervised estimator with unlabeled rows) the guard
        of :mod:`semisup.safety` decides first whether the binary problems are solved by
        the estimator's algorithm or by the supervised counterpart (:meth:`_fit_supervised`).
        """
        self._validate_params()
        self._validate_params_common()
        sample_weight = self._check_sample_weight(data, sample_weight)
        if not hasattr(self, "fallback"):          # a supervised estimator: no guard
            return self._fit_problems(data, sample_weight, supervised=False)
        self.fallback_ = False
        self.cv_scores_ = None
        if check_fallback(self.fallback) == "cv" and data.unlabeled.size:
            self.cv_scores_ = guard(lambda which, train, rows: self._fold_predict(
                which, data, train, rows, sample_weight), data.codes(),
                getattr(self, "random_state", None), type(self).__name__,
                keep_singletons=True)
            self.fallback_ = self.cv_scores_ is not None and not self.cv_scores_["keep"]
        return self._fit_problems(data, sample_weight, supervised=self.fallback_)

    def _fold_predict(self, which: str, data: SemiSupervisedData, train: np.ndarray,
                      rows: np.ndarray, sample_weight) -> tuple[np.ndarray, np.ndarray]:
        """Class indices and decision values of the rows ``rows`` after a fit on the labels
        of ``train`` only (every other row unlabeled): one fold of the guard."""
        fold = SemiSupervisedData(data.X, data.classes, train,
                                  np.setdiff1d(np.arange(data.X.shape[0]), train),
                                  data.codes()[train])
        est = copy.copy(self)
        est.verbose = 0
        est.warm_start = False
        if which != "supervised":
            for name, value in self._guard_fold_params().items():
                setattr(est, name, value)
        est._fit_problems(fold, sample_weight, supervised=which == "supervised")
        scores = np.asarray(data.X[rows] @ est.coef_.T + est.intercept_)
        if scores.shape[1] == 1:
            return (scores[:, 0] > 0).astype(np.intp), scores[:, 0]
        return scores.argmax(axis=1), scores

    def _guard_fold_params(self) -> dict:
        """Parameters of the guard's semi-supervised fold fits that differ from the
        estimator's (none by default; see :meth:`semisup.base.SupervisedFallbackMixin.
        _guard_fold_params`)."""
        return {}

    def _fit_supervised(self, data: SemiSupervisedData, sample_weight: np.ndarray | None):
        """The supervised counterpart: scikit-learn's ``LogisticRegression()`` on the labeled
        rows (``C = 1``, unpenalised intercept, multinomial for more than two classes), by
        :func:`semisup.solvers.logistic.logistic_regression` -- the model a user fits when
        not using the unlabeled rows, and the one issue 26 measures the methods against."""
        from semisup.solvers.logistic import logistic_regression

        result = logistic_regression(
            data.X[data.labeled], data.y_index, data.classes.size, C=1.0,
            sample_weight=None if sample_weight is None else sample_weight[data.labeled],
            fit_intercept=self.fit_intercept)
        if not result.converged:
            # scikit-learn's own stop (its default max_iter), not this estimator's max_iter:
            # the counterpart is that fit, so no convergence warning names a parameter here
            logger.info("%s: the logistic-regression counterpart stopped at %d L-BFGS-B "
                        "iterations, as LogisticRegression() does", type(self).__name__,
                        result.n_iter)
        return result

    def _check_sample_weight(self, data: SemiSupervisedData, sample_weight):
        """Validated row weights (float64), or ``None``; checked before the guard, whose
        supervised fits would not see a problem with the unlabeled rows' weights."""
        if sample_weight is None:
            return None
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        if sample_weight.shape != (data.X.shape[0],) or np.any(sample_weight < 0) \
                or not np.all(np.isfinite(sample_weight)):
            raise ValueError("sample_weight must be a finite non-negative array with one "
                             "entry per row of X")
        if not np.any(sample_weight[data.labeled] > 0):
            raise ValueError("sample_weight is zero for every labeled row: give at least "
                             "one labeled row a positive weight")
        return sample_weight

    def _fit_problems(self, data: SemiSupervisedData, sample_weight, supervised: bool):
        """One-vs-rest over the binary problems (by the supervised counterpart when
        ``supervised``), then the fitted attributes."""
        design = Design(data.X, self.fit_intercept, self.intercept_scaling)
        n_classes = data.classes.size
        positives = [1] if n_classes == 2 else list(range(n_classes))
        # a per-class positive_fraction (one-vs-rest balance) replaces the labeled prior
        fractions = class_fractions(getattr(self, "positive_fraction", None), data.classes)
        # the supervised counterpart needs no graph and no data-driven lam
        context = None if supervised else self._prepare(design, data)
        if supervised:
            for attr in ("lam_", "adjacency_"):   # from an earlier fit, not this one
                self.__dict__.pop(attr, None)
            result = self._fit_supervised(data, sample_weight)
            results, coef, intercept = [result], result.coef, result.intercept
            tail = intercept[:, None] / design.intercept_scaling if design.fit_intercept \
                else np.empty((coef.shape[0], 0))
            weights = list(np.hstack([coef, tail]))
        else:
            seeds = self._seeds(design, data, len(positives))
            results = []
            name = type(self).__name__
            with solver_threads(design), progress(len(positives), f"{name} one-vs-rest",
                                                  self.verbose, "class") as bar:
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
            weights = [r.w for r in results]
            coefs, intercepts = zip(*(design.weights_to_coef(w) for w in weights), strict=True)
            coef, intercept = np.vstack(coefs), np.asarray(intercepts, dtype=np.float64)
        self.classes_ = data.classes
        self.coef_ = coef
        self.intercept_ = intercept
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
                scores = np.column_stack([design.matvec(w) for w in weights])
            else:
                # scikit-learn's safe_sparse_dot: the product, dense for sparse @ dense
                scores = data.X @ self.coef_.T + self.intercept_
            winner = (scores[:, 0] > 0).astype(np.intp) if scores.shape[1] == 1 \
                else scores.argmax(axis=1)
            transduction[data.unlabeled] = self.classes_[winner[data.unlabeled]]
            warn_if_collapsed(self, transduction[data.unlabeled], n_classes)
        self.transduction_ = transduction
        return self


class SemiSupervisedLinearSVMCore(LinearClassifierCore):
    """Base of TSVM and DA: parameters ``lam``, ``lam_u``, ``positive_fraction``.

    Subclasses name their algorithm (a function of the design with labeled rows first,
    the number of labeled rows, their +1/-1 labels, ``lam``, ``lam_u`` and ``r``) and the
    keyword arguments it takes from the estimator's parameters.
    """

    _float32 = True
    _convergence_parameters = {"mfn": "max_iter", "cgls": "max_cg_iter",
                               "label switching": "lam_u_growth",
                               "DA inner": "max_inner_iter", "DA annealing": "max_outer_iter"}

    def _validate_params(self) -> None:
        if self.lam is not None:  # None: default_lam of the training rows
            check_positive(self.lam, "lam")
        check_positive(self.lam_u, "lam_u", allow_zero=True)
        check_positive(self.gamma_I, "gamma_I", allow_zero=True)
        check_positive_fraction(self.positive_fraction)
        # the subclasses' schedule parameters, through the same shared checks (a negative
        # start or a NaN tolerance would otherwise loop until the iteration limits)
        for name in ("max_outer_iter", "max_inner_iter"):
            if hasattr(self, name):
                check_int(getattr(self, name), name)
        for name in ("lam_u_init", "kl_tol", "entropy_tol"):
            if hasattr(self, name):
                check_positive(getattr(self, name), name)

    def _positive_fraction(self, prior: float) -> float:
        """``r``: the given fraction, else ``prior`` (clipped).

        ``prior`` is the class prior among the labeled rows, or this problem's entry of a
        per-class ``positive_fraction`` (see :func:`class_fractions`).
        """
        if self.positive_fraction is not None and np.ndim(self.positive_fraction) == 0:
            return float(self.positive_fraction)
        return min(max(prior, 1e-3), 1 - 1e-3)

    @staticmethod
    @abstractmethod
    def _algorithm(A, n_labeled, y_l, lam, lam_u, positive_fraction, **options):
        """The training algorithm (e.g. :func:`semisup.solvers.s3vm.transductive_svm`)."""

    @abstractmethod
    def _algorithm_options(self) -> dict:
        """Keyword arguments of ``_algorithm`` taken from the estimator's parameters."""

    def _prepare(self, design, data):
        """Resolve ``lam`` (``lam_``) once per fit; with ``gamma_I > 0`` also the regulariser
        ``lam I + gamma_I/n^2 X^T L X`` (graph + S3VM)."""
        # lam=None: 0.001 x the spread of all training rows, weighted as the objective
        # (benchmarks/results/defaults_s3vm.md)
        self.lam_ = float(self.lam) if self.lam is not None \
            else default_lam(data.X, sample_weight=self._lam_weights)
        if not self.gamma_I:
            return None
        from semisup.linear.laplacian import graph_laplacian

        L, W = graph_laplacian(data.X, graph=self.graph)
        self.adjacency_ = W
        n = data.X.shape[0]
        return GraphRidge(self.lam_, self.gamma_I / n ** 2, design, L)

    def _check_sample_weight(self, data, sample_weight):
        sample_weight = super()._check_sample_weight(data, sample_weight)
        if sample_weight is not None:   # the transductive objectives' own check
            split_sample_weight(sample_weight[np.r_[data.labeled, data.unlabeled]],
                                data.labeled.size, data.unlabeled.size)
        return sample_weight

    def _fit_data(self, data, sample_weight=None):
        # the (checked) row weights reach _prepare, where lam=None is resolved
        self._lam_weights = sample_weight
        try:
            return super()._fit_data(data, sample_weight)
        finally:
            del self._lam_weights

    def fit(self, X, y, sample_weight=None):
        """Fit on ``(X, y)``; rows with ``y == -1`` are the unlabeled data.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for unlabeled rows.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights, labeled and unlabeled: the means ``1/l`` and ``1/u``
            of the objective become weighted means (an integer weight equals repeating
            the row).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight)

    def _fit_binary(self, design, data, y_pm, prior, sample_weight, context=None, seed=None):
        order = np.concatenate([data.labeled, data.unlabeled])
        A = design.restrict(order)
        mfn_options = dict(tol=self.tol, max_iter=self.max_iter, max_cg_iter=self.max_cg_iter)
        return self._algorithm(A, data.labeled.size, y_pm, self.lam_, self.lam_u,
                               self._positive_fraction(prior), mfn_options=mfn_options,
                               verbose=self.verbose, reg=context,
                               sample_weight=None if sample_weight is None
                               else sample_weight[order], **self._algorithm_options())


# The concrete cores bear the public names (module docstring); their parameters and their
# documentation are those of the public classes.

class TransductiveSVM(SemiSupervisedLinearSVMCore):
    """Core of :class:`semisup.linear.tsvm.TransductiveSVM` (parameters documented there)."""

    _model_file_class = "semisup.linear.tsvm.TransductiveSVM"

    def __init__(self, lam: float | None = 1e-3, lam_u: float = 1.0,
                 positive_fraction: float | np.ndarray | None = None,
                 max_switches: int | None = None,
                 lam_u_init: float = 1e-5, lam_u_growth: float = 1.5, gamma_I: float = 0.0,
                 graph=None, fit_intercept: bool = True,
                 intercept_scaling: float = 1.0, tol: float = 1e-6, max_iter: int = 50,
                 max_cg_iter: int = 10_000, fallback: str = "cv", verbose: int = 0,
                 probability: bool = False):
        self.lam = lam
        self.lam_u = lam_u
        self.positive_fraction = positive_fraction
        self.max_switches = max_switches
        self.lam_u_init = lam_u_init
        self.lam_u_growth = lam_u_growth
        self.gamma_I = gamma_I
        self.graph = graph
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.max_cg_iter = max_cg_iter
        self.fallback = fallback
        self.verbose = verbose
        self.probability = probability

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.max_switches is not None and (
                not isinstance(self.max_switches, (int, np.integer)) or self.max_switches < 1):
            raise ValueError(f"max_switches must be a positive integer or None (S = max), got "
                             f"{self.max_switches!r}")
        if not self.lam_u_growth > 1:
            raise ValueError(f"lam_u_growth must be > 1, got {self.lam_u_growth!r}")

    _algorithm = staticmethod(transductive_svm)

    def _algorithm_options(self) -> dict:
        return dict(max_switches=self.max_switches, lam_u_init=self.lam_u_init,
                    lam_u_growth=self.lam_u_growth)


class DeterministicAnnealingSVM(SemiSupervisedLinearSVMCore):
    """Core of :class:`semisup.linear.da.DeterministicAnnealingSVM` (parameters documented
    there)."""

    _model_file_class = "semisup.linear.da.DeterministicAnnealingSVM"

    def __init__(self, lam: float | None = None, lam_u: float = 1.0,
                 positive_fraction: float | np.ndarray | None = None,
                 temperature_init: float | None = None,
                 temperature_decay: float = 1.5, max_outer_iter: int = 30,
                 max_inner_iter: int = 100, kl_tol: float = 1e-6, entropy_tol: float = 1e-6,
                 gamma_I: float = 0.0, graph=None, fit_intercept: bool = True,
                 intercept_scaling: float = 1.0, tol: float = 1e-6,
                 max_iter: int = 50, max_cg_iter: int = 10_000, fallback: str = "cv",
                 verbose: int = 0, probability: bool = False):
        self.lam = lam
        self.lam_u = lam_u
        self.positive_fraction = positive_fraction
        self.temperature_init = temperature_init
        self.temperature_decay = temperature_decay
        self.max_outer_iter = max_outer_iter
        self.max_inner_iter = max_inner_iter
        self.kl_tol = kl_tol
        self.entropy_tol = entropy_tol
        self.gamma_I = gamma_I
        self.graph = graph
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.max_cg_iter = max_cg_iter
        self.fallback = fallback
        self.verbose = verbose
        self.probability = probability

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.temperature_init is not None:
            check_positive(self.temperature_init, "temperature_init")
        if not self.temperature_decay > 1:
            raise ValueError(f"temperature_decay must be > 1, got {self.temperature_decay!r}")

    _algorithm = staticmethod(deterministic_annealing)

    def _guard_fold_params(self) -> dict:
        # the folds only compare held-out accuracies: CGLS and the inner KL loop to 1e-3
        return {"tol": max(float(self.tol), GUARD_FOLD_TOL),
                "kl_tol": max(float(self.kl_tol), GUARD_FOLD_TOL)}

    def _algorithm_options(self) -> dict:
        return dict(temperature_init=self.temperature_init,
                    temperature_decay=self.temperature_decay, max_outer_iter=self.max_outer_iter,
                    max_inner_iter=self.max_inner_iter, kl_tol=self.kl_tol,
                    entropy_tol=self.entropy_tol)


# ------------------------------------------------------------------ supervised L2-SVM and RLS

# "auto" keeps the primal finite Newton method when rows outnumber features by more than
# this: its CG systems are then small and well conditioned (SecStr one-hot, 265 rows per
# feature: MFN 5x faster than dual CD), while dual coordinate descent wins on text and on
# MNIST (76 rows per feature: 1.6x faster).  See benchmarks/bench_supervised_vs_liblinear.py.
_PRIMAL_ROWS_PER_FEATURE = 100
# ... and at least this many stored entries in the rows given (pcmac's 50 labeled rows alone:
# 3.9k, MFN 5-27 ms against numba's start-up; all 1,460 rows: 79k, dual CD)
_DCD_MIN_NNZ = 10_000

# "auto" hands dual CD's weights to the finite Newton method once its duality gap, extrapolated
# at its linear rate, will not reach ``tol`` within this many epochs (twice in a row).  Dual CD
# stalls with a small lam on rows that outnumber the features (SecStr one-hot, 1,000 labels,
# lam=1e-3: objective 19% above the optimum after 10,000 epochs; SSL-book text, lam=1e-4: 5%),
# while its fast cases end well within it (SSL-book text lam=0.01: 1,075 epochs; pcmac, lam
# down to 1e-4: under 80).  benchmarks/bench_l2svm_routes.py compares the routes.
_DCD_GIVE_UP_EPOCHS = 2000

def _example_costs(estimator, data, y_pm, sample_weight) -> np.ndarray:
    """Per-example costs ``c_i``: sample weight times the class cost (``-Cp`` / ``-Cn``)."""
    cost = np.ones(data.labeled.size)
    if sample_weight is not None:
        cost *= sample_weight[data.labeled]
    cost *= np.where(y_pm > 0, estimator.cost_positive, estimator.cost_negative)
    return cost


def _legacy_random_state(value) -> np.random.RandomState:
    """``random_state`` as a legacy ``RandomState`` (scikit-learn's ``check_random_state``
    for an int or an instance, without importing scikit-learn)."""
    if isinstance(value, np.random.RandomState):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return np.random.RandomState(value)
    raise ValueError(f"random_state must be None, an int or a numpy RandomState, got "
                     f"{value!r}")


class SupervisedLinearCore(LinearClassifierCore):
    """Core of the supervised linear classifiers (:class:`L2SVM`, :class:`RLSClassifier`):
    the labeled rows only, ``lam`` a number (``lam="auto"`` is the estimators')."""

    _semi_supervised = False
    _float32 = True

    def __init__(self, lam: float | str = 4.0, cost_positive: float = 1.0,
                 cost_negative: float = 1.0, fit_intercept: bool = True,
                 intercept_scaling: float = 1.0, penalize_intercept: bool = False,
                 tol: float = 1e-6, max_iter: int = 50,
                 max_cg_iter: int = 10_000, warm_start: bool = False, random_state=None,
                 verbose: int = 0, probability: bool = False):
        self.lam = lam
        self.penalize_intercept = penalize_intercept
        self.warm_start = warm_start
        self.random_state = random_state
        self.cost_positive = cost_positive
        self.cost_negative = cost_negative
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.max_cg_iter = max_cg_iter
        self.verbose = verbose
        self.probability = probability

    def _validate_params(self) -> None:
        check_positive_or_auto(self.lam, "lam")
        check_positive(self.cost_positive, "cost_positive")
        check_positive(self.cost_negative, "cost_negative")
        check_bool(self.penalize_intercept, "penalize_intercept")

    def __setstate__(self, state) -> None:
        # pickles and model files from before the parameter existed regularised the bias
        state = dict(state)
        state.setdefault("penalize_intercept", True)
        parent = getattr(super(), "__setstate__", None)
        if parent is not None:
            parent(state)
        else:
            self.__dict__.update(state)

    def _ridge(self, design) -> Ridge:
        """``(lam/2)||w||^2``, over the feature weights only unless ``penalize_intercept``."""
        return Ridge.with_bias(self.lam, design.n_weights, design.fit_intercept,
                               self.penalize_intercept)

    def fit(self, X, y, sample_weight=None):
        """Fit on the labeled rows of ``(X, y)``; rows with ``y == -1`` are ignored.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Class labels; ``-1`` rows are skipped.
        sample_weight : array-like of shape (n_samples,), optional
            Per-example costs ``c_i`` of eq. 2.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight)



class L2SVM(SupervisedLinearCore):
    """Core of :class:`semisup.linear.svm.L2SVM` (parameters documented there)."""

    _model_file_class = "semisup.linear.svm.L2SVM"

    _defaultable = ("max_iter",)

    def __init__(self, lam: float | str = 4.0, cost_positive: float = 1.0,
                 cost_negative: float = 1.0, fit_intercept: bool = True,
                 intercept_scaling: float = 1.0, penalize_intercept: bool = False,
                 tol: float = 1e-6, max_iter: int | None = None,
                 max_cg_iter: int = 10_000, solver: str = "auto", warm_start: bool = False,
                 random_state=None, verbose: int = 0, probability: bool = False):
        super().__init__(lam=lam, cost_positive=cost_positive, cost_negative=cost_negative,
                         fit_intercept=fit_intercept, intercept_scaling=intercept_scaling,
                         penalize_intercept=penalize_intercept, tol=tol, max_iter=max_iter,
                         max_cg_iter=max_cg_iter,
                         warm_start=warm_start, random_state=random_state, verbose=verbose,
                         probability=probability)
        self.solver = solver

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.solver not in ("auto", "mfn", "dcd"):
            raise ValueError(f"solver must be 'auto', 'mfn' or 'dcd', got {self.solver!r}")

    def _prepare(self, design, data):
        solver = self.solver
        if solver == "auto":
            # on tiny problems the numpy Newton route costs milliseconds, while dual CD
            # (compiled only) would first load numba: about half a second, e.g. for
            # `semisup fit` on a small file
            solver = "dcd" if design.sparse and design.nnz >= _DCD_MIN_NNZ and \
                data.labeled.size < _PRIMAL_ROWS_PER_FEATURE * design.n_weights else "mfn"
        if solver == "dcd" and not design.sparse:
            raise ValueError("solver='dcd' needs sparse X: pass scipy.sparse.csr_matrix(X) or "
                             "use solver='mfn'")
        self.solver_ = solver
        return np.random.default_rng(_legacy_random_state(self.random_state).randint(2**31 - 1)
                                     if self.random_state is not None else 0)

    def _fit_binary(self, design, data, y_pm, positive_fraction, sample_weight, context=None,
                    seed=None):
        A = design.restrict(data.labeled)
        terms = HingeTerms(y_pm, _example_costs(self, data, y_pm, sample_weight))
        reg = self._ridge(design)
        if self.solver_ != "mfn":
            # compiled (numba): imported only when dual CD runs, off the small-file path
            from semisup.solvers.dcd import l2svm_dual_cd

            # dual CD regularises the bias (a free one adds sum_i alpha_i y_i = 0 to the
            # dual): with a free bias its optimum starts the Newton method, which then needs
            # fewer steps than from zero (pcmac, lam=0.01: 2 instead of 11, 2.8x faster;
            # seeds solved to a looser gap took more steps; defaults_linear_bias.md)
            start = reg.free is not None
            max_iter = self.max_iter or 10_000
            res = l2svm_dual_cd(A, terms, self.lam, tol=self.tol, max_epochs=max_iter,
                                random_state=int(context.integers(2**31 - 1)),
                                verbose=self.verbose,
                                give_up_epochs=_DCD_GIVE_UP_EPOCHS if self.solver == "auto"
                                else None)
            if not res.gave_up and not start:
                if not res.converged:  # MFN reports for itself
                    report_unconverged("dcd", f"{max_iter} epochs, tol={self.tol:g}")
                return res
            # a free bias, or too slow to reach tol: the Newton method finishes
            self.solver_ = "dcd+mfn"
            seed = res.w
        return l2svm_mfn(A, terms, reg, w0=seed, tol=self.tol,
                         max_iter=50 if self.solver_ != "mfn" else self.max_iter or 50,
                         max_cg_iter=self.max_cg_iter, verbose=self.verbose)




class RLSClassifier(SupervisedLinearCore):
    """Core of :class:`semisup.linear.svm.RLSClassifier` (parameters documented there)."""

    _model_file_class = "semisup.linear.svm.RLSClassifier"

    def _fit_binary(self, design, data, y_pm, positive_fraction, sample_weight, context=None,
                    seed=None):
        A = design.restrict(data.labeled)
        cost = _example_costs(self, data, y_pm, sample_weight)
        reg = self._ridge(design)
        res = cgls(A, cost, y_pm, reg, x0=seed, tol=self.tol, max_iter=self.max_cg_iter)
        if not res.converged:
            report_unconverged("cgls", f"max_cg_iter={self.max_cg_iter}")
        o = A.matvec(res.x)
        objective = reg.value(res.x) + 0.5 * float(cost @ (y_pm - o) ** 2)
        return MFNResult(w=res.x, outputs=o, objective=objective, n_iter=res.n_iter,
                         n_cg_iter=res.n_iter, converged=res.converged, history=[objective])


#: The public estimators (``module.Class``) that have a core here, and their cores: the
#: estimators ``semisup fit`` may fit without scikit-learn.
CORES: dict[str, type] = {cls._model_file_class: cls
                          for cls in (TransductiveSVM, DeterministicAnnealingSVM, L2SVM,
                                      RLSClassifier)}
