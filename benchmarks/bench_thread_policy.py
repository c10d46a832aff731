"""Threads on a busy machine: TSVM and DA fits, one thread against every thread and the
free-cores policy.

TSVM and DA (``lam=1e-3, lam_u=1``) on SecStr 83,679 x 315 one-hot with 1,000 labels (SSL-book
split 0), each fit in a fresh subprocess, while the benchmark keeps ``--load`` CPU-bound
competing processes running (default: twice the cores; they inherit the benchmark's
niceness, so they compete on equal terms).  Modes, alternating run by run so that all see the
same machine:

* ``1 thread``: ``NUMBA_NUM_THREADS=1`` (the serial kernels) and BLAS limited to one thread;
* ``policy``: ``SEMISUP_THREAD_POLICY=load``, a team no larger than the cores other
  processes leave free (:func:`semisup.solvers._kernels.parallel_threads`; serial here);
* ``all threads``: ``SEMISUP_THREAD_POLICY=off``, the library's default: the parallel kernels
  whenever the operator is large enough, whatever the load;
* ``all threads, spinning`` (only with ``--modes``): the same with ``OMP_WAIT_POLICY=active``,
  idle OpenMP threads spinning as before the library asked for passive ones.

Each child warms the JIT on a small slice (and the parallel kernels), then times one ``fit``.
Reported: median wall and CPU seconds per mode and method, the cores other processes used
during each fit (from ``/proc/stat``; the competing processes plus whatever else runs), and
the ratio of each mode's median to the one-thread median.

Usage: ``python benchmarks/bench_thread_policy.py [--repeat 3] [--load N] [--methods tsvm da]``;
``--kernels BLOCKS`` times the product pair alone instead (the three modes interleaved in one
process, numba with its default threads).

``--cli``: the same modes end to end through the command line, ``python -m semisup.cli.svmlin
-A {2,3} -W 0.001 -U 1 -R 0.43`` on SecStr's SVMlin-format files (written by
``bench_cli_speed.py``'s code, or reused from ``--files DIR``): wall and CPU seconds of the
child (reading the files and JIT loading included), results to ``bench_thread_policy_cli.md``.
SVMlin itself is not run here (its binary is not available), and no SVMlin time under load is
made up: the table compares our modes with one another, and the only SVMlin figures are the
idle ones recorded in issue 30.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from _common import Contention, competing_load, report, table

SRC = Path(__file__).resolve().parent.parent / "src"

CHILD = r"""
import json, sys, time
import numpy as np
import semisup._accel as acc
from semisup import DeterministicAnnealingSVM, TransductiveSVM
from semisup.datasets import load_sslbook, one_hot_secstr, partial_labels
from semisup.solvers.design import Design
b = load_sslbook("secstr", 1000)
X = one_hot_secstr(b.X)
y = partial_labels(b.y, b.splits[0])
make = lambda: (TransductiveSVM if sys.argv[1] == "tsvm" else DeterministicAnnealingSVM)(
    lam=1e-3, lam_u=1.0)
keep, acc.COMPILE_MIN_SIZE = acc.COMPILE_MIN_SIZE, 0
make().fit(X[:2000], np.where(np.arange(2000) < 50, np.arange(2000) % 2, -1))  # warm the JIT
D = Design(X, parallel=True)  # and the parallel kernels the small fit skipped
D.rmatvec(D.matvec(np.zeros(D.n_weights)))
acc.COMPILE_MIN_SIZE = keep
t, c = time.perf_counter(), time.process_time()
m = make().fit(X, y)
print(json.dumps({"wall": time.perf_counter() - t, "cpu": time.process_time() - c,
                  "objective": float(m.fit_results_[0].objective)}))
