"""Client side of the row-partitioned data: :class:`DistributedDesign`.

The rows of ``X`` are cut into partitions (CSR or dense blocks).  Each Dask worker holds its
partitions in one :class:`~semisup.distributed._worker.BlockWorker` actor for as long as the
design lives; the solvers send it ``d``-vectors and scalars and get back the sums over its
blocks, which the client adds up (a two-level reduction tree: blocks within a worker, then
workers).  This is deliberately not a sparse ``dask.array``: its ``dot`` and ``sum`` fail
on scipy.sparse chunks, and an iterative solver extending one task graph per iteration
swamps the scheduler.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from semisup.distributed._worker import BlockWorker, add_blocks, drop_blocks

logger = logging.getLogger("semisup.distributed")


# short calls made once per CG or line-search iteration, or a product with every row like
# one (not the Hessian's updates and rebuilds): run inline on the worker's event loop
_INLINE = frozenset({"cg_step", "cg_curvature", "cg_update", "step", "loss",
                     "accept_newton_point", "count_le", "value_range", "balance", "ping",
                     "newton_point", "break_points", "finish_outputs", "switch_candidates"})


_INLINE_NNZ = 50_000_000  # inline="auto": per-worker non-zeros up to which calls run inline
_PROBE_S = 2.0  # connect attempts to a worker last this long before asking the scheduler
_REPLACEMENT_WAIT_S = 10.0  # after a loss, wait this long for a replacement worker


SUPPORTED_ESTIMATORS = ("L2SVM", "TransductiveSVM", "DeterministicAnnealingSVM",
                        "LinearLapRLS", "PrototypeVectorMachine")
NOT_DISTRIBUTED = (
    "X is a DistributedDesign, whose rows stay on the Dask workers: only "
    + ", ".join(SUPPORTED_ESTIMATORS) + " can fit one (this estimator has no distributed "
    "route, e.g. LapRLS/LapSVM need the whole kernel matrix); pass a numpy array or scipy "
    "sparse matrix instead")


class WorkerLostError(RuntimeError):
    """A worker holding partitions of a :class:`DistributedDesign` was lost during a fit.

    The worker died or stopped answering.

    Parameters
    ----------
    message : str
        The error message.
    workers : iterable of str, default=()
        Addresses of the lost workers, where known; stored sorted as ``workers``.
    """

    def __init__(self, message: str, workers=()):
        super().__init__(message)
        self.workers = sorted(workers)


class WorkerFrozenError(WorkerLostError):
    """A worker did not answer a call within the design's ``timeout``.

    The worker is still listed by the scheduler: a stopped process, a hung thread, a
    partitioned network.

    Parameters
    ----------
    message : str
        The error message.
    workers : iterable of str, default=()
        Addresses of the frozen workers; stored sorted as ``workers``.
    """

    @classmethod
    def timed_out(cls, address: str, method: str, timeout: float) -> WorkerFrozenError:
        """Build the error for a worker that did not answer a call in time.

        Parameters
        ----------
        address : str
            Address of the worker.
        method : str
            Name of the call it did not answer.
        timeout : float
            Seconds waited for the answer.

        Returns
        -------
        WorkerFrozenError
            The error, with ``workers == [address]``.
        """
        return cls(f"worker {address} did not answer {method!r} within timeout={timeout:g} s:"
                   f" it is frozen or unreachable", [address])


class NotDistributedError(TypeError, ValueError):
    """An estimator without a distributed route was given a :class:`DistributedDesign`.

    A ``TypeError``; also a ``ValueError``, what such a refusal raised before.
    """


class DistributedLabels:
    """Stand-in for ``y`` in ``fit(design, design.labels)``: the labels live with the rows."""

    def __init__(self, design: DistributedDesign):
        self.design = design

    def __repr__(self) -> str:
        return f"<labels of {self.design!r}>"

    def __array__(self, dtype=None, copy=None):
        # the labels live with the rows: only an estimator with no distributed route
        # converts them (see DistributedDesign.__array__)
        raise NotDistributedError(NOT_DISTRIBUTED)

    def __len__(self) -> int:
        raise NotDistributedError(NOT_DISTRIBUTED)

    def __bool__(self) -> bool:  # truth testing must not go through __len__
        return True


def _nbytes(obj) -> int:
    """Payload bytes of a call's arguments or result (arrays by size, scalars 8 bytes)."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (tuple, list)):
        return sum(_nbytes(o) for o in obj)
    if isinstance(obj, dict):
        return sum(_nbytes(o) for o in obj.values())
    return 8


