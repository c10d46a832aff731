"""SemiSupervisedNB's ``lam_u="auto"`` skipping weights whose transduction collapses (issue 26).

On the SSL book's ``text`` set (tf-idf rows of unit length over 11,960 words) EM with
unlabeled weight tends to put every unlabeled document in one class: the smoothing outweighs
a class's word mass, so the class prior decides the E-step.  For each official split: the
weight the cross-validation chose (``lam_u_scores_``; without cross-validation 1) and the
accuracy on the unlabeled rows of that weight's fit (the rule before the change), the weight
``lam_u="auto"`` now uses (the first of its order whose transduction does not collapse) and
its accuracy, against ``LogisticRegression()`` on the same labeled rows.  Prints markdown.

Run::

    python benchmarks/nb_collapse.py --labels 10 100
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import load_set  # noqa: E402


def cv_choice(model) -> float:
    """The weight the cross-validation alone picks (ties to the larger), or 1 without it."""
    scores = model.lam_u_scores_
    if scores is None:
        return 1.0
    return max(scores, key=lambda lam: (round(scores[lam], 12), lam))


def main() -> None:
    from sklearn.linear_model import LogisticRegression

    from semisup import SemiSupervisedNB

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="text")
    ap.add_argument("--labels", type=int, nargs="+", default=[10, 100])
    ap.add_argument("--splits", type=int, default=10)
    args = ap.parse_args()
    ds = load_set(args.set)
    print(f"Set {args.set}; accuracy (%) on the unlabeled rows.\n")
    print("| labels | split | LogisticRegression | CV's weight | its fit | collapsed weights "
          "skipped | weight used | its fit (now) |")
    print("|---|---|---|---|---|---|---|---|")
    for n_labeled in args.labels:
        before, after, lr_all = [], [], []
        for s in range(1, args.splits + 1):
            lab, unl, y = ds.official_split(n_labeled, s)
            truth = ds.y[unl]
            lr = np.mean(LogisticRegression().fit(ds.X[lab], ds.y[lab]).predict(ds.X[unl])
                         == truth)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                auto = SemiSupervisedNB().fit(ds.X, y)
                first = cv_choice(auto)
                old = SemiSupervisedNB(lam_u=first).fit(ds.X, y)
            a_old = np.mean(old.transduction_[unl] == truth)
            a_new = np.mean(auto.transduction_[unl] == truth)
            before.append(a_old)
            after.append(a_new)
            lr_all.append(lr)
            skipped = ", ".join(f"{w:g}" for w in auto.lam_u_collapsed_) or "-"
            print(f"| {n_labeled} | {s} | {100 * lr:.1f} | {first:g} | {100 * a_old:.1f} | "
                  f"{skipped} | {auto.lam_u_:g} | {100 * a_new:.1f} |", flush=True)
        print(f"| {n_labeled} | mean | {100 * np.mean(lr_all):.1f} | | "
              f"{100 * np.mean(before):.1f} | | | {100 * np.mean(after):.1f} |")


if __name__ == "__main__":
    main()
