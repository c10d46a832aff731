"""Every default classifier's fit with the BLAS thread team and with one thread, idle and busy.

The policy of :func:`semisup.base.fit_thread_policy` (issue 30): when another process's
thread is runnable as a fit starts, BLAS runs on one thread for the whole fit.  This
benchmark fits every public classifier of :mod:`semisup` with its defaults
(``random_state=0``; the benchmark of defaults' list, ``bench_defaults.discover_classifiers``,
SDPRelaxedTSVM left out as over a minute per fit, SemiSupervisedNB as not applicable to
centred features) on one multi-class task of the issue's kind, satimage (2,000 rows, 36
features, 6 classes) with 2 labels per class (draw 1 of ``bench_defaults``), three ways: BLAS
with its thread team (the policy switched off; the linear family and S4VM still take one
thread on narrow dense designs, ``semisup.linear._core.solver_threads``), inside
``threadpoolctl``'s limit of one BLAS thread, and as the library decides; on the idle
machine, then with ``--load`` competing CPU-bound processes (default: twice the cores).  One
run each (fits of a second or more; the faster ones are noisy), wall and CPU seconds.

Run: ``python benchmarks/bench_fit_threads.py`` -> ``results/bench_fit_threads.md``
(about 15 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
from _common import competing_load, report, semi_targets, table

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_defaults import applicable, discover_classifiers, load_set, make_estimator  # noqa: E402

MODES = ("team", "1 thread", "library")
SKIP = {"SDPRelaxedTSVM"}


def _fit(name: str, X, y, mode: str) -> tuple[float, float]:
    from threadpoolctl import threadpool_limits

    from semisup.solvers import _kernels

    est = make_estimator(name)
    saved = _kernels.machine_busy
    t, c = time.perf_counter(), time.process_time()
    try:
        if mode == "1 thread":
            with threadpool_limits(limits=1, user_api="blas"):
                est.fit(X, y)
        else:
            if mode == "team":
                _kernels.machine_busy = lambda: False
            est.fit(X, y)
    finally:
        _kernels.machine_busy = saved
    return time.perf_counter() - t, time.process_time() - c


def measure(names, X, y) -> list:
    rows = []
    for name in names:
        got = {m: _fit(name, X, y, m) for m in MODES}
        team, one, lib = (got[m] for m in MODES)
        rows.append([name, team[0], one[0], lib[0], one[0] / team[0], lib[0] / team[0],
                     team[1], one[1], lib[1]])
        print(rows[-1], flush=True)
    return rows


def _ratios(rows, col: int) -> str:
    r = np.array([row[col] for row in rows])
    return f"median {np.median(r):.2f}x, range {r.min():.2f}-{r.max():.2f}x"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load", type=int, default=2 * (os.cpu_count() or 1))
    ap.add_argument("--classifiers", nargs="+", default=None)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    data = load_set("satimage")
    _, lab, _ = data.splits("2/class", 1)[0]
    y = semi_targets(data.y, lab)
    names = [n for n in (args.classifiers or discover_classifiers())
             if n not in SKIP and applicable(n, data)]
    for name in names:                                   # warm-up (imports, JIT)
        make_estimator(name).fit(data.X, y)
    headers = ["classifier", "wall, team (s)", "wall, 1 thread (s)", "wall, library (s)",
               "1 thread / team", "library / team", "CPU, team (s)", "CPU, 1 thread (s)",
               "CPU, library (s)"]
    sections = []
    for busy in (False, True):
        with competing_load(args.load if busy else 0) as load:
            time.sleep(1.0 if busy else 0.0)
            rows = measure(names, data.X, y)
        title = (f"## Busy: {args.load} competing CPU-bound processes" if busy
                 else "## Idle (no competing process started)")
        long = [r for r in rows if r[1] > 0.5]
        summary = (f"Wall time, one thread against the team: {_ratios(rows, 4)}; the "
                   f"library's choice against the team: {_ratios(rows, 5)} (fits of more than "
                   f"half a second: {_ratios(long, 5)}).")
        sections += [title, summary, table(headers, rows), load.line()]
    report("bench_fit_threads", "Every default fit: BLAS team, one thread and the library's "
           "policy, idle and busy", sections)


if __name__ == "__main__":
    main()
