"""Model selection with unlabeled rows: GridSearchCV over the labeled rows only.

On an SSL-book set (official splits, ``semisup.datasets.load_sslbook``), a
``GridSearchCV`` with :class:`semisup.model_selection.LabeledStratifiedKFold` (the labeled
rows are cross-validated, every unlabeled row stays in every training fold; the
estimators' ``score`` ignores ``-1`` rows) picks

* ``LapRLS``'s graph (``n_neighbors``, normalised or unnormalised Laplacian) and
  regularisation (``gamma_I``), and
* ``TransductiveSVM``'s ``lam`` and ``lam_u``,

and its CV estimate is set next to the accuracy of the refitted best model on the
unlabeled rows (which the search never scores).  The natural peer, measured in the same
run on the same grid, is what a scikit-learn user writes without this module:
``GridSearchCV(est, grid, cv=StratifiedKFold(5), scoring="accuracy")`` on the same ``y``
(``-1`` is a class to it: unlabeled rows land in test folds and count as errors, and each
training fold loses a fifth of the unlabeled rows).  "Oracle" is the best accuracy on the
unlabeled rows over the grid (the ceiling of any selection rule); "defaults" the
estimator's default parameters.

Run: ``python benchmarks/bench_model_selection.py [--set digit1] [--splits 1]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np
from sklearn.model_selection import GridSearchCV, ParameterGrid, StratifiedKFold

sys.path.insert(0, os.path.dirname(__file__))
from _common import PeakRSS, Timer, report, table  # noqa: E402

from semisup import LapRLS, TransductiveSVM  # noqa: E402
from semisup.datasets import load_sslbook, partial_labels  # noqa: E402
from semisup.model_selection import LabeledStratifiedKFold  # noqa: E402

GRIDS = {
    "LapRLS": (LapRLS, {"n_neighbors": [6, 12], "laplacian": ["unnormalized", "normalized"],
                        "gamma_A": [1e-6, 1e-4], "gamma_I": [1e2, 1e4]}),
    "TransductiveSVM": (TransductiveSVM, {"lam": [1e-3, 1e-2, 1e-1], "lam_u": [0.1, 1.0]}),
}


def unlabeled_accuracy(model, truth, unl) -> float:
    return float(np.mean(model.transduction_[unl] == truth[unl]))


def short(params: dict) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in sorted(params.items()))


def run(set_name: str, n_labeled: int, n_splits: int, n_folds: int):
    data = load_sslbook(set_name, n_labeled)
    classes = np.unique(data.y)
    truth = partial_labels(data.y, np.arange(data.y.size), classes=classes)
    rows, gaps = [], {"semisup": [], "peer": []}
    for s in range(n_splits):
        y = partial_labels(data.y, data.splits[s], classes=classes)
        unl = data.unlabeled_splits[s]
        for name, (cls, grid) in GRIDS.items():
            oracle = max(unlabeled_accuracy(cls(**p).fit(data.X, y), truth, unl)
                         for p in ParameterGrid(grid))
            default = unlabeled_accuracy(cls().fit(data.X, y), truth, unl)
            for label, cv, scoring in [
                    ("semisup: LabeledStratifiedKFold",
                     LabeledStratifiedKFold(n_folds, random_state=s), None),
                    ("peer: StratifiedKFold + accuracy",
                     StratifiedKFold(n_folds, shuffle=True, random_state=s), "accuracy")]:
                search = GridSearchCV(cls(), grid, cv=cv, scoring=scoring)
                with Timer() as t, PeakRSS() as mem, warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    search.fit(data.X, y)
                acc = unlabeled_accuracy(search.best_estimator_, truth, unl)
                gaps["semisup" if label.startswith("semisup") else "peer"].append(
                    abs(search.best_score_ - acc))
                rows.append([s + 1, name, label, search.best_score_, acc, oracle, default,
                             short(search.best_params_), t.seconds,
                             (mem.peak - mem.start) / 2**20])
                print(rows[-1], flush=True)
    return rows, gaps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", default="digit1")
    ap.add_argument("--n-labeled", type=int, default=100)
    ap.add_argument("--splits", type=int, default=1)
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()
    rows, gaps = run(args.set, args.n_labeled, args.splits, args.folds)
    headers = ["split", "estimator", "search", "CV estimate", "acc. unlabeled (refit best)",
               "oracle over grid", "defaults", "chosen", "search time (s)",
               "peak extra memory (MiB)"]
    summary = table(["search", "mean abs(CV estimate - unlabeled accuracy)"],
                    [[k, float(np.mean(v))] for k, v in gaps.items()])
    ratio = [[r1[1], r2[8] / r1[8]] for r1, r2 in zip(rows[::2], rows[1::2], strict=True)]
    sections = [
        f"SSL-book set `{args.set}`, {args.n_labeled} labeled rows, official splits "
        f"1..{args.splits}, {args.folds} folds. Grids: " + "; ".join(
            f"{n}: {g}" for n, (_, g) in GRIDS.items()),
        table(headers, rows),
        "Gap between the CV estimate and the accuracy on the unlabeled rows:\n\n" + summary,
        "Search time ratio peer / semisup (same grid, same folds count):\n\n" +
        table(["estimator", "peer time / semisup time"], ratio),
    ]
    report("model_selection", "Model selection over labeled rows (GridSearchCV)", sections)


if __name__ == "__main__":
    main()
