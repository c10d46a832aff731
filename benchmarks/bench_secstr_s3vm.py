"""TSVM and DA on SecStr 83,679 x 315 (one-hot), 1,000 labels (SSL-book split 0), with profiles.

The problem of issue 15 (SVMlin: about 20 s TSVM, 44 s DA on this machine class), with
``lam=0.001, lam_u=1`` and the positive fraction of the labeled rows.  Each run is a fresh
subprocess: the JIT is warmed on a small slice first, then one ``fit`` is timed under cProfile
(top lines by own time reported).  ``--baseline-src DIR`` runs the same in a second source
tree (e.g. ``git archive <commit> src | tar -x -C DIR``), interleaved run by run, so that the
two are compared under the same machine load.

Usage: ``python benchmarks/bench_secstr_s3vm.py [--baseline-src DIR] [--repeat 1]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from _common import Contention, report, table

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"

CHILD = r"""
import cProfile, io, json, pstats, sys, time
import numpy as np
from semisup import DeterministicAnnealingSVM, TransductiveSVM
from semisup.datasets import load_sslbook, one_hot_secstr, partial_labels
try:
    import semisup._accel as acc
except ImportError:  # a source tree from before the compile threshold
    acc = None
b = load_sslbook("secstr", 1000)
X = one_hot_secstr(b.X)
lab = b.splits[0]
y = partial_labels(b.y, lab)
est = (TransductiveSVM if sys.argv[1] == "tsvm" else DeterministicAnnealingSVM)(lam=1e-3,
                                                                              lam_u=1.0)
if acc is not None:
    keep, acc.COMPILE_MIN_SIZE = acc.COMPILE_MIN_SIZE, 0
est.fit(X[:2000], np.where(np.arange(2000) < 50, np.arange(2000) % 2, -1))  # warm the JIT
from semisup.solvers.design import Design  # and the parallel kernels the small fit skipped
D = Design(X, parallel=True)
D.rmatvec(D.matvec(np.zeros(D.n_weights)))
if acc is not None:
    acc.COMPILE_MIN_SIZE = keep
prof = cProfile.Profile()
cpu0, t0 = time.process_time(), time.perf_counter()
prof.enable()
est.fit(X, y)
prof.disable()
wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
unl = np.flatnonzero(y == -1)
truth = np.searchsorted(np.unique(b.y[lab]), b.y[unl])
r = est.fit_results_[0]
s = io.StringIO()
pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(12)
top = s.getvalue()
top = top[top.find("ncalls"):]
print(json.dumps(dict(wall=wall, cpu=cpu, objective=float(est.objective_),
                      accuracy=float(np.mean(est.transduction_[unl] == truth)),
                      rounds=int(r.n_iter), cg=int(r.n_cg_iter), profile=top)))
"""


def run(src: Path, method: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, "-c", CHILD, method], env=env, capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline-src", type=Path, help="source tree of the version to compare")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    trees = [("this branch", SRC)]
    if args.baseline_src:
        trees.insert(0, ("baseline", args.baseline_src))
    rows, profiles, best = [], [], {}
    with Contention() as load:
        for method in ("tsvm", "da"):
            for _ in range(args.repeat):
                for name, src in trees:
                    res = run(src, method)
                    key = (method, name)
                    if key not in best or res["wall"] < best[key]["wall"]:
                        best[key] = res
    for (method, name), res in best.items():
        rows.append([method.upper(), name, res["wall"], res["cpu"], res["objective"],
                     res["accuracy"], res["rounds"], res["cg"]])
        profiles.append(f"### {method.upper()}, {name}\n\n```\n{res['profile'].rstrip()}\n```")
    ratios = []
    if args.baseline_src:
        for method in ("tsvm", "da"):
            b, n = best[(method, "baseline")], best[(method, "this branch")]
            ratios.append(f"{method.upper()}: this branch / baseline = {n['wall'] / b['wall']:.2f} "
                          f"(wall), {n['cpu'] / b['cpu']:.2f} (CPU)")
    report("bench_secstr_s3vm", "TSVM and DA on SecStr 83,679 x 315, 1,000 labels", [
        load.line(),
        "`fit` seconds (wall and CPU of the process, best of the repeats), transductive "
        "objective, accuracy on the unlabeled rows, rounds (MFN fits or DA (p, w) steps) and "
        "CG iterations.",
        table(["method", "source", "wall s", "CPU s", "objective", "accuracy", "rounds",
               "CG iterations"], rows),
        "\n".join(f"- {r}" for r in ratios) if ratios else "",
        "## cProfile of the timed fit (top 12 by own time)",
        *profiles])


if __name__ == "__main__":
    main()
