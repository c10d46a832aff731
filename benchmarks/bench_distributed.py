"""Distributed CG iterations and fits on a local Dask cluster against the single-process kernel.

Sets: ``mnist`` (even/odd, 60k x 784), ``secstr`` (the 83,679 labeled-pool rows, one-hot) and
``secstr-1.27m`` (those rows followed by the 1,189,472 extra unlabeled windows:
1,273,151 x 315, 19M non-zeros; :func:`_common.secstr_full`).  One CGLS iteration over every
row (all rows active, as in the first Newton system of L2-SVM-MFN, or a TSVM round where every
unlabeled row carries a temporary label) is timed

* in one process: :func:`semisup.solvers.cgls.cgls` on a :class:`~semisup.solvers.design.Design`;
* on a ``LocalCluster`` with 1, 2 and 4 worker processes (one partition per worker), through
  the same :func:`semisup.solvers.cgls.cgls_rows` with the workers' rows
  (:func:`semisup.distributed._solvers.cgls`), fused (one round trip per iteration) and
  optionally unfused (two, the single-machine arithmetic);

with the payload bytes the client sends and receives per iteration, and CPU time per
iteration (client + all workers, from ``time.process_time`` on each: on a shared machine the
wall time measures the contention, the CPU time the work).  Rows without a label (the extra
SecStr windows) get a placeholder class for this timing only: the labels' values do not
change the work of an iteration.  Then (``--parts``)

* ``pvm``: the PVM's ``n``-linear part (``H = K(X, V)`` and the ``m x m`` products, fixed
  prototypes and width), one process against the workers: time, bytes, prototype-label
  difference;
* ``l2svm``: an end-to-end L2-SVM-MFN fit (``L2SVM(solver="mfn")``) on the labeled rows,
  one process against 2 workers: time and relative objective difference;
* ``tsvm``: an end-to-end ``TransductiveSVM`` on all rows (labeled and unlabeled), one
  process against 2 workers: time, objective difference, transduced labels differing.

The labeled rows are ``--labeled`` random rows (mnist, secstr) or the official 10,000-point
split 0 (secstr-1.27m).  The workers precondition CG with Jacobi only; ``--reference``
chooses the single-process fits' preconditioner: ``jacobi`` (the same arithmetic, the
equality check) and/or ``auto`` (the library default, the sketch at these shapes).

Run: ``nice -n 5 python benchmarks/bench_distributed.py [--sets mnist,secstr-1.27m]
[--iters K] [--workers 1,2,4] [--parts cg,pvm,l2svm,tsvm]``
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

from semisup import L2SVM, TransductiveSVM  # noqa: E402
from semisup.regularizers import Ridge  # noqa: E402
from semisup.solvers.cgls import cgls  # noqa: E402
from semisup.solvers.design import Design  # noqa: E402

SETS = ("mnist", "secstr", "secstr-1.27m")


def load(name: str, rows: int | None, n_labeled: int):
    """``X``, labels ``y`` (-1 where none exists) and the fits' targets ``y_semi``."""
    if name not in SETS:
        raise ValueError(f"--sets: unknown set {name!r}; choose from {SETS}")
    if name == "secstr-1.27m":
        X, y_semi, y, _ = C.secstr_full(10000)
    elif name == "mnist":
        X, y = C.mnist_even_odd("train")
    else:
        from semisup.datasets import load_sslbook, one_hot_secstr

        s = load_sslbook("secstr", 10000)
        X = one_hot_secstr(s.X)
        y = (np.asarray(s.y).ravel() > 0).astype(np.int64)
    if rows is not None and rows < X.shape[0]:
        # a random subset (MNIST's rows are sorted by digit)
        keep = np.sort(np.random.default_rng(0).choice(X.shape[0], rows, replace=False))
        X, y = X[keep], y[keep]
        if name == "secstr-1.27m":
            y_semi = y_semi[keep]
    if name != "secstr-1.27m":
        y_semi = C.semi_targets(y, C.pick_labeled(y, min(n_labeled, X.shape[0] // 2)))
    return X.tocsr(), y, y_semi


def cg_targets(y: np.ndarray) -> np.ndarray:
    """``y`` with a placeholder class (alternating 0/1) on rows that have no label, so that
    every row is a term of the timed Newton system."""
    return np.where(y >= 0, y, np.arange(y.size) % 2)


def peak_rss_mib(client=None) -> tuple[float, float]:
    """Peak RSS (MiB) of this process and the largest of the workers' (``VmHWM``; not
    ``ru_maxrss``, which a spawned worker inherits from its parent)."""

    def peak():
        with open("/proc/self/status") as fh:
            return next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM:")) / 1024

    workers = max(client.run(peak).values()) if client is not None else float("nan")
    return peak(), workers


@contextlib.contextmanager
def reference_preconditioner(kind: str):
    """Single-process fits with ``precondition="auto"`` use ``kind``: ``"jacobi"`` (what the
    workers use, so both fits do the same arithmetic) or ``"auto"`` (the library default)."""
    from semisup.solvers import preconditioners

    keep = preconditioners.SKETCH_MAX_WEIGHTS
    if kind == "jacobi":
        preconditioners.SKETCH_MAX_WEIGHTS = 0  # "auto" then never picks the sketch
    try:
        yield
    finally:
        preconditioners.SKETCH_MAX_WEIGHTS = keep


def single_iteration(X, y, iters: int) -> float:
    A = Design(X)
    target = np.where(y > 0, 1.0, -1.0)
    cost = np.ones(X.shape[0])
    reg = Ridge(1e-3)

    def run():
        cgls(A, cost, target, reg, tol=0.0, max_iter=iters, precondition=False)

    return C.best_time(run, repeat=3) / iters


def _worker_cpu(client) -> float:
    return float(sum(client.run(time.process_time).values()))


# how the client reaches the workers' actors: the ``distributed.Actor`` handles (what the
# design used before: a thread switch and an ActorFuture per worker and call, relayed by
# the scheduler unless the client has direct_to_workers), one rpc per worker straight to it,
# and the same with the hot calls run inline on the worker's event loop
CALL_PATHS = {"actor handles": dict(direct=False, inline=False, handles=True),
              "direct": dict(direct=True, inline=False),
              "direct + inline": dict(direct=True, inline=True)}


def _use_actor_handles(dd) -> None:
    """Route ``dd``'s calls through ``distributed.Actor`` handles (the former call path)."""
    handles = [f.result() for f in dd._actor_futures]
    counted = dd._call

    def call(method, *args):
        pending = [getattr(a, method)(*args) for a in handles]
        results = [p.result(timeout=dd.timeout) for p in pending]
        dd.n_calls += 1
        dd.bytes_sent += sum(a.nbytes if isinstance(a, np.ndarray) else 8 for a in args) \
            * len(handles)
        return results

    dd._call = call
    dd._counted_call = counted


def round_trip(client, X, y, path: dict, repeats: int = 200):
    """Wall and CPU (client + workers) of one empty call to every worker."""
    from semisup.distributed import DistributedDesign

    dd = DistributedDesign.from_arrays(client, X[:100], y[:100], direct=path["direct"],
                                       inline=path["inline"])
    if path.get("handles"):
        _use_actor_handles(dd)
    for _ in range(20):
        dd._call("ping")
    best, best_cpu = np.inf, np.inf
    for _ in range(3):
        w0, c0, t0 = _worker_cpu(client), time.process_time(), time.perf_counter()
        for _ in range(repeats):
            dd._call("ping")
        best = min(best, (time.perf_counter() - t0) / repeats)
        best_cpu = min(best_cpu, (time.process_time() - c0 + _worker_cpu(client) - w0)
                       / repeats)
    dd.close()
    return best, best_cpu


def distributed_iteration(client, X, y, iters: int, fused: bool, path: dict | None = None):
    from semisup.distributed import DistributedDesign, _solvers

    path = path or CALL_PATHS["direct + inline"]
    n_workers = len(client.scheduler_info()["workers"])
    dd = DistributedDesign.from_arrays(client, X, y, n_partitions=n_workers,
                                       direct=path["direct"], inline=path["inline"])
    dd._call("prepare", True, 1.0, dd.classes, dd._unl_offsets)
    dd._call("set_binary", 1)
    dd._call("problem_costs", 1.0, 1.0)
    dd._call("outputs", None)
    dd._call("newton_system")   # w = 0: every row active
    reg = Ridge(1e-3)
    x0 = np.zeros(dd.n_features + 1)
    if path.get("handles"):
        _use_actor_handles(dd)
    _solvers.cgls(dd, reg, x0, None, 0.0, 3, fused)  # warm the workers' kernels
    best, best_cpu = np.inf, np.inf
    for _ in range(3):
        dd.reset_counters()
        w0, c0 = _worker_cpu(client), time.process_time()
        t0 = time.perf_counter()
        _solvers.cgls(dd, reg, x0, None, 0.0, iters, fused)
        best = min(best, (time.perf_counter() - t0) / iters)
        c1 = time.process_time()
        best_cpu = min(best_cpu, (c1 - c0 + _worker_cpu(client) - w0) / iters)
    sent = dd.bytes_sent / iters
    received = dd.bytes_received / iters
    calls = dd.n_calls / iters
    dd.close()
    return best, best_cpu, sent, received, calls


def single_cpu_iteration(X, y, iters: int) -> float:
    A = Design(X)
    target = np.where(y > 0, 1.0, -1.0)
    cost = np.ones(X.shape[0])
    reg = Ridge(1e-3)
    cgls(A, cost, target, reg, tol=0.0, max_iter=3, precondition=False)
    best = np.inf
    for _ in range(3):
        c0 = time.process_time()
        cgls(A, cost, target, reg, tol=0.0, max_iter=iters, precondition=False)
        best = min(best, (time.process_time() - c0) / iters)
    return best


def pvm_compare(client, X, y_semi, m: int, ref=None):
    """The PVM with fixed prototypes (the n-linear part), one process vs the workers."""
    from semisup.distributed import DistributedDesign
    from semisup.prototypes import PrototypeVectorMachine
    from semisup.prototypes.prototypes import select_prototypes

    if ref is None:
        V = select_prototypes(X[:20000], m, method="random", random_state=0)
        kw = dict(prototypes=V, gamma=None)
        est = PrototypeVectorMachine(**kw)
        t0, c0 = time.perf_counter(), time.process_time()
        est.fit(X, y_semi)
        ref = (est, time.perf_counter() - t0, time.process_time() - c0)
    est = ref[0]
    dd = DistributedDesign.from_arrays(client, X, y_semi)
    dd.reset_counters()
    w0, c0 = _worker_cpu(client), time.process_time()
    t0 = time.perf_counter()
    dist = PrototypeVectorMachine(prototypes=est.prototypes_, gamma=est.gamma_).fit(dd, None)
    t = time.perf_counter() - t0
    cpu = time.process_time() - c0 + _worker_cpu(client) - w0
    sent, received, calls = dd.bytes_sent, dd.bytes_received, dd.n_calls
    differ = int(np.count_nonzero(np.asarray(dist.transduction_) != est.transduction_))
    dd.close()
    diff = float(np.abs(dist.prototype_labels_ - est.prototype_labels_).max()
                 / np.abs(est.prototype_labels_).max())
    return ref, t, cpu, sent, received, calls, diff, differ


def _timed_fits(client, make, X, y, references):
    """``make()`` fitted on the workers, and in this process with each preconditioner of
    ``references``: ``(distributed fit, its wall and CPU seconds (client + workers), payload
    counters)`` and ``{reference: (fit, wall, CPU seconds)}``."""
    from semisup.distributed import DistributedDesign

    dd = DistributedDesign.from_arrays(client, X, y)
    dd.reset_counters()
    w0, c0, t0 = _worker_cpu(client), time.process_time(), time.perf_counter()
    dist = make().fit(dd, dd.labels)
    t_dist = time.perf_counter() - t0
    c_dist = time.process_time() - c0 + _worker_cpu(client) - w0
    traffic = (dd.bytes_sent, dd.bytes_received, dd.n_calls)
    dist.transduction_ = np.asarray(dist.transduction_)  # gathered while the design lives
    dd.close()
    _progress(type(dist).__name__, "workers", t_dist, c_dist, dist.objective_)
    refs = {}
    for reference in references:
        with reference_preconditioner(reference):
            t0, c0 = time.perf_counter(), time.process_time()
            ref = make().fit(X, y)
            refs[reference] = (ref, time.perf_counter() - t0, time.process_time() - c0)
        _progress(type(ref).__name__, reference, *refs[reference][1:], ref.objective_)
    return (dist, t_dist, c_dist, traffic), refs


def fit_compare(client, X, y_semi, lam: float, references) -> list:
    """L2-SVM-MFN on the labeled rows of ``y_semi``: one table row per reference."""
    lab = np.flatnonzero(y_semi >= 0)
    Xl, yl = X[lab], y_semi[lab]
    (dist, t_dist, _, _), refs = _timed_fits(client, lambda: L2SVM(lam=lam, solver="mfn"),
                                             Xl, yl, references)
    out = []
    for reference, (ref, t_single, _) in refs.items():
        rel = abs(dist.objective_ - ref.objective_) / ref.objective_
        same = int(np.count_nonzero(dist.predict(Xl) != ref.predict(Xl)))
        out.append([lab.size, reference, t_single, t_dist, t_dist / t_single, rel, same,
                    ref.fit_results_[0].n_cg_iter, dist.fit_results_[0].n_cg_iter])
    return out


def tsvm_compare(client, X, y_semi, lam: float, references, tol: float = 1e-6) -> list:
    """``TransductiveSVM`` on all rows (multi-switch, ``lam_u=1``): one row per reference."""
    (dist, t_dist, c_dist, traffic), refs = _timed_fits(
        # as published: the labeled-only CV guard runs on one machine only
        client, lambda: TransductiveSVM(lam=lam, lam_u=1.0, tol=tol, fallback="none"), X,
        y_semi, references)
    d = dist.fit_results_[0]
    out = []
    for reference, (ref, t_single, c_single) in refs.items():
        rel = abs(dist.objective_ - ref.objective_) / abs(ref.objective_)
        differ = int(np.count_nonzero(dist.transduction_ != ref.transduction_))
        coef = float(np.abs(dist.coef_ - ref.coef_).max() / np.abs(ref.coef_).max())
        r = ref.fit_results_[0]
        out.append([X.shape[0], int(np.count_nonzero(y_semi >= 0)), reference, t_single,
                    c_single, t_dist, c_dist, t_dist / t_single, c_dist / c_single, rel, coef,
                    differ, f"{r.n_iter} / {d.n_iter}", f"{r.n_switches:,} / {d.n_switches:,}",
                    f"{r.n_cg_iter:,} / {d.n_cg_iter:,}", traffic[2], traffic[0], traffic[1]])
    return out


def _progress(*row) -> None:
    """A finished measurement, on stderr as soon as it is known (long runs)."""
    print(time.strftime("%H:%M:%S"), *(C.fmt(c) for c in row), file=sys.stderr, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=None, help="a random subset of N rows of each set")
    ap.add_argument("--iters", type=int, default=20, help="CG iterations timed")
    ap.add_argument("--labeled", type=int, default=10000,
                    help="labeled rows of the fits (mnist, secstr; secstr-1.27m uses the "
                         "official 10,000-point split 0)")
    ap.add_argument("--lam", type=float, default=1e-2, help="lambda of the L2SVM fit")
    ap.add_argument("--tsvm-lam", type=float, default=1e-3, help="lambda of the TSVM fit")
    ap.add_argument("--tsvm-tol", type=float, default=1e-6, help="tol of the TSVM fit")
    ap.add_argument("--sets", default="mnist,secstr", help=f"comma-separated, of {SETS}")
    ap.add_argument("--workers", default="1,2,4", help="worker processes to run")
    ap.add_argument("--parts", default="cg,pvm,l2svm",
                    help="comma-separated, of cg (CG iteration and round-trip tables), pvm, "
                         "l2svm, tsvm (the fits run at 2 workers, or the first count given)")
    ap.add_argument("--reference", default="auto",
                    help="preconditioner(s) of the single-process L2SVM/TSVM fits: jacobi "
                         "(as the workers), auto (library default), or both comma-separated")
    ap.add_argument("--unfused", action="store_true", help="also time the 2-round-trip CG")
    ap.add_argument("--prototypes", type=int, default=200, help="m of the PVM comparison")
    ap.add_argument("--no-fit", action="store_true", help="drop l2svm and tsvm from --parts")
    ap.add_argument("--cg-only", action="store_true",
                    help="only the CG iteration and round-trip tables (the 1.5x target)")
    ap.add_argument("--paths", default="direct + inline",
                    help=f"call paths to time, comma-separated, of {list(CALL_PATHS)}")
    ap.add_argument("--name", default="distributed",
                    help="results file benchmarks/results/<name>.md")
    args = ap.parse_args()
    from distributed import Client, LocalCluster

    parts = {p.strip() for p in args.parts.split(",")}
    if args.cg_only:
        parts = {"cg"}
    if args.no_fit:
        parts -= {"l2svm", "tsvm"}
    if args.prototypes <= 0:
        parts.discard("pvm")
    paths = [p.strip() for p in args.paths.split(",")]
    references = [r.strip() for r in args.reference.split(",")]
    worker_counts = [int(w) for w in args.workers.split(",")]
    fit_workers = 2 if 2 in worker_counts else worker_counts[0]
    rows, fits, tsvm, pvm, trips, memory = [], [], [], [], [], []
    with C.Contention() as load_info:
        for name in args.sets.split(","):
            t_load = time.perf_counter()
            X, y, y_semi = load(name, args.rows, args.labeled)
            t_load = time.perf_counter() - t_load
            y_cg = cg_targets(y)
            if "cg" in parts:
                t1 = single_iteration(X, y_cg, args.iters)
                cpu1 = single_cpu_iteration(X, y_cg, args.iters)
                rows.append([name, f"{X.shape[0]:,} x {X.shape[1]:,}", f"{X.nnz:,}",
                             "1 process", t1 * 1e3, 1.0, cpu1 * 1e3, 1.0, "-", "-", "-"])
                _progress(*rows[-1])
            ref = None
            for n_workers in worker_counts:
                cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1,
                                       processes=True, dashboard_address=None,
                                       silence_logs=logging.ERROR)
                client = Client(cluster)
                for path in paths if "cg" in parts else ():
                    for fused in (True, False) if args.unfused else (True,):
                        t, cpu, sent, recv, calls = distributed_iteration(
                            client, X, y_cg, args.iters, fused, CALL_PATHS[path])
                        rows.append([name, "", "", f"{n_workers} worker(s), "
                                     f"{'fused' if fused else 'unfused'}, {path}", t * 1e3,
                                     t / t1, cpu * 1e3, cpu / cpu1, sent, recv, calls])
                        _progress(*rows[-1])
                    if name == args.sets.split(",")[0]:
                        t, cpu = round_trip(client, X, y_cg, CALL_PATHS[path])
                        trips.append([n_workers, path, t * 1e3, cpu * 1e3])
                if "pvm" in parts:
                    ref, t, cpu, sent, recv, calls, diff, differ = pvm_compare(
                        client, X, y_semi, args.prototypes, ref)
                    if n_workers == worker_counts[0]:
                        pvm.append([name, args.prototypes, "1 process", ref[1], ref[2], "-",
                                    "-", "-", "-", "-"])
                    pvm.append([name, args.prototypes, f"{n_workers} worker(s)", t, cpu,
                                t / ref[1], sent, recv, calls, f"{diff:.1e} / {differ}"])
                    _progress(*pvm[-1])
                if n_workers == fit_workers and "l2svm" in parts:
                    fits += [[name, *r] for r in fit_compare(client, X, y_semi, args.lam,
                                                             references)]
                    _progress(*fits[-1])
                if n_workers == fit_workers and "tsvm" in parts:
                    tsvm += [[name, *r] for r in tsvm_compare(client, X, y_semi, args.tsvm_lam,
                                                              references, args.tsvm_tol)]
                    for r in tsvm:
                        _progress(*r)
                memory.append([name, n_workers, t_load, *peak_rss_mib(client)])
                _progress(*memory[-1])
                client.close()
                cluster.close()
    sections = []
    if "cg" in parts:
        sections += [
            "## One CGLS iteration over all rows (all active)",
            C.table(["set", "rows x features", "non-zeros", "run", "ms / iteration (wall)",
                     "wall ratio to 1 process", "CPU ms / iteration (client + workers)",
                     "CPU ratio", "bytes sent / it", "bytes received / it",
                     "round trips / it"], rows),
            "Bytes: payload of the client's calls (the d-vector to each worker, the d-vector "
            "and scalars back), not counting Dask's framing.",
            "## One empty call to every worker (the fixed cost of a round trip)",
            C.table(["workers", "call path", "ms (wall)", "CPU ms (client + workers)"], trips)]
    if pvm:
        sections += [
            "## PVM, n-linear part (fixed prototypes and width): K(X, V) and the m x m sums",
            C.table(["set", "m", "run", "wall s", "CPU s (client + workers)", "wall ratio",
                     "bytes sent", "bytes received", "round trips",
                     "max rel. diff of f_v / transduced labels differing"], pvm)]
    if fits:
        sections += [
            f"## End-to-end L2-SVM-MFN (lam={args.lam:g}) on labeled rows (1 process vs "
            f"{fit_workers} workers)",
            C.table(["set", "labeled rows", "1-process preconditioner", "1 process s",
                     f"{fit_workers} workers s", "wall ratio", "objective rel. diff",
                     "predictions differing", "CG its (1 proc)", "CG its (workers)"], fits),
            "The workers precondition with Jacobi; the single process with the sketch "
            "(`auto` at d <= 2000) or Jacobi (`jacobi`, the same arithmetic).  CG counts "
            "differ with the preconditioner, the minimiser agrees."]
    if tsvm:
        sections += [
            f"## End-to-end TransductiveSVM (lam={args.tsvm_lam:g}, lam_u=1, multi-switch, "
            f"tol={args.tsvm_tol:g}) "
            f"on all rows (1 process vs {fit_workers} workers)",
            C.table(["set", "rows", "labeled", "1-process preconditioner", "1 process s (wall)",
                     "1 process CPU s", "workers s (wall)", "workers CPU s (client + workers)",
                     "wall ratio", "CPU ratio", "objective rel. diff",
                     "max rel. coef diff", "transduced labels differing",
                     "MFN fits (1 proc / workers)", "switches", "CG its", "round trips",
                     "bytes sent", "bytes received"], tsvm)]
    sections += [
        "## Memory",
        C.table(["set", "workers", "load s", "peak RSS of the client MiB (whole run so far)",
                 "peak RSS of the largest worker MiB"], memory),
        load_info.line()]
    C.report(args.name, "Distributed CG iterations and fits (Dask LocalCluster)", sections)


if __name__ == "__main__":
    main()
