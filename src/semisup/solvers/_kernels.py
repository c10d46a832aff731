"""Numba kernels for mat-vecs restricted to a subset of the rows of a CSR matrix.

The active set of the finite Newton method changes every Newton step; these kernels
take the row subset as an index array so that ``X_j p`` and ``X_j^T q`` never copy
or re-slice the matrix.  Both kernels are parallel over rows; the transposed product
accumulates into one buffer per chunk (a scatter cannot be shared between threads)
and reduces the buffers at the end.
"""

from __future__ import annotations

import contextlib

import numba
import numpy as np
from numba import njit, prange
from threadpoolctl import ThreadpoolController

# Below this many stored entries a serial loop wins: a parallel region costs a thread
# hand-off (microseconds on an idle machine, milliseconds when the cores are busy), and
# the transposed product needs per-chunk buffers.
PARALLEL_MIN_NNZ = 1_000_000

_CONTROLLER = None


@njit(parallel=True, cache=True, nogil=True)
def _csr_rows_matvec_par(indptr, indices, data, rows, w, out):
    for k in prange(rows.shape[0]):
        i = rows[k]
        s = 0.0
        for jj in range(indptr[i], indptr[i + 1]):
            s += data[jj] * w[indices[jj]]
        out[k] = s


# The serial twin is a separate function on purpose: numba's on-disk cache keys a function by
# its code, not by its compile flags, so one body jitted twice would share a cache entry.
@njit(cache=True, nogil=True)
def _csr_rows_matvec_ser(indptr, indices, data, rows, w, out):
    for k in range(rows.shape[0]):
        i = rows[k]
        s = 0.0
        for jj in range(indptr[i], indptr[i + 1]):
            s += data[jj] * w[indices[jj]]
        out[k] = s


@njit(cache=True, nogil=True)
def _csr_rows_rmatvec_ser(indptr, indices, data, rows, q, out):
    out[:] = 0.0
    for k in range(rows.shape[0]):
        i = rows[k]
        qk = q[k]
        if qk != 0.0:
            for jj in range(indptr[i], indptr[i + 1]):
                out[indices[jj]] += data[jj] * qk


@njit(parallel=True, cache=True, nogil=True)
def _csr_rows_rmatvec_par(indptr, indices, data, rows, q, out, bounds):
    n_chunks = bounds.shape[0] - 1
    n_cols = out.shape[0]
    buf = np.zeros((n_chunks, n_cols))
    for c in prange(n_chunks):
        b = buf[c]
        for k in range(bounds[c], bounds[c + 1]):
            i = rows[k]
            qk = q[k]
            if qk != 0.0:
                for jj in range(indptr[i], indptr[i + 1]):
                    b[indices[jj]] += data[jj] * qk
    for j in prange(n_cols):
        s = 0.0
        for c in range(n_chunks):
            s += buf[c, j]
        out[j] = s


@njit(cache=True, nogil=True)
def csr_rows_weighted_sq_colsum(indptr, indices, data, rows, c, out):
    """``out[j] = sum_k c[k] X[rows[k], j]^2`` (the diagonal of ``X_j^T C X_j``)."""
    out[:] = 0.0
    for k in range(rows.shape[0]):
        i = rows[k]
        ck = c[k]
        for jj in range(indptr[i], indptr[i + 1]):
            out[indices[jj]] += ck * data[jj] * data[jj]


@njit(cache=True, nogil=True)
def csr_rows_sq_norms(indptr, data, rows):
    """``||X[rows[k]]||^2`` for every ``k``."""
    out = np.zeros(rows.shape[0])
    for k in range(rows.shape[0]):
        i = rows[k]
        s = 0.0
        for jj in range(indptr[i], indptr[i + 1]):
            s += data[jj] * data[jj]
        out[k] = s
    return out


def chunk_bounds(indptr: np.ndarray, rows: np.ndarray, n_chunks: int) -> np.ndarray:
    """Split ``rows`` into ``n_chunks`` contiguous pieces holding about equal non-zeros."""
    nnz_per_row = indptr[rows + 1] - indptr[rows]
    cum = np.concatenate(([0], np.cumsum(nnz_per_row)))
    targets = np.linspace(0, cum[-1], n_chunks + 1)
    bounds = np.searchsorted(cum, targets, side="left").astype(np.int64)
    bounds[0], bounds[-1] = 0, rows.shape[0]
    return bounds


def n_threads() -> int:
    """Threads numba will use for the parallel kernels."""
    return int(numba.get_num_threads())


def sparse_solver_threads(sparse: bool):
    """Context for a solve on sparse data: BLAS limited to one thread.

    On sparse data the numba kernels do the heavy work and BLAS only sees vectors of
    length ``n_rows`` or ``d``; OpenBLAS nevertheless threads dot products of more than a
    few thousand entries, and its threads spin-wait afterwards, taking the cores the
    parallel kernels need (measured on MNIST: a CGLS iteration 2.6x slower).  Dense data
    keeps BLAS threads: there BLAS *is* the heavy work.
    """
    if not sparse:
        return contextlib.nullcontext()
    global _CONTROLLER
    if _CONTROLLER is None:  # scanning the loaded libraries costs ~1 ms: do it once
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


def csr_rows_matvec(indptr, indices, data, rows, w, out, parallel: bool) -> None:
    """``out = X[rows] @ w`` for a CSR matrix given by its three arrays."""
    if parallel:
        _csr_rows_matvec_par(indptr, indices, data, rows, w, out)
    else:
        _csr_rows_matvec_ser(indptr, indices, data, rows, w, out)


def csr_rows_rmatvec(indptr, indices, data, rows, q, out, bounds) -> None:
    """``out = X[rows].T @ q``; ``bounds`` from :func:`chunk_bounds`, or ``None`` for serial."""
    if bounds is None:
        _csr_rows_rmatvec_ser(indptr, indices, data, rows, q, out)
    else:
        _csr_rows_rmatvec_par(indptr, indices, data, rows, q, out, bounds)
