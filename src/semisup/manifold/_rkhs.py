"""Pieces shared by the manifold regularization estimators (Belkin, Niyogi & Sindhwani).

* :class:`KernelGraphMixin`: validated kernel and graph hyper-parameters, the Gram matrix
  ``K`` (step 2 of the paper's algorithm), the adjacency graph ``W`` and Laplacian ``L``
  (steps 1 and 3) and the out-of-sample kernel rows ``K(x, x_i)`` of eq. 7;
* :func:`deformation_columns` / :func:`deformed_kernel`: the linear algebra that reduces
  LapRLS (eq. 8) and the LapSVM dual (eqs. 9-11) to a supervised problem over the ``l``
  labeled points;
* :func:`laplacian_objective`: the value of eq. 6 for a kernel expansion, used to report and
  test every solver on one scale.

The reduction.  Write ``r = gamma_I s / gamma_A`` with ``s`` the graph scale (``1/(l+u)^2``
by default) and ``A = I + r L K`` (``(l+u) x (l+u)``).  Every minimiser of eq. 6 whose graph
term is ``f^T L f`` has the form ``alpha = A^-1 J^T c`` for some ``c`` in ``R^l`` (eq. 11:
``2 gamma_A A = 2 gamma_A I + 2 gamma_I s L K``), and on the labeled points
``f_L = K_L alpha = G c`` with the *deformed labeled Gram matrix*

    G = J K A^-1 J^T = K~_LL,    K~ = K (I + r L K)^-1,

which is symmetric positive semi-definite (``K A^-1 = K^1/2 (I + r K^1/2 L K^1/2)^-1 K^1/2``).
``K~`` is the kernel of the RKHS whose norm is ``||f||_K^2 + r f^T L f`` (the point-cloud
kernel of Sindhwani, Niyogi & Belkin, ICML 2005), so LapRLS is kernel ridge regression and
the LapSVM dual is an SVM, both with the kernel ``G`` on the ``l`` labeled points.  The
eigenvalues of ``L K`` (a product of two PSD matrices) are real and non-negative, so ``A``
is always invertible, whatever the kernel's rank (duplicate points included).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from semisup._logging import warn_at_caller
from semisup._validation import check_bool, check_choice, check_int, check_real, check_X
from semisup.graph import GraphWarning, adjacency_graph, check_graph, graph_scale, laplacian
from semisup.kernels import KERNELS, default_gamma, kernel_matrix, kernel_matrix_blocks
from semisup.losses import squared_hinge

GRAPH_WEIGHTS = ("heat", "binary", "cosine")
GRAPH_METRICS = ("euclidean", "cosine")
LAPLACIANS = ("unnormalized", "normalized")
GRAPH_SCALES = ("n2", "sum", "none")


# --------------------------------------------------------------------------------------------
# linear algebra of the reduction
# --------------------------------------------------------------------------------------------


def deformation_columns(K: np.ndarray, L, ratio: float, columns: np.ndarray) -> np.ndarray:
    """``Z = (I + ratio L K)^-1 J^T``: the columns ``columns`` of ``(I + ratio L K)^-1``.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix over labeled and unlabeled points.
    L : sparse matrix of shape (n, n)
        Graph Laplacian (or any symmetric PSD graph regulariser such as ``L^p``).
    ratio : float
        ``r = gamma_I s / gamma_A >= 0``.
    columns : ndarray of int
        Indices of the labeled points (the rows selected by ``J``).

    Returns
    -------
    ndarray of shape (n, len(columns))
        The expansion coefficients ``alpha = Z c`` of eq. 11 (up to the ``2 gamma_A``
        factor), one column per labeled point.  ``O(n^3)`` (one LU factorisation).
    """
    n = K.shape[0]
    columns = np.asarray(columns, dtype=np.intp)
    if ratio == 0.0:
        Z = np.zeros((n, columns.size))
        Z[columns, np.arange(columns.size)] = 1.0
        return Z
    A = np.asarray(sp.csr_matrix(L) @ K) * ratio      # L K: sparse times dense, O(nnz n)
    A[np.diag_indices(n)] += 1.0
    rhs = np.zeros((n, columns.size))
    rhs[columns, np.arange(columns.size)] = 1.0
    # A is not symmetric; LU is the natural (and cheapest) direct solver
    return sla.solve(A, rhs, overwrite_a=True, overwrite_b=True, check_finite=False)


def deformed_gram(K: np.ndarray, Z: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``G = K[rows] Z``, symmetrised (it is symmetric in exact arithmetic)."""
    G = K[rows] @ Z
    return 0.5 * (G + G.T)