"""

MODES = {
    "1 thread": {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
    "policy": {"SEMISUP_THREAD_POLICY": "load"},
    "all threads": {"SEMISUP_THREAD_POLICY": "off"},
    # idle OpenMP threads spinning, as before ``semisup._accel.import_numba`` asked for
    # passive ones (the README's earlier figure); not run unless named with --modes
    "all threads, spinning": {"SEMISUP_THREAD_POLICY": "off", "OMP_WAIT_POLICY": "active"},
}
DEFAULT_MODES = ["1 thread", "policy", "all threads"]


KERNELS = r"""
import json, statistics, sys, time
import numpy as np
from semisup.datasets import load_sslbook, one_hot_secstr
from semisup.solvers.design import Design
X = one_hot_secstr(load_sslbook("secstr", 1000).X)
designs = {"1 thread": Design(X, parallel=False), "policy": Design(X),
           "all threads": Design(X, parallel=True)}
w = np.random.default_rng(0).normal(size=X.shape[1] + 1)
q = np.ones(X.shape[0])
times = {k: [] for k in designs}
for d in designs.values():
    d.rmatvec(d.matvec(w))
for block in range(int(sys.argv[1])):
    for k, d in designs.items():  # interleaved blocks: all modes see the same load
        t = time.perf_counter()
        for _ in range(10):
            d.matvec(w)
            d.rmatvec(q)
        times[k].append((time.perf_counter() - t) / 10)
