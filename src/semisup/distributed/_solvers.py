"""The linear semi-supervised SVMs over a :class:`~semisup.distributed.DistributedDesign`.

The client runs the single-machine loops themselves -- :func:`semisup.solvers.cgls.cgls_rows`,
:func:`semisup.solvers.mfn.mfn_rows`, :func:`semisup.solvers.s3vm.transductive_svm_rows` and
:func:`semisup.solvers.s3vm.deterministic_annealing_rows` -- with row objects whose rows live
on the workers (:class:`BlockRows`, :class:`BlockMFNRows`, :class:`BlockS3VMRows`): only
``d``-vectors and scalars reach the client; every per-row vector stays on the workers, whose
:class:`~semisup.distributed._worker.BlockWorker` does each step's per-row work with the
single-machine kernels.  What differs from one machine is only where sums are taken, i.e.
round-off:

* CGLS: ``q^T C q`` (a scalar) and ``A^T C q`` (a ``d``-vector) reduced in one round trip
  per iteration;
* exact line search (eq. 5): per-block slope/intercept of ``phi'`` and its values at the
  probe steps, summed; then the break points up to the first probe with ``phi' >= 0``,
  concatenated, sorted and walked on the client;
* TSVM switching (section 3.1.2): each block's first ``m`` candidates of ``L+`` and ``L-``
  merged into the global first ``m`` (:func:`semisup.solvers.s3vm.switch_pairs` widens
  ``m``), ties broken by the global position of the row, as the stable sort does;
* DA p-step (eq. 9): the balance ``mean p - r`` and its derivative as per-block sums inside
  :func:`semisup.solvers.s3vm.beliefs_root`; its starting point, the ``r``-quantile of
  ``g``, interpolated from per-worker quantile sketches returned with ``g`` itself
  (:func:`sketch_quantile`): one round trip where an exact selection took a dozen.

Preconditioners (``precondition``): the row-sampled sketch of one machine draws rows from one
global distribution and is not available; in its place, for designs of at most
:data:`HESSIAN_MAX_WEIGHTS` weights (``"auto"``, or ``"hessian"``), the exact Hessian of eq. 4:
each worker returns the ``d x d`` data term ``A_J^T C_J A_J`` of its active rows (upper
triangle), the client adds ``diag(R)`` and the workers' partials and factors it (Cholesky).
``"auto"`` takes it when the rows are also sparse enough for the Hessian to cost a few CG
iterations (at most :data:`DIRECT_MAX_ROW_NNZ` non-zeros per row on average: one-hot codes
such as SecStr's).  Then the workers return it with every Newton system, in the round trip
that starts the Newton step (``newton_start``; each worker updates its Hessian from the rows
whose cost changed and sends only the changed entries to the client's copy of it,
:func:`worker_hessians`), and the client runs CGLS on it alone (:class:`HessianRows`: ``A^T C A
p = H p``), preconditioned by its Cholesky factor: no round trip per CG iteration.  With
``"hessian"`` on denser rows it is requested only when the single-machine reuse rule asks
for a new preconditioner (row costs moved by more than 5%, l1) and CGLS goes to the
workers.  Otherwise (more weights, dense rows, ``"jacobi"``) Jacobi (``diag(A_J^T C_J
A_J)``, one more ``d``-vector sum), as before.
"""

from __future__ import annotations

import logging

import numpy as np

from semisup._accel import use_compiled_vectors
from semisup.solvers._kernels import sparse_solver_threads
from semisup.solvers.cgls import cgls_rows
from semisup.solvers.line_search import _PROBES, _walk
from semisup.solvers.mfn import REUSE_PRECONDITIONER, MFNResult, mfn_rows
from semisup.solvers.preconditioners import Diagonal
from semisup.solvers.s3vm import _FIRST_PAIRS, beliefs_root

logger = logging.getLogger("semisup.distributed")

_SELECT_CAP = 4096  # values gathered to the client to finish a selection
# quantiles of g each worker returns for the p-step's Newton start (sketch_quantile)
_SKETCH_LEVELS = 64

