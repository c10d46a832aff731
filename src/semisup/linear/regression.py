"""Linear Laplacian RLS for real-valued targets (Sindhwani, Niyogi, Belkin & Keerthi 2005).

Eq. 3 of the paper with the real targets of the labeled rows in place of ``+1/-1``:

    (X_l^T X_l + l gamma_A I + l gamma_I s X^T L^p X) w = X_l^T y_l,

built from the pieces of :class:`semisup.linear.LinearLapRLS`: the data graph
(:func:`semisup.linear.laplacian.graph_laplacian`), the regulariser ``R`` as an operator
(:class:`semisup.regularizers.GraphRidge`) and CGLS (:func:`semisup.solvers.cgls.cgls`), or
a Cholesky solve of the formed ``d x d`` system when ``d`` is small.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from semisup._logging import convergence_check, get_logger, report_unconverged, verbosity
from semisup._validation import (
    check_bool,
    check_choice,
    check_int,
    check_positive,
    check_semi_supervised_regression,
    check_X,
)
from semisup.base import SemiSupervisedRegressorMixin
from semisup.graph import graph_scale
from semisup.graph.adjacency import WEIGHTS
from semisup.graph.knn import METRICS
from semisup.graph.laplacian import KINDS
from semisup.linear.laplacian import DIRECT_MAX_WEIGHTS, graph_laplacian
from semisup.regularizers import GraphRidge
from semisup.solvers.cgls import cgls
from semisup.solvers.design import Design

logger = get_logger(__name__)


class LinearLapRLSRegressor(SemiSupervisedRegressorMixin, RegressorMixin, BaseEstimator):
    """Linear Laplacian regularized least squares regressor (Sindhwani et al. 2005, eq. 3).

    Minimises ``gamma_A ||w||^2 + gamma_I s (Xw)^T L^p (Xw) + (1/l) sum_labeled
    (y_i - w^T x_i - b)^2`` (eq. 2 with the squared loss), i.e. solves eq. 3 with real
    targets, by CGLS with the graph term applied as an operator (never formed) or by a
    Cholesky factorisation when ``d`` is small.  As in :class:`semisup.linear.LinearLapRLS`
    the bias is one more weight on a constant column, regularised by ``gamma_A``; so that
    this does not shrink the predictions towards 0, the targets are first centred by their
    labeled mean (added back in ``intercept_``).

    **Unlabeled rows** are the rows whose target is *missing*: NaN (the natural missing
    value of a real target), ``None`` or ``pd.NA``.  ``-1`` is an ordinary target.

    Parameters
    ----------
    gamma_A : float, default=1e-2
        Ambient (ridge) regularisation (``> 0``).
    gamma_I : float, default=1.0
        Intrinsic (graph) regularisation (``>= 0``); multiplied by the graph scale ``s``.
    n_neighbors : int, default=10
        ``k`` of the kNN graph over labeled and unlabeled rows.
    metric : {'euclidean', 'cosine'}, default='euclidean'
    graph_weight : {'heat', 'binary', 'cosine'}, default='heat'
    laplacian_kind : {'unnormalized', 'normalized'}, default='unnormalized'
    laplacian_power : int, default=1
        ``p`` of the iterated Laplacian ``L^p``.
    graph_scale : {'n2', 'sum', 'none'}, default='n2'
        ``s = 1/n^2``, ``1/sum(W)`` or 1.
    graph_method : {'auto', 'exact', 'approximate'}, default='auto'
        Nearest-neighbour search.
    graph : sparse matrix of shape (n_samples, n_samples), optional
        A precomputed symmetric adjacency matrix instead of the kNN graph.
    solver : {'auto', 'direct', 'cg'}, default='auto'
        'direct' forms the ``d x d`` system (``d <= 2000`` with 'auto').
    fit_intercept : bool, default=True
        Append a constant column ``intercept_scaling`` whose weight is the bias.
    intercept_scaling : float, default=1.0
        Value of the constant column.
    tol : float, default=1e-6
        Relative residual of CGLS.
    max_cg_iter : int, default=10000
        CGLS iterations.
    random_state : int, optional
        Seed of the approximate neighbour search.
    verbose : int, default=0
        Log progress to the ``semisup`` logger.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    transduction_ : ndarray of shape (n_train,)
        The fitted values ``w^T x_i + b`` at *every* training row, labeled rows included.
    objective_ : float
        Eq. 2 at the solution (centred targets).
    n_cg_iter_ : int
        CGLS iterations (0 for the direct solver).
    adjacency_ : sparse matrix
        The graph used.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.linear.regression import LinearLapRLSRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 3))
    >>> y = X @ [1.0, -2.0, 0.5] + 3.0
    >>> y[10:] = np.nan                     # ten labeled rows
    >>> reg = LinearLapRLSRegressor(gamma_A=1e-4, gamma_I=0.1).fit(X, y)
    >>> np.round(reg.coef_, 1).tolist()
    [1.0, -2.0, 0.5]
    """

    _solvers = ("auto", "direct", "cg")

    def __init__(self, gamma_A: float = 1e-2, gamma_I: float = 1.0, n_neighbors: int = 10,
                 metric: str = "euclidean", graph_weight: str = "heat",
                 laplacian_kind: str = "unnormalized", laplacian_power: int = 1,
                 graph_scale: str = "n2", graph_method: str = "auto", graph=None,
                 solver: str = "auto", fit_intercept: bool = True, intercept_scaling: float = 1.0,
                 tol: float = 1e-6, max_cg_iter: int = 10_000, random_state: int | None = None,
                 verbose: int = 0):
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
        self.max_cg_iter = max_cg_iter
        self.random_state = random_state
        self.verbose = verbose

    def _validate_params(self) -> None:
        check_positive(self.gamma_A, "gamma_A")
        check_positive(self.gamma_I, "gamma_I", allow_zero=True)
        check_int(self.laplacian_power, "laplacian_power")
        check_int(self.n_neighbors, "n_neighbors")
        check_choice(self.metric, "metric", METRICS)
        check_choice(self.graph_weight, "graph_weight", WEIGHTS)
        check_choice(self.laplacian_kind, "laplacian_kind", KINDS)
        check_choice(self.graph_scale, "graph_scale", ("n2", "sum", "none"))
        check_choice(self.graph_method, "graph_method", ("auto", "exact", "approximate"))
        check_choice(self.solver, "solver", self._solvers)
        check_bool(self.fit_intercept, "fit_intercept")
        check_positive(self.intercept_scaling, "intercept_scaling")
        check_positive(self.tol, "tol")
        check_int(self.max_cg_iter, "max_cg_iter")
        check_int(self.verbose, "verbose", low=0)

    def fit(self, X, y):
        """Fit on labeled and unlabeled rows (NaN / None / ``pd.NA`` in ``y``: unlabeled).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Real targets; NaN (or None / ``pd.NA``) marks an unlabeled row.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        data = check_semi_supervised_regression(X, y, estimator=self)
        self._validate_params()
        with verbosity(self.verbose), convergence_check(self, {"cgls": "max_cg_iter"}):
            L, W = graph_laplacian(data.X, graph=self.graph, n_neighbors=self.n_neighbors,
                                   metric=self.metric, weight=self.graph_weight,
                                   kind=self.laplacian_kind, method=self.graph_method,
                                   random_state=self.random_state)
            self.adjacency_ = W
            lab = data.labeled
            l, n = lab.size, data.X.shape[0]
            scale = graph_scale(W, n, self.graph_scale)
            design = Design(data.X, bool(self.fit_intercept), float(self.intercept_scaling))
            reg = GraphRidge(l * float(self.gamma_A), l * float(self.gamma_I) * scale, design,
                             L, power=self.laplacian_power)
            offset = float(data.y[lab].mean()) if self.fit_intercept else 0.0
            target = data.y[lab] - offset
            A = design.restrict(lab)
            solver = self.solver
            if solver == "auto":
                solver = "direct" if design.n_weights <= DIRECT_MAX_WEIGHTS else "cg"
            logger.info("LinearLapRLSRegressor n=%d l=%d d=%d solver=%s", n, l,
                        design.n_weights, solver)
            if solver == "direct":
                Xl = A.materialize()
                G = Xl.T @ Xl
                G = G.toarray() if sp.issparse(G) else np.asarray(G)
                w = sla.solve(reg.dense() + G, A.rmatvec(target), assume_a="pos",
                              check_finite=False)
                self.n_cg_iter_ = 0
            else:
                res = cgls(A, np.ones(l), target, reg, tol=float(self.tol),
                           max_iter=int(self.max_cg_iter))
                w = res.x
                self.n_cg_iter_ = int(res.n_iter)
                if not res.converged:
                    report_unconverged("cgls", f"max_cg_iter={self.max_cg_iter}")
        residual = target - A.matvec(w)
        # eq. 2 = (2/l) times the solver's (1/2) w^T R w + (1/2) ||residual||^2
        self.objective_ = float(2.0 * reg.value(w) / l + np.mean(residual ** 2))
        coef, b = design.weights_to_coef(w)
        self.coef_ = coef
        self.intercept_ = b + offset
        self.transduction_ = design.matvec(w) + offset
        return self

    def predict(self, X) -> np.ndarray:
        """``w^T x + b`` for new rows.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n,)
            Predicted targets.
        """
        check_is_fitted(self, "coef_")
        X = check_X(X, estimator=self, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
