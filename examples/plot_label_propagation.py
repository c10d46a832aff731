"""
Label propagation and label spreading on a kNN graph
====================================================

Three classes (two moons and a ring around them), two labeled points per class.  The
harmonic function (:class:`semisup.LabelPropagation`, Zhu, Ghahramani & Lafferty 2003)
and label spreading (:class:`semisup.LabelSpreading`, Zhou et al. 2004) carry the labels
along the 10-NN graph; the shading is the out-of-sample prediction for new points (the
weighted average of the label distributions of their nearest training points).  The right
panel shows the conjugate-gradient solves: the relative residual of the class block falls
geometrically to ``tol`` instead of running a fixed number of sweeps.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons

from semisup import LabelPropagation, LabelSpreading

rng = np.random.default_rng(0)
X_moons, y_moons = make_moons(400, noise=0.06, random_state=0)
angle = rng.uniform(0, 2 * np.pi, 300)
ring = np.c_[0.5 + 2.2 * np.cos(angle), 0.25 + 1.6 * np.sin(angle)]
ring += 0.06 * rng.normal(size=ring.shape)
X = np.vstack([X_moons, ring])
y_true = np.r_[y_moons, np.full(300, 2)]
y = np.full(y_true.shape, -1)
for c in range(3):
    y[np.flatnonzero(y_true == c)[:2]] = c
labeled = y != -1

models = {
    "LabelPropagation (harmonic, CMN)": LabelPropagation(cmn=True, tol=1e-8).fit(X, y),
    "LabelSpreading (alpha = 0.99)": LabelSpreading(tol=1e-8).fit(X, y),
}

xx, yy = np.meshgrid(np.linspace(-2.2, 3.2, 220), np.linspace(-1.8, 2.3, 170))
grid = np.c_[xx.ravel(), yy.ravel()]
fig, axes = plt.subplots(1, 3, figsize=(14, 4))
for ax, (name, model) in zip(axes[:2], models.items(), strict=True):
    proba = model.predict_proba(grid)
    ax.contourf(xx, yy, proba.argmax(axis=1).reshape(xx.shape), levels=[-0.5, 0.5, 1.5, 2.5],
                alpha=0.25, cmap="viridis")
    ax.scatter(X[:, 0], X[:, 1], c=y_true, s=6, cmap="viridis")
    ax.scatter(X[labeled, 0], X[labeled, 1], c="r", s=90, marker="*")
    acc = np.mean(model.transduction_[~labeled] == y_true[~labeled])
    ax.set_title(f"{name}\naccuracy on unlabeled points {100 * acc:.1f} %")
for name, model in models.items():
    axes[2].semilogy(model.residual_history_, label=f"{name.split(' ')[0]} "
                     f"({model.n_iter_} iterations)")
axes[2].set_xlabel("conjugate-gradient iteration")
axes[2].set_ylabel("largest relative residual over the classes")
axes[2].legend()
fig.tight_layout()
plt.show()