# precondition="auto": the exact Hessian (d^2 / 2 numbers per worker per Newton step, a
# d^3 / 3 Cholesky on the client) up to this many weights, Jacobi beyond.  At 2,048: 17 MB
# per worker and about 3 GFlop per step; SecStr (316 weights) 0.4 MB.
HESSIAN_MAX_WEIGHTS = 2048
# ... and with every Newton system (CG on the client) when the rows hold at most this many
# non-zeros on average (the Hessian costs nnz_row^2 per row, a CG iteration 2 nnz_row and a
# round trip)
DIRECT_MAX_ROW_NNZ = 64
_THREADED_FACTOR_MIN = 1024  # smaller Cholesky factors on one BLAS thread
# the Newton point's round trip brings the full step's break points from a worker where at
# most this many terms change activity (3 floats each)
_BREAK_POINTS_CAP = 4096


def _keep(dd, method: str, value) -> None:
    """Keep ``value``, the result of a call to ``method`` made ahead of time (fused into
    the call just made), for :func:`_take`."""
    kept = getattr(dd, "_prefetched", None)
    if kept is None or kept[0] != dd.n_calls:
        kept = dd._prefetched = (dd.n_calls, {})
    kept[1][method] = value


def _take(dd, method: str):
    """The result kept by :func:`_keep` for ``method`` if no call was made since (the
    workers' state is the one it was computed on), else None."""
    kept = getattr(dd, "_prefetched", None)
    if kept is None or kept[0] != dd.n_calls:
        dd._prefetched = None
        return None
    return kept[1].pop(method, None)


def worker_hessians(dd, messages: list) -> np.ndarray:
    """The upper triangle of the workers' summed Hessians from their messages
    (:meth:`~semisup.distributed._worker.BlockWorker.hessian`), one per worker in
    ``dd.workers`` order.

    The client keeps a copy of each worker's Hessian (named by the worker's token) and
    applies a delta to it with the worker's own additions, so the copy equals the worker's
    bit for bit and a Newton step whose active set moved by a few rows receives a few
    hundred numbers instead of ``d (d + 1) / 2`` per worker.  A delta on a copy it does not
    name (the results of a call the client did not read: a replay after a worker loss, a
    failed call) costs one more round trip, for every worker's whole Hessian.
    """
    copies = dd.__dict__.setdefault("_hessian_copies", {})
    stale = False
    for worker, msg in zip(dd.workers, messages, strict=True):
        if msg[0] == "full":
            copies[worker] = [msg[1], msg[2]]
            continue
        held = copies.get(worker)
        if held is None or held[0] != msg[1]:
            stale = True
            continue
        held[1][msg[3]] += msg[4]
        held[0] = msg[2]
    if stale:
        for worker, msg in zip(dd.workers, dd._call("hessian_full"), strict=True):
            copies[worker] = [msg[1], msg[2]]
    total = copies[dd.workers[0]][1]
    for worker in dd.workers[1:]:  # in the workers' order, as DistributedDesign._sum
        total = total + copies[worker][1]
    return total


def _sum_start(dd, method: str, *args) -> np.ndarray:
    """``dd._sum(method, *args)`` for the calls that may return a Hessian's message with
    their vector (``newton_start`` and the calls fused with it): the summed vector followed
    by the summed upper triangle (:func:`worker_hessians`)."""
    results = dd._call(method, *args)
    if not isinstance(results[0], tuple):
        total = results[0]
        for r in results[1:]:
            total = total + r
        return total
    head = results[0][0]
    for r in results[1:]:
        head = head + r[0]
    return np.concatenate([head, worker_hessians(dd, [r[1] for r in results])])


class HessianCholesky:
    """``r -> M^-1 r`` with ``M = diag(R) + sum_workers A_J^T C_J A_J``, factored once.

    The Hessian of eq. 4 itself when ``R`` is diagonal (``Ridge``, the only regulariser of
    the distributed S3VMs): preconditioned CGLS then converges in one iteration up to
    round-off (a few while the factor is reused for row costs that moved by up to 5%).
    """

    def __init__(self, factor):
        self.factor = factor

    def __call__(self, r: np.ndarray) -> np.ndarray:
        import scipy.linalg as la

        return la.cho_solve(self.factor, r, check_finite=False)


def unpack_upper(packed: np.ndarray, n: int) -> np.ndarray:
    """The symmetric ``n x n`` matrix whose upper triangle (``np.triu_indices``) is
    ``packed``."""
    H = np.zeros((n, n))
    H[np.triu_indices(n)] = packed
    H += np.triu(H, 1).T
    return H


