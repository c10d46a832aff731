"""Does a labeled-only CV guard add anything to ``UniversumSVM`` with its defaults?

With ``unlabeled="ignore"`` (default) and no ``X_universum`` the Universum SVM is the
squared-hinge SVM of :class:`semisup.L2SVM` with ``lam = 1 / (2C) = 4`` -- the guard's
supervised counterpart itself.  This script checks that on the SSL-book cells: it fits both
with their defaults on the labeled rows of an official split and counts the unlabeled rows
where their predictions differ.  Where none differ, the guard's two candidates are one
model: every fold ties, the tie goes to the counterpart, and the guarded estimator predicts
what the unguarded one does, at about five times the cost.

Run::

    nice -n 5 python benchmarks/universum_guard_check.py --split 2
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import SSLBOOK, load_set  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", type=int, default=2)
    ap.add_argument("--labels", nargs="+", type=int, default=[10, 100])
    args = ap.parse_args()
    from semisup import L2SVM, UniversumSVM

    cells = differ_cells = 0
    for name in SSLBOOK:
        d = load_set(name)
        for n_labeled in args.labels:
            lab = np.sort(np.asarray(d.official[n_labeled][args.split - 1]))
            unl = np.setdiff1d(np.arange(d.y.size), lab)
            y = np.full(d.y.size, -1)
            y[lab] = d.y[lab]
            uni = UniversumSVM().fit(d.X, y)
            sup = L2SVM().fit(d.X[lab], d.y[lab])
            pu, ps = uni.predict(d.X[unl]), sup.predict(d.X[unl])
            gap = float(np.max(np.abs(np.asarray(uni.decision_function(d.X[unl]))
                                      - np.asarray(sup.decision_function(d.X[unl])))))
            n_diff = int(np.sum(pu != ps))
            cells += 1
            differ_cells += n_diff > 0
            print(f"{name:7s} {n_labeled:3d} split {args.split}  rows predicted differently "
                  f"{n_diff:4d} of {unl.size}  max |decision difference| {gap:.2e}", flush=True)
    print(f"UniversumSVM() vs L2SVM(): predictions differ on {differ_cells} of {cells} cells")


if __name__ == "__main__":
    main()
