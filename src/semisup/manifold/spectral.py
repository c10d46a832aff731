"""Regularized spectral clustering and Laplacian eigenmaps with an out-of-sample extension
(section 5.4 of Belkin, Niyogi & Sindhwani, eqs. 12-13)."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    ClusterMixin,
    TransformerMixin,
)
from sklearn.cluster import KMeans
from sklearn.utils.validation import check_is_fitted

from semisup._validation import check_X
from semisup.manifold._rkhs import KERNEL_GRAPH_PARAMS, KernelGraphMixin, _check_int, _check_real


def regularized_eigenmaps(K: np.ndarray, L, gamma: float, n_components: int,
                          rtol: float = 1e-10) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``n_components`` smallest solutions of eq. 13.

    Minimise ``gamma alpha^T K alpha + f^T L f`` over ``f = K alpha`` subject to
    ``1^T K alpha = 0`` and ``alpha^T K^2 alpha = 1`` (eq. 12 with the constraints of
    section 5.4), i.e. the generalised eigenproblem
    ``P (gamma K + K L K) P v = lambda P K^2 P v`` (eq. 13).

    ``K^2`` is numerically singular for smooth kernels, so eq. 13 is not handed to a
    generalised solver as is.  With ``K = U S U^T`` (eigenvalues below ``rtol * max``
    dropped) and ``alpha = U S^-1 g`` we have ``f = U g``, ``alpha^T K^2 alpha = g^T g`` and
    ``alpha^T K alpha = g^T S^-1 g``: eq. 13 restricted to the range of ``K`` (the only part
    of ``alpha`` that changes ``f``) is the standard symmetric eigenproblem of
    ``gamma S^-1 + U^T L U`` on the complement of ``U^T 1``.  Two dense ``eigh`` calls,
    ``O(n^3)``: meant for a few thousand points.

    Parameters
    ----------
    K : ndarray of shape (n, n)
    L : sparse matrix of shape (n, n)
    gamma : float
        ``gamma_A / (gamma_I s)`` (eq. 12: ``gamma = gamma_A u^2 / gamma_I``).
    n_components : int
    rtol : float
        Relative eigenvalue cut-off of ``K``.

    Returns
    -------
    eigenvalues : ndarray of shape (n_components,)
        Increasing objective values ``gamma ||f||_K^2 + f^T L f``.
    alphas : ndarray of shape (n, n_components)
        Expansion coefficients (``f = K alpha`` has zero mean and unit norm).
    embedding : ndarray of shape (n, n_components)
        ``K alpha`` at the training points.
    """
    n = K.shape[0]
    s, U = sla.eigh(0.5 * (K + K.T), check_finite=False)
    keep = s > rtol * max(s.max(), 0.0)
    s, U = s[keep], U[:, keep]
    r = s.size
    c = U.T @ np.ones(n)
    # orthonormal basis of the complement of c in R^r (a Householder reflection's columns)
    if np.linalg.norm(c) > 1e-12 * np.sqrt(n):
        Q = sla.null_space(c[None, :])
    else:  # 1 is (numerically) orthogonal to range(K): the constraint is void
        Q = np.eye(r)
    if Q.shape[1] < n_components:
        raise ValueError(f"n_components={n_components} exceeds the {Q.shape[1]} dimensions "
                         "available (numerical rank of K minus one)")
    LU = np.asarray(L @ U)
    B = U.T @ LU
    B[np.diag_indices(r)] += gamma / s
    H = Q.T @ B @ Q
    values, z = sla.eigh(0.5 * (H + H.T), subset_by_index=[0, n_components - 1],
                         check_finite=False)
    g = Q @ z
    embedding = U @ g
    # deterministic signs: the largest-magnitude entry of each embedding column positive
    idx = np.argmax(np.abs(embedding), axis=0)
    signs = np.sign(embedding[idx, np.arange(n_components)])
    signs[signs == 0] = 1.0
    g *= signs
    embedding *= signs
    alphas = U @ (g / s[:, None])
    return values, alphas, embedding


def _out_dtype(X) -> type:
    """float32 when ``X`` is float32 (scikit-learn's ``preserves_dtype``), else float64."""
    return np.float32 if getattr(X, "dtype", None) == np.float32 else np.float64


class _RegularizedSpectralBase(KernelGraphMixin, BaseEstimator):
    """Shared fit of the two unsupervised estimators."""

    def _fit_embedding(self, X, n_components: int) -> np.ndarray:
        _check_real(self.gamma_A, "gamma_A", positive=True)
        _check_real(self.gamma_I, "gamma_I", positive=True)
        self._check_kernel_graph_params()
        X = check_X(X, accept_sparse=self.kernel != "precomputed", estimator=self, reset=True,
                    scale=True)
        n = X.shape[0]
        if n < 3:
            raise ValueError(f"n_samples={n}: need at least 3 samples")
        K, L, scale = self._fit_kernel_graph(X)
        self.reg_gamma_ = float(self.gamma_A) / (float(self.gamma_I) * scale)
        values, alphas, embedding = regularized_eigenmaps(K, L, self.reg_gamma_, n_components)
        self.eigenvalues_ = values
        self.alphas_ = alphas
        return embedding

    def _project(self, X) -> np.ndarray:
        return self._validated_test_gram(X) @ self.alphas_

    def __sklearn_tags__(self):
        return self._adjust_tags(super().__sklearn_tags__())


