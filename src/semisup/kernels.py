"""Kernel functions ``K(x, y)`` for the RKHS methods (manifold regularization, PVM).

Thin, validated wrappers around :func:`sklearn.metrics.pairwise_kernels`, plus the
data-driven default width used by the papers.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils import check_random_state

KERNELS = ("rbf", "poly", "linear", "precomputed")


def mean_squared_distance(X, n_pairs: int = 2000, random_state=0) -> float:
    """Mean squared Euclidean distance between random pairs of rows (an O(n_pairs) estimate)."""
    rng = check_random_state(random_state)
    n = X.shape[0]
    if n < 2:
        return 1.0
    i = rng.randint(0, n, size=n_pairs)
    j = rng.randint(0, n, size=n_pairs)
    diff = X[i] - X[j]
    sq = diff.multiply(diff).sum(axis=1) if hasattr(diff, "multiply") else (diff ** 2).sum(1)
    value = float(np.mean(np.asarray(sq)))
    return value if value > 0 else 1.0


def default_gamma(X, random_state=0) -> float:
    """RBF ``gamma`` (in ``exp(-gamma ||x - y||^2)``) as the reciprocal mean squared distance.

    Raises
    ------
    ValueError
        When the width is degenerate (``0`` or ``inf``: distances overflow or underflow
        float64), saying to rescale ``X`` or to pass ``gamma``.
    """
    with np.errstate(over="ignore", divide="ignore"):
        gamma = 1.0 / mean_squared_distance(X, random_state=random_state)
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"the default kernel width gamma = 1 / (mean squared distance between "
                         f"rows) is {gamma!r}: the scale of X is extreme; rescale X (e.g. "
                         "sklearn.preprocessing.StandardScaler) or pass gamma explicitly")
    return gamma


def scale_gamma(X) -> float:
    """RBF ``gamma = 1 / (n_features * Var(X))``: scikit-learn's ``SVC(gamma="scale")`` width.

    ``Var(X)`` is the variance of all entries of ``X`` (dense or sparse, zeros included), as
    scikit-learn computes it, so a method given this width works with the same kernel as
    the ``SVC()`` it is compared with.  Every entry equal (no spread): 1, as scikit-learn.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The training rows.

    Returns
    -------
    float
        The RBF ``gamma`` in ``exp(-gamma ||x - y||^2)``.

    Raises
    ------
    ValueError
        When the scale of ``X`` overflows or underflows float64.
    """
    import scipy.sparse as sp

    if sp.issparse(X):
        n = X.shape[0] * X.shape[1]
        mean = float(X.sum()) / n
        var = float(X.multiply(X).sum()) / n - mean ** 2
    else:
        var = float(np.var(X))
    with np.errstate(over="ignore", divide="ignore"):
        gamma = 1.0 / (X.shape[1] * var) if var != 0 else 1.0
    if not (np.isfinite(gamma) and gamma > 0):
        raise ValueError(f"the kernel width gamma='scale' = 1 / (n_features * Var(X)) is "
                         f"{gamma!r}: the scale of X is extreme; rescale X (e.g. "
                         "sklearn.preprocessing.StandardScaler) or pass gamma explicitly")
    return gamma


def kernel_matrix(X, Y=None, kernel: str = "rbf", gamma: float | None = None, degree: int = 3,
                  coef0: float = 1.0) -> np.ndarray:
    """Gram matrix ``K(X, Y)``.

    Parameters
    ----------
    X, Y : ndarray or sparse matrix
        ``Y`` defaults to ``X``.  With ``kernel='precomputed'`` ``X`` is the kernel matrix.
    kernel : {'rbf', 'poly', 'linear', 'precomputed'}
        ``rbf``: ``exp(-gamma ||x - y||^2)``; ``poly``: ``(gamma <x, y> + coef0)^degree``;
        ``linear``: ``<x, y>``.
    gamma : float, optional
        Required for ``rbf`` and ``poly`` (see :func:`default_gamma`).

    Returns
    -------
    ndarray
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    if kernel == "precomputed":
        K = np.asarray(X, dtype=np.float64)
        if Y is not None:
            raise ValueError("with kernel='precomputed' pass the kernel matrix as X only")
        return K
    params = {}
    if kernel in ("rbf", "poly"):
        if gamma is None or not gamma > 0:
            raise ValueError(f"gamma must be > 0 for kernel={kernel!r}, got {gamma!r}")
        params["gamma"] = float(gamma)
    if kernel == "poly":
        params.update(degree=degree, coef0=coef0)
    if Y is None and not hasattr(X, "tocsr"):
        # X @ X.T on one buffer goes to BLAS syrk, which crashed (segfault) in the bundled
        # OpenBLAS for a 20,000 x 784 matrix; a second buffer takes the gemm path
        Y = np.array(X, dtype=np.float64, copy=True)
    with np.errstate(over="ignore", invalid="ignore"):
        K = np.asarray(pairwise_kernels(X, Y, metric=kernel, **params), dtype=np.float64)
    if not np.all(np.isfinite(K)):
        raise ValueError(f"the {kernel!r} kernel matrix has non-finite entries (parameters "
                         f"{params}): X is too large for this kernel; rescale X (e.g. "
                         "sklearn.preprocessing.StandardScaler) or lower gamma / degree")
    return K


def kernel_matrix_blocks(X, Y, block_rows: int, kernel: str = "rbf", gamma: float | None = None,
                         degree: int = 3, coef0: float = 1.0) -> np.ndarray:
    """``K(X, Y)`` computed ``block_rows`` rows of ``X`` at a time with :func:`kernel_matrix`.

    Blocks bound the temporaries of the pairwise computation to ``O(block_rows n_Y)``
    beyond the output itself.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    Y : ndarray or sparse matrix of shape (n_Y, d)
    block_rows : int
        Rows of ``X`` per block (``>= 1``).
    kernel, gamma, degree, coef0
        As :func:`kernel_matrix` (not ``'precomputed'``).

    Returns
    -------
    ndarray of shape (n, n_Y)
    """
    n = X.shape[0]
    K = np.empty((n, Y.shape[0]), dtype=np.float64)
    for start in range(0, n, block_rows):
        stop = min(n, start + block_rows)
        K[start:stop] = kernel_matrix(X[start:stop], Y, kernel=kernel, gamma=gamma,
                                      degree=degree, coef0=coef0)
    return K
