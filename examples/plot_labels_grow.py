"""
Semi-supervised vs supervised as labels grow
============================================

Digits 3 vs 8 from scikit-learn, rows scaled to unit length. For 4 to 40 labeled
images, the accuracy on the unlabeled images of the supervised L2-SVM, the
transductive SVM (multiple switching) and deterministic annealing (SVMlin family),
averaged over random labelings. The unlabeled images help most when labels are
scarce.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.preprocessing import normalize

from semisup import L2SVM, DeterministicAnnealingSVM, TransductiveSVM

digits = load_digits()
keep = np.isin(digits.target, [3, 8])
X, y_true = normalize(digits.data[keep]), (digits.target[keep] == 8).astype(int)
lam = 1e-3
sizes = [4, 8, 16, 40]
methods = {
    "L2-SVM (supervised)": lambda n: L2SVM(lam=lam * n),
    "TSVM": lambda n: TransductiveSVM(lam=lam),
    "DA": lambda n: DeterministicAnnealingSVM(lam=lam),
}
rng = np.random.default_rng(0)
curves = {name: [] for name in methods}
for n in sizes:
    accs = {name: [] for name in methods}
    for _ in range(5):
        y = np.full(y_true.shape, -1)
        for c in (0, 1):
            y[rng.choice(np.flatnonzero(y_true == c), n // 2, replace=False)] = c
        unl = y == -1
        for name, make in methods.items():
            model = make(n).fit(X, y)
            accs[name].append(np.mean(model.predict(X[unl]) == y_true[unl]))
    for name in methods:
        curves[name].append(100 * np.mean(accs[name]))

fig, ax = plt.subplots(figsize=(5, 3.5))
for name, acc in curves.items():
    ax.plot(sizes, acc, marker="o", label=name)
ax.set_xscale("log")
ax.set_xticks(sizes, [str(s) for s in sizes])
ax.set_xlabel("labeled images")
ax.set_ylabel("accuracy on unlabeled images (%)")
ax.legend()
fig.tight_layout()
plt.show()