def hessian_preconditioner(dd, reg, n_weights: int, data_hessian: np.ndarray | None = None):
    """The :class:`HessianCholesky` of the current Newton system: ``diag(R)`` plus the
    data term ``data_hessian`` (symmetric), or the workers' partial Hessians fetched in one
    round trip (``d (d + 1) / 2`` numbers per worker); Jacobi from its diagonal if the sum
    is not positive definite (``lam = 0`` and too few active rows)."""
    import scipy.linalg as la

    if data_hessian is None:
        H = unpack_upper(worker_hessians(dd, dd._call("hessian", n_weights)), n_weights)
    else:
        H = data_hessian.copy()
    H[np.diag_indices(n_weights)] += reg.diagonal(n_weights)
    diag = H.diagonal().copy()
    try:
        # one BLAS thread for small factors: threaded OpenBLAS took 1-340 ms (spin-waiting
        # threads on a busy machine) for a 316 x 316 factor that one thread does in 0.5 ms
        with sparse_solver_threads(n_weights <= _THREADED_FACTOR_MIN):
            return HessianCholesky(la.cho_factor(H, lower=False, overwrite_a=True,
                                                 check_finite=False))
    except la.LinAlgError:
        return Diagonal(np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 1.0))


class HessianRows:
    """The row half of CGLS (:class:`semisup.solvers.cgls.LocalRows`) from the Newton system
    itself, ``H = A_J^T C_J A_J`` and ``[A_J^T z, A_J^T C t]`` as the workers returned them:
    ``q^T C q = p^T H p`` and ``A^T C q = H p`` here, without a round trip."""

    def __init__(self, data_hessian: np.ndarray, started: np.ndarray):
        self.H, self.started = data_hessian, started

    def start(self, x: np.ndarray, rhs_norm: bool):
        n = x.shape[0]
        self.data_r = self.started[:n].copy()
        return self.started[:n], \
            float(np.linalg.norm(self.started[n:])) if rhs_norm else None

    def curvature(self, p: np.ndarray) -> float:
        self.AtCq = self.H @ p
        return float(p @ self.AtCq)

    def update(self, gamma: float) -> np.ndarray:
        self.data_r -= gamma * self.AtCq
        return self.data_r.copy()


def _sparse_rows(dd) -> bool:
    """At most :data:`DIRECT_MAX_ROW_NNZ` non-zeros per row on average, the constant column
    included: the Hessian costs a few CG iterations."""
    return dd.nnz / max(dd.n_rows, 1) + 1 <= DIRECT_MAX_ROW_NNZ


def preconditioner_kind(kind, n_weights: int, dd=None):
    """``"hessian"``, ``"jacobi"`` or None for a ``precondition`` option.  ``"auto"`` and
    True: the Hessian for at most :data:`HESSIAN_MAX_WEIGHTS` weights and sparse rows (see
    :func:`_sparse_rows`; a design ``dd`` must be given), Jacobi otherwise (dense rows:
    a whole Hessian costs ``n d^2`` where the single-machine sketch samples ``4 d`` rows)."""
    if kind in (False, None):
        return None
    if kind in ("auto", True):
        return "hessian" if n_weights <= HESSIAN_MAX_WEIGHTS and dd is not None \
            and _sparse_rows(dd) else "jacobi"
    if kind in ("hessian", "jacobi"):
        return kind
    raise ValueError(f"precondition must be 'auto', 'hessian', 'jacobi' or False on a "
                     f"DistributedDesign, got {kind!r}")


def direct_route(dd, kind, n_weights: int, fused: bool = True) -> bool:
    """Whether the Newton systems come whole to the client (see the module docstring):
    the Hessian preconditioner, the fused calls and sparse rows (:func:`_sparse_rows`)."""
    return fused and preconditioner_kind(kind, n_weights, dd) == "hessian" and _sparse_rows(dd)


class BlockRows:
    """The row half of CGLS (:class:`semisup.solvers.cgls.LocalRows`) on the workers.

    ``fused``: one round trip per iteration instead of two.  The workers return ``q^T C q``
    together with ``A^T C q`` and :meth:`update` forms ``A^T z -= gamma A^T C q`` here
    (mathematically the product the single-machine iteration recomputes from ``z``, which
    needs ``gamma``, hence a second round trip).
    """

    def __init__(self, dd, fused: bool = True, started: np.ndarray | None = None):
        self.dd, self.fused, self.started = dd, fused, started

    def start(self, x: np.ndarray, rhs_norm: bool):
        n = x.shape[0]
        # ``started``: ``[A^T z, A^T C t]`` already returned with the Newton system
        start = self.dd._sum("cg_start", x) if self.started is None else self.started
        self.started = None
        self.n, self.data_r = n, start[:n].copy()
        return start[:n], float(np.linalg.norm(start[n:])) if rhs_norm else None

    def curvature(self, p: np.ndarray) -> float:
        if not self.fused:
            return self.dd._sum("cg_curvature", p)
        step = self.dd._sum("cg_step", p)
        self.AtCq = step[1:]
        return float(step[0])

    def update(self, gamma: float) -> np.ndarray:
        if not self.fused:
            return self.dd._sum("cg_update", gamma, self.n)
        self.data_r -= gamma * self.AtCq
        return self.data_r.copy()


