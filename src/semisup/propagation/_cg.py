"""Conjugate gradients for a block of right-hand sides ``A X = B`` (``A`` SPD, ``B`` n x c).

Label propagation solves one system per class with the same matrix.  Running the ``c``
conjugate-gradient recurrences side by side lets every iteration use one sparse
matrix-block product (the graph is read once for all classes) instead of ``c`` mat-vecs;
each column keeps its own step lengths, so column ``j`` of the result is exactly what
:func:`semisup.solvers.pcg.pcg` would return for ``b = B[:, j]``.  A column stops moving once
its relative residual reaches ``tol``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from semisup._logging import get_logger, progress

logger = get_logger(__name__)


@dataclass
class BlockCGResult:
    """Solution of :func:`block_pcg`.

    Attributes
    ----------
    X : ndarray of shape (n, c)
    n_iter : int
        Iterations (one block product each).
    converged : bool
        Every column reached ``tol``.
    residual : ndarray of shape (c,)
        Final ``||B_j - A X_j|| / ||B_j||`` per column.
    history : list of float
        Largest relative residual over the columns after each iteration.
    """

    X: np.ndarray
    n_iter: int
    converged: bool
    residual: np.ndarray
    history: list = field(default_factory=list)


def block_pcg(matmat: Callable[[np.ndarray], np.ndarray], B: np.ndarray,
              inv_diag: np.ndarray | None = None, X0: np.ndarray | None = None,
              tol: float = 1e-6, max_iter: int = 1000, verbose=0) -> BlockCGResult:
    """Solve ``A X = B`` column by column by (Jacobi-)preconditioned conjugate gradients.

    Parameters
    ----------
    matmat : callable
        ``P -> A P`` for a block ``P`` of shape (n, c); ``A`` symmetric positive definite.
    B : ndarray of shape (n, c)
    inv_diag : ndarray of shape (n,), optional
        ``1 / diag(M)`` of a diagonal preconditioner (Jacobi: ``M = diag(A)``).
    X0 : ndarray of shape (n, c), optional
        Starting point (warm start); zero when omitted.
    tol : float
        Stop column ``j`` when ``||B_j - A X_j|| <= tol ||B_j||``.
    max_iter : int
    verbose : int
        Progress bar over the iterations.

    Returns
    -------
    BlockCGResult

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[4.0, 1.0], [1.0, 3.0]])
    >>> res = block_pcg(lambda P: A @ P, np.eye(2), tol=1e-12)
    >>> bool(np.allclose(res.X, np.linalg.inv(A)))
    True
    """
    B = np.ascontiguousarray(B, dtype=np.float64)
    if B.ndim != 2:
        raise ValueError(f"B must be 2-D (n, c), got shape {B.shape}")
    if X0 is None:
        X = np.zeros_like(B)
        R = B.copy()
    else:
        X = np.array(X0, dtype=np.float64, order="C", copy=True)
        R = B - matmat(X)
    b_norm = np.linalg.norm(B, axis=0)
    b_norm[b_norm == 0] = 1.0
    if inv_diag is not None:
        scale = np.asarray(inv_diag, dtype=np.float64)[:, None]
        Z = R * scale
    else:
        Z = R
    P = Z.copy()
    rz = np.einsum("ij,ij->j", R, Z)
    res = np.sqrt(np.einsum("ij,ij->j", R, R)) / b_norm
    history = [float(res.max(initial=0.0))]
    it = 0
    # a column whose search direction lost its curvature (round-off at convergence, or an
    # A that is not positive definite) stops where it is, with its residual
    stalled = np.zeros(B.shape[1], dtype=bool)
    tmp = np.empty_like(B)
    # the block updates run in place: at a million rows each block is 80 MB per 10 classes,
    # and the vector passes cost as much as the sparse product
    with progress(max_iter, "block CG", verbose, unit="it") as bar:
        while it < max_iter and ((res > tol) & ~stalled).any():
            it += 1
            active = (res > tol) & ~stalled
            AP = matmat(P)
            curv = np.einsum("ij,ij->j", P, AP)
            ok = active & (curv > 0)
            stalled |= active & ~ok
            step = np.divide(rz, curv, out=np.zeros_like(rz), where=ok)
            np.multiply(P, step, out=tmp)
            X += tmp
            np.multiply(AP, step, out=AP)
            R -= AP
            res = np.where(ok, np.sqrt(np.einsum("ij,ij->j", R, R)) / b_norm, res)
            if inv_diag is not None:
                np.multiply(R, scale, out=Z)
            rz_new = np.einsum("ij,ij->j", R, Z)
            beta = np.divide(rz_new, rz, out=np.zeros_like(rz), where=ok & (rz > 0))
            P *= beta
            P += Z
            rz = rz_new
            history.append(float(res.max(initial=0.0)))
            bar.update()
            bar.set_postfix_str(f"residual {history[-1]:.2e}", refresh=False)
    converged = bool((res <= tol).all())
    logger.debug("block CG: %d iterations, largest relative residual %.3g", it, history[-1])
    return BlockCGResult(X=X, n_iter=it, converged=converged, residual=res, history=history)
