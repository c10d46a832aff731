"""``MultipleKernelSVC``: SVM with learned kernel weights (Xu's thesis ch. 4), supervised or
semi-supervised through point-cloud-deformed base kernels (§4.2.3, eq. 4.10).

The estimator only composes: the kernel bank (:mod:`semisup.mkl.bank`), the problem
(:mod:`semisup.mkl.problem`), one of the three solvers, and for unlabeled rows the graph
Laplacian of :mod:`semisup.graph` and the deformation of :mod:`semisup.manifold`.
"""

from __future__ import annotations

import logging
import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from semisup._logging import warn_at_caller
from semisup._validation import (
    check_bool,
    check_positive,
    check_semi_supervised,
    check_X,
    warn_if_collapsed,
)
from semisup.base import SemiSupervisedClassifierMixin, SupervisedFallbackMixin
from semisup.graph import adjacency_graph, laplacian
from semisup.manifold._rkhs import deformation_columns
from semisup.mkl.bank import (
    KernelBank,
    StreamingKernelBank,
    auto_kernels,
    check_deformed_memory,
    check_kernel_specs,
    check_memory,
    check_streaming_memory,
    evaluate_kernel,
    kernel_sum,
    simplemkl_kernels,
)
from semisup.mkl.level import level_mkl
from semisup.mkl.problem import MKLProblem
from semisup.mkl.silp import silp_mkl
from semisup.mkl.simple import simple_mkl
from semisup.model_selection import check_positive_or_auto, is_auto, select_parameter

logger = logging.getLogger("semisup.mkl")

SOLVERS = {"level": level_mkl, "silp": silp_mkl, "simple": simple_mkl}
BANKS = ("auto", "packed", "streaming")
#: the values tried by ``C='auto'``, strongest regularisation first (the kernels have unit
#: trace, so their entries are about ``1 / n`` and useful values of ``C`` are large)
C_GRID = (1.0, 10.0, 100.0, 1000.0, 10000.0)


