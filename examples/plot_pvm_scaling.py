"""
Prototype vector machine: time linear in n
==========================================

The PVM keeps its graph and its model on ``m`` prototypes, so a fit costs
``O(n m^2)``. Fit time for n from 2,000 to 32,000 points of a noisy two-moons problem
with 20 labels and m = 100 prototypes, next to the kernel LapRLS (``O(n^3)``), which is
only run up to 4,000 points.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_moons

from semisup import LapRLS, PrototypeVectorMachine


def problem(n, seed=0):
    X, y_true = make_moons(n, noise=0.1, random_state=seed)
    y = np.full(n, -1)
    rng = np.random.default_rng(seed)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(y_true == c), 10, replace=False)] = c
    return X, y, y_true


def fit_time(model, X, y):
    t0 = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - t0


sizes = [2000, 4000, 8000, 16000, 32000]
pvm_times, pvm_acc, lap_times = [], [], []
for n in sizes:
    X, y, y_true = problem(n)
    pvm = PrototypeVectorMachine(n_prototypes=100, random_state=0)
    pvm_times.append(fit_time(pvm, X, y))
    pvm_acc.append(np.mean(pvm.predict(X) == y_true))
    if n <= 4000:
        lap_times.append(fit_time(LapRLS(gamma_I=1.0), X, y))

fig, ax = plt.subplots(figsize=(5, 3.5))
ax.loglog(sizes, pvm_times, marker="o", label="PVM, m = 100")
ax.loglog(sizes[:len(lap_times)], lap_times, marker="s", label="LapRLS (full)")
ax.loglog(sizes, pvm_times[0] * np.asarray(sizes) / sizes[0], "k:", label="linear in n")
ax.set_xticks(sizes, [f"{s // 1000}k" for s in sizes])
ax.minorticks_off()
ax.set_xlabel("n")
ax.set_ylabel("fit time (s)")
ax.legend()
fig.tight_layout()
plt.show()
print("PVM accuracy per n:", ", ".join(f"{100 * a:.1f} %" for a in pvm_acc))