def cgls(dd, reg, x0: np.ndarray, inverse: np.ndarray | None, tol: float, max_iter: int,
         fused: bool = True):
    """:func:`semisup.solvers.cgls.cgls_rows` over the active rows the workers hold.

    Returns ``(x, n_iter, converged)``.
    """
    x = np.array(x0, dtype=np.float64, copy=True)
    res = cgls_rows(BlockRows(dd, fused), reg, x, None if inverse is None else Diagonal(inverse),
                    tol, max_iter, compiled=use_compiled_vectors(x.shape[0]))
    return res.x, res.n_iter, res.converged


def line_search(dd, reg_cross: float, reg_curv: float, summary: np.ndarray,
                known: list | None = None) -> float:
    """Exact line search (eq. 5) from per-block break-point summaries.

    ``summary``: the summed ``[slope, intercept, phi'(probes)]`` of the loss terms
    (:meth:`~semisup.distributed._worker.BlockWorker.slope_summary`); ``known``: the
    workers' break points up to the first probe, already returned (used when the search
    stops there: no round trip).
    """
    slope = reg_curv + summary[0]
    intercept = reg_cross + summary[1]
    deriv = reg_cross + reg_curv * _PROBES + summary[2:]
    if intercept >= 0.0:
        return 0.0
    hits = np.flatnonzero(deriv >= 0.0)
    limit = float(_PROBES[hits[0]]) if hits.size else np.inf
    parts = known if known is not None and limit == _PROBES[0] else \
        dd._call("break_points", limit)
    bp, dslope, dint = (np.concatenate(v) for v in zip(*parts, strict=True))
    return float(_walk(slope, intercept, bp, dslope, dint, np.argsort(bp, kind="stable")))


