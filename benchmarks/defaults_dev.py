"""Development runs of issue 26's defaults on official splits other than the benchmark's.

``benchmarks/bench_defaults.py`` measures split 1 of each SSL-book set; defaults were chosen
on split 2 with this script (in-process, no timeout): for one classifier (its defaults,
``random_state=0`` where it has one, changed by ``--params``), accuracy on the unlabeled
rows against scikit-learn's ``LogisticRegression()`` on the same labeled rows, and CPU
seconds of the fit.  ``GaussianNBEM`` is a prototype, not a library class: naive Bayes EM
with Gaussian class-conditionals (diagonal variance pooled over the classes, Nigam et al.'s
EM with the multinomial replaced), used to judge whether ``SemiSupervisedNB`` should take
real-valued features.  Results: ``benchmarks/results/defaults_round3.md``.

Run::

    nice -n 5 python benchmarks/defaults_dev.py UniversumSVM --split 2
    nice -n 5 python benchmarks/defaults_dev.py UniversumSVM --params 'unlabeled="universum"'
    nice -n 5 python benchmarks/defaults_dev.py GaussianNBEM --split 2 --params 'lam_u=0.0'
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import SSLBOOK, load_set, make_estimator  # noqa: E402


def gaussian_nb_em(X_l, y_l, X_u, n_classes: int, lam_u: float = 1.0,
                   max_iter: int = 100) -> np.ndarray:
    """Class posteriors of the unlabeled rows under a Gaussian naive Bayes EM (prototype)."""
    R_l, R_u, prev = np.eye(n_classes)[y_l], None, -np.inf
    spread = np.var(np.r_[X_l, X_u], axis=0)
    for _ in range(max_iter):
        W = R_l.sum(0) + (lam_u * R_u.sum(0) if R_u is not None else 0)
        S1 = R_l.T @ X_l + (lam_u * R_u.T @ X_u if R_u is not None else 0)
        S2 = R_l.T @ X_l ** 2 + (lam_u * R_u.T @ X_u ** 2 if R_u is not None else 0)
        mu = S1 / W[:, None]
        var = ((S2 / W[:, None] - mu ** 2) * W[:, None]).sum(0) / W.sum()
        var = np.maximum(var, 0) + 1e-9 * spread.max() + 1e-3 * spread  # variance floor
        log_w = np.log((W + 1) / (W.sum() + n_classes))
        L = (-0.5 * (((X_u[:, None, :] - mu[None]) ** 2) / var).sum(-1)
             - 0.5 * np.log(2 * np.pi * var).sum() + log_w[None])
        top = L.max(1, keepdims=True)
        P = np.exp(L - top)
        value = float((np.log(P.sum(1)) + top.ravel()).sum())
        R_u = P / P.sum(1, keepdims=True)
        if lam_u == 0 or value - prev < 1e-6 * abs(value):
            break
        prev = value
    return R_u


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("classifier")
    ap.add_argument("--sets", nargs="+", default=SSLBOOK)
    ap.add_argument("--labels", nargs="+", type=int, default=[10, 100])
    ap.add_argument("--split", type=int, default=2, help="official split (1 = the benchmark's)")
    ap.add_argument("--params", default="", help="keyword arguments, e.g. 'lam_u=0.1'")
    args = ap.parse_args()
    params = eval(f"dict({args.params})")  # noqa: S307  (a developer's command line)
    from sklearn.linear_model import LogisticRegression

    warnings.simplefilter("ignore")
    gains = []
    for name in args.sets:
        d = load_set(name)
        for n_labeled in args.labels:
            lab = np.sort(np.asarray(d.official[n_labeled][args.split - 1]))
            unl = np.setdiff1d(np.arange(d.y.size), lab)
            y = np.full(d.y.size, -1)
            y[lab] = d.y[lab]
            lr = LogisticRegression().fit(d.X[lab], d.y[lab])
            acc_lr = 100 * np.mean(lr.predict(d.X[unl]) == d.y[unl])
            t0 = time.process_time()
            if args.classifier == "GaussianNBEM":
                X = np.asarray(d.X.toarray() if hasattr(d.X, "toarray") else d.X, float)
                classes, y_l = np.unique(d.y[lab], return_inverse=True)
                R = gaussian_nb_em(X[lab], y_l, X[unl], classes.size, **params)
                pred = classes[R.argmax(1)]
            else:
                est = make_estimator(args.classifier).set_params(**params).fit(d.X, y)
                pred = est.transduction_[unl]
            cpu = time.process_time() - t0
            acc = 100 * np.mean(pred == d.y[unl])
            gains.append(acc - acc_lr)
            print(f"{name:7s} {n_labeled:3d} split {args.split}  LogReg {acc_lr:5.1f}  "
                  f"{args.classifier} {acc:5.1f}  gain {acc - acc_lr:+6.1f}"
                  f"{'  below cp - 1' if acc < acc_lr - 1 else ''}  cpu {cpu:.2f} s", flush=True)
    g = np.array(gains)
    print(f"{args.classifier} {args.params}: {np.sum(g >= -1)} of {g.size} cells >= "
          f"LogReg - 1 pt, mean gain {g.mean():+.2f} pts")


if __name__ == "__main__":
    main()
