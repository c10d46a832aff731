"""Worker side: the row blocks a worker holds and the per-row state of a fit.

One :class:`BlockWorker` lives on each Dask worker (a ``distributed`` actor, so calls go
straight from the client to the worker without a scheduler round trip).  It keeps its CSR
row blocks in memory for the whole fit, and with them every per-row vector of the solvers
(outputs, active set, CG residual, temporary labels, beliefs): only ``d``-vectors, scalars
and, for designs of few columns, the ``d x d`` Hessian of a Newton system cross the
network.  Each method does its blocks' share of one step of the single-machine algorithm
with the single-machine kernels (:class:`~semisup.solvers.design.Design`,
:class:`~semisup.losses.HingeTerms`, the line search's break points) and returns the sum
over its blocks: the first level of the reduction tree, the client summing the workers'
partials is the second.

This module imports no Dask: the actor is an ordinary class.
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

from semisup._accel import import_numba
from semisup._validation import unlabeled_mask
from semisup.distributed._graph_worker import GraphWorkerMixin
from semisup.losses import HingeTerms, squared_hinge
from semisup.solvers.design import Design
from semisup.solvers.line_search import _break_points
from semisup.solvers.preconditioners import DENSE_SKETCH_DENSITY
from semisup.solvers.s3vm import _expit, binary_entropy, binary_kl, smallest

njit = import_numba().njit


@njit(cache=True, nogil=True)
def _slope_summary(o, ob, rows, y, c, probes):
    """A block's share of ``phi'`` at 0 (slope, intercept) and at the probe steps.

    The first pass of :func:`semisup.solvers.line_search._break_points` without the
    regulariser: the client adds ``R``'s share and finds the first probe where ``phi' >= 0``.
    """
    mapped = rows.shape[0] > 0
    slope = 0.0
    intercept = 0.0
    deriv = np.zeros(probes.shape[0])
    for i in range(y.shape[0]):
        r = rows[i] if mapped else i
        d = ob[r] - o[r]
        if c[i] <= 0.0 or d == 0.0:
            continue
        if y[i] * o[r] < 1.0:
            slope += c[i] * d * d
            intercept += c[i] * (o[r] - y[i]) * d
        for p in range(probes.shape[0]):
            od = o[r] + probes[p] * d
            if y[i] * od < 1.0:
                deriv[p] += c[i] * (od - y[i]) * d
    return slope, intercept, deriv


# rows per chunk of the dense Hessian products (bounds the temporary copy of the rows)
_GRAM_CHUNK = 8192
# a block's Hessian is rebuilt from its rows after this many updates by changed rows
_GRAM_REFRESH = 64
_TRIU: dict = {}


def _token() -> int:
    """A new name for a worker's Hessian (the client's copy must name the same one)."""
    return int.from_bytes(os.urandom(7), "little")


def _triu(n: int) -> tuple:
    """``np.triu_indices(n)``, kept (the Hessian is packed at every Newton step)."""
    if n not in _TRIU:
        _TRIU.clear()
        _TRIU[n] = np.triu_indices(n)
    return _TRIU[n]


@njit(cache=True, nogil=True)
def _csr_gram_upper(indptr, indices, data, rows, cost, n_features, scaling, intercept, out):
    """Upper triangle of ``sum_k cost_k a_k a_k^T`` over the CSR rows ``rows`` (sorted column
    indices), the constant column ``scaling`` last when ``intercept``: ``O(nnz_row^2)`` per
    row."""
    for k in range(rows.shape[0]):
        r = rows[k]
        c = cost[k]
        if c == 0.0:
            continue
        a, b = indptr[r], indptr[r + 1]
        for p in range(a, b):
            i = indices[p]
            v = c * data[p]
            for q in range(p, b):
                out[i, indices[q]] += v * data[q]
            if intercept:
                out[i, n_features] += v * scaling
        if intercept:
            out[n_features, n_features] += c * scaling * scaling


def weighted_gram(A, cost: np.ndarray) -> np.ndarray:
    """Upper triangle of ``A^T diag(cost) A``, dense ``(n_weights, n_weights)`` (bias last;
    the strict lower triangle is zero).

    The data term of the Hessian of eq. 4 (``R + A_j^T C_j A_j``) over the rows of the
    :class:`~semisup.solvers.design.Design` ``A``.  Sparse rows through a compiled pass,
    ``O(nnz_row^2)`` per row; dense rows, or sparse ones dense enough for BLAS to win
    (pixels; the density rule of :func:`semisup.solvers.preconditioners.sketched_cholesky`),
    through BLAS in chunks of rows.
    """
    d = A.shape[1]
    out = np.zeros((d, d))
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    if A.sparse and A.nnz <= DENSE_SKETCH_DENSITY * A.n_rows * A.n_features:
        X = A.X
        _csr_gram_upper(X.indptr, X.indices, X.data, A.rows, cost, A.n_features,
                        A.intercept_scaling, A.fit_intercept, out)
        return out
    for start in range(0, A.n_rows, _GRAM_CHUNK):
        chunk = np.arange(start, min(start + _GRAM_CHUNK, A.n_rows))
        M = A.restrict(chunk).materialize()
        if sp.issparse(M):
            M = M.toarray()
        out += M.T @ (M * cost[chunk, None])
    return np.triu(out)


def _stack(rows: list) -> np.ndarray:
    return np.concatenate(rows) if rows else np.empty((0, 3))


class _Block:
    """One CSR row block: its labels and where its rows sit in the global order."""

    def __init__(self, index: int, X, y):
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=np.float64)
            X.sort_indices()
        else:
            X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.asarray(y)
        if y.shape != (X.shape[0],):
            raise ValueError(f"partition {index}: y has shape {y.shape}, expected "
                             f"({X.shape[0]},) (one label per row of its X)")
        self.index = index
        self.X = X
        self.y = y
        unl = unlabeled_mask(y)
        self.lab = np.flatnonzero(~unl)
        self.unl = np.flatnonzero(unl)
        self.l, self.u = self.lab.size, self.unl.size
        self.unl0 = 0  # position of this block's first unlabeled row among all unlabeled rows
        self.row0 = 0  # position of this block's first row among all rows
        self.M_cost = None  # row costs the client's preconditioner was built for
        self.design = None

    # --- per-problem state -------------------------------------------------------------
    def prepare(self, fit_intercept: bool, intercept_scaling: float, classes) -> None:
        # labeled rows first, then unlabeled, as the single-machine estimators order them
        self.design = Design(self.X, fit_intercept, intercept_scaling).restrict(
            np.concatenate([self.lab, self.unl]))
        self.y_index = np.searchsorted(classes, self.y[self.lab])

    def set_problem(self, terms: HingeTerms, labeled_only: bool) -> None:
        self.A = self.design.restrict(np.arange(self.l)) if labeled_only else self.design
        self.terms = terms
        self.o = np.zeros(self.A.n_rows)
        self.G_cost = None  # row costs in the worker's Hessian (BlockWorker.hessian): none

    def changed_rows(self) -> np.ndarray | None:
        """Rows whose cost differs from the one in the worker's Hessian; None when that
        Hessian must be rebuilt: another problem, half the active rows changed (a new
        ``lam_u``, DA's beliefs), or :data:`_GRAM_REFRESH` updates made."""
        rc, held = self.row_cost, self.G_cost
        if held is None or held.shape != rc.shape or self.G_updates >= _GRAM_REFRESH:
            return None
        changed = np.flatnonzero(rc != held)
        return changed if 2 * changed.size < max(self.A_j.n_rows, 1) else None

    def update_gram(self, G: np.ndarray, changed: np.ndarray | None) -> None:
        """Add this block's share to the worker's Hessian ``G``: all its active rows
        (``changed`` None, ``G`` being rebuilt) or the cost changes of ``changed``."""
        rc = self.row_cost
        if changed is None:
            if self.A_j.n_rows:
                G += weighted_gram(self.A_j, self.cost_j)
            self.G_cost, self.G_updates = rc.copy(), 0
        elif changed.size:
            G += weighted_gram(self.A.restrict(changed), rc[changed] - self.G_cost[changed])
            self.G_cost[changed] = rc[changed]
            self.G_updates += 1


def block_call(key: str, method: str, index: int, *args):
    """Task run on a worker: ``method(index, *args)`` of the :class:`BlockWorker` actor
    ``key`` living there (local memory, no call through the network)."""
    from distributed import get_worker

    return getattr(get_worker().state.actors[key], method)(index, *args)


def add_blocks(key: str, parts) -> None:
    """Task run on a worker: load ``parts`` into the :class:`BlockWorker` actor ``key``
    living there (partitions reloaded after another worker was lost)."""
    from distributed import get_worker

    get_worker().state.actors[key].add_parts(parts)


def drop_blocks(key: str, indices) -> None:
    """Task run on a worker: forget the partitions ``indices`` (moved to another worker)."""
    from distributed import get_worker

    actor = get_worker().state.actors[key]
    drop = set(indices)
    actor.blocks = [b for b in actor.blocks if b.index not in drop]


class BlockWorker(GraphWorkerMixin):
    """The blocks of one worker and the state of the fit in progress over them.

    Parameters
    ----------
    parts : list of (int, X, y) or (int, callable)
        Partition number and its rows: the arrays, or a function returning ``(X, y)`` run
        here on the worker (a reader of the partition's file).
    """

    def __init__(self, parts):
        self.blocks = []
        self.add_parts(parts)

    def add_parts(self, parts) -> None:
        """Load more partitions (a loader run here, or the arrays); blocks in row order."""
        for part in parts:
            if len(part) == 2:
                index, loader = part
                X, y = loader()
            else:
                index, X, y = part
            self.blocks.append(_Block(index, X, y))
        self.blocks.sort(key=lambda b: b.index)

    # --- layout ------------------------------------------------------------------------
    def ping(self) -> float:
        """Nothing: the fixed cost of a call (benchmarks/bench_distributed.py)."""
        return 0.0

    def describe(self) -> list:
        """``(partition, n_rows, n_features, n_labeled, nnz, labeled classes)`` per block."""
        out = []
        for b in self.blocks:
            nnz = b.X.nnz if sp.issparse(b.X) else b.X.size
            out.append((b.index, b.X.shape[0], b.X.shape[1], b.l, int(nnz),
                        np.unique(b.y[b.lab])))
        return out

    def set_n_features(self, n_features: int) -> None:
        """Widen every block to ``n_features`` columns (the missing ones are zero)."""
        for b in self.blocks:
            n, d = b.X.shape
            if d == n_features:
                continue
            if d > n_features or not sp.issparse(b.X):
                raise ValueError(
                    f"partition {b.index} has {d} columns and cannot take {n_features} "
                    f"(dense partitions must agree; n_features must be at least the widest "
                    f"partition's): give every partition the same columns")
            b.X = sp.csr_matrix((b.X.data, b.X.indices, b.X.indptr), shape=(n, n_features))

    def prepare(self, fit_intercept: bool, intercept_scaling: float, classes,
                unl_offsets: dict) -> None:
        for b in self.blocks:
            b.unl0 = unl_offsets[b.index]
            b.prepare(fit_intercept, intercept_scaling, classes)

    def set_binary(self, positive: int) -> int:
        """``+1/-1`` targets of the labeled rows for class ``classes[positive]``; positives."""
        n = 0
        for b in self.blocks:
            b.y_pm = np.where(b.y_index == positive, 1.0, -1.0)
            n += int(np.count_nonzero(b.y_pm > 0))
        return n

    # --- problems: which hinge terms the finite Newton method minimises -------------------
    def problem_supervised(self, n_labeled: int) -> None:
        """Terms of the labeled rows, cost ``1/l`` (TSVM and DA's first step, L2SVM)."""
        for b in self.blocks:
            b.set_problem(HingeTerms(b.y_pm, np.full(b.l, 1.0 / n_labeled)), True)

    def problem_costs(self, cost_positive: float, cost_negative: float) -> None:
        """L2SVM terms: class costs per labeled row."""
        for b in self.blocks:
            cost = np.where(b.y_pm > 0, cost_positive, cost_negative)
            b.set_problem(HingeTerms(b.y_pm, cost), True)

    def problem_transductive(self, n_labeled: int, n_unlabeled: int, lam_cur: float,
                             n_weights: int = 0, hessian: bool = False):
        """TSVM terms: labeled rows and unlabeled rows with their temporary labels.

        With ``n_weights``, what the MFN retraining that follows starts with, in the same
        round trip (as :meth:`switch`): ``[loss at the current outputs, newton_start...]``.
        """
        for b in self.blocks:
            if not hasattr(b, "tsvm_y"):
                b.tsvm_y = np.concatenate([b.y_pm, b.labels_u])
                b.tsvm_cost = np.empty(b.l + b.u)
                b.tsvm_cost[:b.l] = 1.0 / n_labeled
            b.tsvm_cost[b.l:] = lam_cur / n_unlabeled
            o = getattr(b, "o", None)
            b.set_problem(HingeTerms(b.tsvm_y, b.tsvm_cost), False)
            if o is not None and o.shape[0] == b.l + b.u:
                b.o = o
        if not n_weights:
            return None
        return self._then_start([self.loss()], n_weights, hessian)

    def problem_annealing(self, n_labeled: int, n_unlabeled: int, lam_u: float) -> None:
        """DA terms: labeled rows, and every unlabeled row twice (+1 with ``p``, -1 with 1-p)."""
        for b in self.blocks:
            l, u = b.l, b.u
            unl = np.arange(l, l + u)
            rows = np.concatenate([np.arange(l), unl, unl])
            y = np.concatenate([b.y_pm, np.ones(u), -np.ones(u)])
            cost = np.empty(l + 2 * u)
            cost[:l] = 1.0 / n_labeled
            cost[l:l + u] = lam_u * b.p / n_unlabeled
            cost[l + u:] = lam_u * (1.0 - b.p) / n_unlabeled
            o = b.o
            b.set_problem(HingeTerms(y, cost, rows=rows, n_rows=l + u), False)
            b.o = o

    def clear_problem(self) -> None:
        for b in self.blocks:
            for name in ("tsvm_y", "tsvm_cost", "labels_u", "p", "q", "g"):
                b.__dict__.pop(name, None)

    # --- L2-SVM-MFN ----------------------------------------------------------------------
    def outputs(self, w) -> float:
        """``o = A w`` over the problem rows (zero when ``w`` is None); the loss there."""
        total = 0.0
        for b in self.blocks:
            b.o = np.zeros(b.A.n_rows) if w is None else b.A.matvec(w)
            total += b.terms.value(b.o)
        return total

    def finish_outputs(self, w, m: int = 0):
        """:meth:`outputs` (the end of an MFN: the outputs recomputed from ``w``, without
        the round-off of their updates) and, with ``m > 0``, the TSVM's
        :meth:`switch_candidates` at those outputs in the same round trip: ``loss`` or
        ``(loss, n_pos, n_neg, pos, neg)``."""
        loss = self.outputs(w)
        return (loss, *self.switch_candidates(m)) if m else loss

    def finish_annealing(self, w, lam_u: float, levels: int) -> tuple:
        """The end of a DA w-step: :meth:`finish_outputs`, then what DA's loop reads next
        at those outputs, in the same round trip: ``([loss, transductive_parts...,
        annealing_parts...], compute_g's sketch)`` (:meth:`compute_g` for the next
        p-step)."""
        loss = self.outputs(w)
        head = np.concatenate([[loss], self.transductive_parts(), self.annealing_parts()])
        return head, self.compute_g(lam_u, levels)

    def newton_system(self) -> np.ndarray:
        """Active set ``j(w)`` and the rows of eq. 4; returns ``[rows, l1 change of the row
        costs since the preconditioner was built, their sum then]`` (the reuse rule of
        :meth:`semisup.solvers.mfn.LocalMFNRows.preconditioner`; inf when it was built for
        other rows)."""
        n_rows, moved, total = 0, 0.0, 0.0
        for b in self.blocks:
            b.active = b.terms.active(b.o)
            rows, b.cost_j, b.target_j = b.terms.newton_system(b.active)
            b.A_j = b.A.restrict(rows)
            b.rows_j = rows
            n_rows += rows.size
            b.row_cost = np.zeros(b.A.n_rows)
            b.row_cost[rows] = b.cost_j
            if b.M_cost is None or b.M_cost.shape != b.row_cost.shape:
                moved = np.inf
            else:
                moved += float(np.abs(b.row_cost - b.M_cost).sum())
                total += float(b.M_cost.sum())
        return np.array([n_rows, moved, total])

    def jacobi_diagonal(self, n_weights: int) -> np.ndarray:
        """``diag(A_j^T C A_j)``; records the row costs the preconditioner is built for."""
        out = np.zeros(n_weights)
        for b in self.blocks:
            b.M_cost = b.row_cost.copy()
            if b.A_j.n_rows:
                out += b.A_j.weighted_column_sq(b.cost_j)
        return out

    def hessian(self, n_weights: int) -> tuple:
        """The data term of the Hessian of eq. 4, ``A_j^T C_j A_j`` summed over the blocks,
        as a message for the client's copy of it (see
        :func:`semisup.distributed._solvers.worker_hessians`): ``("full", token, upper
        triangle)`` (row-major, ``np.triu_indices``, ``d (d + 1) / 2`` numbers) or, when
        few entries changed, ``("delta", previous token, token, positions, additions)``
        into that triangle.  Records the row costs the preconditioner is built for, as
        :meth:`jacobi_diagonal`.

        The worker keeps this sum (``d^2`` floats) and the row costs it holds, and updates
        it with the rows whose cost changed since (rows entering or leaving the active set:
        a few per Newton step once the active set settles, each adding ``nnz_row^2 / 2``
        entries); it is rebuilt for a new problem, when half a block's active rows changed
        (a new ``lam_u``, DA's beliefs) and after :data:`_GRAM_REFRESH` updates (the
        round-off of the updates stays at that of a few sums).  The client applies a delta
        with the same additions as here, so its copy is this one bit for bit.
        """
        changed = [b.changed_rows() for b in self.blocks]
        rebuild = getattr(self, "G", None) is None or self.G.shape[0] != n_weights or \
            self.G_blocks != [b.index for b in self.blocks] or any(c is None for c in changed)
        if rebuild:
            self.G = np.zeros((n_weights, n_weights))
            self.G_blocks = [b.index for b in self.blocks]
            for b in self.blocks:
                b.M_cost = b.row_cost.copy()
                b.update_gram(self.G, None)
            self.G_token = _token()
            return self.hessian_full()
        D = np.zeros((n_weights, n_weights))
        for b, c in zip(self.blocks, changed, strict=True):
            b.M_cost = b.row_cost.copy()
            b.update_gram(D, c)
        self.G += D
        rows, cols = _triu(n_weights)
        packed = D[rows, cols]
        where = np.flatnonzero(packed)
        previous, self.G_token = self.G_token, _token()
        if 3 * where.size > 2 * packed.size:  # 12 bytes per changed entry against 8
            return self.hessian_full()
        return ("delta", previous, self.G_token, where.astype(np.int32), packed[where])

    def hessian_full(self) -> tuple:
        """``("full", token, upper triangle)`` of the Hessian held (:meth:`hessian`), for a
        client whose copy is stale (a call whose results it did not read)."""
        rows, cols = _triu(self.G.shape[0])
        return ("full", self.G_token, self.G[rows, cols])

    def newton_start(self, n_weights: int, hessian: bool = False) -> np.ndarray:
        """:meth:`newton_system` and :meth:`cg_start` in one round trip, CGLS seeded at the
        current ``w``: ``z = C (t - o_j)`` with the outputs held here (``o_j = A_j w`` up to
        the round-off of the output updates, which the Newton iteration tolerates as it
        does CG's).  Returns ``[rows, moved, total, A_j^T z, A_j^T C t]``; with ``hessian``
        that and :meth:`hessian`'s message (the whole Newton system of eq. 4 in one round
        trip: the client then solves it without the workers)."""
        head = self.newton_system()
        n = n_weights
        out = np.zeros(3 + 2 * n)
        out[:3] = head
        for b in self.blocks:
            b.z = b.cost_j * (b.target_j - b.o[b.rows_j])
            b.Cq = np.empty(b.A_j.n_rows)
            if b.A_j.n_rows and b.A.sparse and not b.A._compiled:
                # the numpy path would slice the active rows out of X (about a millisecond
                # per block, in scipy's index checks) for these two products alone on the
                # Hessian route: the same sums over the problem's rows, zero elsewhere
                m = b.A.n_rows
                out[3:3 + n] += b.A.rmatvec(np.bincount(b.rows_j, b.z, m))
                out[3 + n:] += b.A.rmatvec(np.bincount(b.rows_j, b.cost_j * b.target_j, m))
            elif b.A_j.n_rows:
                out[3:3 + n] += b.A_j.rmatvec(b.z)
                out[3 + n:] += b.A_j.rmatvec(b.cost_j * b.target_j)
        return (out, self.hessian(n)) if hessian else out

    def _then_start(self, head: list, n_weights: int, hessian: bool):
        """``[head..., newton_start...]`` (and the Hessian's message with ``hessian``)."""
        start = self.newton_start(n_weights, hessian)
        if hessian:
            return np.concatenate([head, start[0]]), start[1]
        return np.concatenate([head, start])

    def step_start(self, delta: float, n_weights: int, hessian: bool) -> np.ndarray:
        """:meth:`step` and the next Newton step's :meth:`newton_start` in one round trip
        (wasted only after the last step of an MFN): ``[loss, newton_start...]``."""
        return self._then_start([self.step(delta)], n_weights, hessian)

    def accept_start(self, n_weights: int, hessian: bool) -> np.ndarray:
        """:meth:`accept_newton_point` and the next :meth:`newton_start` in one round trip."""
        return self._then_start([self.accept_newton_point()], n_weights, hessian)

    def cg_start(self, x0) -> np.ndarray:
        """``z = C (t - A_j x0)``; returns ``[A_j^T z, A_j^T C t]`` stacked."""
        n = x0.shape[0]
        out = np.zeros(2 * n)
        for b in self.blocks:
            b.z = b.cost_j * (b.target_j - b.A_j.matvec(x0))
            b.Cq = np.empty(b.A_j.n_rows)
            if b.A_j.n_rows:
                out[:n] += b.A_j.rmatvec(b.z)
                out[n:] += b.A_j.rmatvec(b.cost_j * b.target_j)
        return out

    def cg_curvature(self, p) -> float:
        """``q = A_j p``, ``Cq = C q``; returns ``q^T C q``."""
        total = 0.0
        for b in self.blocks:
            if b.A_j.n_rows:
                q = b.A_j.matvec(p)
                np.multiply(b.cost_j, q, out=b.Cq)
                total += float(q @ b.Cq)
        return total

    def cg_update(self, gamma: float, n_weights: int) -> np.ndarray:
        """``z -= gamma C q``; returns ``A_j^T z``."""
        out = np.zeros(n_weights)
        for b in self.blocks:
            if b.A_j.n_rows:
                b.z -= gamma * b.Cq
                out += b.A_j.rmatvec(b.z)
        return out

    def cg_step(self, p) -> np.ndarray:
        """``q = A_j p``; returns ``[q^T C q, A_j^T C q]`` (one round trip per CG iteration)."""
        out = np.zeros(p.shape[0] + 1)
        for b in self.blocks:
            if b.A_j.n_rows:
                q = b.A_j.matvec(p)
                np.multiply(b.cost_j, q, out=b.Cq)
                out[0] += float(q @ b.Cq)
                out[1:] += b.A_j.rmatvec(b.Cq)
        return out

    def newton_point(self, w_bar, probes, cap: int = 0):
        """``o_bar = A w_bar``; returns ``[#terms whose activity differs from j(w)]`` followed
        by :meth:`slope_summary` (the line search's first pass, in the same round trip).

        With ``cap > 0`` returns ``(that vector, break points)``: :meth:`break_points` up to
        the first probe (the full Newton step), which the line search needs when ``phi'`` is
        non-negative there (the usual case), if at most ``cap`` terms changed activity (each
        such term has one break point in ``(0, 1]``), else None."""
        changed = 0
        for b in self.blocks:
            b.o_bar = b.A.matvec(w_bar)
            changed += int(np.count_nonzero(b.terms.active(b.o_bar) != b.active))
        out = np.concatenate([[changed], self.slope_summary(probes)])
        if not cap:
            return out
        if changed == 0:
            return out, (np.empty(0),) * 3
        return out, self.break_points(float(probes[0])) if changed <= cap else None

    def accept_newton_point(self) -> float:
        total = 0.0
        for b in self.blocks:
            b.o = b.o_bar
            total += b.terms.value(b.o)
        return total

    def slope_summary(self, probes) -> np.ndarray:
        """``[slope, intercept, phi'(probes)...]`` of the blocks' terms (no regulariser)."""
        out = np.zeros(2 + probes.shape[0])
        for b in self.blocks:
            t = b.terms
            s, i, d = _slope_summary(b.o, b.o_bar, t._map, t.y, t.cost, probes)
            out[0] += s
            out[1] += i
            out[2:] += d
        return out

    def break_points(self, limit: float) -> tuple:
        """Break points in ``(0, limit]`` with the slope and intercept changes of ``phi'``."""
        probes = np.array([limit]) if np.isfinite(limit) else np.empty(0)
        parts = []
        for b in self.blocks:
            t = b.terms
            # an infinite regulariser share makes phi' >= 0 at the single probe: the kernel
            # then collects exactly the break points up to ``limit``
            _, _, bp, ds, di = _break_points(b.o, b.o_bar, t._map, t.y, t.cost, np.inf, 0.0,
                                             probes, t._margin)
            parts.append((bp, ds, di))
        return tuple(np.concatenate(v) for v in zip(*parts, strict=True)) if parts else \
            (np.empty(0),) * 3

    def step(self, delta: float) -> float:
        """``o += delta (o_bar - o)``; the loss at the new outputs."""
        total = 0.0
        for b in self.blocks:
            b.o += delta * (b.o_bar - b.o)
            total += b.terms.value(b.o)
        return total

    # --- selection over the unlabeled rows (initial labels, DA's quantile) ----------------
    def _values(self, name: str) -> list:
        if name == "o_u":
            return [b.o[b.l:] for b in self.blocks]
        return [getattr(b, name) for b in self.blocks]

    def loss(self) -> float:
        """The hinge terms' value at the current outputs."""
        return sum(b.terms.value(b.o) for b in self.blocks)

    def unlabeled_outputs(self, w) -> None:
        """``o = A w`` over labeled and unlabeled rows (the state TSVM and DA start from)."""
        for b in self.blocks:
            b.o = b.design.matvec(w)

    def value_range(self, name: str) -> tuple:
        """``(count, min, max)`` of the per-row vector ``name``."""
        n, vmin, vmax = 0, np.inf, -np.inf
        for v in self._values(name):
            n += v.size
            if v.size:
                vmin, vmax = min(vmin, float(v.min())), max(vmax, float(v.max()))
        return n, vmin, vmax

    def count_le(self, name: str, t: float) -> int:
        """How many values of ``name`` are ``<= t``."""
        return sum(int(np.count_nonzero(v <= t)) for v in self._values(name))

    def values_in(self, name: str, lo: float, hi: float) -> np.ndarray:
        """The values of ``name`` in ``(lo, hi]``."""
        found = [v[(v > lo) & (v <= hi)] for v in self._values(name)]
        return np.concatenate(found) if found else np.empty(0)

    def count_above(self, name: str, value: float) -> list:
        """Per block: ``(partition, #values > value, #values == value)``."""
        return [(b.index, int(np.count_nonzero(v > value)), int(np.count_nonzero(v == value)))
                for b, v in zip(self.blocks, self._values(name), strict=True)]

    def initial_labels(self, value: float, ties: dict) -> None:
        """Temporary labels: +1 above ``value``, and the first ``ties[b]`` rows equal to it."""
        for b in self.blocks:
            o_u = b.o[b.l:]
            labels = np.where(o_u > value, 1.0, -1.0)
            eq = np.flatnonzero(o_u == value)
            labels[eq[:ties.get(b.index, 0)]] = 1.0
            b.labels_u = labels

    # --- TSVM switching ------------------------------------------------------------------
    def switch_candidates(self, m: int) -> tuple:
        """Counts of ``L+``/``L-`` and each block's first ``m`` of both, as
        ``(value, global unlabeled position, partition)`` rows in the lists' order."""
        n_pos = n_neg = 0
        pos_c, neg_c = [], []
        for b in self.blocks:
            o_u = b.o[b.l:]
            lab = b.tsvm_y[b.l:]
            pos = np.flatnonzero((lab > 0) & (o_u < 1.0))
            neg = np.flatnonzero((lab < 0) & (o_u > -1.0))
            n_pos += pos.size
            n_neg += neg.size
            p = pos[smallest(o_u[pos], min(m, pos.size))]
            q = neg[smallest(-o_u[neg], min(m, neg.size))]
            part = np.full(p.size, b.index, dtype=np.float64)
            pos_c.append(np.column_stack([o_u[p], b.unl0 + p, part]))
            part = np.full(q.size, b.index, dtype=np.float64)
            neg_c.append(np.column_stack([o_u[q], b.unl0 + q, part]))
        return n_pos, n_neg, _stack(pos_c), _stack(neg_c)

    def switch(self, to_negative: dict, to_positive: dict, n_weights: int = 0,
               hessian: bool = False):
        """Flip the temporary labels at the given global unlabeled positions.

        With ``n_weights``, what the MFN retraining that follows starts with, in the same
        round trip: ``[loss at the current outputs with the new labels, newton_start...]``.
        """
        total = 0.0
        for b in self.blocks:
            lab = b.tsvm_y[b.l:]
            lab[np.asarray(to_negative.get(b.index, []), dtype=np.int64) - b.unl0] = -1.0
            lab[np.asarray(to_positive.get(b.index, []), dtype=np.int64) - b.unl0] = 1.0
            total += b.terms.value(b.o)
        if not n_weights:
            return None
        return self._then_start([total], n_weights, hessian)

    def transductive_parts(self) -> np.ndarray:
        """``[sum_l l_2(y o), sum_u l_2(|o|) ]`` for the transductive objective."""
        out = np.zeros(2)
        for b in self.blocks:
            out[0] += float(np.sum(squared_hinge(b.y_pm * b.o[:b.l])))
            if b.o.shape[0] > b.l:
                out[1] += float(np.sum(np.maximum(0.0, 1.0 - np.abs(b.o[b.l:])) ** 2))
        return out

    # --- deterministic annealing ---------------------------------------------------------
    def start_beliefs(self, r: float) -> None:
        for b in self.blocks:
            b.p = np.full(b.u, r)

    def compute_g(self, lam_u: float, levels: int = 0) -> tuple | None:
        """``g_j = lam_u [l_2(o_j) - l_2(-o_j)]``; keeps the previous beliefs as ``q``.

        With ``levels > 0`` returns ``(count, quantiles)``: this worker's ``g`` at ``levels + 1``
        evenly spaced levels, the sketch from which the client starts the p-step
        (:func:`semisup.distributed._solvers.sketch_quantile`).
        """
        for b in self.blocks:
            o_u = b.o[b.l:]
            b.g = lam_u * (squared_hinge(o_u) - squared_hinge(-o_u))
            b.q = b.p
        if not levels:
            return None
        g = np.concatenate([b.g for b in self.blocks]) if self.blocks else np.empty(0)
        if not g.size:
            return 0, np.empty(0)
        return g.size, np.quantile(g, np.linspace(0.0, 1.0, int(levels) + 1))

    def balance(self, s: float, T: float) -> np.ndarray:
        """``[sum p_j, sum p_j (1 - p_j)]`` at the shift ``s`` (eq. 9)."""
        out = np.zeros(2)
        for b in self.blocks:
            p = _expit((s - b.g) / T)
            out[0] += float(p.sum())
            out[1] += float(np.sum(p * (1.0 - p)))
        return out

    def set_beliefs(self, s: float, T: float, problem: tuple | None = None):
        """``p = expit((s - g)/T)``; returns ``[H(p), KL(p, q)]`` summed over the blocks.

        With ``problem = (n_labeled, n_unlabeled, lam_u, n_weights, hessian)``, what DA's
        loop does next on the workers, in the same round trip: the objective's parts at
        these beliefs (:meth:`annealing_parts`), the w-step's problem
        (:meth:`problem_annealing`) and the start of its MFN (as
        :meth:`problem_transductive`): ``[H, KL, parts..., loss, newton_start...]``.
        """
        out = np.zeros(2)
        for b in self.blocks:
            b.p = _expit((s - b.g) / T)
            out += [binary_entropy(b.p), binary_kl(b.p, b.q)]
        if problem is None:
            return out
        n_labeled, n_unlabeled, lam_u, n_weights, hessian = problem
        head = [*out, *self.annealing_parts()]
        self.problem_annealing(n_labeled, n_unlabeled, lam_u)
        return self._then_start([*head, self.loss()], n_weights, hessian)

    def annealing_parts(self) -> np.ndarray:
        """``[sum_l l_2(y o), sum_u p l_2(o) + (1 - p) l_2(-o)]`` (eq. 6 without ``R``, H)."""
        out = np.zeros(2)
        for b in self.blocks:
            o_u = b.o[b.l:]
            out[0] += float(np.sum(squared_hinge(b.y_pm * b.o[:b.l])))
            out[1] += float(b.p @ squared_hinge(o_u) + (1.0 - b.p) @ squared_hinge(-o_u))
        return out

    # --- results -------------------------------------------------------------------------
    def _block(self, index: int) -> _Block:
        return next(b for b in self.blocks if b.index == index)

    def block_labels(self, index: int, coef, intercept, classes) -> np.ndarray:
        """Transduced labels of partition ``index``'s rows (see :meth:`predict_index`)."""
        b = self._block(index)
        return classes[self._predict_block(b, coef, intercept)]

    @staticmethod
    def _predict_block(b, coef, intercept) -> np.ndarray:
        scores = np.asarray(b.X @ coef.T + intercept)
        idx = (scores[:, 0] > 0).astype(np.int64) if coef.shape[0] == 1 \
            else np.argmax(scores, axis=1)
        idx[b.lab] = b.y_index
        return idx

    def predict_index(self, coef, intercept) -> list:
        """Per block: ``(partition, class index of every row)`` from the fitted hyperplanes
        (labeled rows keep their class); one-vs-rest picks the largest score."""
        return [(b.index, self._predict_block(b, coef, intercept)) for b in self.blocks]
