"""Why S4VM needs the CV guard: its separators share the labels' balance (issue 26).

For each draw of a set (the stratified draws of ``bench_defaults.py``, seeds 1..7): the
accuracy on the unlabeled rows and the share of them put in ``classes_[1]`` by scikit-learn's
``SVC()``, by S4VM's own supervised SVM (step 2 of the method), by S4VM as published
(``fallback="none"``) and by the default (``fallback="cv"``), with S4VM's worst-case gain over
its SVM (rows) against the kept separators.  Prints a markdown table.

Run::

    python benchmarks/s4vm_balance.py wpbc ida-breast-cancer --labels 100
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import load_set  # noqa: E402


def _cell(pred: np.ndarray, truth: np.ndarray, pos) -> str:
    """Accuracy in % and the share predicted ``pos``."""
    return f"{100 * np.mean(pred == truth):.1f} ({np.mean(pred == pos):.2f})"


def main() -> None:
    from sklearn.svm import SVC

    from semisup import S4VM

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sets", nargs="+")
    ap.add_argument("--labels", type=int, default=100)
    ap.add_argument("--draws", type=int, default=7)
    args = ap.parse_args()
    print("| set | draw | labeled share of classes_[1] | true share (unlabeled) | SVC() % (share)"
          " | S4VM's SVM % (share) | S4VM published % (share) | worst-case gain (rows) "
          "| S4VM default % | guard fell back |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in args.sets:
        ds = load_set(name)
        for s in range(1, args.draws + 1):
            lab, unl, y = ds.official_split(args.labels, s)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                svc = SVC().fit(ds.X[lab], ds.y[lab]).predict(ds.X[unl])
                plain = S4VM(random_state=0, fallback="none").fit(ds.X, y)
                guarded = S4VM(random_state=0).fit(ds.X, y)
            pos = plain.classes_[1]
            r = plain.fit_results_[0]
            truth = ds.y[unl]
            own = np.where(r.svm_labels_u > 0, pos, plain.classes_[0])

            print(f"| {name} | {s} | {np.mean(ds.y[lab] == pos):.2f} | "
                  f"{np.mean(truth == pos):.2f} | {_cell(svc, truth, pos)} | "
                  f"{_cell(own, truth, pos)} | "
                  f"{_cell(plain.transduction_[unl], truth, pos)} | {r.worst_case_gain:g} | "
                  f"{100 * np.mean(guarded.transduction_[unl] == truth):.1f} | "
                  f"{guarded.fallback_} |", flush=True)


if __name__ == "__main__":
    main()
