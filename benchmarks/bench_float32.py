"""float32 input: memory and objective of the linear family on SecStr (one-hot) and MNIST.

For each estimator the same problem is fitted three ways, each in a fresh subprocess:

* ``float64``: the one-hot matrix stored as float64 (the reference);
* ``float32``: the same matrix stored as float32 (kept as float32 by the estimator);
* ``float32 (before)``: float32 input to the source tree given by ``--baseline-src``
  (e.g. ``git archive main src | tar -x -C /tmp/main``), which converts it to float64.

Reported: bytes of the input matrix, peak traced memory during ``fit`` (``tracemalloc``, numpy
buffers included; the input itself excluded), peak resident set size of the process, the
objective's relative difference from the float64 fit, accuracy on the unlabeled rows, wall
and CPU time (the JIT is warmed on a small slice of the same dtype first).

Usage: ``python benchmarks/bench_float32.py [--data secstr|mnist] [--extra]
[--baseline-src DIR] [--estimators L2SVM TSVM CCCPS3VM LinearLapRLS]`` (``--extra`` adds
the 1,189,472 extra unlabeled SecStr windows: 1.27M rows; MNIST has real-valued pixels, so
float32 rounds them and the objective moves).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from _common import report, table

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"

CHILD = r"""
import json, resource, sys, time, tracemalloc
import numpy as np
import scipy.sparse as sp
from semisup import CCCPS3VM, L2SVM, LinearLapRLS, TransductiveSVM
from semisup.datasets import load_sslbook, load_secstr_extra, one_hot_secstr, partial_labels
import semisup._accel as acc
est_name, dtype, extra = sys.argv[1], np.dtype(sys.argv[2]), sys.argv[3] == "1"
if sys.argv[4] == "mnist":   # real-valued pixels: float32 rounds them
    from semisup.datasets import load_mnist
    X, digit = load_mnist(split="train")
    X = sp.csr_matrix(X, dtype=dtype)
    lab = np.random.default_rng(0).choice(X.shape[0], 1000, replace=False)
    b = type("B", (), {})()
    b.y = (digit % 2 == 0).astype(np.int64)
    y = np.full(X.shape[0], -1)
    y[lab] = b.y[lab]
else:
    b = load_sslbook("secstr", 1000)
    lab = b.splits[0]
    X = one_hot_secstr(b.X, dtype=dtype)
    y = partial_labels(b.y, lab)
if extra:
    X = sp.vstack([X, one_hot_secstr(load_secstr_extra(), dtype=dtype)], format="csr")
    y = np.concatenate([y, np.full(X.shape[0] - y.size, -1)])
Est = {"L2SVM": L2SVM, "TSVM": TransductiveSVM, "CCCPS3VM": CCCPS3VM,
       "LinearLapRLS": LinearLapRLS}[est_name]
params = {"L2SVM": dict(lam=1e-3), "TSVM": dict(lam=1e-3, lam_u=1.0),
          "CCCPS3VM": dict(lam=1e-3, lam_u=1.0),
          "LinearLapRLS": dict(gamma_A=1e-3, gamma_I=1e-2, solver="cg")}[est_name]
keep, acc.COMPILE_MIN_SIZE = acc.COMPILE_MIN_SIZE, 0
Est(**params).fit(X[:3000], np.where(np.arange(3000) < 60, np.arange(3000) % 2, -1))  # JIT
acc.COMPILE_MIN_SIZE = keep
est = Est(**params)
tracemalloc.start()
cpu0, t0 = time.process_time(), time.perf_counter()
est.fit(X, y)
wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
unl = np.flatnonzero(y[: b.y.size] == -1)
truth = np.searchsorted(np.unique(b.y[lab]), b.y[unl])
print(json.dumps(dict(rows=X.shape[0], input=X.data.nbytes + X.indices.nbytes + X.indptr.nbytes,
                      peak=peak, rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                      objective=float(est.objective_), wall=wall, cpu=cpu,
                      coef=str(est.coef_.dtype),
                      accuracy=float(np.mean(est.transduction_[unl] == truth)))))
"""


def run(src: Path, est: str, dtype: str, extra: bool, data: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, "-c", CHILD, est, dtype, "1" if extra else "0", data],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extra", action="store_true")
    ap.add_argument("--baseline-src", type=Path, default=None)
    ap.add_argument("--estimators", nargs="+", default=["L2SVM", "TSVM"])
    ap.add_argument("--data", choices=("secstr", "mnist"), default="secstr")
    args = ap.parse_args()
    rows = []
    mib = 2.0 ** 20
    for est in args.estimators:
        runs = [("float64", run(SRC, est, "float64", args.extra, args.data)),
                ("float32", run(SRC, est, "float32", args.extra, args.data))]
        if args.baseline_src:
            runs.append(("float32 (before)", run(args.baseline_src, est, "float32",
                                                 args.extra, args.data)))
        ref = runs[0][1]["objective"]
        for label, r in runs:
            rows.append([est, label, r["rows"], f"{r['input'] / mib:.0f}",
                         f"{r['peak'] / mib:.0f}", f"{r['rss'] / mib:.0f}",
                         f"{abs(r['objective'] - ref) / abs(ref):.1e}", f"{r['accuracy']:.4f}",
                         f"{r['wall']:.1f}", f"{r['cpu']:.1f}", r["coef"]])
            print(rows[-1], flush=True)
    headers = ["estimator", "input", "rows", "input MiB", "peak traced in fit MiB",
               "peak RSS MiB", "objective rel. diff. vs float64", "acc. unlabeled",
               "wall s", "CPU s", "coef_ dtype"]
    extra = " + 1,189,472 extra unlabeled rows" if args.extra else ""
    what = ("MNIST train (60,000 x 784 CSR, even vs odd), 1,000 random labels"
            if args.data == "mnist" else f"SecStr one-hot, split 1 with 1,000 labels{extra}")
    suffix = "_mnist" if args.data == "mnist" else ("_extra" if args.extra else "")
    report(f"float32{suffix}", "float32 input to the linear family",
           [f"{what}; `lam=1e-3` (TSVM, CCCPS3VM: `lam_u=1`; LinearLapRLS: `gamma_A=1e-3`, "
            "`gamma_I=1e-2`, CG). "
            f"Load average at the end: {os.getloadavg()[0]:.1f}.", table(headers, rows)])


if __name__ == "__main__":
    main()
