"""Regularisers as symmetric positive (semi-)definite operators ``R``.

The Newton systems of every linear method in the library have the form
``[R + X_j^T C_j X_j] w = X_j^T C_j Y_j``; the solvers only need ``R p`` and
quadratic forms, so SVMlin's ``lambda I`` and the graph-regularised operators of
linear manifold regularization plug into the same CGLS and line search.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


class Ridge:
    """``R = lam * I``: the squared Euclidean norm ``(lam/2) ||w||^2`` (bias included, as SVMlin).

    With ``free`` the weight of that index is left out of the norm: the bias of
    scikit-learn's ``LogisticRegression``, which is not shrunk towards zero.

    Parameters
    ----------
    lam : float
        Regularisation strength ``lambda`` (eq. 1 of the SVMlin paper), ``>= 0``.
    free : int or None, default=None
        Index of an unregularised weight (typically the last one, the bias), or ``None``.
    """

    def __init__(self, lam: float, free: int | None = None):
        self.lam = float(lam)
        self.free = None if free is None else int(free)

    @classmethod
    def with_bias(cls, lam: float, n_weights: int, fit_intercept: bool,
                  penalize_intercept: bool) -> Ridge:
        """The ridge of a linear model whose last weight is the bias (when
        ``fit_intercept``): in the norm with ``penalize_intercept`` (SVMlin), free otherwise."""
        free = n_weights - 1 if fit_intercept and not penalize_intercept else None
        return cls(lam, free=free)

    def matvec(self, p: np.ndarray) -> np.ndarray:
        """``R p``."""
        out = self.lam * p
        if self.free is not None:
            out[self.free] = 0.0
        return out

    def value(self, w: np.ndarray) -> float:
        """``(1/2) w^T R w``."""
        sq = float(w @ w)
        if self.free is not None:
            sq -= float(w[self.free]) ** 2
        return 0.5 * self.lam * sq

    def diagonal(self, n: int) -> np.ndarray:
        """``diag(R)`` (for Jacobi preconditioning)."""
        out = np.full(n, self.lam)
        if self.free is not None:
            out[self.free] = 0.0
        return out


class GraphRidge:
    """``R = lam I + mu X^T L^p X``: ridge plus the graph (intrinsic) regulariser.

    The regulariser of linear manifold regularization (Sindhwani, Niyogi, Belkin &
    Keerthi 2005, eq. 2-3): ``(1/2) w^T R w = (lam/2)||w||^2 + (mu/2) (Xw)^T L^p (Xw)``.
    ``R`` is never formed: ``R p`` costs one product with ``X``, ``p`` with the sparse
    ``L`` and one with ``X^T``, i.e. ``O(nnz(X) + p nnz(L))``.

    Parameters
    ----------
    lam : float
        Ridge strength (the bias, as one more weight, is included as in SVMlin).
    mu : float
        Graph strength.
    design : Design
        All rows (labeled and unlabeled) of the data, with the same intercept column as
        the loss operator.
    L : sparse matrix of shape (n, n)
        Graph Laplacian over the rows of ``design``.
    power : int
        ``p`` of the iterated Laplacian.
    """

    def __init__(self, lam: float, mu: float, design, L, power: int = 1):
        self.lam = float(lam)
        self.mu = float(mu)
        self.design = design
        self.L = L.tocsr()
        self.power = int(power)

    def graph_outputs(self, p: np.ndarray) -> np.ndarray:
        """``L^p X p``."""
        z = self.design.matvec(p)
        for _ in range(self.power):
            z = self.L @ z
        return z

    def matvec(self, p: np.ndarray) -> np.ndarray:
        """``R p``."""
        out = self.lam * p
        if self.mu:
            out += self.mu * self.design.rmatvec(self.graph_outputs(p))
        return out

    def value(self, w: np.ndarray) -> float:
        """``(1/2) w^T R w``."""
        return 0.5 * float(w @ self.matvec(w))

    def diagonal(self, n: int) -> np.ndarray:
        """A positive lower bound of ``diag(R)``: ``lam`` (the graph part is left out, its
        exact diagonal would cost a product per weight)."""
        return np.full(n, self.lam)

    def dense(self, block_size: int = 20_000) -> np.ndarray:
        """``R`` as a dense ``d x d`` matrix, for the direct solvers when ``d`` is small.

        ``X^T L^p X`` is accumulated over blocks of rows, ``sum_b X_b^T (L^p X)_b``, so the
        extra memory is one copy of ``X`` plus a block.
        """
        Xa = self.design.materialize()
        d = Xa.shape[1]
        R = np.zeros((d, d))
        if self.mu:
            Lp = self.L
            for _ in range(self.power - 1):
                Lp = (Lp @ self.L).tocsr()
            for start in range(0, Xa.shape[0], block_size):
                stop = min(start + block_size, Xa.shape[0])
                LX = Lp[start:stop] @ Xa
                block = Xa[start:stop].T @ LX
                R += block.toarray() if sp.issparse(block) else np.asarray(block)
            R = self.mu * 0.5 * (R + R.T)
        R[np.diag_indices(d)] += self.lam
        return R
