"""Replay study of the guard's decision rule (``semisup.safety``, issue 26).

The guard keeps a semi-supervised fit only when its labeled-only CV over 3 stratified folds
beats the supervised counterpart. Until this study it compared mean held-out accuracy,
strictly higher: with 10 labels a fold holds about three held-out rows, ties are common (a tie
goes to the counterpart) and one lucky row decides; the study chose the rule it applies now,
the paired margin test at one standard error (``ramp, s = 1``). This script fits, for one
classifier and one official split of each SSL-book set, exactly the guard's folds
(:func:`semisup.safety.guard_folds`, the estimator's seed): the method as published with the
held-out labels hidden, and the counterpart on the rows kept, and stores per held-out row
whether each was right and its ramp score (:func:`semisup.safety.ramp_scores`, the margin in
units of the model's typical margin, clipped to [-1, 1]), with the accuracy of the published
fit and of the counterpart on the unlabeled rows.  ``--report`` replays decision rules on
the stored scores:

* ``accuracy (the old guard)``: mean fold accuracy, strictly higher;
* ``accuracy, tie to SSL``: higher or equal;
* ``ramp``: mean ramp score of the held-out rows, strictly higher;
* ``accuracy, ties by ramp``: higher accuracy, or equal accuracy and higher mean ramp score;
* ``accuracy and ramp``: both higher;
* ``accuracy, s = k``: :func:`semisup.safety.safe_choice` on right/wrong (+-1) per row;
* ``ramp, s = k``: :func:`semisup.safety.safe_choice` on the per-row ramp scores (the mean
  paired difference above ``k`` standard errors), as the automatic classifier decides;
  ``s = 1`` is the guard's rule (:data:`semisup.safety.GUARD_SAFETY`);
* ``ramp, s = 1, accuracy not lower`` / ``higher``: the guard's test, and the mean fold
  accuracy at least (strictly above) the counterpart's;
* ``no guard``: the published fit.

A rule's result on a cell is the published fit's accuracy where it keeps it, else the
counterpart's; the report counts cells within a point of the counterpart (issue 26's measure)
and the mean gain.  Counterparts: ``LogisticRegression()`` for the linear methods, ``SVC()``
for the graph and kernel methods (as ``bench_defaults.py``).

``--singletons`` tries a fold rule for labeled sets where a class has a single row, which the
guard leaves unguarded (:func:`singleton_folds`).  Results: ``results/guard_rule_study.md``.

Usage::

    nice -n 5 python benchmarks/guard_rule_study.py TransductiveSVM --split 2 --log FILE
    python benchmarks/guard_rule_study.py --report FILE [FILE ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import SSLBOOK, counterpart, load_set, make_estimator  # noqa: E402


def singleton_folds(codes: np.ndarray, random_state=None, n_folds: int = 3):
    """Folds that exist when a class has a single labeled row: that row is never held out,
    and the classes with two or more labeled rows are dealt round-robin to
    ``min(n_folds, largest class)`` folds.  The candidate rule of this study, adopted since as
    :func:`semisup.safety.guard_folds`'s ``keep_singletons`` for the linear methods."""
    from semisup.safety import guard_folds

    return guard_folds(codes, random_state, n_folds, keep_singletons=True)


