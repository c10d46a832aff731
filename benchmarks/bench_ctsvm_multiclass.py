"""ConvexTSVM beyond two classes: the kernel, spectral and Nystroem routes (issue 26).

One-vs-rest solves one relaxation per class.  On the kernel route every evaluation
multiplies by the ``n x n`` Cholesky factor, so ``k`` classes cost ``k`` problems of that
size; the spectral route (``solver='spectral'``) runs the same algorithm on the leading
``m`` eigenvectors of the centred kernel, computed once for all classes; the Nystroem route
on ``m`` random landmarks.  Per set (the multi-class sets of ``bench_defaults.py``'s
``extra`` group: 2,000 rows each), the first stratified draw of ``--labels`` labels:
CPU seconds of ``ConvexTSVM(fallback="none", ...).fit`` per route, accuracy on the
unlabeled rows, and the share of unlabeled rows labeled as the kernel route labels them;
then the default ``ConvexTSVM()`` (its guard included) against scikit-learn's ``SVC()``.

Run::

    nice -n 5 python benchmarks/bench_ctsvm_multiclass.py     # ~15 min on 2 cores
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report, table  # noqa: E402
from bench_defaults import load_set  # noqa: E402

ROUTES = {
    "kernel (lowrank)": dict(solver="lowrank"),
    "spectral, m = 300, tol = 1e-3 (auto)": dict(solver="spectral", n_components=300),
    "spectral, m = 300, tol = 1e-5": dict(solver="spectral", n_components=300, tol=1e-5),
    "spectral, m = 500": dict(solver="spectral", n_components=500),
    "Nystroem, m = 300": dict(solver="nystroem", n_components=300),
    "Nystroem, m = 500": dict(solver="nystroem", n_components=500),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", default=["dna", "satimage", "segment", "usps10"])
    ap.add_argument("--labels", type=int, default=100)
    ap.add_argument("--split", type=int, default=1)
    ap.add_argument("--name", default="ctsvm_multiclass")
    args = ap.parse_args()
    from sklearn.svm import SVC

    from semisup import ConvexTSVM

    warnings.simplefilter("ignore")
    rows, default_rows = [], []
    for name in args.sets:
        d = load_set(name)
        lab, unl, y = d.official_split(args.labels, args.split)
        k = np.unique(d.y).size
        ref = None
        for route, params in ROUTES.items():
            t0 = time.process_time()
            est = ConvexTSVM(fallback="none", random_state=0, **params).fit(d.X, y)
            cpu = time.process_time() - t0
            pred = est.transduction_[unl]
            ref = pred if ref is None else ref
            evals = sum(e.fit_results_["n_evals"] for e in est.estimators_)
            rows.append([name, k, route, cpu, 100 * np.mean(pred == d.y[unl]),
                         100 * np.mean(pred == ref), evals])
            print(*rows[-1], flush=True)
        t0 = time.process_time()
        est = ConvexTSVM(random_state=0).fit(d.X, y)
        cpu = time.process_time() - t0
        svc = SVC().fit(d.X[lab], d.y[lab])
        default_rows.append([name, k, est.estimators_[0].solver_ if not est.fallback_ else
                             "guard: SVC", cpu,
                             100 * np.mean(est.transduction_[unl] == d.y[unl]),
                             100 * np.mean(svc.predict(d.X[unl]) == d.y[unl])])
        print(*default_rows[-1], flush=True)
    report(args.name, "ConvexTSVM beyond two classes: kernel, spectral and Nystroem routes", [
        f"First stratified draw of {args.labels} labels (split {args.split}), 2,000 rows per "
        "set; `fallback='none'`, `tol='auto'` (1e-5, and 1e-3 on the spectral route) unless "
        "stated; CPU seconds of the whole one-vs-rest "
        "fit; *agree* = share of the unlabeled rows labeled as the kernel route labels them; "
        "*evaluations* = Lagrangian evaluations summed over the classes.",
        table(["set", "classes", "route", "CPU (s)", "accuracy %", "agree with kernel %",
               "evaluations"], rows),
        "## The default `ConvexTSVM()` (guard included) against `SVC()`",
        table(["set", "classes", "route or fallback", "CPU (s)", "accuracy %", "SVC %"],
              default_rows),
    ])


if __name__ == "__main__":
    main()
