"""The two scale problems: TSVM (S=max) and DA trained to completion on

* MNIST even-vs-odd: 60,000 x 784 (about 9M non-zeros), 1,000 random rows labeled;
* SecStr one-hot: 83,679 + 1,189,472 rows x 315 binary features (about 19M non-zeros),
  labels revealed for the official 10,000-labeled split 0 only.

Each (data, method) runs in a fresh subprocess so that its memory is measured alone: peak
RSS during ``fit`` (kernel high-water mark, reset just before ``fit``), compared with the
bytes of the CSR matrix (data + indices + indptr).  Accuracy is on the labeled-pool rows not
used for training (and, for MNIST, on the 10,000 test images).  A run still going after
``--limit`` seconds is stopped; its progress log and a cProfile summary are reported.

Usage: ``python benchmarks/bench_large.py [--limit 1200] [--only mnist:tsvm ...]``
"""

from __future__ import annotations

import argparse
import cProfile
import ctypes
import gc
import io
import json
import pstats
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import (
    Contention,
    PeakRSS,
    add_thread_arg,
    apply_threads,
    child_env,
    csr_bytes,
    fmt,
    report,
    rss_bytes,
    table,
)

CONFIGS = ["mnist:tsvm", "mnist:da", "secstr:tsvm", "secstr:da"]


class _TimeLimit(Exception):
    pass


class _Log:
    """stderr replacement: timestamps each line of the estimators' verbose output."""

    def __init__(self, path: Path, t0: float):
        self.fh, self.t0 = open(path, "w", buffering=1), t0

    def write(self, s: str) -> None:
        for line in s.splitlines():
            if line.strip():
                self.fh.write(f"{time.perf_counter() - self.t0:9.1f}s {line.strip()}\n")

    def flush(self) -> None:
        self.fh.flush()


