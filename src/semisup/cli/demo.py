"""``semisup demo``: semi-supervised vs supervised linear SVMs on scikit-learn's digits.

The data ship with scikit-learn (no network).  Each task is a binary problem on the
8x8 digit images (pixels scaled to unit-length rows, as text vectors usually are); a
few images per class are labeled, the rest are unlabeled and the accuracy is measured on
them (the transductive setting of the SVMlin paper), averaged over random labelings.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.preprocessing import normalize

from semisup import L2SVM, DeterministicAnnealingSVM, RLSClassifier, TransductiveSVM

TASKS = {"3 vs 8": ([3], [8]), "even vs odd": ([0, 2, 4, 6, 8], [1, 3, 5, 7, 9])}


def _methods(lam: float, n_labeled: int) -> dict:
    # supervised objectives sum over the l labeled rows, the semi-supervised ones average:
    # lam * l gives the supervised models the same balance of loss and regulariser
    return {
        "RLS (supervised)": RLSClassifier(lam=lam * n_labeled),
        "L2-SVM-MFN (supervised)": L2SVM(lam=lam * n_labeled),
        "TSVM, S=1 (Joachims)": TransductiveSVM(lam=lam, max_switches=1),
        "TSVM, S=max": TransductiveSVM(lam=lam),
        "DA": DeterministicAnnealingSVM(lam=lam),
    }


def run_demo(n_labeled: int = 10, n_repeats: int = 10, lam: float = 1e-3, seed: int = 0,
             out=print) -> dict:
    """Run the demo and print a markdown table; returns ``{task: {method: accuracies}}``."""
    digits = load_digits()
    X_all = normalize(digits.data)
    results = {}
    out(f"semisup demo: scikit-learn digits, {n_labeled} labeled images per task, the rest "
        f"unlabeled; mean accuracy on the unlabeled images over {n_repeats} random labelings "
        f"(lam={lam}, lam_u=1).\n")
    out("| task | n | method | accuracy on unlabeled (%) | time per fit (s) |")
    out("|---|---|---|---|---|")
    for task, (neg, pos) in TASKS.items():
        mask = np.isin(digits.target, neg + pos)
        X, y_true = X_all[mask], np.isin(digits.target[mask], pos).astype(int)
        accs = {name: [] for name in _methods(lam, n_labeled)}
        times = {name: 0.0 for name in accs}
        rng = np.random.default_rng(seed)
        for _ in range(n_repeats):
            y = np.full(y_true.size, -1)
            for c in (0, 1):
                pick = rng.choice(np.flatnonzero(y_true == c), n_labeled // 2, replace=False)
                y[pick] = c
            unl = y == -1
            for name, est in _methods(lam, n_labeled).items():
                t0 = time.perf_counter()
                est.fit(X, y)
                times[name] += time.perf_counter() - t0
                accs[name].append(float(np.mean(est.transduction_[unl] == y_true[unl])))
        for name, a in accs.items():
            out(f"| {task} | {y_true.size} | {name} | {100 * np.mean(a):.1f} ± "
                f"{100 * np.std(a):.1f} | {times[name] / n_repeats:.3f} |")
        results[task] = accs
    sup = np.mean([np.mean(r["L2-SVM-MFN (supervised)"]) for r in results.values()])
    semi = np.mean([max(np.mean(r["TSVM, S=max"]), np.mean(r["DA"])) for r in results.values()])
    out(f"\nMean over tasks: supervised L2-SVM {100 * sup:.1f} %, best semi-supervised "
        f"{100 * semi:.1f} %: the unlabeled images {'help' if semi > sup else 'do not help'}.")
    return results
