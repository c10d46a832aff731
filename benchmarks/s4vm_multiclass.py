"""S4VM beyond two classes: ranking the final SVMs against the claims rule, same fits.

Each one-vs-rest problem of :class:`semisup.S4VM` ends with a final SVM: the supervised SVM
of the labeled rows where the problem fell back to it, else an SVM refitted on every row with
the safe labels.  Two ways to turn them into one class per unlabeled row, read off the same
fit (the estimator's defaults, ``random_state=0``):

* *final argmax* (before 0.3.0): the class of the largest final decision value;
* *claims* (:func:`semisup.linear.s4vm.claimed_scores`, the estimator's since 0.3.0): the
  class whose safe labels alone claim the row, else the supervised SVMs' choice among the
  claiming classes (all of them when none claims it);
* for comparison: the supervised SVMs alone, and the claims ranked by the final SVMs
  (always, or only where no problem fell back).

Cells: the multi-class sets of the benchmark of defaults (``bench_defaults.py``: coil with
its official splits at 10 and 100 labels, segment, dna, satimage and ten-class USPS with
stratified draws) at 10 and 100 labels and at 2 labels per class, splits 1-2; accuracy on
the unlabeled rows, with ``SVC()`` on the labeled rows beside them.

Run::

    python benchmarks/s4vm_multiclass.py            # about 15 min on 2 cores
    python benchmarks/s4vm_multiclass.py --render
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fit_default, report, resumable_cells, table  # noqa: E402
from bench_defaults import load_set  # noqa: E402

NAME = "s4vm_multiclass"
SETS = ["coil", "segment", "dna", "satimage", "usps10"]
LABELS = [10, 100, "2/class"]


def measure(name: str, n_labeled, split: int, data) -> dict:
    from sklearn.svm import SVC

    from semisup import S4VM

    est, lab, unl, _, cpu = fit_default(lambda: S4VM(random_state=0, fallback="none"), data,
                                        n_labeled, split)
    # the final SVMs on the unlabeled rows (dual_coef_ spans the training rows)
    from semisup.kernels import kernel_matrix
    from semisup.linear.s4vm import claimed_scores

    K = kernel_matrix(data.X[unl], est.X_fit_, kernel="rbf", gamma=est.gamma_)
    final = K @ est.dual_coef_.T + est.intercept_
    supervised = K @ est.supervised_dual_coef_.T + est.supervised_intercept_
    claims = np.column_stack([r.labels_u > 0 for r in est.fit_results_])
    truth = data.y[unl]

    def acc(scores):
        return float(np.mean(est.classes_[scores.argmax(1)] == truth))

    svc = SVC().fit(data.X[lab], data.y[lab])
    return dict(set=name, labels=n_labeled, split=split,
                final_argmax=acc(final), supervised_argmax=acc(supervised),
                claims=float(np.mean(est.transduction_[unl] == truth)),
                claims_check=acc(claimed_scores(supervised, claims)),
                claims_final=acc(claimed_scores(final, claims)),
                claims_final_if_all_refit=acc(claimed_scores(
                    supervised if est.svm_labels_kept_.any() else final, claims)),
                svc=float(np.mean(svc.predict(data.X[unl]) == truth)),
                fallbacks=int(est.svm_labels_kept_.sum()), problems=int(est.svm_labels_kept_.size),
                cpu=cpu)


def render(records: list[dict]) -> str:
    by_cell = defaultdict(list)
    for r in records:
        by_cell[(r["set"], str(r["labels"]))].append(r)
    rules = {"final argmax": "final_argmax", "claims": "claims",
             "supervised argmax (no claims)": "supervised_argmax",
             "claims, final SVMs ranking them": "claims_final",
             "claims, final SVMs ranking them where none fell back":
                 "claims_final_if_all_refit"}
    rows, gains = [], {rule: [] for rule in rules}
    for (name, n), recs in by_cell.items():
        m = {k: float(np.mean([r[k] for r in recs]))
             for k in (*rules.values(), "svc", "cpu")}
        for rule, key in rules.items():
            gains[rule].append(m[key] - m["svc"])
        rows.append([name, n, len(recs), f"{100 * m['svc']:.1f}",
                     *(f"{100 * m[key]:.1f}" for key in rules.values()),
                     f"{np.mean([r['fallbacks'] for r in recs]):.1f} of "
                     f"{recs[0]['problems']}", f"{m['cpu']:.1f}"])
    summary = table(["rule", "cells", "cells >= SVC - 1", "mean gain over SVC (pts)"], [
        [rule, len(g), int(np.sum(np.array(g) >= -0.01 - 1e-12)),
         f"{100 * np.mean(g):+.1f}"] for rule, g in gains.items()])
    return report(NAME, "S4VM beyond two classes: final argmax vs claims, same fits", [
        __doc__.split("\n\n")[1] + "\n\n" + __doc__.split("\n\n")[2],
        "## Summary (accuracy averaged over a cell's splits)\n\n" + summary,
        "## Cells (accuracy %)\n\n" + table(
            ["set", "labels", "splits", "SVC", *rules, "problems fallen back (mean)",
             "CPU s per fit"], rows)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--render", action="store_true")
    args = ap.parse_args()
    cells = [] if args.render else [(s, n, k) for s in SETS for n in LABELS for k in (1, 2)]
    render(resumable_cells(NAME, cells, measure, load_set))


if __name__ == "__main__":
    main()
