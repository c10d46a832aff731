"""Accuracy and time: supervised L2-SVM vs TSVM vs DA on the same data, in one run.

* SVMlin pcmac example: 50 labeled + 1410 unlabeled training rows, 486 test rows; SVMlin's
  settings lam=0.001, lam_u=1, r=0.5.  The supervised baseline uses the same scaling as the
  labeled part of the semi-supervised objective, ``(lam/2)||w||^2 + (1/2l) sum l2``, i.e.
  ``L2SVM(lam=0.001 * l)``.
* MNIST even-vs-odd: a random pool of training rows with 100 or 1000 of them labeled, the
  rest unlabeled; accuracy on the unlabeled pool rows (transductive) and on the 10,000
  test images.  (bench_large.py runs the full 60,000.)
* SSL-book ``text`` (1500 x 11960): official 100-labeled splits, error on the unlabeled rows.

Usage: ``python benchmarks/bench_ssl_accuracy.py [--mnist-pool 3000] [--text-splits 4]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import (
    Contention,
    add_thread_arg,
    apply_threads,
    mnist_even_odd,
    pick_labeled,
    report,
    semi_targets,
    table,
)

from semisup import L2SVM, DeterministicAnnealingSVM, TransductiveSVM
from semisup.datasets import load_sslbook, load_svmlin_example, partial_labels

LAM, LAM_U = 1e-3, 1.0


def methods(n_labeled: int, r: float | None, single_switch: bool = False):
    out = {"SVM (L2SVM, lam=0.001 l)": lambda: L2SVM(lam=LAM * n_labeled),
           "TSVM S=max": lambda: TransductiveSVM(lam=LAM, lam_u=LAM_U, positive_fraction=r)}
    if single_switch:
        out["TSVM S=1"] = lambda: TransductiveSVM(lam=LAM, lam_u=LAM_U, positive_fraction=r,
                                                  max_switches=1)
    out["DA"] = lambda: DeterministicAnnealingSVM(lam=LAM, lam_u=LAM_U, positive_fraction=r)
    return out


def fit(make, X, y):
    est = make()
    t0 = time.perf_counter()
    est.fit(X, y)
    return est, time.perf_counter() - t0


def rounds(est) -> str:
    r = est.fit_results_[0]
    return f"{r.n_iter} / {getattr(r, 'n_cg_iter', '-')}"  # dual CD has no CG


def pcmac_rows() -> list:
    b = load_svmlin_example()
    lab = np.flatnonzero(b.y_train_svmlin != 0)
    y = partial_labels(b.y_train_svmlin, lab)
    y_test = (b.y_test_svmlin > 0).astype(np.int64)
    rows = []
    L2SVM(lam=1.0).fit(b.X_train, y)  # warm-up: numba compilation / cache loading
    for name, make in methods(lab.size, 0.5, single_switch=True).items():
        est, dt = fit(make, b.X_train, y)
        acc = float(np.mean(est.predict(b.X_test) == y_test))
        rows.append(["pcmac example", lab.size, name, "-", acc, 100 * (1 - acc), dt,
                     rounds(est)])
    return rows


def mnist_rows(pool: int, label_counts) -> list:
    X, y = mnist_even_odd()
    Xt, yt = mnist_even_odd("test")
    rng = np.random.default_rng(0)
    idx = np.sort(rng.permutation(X.shape[0])[:pool])
    Xp, yp = X[idx], y[idx]
    rows = []
    for n_lab in label_counts:
        lab = pick_labeled(yp, n_lab, seed=n_lab)
        ys = semi_targets(yp, lab)
        unl = ys == -1
        for name, make in methods(n_lab, None).items():
            est, dt = fit(make, Xp, ys)
            acc_u = float(np.mean(est.predict(Xp[unl]) == yp[unl]))
            acc_t = float(np.mean(est.predict(Xt) == yt))
            rows.append([f"MNIST even/odd, pool {pool}", n_lab, name, acc_u, acc_t,
                         100 * (1 - acc_t), dt, rounds(est)])
    return rows


def text_rows(n_splits: int) -> list:
    t = load_sslbook("text", 100)
    classes = np.unique(t.y)
    acc = {}
    times = {}
    for s in range(n_splits):
        lab = t.splits[s]
        ys = partial_labels(t.y, lab, classes=classes)
        truth = np.searchsorted(classes, t.y)
        unl = t.unlabeled_splits[s]
        for name, make in methods(lab.size, None).items():
            est, dt = fit(make, t.X, ys)
            acc.setdefault(name, []).append(float(np.mean(est.transduction_[unl] == truth[unl])))
            times.setdefault(name, []).append(dt)
    return [[f"SSL-book text, splits 0..{n_splits - 1}", 100, name, np.mean(a), "-",
             100 * (1 - np.mean(a)), np.mean(times[name]), "-"] for name, a in acc.items()]



def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mnist-pool", type=int, default=3000)
    ap.add_argument("--mnist-labels", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--text-splits", type=int, default=4)
    add_thread_arg(ap)
    args = ap.parse_args()
    suffix, threads_note = apply_threads(args)
    with Contention() as load:
        rows = pcmac_rows()
        rows += mnist_rows(args.mnist_pool, args.mnist_labels)
        rows += text_rows(args.text_splits)
    report("bench_ssl_accuracy" + suffix, "Supervised SVM vs TSVM vs DA: accuracy and time", [
        load.line(),
        threads_note,
        f"lam={LAM:g}, lam_u={LAM_U:g}; r=0.5 for pcmac (SVMlin example setting), the "
        "labeled class fraction otherwise.  `rounds / CG` = fits (TSVM) or alternating "
        "steps (DA) / total CG iterations; for the SVM, Newton iterations / CG iterations.  "
        "For the SSL-book text set the accuracy is on the unlabeled rows (transductive), "
        "averaged over splits.",
        table(["data", "labeled", "method", "acc. unlabeled (transductive)",
               "acc. test", "error % (test; transductive for text)", "seconds",
               "rounds / CG"], rows),
    ])


if __name__ == "__main__":
    main()
