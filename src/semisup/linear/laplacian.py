"""Linear manifold regularization: linear LapRLS and linear LapSVM.

Sindhwani, Niyogi, Belkin & Keerthi (2005), eq. 2:

    min_w  gamma_A ||w||^2 + gamma_I s (Xw)^T L^p (Xw) + (1/l) sum_i V(y_i, w^T x_i)

over all ``n = l + u`` rows ``X`` (graph term) and the ``l`` labeled rows (loss), with
``s`` the graph scale (``1/n^2`` by default, as the kernel version).  Multiplying by
``l/2`` gives the form of every solver in the library,

    (1/2) w^T R w + (1/2) sum_i V_i,    R = l gamma_A I + l gamma_I s X^T L^p X,

so that linear LapRLS is one CGLS solve of eq. 3 (``R`` applied as an operator, never
formed) and linear LapSVM with the squared hinge is L2-SVM-MFN with ``R`` as regulariser
(the Laplacian L2-SVM-MFN).  For small ``d`` the direct routes form ``R``: a Cholesky
solve (LapRLS) or the change of variables ``T^2 = gamma_A I + gamma_I s X^T L^p X``, an
SVM on the labeled rows preprocessed by ``T^-1``, then ``w = T^-1 w~`` (LapSVM).  The bias
is one more weight on a constant feature, regularised by ``gamma_A`` as in SVMlin (the
constant lies in the null space of ``L``, so the graph term leaves it alone).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.svm import LinearSVC

from semisup._logging import report_unconverged, warn_at_caller
from semisup._validation import check_choice, check_int, check_positive
from semisup.graph import adjacency_graph, graph_scale, laplacian
from semisup.graph.adjacency import WEIGHTS
from semisup.graph.knn import METRICS
from semisup.graph.laplacian import KINDS
from semisup.linear._base import LinearSemiSupervisedClassifier
from semisup.losses import HingeTerms, squared_hinge
from semisup.model_selection import check_positive_or_auto
from semisup.regularizers import GraphRidge, Ridge
from semisup.solvers.cgls import cgls
from semisup.solvers.design import Design
from semisup.solvers.mfn import MFNResult, l2svm_mfn

DIRECT_MAX_WEIGHTS = 2000  # 'auto' forms R densely up to this many weights

#: ``gamma_I="auto"`` tries the values whose graph term weighs ``10^k`` times the ambient
#: term (see :func:`gamma_I_grid`), then 0 (no graph term: the supervised fit).
GAMMA_I_GRID_EXPONENTS = np.arange(4, -3, -1)

#: ``gamma_A=None``: the ridge ``l gamma_A`` of the summed form is 4, the curvature match of
#: scikit-learn's ``LogisticRegression(C=1)`` (``log(1 + e^-m) = log 2 - m/2 + m^2/8 + ...``
#: is a quarter of ``(2 - m)^2 / 2``; rescaling ``w`` by 2 gives a ridge of 4 on the squared
#: loss), i.e. ``gamma_A = 4 / l``: benchmarks/results/defaults_linear_lam.md.
LR_EQUIVALENT_RIDGE = 4.0


def gamma_I_grid(graph_trace: float, n_dims: int, gamma_A: float, scale: float) -> np.ndarray:
    """Candidate ``gamma_I`` of the automatic mode, strongest graph term first, then 0.

    The graph term ``gamma_I s f^T L f`` and the ambient term ``gamma_A ||f||^2`` are
    quadratic forms; the grid puts the graph term's mean eigenvalue at ``10^k`` times the
    ambient one: ``gamma_I s tr(M) / m = gamma_A 10^k`` with ``M = X^T L^p X`` over the
    ``m = d`` weights (linear) or ``M = L^p K`` over the ``m = n`` coefficients (kernel),
    for ``k = 4, 3, .., -2``.  The scale is thus free of ``n``, of the graph scale ``s`` and
    of the feature scale; the last value, 0, lets the CV fall back to the supervised fit
    when the graph does not help.

    Parameters
    ----------
    graph_trace : float
        ``tr(M)``.
    n_dims : int
        ``m``.
    gamma_A : float
        The ambient weight (fixed).
    scale : float
        The graph scale ``s`` (:func:`semisup.graph.graph_scale`).

    Returns
    -------
    ndarray of shape (8,)
        The candidate values, largest first, then 0.

    Examples
    --------
    >>> from semisup.linear.laplacian import gamma_I_grid
    >>> gamma_I_grid(2.0, 2, 0.01, 1.0).tolist()[:3] + [0.0]
    [100.0, 10.0, 1.0, 0.0]
    """
    unit = gamma_A * n_dims / (scale * graph_trace) if graph_trace > 0 and scale > 0 \
        else gamma_A
    return np.append(unit * 10.0 ** GAMMA_I_GRID_EXPONENTS, 0.0)


def graph_laplacian(X, graph=None, n_neighbors: int = 10, metric: str = "euclidean",
                    weight: str = "heat", kind: str = "unnormalized", method: str = "auto",
                    random_state: int | None = None) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """Laplacian and adjacency of the data graph, or of a precomputed adjacency ``graph``.

    ``n_neighbors`` is lowered to ``n - 1`` (with a warning) on tiny data sets.
    """
    n = X.shape[0]
    if graph is None:
        k = n_neighbors
        if isinstance(k, (int, np.integer)) and k >= n > 1:
            warn_at_caller(f"n_neighbors={k} >= n_samples={n}: using {n - 1}", UserWarning)
            k = n - 1
        W = adjacency_graph(X, n_neighbors=k, metric=metric, weight=weight, method=method,
                            random_state=random_state)
    else:
        W = sp.csr_matrix(graph, dtype=np.float64)
        if W.shape != (n, n):
            raise ValueError(f"graph must be an (n_samples, n_samples) = ({n}, {n}) adjacency "
                             f"matrix, got shape {W.shape}")
        if abs(W - W.T).max() > 1e-10 * max(1.0, abs(W).max()) or (W.data < 0).any():
            raise ValueError("graph must be symmetric with non-negative weights")
    return laplacian(W, kind=kind, power=1), W


@dataclass
class _GraphContext:
    """What one fit shares across its binary problems."""

    reg: GraphRidge
    n_labeled: int
    solver: str
    dense_R: np.ndarray | None = None
    factor: object = None


class _LinearManifoldBase(LinearSemiSupervisedClassifier):
    """Graph construction, the regulariser ``R`` and parameter checks shared by both."""

    _solvers = ("auto", "direct", "cg")
    _dense_solver, _iterative_solver = "direct", "cg"
    _float32 = True   # the graph term goes through Design's products (float64 results)

    def __init__(self, gamma_A: float | None = None, gamma_I: float = 1.0,
                 n_neighbors: int = 10, metric: str = "euclidean", graph_weight: str = "heat",
                 laplacian_kind: str = "unnormalized", laplacian_power: int = 1,
                 graph_scale: str = "n2", graph_method: str = "auto", graph=None,
                 solver: str = "auto", fit_intercept: bool = True, intercept_scaling: float = 1.0,
                 tol: float = 1e-6, max_iter: int = 50, max_cg_iter: int = 10_000,
                 warm_start: bool = False, random_state: int | None = None,
                 fallback: str = "cv", verbose: int = 0, probability: bool = False):
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.n_neighbors = n_neighbors
        self.metric = metric
        self.graph_weight = graph_weight
        self.laplacian_kind = laplacian_kind
        self.laplacian_power = laplacian_power
        self.graph_scale = graph_scale
        self.graph_method = graph_method
        self.graph = graph
        self.solver = solver
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.max_cg_iter = max_cg_iter
        self.warm_start = warm_start
        self.random_state = random_state
        self.fallback = fallback
        self.verbose = verbose
        self.probability = probability

    def _validate_params(self) -> None:
        if self.gamma_A is not None:
            check_positive(self.gamma_A, "gamma_A")
        check_positive_or_auto(self.gamma_I, "gamma_I", allow_zero=True)
        # the same checks (and names) as the kernel versions (semisup.manifold)
        check_int(self.laplacian_power, "laplacian_power")
        check_int(self.n_neighbors, "n_neighbors")
        check_choice(self.metric, "metric", METRICS)
        check_choice(self.graph_weight, "graph_weight", WEIGHTS)
        check_choice(self.laplacian_kind, "laplacian_kind", KINDS)
        check_choice(self.graph_scale, "graph_scale", ("n2", "sum", "none"))
        check_choice(self.graph_method, "graph_method", ("auto", "exact", "approximate"))
        if self.solver not in self._solvers:
            raise ValueError(f"solver must be one of {self._solvers}, got {self.solver!r}")

    def _ridge(self, l: int) -> float:
        """``l gamma_A``, the ambient weight of the summed form (``R``'s identity term)."""
        return LR_EQUIVALENT_RIDGE if self.gamma_A is None else l * float(self.gamma_A)

    def _graph_laplacian(self, X):
        L, W = graph_laplacian(X, graph=self.graph, n_neighbors=self.n_neighbors,
                               metric=self.metric, weight=self.graph_weight,
                               kind=self.laplacian_kind, method=self.graph_method,
                               random_state=self.random_state)
        self.adjacency_ = W
        return L, W

    def _prepare(self, design: Design, data) -> _GraphContext:
        L, W = self._graph_laplacian(data.X)
        l, n = data.labeled.size, data.X.shape[0]
        scale = graph_scale(W, n, self.graph_scale)
        reg = GraphRidge(self._ridge(l), l * self.gamma_I * scale, design, L,
                         power=self.laplacian_power)
        solver = self.solver
        if solver == "auto":
            solver = self._dense_solver if design.n_weights <= DIRECT_MAX_WEIGHTS \
                else self._iterative_solver
        ctx = _GraphContext(reg=reg, n_labeled=l, solver=solver)
        if solver == self._dense_solver:
            ctx.dense_R = reg.dense()
        return ctx

    _auto_parameters = {"gamma_I": 1.0}

    def _auto_shared(self, data) -> dict:
        # X is the same in every CV fit: build the graph once
        _, W = self._graph_laplacian(data.X)
        return {"graph": W}

    def _auto_grid(self, name, data, shared):
        L, W = graph_laplacian(data.X, graph=shared["graph"], kind=self.laplacian_kind)
        X = data.X
        LX = X
        for _ in range(self.laplacian_power):
            LX = L @ LX
        prod = X.multiply(LX) if sp.issparse(X) else X * (LX.toarray() if sp.issparse(LX)
                                                           else LX)
        trace = float(prod.sum())
        scale = graph_scale(W, X.shape[0], self.graph_scale)
        l = data.labeled.size
        return gamma_I_grid(trace, X.shape[1], self._ridge(l) / l, scale)

    def _paper_objective(self, res, l: int):
        """Report the objective on the paper's scale (eq. 2): ``(2/l)`` times the solver's."""
        res.objective = 2.0 * res.objective / l
        return res


class LinearLapRLS(_LinearManifoldBase):
    """Linear Laplacian regularized least squares (Sindhwani et al. 2005, eq. 3).

    Solves ``(X_l^T X_l + gamma_A l I + gamma_I l s X^T L^p X) w = X_l^T Y`` by conjugate
    gradients with the matrix never formed (each product costs ``O(nnz(X) + p nnz(L))``),
    or by a Cholesky factorisation shared by all classes when ``d`` is small.

    Parameters
    ----------
    gamma_A : float or None, default=None
        Ambient (ridge) regularisation.  ``None`` is ``4 / l`` (``l`` labeled rows): the
        ridge of scikit-learn's ``LogisticRegression()`` to second order, the safer
        default with few labels (``benchmarks/results/defaults_linear_lam.md``: within a
        point of LogisticRegression on 56 / 66 of 80 SSL-book cells for LapRLS / LapSVM,
        against 44 / 55 at the former 1e-2).  The paper's experiments set it explicitly.
    gamma_I : float or "auto", default=1.0
        Intrinsic (graph) regularisation; multiplied by the graph scale ``s``.  ``"auto"``
        chooses it from the eight values of :func:`gamma_I_grid` (graph term's mean
        eigenvalue ``10^k`` times the ambient term's, ``k = 4..-2``, then 0) by stratified
        k-fold CV over the labeled rows, the held-out rows staying in the graph as
        unlabeled rows (``k = min(5, smallest class)``, repeated when the classes are
        tiny; ties go to the larger ``gamma_I``), with the graph built once and each fold
        warm-started along the path; then refits at the chosen value (``gamma_I_``,
        ``cv_results_``).  With a class of one labeled row: the default 1.0, with a warning.
    n_neighbors : int, default=10
        ``k`` of the kNN graph over labeled and unlabeled rows.
    metric : {'euclidean', 'cosine'}, default='euclidean'
        Use ``'cosine'`` for text.
    graph_weight : {'heat', 'binary', 'cosine'}, default='heat'
    laplacian_kind : {'unnormalized', 'normalized'}, default='unnormalized'
    laplacian_power : int, default=1
        ``p`` of the iterated Laplacian ``L^p`` (applied ``p`` times, never formed, by CG).
    graph_scale : {'n2', 'sum', 'none'}, default='n2'
        ``s = 1/n^2``, ``1/sum(W)`` or 1.
    graph_method : {'auto', 'exact', 'approximate'}, default='auto'
        Nearest-neighbour search (approximate NN-descent from 20,000 rows with 'auto').
    graph : sparse matrix of shape (n_samples, n_samples), optional
        A precomputed symmetric adjacency matrix instead of the kNN graph.
    solver : {'auto', 'direct', 'cg'}, default='auto'
        'direct' forms the ``d x d`` system (``d <= 2000`` with 'auto').
    fit_intercept : bool, default=True
        Append a constant feature ``intercept_scaling`` whose weight is the bias.
    intercept_scaling : float, default=1.0
        Value of the constant feature.
    tol : float, default=1e-6
        CGLS relative residual tolerance.
    max_iter : int, default=50
        Unused (kept for a uniform interface).
    max_cg_iter : int, default=10000
        CGLS iterations.
    warm_start : bool, default=False
        Seed CG with the previous solution when refitting (e.g. along a grid of
        ``gamma_A`` / ``gamma_I``).
    random_state : int, optional
        Seed of the approximate neighbour search and of the folds of ``gamma_I="auto"``.
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones) against
        the supervised counterpart (scikit-learn's ``LogisticRegression()`` objective: ``C = 1``,
        unpenalised intercept, multinomial beyond two classes); the semi-supervised fit is kept
        only when it wins the guard's margin test, otherwise the estimator is
        that counterpart fitted on the labeled rows (``fallback_ is True``).  Costs about
        four fits; with ``gamma_I="auto"`` the guard judges the refit at the chosen
        value.  ``"none"``: the method as published.
    verbose : int, default=0
        Log progress to the ``semisup`` logger (1: INFO, 2: DEBUG).
    probability : bool, default=False
        Enable ``predict_proba`` / ``predict_log_proba``: ``fit`` also fits a Platt
        sigmoid to decision values of the labeled rows cross-validated with
        :class:`semisup.model_selection.LabeledStratifiedKFold` (5 extra fits; see
        :mod:`semisup.calibration`).

    Attributes
    ----------
    coef_, intercept_, classes_, transduction_ : as the other linear estimators.
    objective_ : float or ndarray
        Eq. 2 at the solution.
    adjacency_ : sparse matrix
        The graph used.
    gamma_I_ : float
        With ``gamma_I="auto"``: the value chosen (and refitted).
    cv_results_ : dict
        With ``gamma_I="auto"``: ``param_gamma_I``, ``split<k>_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score`` (held-out accuracy).
    fit_results_ : list of MFNResult
        With ``n_cg_iter`` (0 for the direct solver).
    fallback_ : bool
        Whether the guard (``fallback="cv"``) replaced the semi-supervised fit by its
        supervised counterpart: ``coef_`` and ``intercept_`` are then the logistic
        regression's on the labeled rows, ``objective_`` and ``fit_results_`` those of
        :func:`semisup.solvers.logistic.logistic_regression`
        (``adjacency_`` is then not set).
    cv_scores_ : dict or None
        The guard's result (see :func:`semisup.safety.guard`): mean held-out accuracies
        ``semi_supervised`` and ``supervised``, ``n_folds``, ``split_scores``, the margin
        scores' ``gain`` and ``gain_se``, and ``keep``; ``None`` with ``fallback="none"`` or
        when the guard cannot run (a class with one labeled row, or no unlabeled row).

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import LinearLapRLS
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(-2, 1, (30, 2)), rng.normal(2, 1, (30, 2))]
    >>> y = np.full(60, -1)
    >>> y[[0, 1, 30, 31]] = [0, 0, 1, 1]          # two labels per class, 56 unlabeled
    >>> clf = LinearLapRLS(gamma_A=1e-2, gamma_I=1.0, n_neighbors=5, fallback="none")
    >>> round(float(clf.fit(X, y).score(X, np.repeat([0, 1], 30))), 2)
    0.92
    >>> guarded = LinearLapRLS(gamma_A=1e-2, gamma_I=1.0, n_neighbors=5).fit(X, y)
    >>> guarded.fallback_, round(float(guarded.score(X, np.repeat([0, 1], 30))), 2)
    (True, 1.0)
    >>> clf.predict([[-2.0, -2.0], [2.0, 2.0]]).tolist()
    [0, 1]
    """

    def _fit_binary(self, design, data, y_pm, prior, sample_weight, context=None, seed=None):
        A = design.restrict(data.labeled)
        l = data.labeled.size
        ones = np.ones(l)
        if context.solver == "direct":
            if context.factor is None:
                Xl = A.materialize()
                G = Xl.T @ Xl
                G = G.toarray() if sp.issparse(G) else np.asarray(G)
                context.factor = sla.cho_factor(context.dense_R + G)
            w = sla.cho_solve(context.factor, A.rmatvec(y_pm))
            n_cg, converged = 0, True
        else:
            res = cgls(A, ones, y_pm, context.reg, x0=seed, tol=self.tol,
                       max_iter=self.max_cg_iter)
            w, n_cg, converged = res.x, res.n_iter, res.converged
            if not converged:
                report_unconverged("cgls", f"max_cg_iter={self.max_cg_iter}")
        o = A.matvec(w)
        objective = context.reg.value(w) + 0.5 * float(np.sum((y_pm - o) ** 2))
        res = MFNResult(w=w, outputs=o, objective=objective, n_iter=max(n_cg, 1),
                        n_cg_iter=n_cg, converged=converged, history=[objective])
        return self._paper_objective(res, l)


    def _auto_held_out(self, data, shared):
        """Every fold of one ``gamma_I`` from matrices built once (direct solver only).

        The fold fits differ only in which rows are labeled: ``X^T L^p X`` is the same
        for all of them, so each fold's system ``(l_f gamma_A I + l_f gamma_I s X^T L^p X
        + X_f^T X_f) w = X_f^T Y_f`` (the direct route of :meth:`_fit_binary`, all
        one-vs-rest targets at once) costs one ``d x d`` Cholesky.
        """
        design = Design(data.X, self.fit_intercept, self.intercept_scaling)
        if not (self.solver == "direct" or self.solver == "auto"
                and design.n_weights <= DIRECT_MAX_WEIGHTS):
            return None
        W = shared["graph"]
        L, _ = graph_laplacian(data.X, graph=W, kind=self.laplacian_kind)
        M = GraphRidge(0.0, 1.0, design, L, power=self.laplacian_power).dense()
        scale = graph_scale(W, data.X.shape[0], self.graph_scale)
        Xa = design.materialize()
        Xa = Xa.toarray() if sp.issparse(Xa) else np.asarray(Xa)
        codes = data.codes(np.intp)
        n_classes = data.classes.size
        positives = [1] if n_classes == 2 else list(range(n_classes))
        d = M.shape[0]

        def held_out(value, folds):
            out = []
            for train, test in folds:
                l = train.size
                Xl = Xa[train]
                H = self._ridge(l) * np.eye(d) + l * value * scale * M + Xl.T @ Xl
                Y = np.column_stack([np.where(codes[train] == k, 1.0, -1.0)
                                     for k in positives])
                scores = Xa[test] @ sla.cho_solve(sla.cho_factor(H), Xl.T @ Y)
                out.append((scores[:, 0] > 0).astype(np.intp) if n_classes == 2
                           else scores.argmax(axis=1))
            return out

        return held_out


class LinearLapSVM(_LinearManifoldBase):
    """Linear Laplacian SVM (Sindhwani et al. 2005, section 4.2), both routes of the paper.

    * ``solver='mfn'`` (large sparse ``d``): the Laplacian L2-SVM-MFN — the modified finite
      Newton method whose Newton systems ``[R + X_j^T X_j] w = X_j^T Y_j`` include the graph
      term, solved by the shared CGLS (squared hinge loss).
    * ``solver='transform'`` (small ``d``): ``T^2 = gamma_A I + gamma_I s X^T L^p X``; an SVM
      on the labeled rows preprocessed by ``T^-1`` (L2-SVM-MFN for the squared hinge,
      liblinear for the hinge), then ``w = T^-1 w~``.

    With the squared hinge both routes solve the same problem and agree.

    Parameters
    ----------
    gamma_A : float or None, default=None
        Ambient (ridge) regularisation.  ``None`` is ``4 / l`` (``l`` labeled rows): the
        ridge of scikit-learn's ``LogisticRegression()`` to second order, the safer
        default with few labels (``benchmarks/results/defaults_linear_lam.md``: within a
        point of LogisticRegression on 56 / 66 of 80 SSL-book cells for LapRLS / LapSVM,
        against 44 / 55 at the former 1e-2).  The paper's experiments set it explicitly.
    gamma_I : float or "auto", default=1.0
        Intrinsic (graph) regularisation; multiplied by the graph scale ``s``.  ``"auto"``
        chooses it from the eight values of :func:`gamma_I_grid` (graph term's mean
        eigenvalue ``10^k`` times the ambient term's, ``k = 4..-2``, then 0) by stratified
        k-fold CV over the labeled rows, the held-out rows staying in the graph as
        unlabeled rows (``k = min(5, smallest class)``, repeated when the classes are
        tiny; ties go to the larger ``gamma_I``), with the graph built once and each fold
        warm-started along the path; then refits at the chosen value (``gamma_I_``,
        ``cv_results_``).  With a class of one labeled row: the default 1.0, with a warning.
    loss : {'squared_hinge', 'hinge'}, default='squared_hinge'
        ``'hinge'`` needs ``solver='transform'`` (or 'auto' with small ``d``).
    n_neighbors : int, default=10
        ``k`` of the kNN graph over labeled and unlabeled rows.
    metric : {'euclidean', 'cosine'}, default='euclidean'
        Use ``'cosine'`` for text.
    graph_weight : {'heat', 'binary', 'cosine'}, default='heat'
        Edge weights of the kNN graph.
    laplacian_kind : {'unnormalized', 'normalized'}, default='unnormalized'
        ``L = D - W`` or ``I - D^-1/2 W D^-1/2``.
    laplacian_power : int, default=1
        ``p`` of the iterated Laplacian ``L^p`` (applied ``p`` times, never formed).
    graph_scale : {'n2', 'sum', 'none'}, default='n2'
        ``s = 1/n^2``, ``1/sum(W)`` or 1.
    graph_method : {'auto', 'exact', 'approximate'}, default='auto'
        Nearest-neighbour search (approximate NN-descent from 20,000 rows with 'auto').
    graph : sparse matrix of shape (n_samples, n_samples), optional
        A precomputed symmetric adjacency matrix instead of the kNN graph.
    solver : {'auto', 'transform', 'mfn'}, default='auto'
        'auto': 'transform' when ``d <= 2000``, else 'mfn'.
    fit_intercept : bool, default=True
        Append a constant feature ``intercept_scaling`` whose weight is the bias.
    intercept_scaling : float, default=1.0
        Value of the constant feature.
    tol : float, default=1e-6
        CGLS relative residual tolerance.
    max_iter : int, default=50
        Newton iterations of the Laplacian L2-SVM-MFN (``solver='mfn'``) or of the
        L2-SVM-MFN on the transformed rows.
    max_cg_iter : int, default=10000
        CGLS iterations per Newton system.
    warm_start : bool, default=False
        Seed the solver with the previous solution when refitting.
    random_state : int, optional
        Seed of the approximate neighbour search and of the folds of ``gamma_I="auto"``.
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones) against
        the supervised counterpart (scikit-learn's ``LogisticRegression()`` objective:
        ``C = 1``, unpenalised intercept, multinomial beyond two classes); the
        semi-supervised fit is kept only when it wins the guard's margin test,
        otherwise the estimator is that counterpart fitted on the labeled rows
        (``fallback_ is True``).  Costs about four fits; with ``gamma_I="auto"`` the guard
        judges the refit at the chosen value.  ``"none"``: the method as published.  On the
        SSL-book sets the guard gives 16, 16 and 15 of 16 cells within a point of
        ``LogisticRegression()`` on official splits 2, 3 and 1, against 15, 13 and 11
        without it, at about 2.5x the CPU
        (``benchmarks/results/defaults_fallback_logistic.md``,
        ``defaults_fallback_margin.md``).
    verbose : int, default=0
        Log progress to the ``semisup`` logger (1: INFO, 2: DEBUG).
    probability : bool, default=False
        Enable ``predict_proba`` / ``predict_log_proba`` (as :class:`LinearLapRLS`).

    Attributes
    ----------
    coef_, intercept_, classes_, transduction_ : as the other linear estimators.
    objective_ : float or ndarray
        The objective at the solution (one per class for one-vs-rest).
    adjacency_ : sparse matrix
        The graph used.
    gamma_I_ : float
        With ``gamma_I="auto"``: the value chosen (and refitted).
    cv_results_ : dict
        With ``gamma_I="auto"``: ``param_gamma_I``, ``split<k>_test_score``,
        ``mean_test_score``, ``std_test_score``, ``rank_test_score`` (held-out accuracy).
    fit_results_ : list of MFNResult
        Solver output per binary problem (Newton and CG iteration counts, convergence).
    fallback_ : bool
        Whether the guard (``fallback="cv"``) replaced the semi-supervised fit by its
        supervised counterpart: ``coef_`` and ``intercept_`` are then the logistic
        regression's on the labeled rows, ``objective_`` and ``fit_results_`` those of
        :func:`semisup.solvers.logistic.logistic_regression`
        (``adjacency_`` is then not set).
    cv_scores_ : dict or None
        The guard's result (see :func:`semisup.safety.guard`): mean held-out accuracies
        ``semi_supervised`` and ``supervised``, ``n_folds``, ``split_scores``, the margin
        scores' ``gain`` and ``gain_se``, and ``keep``; ``None`` with ``fallback="none"`` or
        when the guard cannot run (a class with one labeled row, or no unlabeled row).

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import LinearLapSVM
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(-2, 1, (30, 2)), rng.normal(2, 1, (30, 2))]
    >>> y = np.full(60, -1)
    >>> y[[0, 1, 30, 31]] = [0, 0, 1, 1]          # two labels per class, 56 unlabeled
    >>> clf = LinearLapSVM(gamma_A=1e-2, gamma_I=1.0, n_neighbors=5).fit(X, y)
    >>> float(clf.score(X, np.repeat([0, 1], 30)))
    1.0
    >>> clf.predict([[-2.0, -2.0], [2.0, 2.0]]).tolist()
    [0, 1]
    """

    _solvers = ("auto", "transform", "mfn")
    _dense_solver, _iterative_solver = "transform", "mfn"

    def __init__(self, gamma_A: float | None = None, gamma_I: float = 1.0,
                 loss: str = "squared_hinge",
                 n_neighbors: int = 10, metric: str = "euclidean", graph_weight: str = "heat",
                 laplacian_kind: str = "unnormalized", laplacian_power: int = 1,
                 graph_scale: str = "n2", graph_method: str = "auto", graph=None,
                 solver: str = "auto", fit_intercept: bool = True, intercept_scaling: float = 1.0,
                 tol: float = 1e-6, max_iter: int = 50, max_cg_iter: int = 10_000,
                 warm_start: bool = False, random_state: int | None = None,
                 fallback: str = "cv", verbose: int = 0, probability: bool = False):
        super().__init__(gamma_A=gamma_A, gamma_I=gamma_I, n_neighbors=n_neighbors,
                         metric=metric, graph_weight=graph_weight,
                         laplacian_kind=laplacian_kind, laplacian_power=laplacian_power,
                         graph_scale=graph_scale, graph_method=graph_method, graph=graph,
                         solver=solver, fit_intercept=fit_intercept,
                         intercept_scaling=intercept_scaling, tol=tol, max_iter=max_iter,
                         max_cg_iter=max_cg_iter, warm_start=warm_start,
                         random_state=random_state, fallback=fallback, verbose=verbose,
                         probability=probability)
        self.loss = loss

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.loss not in ("squared_hinge", "hinge"):
            raise ValueError(f"loss must be 'squared_hinge' or 'hinge', got {self.loss!r}")
        if self.loss == "hinge" and self.solver == "mfn":
            raise ValueError("loss='hinge' needs solver='transform' (the finite Newton method "
                             "is for the squared hinge)")

    def _prepare(self, design, data):
        ctx = super()._prepare(design, data)
        if ctx.solver == "mfn" and self.loss == "hinge":
            raise ValueError(f"loss='hinge' needs solver='transform', which forms a "
                             f"{design.n_weights} x {design.n_weights} matrix; use "
                             "loss='squared_hinge' for large d")
        if ctx.solver == "transform":
            # T^2 = R / l; T^-1 from its eigendecomposition (symmetric positive definite)
            evals, evecs = np.linalg.eigh(ctx.dense_R / ctx.n_labeled)
            ctx.factor = (evecs / np.sqrt(evals)) @ evecs.T
        return ctx

    def _fit_binary(self, design, data, y_pm, prior, sample_weight, context=None, seed=None):
        A = design.restrict(data.labeled)
        l = data.labeled.size
        terms = HingeTerms(y_pm, np.ones(l))
        mfn_opts = dict(tol=self.tol, max_iter=self.max_iter, max_cg_iter=self.max_cg_iter,
                        verbose=self.verbose)
        if context.solver == "mfn":
            res = l2svm_mfn(A, terms, context.reg, w0=seed, **mfn_opts)
            return self._paper_objective(res, l)
        T_inv = context.factor
        Xt = A.materialize() @ T_inv          # l x d: the labeled rows in the new variables
        Xt = np.asarray(Xt)
        if self.loss == "squared_hinge":
            At = Design(Xt, fit_intercept=False)
            inner = l2svm_mfn(At, terms, Ridge(float(l)), **mfn_opts)
            w_t, n_iter = inner.w, inner.n_iter
        else:
            # (l/2)||w~||^2 + (1/2) sum hinge, divided by l: liblinear's form with C = 1/(2l)
            svc = LinearSVC(loss="hinge", C=0.5 / l, fit_intercept=False, tol=self.tol,
                            max_iter=100_000, dual=True).fit(Xt, y_pm)
            w_t, n_iter = svc.coef_.ravel(), int(np.max(svc.n_iter_))
        w = T_inv @ w_t
        o = A.matvec(w)
        loss_terms = squared_hinge(y_pm * o) if self.loss == "squared_hinge" \
            else np.maximum(0.0, 1.0 - y_pm * o)
        objective = context.reg.value(w) + 0.5 * float(np.sum(loss_terms))
        res = MFNResult(w=w, outputs=o, objective=objective, n_iter=n_iter, n_cg_iter=0,
                        converged=True, history=[objective])
        return self._paper_objective(res, l)
