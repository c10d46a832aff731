"""
Self-training, co-training and tri-training around any classifier
=================================================================

The three classical wrapper methods turn a supervised classifier into a semi-supervised
one by labelling unlabeled rows with its own confident predictions:
:class:`semisup.SelfTraining` (one model, a confidence threshold, class balance kept),
:class:`semisup.CoTraining` (Blum & Mitchell 1998: two models on two views — here the left
and right halves of each digit image — teach each other) and :class:`semisup.TriTraining`
(Zhou & Li 2005: three bootstrap models, a row is labelled for one when the other two
agree).  On scikit-learn's 8x8 digits with 3 labeled images per class, each wraps the same
``LogisticRegression`` and is compared with it fitted on the labeled rows only, over three
random draws of the labeled rows.  Which wrapper helps, and by how much, depends on the data.
By default each wrapper keeps its pseudo-labels only when labeled-only cross-validation
shows that they beat the base classifier alone (``fallback="cv"``; otherwise it returns the
base classifier fitted on the labeled rows); here ``fallback="none"`` shows the methods as
published.  :class:`semisup.AutoClassifier` makes the choice among methods by the same kind
of cross-validation.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from semisup import CoTraining, SelfTraining, TriTraining

X, y_true = load_digits(return_X_y=True)
X = StandardScaler().fit_transform(X)
# pixel columns 0-3 of each row of the 8x8 image, and columns 4-7: two views
left = np.flatnonzero(np.arange(64) % 8 < 4)
right = np.flatnonzero(np.arange(64) % 8 >= 4)

methods = {
    "LogisticRegression (labeled rows)": None,
    "SelfTraining": lambda seed: SelfTraining(LogisticRegression(max_iter=1000),
                                              fallback="none"),
    "CoTraining (left / right halves)": lambda seed: CoTraining(
        LogisticRegression(max_iter=1000), views=[left, right], fallback="none",
        random_state=seed),
    "TriTraining": lambda seed: TriTraining(LogisticRegression(max_iter=1000),
                                            fallback="none", random_state=seed),
}
scores = {name: [] for name in methods}
for seed in range(3):
    rng = np.random.default_rng(seed)
    y = np.full(len(y_true), -1)
    for c in range(10):
        pick = rng.choice(np.flatnonzero(y_true == c), 3, replace=False)
        y[pick] = c
    unl = y == -1
    for name, make in methods.items():
        if make is None:
            model = LogisticRegression(max_iter=1000).fit(X[~unl], y[~unl])
        else:
            model = make(seed).fit(X, y)
        scores[name].append(np.mean(model.predict(X[unl]) == y_true[unl]))

fig, ax = plt.subplots(figsize=(8, 3.5))
names = list(scores)
means = [100 * np.mean(scores[n]) for n in names]
sds = [100 * np.std(scores[n]) for n in names]
ax.barh(names, means, xerr=sds, color=["0.6"] + ["C0"] * 3)
for i, m in enumerate(means):
    ax.text(m + 1, i, f"{m:.1f} %", va="center")
ax.set_xlim(0, 105)
ax.invert_yaxis()
ax.set_xlabel("accuracy on the unlabeled digits, % (mean and sd over 3 draws)")
fig.tight_layout()
plt.show()
