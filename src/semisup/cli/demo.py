"""``semisup demo``: the automatic classifier against supervised models on scikit-learn's digits.

The data ship with scikit-learn (no network).  Each task is a binary problem on the 8x8
digit images (pixels scaled to unit-length rows); a few images per class are labeled, the
rest are unlabeled and the accuracy is measured on them (the transductive setting),
averaged over random labelings.  Every model runs with its defaults: the supervised
counterparts fitted on the labeled images, two semi-supervised methods, and
:class:`semisup.AutoClassifier`, which chooses among them by cross-validation over the
labeled images and keeps a supervised model unless the unlabeled images are shown to help.
"""

from __future__ import annotations

import time
import warnings
from collections import Counter

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import normalize
from sklearn.svm import SVC

from semisup import AutoClassifier, LapRLS, TransductiveSVM

TASKS = {"3 vs 8": ([3], [8]), "even vs odd": ([0, 2, 4, 6, 8], [1, 3, 5, 7, 9])}
AUTO = "AutoClassifier (chooses)"


def _methods(seed: int) -> dict:
    """name -> (estimator, semi-supervised?), every one with its defaults."""
    return {
        "LogisticRegression (supervised)": (LogisticRegression(), False),
        "SVC (supervised)": (SVC(), False),
        "TransductiveSVM": (TransductiveSVM(), True),
        "LapRLS": (LapRLS(), True),
        AUTO: (AutoClassifier(random_state=seed), True),
    }


def run_demo(n_labeled: int = 10, n_repeats: int = 5, seed: int = 0, out=print) -> dict:
    """Run the demo and print a markdown table; returns ``{task: {method: accuracies}}``."""
    digits = load_digits()
    X_all = normalize(digits.data)
    results = {}
    out(f"semisup demo: scikit-learn digits, {n_labeled} labeled images per task, the rest "
        f"unlabeled; accuracy on the unlabeled images, mean ± s.d. over {n_repeats} random "
        "labelings; every model with its defaults.\n")
    out("| task | n | method | accuracy on unlabeled (%) | time per fit (s) |")
    out("|---|---|---|---|---|")
    choices = {}
    for task, (neg, pos) in TASKS.items():
        mask = np.isin(digits.target, neg + pos)
        X, y_true = X_all[mask], np.isin(digits.target[mask], pos).astype(int)
        accs = {name: [] for name in _methods(seed)}
        times = dict.fromkeys(accs, 0.0)
        chosen = Counter()
        rng = np.random.default_rng(seed)
        for r in range(n_repeats):
            y = np.full(y_true.size, -1)
            for c in (0, 1):
                pick = rng.choice(np.flatnonzero(y_true == c), n_labeled // 2, replace=False)
                y[pick] = c
            unl, lab = y == -1, y != -1
            for name, (est, semi) in _methods(seed + r).items():
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if semi:
                        pred = est.fit(X, y).transduction_[unl]
                    else:
                        pred = est.fit(X[lab], y[lab]).predict(X[unl])
                times[name] += time.perf_counter() - t0
                accs[name].append(float(np.mean(pred == y_true[unl])))
                if name == AUTO:
                    chosen[est.best_candidate_] += 1
        for name, a in accs.items():
            out(f"| {task} | {y_true.size} | {name} | {100 * np.mean(a):.1f} ± "
                f"{100 * np.std(a):.1f} | {times[name] / n_repeats:.2f} |")
        results[task] = accs
        choices[task] = chosen
    out("")
    for task, chosen in choices.items():
        picks = ", ".join(f"{name} {k}x" for name, k in chosen.most_common())
        out(f"AutoClassifier on {task}: chose {picks}.")
    sup = np.mean([max(np.mean(r["LogisticRegression (supervised)"]),
                       np.mean(r["SVC (supervised)"])) for r in results.values()])
    auto = np.mean([np.mean(r[AUTO]) for r in results.values()])
    out(f"\nMean over tasks: best supervised model {100 * sup:.1f} %, AutoClassifier "
        f"{100 * auto:.1f} %: the unlabeled images "
        f"{'help' if auto > sup + 0.005 else 'do not help here'}.")
    return results
