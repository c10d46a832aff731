"""AutoClassifier with classes of a single labeled row: partial cross-validation (issue 26).

Ten labels over six or seven classes leave some classes with one labeled row; before, no fold
existed and the automatic classifier kept logistic regression.  Now such rows train every
fold and the rows of the other classes are held out (``semisup.meta.auto.cv_plan``).  Per
labeling: LogisticRegression and SVC on the labeled rows, LabelSpreading(alpha=0.99) with no
guard, and AutoClassifier(random_state=0) with its defaults; accuracy on the unlabeled rows,
CPU seconds of the automatic classifier.  Labelings kept apart from the benchmark of
defaults (SSL-book split 1, draws 1-2): stratified draws 3-5 (segment, satimage: 10 labels;
usps10: 15), 1-3 (scikit-learn's digits, 15 labels), the SSL book's official coil splits 2-5
at 10 labels; dna at 5 labels and ionosphere at 3 (fewer than two classes with two rows:
logistic regression, as before).  Run::

    python benchmarks/auto_partial_cv.py segment:10:3,4,5 satimage:10:3,4,5 coil:10:2,3,4,5 \\
        digits:15:1,2,3 usps10:15:3,4,5 dna:5:3,4,5 ionosphere:3:3,4,5

One JSON line per labeling; ``benchmarks/results/auto_partial_cv.md``.  A labels field
``k2`` draws two labeled rows per class (seeded by the draw number), as
``benchmarks/auto_label_spreading.py`` does; the confirmation run of that file's decisions
on draws it did not use::

    python benchmarks/auto_partial_cv.py digits:k2:4,5 segment:k2:4,5 satimage:k2:4,5 \\
        usps10:k2:4,5 coil:k2:4,5 dna:k2:4,5
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import load_any, per_class_draw, stratified_draw  # noqa: E402


def run(spec: str) -> None:
    """One ``set:labels:draws`` spec, one JSON line per draw."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC

    from semisup import AutoClassifier, LabelSpreading

    name, n_labeled, draws = spec.split(":")
    d, X, y = load_any(name)
    for seed in map(int, draws.split(",")):
        if n_labeled.startswith("k"):      # k2: two labeled rows per class
            lab = per_class_draw(y, int(n_labeled[1:]), seed)
            unl = np.setdiff1d(np.arange(y.size), lab)
            yy = np.full(y.size, -1)
            yy[lab] = y[lab]
        elif d is not None and int(n_labeled) in d.official:
            lab, unl, yy = d.official_split(int(n_labeled), seed)
        else:
            lab = stratified_draw(y, int(n_labeled), seed)
            unl = np.setdiff1d(np.arange(y.size), lab)
            yy = np.full(y.size, -1)
            yy[lab] = y[lab]
        out = {"set": name, "labels": n_labeled, "seed": seed,
               "counts": np.bincount(y[lab]).tolist()}
        lr = LogisticRegression(max_iter=1000).fit(X[lab], y[lab])
        out["LR"] = np.mean(lr.predict(X[unl]) == y[unl])
        out["SVC"] = np.mean(SVC().fit(X[lab], y[lab]).predict(X[unl]) == y[unl])
        ls = LabelSpreading(alpha=0.99, fallback="none").fit(X, yy)
        out["LS"] = np.mean(np.asarray(ls.transduction_)[unl] == y[unl])
        t = time.process_time()
        auto = AutoClassifier(random_state=0).fit(X, yy)
        out["cpu"] = time.process_time() - t
        out["Auto"] = np.mean(np.asarray(auto.transduction_)[unl] == y[unl])
        out["chosen"] = auto.best_candidate_
        print(json.dumps({k: round(100 * v, 1) if k in ("LR", "SVC", "LS", "Auto") else v
                          for k, v in out.items()}), flush=True)


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    for spec in sys.argv[1:]:
        run(spec)
