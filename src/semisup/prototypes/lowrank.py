"""Nyström low-rank kernel graphs and their Laplacians, never forming an ``n x n`` matrix.

With landmark (prototype) points ``V`` the kernel matrix of the data is approximated as
``K ~ E W^+ E^T`` (eq. 11) with ``E = K(X, V)`` (``n x m``, eq. 12) and ``W = K(V, V)``.
The graph Laplacians built on this affinity (eqs. 13 and 14) are represented by ``E``,
``W^+`` and the approximate degrees; everything the prototype vector machine needs from them
is ``H^T S H`` (``m x m``) for ``H = E`` or a row-sparsified ``E``, computed in ``O(n m^2)``
time and ``O(n m)`` memory.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from semisup.kernels import kernel_matrix_blocks

LAPLACIANS = ("unnormalized", "normalized")

# rows per block when a computation would otherwise copy an n x m array
_BLOCK_BYTES = 64 * 2**20


def _block_rows(n_cols: int, block_size: int | None) -> int:
    if block_size is not None:
        return max(1, int(block_size))
    return max(256, _BLOCK_BYTES // (8 * max(1, n_cols)))


def prototype_kernel(X, V, gamma: float, block_size: int | None = None) -> np.ndarray:
    """``H = [K(x_i, v_j)]`` (eq. 17) for the Gaussian kernel ``exp(-gamma ||x - v||^2)``.

    Computed in row blocks so that the peak memory beyond ``H`` itself stays bounded.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    V : ndarray of shape (m, d)
        Prototypes.
    gamma : float
        Kernel parameter (``beta`` of eq. 30).
    block_size : int, optional
        Rows per block (default: about 64 MiB of kernel values per block).

    Returns
    -------
    ndarray of shape (n, m)
    """
    return kernel_matrix_blocks(X, V, _block_rows(V.shape[0], block_size), kernel="rbf",
                                gamma=gamma)


def sparsify_rows(H: np.ndarray, k: int) -> sp.csr_matrix:
    """Keep the ``k`` largest entries of each row (its nearest prototypes); CSR ``n x m``.

    The sparse label-reconstruction matrix suggested after eq. 17.
    """
    n, m = H.shape
    k = min(int(k), m)
    top = np.argpartition(H, m - k, axis=1)[:, m - k:] if k < m \
        else np.broadcast_to(np.arange(m), (n, m))
    top = np.sort(top, axis=1)
    vals = np.take_along_axis(H, top, axis=1)
    indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
    return sp.csr_matrix((vals.ravel(), top.ravel().astype(np.int32), indptr), shape=(n, m))


def weighted_cross(A, B=None, weights: np.ndarray | None = None,
                   block_size: int | None = None) -> np.ndarray:
    """``A^T diag(weights) B`` (``p x q``, dense) in ``O(n p q)`` without copying the inputs.

    ``B`` defaults to ``A`` (the weighted Gram matrix).  ``A`` and ``B`` may be dense or CSR.
    """
    same = B is None
    B = A if same else B
    if sp.issparse(A) or sp.issparse(B):
        Bw = B if weights is None else (sp.diags(weights) @ B if sp.issparse(B)
                                        else B * weights[:, None])
        out = A.T @ Bw
        out = out.toarray() if sp.issparse(out) else np.asarray(out)
    else:
        n = A.shape[0]
        out = np.zeros((A.shape[1], B.shape[1]))
        step = _block_rows(max(A.shape[1], B.shape[1]), block_size)
        for start in range(0, n, step):
            stop = min(n, start + step)
            Bb = B[start:stop]
            out += A[start:stop].T @ (Bb if weights is None else Bb * weights[start:stop, None])
    return 0.5 * (out + out.T) if same else out


def psd_eigh(A: np.ndarray, rtol: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """Eigenpairs of a symmetric positive semi-definite matrix, numerically null ones dropped.

    Eigenvalues below ``rtol`` times the largest (including the small negative ones left by
    round-off or by an indefinite approximation) are discarded, which turns inverses into
    pseudo-inverses on the numerical range of ``A``.

    Returns
    -------
    values : ndarray of shape (r,)
    vectors : ndarray of shape (m, r)
    """
    A = 0.5 * (A + A.T)
    values, vectors = np.linalg.eigh(A)
    top = values[-1] if values.size else 0.0
    keep = values > rtol * top if top > 0 else np.zeros(values.shape, dtype=bool)
    return values[keep], vectors[:, keep]


def psd_pinv(A: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Pseudo-inverse of a symmetric positive semi-definite matrix (see :func:`psd_eigh`)."""
    values, vectors = psd_eigh(A, rtol)
    return (vectors / values) @ vectors.T


