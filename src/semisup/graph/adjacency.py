"""The data adjacency graph ``W``: the one graph builder of the library.

Step 1 of the manifold regularization algorithm (Belkin, Niyogi & Sindhwani): connect
each point to its nearest neighbours (or to all points within ``epsilon``) and weight the
edges (binary, heat kernel ``exp(-||xi - xj||^2 / 4t)``, or cosine similarity).  Memory
is ``O(n k)``: the graph is sparse throughout.
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.neighbors import radius_neighbors_graph

from semisup._logging import get_logger, warn_at_caller
from semisup.graph.knn import knn_search

logger = get_logger(__name__)

WEIGHTS = ("binary", "heat", "cosine")
SYMMETRIZE = ("union", "mutual")


class GraphWarning(UserWarning):
    """The graph has isolated vertices or several connected components."""


def edge_weights(distances: np.ndarray, weight: str = "heat", t: float | None = None,
                 metric: str = "euclidean") -> tuple[np.ndarray, float | None]:
    """Weights of edges of the given lengths.

    Parameters
    ----------
    distances : ndarray
        Edge lengths (Euclidean distance, or cosine distance ``1 - cos``).
    weight : {'binary', 'heat', 'cosine'}
        ``binary``: 1; ``heat``: ``exp(-d^2 / 4t)``; ``cosine``: ``1 - d`` (the cosine
        similarity; requires ``metric='cosine'``).
    t : float, optional
        Heat-kernel width; by default ``4t`` is the mean squared edge length, so that a
        typical edge weighs ``1/e``.

    Returns
    -------
    weights : ndarray
    t : float or None
        The width used (heat kernel only).
    """
    if weight not in WEIGHTS:
        raise ValueError(f"weight must be one of {WEIGHTS}, got {weight!r}")
    if weight == "binary":
        return np.ones_like(distances), None
    if weight == "cosine":
        if metric != "cosine":
            raise ValueError("weight='cosine' needs metric='cosine'")
        return np.clip(1.0 - distances, 0.0, None), None
    d2 = distances ** 2
    if t is None:
        mean = float(d2.mean()) if d2.size else 0.0
        t = mean / 4.0 if mean > 0 else 1.0
    elif not t > 0:
        raise ValueError(f"t (heat kernel width) must be > 0, got {t!r}")
    return np.exp(-d2 / (4.0 * t)), float(t)


def _local_heat_weights(idx: np.ndarray, dist: np.ndarray, weight: str,
                        t: str) -> np.ndarray:
    """Heat weights with per-point widths: ``exp(-d_ij^2 / (sigma_i sigma_j))``.

    ``sigma_i`` is the distance from ``x_i`` to its farthest (``k``-th) neighbour, so an
    edge of that length between two points of equal density weighs ``1/e``, as a typical
    edge does under the global rule of :func:`edge_weights`; in dense regions the kernel
    narrows.  The formula is symmetric in ``i, j``, so the union symmetrisation keeps it.
    """
    if t != "local":
        raise ValueError(f"t must be a positive number, None or 'local', got {t!r}")
    if weight != "heat":
        raise ValueError(f"t='local' sets heat-kernel widths; it needs weight='heat', got "
                         f"weight={weight!r}")
    sigma = dist[:, -1]
    positive = sigma[sigma > 0]
    # a point whose k neighbours are all duplicates has sigma 0: give it the median width
    floor = float(np.median(positive)) if positive.size else 1.0
    sigma = np.where(sigma > 0, sigma, floor)
    d2 = dist ** 2
    return np.exp(-d2 / (sigma[:, None] * sigma[idx])).ravel()


def symmetrize(W: sp.csr_matrix, how: str = "union") -> sp.csr_matrix:
    """``union``: ``max(W, W^T)`` (edge if either is a neighbour of the other);
    ``mutual``: ``min(W, W^T)`` (edge only if both are)."""
    if how not in SYMMETRIZE:
        raise ValueError(f"symmetrize must be one of {SYMMETRIZE}, got {how!r}")
    WT = W.T.tocsr()
    out = W.maximum(WT) if how == "union" else W.minimum(WT)
    return sp.csr_matrix(out)


def check_graph(W: sp.csr_matrix, warn: bool = True) -> dict:
    """Connectivity diagnostics: isolated vertices and connected components.

    Isolated vertices get zero rows in the Laplacian (the graph term does not constrain
    them) and separate components are smoothed independently; both are legitimate but
    usually a sign of too small ``n_neighbors``, so a :class:`GraphWarning` says so.
    """
    degree = np.asarray(W.sum(axis=1)).ravel()
    n_isolated = int(np.count_nonzero(degree == 0))
    n_components = int(connected_components(W, directed=False)[0])
    if warn and n_isolated:
        warn_at_caller(f"graph has {n_isolated} isolated vertices (no edges): the graph term "
                       "ignores them; increase n_neighbors or epsilon", GraphWarning)
    if warn and n_components > 1:
        warn_at_caller(f"graph has {n_components} connected components: each is smoothed on "
                       "its own; increase n_neighbors to connect them if that is unintended",
                       GraphWarning)
    return {"n_isolated": n_isolated, "n_components": n_components, "degree": degree}


def adjacency_graph(X, n_neighbors: int | None = 6, epsilon: float | None = None,
                    metric: str = "euclidean", weight: str = "heat", t: float | None = None,
                    symmetrize_how: str = "union", method: str = "auto",
                    random_state: int | None = None, n_jobs: int | None = None,
                    warn: bool = True, neighbors: tuple | None = None) -> sp.csr_matrix:
    """Build the symmetric sparse adjacency matrix ``W`` of the data.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    n_neighbors : int or None
        ``k`` of the kNN graph (the papers use 6); ``None`` with ``epsilon`` set.
    epsilon : float, optional
        Radius of an epsilon-graph instead of a kNN graph.
    metric : {'euclidean', 'cosine'}
    weight : {'binary', 'heat', 'cosine'}
    t : float or 'local', optional
        Heat kernel width (chosen from the data when omitted, see :func:`edge_weights`).
        ``'local'``: per-point widths, ``exp(-d_ij^2 / (sigma_i sigma_j))`` with
        ``sigma_i`` the distance from ``x_i`` to its ``k``-th neighbour (the local scaling
        of Zelnik-Manor & Perona, 2004); kNN graphs only.
    symmetrize_how : {'union', 'mutual'}
    method : {'auto', 'exact', 'approximate'}
        Neighbour search (see :func:`semisup.graph.knn.knn_search`).
    neighbors : tuple of two ndarrays, optional
        ``(indices, distances)`` of shape ``(n, k)`` as returned by
        :func:`~semisup.graph.knn.knn_search`, to weight a search already done (an
        estimator that also needs the distances, e.g. for its heat width or an
        out-of-sample extension, searches once); ``n_neighbors`` and ``method`` are then
        ignored.

    Returns
    -------
    csr_matrix of shape (n, n)
        Symmetric, non-negative, zero diagonal.  Duplicate points are joined by edges of
        length zero (heat weight 1), never NaN.
    """
    n = X.shape[0]
    if epsilon is not None:
        if not epsilon > 0:
            raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
        D = radius_neighbors_graph(X, epsilon, mode="distance", metric=metric,
                                   include_self=False, n_jobs=n_jobs).tocsr()
        D.sort_indices()
        if isinstance(t, str):
            raise ValueError(f"t={t!r} (per-point heat widths) needs a kNN graph: give "
                             "n_neighbors instead of epsilon, or a number for t")
        # explicit zeros are edges between duplicates: keep them as stored entries
        w, _ = edge_weights(D.data, weight, t, metric)
        W = sp.csr_matrix((w, D.indices, D.indptr), shape=(n, n))
    else:
        if n_neighbors is None:
            raise ValueError("give n_neighbors (kNN graph) or epsilon (epsilon-graph)")
        if neighbors is not None:
            idx, dist = (np.asarray(a) for a in neighbors)
            if idx.shape != dist.shape or idx.ndim != 2 or idx.shape[0] != n:
                raise ValueError(f"neighbors must be (indices, distances) of shape (n, k) "
                                 f"with n = {n} rows, got shapes {idx.shape} and {dist.shape}")
        else:
            t0 = time.perf_counter()
            idx, dist = knn_search(X, n_neighbors, metric=metric, method=method,
                                   random_state=random_state, n_jobs=n_jobs)
            logger.info("%d-NN search over %d rows (%s) in %.2f s", n_neighbors, n,
                        method, time.perf_counter() - t0)
        if isinstance(t, str):
            w = _local_heat_weights(idx, dist, weight, t)
        else:
            w, _ = edge_weights(dist.ravel(), weight, t, metric)
        k = idx.shape[1]
        W = sp.csr_matrix((w, idx.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n))
    W = symmetrize(W, symmetrize_how)
    W.setdiag(0.0)
    W.eliminate_zeros()
    check_graph(W, warn=warn)
    return W
