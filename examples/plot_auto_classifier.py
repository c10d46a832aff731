"""
The automatic classifier: when do the unlabeled rows help?
==========================================================

:class:`semisup.AutoClassifier` cross-validates supervised and semi-supervised candidates
on the labeled rows (held-out labeled rows stay in each fit as unlabeled rows) and keeps
the supervised model unless a semi-supervised one is shown to be better. Two data sets:

* two moons, where the classes follow the clusters: the graph methods win clearly in
  cross-validation and are chosen;
* two elongated clusters that the class boundary cuts in half: a graph over the rows joins
  both classes, so LapRLS loses here (about 89 % on the unlabeled rows against 95 % for
  logistic regression); the transductive SVM does well (over 99 %), but with 12 labels its
  cross-validated margin over the supervised model is within the noise, so the automatic
  classifier keeps the supervised model. Caution has a price: it is the price of never
  trusting a gain that the labels cannot show.

The bars show each candidate's held-out accuracy as the automatic classifier estimated it
from the 12 labels (its ranking uses the held-out margins, not shown); the titles, the
accuracy on the unlabeled rows of what it chose.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons

from semisup import AutoClassifier

rng = np.random.default_rng(0)
X_moons, y_moons = make_moons(300, noise=0.08, random_state=0)
X_cut = np.vstack([c + rng.normal(size=(150, 2)) * [2.0, 0.6] for c in ([0, -4], [0, 4])])
y_cut = (X_cut[:, 0] > 0).astype(int)

fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
for ax, (name, X, y_true) in zip(axes, [("two moons", X_moons, y_moons),
                                        ("clusters cut by the boundary", X_cut, y_cut)],
                                   strict=True):
    y = np.full(y_true.size, -1)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(y_true == c), 6, replace=False)] = c
    auto = AutoClassifier(random_state=0).fit(X, y)
    unl = y == -1
    acc = np.mean(auto.transduction_[unl] == y_true[unl])
    res = auto.cv_results_
    colors = ["tab:blue" if semi else "tab:gray" for semi in res["semi_supervised"]]
    ax.barh(res["candidate_setting"], res["mean_test_score"], color=colors)
    ax.set_xlim(0, 1)
    ax.set_xlabel("held-out accuracy on the labeled rows (grey: supervised)")
    ax.set_title(f"{name}: chose {auto.best_candidate_}\n{100 * acc:.1f} % on the "
                 "unlabeled rows")
    print(f"{name}: {auto.selection_}")
plt.show()
