"""The automatic classifier above 4,000 rows, where label spreading is its graph candidate.

USPS (the 7,291 training images; the first 6,000, 256 pixels in [0, 1]) with 50 and 100
labeled rows (two per class, the rest at random), two draws each.  For each draw:
:class:`semisup.AutoClassifier` with its defaults (candidates, 30 s time budget), and each of
its candidates fitted alone — logistic regression and the RBF SVM on the labeled rows,
:class:`semisup.LabelSpreading` and :class:`semisup.TransductiveSVM` with defaults on all
rows — scored by accuracy on the unlabeled rows.

    python benchmarks/bench_auto_large.py
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from _common import report, table


def main() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC

    from semisup import AutoClassifier, LabelSpreading, TransductiveSVM
    from semisup.datasets import load_usps

    X_all, y_all = load_usps()
    X, y_true = np.asarray(X_all[:6000], dtype=float), np.asarray(y_all[:6000])
    rows = []
    for n_labeled in (50, 100):
        for seed in range(2):
            rng = np.random.default_rng(seed)
            pick = np.concatenate([rng.choice(np.flatnonzero(y_true == c), 2, replace=False)
                                   for c in np.unique(y_true)])
            rest = rng.choice(np.setdiff1d(np.arange(y_true.size), pick),
                              n_labeled - pick.size, replace=False)
            y = np.full(y_true.size, -1)
            y[np.r_[pick, rest]] = y_true[np.r_[pick, rest]]
            unl = y == -1
            acc = {}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                t0 = time.perf_counter()
                auto = AutoClassifier(random_state=0).fit(X, y)
                t_auto = time.perf_counter() - t0
                acc["AutoClassifier"] = np.mean(auto.predict(X[unl]) == y_true[unl])
                for name, est in (("LogisticRegression", LogisticRegression(max_iter=1000)),
                                  ("SVC", SVC())):
                    est.fit(X[~unl], y[~unl])
                    acc[name] = np.mean(est.predict(X[unl]) == y_true[unl])
                for name, est in (("LabelSpreading", LabelSpreading()),
                                  ("TransductiveSVM", TransductiveSVM())):
                    est.fit(X, y)
                    acc[name] = np.mean(est.transduction_[unl] == y_true[unl])
            status = {r: s for r, s in zip(auto.cv_results_["candidate_setting"],
                                           auto.cv_results_["status"], strict=True)}
            skipped = [name for name, s in status.items() if s != "ok"]
            rows.append([n_labeled, seed, auto.best_candidate_,
                         *(f"{100 * acc[k]:.1f}" for k in ("AutoClassifier", "LogisticRegression",
                                                           "SVC", "LabelSpreading",
                                                           "TransductiveSVM")),
                         f"{t_auto:.1f}", ", ".join(skipped) or "-"])
            print(rows[-1], flush=True)
    body = table(["labels", "draw", "chosen", "Auto %", "LogReg %", "SVC %", "LabelSpreading %",
                  "TSVM %", "Auto wall s", "not cross-validated"], rows)
    print(report("auto_large", "The automatic classifier on 6,000 USPS digits", [
        __doc__.split("\n\n")[1],
        "Accuracy on the unlabeled rows, %.", body]))


if __name__ == "__main__":
    main()