class BlockMFNRows:
    """The per-row half of L2-SVM-MFN (:class:`semisup.solvers.mfn.LocalMFNRows`) on the
    workers, for :func:`semisup.solvers.mfn.mfn_rows`.

    ``outputs_ready``: the workers' outputs already equal ``X w0``.  Preconditioners: the
    exact Hessian or Jacobi (:func:`preconditioner_kind`).  ``fused``: one round trip per CG
    iteration, and the Newton system and CG's start in one (seeded from the workers'
    outputs); ``False`` keeps the single-machine arithmetic at more round trips.
    """

    def __init__(self, dd, n_weights: int, outputs_ready: bool = False, fused: bool = True,
                 candidates: int = 0, annealing: float | None = None):
        self.dd, self.n, self.outputs_ready, self.fused = dd, n_weights, outputs_ready, fused
        self.candidates, self.annealing = candidates, annealing
        self._started = None
        self.direct = False  # set by l2svm_mfn (direct_route)
        self._loose = False
        self._finished = None

    def start(self, w):
        # mfn_rows starts loose (a first accepted Newton point does not end it) from w=None
        self._loose = w is None
        if self.outputs_ready and w is not None:
            loss = _take(self.dd, "loss")  # returned by the label switch just made
            return self.dd._sum("loss") if loss is None else loss
        return self.dd._sum("outputs", w)

    def newton_system(self) -> int:
        n = self.n
        if self.fused:
            # made with the previous step or acceptance (below) when nothing came between
            out = _take(self.dd, "newton_start")
            if out is None or (self.direct and out.size < 3 + 2 * n + n * (n + 1) // 2):
                # (made ahead without the Hessian: a label switch guessed another route)
                out = _sum_start(self.dd, "newton_start", n, self.direct)
            n_rows, self.moved, self.total = out[:3]
            self._started = out[3:3 + 2 * n]
            if self.direct:
                self._hessian = unpack_upper(out[3 + 2 * n:], n)
        else:
            n_rows, self.moved, self.total = self.dd._sum("newton_system")
        return int(n_rows)

    def preconditioner(self, kind, reg, previous):
        kind = preconditioner_kind(kind, self.n, self.dd)
        if kind is None:
            return None, None
        if self.direct:
            # the Hessian came with the system: a fresh factor costs d^3 / 3 flops here and
            # makes CG on the client converge in one iteration
            return hessian_preconditioner(self.dd, reg, self.n, self._hessian), None
        M = None if previous is None else previous[0]
        # (a Hessian that was not positive definite left a Diagonal: kept under the rule)
        wrong_kind = kind == "jacobi" and isinstance(M, HessianCholesky)
        if M is None or wrong_kind or self.moved > REUSE_PRECONDITIONER * self.total:
            if kind == "hessian":
                return hessian_preconditioner(self.dd, reg, self.n), None
            diag = reg.diagonal(self.n) + self.dd._sum("jacobi_diagonal", self.n)
            return Diagonal(np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 1.0)), None
        return previous

    def cg_rows(self):
        started, self._started = self._started, None
        if self.direct:
            return HessianRows(self._hessian, started)
        return BlockRows(self.dd, self.fused, started)

    def compiled(self) -> bool:
        return use_compiled_vectors(self.n)

    def newton_point(self, w_bar) -> bool:
        self._known = None
        self._point = w_bar
        if self.fused:
            # with the break points of the full step when few terms change activity
            res = self.dd._call("newton_point", w_bar, _PROBES, _BREAK_POINTS_CAP)
            point = res[0][0]
            for r in res[1:]:
                point = point + r[0]
            if all(r[1] is not None for r in res):
                self._known = [r[1] for r in res]
        else:
            point = self.dd._sum("newton_point", w_bar, _PROBES)
        self.summary = point[1:]  # the line search's first pass, in the same round trip
        return point[0] == 0

    def accept_newton_point(self) -> float:
        if not self.fused:
            return self.dd._sum("accept_newton_point")
        if not self._loose:
            # the iteration ends here and finish(w_bar) follows (mfn_rows): its outputs
            # A w_bar (what accepting o_bar gives, the same product) and, within a TSVM, the
            # switch candidates come in this round trip instead of a Newton system nobody
            # would use
            loss = self._finish_call(self._point)
            self._finished = (self.dd.n_calls, self._point, loss)
            return loss
        self._loose = False
        # the next Newton system in the same round trip: used if the iteration goes on
        out = _sum_start(self.dd, "accept_start", self.n, self.direct)
        _keep(self.dd, "newton_start", out[1:])
        return float(out[0])

    def line_search(self, reg_cross: float, reg_curv: float) -> float:
        return line_search(self.dd, reg_cross, reg_curv, self.summary, self._known)

    def step(self, delta: float) -> float:
        if not self.fused:
            return self.dd._sum("step", delta)
        out = _sum_start(self.dd, "step_start", delta, self.n, self.direct)
        _keep(self.dd, "newton_start", out[1:])
        return float(out[0])

    def finish(self, w):
        done, self._finished = self._finished, None
        if done is not None and done[0] == self.dd.n_calls and done[1] is w:
            return done[2], None  # computed by accept_newton_point, no call since
        # drop the round-off of the output updates, as on one machine; outputs stay there
        return self._finish_call(w), None

    def _finish_call(self, w) -> float:
        """The outputs ``A w`` and their loss; with :attr:`candidates` (a TSVM's
        retraining) the first switch candidates at those outputs, kept for
        :meth:`BlockS3VMRows.switch_candidates`; with :attr:`annealing` (a DA w-step's
        ``lam_u``) the transductive and annealing objectives' parts and the next p-step's
        ``g`` sketches, kept for the loop's next reads."""
        m = self.candidates
        if self.annealing is not None and self.fused:
            res = self.dd._call("finish_annealing", w, self.annealing, _SKETCH_LEVELS)
            out = sum(r[0] for r in res)
            _keep(self.dd, "transductive_parts", out[1:3])
            _keep(self.dd, "annealing_parts", out[3:5])
            _keep(self.dd, "compute_g", (self.annealing, [r[1] for r in res]))
            return float(out[0])
        if not m or not self.fused:
            return float(self.dd._sum("finish_outputs", w, 0))
        res = self.dd._call("finish_outputs", w, m)
        _keep(self.dd, "switch_candidates", (m, [r[1:] for r in res]))
        return float(sum(r[0] for r in res))


