"""Prototype selection for the prototype vector machine (Zhang, Kwok & Parvin).

With the Gaussian kernel, the low-rank-approximation prototypes (Section III-A) and the
label-reconstruction prototypes (Section III-B, eqs. 19-21) are both the k-means centres of
the labeled and unlabeled data, found with a small fixed number of Lloyd iterations (about
five) so that the cost stays linear in ``n``.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans, MiniBatchKMeans, kmeans_plusplus
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

METHODS = ("kmeans", "minibatch", "random")
# sparse inputs are clustered on a dense copy when it takes at most this much memory
_DENSE_BYTES = 256 * 2**20


def default_n_prototypes(n_samples: int) -> int:
    """The paper's default number of prototypes (Section V-B1).

    ``m = 0.1 n`` for ``n <= 3000`` and ``m = 200`` otherwise; at least 2 and at most ``n``.
    """
    n = int(n_samples)
    m = int(round(0.1 * n)) if n <= 3000 else 200
    return max(1, min(n, max(2, m)))


def resolve_n_prototypes(n_prototypes, n_samples: int) -> int:
    """Validate ``n_prototypes`` ('auto' or an integer in ``1..n_samples``)."""
    if isinstance(n_prototypes, str):
        if n_prototypes != "auto":
            raise ValueError(f"n_prototypes must be 'auto' or a positive integer, got "
                             f"{n_prototypes!r}")
        return default_n_prototypes(n_samples)
    if not isinstance(n_prototypes, numbers.Integral) or isinstance(n_prototypes, bool) \
            or n_prototypes < 1:
        raise ValueError(f"n_prototypes must be 'auto' or a positive integer, got "
                         f"{n_prototypes!r}")
    if n_prototypes > n_samples:
        raise ValueError(f"n_prototypes={n_prototypes} exceeds the number of rows of X "
                         f"({n_samples}); pass at most {n_samples} or 'auto'")
    return int(n_prototypes)


def _seeds(X, m: int, rng: np.random.RandomState) -> np.ndarray:
    """k-means++ seeds drawn from a random subsample of ``max(1000, 10 m)`` rows.

    Seeding costs ``O(s m d log m)`` for ``s`` sampled rows, more than the five Lloyd
    iterations over all rows once ``s`` grows large, and those iterations then move the
    centres anyway; a small dense subsample also avoids scikit-learn's slow k-means++ on
    sparse matrices.
    """
    n = X.shape[0]
    size = min(n, max(1000, 10 * m))
    rows = np.sort(rng.choice(n, size=size, replace=False)) if size < n else np.arange(n)
    S = X[rows]
    S = S.toarray() if sp.issparse(S) else np.asarray(S)
    centers, _ = kmeans_plusplus(S, m, random_state=rng.randint(np.iinfo(np.int32).max))
    return centers


def select_prototypes(X, n_prototypes: int, method: str = "kmeans", max_iter: int = 5,
                      batch_size: int = 4096, random_state=None) -> np.ndarray:
    """Prototypes of the rows of ``X`` (labeled and unlabeled together).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    n_prototypes : int
        ``m``.
    method : {'kmeans', 'minibatch', 'random'}
        ``kmeans``: :class:`sklearn.cluster.KMeans` (one run; k-means++ seeds drawn from a
        subsample of ``max(1000, 10 m)`` rows) stopped after ``max_iter`` Lloyd iterations,
        the paper's choice; ``minibatch``:
        :class:`sklearn.cluster.MiniBatchKMeans` with ``max_iter`` passes over the data (for
        very large ``n``); ``random``: a uniform sample of rows (the classical Nyström choice,
        used by the Nyström-LGC baseline).
    max_iter : int, default=5
        Lloyd iterations (or mini-batch epochs).  Convergence is not required: the paper
        fixes a small count to keep the cost ``O(n d m)``.
    batch_size : int, default=4096
        Mini-batch size for ``method='minibatch'``.
    random_state : int, RandomState or None

    Returns
    -------
    ndarray of shape (m, d)
        Dense prototype coordinates.
    """
    if method not in METHODS:
        raise ValueError(f"prototypes must be one of {METHODS} or an array of prototypes, got "
                         f"{method!r}")
    if not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"kmeans_max_iter must be a positive integer, got {max_iter!r}")
    n = X.shape[0]
    m = resolve_n_prototypes(n_prototypes, n)
    rng = check_random_state(random_state)
    if sp.issparse(X) and method != "random":
        if X.shape[0] * X.shape[1] * 8 <= _DENSE_BYTES:
            # scikit-learn's Lloyd iterations are about twice as fast on a dense copy
            X = X.toarray()
        elif X.indices.dtype != np.int32 and X.nnz < np.iinfo(np.int32).max:
            # scikit-learn's k-means only takes 32-bit sparse indices (svmlight gives 64)
            X = sp.csr_matrix(X)
            X.indices = X.indices.astype(np.int32)
            X.indptr = X.indptr.astype(np.int32)
    if method == "random":
        idx = np.sort(rng.choice(n, size=m, replace=False))
        V = X[idx]
        return np.asarray(V.toarray() if sp.issparse(V) else V, dtype=np.float64)
    seed = rng.randint(np.iinfo(np.int32).max)
    if method == "kmeans":
        km = KMeans(n_clusters=m, init=_seeds(X, m, rng), n_init=1, max_iter=int(max_iter),
                    tol=0.0, random_state=seed)
    else:
        km = MiniBatchKMeans(n_clusters=m, init=_seeds(X, m, rng), n_init=1, max_iter=int(max_iter),
                             batch_size=int(batch_size), random_state=seed,
                             max_no_improvement=None, tol=0.0)
    with warnings.catch_warnings():
        # stopping after a few iterations is deliberate; duplicate points (fewer distinct
        # points than m) only give duplicated prototypes, which the pseudo-inverses absorb
        warnings.simplefilter("ignore", ConvergenceWarning)
        km.fit(X)
    return np.ascontiguousarray(km.cluster_centers_, dtype=np.float64)
