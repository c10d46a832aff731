"""What label propagation and label spreading share: the graph, the solve, the extension.

Both methods fit in three steps:

1. the kNN graph ``W`` of the training rows by the library's one graph builder
   (:func:`semisup.graph.knn_search` + :func:`semisup.graph.adjacency_graph`: exact or
   NN-descent search, heat / binary / cosine weights, union symmetrisation, no self loops);
2. one sparse SPD system per class, all classes as one block of right-hand sides solved by
   Jacobi-preconditioned conjugate gradients to a relative residual ``tol``
   (:func:`semisup.propagation._cg.block_pcg`) on the rows of the connected components
   that hold a labeled row;
3. row-normalised label distributions; rows of components without a labeled row get the
   labeled class prior (with one :class:`~semisup.graph.GraphWarning` naming the fix).

New rows get the harmonic extension: the weighted average of the label distributions of
their ``k`` nearest training rows, with the edge weights of the training graph (Zhu,
Ghahramani & Lafferty 2003, section 7; Delalleau, Bengio & Le Roux 2005, eq. 6 -- the
harmonic property of the solution at a new vertex).  A new row equal to a training row gets
that row's distribution, so ``predict(X_train)`` reproduces ``transduction_``.
"""

from __future__ import annotations

import numbers
import time
from abc import ABCMeta, abstractmethod

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.neighbors import NearestNeighbors
from sklearn.utils.validation import check_is_fitted

from semisup._accel import use_compiled
from semisup._logging import (
    convergence_check,
    get_logger,
    report_unconverged,
    verbosity,
    warn_at_caller,
)
from semisup._validation import (
    check_bool,
    check_choice,
    check_int,
    check_positive,
    check_real,
    check_semi_supervised,
    check_X,
    warn_if_collapsed,
)
from semisup.base import SemiSupervisedClassifierMixin
from semisup.graph import GraphWarning, adjacency_graph, edge_weights, knn_search

logger = get_logger(__name__)

GRAPH_WEIGHTS = ("heat", "binary", "cosine")
GRAPH_METRICS = ("euclidean", "cosine")
GRAPH_METHODS = ("auto", "exact", "approximate")

#: numpydoc text of the parameters shared by both estimators
GRAPH_PARAMS = """\
    n_neighbors : int, default=10
        ``k`` of the kNN graph (union-symmetrised: ``i ~ j`` when either is among the
        other's ``k`` nearest rows; no self loops, as Zhou et al. specify).  Also the
        number of training rows a new row is averaged over.  Raise it when the fit warns
        that some rows are not connected to any labeled row.
    graph_weight : {'heat', 'binary', 'cosine'}, default='heat'
        Edge weights ``exp(-||x_i - x_j||^2 / 4t)``, 1, or the cosine similarity (with
        ``graph_metric='cosine'``).
    t : float or 'local', optional
        Heat-kernel width; by default a quarter of the mean squared kNN distance (a typical
        edge weighs ``1/e``); ``'local'``: per-row widths (Zelnik-Manor & Perona), see
        :func:`semisup.graph.adjacency_graph`.  The value used is stored in ``t_``.
    graph_metric : {'euclidean', 'cosine'}, default='euclidean'
        Distance of the neighbour search.
    graph_method : {'auto', 'exact', 'approximate'}, default='auto'
        Neighbour search: exact, or NN-descent (pynndescent) -- ``'auto'`` switches to
        the approximate search from 20,000 rows.
    tol : float, default=1e-4
        Relative residual ``||B - A F|| / ||B||`` at which conjugate gradients stop
        (per class).
    max_iter : int, default=1000
        Conjugate-gradient iterations at most; reaching it draws one
        ``ConvergenceWarning``.
    warm_start : bool, default=False
        Start conjugate gradients from the previous fit's solution when the new fit has
        the same rows and classes (e.g. a refit with a few more labels); otherwise from
        the labeled class prior (harmonic function) or zero (spreading).  A fit keeps its
        solution for the next one only when ``warm_start=True``.
    n_jobs : int, optional
        Threads of the neighbour search (``None``: the library's default).
    random_state : int, optional
        Seed of the approximate neighbour search and of the guard's folds.
    verbose : int, default=0
        Log the graph and solver steps to the ``semisup`` logger (1: INFO, 2: DEBUG) and
        show a progress bar over the conjugate-gradient iterations.
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones) against
        the supervised counterpart (scikit-learn's ``SVC()``); the semi-supervised fit is
        kept only when it wins the guard's margin test, otherwise the estimator is
        that counterpart fitted on the labeled rows (``fallback_ is True``; ``predict`` and
        ``predict_proba`` are then the counterpart's, the graph attributes absent).  Costs
        about four fits.  ``"none"``: the method as published."""

