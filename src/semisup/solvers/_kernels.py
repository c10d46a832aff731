"""Numba kernels for mat-vecs restricted to a subset of the rows of a CSR matrix.

The active set of the finite Newton method changes every Newton step; these kernels
take the row subset as an index array so that ``X_j p`` and ``X_j^T q`` never copy
or re-slice the matrix.  Both kernels are parallel over chunks of rows holding about equal
non-zeros, one chunk per thread; the transposed product accumulates into one buffer per
chunk (a scatter cannot be shared between threads) and reduces the buffers at the end.
How many threads join a product is decided by :func:`parallel_threads`: every numba thread
by default, or, with ``SEMISUP_THREAD_POLICY=load``, no more than the cores other processes
leave free.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time

import numpy as np

from semisup._accel import import_numba, njit, prange

# Below this many stored entries a serial loop wins: a parallel region costs a thread
# hand-off (microseconds on an idle machine, milliseconds when the cores are busy), and
# the transposed product needs per-chunk buffers.  ``SEMISUP_PARALLEL_MIN_NNZ`` overrides it.
PARALLEL_MIN_NNZ = int(os.environ.get("SEMISUP_PARALLEL_MIN_NNZ", 1_000_000))

_CONTROLLER = None
_CONTROLLER_SAW_LINALG = False


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


@njit(inline="always", nogil=True)
def row_axpy2(indptr, indices, data, i, a, b, out1, out2) -> None:
    """``out1 += a * X[i]`` and ``out2 += b * X[i]`` in one pass over row ``i`` (a zero
    weight skips its side)."""
    if a != 0.0 and b != 0.0:
        for jj in range(np.uint64(indptr[i]), np.uint64(indptr[i + 1])):
            c = indices[jj]
            v = data[jj]
            out1[c] += a * v
            out2[c] += b * v
    elif a != 0.0:
        row_axpy(indptr, indices, data, i, a, out1)
    elif b != 0.0:
        row_axpy(indptr, indices, data, i, b, out2)


@njit(parallel=True, cache=True, nogil=True)
def _csr_rows_matvec_par(indptr, indices, data, rows, w, out, bounds):
    # one task per chunk of about equal non-zeros: the thread policy sets the team's size
    # through the number of chunks (numba's thread count is process state, not per call)
    for c in prange(bounds.shape[0] - 1):
        for k in range(bounds[c], bounds[c + 1]):
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


# ``X^T [q1 q2]`` in one pass: CGLS's start needs ``A^T z`` and ``A^T C t`` (the norm of its
# right-hand side) at once; a second pass would read the rows again.  Each column sum adds
# the same terms in the same order as the single-vector kernels, so the results are equal.
@njit(cache=True, nogil=True)
def _csr_rows_rmatvec2_ser(indptr, indices, data, rows, q1, q2, out1, out2):
    out1[:] = 0.0
    out2[:] = 0.0
    for k in range(rows.shape[0]):
        row_axpy2(indptr, indices, data, rows[k], q1[k], q2[k], out1, out2)


@njit(parallel=True, cache=True, nogil=True)
def _csr_rows_rmatvec2_par(indptr, indices, data, rows, q1, q2, out1, out2, bounds):
    n_chunks = bounds.shape[0] - 1
    n_cols = out1.shape[0]
    width = n_cols + 16  # padded against false sharing, as in _csr_rows_rmatvec_par
    buf = np.zeros((n_chunks, 2 * width))
    for c in prange(n_chunks):
        b1 = buf[c, :width]
        b2 = buf[c, width:]
        for k in range(bounds[c], bounds[c + 1]):
            row_axpy2(indptr, indices, data, rows[k], q1[k], q2[k], b1, b2)
    for j in prange(n_cols):
        s1 = 0.0
        s2 = 0.0
        for c in range(n_chunks):
            s1 += buf[c, j]
            s2 += buf[c, width + j]
        out1[j] = s1
        out2[j] = s2


# CGLS's product pair in one pass (``q = X p``, then ``X^T C q``, row by row): each row is
# read once, for its dot product and, while still in cache, for its axpy.  Returns ``q^T C q``
# and ``sum C q`` (the bias component); ``q`` itself is not needed.  ``q_k`` and ``q^T C q``
# are computed exactly as :func:`_csr_rows_matvec_ser` and ``cgls._weighted_sq`` do, the
# scatter adds the same terms in the same order as the transposed product.
@njit(cache=True, nogil=True)
def _csr_rows_normal_ser(indptr, indices, data, rows, p, bias, cost, out):
    out[:] = 0.0
    curv = 0.0
    total = 0.0
    for k in range(rows.shape[0]):
        i = rows[k]
        qk = row_dot(indptr, indices, data, i, p) + bias
        cq = cost[k] * qk
        curv += qk * cq
        total += cq
        if cq != 0.0:
            row_axpy(indptr, indices, data, i, cq, out)
    return curv, total


@njit(parallel=True, cache=True, nogil=True)
def _csr_rows_normal_par(indptr, indices, data, rows, p, bias, cost, out, bounds):
    n_chunks = bounds.shape[0] - 1
    n_cols = out.shape[0]
    buf = np.zeros((n_chunks, n_cols + 16))  # padded as in _csr_rows_rmatvec_par
    parts = np.zeros((n_chunks, 2))
    for c in prange(n_chunks):
        b = buf[c]
        curv = 0.0
        total = 0.0
        for k in range(bounds[c], bounds[c + 1]):
            i = rows[k]
            qk = row_dot(indptr, indices, data, i, p) + bias
            cq = cost[k] * qk
            curv += qk * cq
            total += cq
            if cq != 0.0:
                row_axpy(indptr, indices, data, i, cq, b)
        parts[c, 0] = curv
        parts[c, 1] = total
    for j in prange(n_cols):
        s = 0.0
        for c in range(n_chunks):
            s += buf[c, j]
        out[j] = s
    curv = 0.0
    total = 0.0
    for c in range(n_chunks):
        curv += parts[c, 0]
        total += parts[c, 1]
    return curv, total


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
    if indptr[-1] * M.shape[1] >= PARALLEL_MIN_NNZ and parallel_threads() > 1:
        _csr_matmat_par(indptr, indices, data, M, out)
    else:
        _csr_matmat_ser(indptr, indices, data, M, out)


@njit(cache=True, nogil=True)
def rows_nnz_and_breaks(indptr, rows):
    """Stored entries of the rows ``rows`` and how many consecutive rows are not neighbours
    in ``X`` (one pass; numpy's index arithmetic took about a millisecond per active set)."""
    nnz = 0
    breaks = 0
    for k in range(rows.shape[0]):
        i = rows[k]
        nnz += indptr[i + 1] - indptr[i]
        if k > 0:
            breaks += np.int64(i - rows[k - 1] != 1)
    return nnz, breaks


@njit(cache=True, nogil=True)
def _chunk_bounds(indptr, rows, targets, bounds):
    """``searchsorted(cumulative nnz, targets, 'left')`` in one pass over the rows."""
    n_targets = targets.shape[0]
    t = 0
    cum = 0
    for k in range(rows.shape[0]):
        while t < n_targets and cum >= targets[t]:
            bounds[t] = k
            t += 1
        i = rows[k]
        cum += indptr[i + 1] - indptr[i]
    while t < n_targets:
        bounds[t] = rows.shape[0] if cum >= targets[t] else rows.shape[0] + 1
        t += 1


def chunk_bounds(indptr: np.ndarray, rows: np.ndarray, n_chunks: int,
                 nnz: int | None = None) -> np.ndarray:
    """Split ``rows`` into ``n_chunks`` contiguous pieces holding about equal non-zeros.

    ``nnz``: the rows' stored entries when known (:func:`rows_nnz_and_breaks`): the bounds
    then come from one compiled pass instead of numpy's index arithmetic (same bounds).
    """
    if nnz is None:
        nnz_per_row = indptr[rows + 1] - indptr[rows]
        cum = np.concatenate(([0], np.cumsum(nnz_per_row)))
        targets = np.linspace(0, cum[-1], n_chunks + 1)
        bounds = np.searchsorted(cum, targets, side="left").astype(np.int64)
    else:
        targets = np.linspace(0, nnz, n_chunks + 1)
        bounds = np.empty(n_chunks + 1, dtype=np.int64)
        _chunk_bounds(indptr, rows, targets, bounds)
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
    global _CONTROLLER, _CONTROLLER_SAW_LINALG
    # scanning the loaded libraries costs ~1 ms: once, and again when scipy.linalg (which
    # brings scipy's own OpenBLAS) was loaded after the scan: the controller only limits
    # libraries it has seen
    has_linalg = "scipy.linalg" in sys.modules
    if _CONTROLLER is None or (has_linalg and not _CONTROLLER_SAW_LINALG):
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
        _CONTROLLER_SAW_LINALG = has_linalg
    return _CONTROLLER.limit(limits=1, user_api="blas")


def csr_rows_matvec(indptr, indices, data, rows, w, out, bounds) -> None:
    """``out = X[rows] @ w``; ``bounds`` from :func:`chunk_bounds`, or ``None`` for serial."""
    if bounds is not None:
        _csr_rows_matvec_par(indptr, indices, data, rows, w, out, bounds)
    else:
        _csr_rows_matvec_ser(indptr, indices, data, rows, w, out)


def csr_rows_rmatvec(indptr, indices, data, rows, q, out, bounds) -> None:
    """``out = X[rows].T @ q``; ``bounds`` from :func:`chunk_bounds`, or ``None`` for serial."""
    if bounds is None:
        _csr_rows_rmatvec_ser(indptr, indices, data, rows, q, out)
    else:
        _csr_rows_rmatvec_par(indptr, indices, data, rows, q, out, bounds)


def csr_rows_rmatvec_pair(indptr, indices, data, rows, q1, q2, out1, out2, bounds) -> None:
    """``out1 = X[rows].T @ q1`` and ``out2 = X[rows].T @ q2`` in one pass over the rows."""
    if bounds is None:
        _csr_rows_rmatvec2_ser(indptr, indices, data, rows, q1, q2, out1, out2)
    else:
        _csr_rows_rmatvec2_par(indptr, indices, data, rows, q1, q2, out1, out2, bounds)


def csr_rows_normal_product(indptr, indices, data, rows, p, bias, cost, out, bounds):
    """``out = X[rows].T @ (C q)`` with ``q = X[rows] @ p + bias``, in one pass; returns
    ``(q^T C q, sum C q)``."""
    if bounds is None:
        return _csr_rows_normal_ser(indptr, indices, data, rows, p, bias, cost, out)
    return _csr_rows_normal_par(indptr, indices, data, rows, p, bias, cost, out, bounds)


# ----------------------------------------------------------------------------- thread policy

#: ``"off"`` (default): the parallel kernels use every numba thread whenever an operator is
#: large enough, whatever else runs on the machine.  ``SEMISUP_THREAD_POLICY=load``: a team no
#: larger than the free cores (:func:`parallel_threads`).  The default is the one measured
#: faster: under twice as many competing processes as cores (2-core machine, load 8-29), the
#: threaded product pair on SecStr 83k took 0.59x the serial one's time and DA 0.58x / 0.70x,
#: TSVM 1.24x / 0.98x of the single-threaded fit, while ``load`` (serial there) took 1.0-1.5x
#: (``benchmarks/bench_thread_policy.py``): idle threads sleep (``OMP_WAIT_POLICY=PASSIVE``),
#: and a process with two runnable threads gets two shares of a busy machine.
THREAD_POLICY = os.environ.get("SEMISUP_THREAD_POLICY", "off").strip().lower()

#: Seconds between two measurements of the machine's load; in between the last answer holds.
#: Shorter windows measure the scheduler's time slices rather than the load.
PROBE_INTERVAL = 0.25

_PROBE: dict = {}


def _cpu_seconds(cpus) -> float | None:
    """Busy seconds (not idle, not I/O wait) of the CPUs ``cpus``, from ``/proc/stat``."""
    try:
        with open("/proc/stat") as fh:
            lines = [line.split() for line in fh if line.startswith("cpu")]
    except OSError:
        return None
    total = 0
    for parts in lines[1:]:
        if int(parts[0][3:]) in cpus:
            v = [int(x) for x in parts[1:9]]
            total += v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
    return total / os.sysconf("SC_CLK_TCK")


def _cores() -> set:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return os.sched_getaffinity(0)
    return set(range(os.cpu_count() or 1))


def _own_seconds() -> float:
    """CPU seconds of this process, all its threads."""
    t = os.times()
    return t.user + t.system


def _runnable() -> float | None:
    """Runnable threads on the machine right now (``/proc/loadavg``), ``None`` if unknown."""
    try:
        with open("/proc/loadavg") as fh:
            return float(fh.read().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return None


def _runnable_others() -> float:
    """Other runnable threads right now (``/proc/loadavg``), for the very first decision."""
    runnable = _runnable()
    return 0.0 if runnable is None else max(0.0, runnable - 1.0)


def _own_runnable() -> int:
    """Threads of this process that are runnable now (``/proc/self/task/*/stat``)."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 1
    count = 0
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/stat") as fh:
                # the state follows the parenthesised command name
                count += fh.read().rsplit(")", 1)[1].split()[0] == "R"
        except (OSError, IndexError):
            continue
    return max(count, 1)


def machine_busy() -> bool:
    """Whether another process's thread is runnable right now (False where unknown).

    The runnable threads of ``/proc/loadavg`` minus this process's own (an OpenBLAS team
    still spinning after the previous call is ours, not a competitor): a few small reads,
    cheap enough to ask at the start of every fit.
    """
    runnable = _runnable()
    return runnable is not None and runnable - _own_runnable() >= 1.0


def busy_machine_threads():
    """Context: BLAS on one thread while :func:`machine_busy`, else no limit."""
    return _one_blas_thread() if machine_busy() else contextlib.nullcontext()


def _one_blas_thread():
    """BLAS limited to one thread, scipy's own OpenBLAS included (loaded first)."""
    import scipy.linalg  # noqa: F401

    return sparse_solver_threads(True)


#: Dense data of at most this many features is "narrow": the wrappers
#: (:func:`narrow_data_threads`) and the linear family
#: (:data:`semisup.linear._core.DENSE_ONE_THREAD_MAX_FEATURES`) run BLAS on one thread there.
NARROW_FEATURES = 512


def narrow_data_threads(X, small_fits: bool = False):
    """Context: BLAS on one thread when ``X`` is sparse or dense with at most
    :data:`NARROW_FEATURES` features, or ``small_fits``; else :func:`busy_machine_threads`.

    For fits made of many small fits (self-, co- and tri-training, the automatic
    classifier, MixtureSSL and SelfTaughtClassifier with their guards):
    scikit-learn's ``LogisticRegression`` on 400 rows took 0.37 s with OpenBLAS's team
    against 0.012 s on one thread at 128 features and 20 classes (32x), 0.19 against 0.016
    s at 256 features and 10 classes, on this 2-core machine.  With their defaults, 2 labels
    per class, idle (``benchmarks/results/bench_meta_threads.md``, 30 fits): self-training
    on coil 9.5 -> 0.65 s, tri-training on dna and ten-class USPS 4.1 -> 0.40 and 7.0 ->
    0.99 s, co-training on ten-class USPS 39.6 -> 2.4 s, MixtureSSL on dna and USPS 10.4
    -> 1.9 and 7.1 -> 3.0 s, the automatic classifier 0.55-1.27x (coil at 1.27x, measured
    while tests ran beside it, was 0.88x in the run before), median 0.90x, the same
    transductions in every fit.  Co-training on a synthetic 20-class task of 1,440 rows and
    256 features: 107 -> 4.7 s.

    ``small_fits``: the self-, co- and tri-training wrappers over a scikit-learn base model
    (their default, ``LogisticRegression``), whose fits are all on the labeled and
    pseudo-labeled rows, run on one thread whatever the width: ``LogisticRegression`` on
    random dense data with 10 classes took 0.34 s on one thread against 1.01 s with the team
    at 2,000 x 784, 0.97 against 3.32 s at 2,000 x 2,000, 1.01 against 2.01 s at 2,000 x 4,000
    and 20 classes; co-training on MNIST's ten digits (784 pixels, 2 labels per class) 68.8 ->
    3.5 s, over the benchmark's 60 s (``benchmarks/results/bench_meta_threads.md``).
    """
    import scipy.sparse as sp

    shape = getattr(X, "shape", None)
    narrow = shape is not None and len(shape) == 2 and shape[1] <= NARROW_FEATURES
    return (_one_blas_thread() if small_fits or narrow or sp.issparse(X)
            else busy_machine_threads())


def parallel_threads() -> int:
    """Threads the parallel kernels should use now; 1 means the serial kernels.

    By default every numba thread (see :data:`THREAD_POLICY` for the measurement behind it).
    With ``SEMISUP_THREAD_POLICY=load``: a team no larger than the cores that other
    processes leave free, so that a fit never takes more than its share of a shared machine
    (a parallel product ends when its slowest chunk does, and on a machine whose cores are
    taken each thread waits for a time slice).  The free cores are measured, not guessed:
    busy time of the process's CPUs (``/proc/stat``, the CPUs of ``os.sched_getaffinity``)
    minus this process's own CPU time, over the window since the previous measurement
    (at least :data:`PROBE_INTERVAL` seconds; the first one reads the number of runnable
    threads in ``/proc/loadavg``).  The team is ``round(cores - other processes' cores)``,
    between 1 and numba's thread count; our own worker processes (joblib folds) count as
    other processes, so parallel folds fall back to serial kernels instead of
    oversubscribing the cores.  Where ``/proc`` cannot be read it keeps every thread.

    Returns
    -------
    int
    """
    n = n_threads()
    if n <= 1 or THREAD_POLICY != "load":
        return n
    now = time.perf_counter()
    last = _PROBE.get("time")
    if last is not None and now - last < PROBE_INTERVAL:
        return min(_PROBE["threads"], n)
    cpus = _cores()
    busy = _cpu_seconds(cpus)
    if busy is None:
        return n
    own = _own_seconds()
    if last is None:
        others = _runnable_others()
    else:
        others = max(0.0, (busy - _PROBE["busy"] - (own - _PROBE["own"])) / (now - last))
    threads = int(min(n, max(1, math.floor(len(cpus) - others + 0.5))))
    _PROBE.update(time=now, busy=busy, own=own, threads=threads, others=others)
    return threads
