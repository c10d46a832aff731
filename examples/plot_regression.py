"""
Semi-supervised regression on a curve: Laplacian RLS and COREG
==============================================================

A target that varies smoothly *along* a spiral, with 12 labeled points out of 600 (one
drawn at random from each twelfth of the curve).  Supervised kernel ridge regression only
sees the labeled points and Euclidean distance, so between labels it falls back towards
zero. :class:`semisup.LapRLSRegressor` (manifold regularization, Belkin, Niyogi & Sindhwani
2006, eq. 7 with the squared loss on real-valued targets) adds a graph Laplacian penalty over
all 600 points and follows the curve; :class:`semisup.COREG` (Zhou & Li 2005) co-trains two
kNN regressors with different distance orders.  Unlabeled rows carry ``NaN`` targets.
The Laplacian RLS here uses a weak RKHS penalty (``gamma_A=1e-6``) so that the graph term
does the smoothing; with the default ``gamma_A=1e-2`` it shrinks the fit towards zero and
is no better than kernel ridge on this problem.
"""

import matplotlib.pyplot as plt
import numpy as np
from sklearn.kernel_ridge import KernelRidge

from semisup import COREG, LapRLSRegressor

rng = np.random.default_rng(0)
t = np.sort(rng.uniform(0.5, 3.5 * np.pi, 600))
X = np.c_[t * np.cos(t), t * np.sin(t)] + 0.15 * rng.normal(size=(600, 2))
target = np.sin(t)
labeled = np.array([rng.choice(np.arange(50 * i, 50 * i + 50)) for i in range(12)])
y = np.full(600, np.nan)
y[labeled] = target[labeled]
unl = np.isnan(y)

models = {
    "KernelRidge (labeled points only)": KernelRidge(kernel="rbf", gamma=0.1, alpha=1e-2)
    .fit(X[labeled], y[labeled]),
    "LapRLSRegressor": LapRLSRegressor(gamma=0.1, gamma_A=1e-6, n_neighbors=8).fit(X, y),
    "COREG": COREG(random_state=0).fit(X, y),
}

fig, axes = plt.subplots(1, 4, figsize=(16, 4))
axes[0].scatter(X[:, 0], X[:, 1], c=target, s=6, cmap="viridis")
axes[0].scatter(X[labeled, 0], X[labeled, 1], c="r", s=60, marker="*")
axes[0].set_title("true target, 12 labeled points (stars)")
for ax, (name, model) in zip(axes[1:], models.items(), strict=True):
    pred = model.predict(X)
    rmse = np.sqrt(np.mean((pred[unl] - target[unl]) ** 2))
    ax.scatter(t, target, s=2, c="0.7", label="true")
    ax.scatter(t[unl], pred[unl], s=4, label="prediction")
    ax.set_xlabel("position along the spiral")
    ax.set_title(f"{name}\nRMSE on unlabeled points {rmse:.3f}")
axes[1].legend(loc="lower left")
fig.tight_layout()
plt.show()
