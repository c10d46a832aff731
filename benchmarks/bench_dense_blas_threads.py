"""BLAS threads for the linear S3VMs on dense data: every thread against one, idle and busy.

The SVMlin family's solves on a dense design are BLAS calls: ``X @ w`` and ``X.T @ q`` over
``n x d`` and, for the sketched preconditioner, a ``d x d`` Gram product and Cholesky
factorisation per Newton system.  With a few hundred features these take microseconds to a
few milliseconds, and OpenBLAS's thread team costs more than it saves -- much more when the
cores are taken, as its threads spin-wait for one another.  This benchmark fits
``TransductiveSVM()`` and ``DeterministicAnnealingSVM()`` (defaults, ``fallback='none'``: one
fit, no guard) on dense sets of growing width, BLAS with every thread, with one
(``threadpoolctl``), and as the library decides, alternating, best of ``--repeat`` runs
each, on the idle machine and with ``--load`` competing CPU-bound processes (default: twice
the cores).

Sets (binary: first class against the rest; 100 labeled rows, stratified draw 3): segment
(d = 19), satimage (36), dna (180), the SSL book's digit1 (241, 1,500 rows), usps10 (256),
MNIST even/odd dense (784; ``--mnist-rows``, default 5,000).

The library's default follows from it (``semisup.linear._core.solver_threads``): one BLAS
thread on dense designs of at most ``DENSE_ONE_THREAD_MAX_FEATURES`` features, and on wider
ones when another thread is runnable as the fit starts (``machine_busy``); 'all threads'
switches both off for the run.

Run: ``python benchmarks/bench_dense_blas_threads.py`` -> ``results/bench_dense_blas_threads.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
from _common import competing_load, report, table

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_defaults import load_set, stratified_draw  # noqa: E402


def _task(name: str, mnist_rows: int):
    if name == "mnist":
        from _common import mnist_even_odd

        X, y = mnist_even_odd()
        idx = np.random.default_rng(0).choice(X.shape[0], mnist_rows, replace=False)
        X, y = X[idx].toarray(), y[idx]
    elif name == "digit1":
        from semisup.datasets import load_sslbook

        b = load_sslbook("digit1", 100)
        X, y = np.asarray(b.X, dtype=float), (np.asarray(b.y) > 0).astype(int)
    else:
        d = load_set(name)
        X, y = d.X, (d.y == 0).astype(int)
    lab = stratified_draw(y, 100, 3)
    yy = np.full(y.size, -1)
    yy[lab] = y[lab]
    return np.ascontiguousarray(X), yy


MODES = ("all threads", "1 thread", "default")


def _fit_time(make, X, y, mode: str) -> tuple[float, float]:
    """Wall and CPU seconds of one fit: BLAS with every thread (the bound and the busy test
    switched off), limited to one thread, or as the library decides."""
    from threadpoolctl import threadpool_limits

    from semisup.linear import _core

    saved = _core.DENSE_ONE_THREAD_MAX_FEATURES, _core.machine_busy
    t, c = time.perf_counter(), time.process_time()
    try:
        if mode == "1 thread":
            with threadpool_limits(limits=1, user_api="blas"):
                make().fit(X, y)
        else:
            if mode == "all threads":
                _core.DENSE_ONE_THREAD_MAX_FEATURES = 0
                _core.machine_busy = lambda: False
            make().fit(X, y)
    finally:
        _core.DENSE_ONE_THREAD_MAX_FEATURES, _core.machine_busy = saved
    return time.perf_counter() - t, time.process_time() - c


def measure(sets, repeat: int, mnist_rows: int) -> list:
    from semisup import DeterministicAnnealingSVM, TransductiveSVM

    methods = {"TSVM": lambda: TransductiveSVM(fallback="none"),
               "DA": lambda: DeterministicAnnealingSVM(fallback="none")}
    rows = []
    for name in sets:
        X, y = _task(name, mnist_rows)
        for method, make in methods.items():
            make().fit(X, y)                        # warm-up (imports, JIT)
            best = {m: [np.inf, np.inf] for m in MODES}
            for _ in range(repeat):
                for mode in MODES:
                    w, c = _fit_time(make, X, y, mode)
                    best[mode] = [min(best[mode][0], w), min(best[mode][1], c)]
            team = best["all threads"][0]
            rows.append([name, X.shape[0], X.shape[1], method, team, best["1 thread"][0],
                         best["default"][0], best["1 thread"][0] / team,
                         best["default"][0] / team, best["all threads"][1],
                         best["1 thread"][1]])
            print(rows[-1], flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+",
                    default=["segment", "satimage", "dna", "digit1", "usps10", "mnist"])
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--load", type=int, default=2 * (os.cpu_count() or 1))
    ap.add_argument("--mnist-rows", type=int, default=5000)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    headers = ["set", "n", "d", "method", "wall, all threads (s)", "wall, 1 thread (s)",
               "wall, default (s)", "1 thread / all", "default / all", "CPU, all threads (s)",
               "CPU, 1 thread (s)"]
    sections = []
    for busy in (False, True):
        with competing_load(args.load if busy else 0) as load:
            rows = measure(args.sets, args.repeat, args.mnist_rows)
        title = (f"## Busy: {args.load} competing CPU-bound processes" if busy
                 else "## Idle (no competing process started)")
        sections += [title, table(headers, rows), load.line()]
    report("bench_dense_blas_threads", "BLAS threads on dense data, idle and busy", sections)


if __name__ == "__main__":
    main()
