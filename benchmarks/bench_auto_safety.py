"""How safe should the automatic classifier be? The measurement behind ``safety=0.5``.

For each task and labeling, fits :class:`semisup.AutoClassifier` once (its ``cv_results_``
hold every candidate's paired gain over the best supervised one and its standard error),
and every candidate once on all labels, to know each one's true accuracy on the unlabeled
rows. The rule "choose the best semi-supervised candidate when its gain exceeds ``s``
standard errors" is then replayed for several ``s`` without refitting.

Tasks: four binary pairs of scikit-learn's digits (10 labels, 3 labelings) and the SSL
book's digit1, usps, coil2, g241c, bci and text at 10 and 100 labels (first 2 official
splits). The reference is the better of the supervised candidates (logistic regression, RBF
SVM) on each labeling -- a stricter bar than either one.

    python benchmarks/bench_auto_safety.py            # ~30 min on 2 idle cores
    python benchmarks/bench_auto_safety.py --render   # re-render from the stored rows
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import time
import warnings

import numpy as np
from _common import RESULTS_DIR, machine_info

SAFETIES = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)
ROWS = RESULTS_DIR / "auto_safety.jsonl"


def tasks(quick: bool):
    from sklearn.datasets import load_digits
    from sklearn.preprocessing import normalize

    from semisup.datasets import load_sslbook, partial_labels

    d = load_digits()
    X_all = normalize(d.data)
    pairs = {"digits 3v8": ([3], [8]), "digits 1v7": ([1], [7]), "digits 4v9": ([4], [9]),
             "digits even/odd": ([0, 2, 4, 6, 8], [1, 3, 5, 7, 9])}
    for name, (neg, pos) in list(pairs.items())[: 1 if quick else None]:
        mask = np.isin(d.target, neg + pos)
        X, yt = X_all[mask], np.isin(d.target[mask], pos).astype(int)
        rng = np.random.default_rng(0)
        for r in range(1 if quick else 3):
            y = np.full(yt.size, -1)
            for c in (0, 1):
                y[rng.choice(np.flatnonzero(yt == c), 5, replace=False)] = c
            yield f"{name}, 10", r, X, y, yt
    if quick:
        return
    for name in ("digit1", "usps", "coil2", "g241c", "bci", "text"):
        for n_labeled in (10, 100):
            b = load_sslbook(name, n_labeled)
            yt = partial_labels(b.y, np.arange(b.y.size))
            for r in range(2):
                y = np.full(yt.size, -1)
                y[b.splits[r]] = yt[b.splits[r]]
                yield f"{name}, {n_labeled}", r, b.X, y, yt


def measure(quick: bool) -> list[dict]:
    from sklearn.base import clone

    from semisup import AutoClassifier
    from semisup.meta.auto import auto_candidates

    rows = []
    for task, r, X, y, yt in tasks(quick):
        t0 = time.perf_counter()
        auto = AutoClassifier(random_state=r).fit(X, y)
        seconds = time.perf_counter() - t0
        res = auto.cv_results_
        unl, lab = y == -1, y != -1
        true = []
        for cand in auto_candidates(X, 2, int(lab.sum())):
            for params in cand.grid:
                est = clone(cand.estimator).set_params(**params)
                if cand.semi_supervised:
                    pred = est.fit(X, y).transduction_[unl]
                else:
                    pred = est.fit(X[lab], y[lab]).predict(X[unl])
                true.append(float(np.mean(pred == yt[unl])))
        rows.append({"task": task, "labeling": r, "seconds": seconds,
                     "names": res["candidate_setting"], "semi": res["semi_supervised"],
                     "scores": [None if v is None else np.asarray(v).tolist()
                                for v in res["row_margin_scores"]],
                     "true": true, "chosen": auto.best_candidate_})
        print(f"{task} #{r}: chose {auto.best_candidate_} in {seconds:.1f} s", file=sys.stderr)
    return rows


def replay(row: dict, safety: float) -> int:
    """Index of the candidate :func:`semisup.meta.auto.choose` picks at ``safety``."""
    from semisup.meta.auto import choose

    ran = [i for i, s in enumerate(row["scores"]) if s is not None]
    _, chosen = choose([np.asarray(row["scores"][i]) for i in ran],
                       [row["semi"][i] for i in ran], safety)
    return ran[chosen]


def render(rows: list[dict], command: str) -> str:
    out = ["# How safe should AutoClassifier be (`safety`)?", "",
           f"Command: `{command}`", "", machine_info(), "",
           "Accuracy on the unlabeled rows, averaged over the labelings of each task. "
           "'best sup.' is the better of logistic regression and the RBF SVM on each "
           "labeling (an oracle choice); 'best' the best candidate.", "",
           "| safety | mean vs best sup. (points) | mean vs best (points) | tasks below best "
           "sup. - 1 | tasks within 1 point of best |", "|---|---|---|---|---|"]
    by_task = collections.defaultdict(list)
    for row in rows:
        by_task[row["task"]].append(row)
    for s in SAFETIES:
        cells = []
        for task_rows in by_task.values():
            vals = []
            for row in task_rows:
                true = np.asarray(row["true"])
                sup = [i for i, semi in enumerate(row["semi"]) if not semi]
                vals.append((true[replay(row, s)], true[sup].max(), true.max()))
            cells.append(np.mean(vals, axis=0))
        A = np.array(cells)
        out.append(f"| {s:g} | {100 * np.mean(A[:, 0] - A[:, 1]):+.2f} | "
                   f"{100 * np.mean(A[:, 0] - A[:, 2]):+.2f} | "
                   f"{int(np.sum(A[:, 0] < A[:, 1] - 0.01))} | "
                   f"{int(np.sum(A[:, 0] >= A[:, 2] - 0.01))} of {len(A)} |")
    out += ["", "Per task at the default (0.5): AutoClassifier / best supervised / best "
            "candidate (%), and the choices.", "",
            "| task | auto | best sup. | best | chosen | mean fit time (s) |",
            "|---|---|---|---|---|---|"]
    for task, task_rows in by_task.items():
        vals = np.mean([(np.asarray(r["true"])[replay(r, 0.5)],
                         np.asarray(r["true"])[[i for i, s in enumerate(r["semi"])
                                                if not s]].max(),
                         max(r["true"])) for r in task_rows], axis=0)
        chosen = ", ".join(r["names"][replay(r, 0.5)] for r in task_rows)
        secs = np.mean([r["seconds"] for r in task_rows])
        out.append(f"| {task} | {100 * vals[0]:.1f} | {100 * vals[1]:.1f} | "
                   f"{100 * vals[2]:.1f} | {chosen} | {secs:.1f} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one task, one labeling")
    parser.add_argument("--render", action="store_true", help="re-render the stored rows")
    args = parser.parse_args(argv)
    command = "python benchmarks/bench_auto_safety.py" + (" --quick" if args.quick else "")
    if args.render:
        rows = [json.loads(line) for line in ROWS.read_text().splitlines()]
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = measure(args.quick)
        if not args.quick:
            ROWS.write_text("".join(json.dumps(r) + "\n" for r in rows))
    text = render(rows, command)
    print(text)
    if not args.quick:
        (RESULTS_DIR / "auto_safety.md").write_text(text)


if __name__ == "__main__":
    main()