def study(name: str, split: int, sets, labels, log: Path, singletons: bool = False) -> None:
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC

    from semisup.safety import decision_values, guard_folds, hide_rows, ramp_scores

    # the guard's counterparts (SVC with break_ties, as SupervisedFallbackMixin)
    Sup = LogisticRegression if counterpart(name) == "LogisticRegression" \
        else (lambda: SVC(break_ties=True))
    warnings.simplefilter("ignore")
    for set_name in sets:
        d = load_set(set_name)
        for n_labeled in labels:
            lab, unl, codes = d.official_split(n_labeled, split)
            est = make_estimator(name).set_params(fallback="none")
            t0 = time.process_time()
            acc_ssl = float(np.mean(est.fit(d.X, codes).transduction_[unl] == d.y[unl]))
            cpu = time.process_time() - t0
            acc_sup = float(np.mean(Sup().fit(d.X[lab], d.y[lab]).predict(d.X[unl]) == d.y[unl]))
            seed = getattr(est, "random_state", None)
            folds = guard_folds(codes, seed)
            if folds is None and singletons:
                folds = singleton_folds(codes, seed)
            rows = []
            for train, test in folds or []:
                pool = np.setdiff1d(np.arange(d.y.size), train)
                fold = clone(est).fit(d.X, hide_rows(codes, train))
                sup = Sup().fit(d.X[train], codes[train])
                entry = {}
                for key, model in (("ssl", fold), ("sup", sup)):
                    dec = decision_values(model, d.X[pool], proba=True)
                    where = np.searchsorted(pool, test)
                    pred = np.asarray(model.predict(d.X[test]))
                    hit = pred == codes[test]
                    entry[key + "_hit"] = hit.astype(int).tolist()
                    entry[key + "_ramp"] = ramp_scores(dec[where], codes[test], dec,
                                                       hit).tolist()
                rows.append(entry)
            rec = {"classifier": name, "set": set_name, "labels": n_labeled, "split": split,
                   "singleton_folds": bool(singletons and guard_folds(codes, seed) is None),
                   "acc_ssl": acc_ssl, "acc_sup": acc_sup, "cpu": cpu, "folds": rows}
            with open(log, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
            print(f"{set_name:7s} {n_labeled:3d} split {split}  {name} {100 * acc_ssl:5.1f}  "
                  f"counterpart {100 * acc_sup:5.1f}  folds {len(rows)}  cpu {cpu:.1f} s",
                  flush=True)


def rules():
    from semisup.safety import safe_choice

    def accuracy(f, tie):
        a = np.mean([np.mean(r["ssl_hit"]) for r in f])
        b = np.mean([np.mean(r["sup_hit"]) for r in f])
        return a > b or (tie and a == b)

    def ramp(f, safety=None):
        s = np.concatenate([r["ssl_ramp"] for r in f])
        u = np.concatenate([r["sup_ramp"] for r in f])
        if safety is None:
            return s.mean() > u.mean() + 1e-12
        return safe_choice(u, s, safety)[0]

    def tie_by_ramp(f):
        a = np.mean([np.mean(r["ssl_hit"]) for r in f])
        b = np.mean([np.mean(r["sup_hit"]) for r in f])
        return a > b or (a == b and ramp(f))

    def paired_accuracy(f, safety):
        s = 2 * np.concatenate([r["ssl_hit"] for r in f]) - 1.0
        u = 2 * np.concatenate([r["sup_hit"] for r in f]) - 1.0
        return safe_choice(u, s, safety)[0]

    return {"accuracy (the old guard)": lambda f: accuracy(f, False),
            "accuracy, tie to SSL": lambda f: accuracy(f, True),
            "accuracy, ties by ramp": tie_by_ramp,
            "accuracy and ramp": lambda f: accuracy(f, False) and ramp(f),
            "ramp": lambda f: ramp(f),
            "ramp, s = 0.5": lambda f: ramp(f, 0.5),
            "accuracy, s = 0.5": lambda f: paired_accuracy(f, 0.5),
            "accuracy, s = 1": lambda f: paired_accuracy(f, 1.0),
            "ramp, s = 1 (the guard)": lambda f: ramp(f, 1.0),
            "ramp, s = 1.5": lambda f: ramp(f, 1.5),
            "ramp, s = 1, accuracy not lower": lambda f: ramp(f, 1.0) and accuracy(f, True),
            "ramp, s = 1, accuracy higher": lambda f: ramp(f, 1.0) and accuracy(f, False),
            "no guard": lambda f: True}


def report(files) -> None:
    recs = [json.loads(line) for f in files for line in open(f)]
    by = defaultdict(list)
    for r in recs:
        by[r["classifier"]].append(r)
    names = list(rules())
    print("| classifier | splits | cells | " + " | ".join(names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    total = defaultdict(lambda: [0, 0.0])
    for cls, rs in sorted(by.items()):
        cells = []
        for rule, decide in rules().items():
            ok, gain = 0, 0.0
            for r in rs:
                # no fold (a class with one labeled row): the guard keeps the published fit
                keep = not r["folds"] or decide(r["folds"])
                acc = r["acc_ssl"] if keep else r["acc_sup"]
                ok += acc >= r["acc_sup"] - 0.01
                gain += 100 * (acc - r["acc_sup"])
            total[rule][0] += ok
            total[rule][1] += gain
            cells.append(f"{ok}, {gain / len(rs):+.2f}")
        splits = ",".join(str(s) for s in sorted({r["split"] for r in rs}))
        print(f"| {cls} | {splits} | {len(rs)} | " + " | ".join(cells) + " |")
    n = len(recs)
    print(f"| all | | {n} | " + " | ".join(f"{total[k][0]}, {total[k][1] / n:+.2f}"
                                          for k in names) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("classifier", nargs="?")
    ap.add_argument("--split", type=int, default=2)
    ap.add_argument("--sets", nargs="+", default=SSLBOOK)
    ap.add_argument("--labels", nargs="+", type=int, default=[10, 100])
    ap.add_argument("--log", type=Path)
    ap.add_argument("--singletons", action="store_true",
                    help="where a class has one labeled row, use singleton_folds")
    ap.add_argument("--report", nargs="+", type=Path)
    args = ap.parse_args()
    if args.report:
        report(args.report)
    else:
        study(args.classifier, args.split, args.sets, args.labels, args.log, args.singletons)


if __name__ == "__main__":
    main()
