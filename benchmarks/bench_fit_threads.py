"""Every default classifier's fit with the BLAS thread team and with one thread, idle and busy.

The measurement behind a thread policy for every fit (one BLAS thread when the cores are
taken; issue 30).  This benchmark fits every public classifier of :mod:`semisup` with its
defaults (``random_state=0``; the benchmark of defaults' list,
``bench_defaults.discover_classifiers``, SDPRelaxedTSVM left out as over a minute per fit,
SemiSupervisedNB as not applicable to centred features) on one multi-class task of the
issue's kind, satimage (2,000 rows, 36 features, 6 classes) with 2 labels per class (draw 1
of ``bench_defaults``), two ways: as the library runs it (the linear family and S4VM already
take one thread on narrow dense designs, ``semisup.linear._core.solver_threads``), and
inside ``threadpoolctl``'s limit of one BLAS thread; on the idle machine, then with
``--load`` competing CPU-bound processes (default: twice the cores).  One run each (fits of a
second or more; the faster ones are noisy), wall and CPU seconds.

A policy applying the limit to a whole fit whenever the machine is busy was measured with
this script at commit 3c75c3a (``results/bench_fit_threads.md`` there: busy, a median 0.69x
the wall time and 0.52x the CPU time over the fits of more than half a second) and withdrawn:
its wrapper around ``fit`` added a stack frame, so warnings pointed into the library instead
of the user's ``fit`` call.

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

MODES = ("library", "1 thread")
SKIP = {"SDPRelaxedTSVM"}


def _fit(name: str, X, y, mode: str) -> tuple[float, float]:
    from threadpoolctl import threadpool_limits

    est = make_estimator(name)
    t, c = time.perf_counter(), time.process_time()
    if mode == "1 thread":
        with threadpool_limits(limits=1, user_api="blas"):
            est.fit(X, y)
    else:
        est.fit(X, y)
    return time.perf_counter() - t, time.process_time() - c


def measure(names, X, y) -> list:
    rows = []
    for name in names:
        got = {m: _fit(name, X, y, m) for m in MODES}
        lib, one = got["library"], got["1 thread"]
        rows.append([name, lib[0], one[0], one[0] / lib[0], lib[1], one[1]])
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
    headers = ["classifier", "wall, library (s)", "wall, 1 thread (s)", "1 thread / library",
               "CPU, library (s)", "CPU, 1 thread (s)"]
    sections = []
    for busy in (False, True):
        with competing_load(args.load if busy else 0) as load:
            time.sleep(1.0 if busy else 0.0)
            rows = measure(names, data.X, y)
        title = (f"## Busy: {args.load} competing CPU-bound processes" if busy
                 else "## Idle (no competing process started)")
        sections += [title, f"Wall time, one thread against the library's run: "
                     f"{_ratios(rows, 3)}.", table(headers, rows), load.line()]
    report("bench_fit_threads", "Every default fit as the library runs it and with one BLAS "
           "thread, idle and busy", sections)


if __name__ == "__main__":
    main()