def deformed_kernel(K: np.ndarray, L, ratio: float) -> np.ndarray:
    """The data-dependent kernel ``K~ = K (I + ratio L K)^-1`` on the training points.

    ``K~`` is the Gram matrix of the RKHS with norm ``||f||_K^2 + ratio f^T L f``
    (Sindhwani, Niyogi & Belkin 2005), so a supervised kernel method that uses the rows
    and columns of ``K~`` for the labeled points solves the manifold regularization
    problem eq. 6 with ``ratio = gamma_I s / gamma_A`` (``s`` the graph scale): kernel ridge
    regression with ridge ``gamma_A l`` gives LapRLS (eq. 8), an SVM with
    ``C = 1 / (2 gamma_A l)`` gives LapSVM (eqs. 9-11).  Its rows for the unlabeled points
    are the transductive predictions.  Computing it once per data set and ``ratio``
    makes sweeps over labeled sets and ``gamma_A`` cheap (``O(l^3)`` each).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Gram matrix.
    L : sparse matrix of shape (n, n)
        Graph Laplacian.
    ratio : float
        ``>= 0``.

    Returns
    -------
    ndarray of shape (n, n)
        Symmetric.  ``O(n^3)``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.metrics.pairwise import rbf_kernel
    >>> from semisup import deformed_kernel
    >>> from semisup.graph import adjacency_graph, laplacian
    >>> X = np.random.default_rng(0).normal(size=(20, 2))
    >>> K = rbf_kernel(X, gamma=0.5)
    >>> K_tilde = deformed_kernel(K, laplacian(adjacency_graph(X, 3)), ratio=1.0)
    >>> K_tilde.shape, bool(np.allclose(K_tilde, K_tilde.T))
    ((20, 20), True)
    """
    if not ratio >= 0:
        raise ValueError(f"ratio must be >= 0, got {ratio!r}")
    n = K.shape[0]
    Z = deformation_columns(K, L, float(ratio), np.arange(n))
    Kt = K @ Z
    return 0.5 * (Kt + Kt.T)


def laplacian_objective(f_labeled: np.ndarray, y_pm: np.ndarray, alpha: np.ndarray,
                        K_alpha: np.ndarray, L, gamma_A: float, gamma_I_scaled: float,
                        loss: str) -> float:
    """Eq. 6 for ``f = K alpha + b``: ``(1/l) sum V + gamma_A ||f||_K^2 + gamma_I s f^T L f``.

    ``f_labeled`` are the outputs (bias included) at the labeled points, ``K_alpha`` the
    kernel part of ``f`` at every training point; the bias is left out of the graph term
    (as in eq. 10; the unnormalised Laplacian ignores constants anyway).  ``loss`` is
    ``'squared'`` (RLS), ``'hinge'`` or ``'squared_hinge'``.
    """
    margin = y_pm * f_labeled
    if loss == "squared":
        data = np.mean((y_pm - f_labeled) ** 2)
    elif loss == "hinge":
        data = np.mean(np.maximum(0.0, 1.0 - margin))
    elif loss == "squared_hinge":
        data = np.mean(squared_hinge(margin))
    else:  # pragma: no cover - internal
        raise ValueError(loss)
    ridge = gamma_A * float(alpha @ K_alpha)
    graph = gamma_I_scaled * float(K_alpha @ (L @ K_alpha)) if gamma_I_scaled else 0.0
    return float(data + ridge + graph)


# --------------------------------------------------------------------------------------------
# the training Gram matrix, by row blocks
# --------------------------------------------------------------------------------------------


def gram_matrix(X, kernel: str = "rbf", gamma: float | None = None, degree: int = 3,
                coef0: float = 1.0, block_rows: int = 2048) -> np.ndarray:
    """``K(X, X)`` computed ``block_rows`` rows at a time (:func:`kernel_matrix_blocks`).

    Blocks bound the temporaries of the pairwise computation to ``O(block_rows n)`` and
    avoid ``X @ X.T`` on one buffer, which numpy hands to BLAS ``syrk``: with the bundled
    OpenBLAS (0.3.31) that call segfaults for large outputs (reproduced with a
    20,000 x 784 dense ``X``), while the general product used for ``X[i:j] @ X.T`` does
    not.
    """
    n = X.shape[0]
    if n <= block_rows:
        # one block: the fancy-indexed copy is a second buffer, so the product is gemm too
        return kernel_matrix(X[np.r_[0:n]], X, kernel=kernel, gamma=gamma, degree=degree,
                             coef0=coef0)
    return kernel_matrix_blocks(X, X, block_rows, kernel=kernel, gamma=gamma, degree=degree,
                                coef0=coef0)


