"""Automatic parameter modes (``lam="auto"``, ``gamma_I="auto"``) against the defaults.

On the SSL-book sets (official splits via ``semisup.datasets.load_sslbook`` and
``partial_labels``), each estimator is fitted with its default parameters and with its
automatic mode (the value chosen by transductive labeled-only CV,
:func:`semisup.model_selection.select_parameter`, then refitted); the accuracy on the
unlabeled rows and the fit time are set side by side with scikit-learn's
``LogisticRegression()`` (defaults) on the same labeled rows, the supervised peer a user
would reach for.  Peak memory is the extra resident memory of the automatic fit.  One
untimed default fit per set and estimator comes first (numba compilation, caches).

Run: ``python benchmarks/bench_auto_modes.py [--sets digit1 usps] [--n-labeled 10 100]
[--splits 2] --one-thread``
(on a shared machine, multi-threaded BLAS made a 242 x 242 Cholesky 250x slower).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, os.path.dirname(__file__))
from _common import PeakRSS, Timer, add_thread_arg, apply_threads, report, table  # noqa: E402

from semisup import L2SVM, LapRLS, LinearLapRLS, RLSClassifier  # noqa: E402
from semisup.datasets import load_sslbook, partial_labels  # noqa: E402

ESTIMATORS = {"L2SVM": (L2SVM, "lam"), "RLSClassifier": (RLSClassifier, "lam"),
              "LinearLapRLS": (LinearLapRLS, "gamma_I"), "LapRLS": (LapRLS, "gamma_I")}
SETS = ["digit1", "usps", "g241c", "bci", "text"]


def fit_timed(est, X, y):
    with Timer() as t, PeakRSS() as mem, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
    return est, t.seconds, (mem.peak - mem.start) / 2**20


def run(sets, sizes, n_splits):
    rows, lr_rows = [], []
    for set_name in sets:
        for n_labeled in sizes:
            data = load_sslbook(set_name, n_labeled)
            classes = np.unique(data.y)
            truth = partial_labels(data.y, np.arange(data.y.size), classes=classes)
            for s in range(n_splits):
                y = partial_labels(data.y, data.splits[s], classes=classes)
                lab, unl = data.splits[s], data.unlabeled_splits[s]
                lr, t_lr, _ = fit_timed(LogisticRegression(), data.X[lab], y[lab])
                acc_lr = float(np.mean(lr.predict(data.X[unl]) == truth[unl]))
                lr_rows.append([set_name, n_labeled, s + 1, acc_lr, t_lr])
                for name, (cls, param) in ESTIMATORS.items():
                    if s == 0:   # untimed: compiled kernels and caches warm for both
                        fit_timed(cls(), data.X, y)
                    d, t_d, _ = fit_timed(cls(), data.X, y)
                    a, t_a, mem = fit_timed(cls(**{param: "auto"}), data.X, y)
                    acc_d = float(np.mean(d.predict(data.X[unl]) == truth[unl]))
                    acc_a = float(np.mean(a.predict(data.X[unl]) == truth[unl]))
                    chosen = getattr(a, f"{param}_")
                    fallback = np.isnan(a.cv_results_["mean_test_score"]).all()
                    rows.append([set_name, n_labeled, s + 1, name, acc_d, acc_a, acc_lr,
                                 f"{param}={chosen:.3g}" + (" (fallback)" if fallback else ""),
                                 t_d, t_a, t_a / t_d, mem])
                    print(rows[-1], flush=True)
    return rows, lr_rows


def summary(rows):
    out = []
    for name in ESTIMATORS:
        r = [row for row in rows if row[3] == name]
        d, a, lr = (np.array([row[i] for row in r]) for i in (4, 5, 6))
        ratio = np.array([row[10] for row in r])
        out.append([name, len(r), d.mean(), a.mean(), lr.mean(),
                    int(np.sum(a >= d - 0.01)), int(np.sum(a >= lr - 0.01)),
                    int(np.sum(d >= lr - 0.01)), float(np.median(ratio)),
                    float(ratio.max())])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=SETS)
    ap.add_argument("--n-labeled", nargs="+", type=int, default=[10, 100])
    ap.add_argument("--splits", type=int, default=2)
    ap.add_argument("--name", default="auto_modes")
    add_thread_arg(ap)
    args = ap.parse_args()
    _, threads = apply_threads(args)
    rows, _ = run(args.sets, args.n_labeled, args.splits)
    headers = ["set", "l", "split", "estimator", "acc. default", "acc. auto",
               "acc. LogisticRegression", "chosen", "time default (s)", "time auto (s)",
               "time auto / default", "auto peak extra memory (MiB)"]
    sum_headers = ["estimator", "cells", "mean acc. default", "mean acc. auto",
                   "mean acc. LogisticRegression", "auto >= default - 1 pt",
                   "auto >= LR - 1 pt", "default >= LR - 1 pt",
                   "median time auto / default", "max time auto / default"]
    sections = [
        f"SSL-book sets {', '.join(args.sets)}; {' and '.join(map(str, args.n_labeled))} "
        f"labeled rows; official splits 1..{args.splits}. Accuracy on the unlabeled rows of "
        "each split. `auto`: `lam='auto'` (L2SVM, RLSClassifier) or `gamma_I='auto'` "
        "(LinearLapRLS, LapRLS), every other parameter at its default. '(fallback)': a class "
        "had a single labeled row, so no CV and the documented default was used. " + threads,
        "## Summary\n\n" + table(sum_headers, summary(rows)),
        "## All cells\n\n" + table(headers, rows),
    ]
    report(args.name, "Automatic parameter modes vs defaults (SSL-book sets)", sections)


if __name__ == "__main__":
    main()
