"""Nearest-neighbour search: exact (blocked, memory-bounded) and approximate (NN-descent).

Both return, for every row, the ``n_neighbors`` nearest *other* rows and their
distances; the graph builder in :mod:`semisup.graph.adjacency` turns them into weights.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.neighbors import NearestNeighbors

from semisup._accel import import_numba

METRICS = ("euclidean", "cosine")
# above this many rows 'auto' switches from exact to approximate search
APPROXIMATE_FROM = 20_000


def _drop_self(idx: np.ndarray, dist: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Remove each row's own index from its ``k + 1`` neighbours (or the farthest if absent).

    With duplicate points the row itself need not come first, so it is removed by index.
    """
    n = idx.shape[0]
    is_self = idx == np.arange(n)[:, None]
    missing = ~is_self.any(axis=1)
    is_self[missing, -1] = True
    keep = ~is_self
    # a row may list itself twice (approximate search): keep exactly k entries
    first_k = np.cumsum(keep, axis=1) <= k
    keep &= first_k
    return idx[keep].reshape(n, k), dist[keep].reshape(n, k)


def knn_search(X, n_neighbors: int = 6, metric: str = "euclidean", method: str = "auto",
               random_state: int | None = None, n_jobs: int | None = None,
               verbose: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_neighbors`` nearest neighbours of every row of ``X`` among the other rows.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    n_neighbors : int
        ``k``; must be below ``n``.
    metric : {'euclidean', 'cosine'}
    method : {'auto', 'exact', 'approximate'}
        ``exact`` is scikit-learn's brute-force / tree search, chunked so that memory
        stays bounded (never an ``n x n`` matrix); ``approximate`` is NN-descent
        (pynndescent); ``auto`` picks exact below 20,000 rows.
    random_state : int, optional
        Seed of the approximate search.
    n_jobs : int, optional
        Threads for the exact search.

    Returns
    -------
    indices : ndarray of int of shape (n, k)
    distances : ndarray of shape (n, k)
    """
    n = X.shape[0]
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    if not isinstance(n_neighbors, (int, np.integer)) or not 1 <= n_neighbors < n:
        raise ValueError(f"n_neighbors must be an integer in [1, n_samples - 1] = [1, {n - 1}], "
                         f"got {n_neighbors!r}")
    if method not in ("auto", "exact", "approximate"):
        raise ValueError(f"method must be 'auto', 'exact' or 'approximate', got {method!r}")
    if method == "auto":
        method = "approximate" if n >= APPROXIMATE_FROM else "exact"
    k = int(n_neighbors)
    if method == "exact":
        algorithm = "brute" if sp.issparse(X) or metric == "cosine" or X.shape[1] > 15 \
            else "auto"
        nn = NearestNeighbors(n_neighbors=k + 1, metric=metric, algorithm=algorithm,
                              n_jobs=n_jobs).fit(X)
        dist, idx = nn.kneighbors(X)
    else:
        import_numba()  # pynndescent runs on numba: its threads should not spin either
        import pynndescent

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # pynndescent's sparse notices
            index = pynndescent.NNDescent(X, n_neighbors=k + 1, metric=metric,
                                          random_state=random_state, verbose=verbose,
                                          n_jobs=n_jobs, compressed=True)
        idx, dist = index.neighbor_graph
    return _drop_self(np.asarray(idx, dtype=np.int64), np.asarray(dist, dtype=np.float64), k)