# --------------------------------------------------------------------------------------------
# duplicate rows
# --------------------------------------------------------------------------------------------


def count_duplicate_rows(X) -> int:
    """Number of rows of ``X`` equal to an earlier row (dense or CSR).

    Dense rows are compared as raw bytes (``O(n log n)`` sorting); CSR rows are bucketed
    by a random projection (a CSR product is a fixed sequential sum per row, so equal rows
    get equal keys) and the candidates compared exactly.
    """
    n = X.shape[0]
    if n < 2:
        return 0
    if not sp.issparse(X):
        A = np.ascontiguousarray(X, dtype=np.float64) + 0.0   # + 0.0 maps -0.0 to 0.0
        rows = A.view(np.dtype((np.void, A.dtype.itemsize * A.shape[1]))).ravel()
        return int(n - np.unique(rows).size)
    X = sp.csr_matrix(X, copy=True)
    X.eliminate_zeros()
    X.sort_indices()
    h = X @ np.random.default_rng(0).standard_normal(X.shape[1])
    order = np.argsort(h, kind="stable")
    hs = h[order]
    count = 0
    for k in np.flatnonzero(hs[1:] == hs[:-1]):
        if (X[order[k]] - X[order[k + 1]]).count_nonzero() == 0:
            count += 1
    return count


# --------------------------------------------------------------------------------------------
# the kernel / graph hyper-parameters shared by every estimator
# --------------------------------------------------------------------------------------------


# one shared set of parameter checks for every estimator (semisup._validation)
_check_choice = check_choice
_check_int = check_int
_check_real = check_real


