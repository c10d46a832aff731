"""Graph Laplacians: ``L = D - W``, ``I - D^-1/2 W D^-1/2``, iterated ``L^p``; sparse."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

KINDS = ("unnormalized", "normalized")


def laplacian(W, kind: str = "unnormalized", power: int = 1) -> sp.csr_matrix:
    """The graph Laplacian of a symmetric adjacency matrix ``W``.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric non-negative weights.
    kind : {'unnormalized', 'normalized'}
        ``L = D - W`` (manifold regularization, eq. 6) or ``I - D^-1/2 W D^-1/2``.  For the
        normalised Laplacian an isolated vertex has a zero row (not ``1``) so that the graph
        term leaves it free, as the unnormalised one does.
    power : int
        ``p`` of the iterated Laplacian ``L^p`` (``p >= 1``).

    Returns
    -------
    csr_matrix
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if not isinstance(power, (int, np.integer)) or power < 1:
        raise ValueError(f"power must be an integer >= 1, got {power!r}")
    W = sp.csr_matrix(W, dtype=np.float64)
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be square, got shape {W.shape}")
    degree = np.asarray(W.sum(axis=1)).ravel()
    if kind == "unnormalized":
        L = sp.diags(degree) - W
    else:
        with np.errstate(divide="ignore"):
            s = np.where(degree > 0, 1.0 / np.sqrt(degree), 0.0)
        S = sp.diags(s)
        L = sp.diags((degree > 0).astype(float)) - S @ W @ S
    L = sp.csr_matrix(L)
    out = L
    for _ in range(int(power) - 1):
        out = sp.csr_matrix(out @ L)
    out.eliminate_zeros()
    return out


def graph_scale(W, n: int, how: str = "n2") -> float:
    """The normalising coefficient of the graph term (manifold regularization, eq. 6).

    ``n2``: ``1 / (l + u)^2``, the scale of the empirical Laplace operator; ``sum``:
    ``1 / sum_ij W_ij``, the paper's alternative for sparse graphs; ``none``: 1.
    """
    if how == "n2":
        return 1.0 / float(n) ** 2
    if how == "sum":
        total = float(W.sum())
        return 1.0 / total if total > 0 else 1.0
    if how == "none":
        return 1.0
    raise ValueError(f"scale must be 'n2', 'sum' or 'none', got {how!r}")
