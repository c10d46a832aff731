"""Numba kernels for mat-vecs restricted to a subset of the rows of a CSR matrix.

The active set of the finite Newton method changes every Newton step; these kernels
take the row subset as an index array so that ``X_j p`` and ``X_j^T q`` never copy
or re-slice the matrix.  Both kernels are parallel over rows; the transposed product
accumulates into one buffer per chunk (a scatter cannot be shared between threads)
and reduces the buffers at the end.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

from semisup._accel import import_numba, njit, prange

# Below this many stored entries a serial loop wins: a parallel region costs a thread
# hand-off (microseconds on an idle machine, milliseconds when the cores are busy), and
# the transposed product needs per-chunk buffers.  ``SEMISUP_PARALLEL_MIN_NNZ`` overrides it.
PARALLEL_MIN_NNZ = int(os.environ.get("SEMISUP_PARALLEL_MIN_NNZ", 1_000_000))

_CONTROLLER = None


# Loop counters over the stored entries are unsigned: numba must otherwise guard every
# ``data[jj]`` against a negative index (wrap-around), which costs about a third of a sparse
# dot product.  The dot product keeps four partial sums so that its additions do not form one
# serial chain.  Together: 2x on a CSR row pass (SSL-book text, ``bench_cgls_overhead.py``).
# Both are inlined into kernels of other modules (dual CD): numba's on-disk cache does not
# notice an edit here, so clear ``__pycache__`` after changing them.
@njit(inline="always", nogil=True)
def row_dot(indptr, indices, data, i, w) -> float:
    """``X[i] @ w`` for row ``i`` of a CSR matrix."""
    jj = np.uint64(indptr[i])
    hi = np.uint64(indptr[i + 1])
    four = np.uint64(4)
    one = np.uint64(1)
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    while jj + four <= hi:
        a0 += data[jj] * w[indices[jj]]
        a1 += data[jj + one] * w[indices[jj + one]]
        a2 += data[jj + 2 * one] * w[indices[jj + 2 * one]]
        a3 += data[jj + 3 * one] * w[indices[jj + 3 * one]]
        jj += four
    while jj < hi:
        a0 += data[jj] * w[indices[jj]]
        jj += one
    return (a0 + a1) + (a2 + a3)


@njit(inline="always", nogil=True)
def row_axpy(indptr, indices, data, i, a, out) -> None:
    """``out += a * X[i]`` for row ``i`` of a CSR matrix."""
    for jj in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        out[indices[jj]] += a * data[jj]


@njit(parallel=True, cache=True, nogil=True)
def _csr_rows_matvec_par(indptr, indices, data, rows, w, out):
    for k in prange(rows.shape[0]):
        out[k] = row_dot(indptr, indices, data, rows[k], w)


# The serial twin is a separate function on purpose: numba's on-disk cache keys a function by
# its code, not by its compile flags, so one body jitted twice would share a cache entry.
@njit(cache=True, nogil=True)
def _csr_rows_matvec_ser(indptr, indices, data, rows, w, out):
    for k in range(rows.shape[0]):
        out[k] = row_dot(indptr, indices, data, rows[k], w)


@njit(cache=True, nogil=True)
def _csr_rows_rmatvec_ser(indptr, indices, data, rows, q, out):
    out[:] = 0.0
    for k in range(rows.shape[0]):
        qk = q[k]
        if qk != 0.0:
            row_axpy(indptr, indices, data, rows[k], qk, out)


@njit(parallel=True, cache=True, nogil=True)
def _csr_rows_rmatvec_par(indptr, indices, data, rows, q, out, bounds):
    n_chunks = bounds.shape[0] - 1
    n_cols = out.shape[0]
    # rows padded by 128 bytes: the end of one thread's buffer and the start of the next
    # would otherwise share a cache line, and one-hot data writes both (false sharing)
    buf = np.zeros((n_chunks, n_cols + 16))
    for c in prange(n_chunks):
        b = buf[c]
        for k in range(bounds[c], bounds[c + 1]):
            qk = q[k]
            if qk != 0.0:
                row_axpy(indptr, indices, data, rows[k], qk, b)
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
        for jj in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            out[indices[jj]] += ck * data[jj] * data[jj]


@njit(cache=True, nogil=True)
def csr_rows_sq_norms(indptr, data, rows):
    """``||X[rows[k]]||^2`` for every ``k``."""
    out = np.zeros(rows.shape[0])
    for k in range(rows.shape[0]):
        i = rows[k]
        s = 0.0
        for jj in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            v = np.float64(data[jj])   # float32 data: square in float64
            s += v * v
        out[k] = s
    return out


@njit(parallel=True, cache=True, nogil=True)
def _csr_gather_rows(indptr, indices, data, rows, new_indptr, new_indices, new_data):
    for k in prange(rows.shape[0]):
        src = np.uint64(indptr[rows[k]])
        dst = np.uint64(new_indptr[k])
        for t in range(np.uint64(indptr[rows[k] + 1]) - src):
            new_indices[dst + t] = indices[src + t]
            new_data[dst + t] = data[src + t]


def csr_gather_rows(indptr, indices, data, rows):
    """The CSR arrays of ``X[rows]``: one parallel pass, index and value types kept."""
    new_indptr = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(indptr[rows + 1] - indptr[rows], out=new_indptr[1:])
    nnz = int(new_indptr[-1])
    new_indices = np.empty(nnz, dtype=indices.dtype)
    new_data = np.empty(nnz, dtype=data.dtype)
    _csr_gather_rows(indptr, indices, data, rows, new_indptr, new_indices, new_data)
    return new_indptr, new_indices, new_data


@njit(inline="always", nogil=True)
def row_matmat(indptr, indices, data, i, M, out) -> None:
    """``out[i] = X[i] @ M``, the row's terms summed in storage order (scipy's)."""
    k = M.shape[1]
    for c in range(k):
        out[i, c] = 0.0
    for jj in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
        v = data[jj]
        row = indices[jj]
        for c in range(k):
            out[i, c] += v * M[row, c]


@njit(parallel=True, cache=True, nogil=True)
def _csr_matmat_par(indptr, indices, data, M, out):
    for i in prange(out.shape[0]):
        row_matmat(indptr, indices, data, i, M, out)


@njit(cache=True, nogil=True)
def _csr_matmat_ser(indptr, indices, data, M, out):
    for i in range(out.shape[0]):
        row_matmat(indptr, indices, data, i, M, out)


def csr_matmat(indptr, indices, data, M, out) -> None:
    """``out = X @ M`` for a CSR matrix given by its arrays (unsigned column indices) and a
    C-contiguous float64 block ``M``; row by row, each row's sum in scipy's order.

    scipy's CSR-times-dense product is single-threaded and strided over ``M``'s columns;
    this kernel was 1.3-1.9x faster serial and 2.4-2.6x with two threads on 20NG-sized
    blocks (10,000 x 49,607, 1M non-zeros, 9-14 columns).
    """
    if indptr[-1] * M.shape[1] >= PARALLEL_MIN_NNZ and n_threads() > 1:
        _csr_matmat_par(indptr, indices, data, M, out)
    else:
        _csr_matmat_ser(indptr, indices, data, M, out)


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
    return int(import_numba().get_num_threads())


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
        from threadpoolctl import ThreadpoolController

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