def psd_solve(A: np.ndarray, B: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Minimum-norm solution of ``A X = B`` on the numerical range of a PSD ``A``."""
    values, vectors = psd_eigh(A, rtol)
    return vectors @ ((vectors.T @ B) / (values[:, None] if B.ndim == 2 else values))


class NystromLaplacian:
    """Graph Laplacian of the Nyström affinity ``K ~ E W^+ E^T``, kept in factored form.

    ``kind='unnormalized'`` is eq. (13), ``S ~ D - E W^+ E^T`` with
    ``D = diag(E W^+ E^T 1)``; ``kind='normalized'`` is eq. (14),
    ``S ~ I - D^-1/2 E W^+ E^T D^-1/2``.  Storage and every operation are ``O(n m)`` or
    ``O(n m^2)``.  As in eqs. (2)-(3) the affinity keeps its diagonal (``K(x, x) = 1``):
    the unnormalised Laplacian does not depend on it, the normalised one does (slightly)
    and then differs from that of a graph without self-loops.

    Parameters
    ----------
    E : ndarray or csr_matrix of shape (n, m)
        ``K(X, V)`` (eq. 12), possibly sparsified.
    W : ndarray of shape (m, m)
        ``K(V, V)``.
    kind : {'unnormalized', 'normalized'}
    rtol : float, default=1e-10
        Relative eigenvalue cut-off of the pseudo-inverse ``W^+``.

    Attributes
    ----------
    degree : ndarray of shape (n,)
        Approximate degrees ``E W^+ E^T 1``.  A Nyström affinity may have a few slightly
        negative entries; for the normalised Laplacian degrees are floored at ``1e-12``
        times the largest so that ``D^-1/2`` exists.
    W_pinv : ndarray of shape (m, m)
    """

    def __init__(self, E, W: np.ndarray, kind: str = "normalized", rtol: float = 1e-10):
        if kind not in LAPLACIANS:
            raise ValueError(f"laplacian must be one of {LAPLACIANS}, got {kind!r}")
        if W.shape[0] != W.shape[1] or W.shape[0] != E.shape[1]:
            raise ValueError(f"W must be m x m with m = E.shape[1] = {E.shape[1]}, got "
                             f"{W.shape}")
        self.E = E
        self.kind = kind
        self.W_pinv = psd_pinv(W, rtol)
        col_sums = np.asarray(E.sum(axis=0)).ravel()
        self.degree = np.asarray(E @ (self.W_pinv @ col_sums)).ravel()
        if kind == "normalized":
            floor = 1e-12 * max(float(self.degree.max()), 1e-300)
            self._d_isqrt = 1.0 / np.sqrt(np.maximum(self.degree, floor))

    @property
    def n(self) -> int:
        return self.E.shape[0]

    def matvec(self, f: np.ndarray) -> np.ndarray:
        """``S f`` in ``O(n m)``."""
        E, Wp = self.E, self.W_pinv
        if self.kind == "unnormalized":
            return self.degree * f - E @ (Wp @ (E.T @ f))
        s = self._d_isqrt
        return f - s * (E @ (Wp @ (E.T @ (s * f))))

    def project(self, B=None, gram: np.ndarray | None = None) -> np.ndarray:
        """``B^T S B`` (``r x r``) in ``O(n m r)`` time and ``O(n m)`` memory.

        Parameters
        ----------
        B : ndarray or csr_matrix of shape (n, r), optional
            Defaults to ``E`` (the PVM case ``H = E``); a sparsified ``H`` otherwise.
        gram : ndarray of shape (r, r), optional
            ``B^T B`` when already computed (saves one pass).

        Notes
        -----
        Unnormalised: ``B^T D B - (B^T E) W^+ (E^T B)``; normalised:
        ``B^T B - (B^T D^-1/2 E) W^+ (E^T D^-1/2 B)`` (Section IV-A1).
        """
        E, Wp = self.E, self.W_pinv
        if B is None:
            B = E
        if self.kind == "unnormalized":
            C = weighted_cross(B, E) if B is not E else \
                (weighted_cross(E) if gram is None else gram)
            out = weighted_cross(B, weights=self.degree) - C @ Wp @ C.T
        else:
            G = weighted_cross(B) if gram is None else gram
            C = weighted_cross(B, E, self._d_isqrt) if B is not E else \
                weighted_cross(E, weights=self._d_isqrt)
            out = G - C @ Wp @ C.T
        return 0.5 * (out + out.T)

    def normalized_affinity_factor(self, rtol: float = 1e-10) -> np.ndarray:
        """``G`` (``n x r``) with ``G G^T = D^-1/2 E W^+ E^T D^-1/2``, the normalised affinity.

        Used by the Nyström label-spreading baseline (Woodbury identity on ``I - a G G^T``).
        """
        if self.kind != "normalized":
            raise ValueError("normalized_affinity_factor needs kind='normalized'")
        values, vectors = psd_eigh(self.W_pinv, rtol)
        B = vectors * np.sqrt(values)
        EB = np.asarray(self.E @ B)
        return self._d_isqrt[:, None] * EB

    def to_dense(self) -> np.ndarray:
        """The ``n x n`` matrix (for tests on small problems only)."""
        E = self.E.toarray() if sp.issparse(self.E) else self.E
        K = E @ self.W_pinv @ E.T
        if self.kind == "unnormalized":
            return np.diag(self.degree) - K
        s = self._d_isqrt
        return np.eye(self.n) - s[:, None] * K * s[None, :]


def check_n_nearest(n_nearest, name: str = "n_nearest_prototypes") -> int | None:
    """Validate an optional positive integer."""
    if n_nearest is None:
        return None
    if not isinstance(n_nearest, numbers.Integral) or isinstance(n_nearest, bool) \
            or n_nearest < 1:
        raise ValueError(f"{name} must be None or a positive integer, got {n_nearest!r}")
    return int(n_nearest)
