"""The thesis estimators with their defaults against SVC (issue 26, parts 1-2).

Each estimator is fitted with its defaults (``random_state=0`` where it has one) on
sklearn's digits 3 vs 8 (357 rows, 10 labels; ``digits38s``: its first 50 rows, where
SDPRelaxedTSVM's default accepts the problem) and on SSL-book Digit1 (1,500 rows, the first
official split of 10 labels), each in a child process with a wall-clock limit (60 s by
default, the issue's bar); the peer is ``sklearn.svm.SVC()`` on the labeled rows, fitted in
the same run.  Reported: time, peak memory of the child, accuracy on the unlabeled rows, and
whether a ``CollapseWarning`` was raised.  A third part fits each multi-class-capable
estimator on digits 0/1/2 (5 labels per class) to show the one-vs-rest route.

``python benchmarks/bench_defaults_thesis.py [--limit 60] [--sets digits38s,digit1]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import child_env, report, table  # noqa: E402

ESTIMATORS = ("ConvexTSVM", "SDPRelaxedTSVM", "RhoTSVM", "MultipleKernelSVC", "MixtureSSL",
              "UniversumSVM", "SelfTaughtClassifier", "SupervisedSelfTaught")


def _data(name):
    import numpy as np
    from sklearn.datasets import load_digits

    if name == "digit1":
        from semisup.datasets import load_sslbook, partial_labels

        b = load_sslbook("digit1", 10)
        return b.X, partial_labels(b.y, np.arange(b.y.size)), partial_labels(b.y, b.splits[0])
    X, d = load_digits(return_X_y=True)
    keep = np.isin(d, [0, 1, 2] if name == "digits3c" else [3, 8])
    X, d = X[keep] / 16.0, d[keep]
    rng = np.random.default_rng(0)
    if name == "digits38s":           # the first 50 rows: SDPRelaxedTSVM's default max_n
        X, d = X[:50], d[:50]
    y = np.full(d.shape, -1)
    per = 5
    for c in np.unique(d):
        y[rng.choice(np.flatnonzero(d == c), per, replace=False)] = c
    return X, d, y


def child(name: str, set_name: str) -> None:
    """Fit one estimator (or SVC) with its defaults; print one JSON line."""
    import time
    import warnings

    import numpy as np
    from _common import PeakRSS

    import semisup
    from semisup._validation import CollapseWarning

    X, truth, y = _data(set_name)
    unl = y == -1
    out = {"estimator": name, "set": set_name}
    with PeakRSS() as mem, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            if name == "SVC":
                from sklearn.svm import SVC

                pred = SVC().fit(X[~unl], y[~unl]).predict(X[unl])
            else:
                Est = getattr(semisup, name)
                est = Est()
                if "random_state" in est.get_params():
                    est.set_params(random_state=0)
                est.fit(X, y)
                pred = est.transduction_[unl] if hasattr(est, "transduction_") \
                    else est.predict(X[unl])
            out["accuracy"] = float(np.mean(pred == truth[unl]))
        except ValueError as exc:          # a refusal with its message
            out["refused"] = str(exc).split(";")[0][:90]
        out["seconds"] = time.perf_counter() - t0
    out["peak_mib"] = (mem.peak - mem.start) / 2**20
    out["collapse"] = any(issubclass(w.category, CollapseWarning) for w in caught)
    print(json.dumps(out))


def run(name: str, set_name: str, limit: float) -> dict:
    cmd = [sys.executable, __file__, "--child", name, set_name]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=limit,
                             env=child_env())
    except subprocess.TimeoutExpired:
        return {"estimator": name, "set": set_name, "seconds": None,
                "refused": f"did not finish in {limit:g} s"}
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("{")]
    if not lines:
        return {"estimator": name, "set": set_name, "refused": res.stderr.strip()[-90:]}
    return json.loads(lines[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--sets", default="digits38s,digits38,digit1,digits3c")
    ap.add_argument("--estimators", default=",".join(ESTIMATORS))
    ap.add_argument("--child", nargs=2)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    sections = []
    for set_name in args.sets.split(","):
        base = run("SVC", set_name, args.limit)
        rows = [["SVC (peer)", base.get("seconds"), 1.0, base.get("peak_mib"),
                 base.get("accuracy"), "-", ""]]
        for name in args.estimators.split(","):
            r = run(name, set_name, args.limit)
            ratio = r["seconds"] / base["seconds"] if r.get("seconds") and \
                base.get("seconds") else None
            rows.append([name, r.get("seconds"), ratio, r.get("peak_mib"),
                         r.get("accuracy"), "yes" if r.get("collapse") else "no",
                         r.get("refused", "")])
            print(json.dumps(r), flush=True)
        sections.append(f"## {set_name}\n\n" + table(
            ["estimator (defaults)", "time s", "time / SVC", "peak MiB", "accuracy (unlabeled)",
             "collapse warning", "refused / not finished"], rows))
    import os

    sections.append("Load average at the end (1, 5, 15 min): "
                    + ", ".join(f"{v:.1f}" for v in os.getloadavg())
                    + " (a shared 2-core machine: compare times within one table only)")
    report("defaults_thesis", "Thesis estimators with their defaults vs SVC (issue 26)",
           sections)


if __name__ == "__main__":
    main()