def l2svm_mfn(dd, reg, n_weights: int, w0: np.ndarray | None = None,
              outputs_ready: bool = False, precondition="auto", fused: bool = True,
              rows: BlockMFNRows | None = None, candidates: int = 0,
              annealing: float | None = None, **options) -> MFNResult:
    """:func:`semisup.solvers.mfn.mfn_rows` over the problem the workers have set up.

    ``outputs`` of the result is ``None``: the outputs stay on the workers.  ``fused``: see
    :class:`BlockRows`; ``rows``: the row object (one that checkpoints, see
    :mod:`semisup.distributed._resume`), a :class:`BlockMFNRows` by default;
    ``candidates``: within a TSVM, the first switch candidates to bring back with the final
    outputs (:meth:`BlockMFNRows.finish`); ``annealing``: within DA, its ``lam_u``: the
    objectives' parts and the next p-step's ``g`` instead; ``options``: those of
    :func:`semisup.solvers.mfn.l2svm_mfn`.
    """
    preconditioner_kind(precondition, n_weights, dd)  # a clear error for an unknown option
    if rows is None:
        rows = BlockMFNRows(dd, n_weights, outputs_ready, fused, candidates, annealing)
    rows.direct = direct_route(dd, precondition, n_weights, rows.fused)
    return mfn_rows(rows, reg, n_weights, w0=w0, precondition=precondition, **options)


def kth_smallest(dd, name: str, k: int, stats=None) -> float:
    """The ``k``-th smallest (1-based) of the per-row vector ``name`` over all blocks.

    Bisection on the value with per-block counts until at most a few thousand candidates
    remain, which are gathered and sorted: ``O(log)`` scalar round trips, no ``n``-vector.
    """
    n, vmin, vmax = stats if stats is not None else _range(dd, name)
    if not 1 <= k <= n:
        raise ValueError(f"k={k} outside 1..{n}")
    lo, hi = np.nextafter(vmin, -np.inf), vmax
    below = 0                      # values <= lo
    inside = n                     # values in (lo, hi]
    while True:
        if inside <= _SELECT_CAP:
            vals = np.sort(np.concatenate(dd._call("values_in", name, lo, hi)))
            return float(vals[k - below - 1])
        mid = lo + 0.5 * (hi - lo)
        if not lo < mid < hi:  # (lo, hi] holds one value, many times
            return float(hi)
        c = dd._sum("count_le", name, mid)
        if c >= k:
            hi, inside = mid, c - below
        else:
            lo, inside, below = mid, inside - (c - below), c


def _range(dd, name: str) -> tuple:
    res = dd._call("value_range", name)
    return (sum(r[0] for r in res), min(r[1] for r in res), max(r[2] for r in res))


def quantile(dd, name: str, q: float, stats=None) -> float:
    """``np.quantile(values, q)`` (linear interpolation) by two selections."""
    stats = stats or _range(dd, name)
    n = stats[0]
    virtual = (n - 1) * q  # numpy's virtual index for the 'linear' method
    lo_i = int(np.floor(virtual))
    t = virtual - lo_i
    lo_i = min(max(lo_i, 0), n - 1)
    hi_i = min(lo_i + 1, n - 1)
    a = kth_smallest(dd, name, lo_i + 1, stats)
    b = a if hi_i == lo_i else kth_smallest(dd, name, hi_i + 1, stats)
    diff = b - a
    return float(b - diff * (1.0 - t)) if t >= 0.5 else float(a + diff * t)


def _merge(lists: list, key_sign: float, m: int) -> np.ndarray:
    """Global first ``m`` of per-block candidate rows ``(value, position, partition)``."""
    rows = np.concatenate(lists) if lists else np.empty((0, 3))
    order = np.lexsort((rows[:, 1], key_sign * rows[:, 0]))
    return rows[order[:m]]


def sketch_quantile(sketches: list, q: float) -> float:
    """The ``q``-quantile of the union of per-worker values, from their quantile sketches.

    ``sketches`` holds, per worker, ``(count, quantiles)``: its values' quantiles at ``m + 1``
    evenly spaced levels ``0, 1/m, ..., 1`` (its minimum and maximum included).  Each
    worker's distribution function is the piecewise-linear one through those points; their
    count-weighted mean is inverted at ``q``.  Exact at ``q = 0`` and ``1``; in between, off
    by at most ``1/m`` of each worker's rows in rank.  It only starts DA's safeguarded
    Newton iteration, whose root does not depend on the start.
    """
    parts = [(n, np.asarray(qs, dtype=np.float64)) for n, qs in sketches if n]
    if not parts:
        raise ValueError("sketch_quantile: no values")
    total = sum(n for n, _ in parts)
    xs = np.unique(np.concatenate([qs for _, qs in parts]))
    cdf = sum(n * np.interp(xs, qs, np.linspace(0.0, 1.0, qs.size)) for n, qs in parts)
    return float(np.interp(q, np.asarray(cdf) / total, xs))


