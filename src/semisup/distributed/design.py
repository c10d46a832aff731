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

from semisup.distributed._worker import BlockWorker

logger = logging.getLogger("semisup.distributed")


# short calls made once per CG or line-search iteration: run inline on the worker's event loop
_INLINE = frozenset({"cg_step", "cg_curvature", "cg_update", "step", "loss",
                     "accept_newton_point", "count_le", "value_range", "balance", "ping"})


_INLINE_NNZ = 50_000_000  # inline="auto": per-worker non-zeros up to which calls run inline
_PROBE_S = 2.0  # connect attempts to a worker last this long before asking the scheduler


class WorkerLostError(RuntimeError):
    """A worker holding partitions of a :class:`DistributedDesign` died during a fit."""


class DistributedLabels:
    """Stand-in for ``y`` in ``fit(design, design.labels)``: the labels live with the rows."""

    def __init__(self, design: DistributedDesign):
        self.design = design

    def __repr__(self) -> str:
        return f"<labels of {self.design!r}>"


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
        here) or a callable returning that pair, run on the worker (e.g. reading the
        partition's file with :func:`semisup.io.read_svmlight`).  Partitions may hold any
        mix of labeled and unlabeled rows, or none of either.
    workers : sequence of str, optional
        Worker addresses to use; all workers of ``client`` when omitted.  Partition ``i``
        goes to worker ``i mod n_workers``.
    max_restarts : int, default=1
        When a worker dies during a fit, the partitions are loaded again onto the workers
        then alive (possible when the parts are callables, or arrays kept here) and the fit
        starts over, at most this many times; after that a :class:`WorkerLostError` is raised.
    keep_local : bool, default=True
        Keep references to array parts here so that they can be scattered again after a
        worker loss (set False to free the client's memory; recovery then needs callables).
    timeout : float, default=600
        Seconds to wait for one call on the workers before declaring them lost.
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

    Attributes
    ----------
    n_rows, n_features, n_labeled, nnz : int
    partition_rows : ndarray
        Rows per partition.
    classes : ndarray
        Sorted class labels of the labeled rows.
    bytes_sent, bytes_received, n_calls : int
        Payload counters of the client's calls (reset with :meth:`reset_counters`).
    """

    _semisup_distributed = True  # what the estimators look for (no import of this module)

    def __init__(self, client, parts: Sequence, workers: Sequence[str] | None = None,
                 max_restarts: int = 1, keep_local: bool = True, timeout: float = 600.0,
                 gather_transduction: bool = False, direct: bool = True, inline="auto"):
        if len(parts) == 0:
            raise ValueError("parts is empty: give at least one (X_part, y_part) pair or loader")
        for i, part in enumerate(parts):
            if not callable(part) and not (isinstance(part, (tuple, list)) and len(part) == 2):
                raise ValueError(f"parts[{i}] must be an (X_part, y_part) pair or a callable "
                                 f"returning one, got {type(part).__name__}")
        self.client = client
        self._parts = list(parts) if keep_local else [p if callable(p) else None for p in parts]
        self._workers = list(workers) if workers is not None else None
        self.max_restarts = int(max_restarts)
        self.gather_transduction = bool(gather_transduction)
        if inline not in (True, False, "auto"):
            raise ValueError(f"inline must be True, False or 'auto', got {inline!r}")
        self.direct, self._inline_option = bool(direct), inline
        self.inline = False
        self.timeout = float(timeout)
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
        X : ndarray or sparse matrix of shape (n_samples, n_features)
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

    def _start(self, parts: list) -> None:
        workers = self._workers or sorted(self.client.scheduler_info()["workers"])
        alive = set(self.client.scheduler_info()["workers"])
        workers = [w for w in workers if w in alive] or sorted(alive)
        if not workers:
            raise WorkerLostError("the cluster has no workers: start some and retry")
        assign: dict[str, list] = {w: [] for w in workers}
        for i, part in enumerate(parts):
            if part is None:
                raise WorkerLostError(
                    f"partition {i} was lost with its worker and cannot be reloaded "
                    f"(keep_local=False and no loader): rebuild the DistributedDesign")
            w = workers[i % len(workers)]
            # arrays are scattered straight to their worker (not embedded in the task graph)
            entry = (i, part) if callable(part) else \
                (i, *self.client.scatter(list(part), workers=[w], direct=True))
            assign[w].append(entry)
        futures = [self.client.submit(BlockWorker, assign[w], actor=True, workers=[w],
                                      allow_other_workers=False, pure=False)
                   for w in workers if assign[w]]
        for f in futures:
            f.result(timeout=self.timeout)
        self._actor_futures = futures
        self.workers = [w for w in workers if assign[w]]
        # (address, actor key): calls go to the actor with one rpc each (see _call)
        self._actors = [(w, f.key) for w, f in zip(self.workers, futures, strict=True)]
        keys = {w: f.key for w, f in zip(self.workers, futures, strict=True)}
        self._partition_home = {entry[0]: (w, keys[w]) for w in self.workers
                                for entry in assign[w]}
        desc = sorted(d for per in self._call("describe") for d in per)
        widths = {d[2] for d in desc}
        if len(widths) != 1:
            raise ValueError(f"the partitions have different numbers of features {sorted(widths)}:"
                             f" give every partition the same columns (pass n_features to the "
                             f"reader)")
        self.n_features = widths.pop()
        self.partition_rows = np.array([d[1] for d in desc], dtype=np.int64)
        self.partition_labeled = np.array([d[3] for d in desc], dtype=np.int64)
        self.n_rows = int(self.partition_rows.sum())
        self.n_labeled = int(self.partition_labeled.sum())
        self.n_unlabeled = self.n_rows - self.n_labeled
        self.nnz = int(sum(d[4] for d in desc))
        per_worker: dict[str, int] = {}
        for d in desc:
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

    def restart(self) -> None:
        """Load the partitions again onto the workers now alive (after a worker loss)."""
        logger.warning("reloading %d partitions onto the workers alive", len(self._parts))
        self._actor_futures = []
        self._actors = []
        lost = getattr(self, "_lost", set())
        deadline = time.monotonic() + min(self.timeout, 30.0)
        while lost and time.monotonic() < deadline:  # until the scheduler has noticed
            if not lost & set(self.client.scheduler_info()["workers"]):
                break
            time.sleep(0.2)
        try:
            self._start(self._parts)
        except WorkerLostError:
            raise
        except Exception as exc:
            raise WorkerLostError(f"reloading the partitions failed ({type(exc).__name__}: "
                                  f"{exc})") from exc

    def row_values(self, method: str, *args, dtype=np.int64):
        """``BlockWorker.<method>(partition, *args)`` for every partition, as one dask array
        in row order whose chunks stay on the workers (nothing is gathered here).

        Computed now (the chunks are results, not a pending graph), so they survive
        :meth:`close` and later changes of the workers' state.
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
                finally:
                    pool.reuse(address, comm)
            if reply["status"] != "OK":
                raise reply["exception"]
            return reply["result"]

        return await asyncio.gather(*(one(a, k) for a, k in self._actors),
                                    return_exceptions=True)

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
            replies = self.client.sync(self._execute, method, args,
                                       callback_timeout=self.timeout)
        except Exception as exc:  # an actor already known lost, or the scheduler gone
            self._lost = self._lost_workers()
            raise WorkerLostError(
                f"worker(s) {sorted(self._lost) or '(unknown)'} holding partitions of this "
                f"design were lost during {method!r} ({type(exc).__name__}: {exc}); the fit "
                f"cannot continue from partial state") from exc
        results, failed = [], []
        for worker, reply in zip(self.workers, replies, strict=True):
            if isinstance(reply, BaseException):  # one failure per worker, to name lost ones
                failed.append((worker, reply))
            else:
                results.append(reply)
        if failed:
            exc = failed[0][1]
            lost = self._lost_workers() | {w for w, e in failed if _looks_lost(e)}
            self._lost = lost
            if lost:
                # any failure of a worker's call leaves the fit's state unknown
                raise WorkerLostError(
                    f"worker(s) {sorted(lost)} holding partitions of this design were lost "
                    f"during {method!r} ({type(exc).__name__}: {exc}); the fit cannot continue "
                    f"from partial state") from exc
            raise exc
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
