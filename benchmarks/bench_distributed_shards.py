"""Distributed fits from SVMlight shards read by the workers, against one process.

The set (``--set``, as :mod:`bench_distributed`) is written as ``--shards`` SVMlight files
(SVMlin label coding: +1/-1, 0 unlabeled).  Then, with ``--tol`` (tight, so that both fits
converge to the same point):

* one process: every shard read here (:func:`semisup.io.read_svmlight`), stacked, fitted,
  with Jacobi (the workers' route above 2048 weights) and with the library default;
* a ``LocalCluster`` of ``--workers`` worker processes:
  :func:`semisup.distributed.from_svmlight_files` (each worker reads its own shards; the
  client only sees file names), the same estimator fitted on the design, once per
  ``--routes`` entry: ``hessian`` (the default for ``d <= 2048``: the workers' partial
  Hessians factored on the client) and ``jacobi`` (the route above the threshold).

Reported: wall time of read + fit, the client's resident memory growth (the matrix never
comes here on the distributed route), the relative objective difference, the transduced
labels that differ, the client's round trips and the MiB it received.  With ``--kill-at F``,
a TSVM fit is repeated with the worker holding partition 0 killed (SIGKILL) after the
fraction ``F`` of the uninterrupted fit's calls: wall time and calls against the
uninterrupted fit, partitions reloaded.

Run: ``nice -n 5 python benchmarks/bench_distributed_shards.py [--set secstr] [--shards 4]
[--workers 2] [--estimators l2svm,tsvm,da] [--routes hessian,jacobi] [--kill-at 0.6]``
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
from bench_distributed import _worker_cpu, load, reference_preconditioner  # noqa: E402

from semisup import L2SVM, DeterministicAnnealingSVM, TransductiveSVM  # noqa: E402
from semisup.distributed import _solvers  # noqa: E402
from semisup.io import labels_to_svmlin, read_svmlight, svmlin_to_labels, write_svmlight  # noqa: E402,I001


def make(name: str, lam: float, tol: float):
    """The estimator on both sides.  TSVM and DA as published (``fallback="none"``): the
    labeled-only CV guard runs on one machine only (a distributed design skips it), so with
    it the one-process side would fit four models and may answer with another."""
    if name == "l2svm":
        return lambda: L2SVM(lam=lam, solver="mfn", tol=tol)
    if name == "da":
        return lambda: DeterministicAnnealingSVM(lam=lam, lam_u=1.0, tol=tol, fallback="none")
    if name != "tsvm":
        raise ValueError(f"--estimators: unknown {name!r}; choose from l2svm, tsvm, da")
    return lambda: TransductiveSVM(lam=lam, lam_u=1.0, tol=tol, fallback="none")


@contextlib.contextmanager
def route(name: str):
    """The distributed route: ``hessian`` (the default up to 2048 weights) or ``jacobi``
    (the route above that threshold, forced by lowering it)."""
    if name not in ("hessian", "jacobi"):
        raise ValueError(f"--routes: unknown {name!r}; choose from hessian, jacobi")
    keep = _solvers.HESSIAN_MAX_WEIGHTS
    if name == "jacobi":
        _solvers.HESSIAN_MAX_WEIGHTS = 0
    try:
        yield
    finally:
        _solvers.HESSIAN_MAX_WEIGHTS = keep


def write_shards(X, y_semi, shards: int, where: str) -> list[str]:
    bounds = np.linspace(0, X.shape[0], shards + 1).astype(int)
    paths = []
    for i in range(shards):
        path = os.path.join(where, f"part{i:03d}.svm")
        write_svmlight(path, X[bounds[i]:bounds[i + 1]], labels_to_svmlin(y_semi[bounds[i]:
                                                                                 bounds[i + 1]]))
        paths.append(path)
    return paths


def one_process(paths, factory, reference: str):
    rss0 = C.rss_bytes()
    t0, c0 = time.perf_counter(), time.process_time()
    parts = [read_svmlight(p) for p in paths]
    d = max(p[0].shape[1] for p in parts)
    X = sp.vstack([sp.csr_matrix((p[0].data, p[0].indices, p[0].indptr),
                                 shape=(p[0].shape[0], d)) for p in parts], format="csr")
    y = svmlin_to_labels(np.concatenate([p[1] for p in parts]))
    t_load = time.perf_counter() - t0
    with reference_preconditioner(reference):
        est = factory().fit(X, y)
    return (est, time.perf_counter() - t0, t_load, time.process_time() - c0,
            (C.rss_bytes() - rss0) / 2**20)


def distributed_fit(client, paths, factory, kill_at: int | None = None,
                    route_name: str = "hessian"):
    from semisup.distributed import from_svmlight_files

    rss0 = C.rss_bytes()
    c0, w0 = time.process_time(), _worker_cpu(client)
    t0 = time.perf_counter()
    design = from_svmlight_files(client, paths, timeout=120)
    count = [0]
    original = design._call
    pids = client.run(os.getpid)

    def call(method, *args):
        count[0] += 1
        if kill_at is not None and count[0] == kill_at:
            os.kill(pids[design._partition_home[0][0]], signal.SIGKILL)
        return original(method, *args)

    design._call = call
    t_load = time.perf_counter() - t0
    design.reset_counters()
    with route(route_name):
        est = factory().fit(design, design.labels)
    labels = np.asarray(est.transduction_)
    wall = time.perf_counter() - t0
    # CPU of client + workers (the workers' CPU includes their idle Dask housekeeping)
    cpu = time.process_time() - c0 + (_worker_cpu(client) - w0 if kill_at is None
                                      else float("nan"))
    info = dict(wall=wall, cpu=cpu, load=t_load, calls=count[0], reloaded=design.n_reloaded,
                resumed=design.n_resumed, rss=(C.rss_bytes() - rss0) / 2**20,
                workers=len(design.workers), received=design.bytes_received / 2**20,
                round_trips=design.n_calls, by_method=dict(design.calls_by_method))
    design.close()
    return est, labels, info


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", default="secstr", help="mnist, secstr or secstr-1.27m")
    ap.add_argument("--rows", type=int, default=None, help="random subset of the rows")
    ap.add_argument("--labeled", type=int, default=1000)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--lam", type=float, default=1e-3)
    ap.add_argument("--tol", type=float, default=1e-9)
    ap.add_argument("--estimators", default="l2svm,tsvm")
    ap.add_argument("--kill-at", type=float, default=None)
    ap.add_argument("--repeat", type=int, default=1,
                    help="fits per configuration; the best wall time is reported")
    ap.add_argument("--tag", default="", help="suffix of the results file name")
    ap.add_argument("--routes", default="hessian,jacobi",
                    help="distributed routes to time: hessian (default for d <= 2048), jacobi")
    args = ap.parse_args()

    import distributed

    X, _, y_semi = load(args.set, args.rows, args.labeled)
    rows = []
    kill_rows = []
    with tempfile.TemporaryDirectory() as where, C.Contention() as contention:
        paths = write_shards(X, y_semi, args.shards, where)
        del X
        cluster = distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                           processes=True, dashboard_address=None,
                                           silence_logs=logging.CRITICAL)
        client = distributed.Client(cluster)
        import dask.array  # noqa: F401  (imported before the RSS baselines)
        try:
            for name in args.estimators.split(","):
                factory = make(name, args.lam, args.tol)
                # best wall time of --repeat runs on either side (a shared, noisy machine)
                refs = {reference: min((one_process(paths, factory, reference)
                                        for _ in range(args.repeat)), key=lambda r: r[1])
                        for reference in ("jacobi", "auto")}
                for route_name in args.routes.split(","):
                    dist, labels, info = min(
                        (distributed_fit(client, paths, factory, route_name=route_name)
                         for _ in range(args.repeat)), key=lambda r: r[2]["wall"])
                    print(route_name, info["by_method"], flush=True)
                    for reference in ("jacobi", "auto"):
                        ref, t_ref, load_ref, cpu_ref, rss_ref = refs[reference]
                        rel = abs(dist.objective_ - ref.objective_) / abs(ref.objective_)
                        differ = int(np.count_nonzero(labels != ref.transduction_))
                        rows.append([name, route_name, reference, t_ref, load_ref,
                                     info["wall"], info["load"], info["wall"] / t_ref,
                                     (info["wall"] - info["load"]) / (t_ref - load_ref),
                                     info["cpu"] / cpu_ref, rel, differ, info["round_trips"],
                                     rss_ref, info["rss"], info["received"]])
                        print(rows[-1], flush=True)
                    if route_name == args.routes.split(",")[0]:
                        first = (dist, labels, info)
                dist, labels, info = first
                if args.kill_at is not None and name == "tsvm":
                    client.wait_for_workers(args.workers, timeout=120)
                    at = int(args.kill_at * info["calls"])
                    killed, k_labels, k_info = distributed_fit(
                        client, paths, factory, at, route_name=args.routes.split(",")[0])
                    rel = abs(killed.objective_ - dist.objective_) / abs(dist.objective_)
                    kill_rows.append([name, at, info["calls"], k_info["calls"], info["wall"],
                                      k_info["wall"], k_info["wall"] / info["wall"],
                                      k_info["reloaded"], k_info["resumed"], rel,
                                      int(np.count_nonzero(k_labels != labels))])
                    print(kill_rows[-1], flush=True)
        finally:
            client.close()
            cluster.close()
    sections = [
        f"Set `{args.set}`{'' if args.rows is None else f' ({args.rows} random rows)'}, "
        f"{args.labeled} labeled rows, {args.shards} SVMlight shards, a LocalCluster of "
        f"{args.workers} worker processes (1 thread each), `lam={args.lam}`, "
        f"`tol={args.tol}`, best wall time of {args.repeat} fit(s) on either side.  Wall "
        f"times include reading the shards (here: on the client, there: by the workers).  "
        f"Distributed route `hessian`: every Newton system's Hessian summed from the "
        f"workers' partials and solved on the client (the default up to 2,048 weights and "
        f"64 non-zeros per row); `jacobi`: the route beyond, CG on the workers.  The "
        f"one-process fit with Jacobi and with the library default (`auto`: the "
        f"row-sampled sketch here).  Round trips: the client's calls to all workers during "
        f"the fit.",
        C.table(["estimator", "distributed route", "one-process preconditioner",
                 "one process: total (s)",
                 "of which reading", "workers: total (s)", "of which loading",
                 "wall ratio total", "wall ratio fit only", "CPU ratio (client + workers)",
                 "objective rel. diff", "labels differing", "round trips",
                 "client RSS growth, one process (MiB)", "client RSS growth, workers (MiB)",
                 "MiB received by the client during the fit"], rows),
    ]
    if kill_rows:
        sections += [
            "A TSVM fit with the worker holding partition 0 killed (SIGKILL) after the given "
            "call; the Nanny restarts it, the design reloads only that worker's partitions "
            "and the fit resumes from its last completed step (objective and labels against "
            "the uninterrupted distributed fit).",
            C.table(["estimator", "killed at call", "calls uninterrupted", "calls with kill",
                     "wall uninterrupted (s)", "wall with kill (s)", "ratio",
                     "partitions reloaded", "resumed", "objective rel. diff",
                     "labels differing"], kill_rows),
        ]
    sections.append(contention.line())
    C.report(f"distributed_shards_{args.set}"
             + ("" if args.workers == 2 else f"_w{args.workers}") + args.tag,
             "Distributed fits from worker-read shards", sections)


if __name__ == "__main__":
    main()
