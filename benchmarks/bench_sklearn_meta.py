"""scikit-learn meta-estimators with unlabeled rows: semisup.meta.sklearn_compat vs the routes
scikit-learn offers (issue 27).

For calibration, voting and stacking of semisup classifiers on SSL-book sets (official
splits with 100 labels, the 1,400 other rows as test), three routes:

- ``semisup``: the wrapper of :mod:`semisup.meta.sklearn_compat` on all rows (``-1`` for
  the unlabeled ones);
- ``sklearn, labeled rows``: scikit-learn's meta-estimator fitted on the 100 labeled rows
  only (the correct use of it: its members never see the unlabeled rows);
- ``sklearn, -1 rows``: scikit-learn's meta-estimator given the same ``y`` as semisup
  (what ``check_meta_estimator`` refuses): it learns ``-1`` as a class.

Columns: accuracy on the test rows, log-loss and Brier score of the predicted
probabilities there (columns renormalised over the two real classes for the ``-1``
route), share of test rows predicted ``-1``, wall time of the fit.

    python benchmarks/bench_sklearn_meta.py --sets digit1 g241c --splits 2
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _common import fmt, report, table
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import StackingClassifier, VotingClassifier
from sklearn.metrics import log_loss

from semisup import LabelSpreading, LapRLS
from semisup.datasets import load_sslbook, partial_labels
from semisup.meta.sklearn_compat import (
    SemiSupervisedCalibratedClassifier,
    SemiSupervisedStackingClassifier,
    SemiSupervisedVotingClassifier,
)

CV = 3


def _members():
    return [("laprls", LapRLS(probability=True)), ("spread", LabelSpreading())]


def _routes():
    """(task, route, factory, rows): rows 'all' (y with -1) or 'labeled'."""
    return [
        ("calibration", "semisup", lambda: SemiSupervisedCalibratedClassifier(
            LapRLS(), cv=CV, random_state=0), "all"),
        ("calibration", "sklearn, labeled rows", lambda: CalibratedClassifierCV(
            LapRLS(), cv=CV, ensemble=False), "labeled"),
        ("calibration", "sklearn, -1 rows", lambda: CalibratedClassifierCV(
            LapRLS(), cv=CV, ensemble=False), "all"),
        ("soft voting", "semisup", lambda: SemiSupervisedVotingClassifier(
            _members(), voting="soft"), "all"),
        ("soft voting", "sklearn, labeled rows", lambda: VotingClassifier(
            _members(), voting="soft"), "labeled"),
        ("soft voting", "sklearn, -1 rows", lambda: VotingClassifier(
            _members(), voting="soft"), "all"),
        ("stacking", "semisup", lambda: SemiSupervisedStackingClassifier(
            _members(), cv=CV, random_state=0), "all"),
        ("stacking", "sklearn, labeled rows", lambda: StackingClassifier(
            _members(), cv=CV), "labeled"),
        ("stacking", "sklearn, -1 rows", lambda: StackingClassifier(_members(), cv=CV), "all"),
    ]


def _scores(model, X_test, y_test) -> tuple[float, float, float, float]:
    classes = np.asarray(model.classes_)
    pred = model.predict(X_test)
    P = model.predict_proba(X_test)
    real = classes != -1
    minus_one = float(np.mean(pred == -1))
    P = P[:, real]
    total = P.sum(axis=1, keepdims=True)
    P = np.divide(P, total, out=np.full_like(P, 0.5), where=total > 0)
    onehot = (y_test[:, None] == classes[real][None, :]).astype(float)
    return (float(np.mean(pred == y_test)), float(log_loss(y_test, P, labels=classes[real])),
            float(np.mean(np.sum((P - onehot) ** 2, axis=1))), minus_one)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", nargs="+", default=["digit1", "g241c"])
    ap.add_argument("--splits", type=int, default=2, help="official splits per set")
    args = ap.parse_args()
    rows = []
    for name in args.sets:
        data = load_sslbook(name, 100)
        for split in range(args.splits):
            labeled = data.splits[split]
            y = partial_labels(data.y, labeled)
            y_true = partial_labels(data.y, np.arange(data.y.size))
            test = np.flatnonzero(y == -1)
            for task, route, make, which in _routes():
                rows_fit = labeled if which == "labeled" else np.arange(y.size)
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = make().fit(data.X[rows_fit], y[rows_fit])
                    fit_s = time.perf_counter() - t0
                    acc, ll, brier, m1 = _scores(model, data.X[test], y_true[test])
                rows.append((name, split, task, route, acc, ll, brier, m1, fit_s))
                print(rows[-1], flush=True)
    # mean over splits
    keys = sorted({(r[0], r[2], r[3]) for r in rows},
                  key=lambda k: (k[0], k[1], ["semisup", "sklearn, labeled rows",
                                              "sklearn, -1 rows"].index(k[2])))
    summary = []
    for key in keys:
        sel = np.array([r[4:] for r in rows if (r[0], r[2], r[3]) == key], dtype=float)
        summary.append([key[0], key[1], key[2], *(fmt(v, 3) for v in sel.mean(axis=0)),
                        len(sel)])
    report("sklearn_meta", "scikit-learn meta-estimators with unlabeled rows (SSL book, 100 "
           "labels)", [
               __doc__.split("\n\n", 1)[1].rsplit("\n\n", 1)[0],
               table(["set", "task", "route", "test accuracy", "log-loss", "Brier",
                      "share predicted -1", "fit s", "splits"], summary),
               f"Members: LapRLS (probability=True for voting/stacking) and LabelSpreading "
               f"with their defaults; cv={CV}; test rows: the 1,400 rows outside each "
               "official labeled split."])


if __name__ == "__main__":
    main()