def release_free_heap() -> None:
    """Give freed heap pages back to the OS (glibc keeps them after large frees)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def load(problem: str):
    """X (all rows), y_semi (-1 = unlabeled), evaluation rows and their labels, extras."""
    from _common import mnist_even_odd, pick_labeled, secstr_full, semi_targets

    if problem == "mnist":
        X, y = mnist_even_odd()
        lab = pick_labeled(y, 1000, seed=0)
        y_semi = semi_targets(y, lab)
        return X, y_semi, np.flatnonzero(y_semi == -1), y, "1,000 random rows labeled"
    X, y_semi, y, held_out = secstr_full(10000)
    return X, y_semi, held_out, y, "official 10,000-labeled split 0"


def child(problem: str, method: str, limit: float, log_path: Path, out_path: Path) -> None:
    t_start = time.perf_counter()
    import scipy.sparse as sp

    from semisup import DeterministicAnnealingSVM, TransductiveSVM
    from semisup.solvers.design import Design

    # Load numba and the compiled kernels first: since imports became lazy they load
    # during the first large fit, and their ~70 MiB are not memory the data costs.
    warm = Design(sp.random(64, 16, density=0.5, format="csr", random_state=0), parallel=True)
    warm.rmatvec(warm.matvec(np.zeros(warm.n_weights)))
    del warm
    rss_start = rss_bytes()
    X, y_semi, eval_rows, y_true, labels_note = load(problem)
    gc.collect()
    release_free_heap()
    rss_data = rss_bytes()
    est = (TransductiveSVM if method == "tsvm" else DeterministicAnnealingSVM)(
        lam=1e-3, lam_u=1.0, verbose=1)
    result = {"problem": problem, "method": method, "rows": X.shape[0], "nnz": int(X.nnz),
              "n_labeled": int(np.sum(y_semi != -1)), "labels": labels_note,
              "csr_bytes": csr_bytes(X), "rss_start": rss_start, "rss_data": rss_data,
              "load_seconds": time.perf_counter() - t_start}

    def alarm(signum, frame):
        raise _TimeLimit

    signal.signal(signal.SIGALRM, alarm)
    sys.stderr = _Log(log_path, time.perf_counter())
    prof = cProfile.Profile()
    with PeakRSS() as mem:
        t0 = time.perf_counter()
        signal.alarm(int(limit))
        try:
            prof.enable()
            est.fit(X, y_semi)
            prof.disable()
            result["status"] = "completed"
        except _TimeLimit:
            prof.disable()
            result["status"] = f"stopped at the {limit:.0f} s limit"
        finally:
            signal.alarm(0)
        result["fit_seconds"] = time.perf_counter() - t0
    sys.stderr = sys.__stderr__
    result["peak_rss"] = mem.peak
    result["peak_method"] = mem.method
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(12)
    result["profile"] = buf.getvalue()
    if result["status"] == "completed":
        r = est.fit_results_[0]
        result.update(rounds=r.n_iter, cg=r.n_cg_iter, objective=float(est.objective_),
                      switches=getattr(r, "n_switches", None))
        pred = est.transduction_[eval_rows]
        result["acc_eval"] = float(np.mean(pred == y_true[eval_rows]))
        result["n_eval"] = int(eval_rows.size)
        if problem == "mnist":
            from _common import mnist_even_odd

            Xt, yt = mnist_even_odd("test")
            result["acc_test"] = float(np.mean(est.predict(Xt) == yt))
    out_path.write_text(json.dumps(result))


def run_config(cfg: str, limit: float, workdir: Path) -> dict:
    problem, method = cfg.split(":")
    log_path, out_path = workdir / f"{problem}_{method}.log", workdir / f"{problem}_{method}.json"
    cmd = [sys.executable, __file__, "--child", cfg, "--limit", str(limit),
           "--log", str(log_path), "--out", str(out_path)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit + 600,
                              env=child_env())
        err = proc.stderr[-3000:] if proc.returncode else ""
    except subprocess.TimeoutExpired:
        err = "hard timeout: child killed"
    res = json.loads(out_path.read_text()) if out_path.exists() else {
        "problem": problem, "method": method, "status": f"failed: {err}"}
    res["wall_seconds"] = time.perf_counter() - t0
    res["log_tail"] = log_path.read_text().splitlines()[-8:] if log_path.exists() else []
    res["log_lines"] = len(log_path.read_text().splitlines()) if log_path.exists() else 0
    return res


def summarise(results) -> list[str]:
    rows, mem_rows, details = [], [], []
    for r in results:
        name = f"{r['problem']} {r['method'].upper()}"
        if "fit_seconds" not in r:
            rows.append([name, r["status"], "-", "-", "-", "-", "-", "-", "-"])
            continue
        done = r["status"] == "completed"
        rows.append([name, r["status"], f"{r['rows']:,} / {r['nnz']:,}", r["n_labeled"],
                     r["fit_seconds"], r.get("rounds", "-"),
                     r.get("cg", "-"), fmt(r["acc_eval"]) + f" (n={r['n_eval']:,})" if done
                     else "-", r.get("acc_test", "-")])
        peak_all = r["peak_rss"] - r["rss_start"]
        mem_rows.append([name, r["csr_bytes"] / 2**20, r["rss_start"] / 2**20,
                         (r["rss_data"] - r["rss_start"]) / 2**20, r["peak_rss"] / 2**20,
                         peak_all / r["csr_bytes"],
                         (r["peak_rss"] - r["rss_data"]) / r["csr_bytes"]])
        details.append(f"### {name}\n\nStatus: {r['status']}; data loading "
                       f"{r['load_seconds']:.1f} s; {r.get('log_lines', 0)} progress lines.  "
                       + (f"Switches: {r['switches']:,}.  " if r.get("switches") is not None
                          else "")
                       + (f"Objective {r['objective']:.8g}." if done else "")
                       + "\n\nLast progress lines:\n\n```\n" + "\n".join(r["log_tail"])
                       + "\n```\n\ncProfile (top 12 by own time):\n\n```\n"
                       + r["profile"].strip()[-3500:] + "\n```")
    return [
        "## Training\n\n" + table(
            ["run", "status", "rows / nnz", "labeled", "fit seconds", "rounds", "CG iterations",
             "accuracy, held-out pool rows", "accuracy, MNIST test"], rows),
        "## Memory\n\nPeak RSS during `fit` (VmHWM reset just before `fit`, after "
        "`gc.collect()` and `malloc_trim(0)` so that memory freed while loading is not "
        "counted as data).  `peak - start` "
        "counts everything above the interpreter with the libraries and the compiled "
        "kernels loaded (data "
        "included); `fit increment` is what `fit` adds on top of the loaded data.\n\n"
        + table(["run", "CSR MiB", "RSS start MiB", "data loaded (+MiB)", "peak RSS MiB",
                 "(peak - start) / CSR", "fit increment / CSR"], mem_rows),
        "## Details\n\n" + "\n\n".join(details),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=float, default=1200.0)
    ap.add_argument("--only", nargs="+", default=CONFIGS, choices=CONFIGS)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--log", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    add_thread_arg(ap)
    args = ap.parse_args()
    suffix, threads_note = apply_threads(args)
    if args.child:
        problem, method = args.child.split(":")
        child(problem, method, args.limit, Path(args.log), Path(args.out))
        return
    results = []
    with Contention() as load_, tempfile.TemporaryDirectory() as tmp:
        for cfg in args.only:
            print(f"running {cfg} ...", file=sys.stderr, flush=True)
            results.append(run_config(cfg, args.limit, Path(tmp)))
            print(f"  {results[-1].get('status')} in {results[-1]['wall_seconds']:.0f} s",
                  file=sys.stderr, flush=True)
    report("bench_large" + suffix, "Scale problems: MNIST (60k) and SecStr (1.27M rows)", [
        load_.line(),
        threads_note,
        "TransductiveSVM (S=max) and DeterministicAnnealingSVM with lam=0.001, lam_u=1, "
        "positive_fraction from the labeled rows, default tolerances and numba/BLAS "
        f"threads; time limit {args.limit:.0f} s per run.  `rounds` = L2-SVM-MFN fits "
        "(TSVM) or alternating (p, w) steps (DA).",
        *summarise(results),
    ])


if __name__ == "__main__":
    main()