class MultipleKernelSVC(SupervisedFallbackMixin, SemiSupervisedClassifierMixin, ClassifierMixin,
                        BaseEstimator):
    """SVM on a learned convex combination of base kernels (multiple kernel learning).

    Solves eq. 4.1 of Xu's thesis, ``min_{p in simplex} max_alpha sum(alpha) - 1/2 (alpha o
    y)^T (sum_k p_k K_k) (alpha o y)``, by the extended level method (Algorithm 2), SILP or
    SimpleMKL.  When ``y`` has unlabeled rows (``-1``), every base kernel is first deformed
    by the graph Laplacian of all rows (eq. 4.10, ``K~ = K - K (I + r L K)^-1 r L K``) and
    the MKL runs on the labeled block; unlabeled rows are predicted with the deformed
    kernels.  Multi-class problems are solved one-vs-rest.

    Parameters
    ----------
    kernels : 'auto', 'simplemkl' or list
        ``'auto'`` (default): 9 kernels on all features scaled to the data
        (:func:`semisup.mkl.bank.auto_kernels`: Gaussians at ``2^-3..2^3`` times the
        reciprocal mean squared distance, polynomials of degree 1-2), so the cost does not
        grow with ``d`` and the widths follow the scale of ``X``.  Measured (semi-supervised,
        10 labels, 2 shared cores; ``benchmarks/results/defaults_thesis.md``): on sklearn
        digits 3 vs 8 (357 rows) 8-15 s and 96.8 % on the unlabeled rows against SVC's
        89.6 %, and SSL-book Digit1 (1,500 rows) 15-18 s, where the SimpleMKL bank (845
        kernels) took 134 s on the 357 rows (issue 26) and did not finish on 1,560.
        ``'simplemkl'``: Gaussians of widths ``2^-3..2^6`` and polynomials of degree 1-3 on
        all features and on each single feature (``m = 13 (d + 1)``), the thesis's bank
        (its widths assume features near unit scale).  Otherwise a list of
        specs: dicts ``{'kernel': 'rbf'|'poly'|'linear', 'gamma', 'degree', 'coef0',
        'features'}`` or callables ``f(X, Y) -> Gram matrix``.  Every Gram matrix is
        scaled to unit trace on the training rows.
    C : float or 'auto'
        SVM trade-off (the thesis uses 100).  ``'auto'``: chosen from :data:`C_GRID` by
        labeled-only cross-validation (:func:`semisup.model_selection.select_parameter`;
        supervised folds are fitted on their kept rows alone, semi-supervised folds keep
        the held-out rows as unlabeled ones); the choice is ``C_``, the scores
        ``cv_results_``.  It costs about ``5 x len(C_GRID)`` extra fits.
    solver : {'level', 'silp', 'simple'}
        The extended level method, SILP, or SimpleMKL's reduced gradient.
    tol : float
        Stopping tolerance on the duality gap (relative, see ``relative_gap``).
    max_iter : int
        Outer iterations (500 in the thesis).
    relative_gap : bool
        Divide the duality gap ``max_k q_k - q . p`` by twice the objective (SimpleMKL's
        relative gap); ``False`` uses it as is (the thesis's 0.01 rule).
    svm_tol : float
        KKT tolerance of the inner SVM (warm-started SMO).
    n_neighbors : int
        ``k`` of the kNN graph over all rows (semi-supervised only).
    laplacian_ratio : float
        ``r`` of the deformation (1 in eq. 4.10).
    dtype : {'float64', 'float32'}
        Storage of the kernel bank (``float32`` halves the memory).
    max_memory : float
        Bytes allowed for the bank (``m l (l + 1) / 2`` entries on ``l`` labeled rows) and,
        with unlabeled rows, the deformation (``m n l`` floats and ``n x n`` kernels); a
        larger footprint is refused with a ``ValueError`` before allocating.
    weight_threshold : float
        Final weights below this are set to zero (and the rest renormalised).
    record_weights : bool
        Keep the kernel weights of every iteration in ``traces_``.
    bank : {'auto', 'packed', 'streaming'}
        Storage of the base kernels (supervised fits; the semi-supervised bank of
        deformed kernels is always packed).  ``'packed'``: all ``m`` Gram matrices
        precomputed (``m l (l + 1) / 2`` numbers, the fastest per iteration).
        ``'streaming'``: :class:`semisup.mkl.bank.StreamingKernelBank`, kernels
        recomputed in row blocks at every SVM solve, memory ``O(l^2)`` whatever ``m``; the
        inner products of each feature subset are kept between iterations when they fit in
        what ``max_memory`` leaves (10,000 MNIST rows x 100 kernels: converged to the
        relative duality gap 0.01 in 46 iterations, 307 CPU-s, 3.3 GiB peak,
        ``benchmarks/results/mkl_streaming_converged.md``).
        ``'auto'`` (default): packed when it fits ``max_memory``, streaming otherwise.
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones) against
        the supervised counterpart (scikit-learn's ``SVC()``); the semi-supervised fit is
        kept only when it wins the guard's margin test, otherwise the estimator is
        that counterpart fitted on the labeled rows (``fallback_ is True``).  Costs about
        four fits.  ``"none"``: the method as published.  A fully labeled ``y`` (the
        supervised MKL) is never guarded.  Measured on the SSL-book sets (8 sets x 10 / 100
        labels; ``benchmarks/results/defaults_fallback_kernel.md``): cells within 1 point of
        ``SVC()`` 10 -> 16 of 16 on official split 2 and 12 -> 15 on split 1 (the
        benchmark's), median CPU per fit 3.8 -> 10.8 s and 1.6 -> 4.6 s; 16 of 16 on split
        1 with the margin test (``defaults_fallback_margin.md``).

    Attributes
    ----------
    fallback_ : bool
        Whether the guard replaced the fit by its supervised counterpart
        (``supervised_estimator_``, which then answers ``predict`` and
        ``decision_function``; of the estimator's own fitted attributes only ``classes_``
        and ``transduction_`` are then set).
    cv_scores_ : dict or None
        The guard's result (:func:`semisup.safety.guard`); ``None`` when no fold existed
        or ``y`` had no unlabeled row.
    classes_ : ndarray
        Class labels.
    kernel_specs_ : list
        The base kernels (dicts or callables).
    weights_ : ndarray of shape (n_problems, m)
        Kernel weights of each binary problem (one row for two classes).
    dual_coef_ : list of ndarray
        ``alpha o y`` over the labeled rows, per binary problem.
    intercept_ : ndarray of shape (n_problems,)
    n_iter_ : ndarray of shape (n_problems,)
        Outer iterations.
    n_svm_ : ndarray of shape (n_problems,)
        Inner SVM solves.
    objective_ : ndarray of shape (n_problems,)
        The MKL objective at the solution.
    traces_ : list of dict
        Per binary problem: objective, duality gap (and ``f_low``/``f_up``) per iteration.
    transduction_ : ndarray of shape (n_samples,)
        Labels of the training rows (the prediction for unlabeled ones).
    bank_nbytes_ : int
        Memory of the kernel bank.
    C_ : float
        The ``C`` used (chosen when ``C='auto'``).
    cv_results_ : dict
        With ``C='auto'``: the held-out accuracy of every value of :data:`C_GRID`.
    bank_ : str
        ``'packed'`` or ``'streaming'``: the storage used.
    memory_nbytes_ : int
        The footprint checked against ``max_memory`` before anything was allocated: the
        bank, and with unlabeled rows also the deformation columns kept for prediction
        (``m n l`` floats) and the full ``n x n`` kernels being deformed; with the
        streaming bank, the inner products it keeps between iterations.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import MultipleKernelSVC
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(-1, 1, (10, 3)), rng.normal(1, 1, (10, 3))]
    >>> y = np.repeat([0, 1], 10)
    >>> clf = MultipleKernelSVC().fit(X, y)
    >>> float(clf.score(X, y)) > 0.9, bool(np.isclose(clf.weights_.sum(), 1.0))
    (True, True)
    """

    def __init__(self, kernels="auto", C: float = 100.0, solver: str = "level",
                 tol: float = 0.01, max_iter: int = 500, relative_gap: bool = True,
                 svm_tol: float = 1e-6, n_neighbors: int = 6, laplacian_ratio: float = 1.0,
                 dtype: str = "float64", max_memory: float = 4 * 2**30,
                 weight_threshold: float = 1e-5, record_weights: bool = False,
                 bank: str = "auto", fallback: str = "cv"):
        self.kernels = kernels
        self.C = C
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.relative_gap = relative_gap
        self.svm_tol = svm_tol
        self.n_neighbors = n_neighbors
        self.laplacian_ratio = laplacian_ratio
        self.dtype = dtype
        self.max_memory = max_memory
        self.weight_threshold = weight_threshold
        self.record_weights = record_weights
        self.bank = bank
        self.fallback = fallback

    def _check_params(self) -> None:
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {tuple(SOLVERS)}, got {self.solver!r}")
        check_positive_or_auto(self.C, "C")
        if self.bank not in BANKS:
            raise ValueError(f"bank must be one of {BANKS}, got {self.bank!r}")
        if self.dtype not in ("float64", "float32"):
            raise ValueError(f"dtype must be 'float64' or 'float32', got {self.dtype!r}")
        if not (isinstance(self.laplacian_ratio, numbers.Real) and self.laplacian_ratio >= 0):
            raise ValueError(f"laplacian_ratio must be >= 0, got {self.laplacian_ratio!r}")
        if not (isinstance(self.weight_threshold, numbers.Real)
                and 0 <= self.weight_threshold < 1):
            raise ValueError(f"weight_threshold must be in [0, 1), got "
                             f"{self.weight_threshold!r}")
        check_positive(self.max_memory, "max_memory")
        check_bool(self.relative_gap, "relative_gap")
        check_bool(self.record_weights, "record_weights")

    def fit(self, X, y) -> MultipleKernelSVC:
        """Learn the kernel weights and the SVM (``y == -1`` marks unlabeled rows).

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
        return self._fit_guarded(X, y)

    def _fit_plain(self, X, y) -> MultipleKernelSVC:
        """The MKL as published (``fallback="none"``); see :meth:`fit`."""
        self._check_params()
        data = check_semi_supervised(X, y, estimator=self)
        specs = self._resolve_kernels(data)
        if is_auto(self.C):
            self.C_, self.cv_results_ = self._select_C(data, specs)
        else:
            self.C_ = float(self.C)
        return self._fit(data, specs, self.C_)

    def _resolve_kernels(self, data) -> list:
        """The checked kernel specs (``'auto'``/``'simplemkl'`` expanded on the data)."""
        X = data.X
        d = X.shape[1]
        specs = self.kernels
        if isinstance(specs, str) and specs == "simplemkl":
            specs = simplemkl_kernels(d)
        elif isinstance(specs, str) and specs == "auto":
            specs = auto_kernels(X if data.unlabeled.size else X[data.labeled])
        elif isinstance(specs, str):
            raise ValueError(f"kernels must be 'auto', 'simplemkl' or a list of kernel specs, "
                             f"got {specs!r}")
        return check_kernel_specs(specs, d)

    def _select_C(self, data, specs: list) -> tuple[float, dict]:
        """``C`` by labeled-only CV over :data:`C_GRID` (the library's one selection loop).

        The kernels are fixed to ``specs`` so that every fold uses the same bank.  Hiding a
        fold's held-out labels would turn a supervised fit into a semi-supervised one (the
        deformed kernels of eq. 4.10), so without unlabeled rows each fold is fitted on its
        kept rows alone; with unlabeled rows the held-out rows join them (the transductive
        protocol of :func:`semisup.model_selection.select_parameter`).
        """
        from sklearn.base import clone

        codes = data.codes(np.intp)
        probe = clone(self).set_params(kernels=specs, C=100.0)
        held_out = None
        if data.unlabeled.size == 0:
            def held_out(value, folds):
                est = clone(probe).set_params(C=value)
                out = []
                for train, test in folds:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ConvergenceWarning)
                        est.fit(data.X[train], codes[train])
                    out.append(est.predict(data.X[test]))
                return out
        sel = select_parameter(probe, data.X, codes, "C", list(C_GRID), default=100.0,
                               held_out=held_out)
        return float(sel.best), sel.cv_results

    def _fit(self, data, specs: list, C: float) -> MultipleKernelSVC:
        X = data.X
        d = X.shape[1]
        lab = data.labeled
        semi = data.unlabeled.size > 0
        dtype = np.dtype(self.dtype)
        if semi:
            if self.bank == "streaming":
                raise ValueError("bank='streaming' is for supervised fits: the deformed kernels "
                                 "of a semi-supervised fit (eq. 4.10) are computed once and "
                                 "packed; use bank='auto' or 'packed', or fewer rows")
            # refuse before the graph and the deformation allocate anything
            self.memory_nbytes_ = check_deformed_memory(len(specs), X.shape[0], lab.size,
                                                        dtype, self.max_memory)
            W = adjacency_graph(X, n_neighbors=self.n_neighbors)
            bank, self._Z = deformed_bank(specs, X, lab, laplacian(W),
                                          float(self.laplacian_ratio), dtype=dtype,
                                          max_memory=self.max_memory)
            self._X_fit = X
            self.bank_ = "packed"
        else:
            self._Z = None
            self._X_fit = X[lab]
            # the bank's Gram matrices are dense; l labeled rows densify cheaply
            X_l = self._X_fit.toarray() if sp.issparse(self._X_fit) else self._X_fit
            packed = len(specs) * (lab.size * (lab.size + 1) // 2) * dtype.itemsize
            mode = self.bank
            if mode == "auto":
                mode = "packed" if packed <= self.max_memory else "streaming"
            self.bank_ = mode
            if mode == "packed":
                self.memory_nbytes_ = check_memory(len(specs), lab.size, dtype,
                                                   self.max_memory)
                bank = KernelBank.from_specs(specs, X_l, dtype=dtype,
                                             max_memory=self.max_memory)
            else:
                # blocks of at most 128 MiB, a tenth of a small memory cap, 8 rows at least
                block = int(min(2**27, max(256 * lab.size, 0.1 * self.max_memory)))
                self.memory_nbytes_ = check_streaming_memory(lab.size, self.solver, block,
                                                             self.max_memory)
                logger.info("MKL on %d rows x %d kernels: streaming bank (packed would need "
                            "%.2f GiB)", lab.size, len(specs), packed / 2**30)
                # what max_memory leaves over keeps the inner products between iterations
                bank = StreamingKernelBank(specs, X_l, dtype=dtype, block_bytes=block,
                                           cache_bytes=self.max_memory - self.memory_nbytes_)
                self.memory_nbytes_ += bank.cache_nbytes
        self.kernel_specs_ = specs
        self.bank_nbytes_ = bank.nbytes
        self._scales = bank.scales
        self.classes_ = data.classes
        n_classes = self.classes_.size
        positives = [1] if n_classes == 2 else list(range(n_classes))
        solve = SOLVERS[self.solver]
        weights, coefs, biases, n_iter, n_svm, objective, traces = [], [], [], [], [], [], []
        not_converged = 0
        for pos in positives:
            yb = data.binary_targets(pos)
            problem = MKLProblem(bank, yb, C, svm_tol=self.svm_tol)
            res = solve(problem, tol=self.tol, max_iter=self.max_iter,
                        relative_gap=self.relative_gap, record_weights=self.record_weights)
            p = res.weights.copy()
            p[p < self.weight_threshold] = 0.0
            p /= p.sum()
            weights.append(p)
            coefs.append(res.alpha * yb)
            biases.append(res.bias)
            n_iter.append(res.n_iter)
            n_svm.append(res.n_svm)
            objective.append(res.objective)
            traces.append(res.trace)
            not_converged += not res.converged
        if not_converged:
            warn_at_caller(f"{self.solver} MKL stopped before the duality gap reached "
                           f"tol={self.tol} (max_iter={self.max_iter}, or no descent at the "
                           f"SVM's precision) in {not_converged} of {len(positives)} binary "
                           "problems; increase max_iter or tol", ConvergenceWarning)
        self.weights_ = np.asarray(weights)
        self.dual_coef_ = coefs
        self.intercept_ = np.asarray(biases)
        self.n_iter_ = np.asarray(n_iter)
        self.n_svm_ = np.asarray(n_svm)
        self.objective_ = np.asarray(objective)
        self.traces_ = traces
        self._labeled = lab
        self.n_features_in_ = d
        # the problems reference the bank: free it (a streaming bank's kept inner products,
        # 2 GB at 10,000 rows) before predicting the training rows
        del bank, problem
        transduction = self.predict(X)
        transduction[lab] = data.classes[data.y_index]
        self.transduction_ = transduction
        warn_if_collapsed(self, transduction[data.unlabeled], n_classes, hint=(
            "The learned kernel does not separate the classes on the unlabeled rows (with "
            "fixed-width kernels, X far from unit scale makes every kernel constant): use "
            "kernels='auto' (widths from the data), rescale X, or lower laplacian_ratio"))
        return self

    def _kernel_columns(self, X, k: int, cols: np.ndarray) -> np.ndarray:
        """Scaled (and deformed) kernel ``k`` between ``X`` and labeled rows ``cols``."""
        spec = self.kernel_specs_[k]
        if self._Z is None:
            Kx = evaluate_kernel(spec, X, self._X_fit[cols])
        else:
            Kx = evaluate_kernel(spec, X, self._X_fit) @ self._Z[k][:, cols]
        return Kx * self._scales[k]

    def decision_function(self, X) -> np.ndarray:
        """``sum_k p_k K_k(x, X_l) (alpha o y) + b``, over the kernels with ``p_k > 0``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Decision values: the score of ``classes_[1]``, or one column per class.
        """
        out = self._fallback_answer(X, "decision_function")
        if out is not None:
            return out
        check_is_fitted(self, "weights_")
        X = check_X(X, estimator=self, reset=False)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input")
        out = np.empty((X.shape[0], len(self.dual_coef_)))
        for c, (p, coef, b) in enumerate(zip(self.weights_, self.dual_coef_,
                                             self.intercept_, strict=True)):
            sv = np.flatnonzero(coef)
            f = np.full(X.shape[0], b)
            if self._Z is None and not sp.issparse(X) and not sp.issparse(self._X_fit):
                # all kernels at once: one product per feature subset, not per kernel
                K = kernel_sum(self.kernel_specs_, p * self._scales, X, self._X_fit[sv])
                f += K @ coef[sv]
            else:
                for k in np.flatnonzero(p):
                    f += p[k] * (self._kernel_columns(X, k, sv) @ coef[sv])
            out[:, c] = f
        return out[:, 0] if out.shape[1] == 1 else out

    def predict(self, X) -> np.ndarray:
        """Class labels.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        out = self._fallback_answer(X, "predict")
        if out is not None:
            return out
        f = self.decision_function(X)
        if f.ndim == 1:
            return self.classes_[(f > 0).astype(int)]
        return self.classes_[np.argmax(f, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    @property
    def n_kernels_(self) -> np.ndarray:
        """Number of kernels with a non-zero weight, per binary problem."""
        return np.count_nonzero(self.weights_, axis=1)


def deformed_bank(specs: list, X: np.ndarray, labeled: np.ndarray, L, ratio: float = 1.0, *,
                  dtype=np.float64, max_memory: float = 4 * 2**30,
                  normalize: str = "after") -> tuple[KernelBank, list[np.ndarray]]:
    """Base kernels deformed by the point cloud (eq. 4.10), on the labeled rows.

    For each spec, ``K`` on all rows of ``X`` is deformed to
    ``K~ = K - K (I + r L K)^-1 r L K = K (I + r L K)^-1``; its labeled block
    ``K[labeled] Z`` with ``Z = (I + r L K)^-1 [:, labeled]`` goes into the bank (unit
    trace on that block).  Any row ``x`` is then evaluated as ``k_x^T Z`` (the exact
    out-of-sample form of eq. 4.10), so ``Z`` is returned too.

    Parameters
    ----------
    specs : list
        Checked kernel specs (:func:`check_kernel_specs`).
    X : ndarray of shape (n, d)
        Labeled and unlabeled rows.
    labeled : ndarray of int
        Indices of the labeled rows.
    L : sparse matrix of shape (n, n)
        Graph Laplacian over all rows.
    ratio : float
        ``r`` (1 in eq. 4.10).
    dtype : numpy dtype
        Storage of the bank.
    max_memory : float
        Bytes allowed for the bank (checked before allocating).
    normalize : {'after', 'before'}
        ``'after'``: each deformed kernel is scaled to unit trace on the labeled block (the
        digest's reading of §4.3.2).  ``'before'``: each base kernel is scaled to unit
        trace over all ``n`` rows and then deformed, without rescaling.  The two differ in
        substance: the deformation of a rank-one kernel ``v v^T`` (a linear kernel on one
        feature) is ``v v^T / (1 + r v^T L v)``, a pure rescaling that ``'after'`` undoes,
        so there the per-feature kernels do not see the unlabeled rows at all; ``'before'``
        keeps the factor, which favours features that are smooth on the graph.

    Returns
    -------
    bank : KernelBank
        The deformed kernels on the labeled rows (scaled).
    Z : list of ndarray of shape (n, len(labeled))
        Per kernel; multiply by ``bank.scales[k]`` with it.
    """
    from semisup.mkl.bank import _check_gram

    lab = np.asarray(labeled, dtype=np.intp)
    check_deformed_memory(len(specs), X.shape[0], lab.size, dtype, max_memory)
    iu, ju = np.triu_indices(lab.size)
    out = np.empty((iu.size, len(specs)), dtype=dtype)
    scales = np.ones(len(specs))
    Zs = []
    if normalize not in ("after", "before"):
        raise ValueError(f"normalize must be 'after' or 'before', got {normalize!r}")
    L = sp.csr_matrix(L)
    for i, spec in enumerate(specs):
        V = _low_rank_factor(spec, X)
        K = None if V is not None else evaluate_kernel(spec, X)
        c = 1.0
        if normalize == "before":
            trace = float(np.sum(V * V)) if V is not None else float(np.trace(K))
            if not trace > 0:
                raise ValueError(f"kernels[{i}] has trace {trace:.3g} <= 0 on X and cannot "
                                 "be scaled to unit trace; drop it")
            c = 1.0 / trace
        # the deformation of c K is not c times that of K: deform the scaled kernel
        if V is not None:
            Z = _low_rank_deformation_columns(V * np.sqrt(c), L, float(ratio), lab)
            G = c * (V[lab] @ (V.T @ Z))
        else:
            Z = deformation_columns(c * K, L, float(ratio), lab)
            G = c * (K[lab] @ Z)
        G = 0.5 * (G + G.T)
        if normalize == "after":
            scales[i] = _check_gram(G, i, callable(spec), True)
        else:
            _check_gram(G, i, callable(spec), False)
            scales[i] = c
            G = G / c           # the bank stores scales[i] * (K[lab] Z) like 'after'
        out[:, i] = G[iu, ju] * scales[i]
        Zs.append(Z)
    return KernelBank(out, scales, n_samples=lab.size), Zs


def _low_rank_factor(spec, X) -> np.ndarray | None:
    """``V`` with ``K = V V^T`` for a linear kernel on a few features (the per-pixel
    kernels of Table 4.3), else ``None``."""
    if callable(spec) or spec["kernel"] != "linear" or spec["features"] is None \
            or len(spec["features"]) > 32:
        return None
    V = X[:, spec["features"]]
    return np.asarray(V.todense() if sp.issparse(V) else V, dtype=np.float64)


def _low_rank_deformation_columns(V: np.ndarray, L, ratio: float,
                                  columns: np.ndarray) -> np.ndarray:
    """``(I + r L V V^T)^-1 [:, columns]`` by the Woodbury identity (``O(n k^2)``).

    ``(I + r L V V^T)^-1 = I - r L V (I_k + r V^T L V)^-1 V^T``: the same columns as
    :func:`semisup.manifold._rkhs.deformation_columns` on ``K = V V^T`` without the
    ``O(n^3)`` factorisation.
    """
    n, k = V.shape
    LV = np.asarray(L @ V) * ratio
    M = np.eye(k) + V.T @ LV
    Z = -LV @ np.linalg.solve(M, V[columns].T)
    Z[columns, np.arange(columns.size)] += 1.0
    return Z