class LaplacianEigenmaps(ClassNamePrefixFeaturesOutMixin, TransformerMixin,
                         _RegularizedSpectralBase):
    """Regularized Laplacian eigenmaps with an out-of-sample extension (section 5.4).

    The embedding coordinates are the functions ``f_k = sum_i alpha_ik K(x_i, .)`` that
    minimise ``gamma_A ||f||_K^2 + gamma_I s f^T L f`` subject to zero mean and unit norm
    on the training points, i.e. the eigenvectors of eq. 13 with the smallest
    eigenvalues (the first is the regularised spectral clustering function).  As
    ``gamma_A -> 0`` the training embedding tends to classical Laplacian eigenmaps with
    ``L``; new points are mapped by the kernel expansion (``transform``).

    Parameters
    ----------
    n_components : int, default=2
        Number of coordinates (eigenvectors).
    gamma_A : float, default=1e-6
        Ambient (RKHS) regularisation weight (``> 0``); larger values trade graph
        smoothness for RKHS smoothness (the embedding moves towards kernel PCA).
    gamma_I : float, default=1.0
        Intrinsic (graph) weight (``> 0``); only ``gamma = gamma_A / (gamma_I s)``
        matters (eq. 12: ``gamma_A u^2 / gamma_I`` with the default scale).
{kernel_graph_params}
    random_state : int, optional
        Seed of the approximate neighbour search.

    Attributes
    ----------
    embedding_ : ndarray of shape (n_train, n_components)
        ``K alpha`` at the training points (zero mean, unit-norm columns).
    alphas_ : ndarray of shape (n_train, n_components)
    eigenvalues_ : ndarray of shape (n_components,)
        Objective values ``gamma ||f||_K^2 + f^T L f`` (increasing).
    reg_gamma_ : float
        ``gamma`` of eq. 12.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from semisup import LaplacianEigenmaps
    >>> X, _ = make_moons(100, noise=0.05, random_state=0)
    >>> emb = LaplacianEigenmaps(n_components=2, gamma=10.0).fit(X)
    >>> emb.embedding_.shape, emb.transform(X[:5]).shape
    ((100, 2), (5, 2))
    """

    def __init__(self, n_components: int = 2, gamma_A: float = 1e-6, gamma_I: float = 1.0,
                 kernel: str = "rbf", gamma: float | None = None, degree: int = 3,
                 coef0: float = 1.0, graph="knn", n_neighbors: int = 6,
                 graph_weight: str = "heat", t: float | None = None,
                 graph_metric: str = "euclidean", graph_method: str = "auto",
                 laplacian: str = "unnormalized", laplacian_power: int = 1,
                 graph_scale: str = "n2", random_state: int | None = None):
        self.n_components = n_components
        self._set_kernel_graph_params(
            gamma_A=gamma_A, gamma_I=gamma_I, kernel=kernel, gamma=gamma, degree=degree,
            coef0=coef0, graph=graph, n_neighbors=n_neighbors, graph_weight=graph_weight, t=t,
            graph_metric=graph_metric, graph_method=graph_method, laplacian=laplacian,
            laplacian_power=laplacian_power, graph_scale=graph_scale, random_state=random_state)

    def fit(self, X, y=None) -> LaplacianEigenmaps:
        """Compute the embedding of ``X`` (``y`` is ignored).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows.
        y : None
            Ignored (the method is unsupervised); present for the scikit-learn API.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        k = _check_int(self.n_components, "n_components")
        self.embedding_ = self._fit_embedding(X, k)
        return self

    def fit_transform(self, X, y=None) -> np.ndarray:
        """Fit and return ``embedding_`` (float32 for float32 input).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows.
        y : None
            Ignored (the method is unsupervised); present for the scikit-learn API.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            The training rows in the learned representation.
        """
        return self.fit(X).embedding_.astype(_out_dtype(X), copy=False)

    def transform(self, X) -> np.ndarray:
        """Embed new rows: ``f_k(x) = sum_i alpha_ik K(x_i, x)`` (float32 for float32 input).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            The rows in the learned representation.
        """
        check_is_fitted(self, "alphas_")
        return self._project(X).astype(_out_dtype(X), copy=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # computed in float64 (eigensolver), returned in the input's float precision
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    @property
    def _n_features_out(self) -> int:
        """Output names ``laplacianeigenmaps0, ...`` (``get_feature_names_out``, ``set_output``)."""
        return self.alphas_.shape[1]


class RegularizedSpectralClustering(ClusterMixin, _RegularizedSpectralBase):
    """Regularized spectral clustering with out-of-sample assignment (section 5.4).

    Two clusters: the sign of the first eigenfunction of eq. 13 (it has zero mean on the
    training points), as in the paper.  More clusters: k-means on the first
    ``n_clusters - 1`` eigenfunctions (the constant function is excluded by the
    constraint), new points assigned to the nearest k-means centre of their embedding.

    Parameters
    ----------
    n_clusters : int, default=2
        Number of clusters (1 puts every point in one cluster).
    gamma_A : float, default=1e-6
        Ambient regularisation weight (``> 0``); larger values give smoother, more
        kernel-PCA-like clusterings.
    gamma_I : float, default=1.0
        Intrinsic weight (``> 0``).
{kernel_graph_params}
    random_state : int, optional
        Seed of k-means and of the approximate neighbour search.

    Attributes
    ----------
    labels_ : ndarray of shape (n_train,)
    embedding_ : ndarray of shape (n_train, max(1, n_clusters - 1))
    alphas_ : ndarray of shape (n_train, max(1, n_clusters - 1))
    eigenvalues_ : ndarray
    cluster_centers_ : ndarray or None
        k-means centres in the embedding (``None`` for two clusters).
    reg_gamma_ : float

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from semisup import RegularizedSpectralClustering
    >>> X, y_true = make_moons(100, noise=0.05, random_state=0)
    >>> model = RegularizedSpectralClustering(n_clusters=2, gamma=10.0, random_state=0).fit(X)
    >>> agree = float((model.labels_ == y_true).mean())
    >>> max(agree, 1 - agree)                     # cluster ids are arbitrary
    1.0
    >>> model.predict(X[:3]).shape
    (3,)
    """

    def __init__(self, n_clusters: int = 2, gamma_A: float = 1e-6, gamma_I: float = 1.0,
                 kernel: str = "rbf", gamma: float | None = None, degree: int = 3,
                 coef0: float = 1.0, graph="knn", n_neighbors: int = 6,
                 graph_weight: str = "heat", t: float | None = None,
                 graph_metric: str = "euclidean", graph_method: str = "auto",
                 laplacian: str = "unnormalized", laplacian_power: int = 1,
                 graph_scale: str = "n2", random_state: int | None = None):
        self.n_clusters = n_clusters
        self._set_kernel_graph_params(
            gamma_A=gamma_A, gamma_I=gamma_I, kernel=kernel, gamma=gamma, degree=degree,
            coef0=coef0, graph=graph, n_neighbors=n_neighbors, graph_weight=graph_weight, t=t,
            graph_metric=graph_metric, graph_method=graph_method, laplacian=laplacian,
            laplacian_power=laplacian_power, graph_scale=graph_scale, random_state=random_state)

    def fit(self, X, y=None) -> RegularizedSpectralClustering:
        """Cluster ``X`` (``y`` is ignored).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows.
        y : None
            Ignored (the method is unsupervised); present for the scikit-learn API.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        k = _check_int(self.n_clusters, "n_clusters")
        if hasattr(X, "shape") and len(X.shape) == 2 and k > X.shape[0] >= 3:
            raise ValueError(f"n_clusters={k} exceeds n_samples={X.shape[0]}: lower n_clusters")
        self.embedding_ = self._fit_embedding(X, max(1, k - 1))
        if k == 1:
            self.cluster_centers_ = self.embedding_.mean(axis=0, keepdims=True)
        elif k == 2:
            self.cluster_centers_ = None
        else:
            km = KMeans(n_clusters=k, n_init=10, random_state=self.random_state)
            km.fit(self.embedding_)
            self.cluster_centers_ = km.cluster_centers_
        self.labels_ = self._assign(self.embedding_)
        return self

    def _assign(self, embedding: np.ndarray) -> np.ndarray:
        if self.cluster_centers_ is None:
            return (embedding[:, 0] > 0).astype(np.int64)
        d = ((embedding[:, None, :] - self.cluster_centers_[None]) ** 2).sum(-1)
        return np.argmin(d, axis=1).astype(np.int64)

    def predict(self, X) -> np.ndarray:
        """Cluster of new rows through the out-of-sample extension ``f(x)``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        check_is_fitted(self, "alphas_")
        return self._assign(self._project(X))


LaplacianEigenmaps.__doc__ = LaplacianEigenmaps.__doc__.replace(
    "{kernel_graph_params}", KERNEL_GRAPH_PARAMS)
RegularizedSpectralClustering.__doc__ = RegularizedSpectralClustering.__doc__.replace(
    "{kernel_graph_params}", KERNEL_GRAPH_PARAMS)
