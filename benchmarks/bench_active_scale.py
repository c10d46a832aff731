"""CCCPS3VM vs TransductiveSVM on sparse text at 10^4 and 10^5 rows (resumable, one fit a call).

20 Newsgroups posts cut into 5-line chunks, label comp.*/sci.* vs the rest, tf-idf
(sublinear, min_df 2), 500 random labeled rows, lam = 1e-4, lam_u = 1 for both (s = 0: both
minimise the same objective).  Each (rows, method) pair is one line of
``benchmarks/results/active_scale.jsonl`` (wall and CPU seconds, peak RSS, accuracy on the
unlabeled rows, work counters, and the common objective
``lam/2 ||w||^2 + 1/(2l) sum_L l2 + lam_u/(2u) sum_U max(0, 1 - |h|)^2`` evaluated on the
returned model -- the same yardstick for both).  ``--summary`` writes
``benchmarks/results/active_scale.md``.

Usage (each call one fit; the lead reruns these on an idle machine)::

    python benchmarks/bench_active_scale.py --rows 10000 --method cccp
    python benchmarks/bench_active_scale.py --rows 100000 --method tsvm
    python benchmarks/bench_active_scale.py --summary
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS_DIR, PeakRSS, command_line, machine_info, table  # noqa: E402

LAM, LAM_U, N_LAB = 1e-4, 1.0, 500
OUT = RESULTS_DIR / "active_scale.jsonl"


def chunks(cache: Path):
    if cache.exists():
        with open(cache, "rb") as fh:
            return pickle.load(fh)
    from bench_active_search import chunks_20ng

    from semisup.text.corpora import load_corpora

    texts, y = chunks_20ng([d for d in load_corpora(newsgroups_remove=())  # raw, as measured
                            if d.id.startswith("20ng/")])
    cache.parent.mkdir(parents=True, exist_ok=True)
    with open(cache, "wb") as fh:
        pickle.dump((texts, y), fh)
    return texts, y


def problem(n: int, cache: Path):
    from sklearn.feature_extraction.text import TfidfVectorizer

    from semisup.text.search import tokenize

    texts, y = chunks(cache)
    rng = np.random.default_rng(0)
    n = min(n, len(texts))
    idx = rng.choice(len(texts), n, replace=False)
    X = TfidfVectorizer(analyzer=tokenize, min_df=2, sublinear_tf=True).fit_transform(
        [texts[i] for i in idx])
    yy = y[idx]
    lab = rng.choice(n, N_LAB, replace=False)
    y_semi = np.full(n, -1)
    y_semi[lab] = yy[lab]
    return X, yy, y_semi


def common_objective(model, X, y_semi) -> float:
    from semisup.linear.cccp import cccp_objective

    h = model.decision_function(X)
    lab = y_semi != -1
    # s = 0: the two ramp copies add up to the TSVM loss + 1, hence the - lam_u / 2
    return float(cccp_objective(model.coef_[0], h[lab], np.where(y_semi[lab] > 0, 1.0, -1.0),
                                h[~lab], LAM, LAM_U, 0.0) - LAM_U / 2)


def run(n: int, method: str, cache: Path) -> None:
    from semisup.linear import CCCPS3VM, L2SVM, TransductiveSVM

    X, y, y_semi = problem(n, cache)
    make = {"cccp": lambda: CCCPS3VM(lam=LAM, lam_u=LAM_U),
            "tsvm": lambda: TransductiveSVM(lam=LAM, lam_u=LAM_U),
            "svm": lambda: L2SVM(lam=LAM * N_LAB)}[method]
    load0 = os.getloadavg()[0]
    with PeakRSS() as mem:
        t0, c0 = time.perf_counter(), time.process_time()
        model = make().fit(X, y_semi)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    unl = y_semi == -1
    rec = {"rows": X.shape[0], "features": X.shape[1], "nnz": int(X.nnz), "method": method,
           "wall": wall, "cpu": cpu, "peak_rss_mib": mem.peak / 2**20,
           "acc_unlabeled": 100 * float(np.mean(model.predict(X[unl]) == y[unl])),
           "objective": common_objective(model, X, y_semi) if method != "svm" else None,
           "load": [load0, os.getloadavg()[0]]}
    r = getattr(model, "fit_results_", [None])[0]
    for key in ("n_iter", "n_newton_iter", "n_cg_iter"):
        if r is not None and hasattr(r, key):
            rec[key] = int(getattr(r, key))
    with open(OUT, "a") as fh:
        fh.write(json.dumps(rec) + "\n")
    print(json.dumps(rec), flush=True)


def summary() -> None:
    rows = [json.loads(x) for x in OUT.read_text().splitlines() if x.strip()]
    body = []
    for n in sorted({r["rows"] for r in rows}):
        last = {r["method"]: r for r in rows if r["rows"] == n}
        for m in ("svm", "cccp", "tsvm"):
            if m in last:
                r = last[m]
                body.append([f"{n:,} x {r['features']:,} (nnz {r['nnz']:,})", m, r["wall"],
                             r["cpu"], r["peak_rss_mib"], r["acc_unlabeled"], r["objective"],
                             f"{r.get('n_iter', '')} outer, {r.get('n_cg_iter', '')} CG",
                             f"{r['load'][0]:.1f}-{r['load'][1]:.1f}"])
        if "cccp" in last and "tsvm" in last:
            body.append(["", "ratio CCCP / TSVM", last["cccp"]["wall"] / last["tsvm"]["wall"],
                         last["cccp"]["cpu"] / last["tsvm"]["cpu"], "", "", "",
                         "CG ratio "
                         + f"{last['cccp']['n_cg_iter'] / last['tsvm']['n_cg_iter']:.3f}",
                         ""])
    text = ("# CCCPS3VM vs TransductiveSVM on sparse text\n\n"
            f"Commands: `python benchmarks/bench_active_scale.py --rows N --method M` (one fit "
            f"each), summary `{command_line()}`.\n\n{machine_info()}\n\n"
            "20NG 5-line chunks, comp/sci vs rest, tf-idf, 500 labeled, lam 1e-4, lam_u 1.  "
            "Objective: the TSVM objective (s = 0) of the returned model, the same formula "
            "for both (CCCP fixes the bias by the balance constraint; TSVM by its own rule).  "
            "The last fit of each pair is shown.\n\n"
            + table(["data", "method", "wall s", "CPU s", "peak RSS MiB", "acc % (unlabeled)",
                     "objective", "work", "load 1-min (start-end)"], body) + "\n")
    (RESULTS_DIR / "active_scale.md").write_text(text)
    print(text)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--method", choices=["cccp", "tsvm", "svm"], default="cccp")
    ap.add_argument("--cache", default="/tmp/semisup-active/chunks.pkl")
    ap.add_argument("--summary", action="store_true")
    args = ap.parse_args()
    if args.summary:
        summary()
    else:
        run(args.rows, args.method, Path(args.cache))


if __name__ == "__main__":
    main()