#: numpydoc text of the fitted attributes shared by both estimators
FITTED_ATTRIBUTES = """\
    classes_ : ndarray of shape (n_classes,)
    label_distributions_ : ndarray of shape (n_samples, n_classes)
        Class distribution of every training row (rows sum to one; one-hot on the
        labeled rows).
    transduction_ : ndarray of shape (n_samples,)
        Given labels on labeled rows, the arg max of ``label_distributions_`` elsewhere.
    n_features_in_ : int
    X_fit_ : ndarray or csr_matrix
        The training rows (for the out-of-sample extension).
    t_ : float or None
        Heat-kernel width used (``None`` for binary or cosine weights, or per-row widths).
    n_iter_ : int
        Conjugate-gradient iterations.
    residual_ : float
        Largest final relative residual over the classes.
    residual_history_ : list of float
        Largest relative residual after each iteration.
    n_components_ : int
        Connected components of the graph.
    unreached_ : ndarray of bool of shape (n_samples,)
        Rows in components without a labeled row (they got the labeled class prior).
    timings_ : dict
        Seconds spent in the neighbour search, the graph and the solve.
    fallback_ : bool
        Whether the guard (``fallback="cv"``) replaced the method by its supervised
        counterpart.
    supervised_estimator_ : sklearn.svm.SVC
        Under a fallback only: the counterpart fitted on the labeled rows (classes
        ``0 .. n_classes - 1``).
    cv_scores_ : dict or None
        The guard's held-out accuracies (see :func:`semisup.safety.guard`); ``None`` with
        ``fallback="none"`` or when no fold existed (a class with one labeled row)."""


def matmat_operator(M: sp.csr_matrix):
    """``P -> M @ P`` by the library's compiled CSR kernel on large graphs, scipy otherwise."""
    if not use_compiled(M.nnz):
        return lambda P: M @ P
    from semisup.solvers import _kernels

    indices = M.indices.view(np.uint32 if M.indices.dtype == np.int32 else np.uint64)
    arrays = (M.indptr, indices, M.data)

    def matmat(P):
        out = np.empty((M.shape[0], P.shape[1]))
        _kernels.csr_matmat(*arrays, np.ascontiguousarray(P, dtype=np.float64), out)
        return out

    return matmat