class DistributedDesign:
    """Row partitions of ``(X, y)`` held in memory by the workers of a Dask cluster.

    Pass it to the ``fit`` of :class:`~semisup.L2SVM`, :class:`~semisup.TransductiveSVM` or
    :class:`~semisup.DeterministicAnnealingSVM` in place of ``X`` (``y`` is
    ``design.labels`` or ``None``: the labels travel with the rows, ``-1`` marking
    unlabeled ones).  The fit runs the same algorithms as on one machine.

    Parameters
    ----------
    client : distributed.Client
        Client of the cluster.
    parts : sequence
        One entry per partition, in row order: a pair ``(X_part, y_part)`` (scattered from
        here), a pair of ``distributed.Future`` already computed on the cluster (the block
        goes to the worker holding it; see :func:`from_dask_array`) or a callable returning
        the pair, run on the worker (see :func:`from_svmlight_files`).  Partitions may hold
        any mix of labeled and unlabeled rows, or none of either.
    workers : sequence of str, optional
        Worker addresses to use; all workers of ``client`` when omitted.  Partition ``i``
        goes to worker ``i mod n_workers``.
    max_restarts : int, default=1
        When a worker dies (or freezes) during a fit, the partitions it held -- only those
        -- are loaded again onto the live workers holding the fewest rows (read again by
        their loader, recomputed from a dask graph, or scattered again from arrays kept
        here) and the fit resumes from its last completed step (L2SVM, TSVM, DA; see
        :mod:`semisup.distributed._resume`) or starts over (PVM, LinearLapRLS), at most
        this many times per fit; after that a :class:`WorkerLostError` is raised.
    keep_local : bool, default=True
        Keep references to array parts here so that they can be scattered again after a
        worker loss (set False to free the client's memory; recovery then needs loaders or
        dask futures, which are always kept).
    timeout : float, default=600
        Seconds to wait for a worker's answer to one call before declaring it frozen: the
        call fails with a :class:`WorkerFrozenError` naming the worker's address, and the
        partitions it held are reloaded on the other workers (``max_restarts``).
    gather_transduction : bool, default=False
        Fitted estimators' ``transduction_`` (one label per row) is a ``dask.array`` whose
        chunks stay on the workers; ``True`` gathers it into a numpy array on the client
        (``np.asarray(est.transduction_)`` does the same later, while the client lives; a
        fitted estimator pickled for use without the cluster needs the numpy array).
    direct : bool, default=True
        Call the workers straight from the client (one network hop each way); ``False``
        relays every call through the scheduler, for a client that cannot reach the
        workers' addresses.
    inline : bool or "auto", default="auto"
        Run the per-iteration calls (a CG step, the line search's sums) in the worker's
        event loop instead of handing them to its actor thread: two thread switches less
        per call (about 0.3 ms of CPU here), but the worker's event loop (heartbeats) waits
        while such a call runs.  ``"auto"``: when no worker holds more than 5e7 non-zeros
        (a CG step well under a second).
    n_features : int, optional
        Columns of the design.  By default the widest partition's: sparse partitions read
        from separate files end at their own largest index and are widened to it (dense
        partitions must already agree).
    warn_after : float, default=30
        A call still waiting for some worker after this many seconds logs a warning naming
        the worker(s) (logger ``semisup.distributed``), and again every ``warn_after`` s.

    Attributes
    ----------
    n_rows, n_features, n_labeled, nnz : int
    partition_rows : ndarray
        Rows per partition.
    rows_per_worker : dict
        Rows held by each worker (address).
    n_reloaded : int
        Partitions reloaded after worker losses, over the design's life.
    n_resumed : int
        Fits (or MFN solves) resumed from a checkpoint after a worker loss.
    classes : ndarray
        Sorted class labels of the labeled rows.
    bytes_sent, bytes_received, n_calls : int
        Payload counters of the client's calls (reset with :meth:`reset_counters`).
    """

    _semisup_distributed = True  # what the estimators look for (no import of this module)

    def __init__(self, client, parts: Sequence, workers: Sequence[str] | None = None,
                 max_restarts: int = 1, keep_local: bool = True, timeout: float = 600.0,
                 gather_transduction: bool = False, direct: bool = True, inline="auto",
                 n_features: int | None = None, warn_after: float = 30.0):
        if len(parts) == 0:
            raise ValueError("parts is empty: give at least one (X_part, y_part) pair or loader")
        for i, part in enumerate(parts):
            if not callable(part) and not (isinstance(part, (tuple, list)) and len(part) == 2):
                raise ValueError(f"parts[{i}] must be an (X_part, y_part) pair or a callable "
                                 f"returning one, got {type(part).__name__}")
        if n_features is not None and (not isinstance(n_features, (int, np.integer))
                                       or n_features < 1):
            raise ValueError(f"n_features must be a positive integer or None, got "
                             f"{n_features!r}")
        self._n_features_option = None if n_features is None else int(n_features)
        self.client = client
        self._parts = list(parts) if keep_local else \
            [p if callable(p) or _is_future_pair(p) else None for p in parts]
        self._workers = list(workers) if workers is not None else None
        self.max_restarts = int(max_restarts)
        self.gather_transduction = bool(gather_transduction)
        if inline not in (True, False, "auto"):
            raise ValueError(f"inline must be True, False or 'auto', got {inline!r}")
        self.direct, self._inline_option = bool(direct), inline
        self.inline = False
        self.timeout = float(timeout)
        if not (np.isfinite(self.timeout) and self.timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.warn_after = float(warn_after)
        if not self.warn_after > 0:
            raise ValueError(f"warn_after must be a positive number of seconds, got "
                             f"{warn_after!r}")
        self._excluded: set = set()  # frozen workers: never given partitions again
        self._journal = None  # the FitJournal of the fit in progress
        self.n_reloaded = 0
        self.n_resumed = 0
        self.labels = DistributedLabels(self)
        self.reset_counters()
        self._start(list(parts))

    # --- construction --------------------------------------------------------------------
    @classmethod
    def from_arrays(cls, client, X, y, n_partitions: int | None = None,
                    sizes: Sequence[int] | None = None, **kwargs) -> DistributedDesign:
        """Cut ``(X, y)`` into contiguous row partitions and scatter them.

        Parameters
        ----------
        client : distributed.Client
            Client of the cluster.
        X : ndarray or sparse matrix of shape (n_samples, n_features)
            The rows.
        y : array-like of shape (n_samples,)
            Labels, ``-1`` for unlabeled rows.
        n_partitions : int, optional
            Equal partitions (one per worker when neither this nor ``sizes`` is given).
        sizes : sequence of int, optional
            Rows per partition (unbalanced partitions); must sum to ``n_samples``.
        **kwargs
            Passed to :class:`DistributedDesign`.
        """
        X = sp.csr_matrix(X) if sp.issparse(X) else np.asarray(X)
        y = np.asarray(y)
        n = X.shape[0]
        if y.shape != (n,):
            raise ValueError(f"y has shape {y.shape}; expected ({n},), one label per row of X")
        if sizes is None:
            k = n_partitions or len(kwargs.get("workers") or client.scheduler_info()["workers"])
            if not isinstance(k, (int, np.integer)) or k < 1:
                raise ValueError(f"n_partitions must be a positive integer, got {k!r}")
            bounds = np.linspace(0, n, int(k) + 1).astype(np.int64)
        else:
            sizes = np.asarray(sizes, dtype=np.int64)
            if np.any(sizes < 0) or sizes.sum() != n:
                raise ValueError(f"sizes must be non-negative and sum to the {n} rows of X, "
                                 f"got sum {int(sizes.sum())}")
            bounds = np.concatenate([[0], np.cumsum(sizes)])
        parts = [(X[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        return cls(client, parts, **kwargs)

    def _usable_workers(self) -> list:
        alive = set(self.client.scheduler_info()["workers"]) - self._excluded
        preferred = self._workers or sorted(alive)
        workers = [w for w in preferred if w in alive] or sorted(alive)
        if not workers:
            raise WorkerLostError("the cluster has no workers: start some and retry")
        return workers

    def _start(self, parts: list, reload: list | None = None) -> None:
        """Load partitions onto the workers: all of them (``reload=None``), or only the
        partitions ``reload`` (lost with their worker), placed on the least-loaded live
        workers while the others stay where they are."""
        workers = self._usable_workers()
        if reload is None:
            self._actor_by_worker: dict = {}  # worker -> future of its BlockWorker actor
            self._partition_home: dict = {}
            places = self._placement(parts, workers)
        else:
            places = self._rebalanced(reload, workers)
        new: dict[str, list] = {}
        for i, w in places.items():
            new.setdefault(w, []).append(self._entry(i, parts[i], w))
        fresh = [w for w in new if w not in self._actor_by_worker]
        added = [w for w in new if w in self._actor_by_worker]
        futures = [self.client.submit(BlockWorker, new[w], actor=True, workers=[w],
                                      allow_other_workers=False, pure=False) for w in fresh]
        futures += [self.client.submit(add_blocks, self._actor_by_worker[w].key, new[w],
                                       workers=[w], allow_other_workers=False, pure=False)
                    for w in added]
        self._wait_for_actors(futures, fresh + added)
        self._actor_by_worker.update(zip(fresh, futures[:len(fresh)], strict=True))
        for i, w in places.items():
            self._partition_home[i] = (w, self._actor_by_worker[w].key)
        # workers in the caller's order; (address, actor key): one rpc per call (see _call)
        self.workers = [w for w in workers if w in self._actor_by_worker]
        self._actor_futures = [self._actor_by_worker[w] for w in self.workers]
        self._actors = [(w, self._actor_by_worker[w].key) for w in self.workers]
        desc = sorted(d for per in self._call("describe") for d in per)
        widths = {d[2] for d in desc}
        width = self._n_features_option or max(widths | {getattr(self, "n_features", 0)})
        if widths != {width}:
            # shards read separately end at their own largest column index: widen them all
            self._call("set_n_features", int(width))
        self.n_features = int(width)
        self.partition_rows = np.array([d[1] for d in desc], dtype=np.int64)
        self.partition_labeled = np.array([d[3] for d in desc], dtype=np.int64)
        self.n_rows = int(self.partition_rows.sum())
        self.n_labeled = int(self.partition_labeled.sum())
        self.n_unlabeled = self.n_rows - self.n_labeled
        self.nnz = int(sum(d[4] for d in desc))
        per_worker: dict[str, int] = {}
        self.rows_per_worker = {w: 0 for w in self.workers}
        for d in desc:
            self.rows_per_worker[self._partition_home[d[0]][0]] += int(d[1])
            home = self._partition_home[d[0]][0]
            per_worker[home] = per_worker.get(home, 0) + int(d[4])
        self.inline = self._inline_option is True or (
            self._inline_option == "auto" and max(per_worker.values()) <= _INLINE_NNZ)
        labeled = [d[5] for d in desc if d[5].size]
        self.classes = np.unique(np.concatenate(labeled)) if labeled else np.empty(0)
        unl = self.partition_rows - self.partition_labeled
        self._unl_offsets = {i: int(v) for i, v in enumerate(np.cumsum(unl) - unl)}
        rows = self.partition_rows
        self._call("set_row_offsets", {i: int(v) for i, v in enumerate(np.cumsum(rows) - rows)})

    def _wait_for_actors(self, futures: list, workers: list) -> None:
        """Wait for the actors (the partitions loaded); name the workers that fail or hang."""
        from distributed import wait

        try:
            wait(futures, timeout=self.timeout)
        except TimeoutError:
            slow = [w for f, w in zip(futures, workers, strict=True) if f.status == "pending"]
            self._excluded |= set(slow)
            raise WorkerFrozenError.timed_out(", ".join(slow), "load its partitions",
                                              self.timeout) from None
        for f, w in zip(futures, workers, strict=True):
            if f.status == "error":
                exc = f.exception()
                if _looks_lost(exc) or w not in self.client.scheduler_info()["workers"]:
                    self._lost = {w}
                    raise WorkerLostError(f"worker {w} was lost while loading its partitions "
                                          f"({type(exc).__name__}: {exc})") from exc
                raise exc  # the partition's own error (a bad file, mismatched labels)

    def _placement(self, parts: list, workers: list) -> dict:
        """The worker of each partition: where a dask future's data already sits (no copy
        across the network), else round-robin over ``workers``."""
        from_futures = self._future_homes(parts)
        out = {}
        for i, part in enumerate(parts):
            if part is None:
                raise WorkerLostError(
                    f"partition {i} was lost with its worker and cannot be reloaded "
                    f"(keep_local=False and no loader): rebuild the DistributedDesign")
            home = from_futures.get(i)
            out[i] = home if home in workers else workers[i % len(workers)]
        return out

    def _rebalanced(self, partitions: list, workers: list) -> dict:
        """Lost partitions onto the live workers, largest first onto the one holding the
        fewest rows (a replacement worker that joined empty gets them first)."""
        rows = {w: 0 for w in workers}
        for i, (w, _) in self._partition_home.items():
            if w in rows and i not in partitions:
                rows[w] += int(self.partition_rows[i])
        out = {}
        for i in sorted(partitions, key=lambda i: (-int(self.partition_rows[i]), i)):
            if self._parts[i] is None:
                raise WorkerLostError(
                    f"partition {i} was lost with its worker and cannot be reloaded "
                    f"(keep_local=False and no loader): rebuild the DistributedDesign")
            w = min(workers, key=lambda w: (rows[w], workers.index(w)))
            out[i] = w
            rows[w] += int(self.partition_rows[i])
        return out

    def _future_homes(self, parts: list) -> dict:
        futures = {i: p[0] for i, p in enumerate(parts) if _is_future_pair(p)}
        if not futures:
            return {}
        who = self.client.who_has(list(futures.values()))
        return {i: sorted(who.get(f.key, ()) or [None])[0] for i, f in futures.items()}

    def _entry(self, i: int, part, worker: str) -> tuple:
        if callable(part):
            return (i, part)  # a loader run on the worker
        if _is_future_pair(part):
            return (i, *part)  # data already on the cluster: resolved on the worker
        # arrays are scattered straight to their worker (not embedded in the task graph)
        return (i, *self.client.scatter(list(part), workers=[worker], direct=True))

    def restart(self) -> None:
        """Reload the partitions of the workers lost (or frozen) onto the workers alive.

        The partitions of the other workers stay where they are."""
        lost = set(getattr(self, "_lost", set()))
        deadline = time.monotonic() + min(self.timeout, 30.0)
        gone = lost - self._excluded  # a frozen worker stays listed: do not wait for it
        while gone and time.monotonic() < deadline:  # until the scheduler has noticed
            if not gone & set(self.client.scheduler_info()["workers"]):
                break
            time.sleep(0.2)
        # a nanny restarts a killed worker within seconds: wait briefly for as many workers
        # as before, so that the lost partitions spread instead of piling onto survivors
        target = len(self._actor_by_worker)
        deadline = time.monotonic() + min(self.timeout, _REPLACEMENT_WAIT_S)
        while time.monotonic() < deadline:
            alive = set(self.client.scheduler_info()["workers"]) - self._excluded - lost
            if len(alive) >= target:
                break
            time.sleep(0.2)
        alive = set(self.client.scheduler_info()["workers"]) - self._excluded
        dead = [w for w in self._actor_by_worker if w in lost or w not in alive]
        partitions = sorted(i for i, (w, _) in self._partition_home.items() if w in dead)
        for w in dead:
            self._actor_by_worker.pop(w).release()
        logger.warning("reloading %d of %d partitions (lost with worker(s) %s) onto the "
                       "workers alive", len(partitions), len(self._parts), sorted(dead))
        self.n_reloaded = getattr(self, "n_reloaded", 0) + len(partitions)
        try:
            self._start(self._parts, reload=partitions)
        except WorkerLostError:
            raise
        except Exception as exc:
            raise WorkerLostError(f"reloading the partitions failed ({type(exc).__name__}: "
                                  f"{exc})") from exc
        self._lost = set()

    def rebalance(self) -> int:
        """Move partitions onto usable workers that hold none.

        Such workers are a replacement for a lost worker that joined late, or workers
        added to the cluster: each move takes a partition from the worker holding the most
        rows while that lowers the maximum.  The moved partitions are loaded on their new
        worker as after a loss (read again, scattered again, or fetched from the worker
        holding the dask chunk).  Called at the start of every fit.

        Returns
        -------
        int
            The number of partitions moved.
        """
        workers = self._usable_workers()
        empty = [w for w in workers if w not in self._actor_by_worker]
        if not empty or not self._partition_home:
            return 0
        owned: dict[str, list] = {w: [] for w in workers}
        for i, (w, _) in self._partition_home.items():
            owned.setdefault(w, []).append(i)
        load = {w: int(sum(self.partition_rows[i] for i in owned[w])) for w in owned}
        moved: dict[str, list] = {}
        while True:
            src = max(owned, key=lambda w: (load[w], w))
            dst = min(workers, key=lambda w: (load[w], w))
            movable = sorted(owned[src], key=lambda i: self.partition_rows[i])
            if len(movable) < 2 or self._parts[movable[0]] is None:
                break
            i = movable[0]
            r = int(self.partition_rows[i])
            if load[dst] + r >= load[src]:
                break
            owned[src].remove(i)
            owned[dst].append(i)
            load[src] -= r
            load[dst] += r
            moved.setdefault(src, []).append(i)
        if not moved:
            return 0
        drops = [self.client.submit(drop_blocks, self._actor_by_worker[w].key, sorted(idx),
                                    workers=[w], allow_other_workers=False, pure=False)
                 for w, idx in moved.items()]
        self._wait_for_actors(drops, list(moved))
        partitions = sorted(i for idx in moved.values() for i in idx)
        for i in partitions:
            del self._partition_home[i]
        logger.info("moving %d partitions onto worker(s) %s", len(partitions), empty)
        self._start(self._parts, reload=partitions)
        return len(partitions)

    def row_values(self, method: str, *args, dtype=np.int64):
        """Evaluate ``BlockWorker.<method>(partition, *args)`` on every partition.

        The result is one dask array in row order whose chunks stay on the workers
        (nothing is gathered here).  Computed now (the chunks are results, not a pending
        graph), so they survive :meth:`close` and later changes of the workers' state.

        Parameters
        ----------
        method : str
            Name of the worker method; it returns one value per row of its partition.
        *args : object
            Passed on to the method.
        dtype : numpy dtype, default=np.int64
            Data type of the values.

        Returns
        -------
        dask.array.Array of shape (n_rows,)
            The values, chunked by partition.
        """
        import dask
        import dask.array as da
        from distributed import wait

        from semisup.distributed._worker import block_call

        futures = []
        for i in range(len(self.partition_rows)):
            worker, key = self._partition_home[i]
            futures.append(self.client.submit(block_call, key, method, i, *args,
                                              workers=[worker], allow_other_workers=False,
                                              pure=False))
        wait(futures, timeout=self.timeout)
        failed = [f for f in futures if f.status != "finished"]
        if failed:
            self._lost = self._lost_workers()
            raise WorkerLostError(f"computing {method!r} per partition failed on worker(s) "
                                  f"{sorted(self._lost) or '(unknown)'}: {failed[0].exception()}")
        chunks = [da.from_delayed(dask.delayed(f), shape=(int(n),), dtype=dtype)
                  for f, n in zip(futures, self.partition_rows, strict=True)]
        return da.concatenate(chunks)

    def close(self) -> None:
        """Release the workers' blocks."""
        for f in getattr(self, "_actor_futures", []):
            f.release()
        self._actors = []

    def __repr__(self) -> str:
        return (f"DistributedDesign({getattr(self, 'n_rows', '?')} rows x "
                f"{getattr(self, 'n_features', '?')} features, "
                f"{len(getattr(self, 'partition_rows', []))} partitions on "
                f"{len(getattr(self, 'workers', []))} workers)")

    def __getstate__(self):
        raise TypeError("a DistributedDesign holds live handles to a cluster and cannot be "
                        "pickled; pickle the fitted estimator instead")

    def __array__(self, dtype=None, copy=None):
        # Estimators without a distributed route convert X with numpy (scikit-learn's
        # check_array); without this they fail inside float() with a TypeError that names
        # neither the estimator's limits nor the fix.
        raise NotDistributedError(NOT_DISTRIBUTED)

    def __len__(self) -> int:
        raise NotDistributedError(NOT_DISTRIBUTED)

    def __bool__(self) -> bool:  # truth testing must not go through __len__
        return True

    # --- calls ---------------------------------------------------------------------------
    def reset_counters(self) -> None:
        """Zero :attr:`bytes_sent`, :attr:`bytes_received` and :attr:`n_calls`."""
        self.bytes_sent = self.bytes_received = self.n_calls = 0
        self.calls_by_method: dict[str, int] = {}
        self.call_seconds = 0.0

    async def _execute(self, method: str, args: tuple) -> list:
        """``method(*args)`` on every actor, concurrently: the worker's ``actor_execute``
        handler (what :class:`distributed.Actor` calls), without an ``ActorFuture`` and
        a thread switch per worker on the client; exceptions are returned, not raised."""
        from distributed.actor import ProxyRPC
        from distributed.core import send_recv
        from distributed.protocol import to_serialize

        payload = [to_serialize(a) for a in args]
        kwargs = {"separate_thread": False} if self.inline and method in _INLINE else {}

        async def one(address, key):
            call = dict(function=method, actor=key, args=payload, kwargs=kwargs)
            if not self.direct:
                reply = await ProxyRPC(self.client.scheduler, address).actor_execute(**call)
            else:
                pool = self.client.rpc
                comm = await self._connect(address)
                try:
                    reply = await send_recv(comm=comm, op="actor_execute", **call)
                except BaseException:  # includes the cancellation of a frozen worker's call
                    comm.abort()  # a connection left mid-message must not go back to the pool
                    raise
                pool.reuse(address, comm)
            if reply["status"] != "OK":
                raise reply["exception"]
            return reply["result"]

        tasks = {asyncio.ensure_future(one(a, k)): a for a, k in self._actors}
        loop = asyncio.get_running_loop()
        start = loop.time()
        pending = set(tasks)
        while pending:
            waited = loop.time() - start
            if waited >= self.timeout:
                break
            _, pending = await asyncio.wait(
                pending, timeout=min(self.warn_after, self.timeout - waited))
            if pending and loop.time() - start < self.timeout:
                # never a silent stall: name the workers that keep the fit waiting
                logger.warning("worker(s) %s have not answered %r for %.0f s (frozen? the "
                               "call fails after timeout=%.0f s)",
                               sorted(tasks[t] for t in pending), method,
                               loop.time() - start, self.timeout)
        for t in pending:
            t.cancel()
        results = []
        for t in tasks:
            if t in pending:
                results.append(WorkerFrozenError.timed_out(tasks[t], method, self.timeout))
            elif t.cancelled():  # pragma: no cover - only the loop above cancels
                results.append(WorkerFrozenError.timed_out(tasks[t], method, self.timeout))
            elif t.exception() is not None:
                results.append(t.exception())
            else:
                results.append(t.result())
        if pending:
            await asyncio.wait(pending, timeout=1.0)  # let the cancellations finish
        return results

    async def _connect(self, address: str):
        """A pooled connection to ``address``; fails within seconds for a dead worker (the
        pool's own connect retries a refused address for 30 s) but waits up to
        :attr:`timeout` for one the scheduler still lists."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout
        while True:
            remaining = deadline - loop.time()
            try:
                return await self.client.rpc.connect(address, timeout=min(_PROBE_S, remaining))
            except OSError:
                if remaining <= _PROBE_S or \
                        address not in (await self.client.scheduler.identity())["workers"]:
                    raise

    def _call(self, method: str, *args) -> list:
        """Run ``method(*args)`` on every worker's actor at once; their results in order."""
        t0 = time.perf_counter()
        try:
            if any(a is None for a in self._actors):
                raise RuntimeError("a worker's actor handle is gone")
            # the per-worker deadline is inside _execute (it names the frozen worker); this
            # outer one only guards against a client whose event loop itself is stuck
            replies = self.client.sync(self._execute, method, args,
                                       callback_timeout=self.timeout + 30.0)
        except Exception as exc:  # an actor already known lost, or the scheduler gone
            self._lost = self._lost_workers()
            raise WorkerLostError(
                f"worker(s) {sorted(self._lost) or '(unknown)'} holding partitions of this "
                f"design were lost during {method!r} ({type(exc).__name__}: {exc})",
                self._lost) from exc
        results, failed = [], []
        for worker, reply in zip(self.workers, replies, strict=True):
            if isinstance(reply, BaseException):  # one failure per worker, to name lost ones
                failed.append((worker, reply))
            else:
                results.append(reply)
        if failed:
            exc = failed[0][1]
            frozen = {w for w, e in failed if isinstance(e, WorkerFrozenError)}
            # a frozen worker stays listed by the scheduler: never load partitions onto it
            # again in this design
            self._excluded |= frozen
            lost = self._lost_workers() | {w for w, e in failed if _looks_lost(e)} | frozen
            self._lost = lost
            if frozen:
                exc = next(e for w, e in failed if w in frozen)
            if lost:
                # any failure of a worker's call leaves the fit's state unknown
                raise (WorkerFrozenError if frozen else WorkerLostError)(
                    f"worker(s) {sorted(lost)} holding partitions of this design were lost "
                    f"during {method!r} ({type(exc).__name__}: {exc})", lost) from exc
            raise exc
        if self._journal is not None:  # a fit that can resume (see _resume.py)
            self._journal.record(method, args)
        self.n_calls += 1
        self.calls_by_method[method] = self.calls_by_method.get(method, 0) + 1
        self.bytes_sent += _nbytes(args) * len(self._actors)
        self.bytes_received += sum(_nbytes(r) for r in results)
        self.call_seconds += time.perf_counter() - t0
        return results

    def _sum(self, method: str, *args):
        """Sum of the workers' results (the top of the reduction tree)."""
        results = self._call(method, *args)
        total = results[0]
        for r in results[1:]:
            total = total + r
        return total

    def _lost_workers(self) -> set:
        try:
            alive = set(self.client.scheduler_info()["workers"])
        except Exception:  # the scheduler itself is gone
            return set(self.workers)
        return set(self.workers) - alive


def _is_future_pair(part) -> bool:
    """``(X_future, y_future)``: a row block computed on the cluster (a dask chunk)."""
    if callable(part) or not isinstance(part, (tuple, list)):
        return False
    try:
        from distributed import Future
    except ImportError:  # pragma: no cover - the design needs distributed anyway
        return False
    return all(isinstance(p, Future) for p in part)


def _looks_lost(exc: BaseException) -> bool:
    if isinstance(exc, OSError):  # the comm layer's failures (closed, refused, timed out)
        return True
    text = f"{type(exc).__name__} {exc}".lower()
    return any(k in text for k in ("closed", "lost", "commclosed", "timeout", "killed",
                                   "cancel", "connection"))


def is_distributed(X) -> bool:
    """Whether ``X`` is a :class:`DistributedDesign` (without importing Dask)."""
    return bool(getattr(type(X), "_semisup_distributed", False))


Loader = Callable[[], tuple]
