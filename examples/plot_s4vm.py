"""
S4VM: safe where the transductive SVM guesses wrong
===================================================

Four blobs at the corners of a square, one labeled point top-left (class 1) and one
bottom-right (class 0).  Two low-density separators fit those labels equally well — a
vertical and a horizontal line — and the supervised SVM is the diagonal between them.  The
truth here is "top vs bottom".  A transductive SVM picks one of the two low-density
separators; when it picks the wrong one it is far worse than the SVM.  :class:`semisup.S4VM`
(Li & Zhou 2015) keeps many low-density separators and returns the labelling that maximises
the worst-case gain over the SVM among them, so it is never worse than the SVM on this
kind of ambiguity.
"""

import matplotlib.pyplot as plt
import numpy as np

from semisup import L2SVM, S4VM, TransductiveSVM

rng = np.random.default_rng(1)
centres = np.array([[-3, 3], [3, 3], [-3, -3], [3, -3]], float)
X = np.vstack([c + 0.6 * rng.normal(size=(40, 2)) for c in centres])
y_true = (X[:, 1] > 0).astype(int)  # top vs bottom
y = np.full(len(X), -1)
y[np.argmin(np.sum((X - centres[0]) ** 2, axis=1))] = 1
y[np.argmin(np.sum((X - centres[3]) ** 2, axis=1))] = 0
unl = y == -1

models = {
    "SVM (labeled points only)": L2SVM(lam=0.01).fit(X[~unl], y[~unl]),
    "TransductiveSVM": TransductiveSVM().fit(X, y),
    "S4VM": S4VM(kernel="linear", n_candidates=30, random_state=0).fit(X, y),
}

xx, yy = np.meshgrid(np.linspace(-5.5, 5.5, 200), np.linspace(-5.5, 5.5, 200))
grid = np.c_[xx.ravel(), yy.ravel()]
fig, axes = plt.subplots(1, 3, figsize=(13, 4.2))
for ax, (name, model) in zip(axes, models.items(), strict=True):
    ax.contourf(xx, yy, model.predict(grid).reshape(xx.shape), levels=[-0.5, 0.5, 1.5],
                alpha=0.25, cmap="coolwarm")
    ax.scatter(X[:, 0], X[:, 1], c=y_true, s=8, cmap="coolwarm")
    ax.scatter(X[~unl, 0], X[~unl, 1], c="k", s=120, marker="*")
    acc = np.mean(model.predict(X[unl]) == y_true[unl])
    ax.set_title(f"{name}\naccuracy on unlabeled points {100 * acc:.1f} %")
    ax.set_aspect("equal")
fig.tight_layout()
plt.show()