def _normalise_rows(F: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Non-negative part of ``F`` with rows scaled to sum to one; empty rows get ``fallback``."""
    F = np.maximum(F, 0.0)
    norm = F.sum(axis=1, keepdims=True)
    out = np.divide(F, norm, out=np.empty_like(F), where=norm > 0)
    out[norm[:, 0] <= 0] = fallback
    return out


class GraphPropagation(SemiSupervisedClassifierMixin, ClassifierMixin, BaseEstimator,
                       metaclass=ABCMeta):
    """Base class of :class:`LabelPropagation` and :class:`LabelSpreading`.

    A concrete class lists :class:`semisup.base.SupervisedFallbackMixin` before this one,
    so that under a fallback the mixin's ``predict`` and ``predict_proba`` answer before
    the harmonic extension here; ``fit`` runs the mixin's guard around :meth:`_fit_plain`.
    """

    def _check_graph_params(self) -> None:
        check_int(self.n_neighbors, "n_neighbors")
        check_choice(self.graph_weight, "graph_weight", GRAPH_WEIGHTS)
        if not (isinstance(self.t, str) and self.t == "local"):
            check_real(self.t, "t", positive=True, allow_none=True)
        check_choice(self.graph_metric, "graph_metric", GRAPH_METRICS)
        check_choice(self.graph_method, "graph_method", GRAPH_METHODS)
        if self.graph_weight == "cosine" and self.graph_metric != "cosine":
            raise ValueError("graph_weight='cosine' needs graph_metric='cosine'")
        check_positive(self.tol, "tol")
        check_int(self.max_iter, "max_iter")
        check_bool(self.warm_start, "warm_start")
        if self.n_jobs is not None and (isinstance(self.n_jobs, bool) or not isinstance(
                self.n_jobs, numbers.Integral) or self.n_jobs == 0 or self.n_jobs < -1):
            raise ValueError(f"n_jobs must be None, -1 or an integer >= 1, got {self.n_jobs!r}")

    @abstractmethod
    def _check_method_params(self) -> None:
        """Validate the method's own hyper-parameters."""

    @abstractmethod
    def _solve(self, W: sp.csr_matrix, degree: np.ndarray, labeled_local: np.ndarray,
               Y: np.ndarray, X0: np.ndarray | None, prior: np.ndarray):
        """Solve the method's system on the sub-graph ``W``; return ``(F, BlockCGResult)``.

        ``Y`` is the one-hot label block (zero rows where unlabeled), ``labeled_local`` the
        positions of the labeled rows, ``degree`` the degrees in the whole graph, ``X0``
        the previous fit's ``F`` (warm start) or ``None``, ``prior`` the labeled class
        frequencies.
        """

    # -------------------------------------------------------------------------- fit

    def fit(self, X, y):
        """Propagate the labels of the labeled rows (``y != -1``) over the kNN graph.

        With ``fallback="cv"`` (the default) the guard of :mod:`semisup.safety` runs first
        and may make the estimator its supervised counterpart (``SVC()``) instead.

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
        # one convergence warning for the guard's fold fits and the final fit together
        with convergence_check(self, {"cg": "max_iter"}):
            return self._fit_guarded(X, y)

    def _fit_plain(self, X, y) -> None:
        """The method as published (``fallback="none"``)."""
        with verbosity(self.verbose), convergence_check(self, {"cg": "max_iter"}):
            self._fit(X, y)

    def _graph(self, X, timings: dict | None = None):
        """The kNN graph of the training rows: ``(W, k, t, dist)`` (``t`` the heat width)."""
        timings = {} if timings is None else timings
        n = X.shape[0]
        k = min(int(self.n_neighbors), n - 1)
        if k < self.n_neighbors:
            warn_at_caller(f"n_neighbors={self.n_neighbors} >= n_samples={n}: using {k} "
                           "neighbours", GraphWarning)
        t0 = time.perf_counter()
        idx, dist = knn_search(X, k, metric=self.graph_metric, method=self.graph_method,
                               random_state=self.random_state, n_jobs=self.n_jobs)
        timings["knn"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        t = self.t
        if self.graph_weight == "heat" and t is None:
            _, t = edge_weights(dist.ravel(), "heat", None)
        W = adjacency_graph(X, n_neighbors=k, metric=self.graph_metric,
                            weight=self.graph_weight, t=t, neighbors=(idx, dist), warn=False)
        timings["graph"] = time.perf_counter() - t0
        logger.info("%d-NN graph over %d rows: search %.2f s, weights %.2f s, %d edges", k, n,
                    timings["knn"], timings["graph"], W.nnz // 2)
        return W, k, t, dist

    def _fit(self, X, y) -> None:
        data = check_semi_supervised(X, y, require_unlabeled=True, estimator=self)
        self._check_graph_params()
        self._check_method_params()
        X = data.X
        n, n_classes = X.shape[0], data.classes.size
        timings = {}

        # 1. the graph (one search: its distances also set the heat width kept for predict)
        W, k, t, dist = self._graph(X, timings)
        self.t_ = float(t) if isinstance(t, numbers.Real) and self.graph_weight == "heat" \
            else None
        if isinstance(t, str):
            # per-row widths of the training rows, for the extension to new rows
            self._sigma_fit = _local_sigma(dist)

        # 2. components that hold a labeled row; the rest get the prior
        n_comp, comp = connected_components(W, directed=False)
        has_label = np.zeros(n_comp, dtype=bool)
        has_label[comp[data.labeled]] = True
        reached = has_label[comp]
        prior = np.bincount(data.y_index, minlength=n_classes) / data.labeled.size
        rows = np.flatnonzero(reached)
        if rows.size < n:
            n_bad = int(n_comp - has_label.sum())
            warn_at_caller(
                f"{type(self).__name__}: {n - rows.size} rows lie in {n_bad} connected "
                f"component{'s' if n_bad > 1 else ''} of the {k}-NN graph without any labeled "
                "row; they were given the labeled class prior. Raise n_neighbors "
                f"(currently {self.n_neighbors}) to connect them, or label a row there",
                GraphWarning)
        degree = np.asarray(W.sum(axis=1)).ravel()
        position = np.full(n, -1, dtype=np.int64)
        position[rows] = np.arange(rows.size)
        labeled_local = position[data.labeled]
        Y = np.zeros((rows.size, n_classes))
        Y[labeled_local, data.y_index] = 1.0
        W_sub = W if rows.size == n else W[rows][:, rows]

        X0 = None
        previous = getattr(self, "_solution", None)
        if self.warm_start and previous is not None and previous.shape == Y.shape \
                and np.array_equal(self.classes_, data.classes):
            X0 = previous

        # 3. the solve
        t0 = time.perf_counter()
        F, res = self._solve(W_sub, degree[rows], labeled_local, Y, X0, prior)
        timings["solve"] = time.perf_counter() - t0
        logger.info("block CG over %d rows x %d classes: %d iterations, relative residual "
                    "%.3g (tol %g) in %.2f s", rows.size, n_classes, res.n_iter,
                    float(res.residual.max(initial=0.0)), self.tol, timings["solve"])
        if not res.converged:
            report_unconverged("cg", f"relative residual {res.residual.max():.3g} > tol "
                               f"{self.tol:g} after {res.n_iter} iterations")
        # kept only when asked for: at 1M rows x 10 classes it is another 80 MB
        self._solution = F if self.warm_start else None

        dist_all = np.tile(prior, (n, 1))
        dist_all[rows] = self._distributions(F, labeled_local, data.y_index, prior)
        dist_all[data.labeled] = 0.0
        dist_all[data.labeled, data.y_index] = 1.0
        self.classes_ = data.classes
        self.label_distributions_ = dist_all
        transduction = data.classes[np.argmax(dist_all, axis=1)]
        transduction[data.labeled] = data.classes[data.y_index]
        self.transduction_ = transduction
        self.n_features_in_ = X.shape[1]
        self.X_fit_ = X
        self.n_iter_ = res.n_iter
        self.residual_ = float(res.residual.max(initial=0.0))
        self.residual_history_ = res.history
        self.n_components_ = int(n_comp)
        self.unreached_ = ~reached
        self.timings_ = timings
        self._n_neighbors_fit = k
        # brute-force search computes |x|^2 - 2 x.z + |z|^2: a duplicate of a training row
        # comes back at about sqrt(eps) |x| instead of 0
        sq = X.multiply(X).sum(axis=1) if hasattr(X, "multiply") else np.einsum("ij,ij->i", X, X)
        self._duplicate_tol = 1e-6 * (float(np.sqrt(np.mean(sq))) + float(np.mean(dist)))
        self._nn_index = None
        self._search_index()
        warn_if_collapsed(self, transduction[data.unlabeled], n_classes,
                          hint="Check the graph: raise n_neighbors or set t (heat width)")

    def _distributions(self, F: np.ndarray, labeled_local: np.ndarray, y_index: np.ndarray,
                       prior: np.ndarray) -> np.ndarray:
        """Row-normalised label distributions of the solved rows (methods may rescale)."""
        return _normalise_rows(F, prior)

    # ---------------------------------------------------------------------- predict

    def _search_index(self) -> NearestNeighbors:
        """The neighbour search of the extension over ``X_fit_``, built on first use.

        It is derived state: model files and pickles leave it out (a search tree is not
        data) and the first prediction after loading rebuilds it.
        """
        if getattr(self, "_nn_index", None) is None:
            X = self.X_fit_
            algorithm = "brute" if sp.issparse(X) or self.graph_metric == "cosine" \
                or X.shape[1] > 15 else "auto"
            self._nn_index = NearestNeighbors(
                n_neighbors=self._n_neighbors_fit, metric=self.graph_metric,
                algorithm=algorithm, n_jobs=self.n_jobs).fit(X)
        return self._nn_index

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_nn_index", None)
        return state

    def _neighbours_of(self, X) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest training rows of each new row, and their distances."""
        dist, idx = self._search_index().kneighbors(X)
        return idx, dist

    def predict_proba(self, X) -> np.ndarray:
        """Class distributions of new rows by the harmonic extension.

        ``p(x) = sum_j w(x, x_j) p_j / sum_j w(x, x_j)`` over the ``n_neighbors`` nearest
        training rows ``x_j`` with the training graph's edge weights; a row equal to a
        training row gets that row's distribution.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n, n_classes)
            Rows sum to one; columns follow ``classes_``.
        """
        check_is_fitted(self, "label_distributions_")
        X = check_X(X, estimator=self, reset=False)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input")
        idx, dist = self._neighbours_of(X)
        if isinstance(self.t, str):
            sigma_new = _local_sigma(dist)
            w = np.exp(-dist ** 2 / (sigma_new[:, None] * self._sigma_fit[idx]))
        else:
            w, _ = edge_weights(dist, self.graph_weight, self.t_, self.graph_metric)
        # a duplicate of a training row is that row (averaged over equal training rows)
        same = dist <= self._duplicate_tol
        dup = same.any(axis=1)
        w = np.where(dup[:, None], same.astype(np.float64), w)
        P = self.label_distributions_
        proba = np.einsum("ij,ijk->ik", w, P[idx])
        total = w.sum(axis=1)
        # all weights underflowed (a row far from the data): its nearest row decides
        far = total <= 0
        proba[far] = P[idx[far, 0]]
        total[far] = 1.0
        proba /= total[:, None]
        return proba

    def predict(self, X) -> np.ndarray:
        """Class labels of new rows (arg max of :meth:`predict_proba`).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        proba = self.predict_proba(X)     # checks that the estimator is fitted
        return self.classes_[np.argmax(proba, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _local_sigma(dist: np.ndarray) -> np.ndarray:
    """Per-row widths of ``t='local'``: the ``k``-th neighbour distance (median if zero), as
    :func:`semisup.graph.adjacency_graph` computes them."""
    sigma = dist[:, -1]
    positive = sigma[sigma > 0]
    floor = float(np.median(positive)) if positive.size else 1.0
    return np.where(sigma > 0, sigma, floor)
