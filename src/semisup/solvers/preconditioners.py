"""Preconditioners for the regularised least-squares systems ``[R + A^T C A] x = A^T C t``.

CGLS needs ``M^-1 r`` for a symmetric positive definite ``M`` close to ``H = R + A^T C A``.

* :func:`jacobi` -- ``M = diag(H)``: one pass over the rows, ``O(d)`` per application.  Cuts
  the iterations when the columns have very different scales (pixels, one-hot codes,
  counts); it is the only affordable choice for high-dimensional sparse data (text).
* :func:`sketched_cholesky` -- ``M = diag(R) + S^T S``, a row-sampled estimate of
  ``A^T C A`` (rows drawn with probability proportional to ``c_i ||a_i||^2``, re-weighted so
  that the estimate is unbiased), factored once.  With a few times ``d`` sampled rows it
  captures the correlations between features that Jacobi ignores, so CG needs a small,
  nearly ``n``-independent number of iterations; building it costs ``O(s * nnz_row^2 + d^3)``,
  which pays when ``d`` is at most a few thousand and every system is solved to a tight
  tolerance (MNIST pixels: see ``benchmarks/bench_cgls_overhead.py``).

Both return a callable ``r -> M^-1 r``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

# "auto" uses the sketch when d is at most this and there are this many times more rows
SKETCH_MAX_WEIGHTS = 2000
SKETCH_ROWS_PER_WEIGHT = 4
DENSE_SKETCH_DENSITY = 0.15


class Diagonal:
    """``r -> inverse * r``; CGLS fuses the product into its own vector pass."""

    def __init__(self, inverse: np.ndarray):
        self.inverse = inverse

    def __call__(self, r: np.ndarray) -> np.ndarray:
        return self.inverse * r


def jacobi(A, cost: np.ndarray, reg) -> Diagonal:
    """``r -> r / diag(R + A^T C A)`` (entries with a zero diagonal are left unscaled)."""
    diag = reg.diagonal(A.shape[1]) + A.weighted_column_sq(cost)
    return Diagonal(np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 1.0))


def sketched_cholesky(A, cost: np.ndarray, reg, n_samples: int | None = None,
                      random_state: int = 0) -> Callable[[np.ndarray], np.ndarray]:
    """``r -> M^-1 r``, ``M = diag(R) + sum_k c_k a_k a_k^T / (s pi_k)`` over ``s`` sampled rows.

    Rows are sampled with replacement with probability ``pi_k`` proportional to
    ``c_k ||a_k||^2`` (importance sampling of the Hessian ``A^T C A``: heavy rows, such as
    labeled rows among many lightly weighted unlabeled ones, are not missed), so that the
    sum is an unbiased estimate of ``A^T C A``.  ``diag(R)`` keeps ``M`` positive definite.

    Parameters
    ----------
    A : Design
        Rows of the system (with ``materialize`` and ``restrict``).
    cost : ndarray of shape (n_rows,)
        Diagonal of ``C``.
    reg : regulariser
        Its ``diagonal`` enters ``M``.
    n_samples : int, optional
        Sampled rows ``s``; ``max(4 d, 1000)`` when omitted.  When ``s`` reaches the number
        of rows, ``M`` is ``diag(R) + A^T C A`` itself (no sampling).
    random_state : int
        Seed of the row sample (fixed: solves repeat exactly).
    """
    import scipy.linalg as la  # on demand: a tenth of a second that Jacobi users never pay

    n, d = A.shape
    s = min(n, n_samples or max(SKETCH_ROWS_PER_WEIGHT * d, 1000))
    importance = cost * A.row_sq_norms()
    total = float(importance.sum())
    diag_r = np.maximum(reg.diagonal(d), 0.0)
    if total <= 0.0:
        return jacobi(A, cost, reg)
    if s >= n:  # a sample as large as the data: take every row, exactly
        picked = np.flatnonzero(cost > 0)
        weights = cost[picked]
    else:
        pi = importance / total
        rng = np.random.default_rng(random_state)
        picked, counts = np.unique(rng.choice(n, size=s, p=pi), return_counts=True)
        weights = counts * cost[picked] / (s * pi[picked])
    Xs = A.restrict(picked).materialize()
    if sp.issparse(Xs) and Xs.nnz > DENSE_SKETCH_DENSITY * Xs.shape[0] * d:
        # dense enough (pixels) for BLAS's d^2 per row to beat the sparse product's
        # nnz_row^2 per row at its much lower speed; one-hot codes (5 %) stay sparse
        Xs = Xs.toarray()
    if sp.issparse(Xs):
        M = (Xs.T @ Xs.multiply(weights[:, None])).toarray()
    else:
        M = Xs.T @ (Xs * weights[:, None])
    M[np.diag_indices(d)] += diag_r
    try:
        factor = la.cho_factor(M, lower=True, check_finite=False)
    except la.LinAlgError:  # singular sample and no ridge on some weight: fall back
        return jacobi(A, cost, reg)
    return lambda r: la.cho_solve(factor, r, check_finite=False)


def make_preconditioner(kind, A, cost: np.ndarray, reg):
    """The preconditioner ``kind`` (``"auto"``, ``"jacobi"``, ``"sketch"``, ``True``, ``False``).

    ``"auto"`` is the sketch when ``d <= 2000`` and the rows outnumber the weights at least
    4 to 1, Jacobi otherwise; ``True`` means ``"auto"``; ``False``/``None`` no preconditioner.
    """
    if kind is False or kind is None:
        return None
    n, d = A.shape
    if kind is True or kind == "auto":
        kind = "sketch" if d <= SKETCH_MAX_WEIGHTS and n >= SKETCH_ROWS_PER_WEIGHT * d \
            else "jacobi"
    if kind == "jacobi":
        return jacobi(A, cost, reg)
    if kind == "sketch":
        return sketched_cholesky(A, cost, reg)
    raise ValueError(f"precondition must be 'auto', 'jacobi', 'sketch', True or False, "
                     f"got {kind!r}")
