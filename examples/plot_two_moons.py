"""
Two moons: one label per class
==============================

With a single labeled point per moon, a supervised SVM draws a boundary between the
two labeled points; the Laplacian SVM and Laplacian RLS follow the moons because the
graph over all 200 points carries the labels along each moon (Belkin, Niyogi &
Sindhwani, Figure 2).
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons
from sklearn.svm import SVC

from semisup import LapRLS, LapSVM

X, y_true = make_moons(200, noise=0.05, random_state=0)
y = np.full(y_true.shape, -1)
y[np.flatnonzero(y_true == 0)[0]] = 0
y[np.flatnonzero(y_true == 1)[0]] = 1
labeled = y != -1

models = {
    # C = 1 / (2 gamma_A l): the SVM is LapSVM with gamma_I = 0
    "SVM (labeled points only)": SVC(kernel="rbf", gamma=10.0, C=250.0).fit(X[labeled],
                                                                           y[labeled]),
    "LapSVM": LapSVM(kernel="rbf", gamma=10.0, gamma_A=1e-3, gamma_I=1e4,
                     n_neighbors=6).fit(X, y),
    "LapRLS": LapRLS(kernel="rbf", gamma=10.0, gamma_A=1e-3, gamma_I=1e4,
                     n_neighbors=6).fit(X, y),
}

xx, yy = np.meshgrid(np.linspace(-1.5, 2.5, 200), np.linspace(-1.0, 1.5, 150))
grid = np.c_[xx.ravel(), yy.ravel()]
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6), sharey=True)
for ax, (name, model) in zip(axes, models.items(), strict=True):
    z = model.decision_function(grid).reshape(xx.shape)
    ax.contourf(xx, yy, z > 0, alpha=0.2, cmap="coolwarm")
    ax.contour(xx, yy, z, levels=[0], colors="k")
    ax.scatter(X[:, 0], X[:, 1], c=y_true, s=8, cmap="coolwarm")
    ax.scatter(X[labeled, 0], X[labeled, 1], c="k", s=80, marker="*")
    acc = np.mean(model.predict(X) == y_true)
    ax.set_title(f"{name}\naccuracy {100 * acc:.0f} %")
fig.tight_layout()
plt.show()
