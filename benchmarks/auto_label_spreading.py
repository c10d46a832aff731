"""Should the automatic classifier weigh label spreading below 4,000 rows?  A replay study.

For each labeling it cross-validates every candidate of :func:`semisup.meta.auto.auto_candidates`
plus ``LabelSpreading(alpha=0.99, n_neighbors=10)`` once (``AutoClassifier`` with no time
budget, which stores every setting's held-out score of every labeled row in ``cv_results_``),
fits every setting once on all rows for its accuracy on the unlabeled rows, then replays the
selection rule (:func:`semisup.meta.auto.choose`) on those same scores with label spreading
left out ('without', the old list), placed before the transductive SVM ('before TSVM', the
list adopted) or before every other semi-supervised candidate ('first').  Counts per group:
labelings more than a point below the better of LogisticRegression and SVC ('below'),
within a point of the best setting ('within'), mean points over the better counterpart.

Labelings (all kept apart from the benchmark of defaults, which uses SSL-book split 1 and
draws 1-2): ``k2``/``k5`` = 2 / 5 labeled rows per class, seeds 1-3 / 1-2, on
scikit-learn's digits, segment, satimage, usps10, the SSL book's coil and dna; the SSL
book's official splits 2-3 at 10 labels and split 2 at 100; the small UCI / IDA sets'
stratified draws 3-4 at 10 and 100 labels.  Run::

    python benchmarks/auto_label_spreading.py --out benchmarks/results/auto_label_spreading.jsonl
    python benchmarks/auto_label_spreading.py --report benchmarks/results/auto_label_spreading.jsonl

(about 40 CPU minutes for the first; results: ``benchmarks/results/auto_label_spreading.md``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import IDA, SSLBOOK, UCI, load_any, per_class_draw  # noqa: E402

MULTI = ["digits", "segment", "satimage", "usps10", "coil", "dna"]
PLAN = [("k2", MULTI, [1, 2, 3]), ("k5", MULTI, [1, 2]),
        ("n10", SSLBOOK, [2, 3]), ("n100", SSLBOOK, [2]),
        ("n10", UCI + IDA, [3, 4]), ("n100", UCI + IDA, [3, 4])]
SPREADING = "LabelSpreading"


def collect(out: Path) -> None:
    from sklearn.base import clone

    from semisup.meta.auto import AutoClassifier, Candidate, auto_candidates
    from semisup.propagation.spreading import LabelSpreading

    warnings.simplefilter("ignore")
    for mode, names, seeds in PLAN:
        for name in names:
            d, X, y = load_any(name)
            for seed in seeds:
                if mode[0] == "k":
                    lab = per_class_draw(y, int(mode[1:]), seed)
                    yy = np.full(y.size, -1)
                    yy[lab] = y[lab]
                else:
                    lab, _, yy = d.official_split(int(mode[1:]), seed)
                unl = np.flatnonzero(yy == -1)
                cands = [c for c in auto_candidates(X, np.unique(y).size, lab.size)
                         if c.name != SPREADING]
                cands.append(Candidate(SPREADING, LabelSpreading(
                    alpha=0.99, n_neighbors=10, graph_weight="heat"), True))
                auto = AutoClassifier(candidates=cands, random_state=0,
                                      time_budget=1e9).fit(X, yy)
                cv, rows = auto.cv_results_, []
                for i, setting in enumerate(cv["candidate_setting"]):
                    c = next(c for c in cands if c.name == cv["candidate"][i])
                    est = clone(c.estimator).set_params(**cv["params"][i])
                    if "fallback" in est.get_params():
                        est.set_params(fallback="none")
                    t0 = time.process_time()
                    if c.semi_supervised:
                        pred = np.asarray(est.fit(X, yy).transduction_)[unl]
                    else:
                        pred = est.fit(X[lab], y[lab]).predict(X[unl])
                    scores = cv["row_margin_scores"][i]
                    rows.append({"setting": setting, "semi": bool(cv["semi_supervised"][i]),
                                 "status": cv["status"][i],
                                 "acc": float(np.mean(pred == y[unl])),
                                 "fit_cpu": time.process_time() - t0,
                                 "margin": None if scores is None else list(map(float, scores))})
                rec = {"set": name, "labels": mode, "seed": seed, "rows": rows}
                with open(out, "a") as f:
                    f.write(json.dumps(rec) + "\n")
                print(name, mode, seed, flush=True)


def _order(rec, variant):
    names = [r["setting"] for r in rec["rows"] if r["setting"] != SPREADING]
    if variant == "without":
        return names
    if variant == "first":
        pos = next(i for i, s in enumerate(names)
                   if s.startswith(("LapRLS", "TransductiveSVM")))
    else:
        pos = names.index("TransductiveSVM")
    return names[:pos] + [SPREADING] + names[pos:]


def replay(recs, variant, safety=0.5, supervised_safety=1.5):
    from semisup.meta.auto import choose

    below = within = 0
    gains = []
    for rec in recs:
        rows = {r["setting"]: r for r in rec["rows"]}
        ran = [rows[s] for s in _order(rec, variant)
               if rows[s]["status"] == "ok" and rows[s]["margin"] is not None]
        if ran:
            _, i = choose([np.array(r["margin"]) for r in ran], [r["semi"] for r in ran],
                          safety, supervised_safety)
            acc = 100 * ran[i]["acc"]
        else:   # a class with one labeled row: no CV, logistic regression is kept
            acc = 100 * rows["LogisticRegression"]["acc"]
        cp = 100 * max(rows["LogisticRegression"]["acc"], rows["SVC"]["acc"])
        best = 100 * max(r["acc"] for r in rec["rows"])
        below += acc < cp - 1
        within += acc >= best - 1
        gains.append(acc - cp)
    return below, within, float(np.mean(gains))


def report(path: Path) -> str:
    recs = [json.loads(line) for line in open(path)]
    groups = {"2 labels per class (6 multi-class sets)": lambda r: r["labels"] == "k2",
              "5 labels per class (6 multi-class sets)": lambda r: r["labels"] == "k5",
              "SSL book, 10 labels": lambda r: r["set"] in SSLBOOK and r["labels"] == "n10",
              "SSL book, 100 labels": lambda r: r["set"] in SSLBOOK and r["labels"] == "n100",
              "UCI / IDA, 10 labels": lambda r: r["set"] in UCI + IDA and r["labels"] == "n10",
              "UCI / IDA, 100 labels": lambda r: r["set"] in UCI + IDA
              and r["labels"] == "n100",
              "all": lambda r: True}
    lines = ["| labelings | n | without: below / within / mean gain | before TSVM | first |",
             "|---|---|---|---|---|"]
    for title, keep in groups.items():
        sel = [r for r in recs if keep(r)]
        cells = [f"{b} / {w} / {g:+.2f}" for b, w, g in
                 (replay(sel, v) for v in ("without", "before TSVM", "first"))]
        lines.append(f"| {title} | {len(sel)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="collect the held-out scores into this jsonl")
    ap.add_argument("--report", type=Path, help="replay the rule on a collected jsonl")
    args = ap.parse_args(argv)
    if args.out:
        collect(args.out)
    if args.report:
        print(report(args.report))


if __name__ == "__main__":
    main()
