"""
Cross-validation that respects unlabeled rows
=============================================

A grid search over the regularisation of the transductive SVM, cross-validated on the
labeled rows only with :class:`~semisup.model_selection.LabeledStratifiedKFold`: every
unlabeled row stays in every training fold, and the score counts labeled rows only.
The CV estimate is compared with the accuracy on the unlabeled rows (unknown to the
search), and with what scikit-learn's own ``StratifiedKFold`` and ``"accuracy"``
scorer report on the same data.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.preprocessing import normalize

from semisup import TransductiveSVM
from semisup.model_selection import LabeledStratifiedKFold, labeled_scorer

digits = load_digits()
keep = np.isin(digits.target, [3, 5])
X, y_true = normalize(digits.data[keep]), digits.target[keep]
rng = np.random.default_rng(0)
y = np.full(y_true.shape, -1)
for c in (3, 5):
    y[rng.choice(np.flatnonzero(y_true == c), 6, replace=False)] = c
unl = y == -1

grid = {"lam": [1e-4, 1e-3, 1e-2, 1e-1, 1.0]}
search = GridSearchCV(TransductiveSVM(), grid, cv=LabeledStratifiedKFold(3, random_state=0),
                      scoring=labeled_scorer("accuracy")).fit(X, y)
naive = GridSearchCV(TransductiveSVM(), grid, cv=StratifiedKFold(3, shuffle=True,
                                                                 random_state=0),
                     scoring="accuracy").fit(X, y)
true_acc = [np.mean(TransductiveSVM(lam=lam).fit(X, y).transduction_[unl] == y_true[unl])
            for lam in grid["lam"]]

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.semilogx(grid["lam"], 100 * search.cv_results_["mean_test_score"], marker="o",
            label="CV, labeled rows only (semisup)")
ax.semilogx(grid["lam"], 100 * naive.cv_results_["mean_test_score"], marker="x",
            label="CV, StratifiedKFold + 'accuracy'")
ax.semilogx(grid["lam"], 100 * np.asarray(true_acc), marker="s", ls="--",
            label="accuracy on unlabeled rows")
ax.set_xlabel("lam")
ax.set_ylabel("accuracy (%)")
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
print(f"selected lam = {search.best_params_['lam']}, CV estimate "
      f"{100 * search.best_score_:.1f} %")