class _BlockGains:
    """``g`` of DA's p-step on the workers, for :func:`semisup.solvers.s3vm.beliefs_root`:
    range and starting quantile from the workers' sketches (:func:`sketch_quantile`), the
    balance as per-block sums."""

    def __init__(self, dd, u: int, sketches: list):
        self.dd, self.u, self.sketches = dd, u, sketches

    def g_range(self) -> tuple[float, float]:
        parts = [qs for n, qs in self.sketches if n]
        return min(float(qs[0]) for qs in parts), max(float(qs[-1]) for qs in parts)

    def g_quantile(self, q: float) -> float:
        return sketch_quantile(self.sketches, q)

    def balance(self, s: float, T: float) -> tuple[float, float]:
        sums = self.dd._sum("balance", s, T)
        return float(sums[0] / self.u), float(sums[1] / self.u)


class BlockS3VMRows:
    """The per-row half of TSVM and DA (:class:`semisup.solvers.s3vm.LocalS3VMRows`) on the
    workers, for :func:`semisup.solvers.s3vm.transductive_svm_rows` and
    :func:`~semisup.solvers.s3vm.deterministic_annealing_rows`.

    Outputs, temporary labels and beliefs stay on the workers; switching merges per-block
    candidate lists, the p-step's root uses per-block sums.  Row costs are the uniform
    ``1/l`` and ``1/u`` (no ``sample_weight``).  Results carry no per-row vectors
    (``labels_u`` and ``beliefs`` are None).
    """

    def __init__(self, dd, n_weights: int):
        self.dd, self.n_weights = dd, n_weights
        self.n_labeled, self.n_unlabeled = dd.n_labeled, dd.n_unlabeled
        # switch candidates fetched with each retraining's final outputs (TSVM only)
        self._candidates = 0
        # a DA w-step's lam_u: the objectives' parts and the next g come back with its
        # final outputs
        self._annealing = None

    # --- both ----------------------------------------------------------------------------
    def supervised(self, reg, opts: dict) -> MFNResult:
        self.dd._call("problem_supervised", self.n_labeled)
        return l2svm_mfn(self.dd, reg, self.n_weights, **opts)

    def outputs(self, w: np.ndarray) -> None:
        self.dd._call("unlabeled_outputs", w)

    def mfn(self, reg, w: np.ndarray, preconditioner0, opts: dict) -> MFNResult:
        return l2svm_mfn(self.dd, reg, self.n_weights, w0=w, outputs_ready=True,
                         preconditioner0=preconditioner0, candidates=self._candidates,
                         annealing=self._annealing, **opts)

    def transductive_objective(self, reg_value: float, lam_u: float) -> float:
        s = _take(self.dd, "transductive_parts")   # with a DA w-step's final outputs
        s = self.dd._sum("transductive_parts") if s is None else s
        l, u = self.n_labeled, self.n_unlabeled
        return reg_value + 0.5 * s[0] / l + (0.5 * lam_u * s[1] / u if u else 0.0)

    # --- TSVM ----------------------------------------------------------------------------
    def initial_labels(self, positive_fraction: float) -> None:
        """``initial_labels`` of :mod:`semisup.solvers.s3vm`: the ``round(r u)`` largest
        outputs, ties to the earliest rows as the stable sort gives."""
        dd, u = self.dd, self.n_unlabeled
        n_pos = int(round(positive_fraction * u))
        if n_pos == 0:
            dd._call("initial_labels", np.inf, {})
            return
        value = kth_smallest(dd, "o_u", u - n_pos + 1)
        per_block = sorted(c for per in dd._call("count_above", "o_u", value) for c in per)
        remaining = n_pos - sum(c[1] for c in per_block)
        ties = {}
        for index, _, eq in per_block:
            take = min(eq, max(remaining, 0))
            ties[index] = take
            remaining -= take
        dd._call("initial_labels", value, ties)

    def set_labels(self, labels_u: np.ndarray) -> None:
        raise ValueError("labels_u0 is not available on a DistributedDesign")

    def problem_transductive(self, lam_cur: float) -> None:
        self._candidates = _FIRST_PAIRS  # switch_pairs' first m without max_switches
        # the loss and the first Newton system of the MFN that follows come back (see
        # BlockMFNRows.start and newton_system)
        n = self.n_weights
        out = _sum_start(self.dd, "problem_transductive", self.n_labeled, self.n_unlabeled, lam_cur,
                           n, direct_route(self.dd, "auto", n))
        _keep(self.dd, "loss", float(out[0]))
        _keep(self.dd, "newton_start", out[1:])

    def switch_candidates(self, m: int) -> tuple:
        """The global first ``m`` of ``L+`` and ``L-`` merged from each block's first ``m``
        (ties by global position); keys are ``(position, partition)``.  Those returned
        with the retraining's final outputs serve for any ``m`` up to theirs (the global
        first ``m`` are among the blocks' first ``m``)."""
        kept = _take(self.dd, "switch_candidates")
        res = kept[1] if kept is not None and kept[0] >= m else \
            self.dd._call("switch_candidates", m)
        p = _merge([r[2] for r in res], 1.0, m)
        q = _merge([r[3] for r in res], -1.0, m)
        return (sum(r[0] for r in res), sum(r[1] for r in res), p[:, 0], p[:, 1:],
                q[:, 0], q[:, 1:])

    def switch(self, to_negative: np.ndarray, to_positive: np.ndarray) -> None:
        moves = ({}, {})
        for keys, move in zip((to_negative, to_positive), moves, strict=True):
            for position, partition in keys:
                move.setdefault(int(partition), []).append(int(position))
        # the loss with the new labels and the first Newton system of the MFN that follows
        # come back (see BlockMFNRows.start and newton_system)
        n = self.n_weights
        out = _sum_start(self.dd, "switch", *moves, n, direct_route(self.dd, "auto", n))
        _keep(self.dd, "loss", float(out[0]))
        _keep(self.dd, "newton_start", out[1:])

    def labels_u(self) -> None:
        return None

    # --- DA ------------------------------------------------------------------------------
    def start_beliefs(self, positive_fraction: float) -> None:
        self.dd._call("start_beliefs", positive_fraction)

    def p_step(self, lam_u: float, temperature: float, positive_fraction: float) -> None:
        """Eq. 9 on the workers.  The beliefs' round trip also brings what DA's loop reads
        next at them: the annealing objective's parts, the w-step's problem
        (:meth:`problem_annealing`) and the start of its MFN (kept, :func:`_keep`)."""
        kept = _take(self.dd, "compute_g")   # with the last w-step's final outputs
        sketches = kept[1] if kept is not None and kept[0] == lam_u else \
            self.dd._call("compute_g", lam_u, _SKETCH_LEVELS)
        s = beliefs_root(_BlockGains(self.dd, self.n_unlabeled, sketches), temperature,
                         positive_fraction)
        n = self.n_weights
        problem = (self.n_labeled, self.n_unlabeled, lam_u, n, direct_route(self.dd, "auto", n))
        out = _sum_start(self.dd, "set_beliefs", s, temperature, problem)
        self._entropy, self._kl = out[0], out[1]
        _keep(self.dd, "annealing_parts", out[2:4])
        _keep(self.dd, "problem_annealing", lam_u)
        _keep(self.dd, "loss", float(out[4]))
        _keep(self.dd, "newton_start", out[5:])

    def entropy(self) -> float:
        return float(self._entropy)

    def kl(self) -> float:
        return float(self._kl)

    def annealing_objective(self, reg_value: float, lam_u: float, temperature: float,
                            entropy: float) -> float:
        s = _take(self.dd, "annealing_parts")   # with the beliefs or the final outputs
        s = self.dd._sum("annealing_parts") if s is None else s
        l, u = self.n_labeled, self.n_unlabeled
        return reg_value + 0.5 * s[0] / l + 0.5 * lam_u / u * s[1] \
            - 0.5 * temperature / u * entropy

    def problem_annealing(self, lam_u: float) -> None:
        self._candidates, self._annealing = 0, lam_u
        if _take(self.dd, "problem_annealing") != lam_u:   # not set up by the p-step
            self.dd._call("problem_annealing", self.n_labeled, self.n_unlabeled, lam_u)

    def keep_best(self) -> None:
        """Nothing to do: the beliefs stay on the workers and are not returned
        (:meth:`best_beliefs` is None), so no round trip keeps a copy."""

    def best_beliefs(self) -> None:
        return None