print(json.dumps({k: statistics.median(v) for k, v in times.items()}))
"""


def kernels(blocks: int) -> list:
    """Median wall ms of one ``X w`` + ``X^T q`` pair on SecStr's 83,679 rows, the three
    modes interleaved in blocks of 10 pairs in one process (numba with its default threads;
    ``policy``: ``Design(X)`` under ``SEMISUP_THREAD_POLICY=load``)."""
    env = {**os.environ, "PYTHONPATH": str(SRC), "SEMISUP_THREAD_POLICY": "load"}
    out = subprocess.run([sys.executable, "-c", KERNELS, str(blocks)], env=env, check=True,
                         capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return [[mode, 1e3 * r[mode], f"{r[mode] / r['1 thread']:.2f}"] for mode in r]


def run_cli_mode(method: str, mode: str, files: tuple, out: str) -> dict:
    """One ``semisup-svmlin`` training run in a fresh process under the mode's environment:
    wall and CPU seconds of the child, its "trained in" and objective."""
    import re
    import resource
    import time

    ex, lab = files
    env = {**os.environ, "PYTHONPATH": str(SRC), **MODES[mode]}
    cmd = [sys.executable, "-m", "semisup.cli.svmlin", "-A", "2" if method == "tsvm" else "3",
           "-W", "0.001", "-U", "1", "-R", "0.43", "-o", out, str(ex), str(lab)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    text = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    trained = re.search(r"trained in ([0-9.]+) s; objective ([-0-9.e+]+)", text)
    return {"wall": wall, "cpu": (after.ru_utime - before.ru_utime)
            + (after.ru_stime - before.ru_stime), "trained": float(trained.group(1)),
            "objective": float(trained.group(2))}


def secstr_files(folder: Path | None) -> tuple:
    """SecStr's SVMlin examples and labels (``bench_cli_speed.make_sets``), in ``folder``
    when it has them, written there (or to a temporary folder) otherwise."""
    import tempfile

    from bench_cli_speed import make_sets

    folder = folder or Path(tempfile.mkdtemp(prefix="bench_thread_policy_"))
    folder.mkdir(parents=True, exist_ok=True)
    ex, lab = folder / "secstr_examples", folder / "secstr_labels"
    if not (ex.exists() and lab.exists()):
        make_sets(folder, ["secstr"])
    return ex, lab


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--load", type=int, default=2 * len(os.sched_getaffinity(0)),
                    help="competing CPU-bound processes (default: twice the cores)")
    ap.add_argument("--methods", nargs="+", default=["tsvm", "da"], choices=["tsvm", "da"])
    ap.add_argument("--modes", nargs="+", default=DEFAULT_MODES, choices=list(MODES))
    ap.add_argument("--kernels", type=int, default=0, metavar="BLOCKS",
                    help="instead of fits: the product pair alone, BLOCKS interleaved blocks "
                         "of 10 pairs per mode (results to bench_thread_policy_kernels.md)")
    ap.add_argument("--cli", action="store_true",
                    help="time semisup-svmlin end to end instead of API fits (results to "
                         "bench_thread_policy_cli.md, or --name)")
    ap.add_argument("--files", type=Path, help="--cli: folder with (or for) SecStr's SVMlin "
                    "files, as bench_cli_speed.py --files")
    ap.add_argument("--name", default=None, help="results file name (without .md)")
    args = ap.parse_args()
    args.name = args.name or ("bench_thread_policy_cli" if args.cli else "bench_thread_policy")
    files = secstr_files(args.files) if args.cli else None
    if args.kernels:
        with competing_load(args.load) as load:
            rows = kernels(args.kernels)
        report("bench_thread_policy_kernels", "One product pair on SecStr 83k with the cores "
               "taken: threads", [
                   f"{args.load} competing CPU-bound processes on "
                   f"{len(os.sched_getaffinity(0))} cores, started by the benchmark; "
                   + load.line(),
                   table(["mode", "median ms per X w + X^T q", "/ 1 thread"], rows)])
        return
    rows = []
    with competing_load(args.load) as load:
        for rep in range(args.repeat):
            for method in args.methods:
                for mode in args.modes:
                    env = {**os.environ, "PYTHONPATH": str(SRC), **MODES[mode]}
                    with Contention() as during:
                        if args.cli:
                            r = run_cli_mode(method, mode, files, str(files[0].parent))
                        else:
                            out = subprocess.run([sys.executable, "-c", CHILD, method],
                                                 env=env, check=True, capture_output=True,
                                                 text=True).stdout
                            r = json.loads(out.strip().splitlines()[-1])
                    rows.append([rep + 1, method.upper(), mode, r["wall"], r["cpu"],
                                 during.foreign_cores, r["objective"]])
                    print(rows[-1], flush=True)
                    write(args, rows, during, partial=True)  # survive an interruption
    write(args, rows, load)


def write(args, rows, load, partial: bool = False) -> None:
    summary = []
    for method in args.methods:
        m = method.upper()
        ones = [r[3] for r in rows if r[1] == m and r[2] == "1 thread"]
        base = statistics.median(ones) if ones else float("nan")
        for mode in args.modes:
            sel = [r for r in rows if r[1] == m and r[2] == mode]
            if not sel:
                continue
            wall = statistics.median(r[3] for r in sel)
            summary.append([m, mode, len(sel), wall, statistics.median(r[4] for r in sel),
                            statistics.median(r[5] for r in sel), f"{wall / base:.2f}"])
    ncpu = len(os.sched_getaffinity(0))
    what = ("`semisup-svmlin -A {2,3} -W 0.001 -U 1 -R 0.43` end to end (fresh process: "
            "reading the SVMlin files, imports and the fit; wall and CPU of the child)"
            if args.cli else "the fit alone (API, JIT warmed in the child first)")
    title = "TSVM and DA on SecStr 83k with the cores taken: threads" + (
        ", command line end to end" if args.cli else "")
    report(args.name, title, [
        f"{args.load} competing CPU-bound processes on {ncpu} cores, started by the benchmark; "
        + load.line() + (f"  Partial results: {len(rows)} fits so far, load shown for the "
                         "last one." if partial else ""),
        f"Timed: {what}.  'wall / 1 thread' compares each mode with our own single-threaded "
        "run under the same load.  SVMlin (single-threaded) is not run here: no SVMlin time "
        "under load is available, so no ratio to SVMlin is given; its recorded idle times are "
        "20.0 s (TSVM) and 23.3 s (DA) end to end (issue 30).",
        "## Medians\n\n" + table(["method", "mode", "runs", "median wall s", "median CPU s",
                                  "other processes' cores (median)", "wall / 1 thread"],
                                 summary),
        "## All runs\n\n" + table(["run", "method", "mode", "wall s", "CPU s",
                                   "other processes' cores", "objective"], rows),
    ])


if __name__ == "__main__":
    main()