class KernelGraphMixin:
    """Kernel and graph hyper-parameters (set by the estimators' ``__init__``).

    Kernel: ``kernel`` ('rbf', 'poly', 'linear', 'precomputed'), ``gamma`` (default: the
    reciprocal mean squared distance for 'rbf', ``1 / n_features`` for 'poly'), ``degree``,
    ``coef0``.  Graph: ``graph`` ('knn', or a precomputed ``(n, n)`` adjacency matrix
    ``W``, sparse or dense, over the rows passed to ``fit``), ``n_neighbors``,
    ``graph_weight`` ('heat', 'binary', 'cosine'), ``t`` (heat width), ``graph_metric``,
    ``graph_method`` (exact or approximate kNN), ``laplacian`` ('unnormalized',
    'normalized'), ``laplacian_power`` (``p`` of the iterated Laplacian ``L^p``) and
    ``graph_scale`` ('n2': ``1/(l+u)^2`` of eq. 6, 'sum': ``1/sum_ij W_ij``, 'none').

    The estimators' ``fit`` share :meth:`_fit_kernel_graph` (``K``, ``L``, ``s``) and their
    prediction :meth:`_validated_test_gram` (the kernel rows of new points).
    """

    def _set_kernel_graph_params(self, *, gamma_A, gamma_I, kernel, gamma, degree, coef0, graph,
                                 n_neighbors, graph_weight, t, graph_metric, graph_method,
                                 laplacian, laplacian_power, graph_scale,
                                 random_state) -> None:
        """Store the ``__init__`` arguments common to every manifold estimator, unchanged.

        One place for the assignments that each ``__init__`` would otherwise repeat;
        scikit-learn only needs every ``__init__`` parameter stored under its own name.
        """
        self.gamma_A = gamma_A
        self.gamma_I = gamma_I
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.graph = graph
        self.n_neighbors = n_neighbors
        self.graph_weight = graph_weight
        self.t = t
        self.graph_metric = graph_metric
        self.graph_method = graph_method
        self.laplacian = laplacian
        self.laplacian_power = laplacian_power
        self.graph_scale = graph_scale
        self.random_state = random_state

    def _fit_kernel_graph(self, X) -> tuple[np.ndarray, sp.csr_matrix, float]:
        """``K``, ``L`` and the graph scale ``s`` over the validated training rows ``X``.

        Sets ``gamma_``, ``X_fit_``, ``n_train_`` and ``n_features_in_``.  Called by
        ``fit`` once the inputs and hyper-parameters are validated.
        """
        K = self._train_gram(X)
        _, L, scale = self._graph_laplacian(X)
        self.n_train_ = X.shape[0]
        self.n_features_in_ = X.shape[1]
        return K, L, scale

    def _check_kernel_graph_params(self) -> None:
        _check_choice(self.kernel, "kernel", KERNELS)
        _check_real(self.gamma, "gamma", positive=True, allow_none=True)
        _check_int(self.degree, "degree")
        if not isinstance(self.coef0, numbers.Real):
            raise ValueError(f"coef0 must be a real number, got {self.coef0!r}")
        if isinstance(self.graph, str):
            if self.graph != "knn":
                raise ValueError(f"graph must be 'knn' or an (n, n) adjacency matrix, got "
                                 f"{self.graph!r}")
            if self.kernel == "precomputed":
                raise ValueError("kernel='precomputed' gives no coordinates to build a kNN "
                                 "graph from: pass the adjacency matrix as graph=W")
        _check_int(self.n_neighbors, "n_neighbors")
        _check_choice(self.graph_weight, "graph_weight", GRAPH_WEIGHTS)
        if not (isinstance(self.t, str) and self.t == "local"):
            _check_real(self.t, "t", positive=True, allow_none=True)
        _check_choice(self.graph_metric, "graph_metric", GRAPH_METRICS)
        _check_choice(self.graph_method, "graph_method", ("auto", "exact", "approximate"))
        _check_choice(self.laplacian, "laplacian", LAPLACIANS)
        _check_int(self.laplacian_power, "laplacian_power")
        _check_choice(self.graph_scale, "graph_scale", GRAPH_SCALES)
        if hasattr(self, "fit_intercept"):
            check_bool(self.fit_intercept, "fit_intercept")

    # ----------------------------------------------------------------------------- kernel

    def _kernel_gamma(self, X) -> float | None:
        if self.kernel == "rbf":
            return float(self.gamma) if self.gamma is not None else default_gamma(X)
        if self.kernel == "poly":
            return float(self.gamma) if self.gamma is not None else 1.0 / X.shape[1]
        return None

    def _train_gram(self, X) -> np.ndarray:
        """Gram matrix over the training rows; sets ``gamma_`` and ``X_fit_``."""
        if self.kernel == "precomputed":
            K = np.asarray(X, dtype=np.float64)
            if K.ndim != 2 or K.shape[0] != K.shape[1]:
                raise ValueError(f"with kernel='precomputed' X must be the square (n, n) "
                                 f"training Gram matrix, got shape {K.shape}")
            self.gamma_ = None
            self.X_fit_ = None
            return K            # never modified: no copy of a possibly huge matrix
        self.gamma_ = self._kernel_gamma(X)
        self.X_fit_ = X
        return gram_matrix(X, kernel=self.kernel, gamma=self.gamma_, degree=self.degree,
                           coef0=self.coef0)

    def _validated_test_gram(self, X) -> np.ndarray:
        """Validate new rows (or their precomputed kernel) and return ``K(x, x_i)``."""
        X = check_X(X, accept_sparse=self.kernel != "precomputed", estimator=self, reset=False)
        if self.kernel != "precomputed" and X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input")
        return self._test_gram(X)

    def _test_gram(self, X) -> np.ndarray:
        """``K(x, x_i)`` for new rows ``x`` against the training rows (eq. 7)."""
        if self.kernel == "precomputed":
            K = np.asarray(X, dtype=np.float64)
            if K.ndim != 2 or K.shape[1] != self.n_train_:
                raise ValueError(f"with kernel='precomputed' X must be the (n_test, "
                                 f"{self.n_train_}) kernel between new and training rows, "
                                 f"got shape {K.shape}")
            return K
        return kernel_matrix(X, self.X_fit_, kernel=self.kernel, gamma=self.gamma_,
                             degree=self.degree, coef0=self.coef0)

    # ----------------------------------------------------------------------------- graph

    def _graph_laplacian(self, X) -> tuple[sp.csr_matrix, sp.csr_matrix, float]:
        """``W``, ``L`` (``L^p``) and the graph scale ``s`` of eq. 6 over the training rows."""
        n = X.shape[0]
        if isinstance(self.graph, str):
            if self.kernel != "precomputed":
                dup = count_duplicate_rows(X)
                if dup:
                    warn_at_caller(f"X has {dup} duplicate rows: they are joined by "
                                   "zero-length edges (heat weight 1) and make the kernel "
                                   "matrix singular; the solution stays finite, but consider "
                                   "removing them", GraphWarning)
            k = min(self.n_neighbors, n - 1)
            if k < self.n_neighbors:
                warn_at_caller(f"n_neighbors={self.n_neighbors} >= n_samples={n}: using "
                               f"{k} neighbours", GraphWarning)
            W = adjacency_graph(X, n_neighbors=k, metric=self.graph_metric,
                                weight=self.graph_weight, t=self.t,
                                method=self.graph_method,
                                random_state=getattr(self, "random_state", None))
        else:
            W = self.graph
            W = sp.csr_matrix(W, dtype=np.float64)
            if W.shape != (n, n):
                raise ValueError(f"graph must be an (n_samples, n_samples) = ({n}, {n}) "
                                 f"adjacency matrix over the rows of X, got shape {W.shape}")
            if not np.all(np.isfinite(W.data)) or (W.data < 0).any():
                raise ValueError("graph (adjacency matrix) must be finite and non-negative")
            if abs(W - W.T).max() > 1e-10 * max(1.0, abs(W).max()):
                raise ValueError("graph (adjacency matrix) must be symmetric: pass "
                                 "W.maximum(W.T) or (W + W.T) / 2")
            W = W.copy()
            W.setdiag(0.0)
            W.eliminate_zeros()
            check_graph(W, warn=True)
        L = laplacian(W, kind=self.laplacian, power=self.laplacian_power)
        return W, L, graph_scale(W, n, self.graph_scale)

    def _adjust_tags(self, tags):
        tags.input_tags.sparse = self.kernel != "precomputed"
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags


#: numpydoc text of the kernel and graph parameters, shared by the estimators' docstrings.
KERNEL_GRAPH_PARAMS = """\
    kernel : {'rbf', 'poly', 'linear', 'precomputed'}, default='rbf'
        ``K(x, z)``: ``exp(-gamma ||x - z||^2)``, ``(gamma <x, z> + coef0)^degree``,
        ``<x, z>``, or a precomputed Gram matrix passed as ``X`` (then ``graph`` must be
        an adjacency matrix, and prediction takes the ``(n_test, n_train)`` kernel).
    gamma : float, optional
        Kernel width; default: the reciprocal mean squared distance between training
        rows for 'rbf' (:func:`semisup.kernels.default_gamma`), ``1 / n_features`` for
        'poly'.  The value used is stored in ``gamma_``.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Constant of the polynomial kernel.
    graph : 'knn' or sparse matrix of shape (n_samples, n_samples), default='knn'
        The data adjacency graph ``W`` (step 1 of the paper's algorithm): built from ``X``
        by :func:`semisup.graph.adjacency_graph` (symmetrised kNN graph), or given
        (symmetric, non-negative, over the rows passed to ``fit``; e.g. to share one
        graph between several fits).
    n_neighbors : int, default=6
        ``k`` of the kNN graph (the paper uses 6).
    graph_weight : {'heat', 'binary', 'cosine'}, default='heat'
        Edge weights: ``exp(-||x_i - x_j||^2 / 4t)``, 1, or the cosine similarity (with
        ``graph_metric='cosine'``).
    t : float, optional
        Heat-kernel width (default: a quarter of the mean squared edge length).
    graph_metric : {'euclidean', 'cosine'}, default='euclidean'
        Distance of the neighbour search.
    graph_method : {'auto', 'exact', 'approximate'}, default='auto'
        Neighbour search (exact below 20,000 rows with 'auto').
    laplacian : {'unnormalized', 'normalized'}, default='unnormalized'
        ``L = D - W`` (eq. 6) or ``I - D^-1/2 W D^-1/2``.
    laplacian_power : int, default=1
        ``p`` of the iterated Laplacian ``L^p`` used in place of ``L`` (remark (a) after
        Theorem 2.2).
    graph_scale : {'n2', 'sum', 'none'}, default='n2'
        Normalising coefficient ``s`` of the graph term: ``1/(l+u)^2`` (eq. 6),
        ``1 / sum_ij W_ij`` (the paper's alternative for sparse graphs) or 1."""


def kernel_graph_params(laplacian: str = "unnormalized", laplacian_power: int = 1) -> str:
    """:data:`KERNEL_GRAPH_PARAMS` with the estimator's default ``laplacian`` and power."""
    doc = KERNEL_GRAPH_PARAMS
    if laplacian != "unnormalized":
        doc = doc.replace(
            "default='unnormalized'\n        ``L = D - W`` (eq. 6) or ``I - D^-1/2 W D^-1/2``.",
            f"default={laplacian!r}\n        ``L = D - W`` (eq. 6) or ``I - D^-1/2 W D^-1/2``.")
    if laplacian_power != 1:
        doc = doc.replace("laplacian_power : int, default=1",
                          f"laplacian_power : int, default={laplacian_power}")
    return doc
