"""Label propagation / label spreading at scale: semisup vs scikit-learn, side by side.

Synthetic data: ``n`` rows x 50 dims, 10 classes, each class a Gaussian cluster around
its own centre with a 5-dimensional principal subspace plus isotropic noise (a cluster
structure that a kNN graph follows); 10 labeled rows per class, accuracy on the unlabeled
rows.  Real data: USPS (train + test, 9,298 x 256), 10 labeled rows per class.

Every fit runs in its own process, so peak memory (``VmHWM`` over the fit, data included)
is per fit; scikit-learn's fit is stopped after ``--limit`` seconds.

    python benchmarks/bench_propagation.py                        # 10k and 100k + USPS
    python benchmarks/bench_propagation.py --sizes 1000000 --name propagation_1m
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import REPO, Contention, PeakRSS, child_env, report, table  # noqa: E402

N_CLASSES = 10
N_LABELED_PER_CLASS = 10
DIM = 50
K = 10

METHODS = {
    "semisup LabelSpreading": "ours_ls",
    "semisup LabelPropagation (cmn)": "ours_lp",
    "sklearn LabelSpreading(knn)": "sk_ls",
}


def synthetic(n: int, seed: int = 0):
    """The cluster mixture described in the module docstring."""
    rng = np.random.default_rng(seed)
    centres = 0.15 * rng.normal(size=(N_CLASSES, DIM))   # overlapping centres
    y = rng.integers(N_CLASSES, size=n)
    loadings = rng.normal(size=(N_CLASSES, DIM, 5)) * 0.5
    X = centres[y] + 0.3 * rng.normal(size=(n, DIM))
    for c in range(N_CLASSES):  # class by class: no (n, 50, 5) temporary
        rows = np.flatnonzero(y == c)
        X[rows] += rng.normal(size=(rows.size, 5)) @ loadings[c].T
    return X, y


def usps():
    from semisup.datasets import load_usps

    X1, y1 = load_usps(split="train")
    X2, y2 = load_usps(split="test")
    return np.vstack([X1, X2]), np.r_[y1, y2]


def partial(y: np.ndarray, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.full(y.size, -1)
    for c in np.unique(y):
        pick = rng.choice(np.flatnonzero(y == c), N_LABELED_PER_CLASS, replace=False)
        out[pick] = c
    return out


def _cpu() -> float:
    """CPU seconds of this process (all threads): the work, whatever the machine's load."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def worker(method: str, data: str) -> None:
    """Fit one method on one data set; print one JSON line."""
    X, y_true = usps() if data == "usps" else synthetic(int(data))
    y = partial(y_true)
    if method == "ours_ls":
        from semisup.propagation import LabelSpreading

        est = LabelSpreading(n_neighbors=K, random_state=0)
    elif method == "ours_lp":
        from semisup.propagation import LabelPropagation

        est = LabelPropagation(n_neighbors=K, cmn=True, random_state=0)
    else:
        from sklearn.semi_supervised import LabelSpreading

        # scikit-learn's defaults (alpha=0.2, max_iter=30 sweeps) with the same k
        est = LabelSpreading(kernel="knn", n_neighbors=K)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with PeakRSS() as mem:
            t0, c0 = time.perf_counter(), _cpu()
            est.fit(X, y)
            seconds, cpu = time.perf_counter() - t0, _cpu() - c0
    unl = y == -1
    out = {"seconds": seconds, "cpu_seconds": cpu, "peak_mib": mem.peak / 2**20,
           "start_mib": mem.start / 2**20,
           "accuracy": float(np.mean(est.transduction_[unl] == y_true[unl])),
           "warnings": sorted({w.category.__name__ for w in caught})}
    if method != "sk_ls":
        out.update(n_iter=est.n_iter_, residual=est.residual_,
                   timings={k: round(v, 2) for k, v in est.timings_.items()})
    else:
        out.update(n_iter=int(est.n_iter_))
    print(json.dumps(out))


def run_one(method: str, data: str, limit: float) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", method, data]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit,
                              cwd=str(REPO), env=child_env())
    except subprocess.TimeoutExpired:
        return {"stopped": f"stopped after {limit:.0f} s"}
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["?"]
        return {"stopped": f"failed after {time.perf_counter() - t0:.0f} s: {tail[0][:80]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _rows(label: str, results: dict) -> tuple[list, list]:
    """Table rows (and warning notes) of one data set's three fits."""
    rows, notes = [], []
    base = results.get("sklearn LabelSpreading(knn)", {})
    for name, r in results.items():
        if "stopped" in r:
            rows.append([label, name, r["stopped"], "-", "-", "-", "-", "-"])
            continue
        ratio = (f"{base['seconds'] / r['seconds']:.1f}x" if "seconds" in base
                 and name != "sklearn LabelSpreading(knn)" else "-")
        if "timings" in r:
            t = r["timings"]
            detail = (f"kNN {t['knn']:.1f} s, graph {t['graph']:.1f} s, CG "
                      f"{r['n_iter']} it / {t['solve']:.1f} s")
        else:
            detail = f"{r['n_iter']} sweeps"
        cpu = f"{r['cpu_seconds']:.1f}" if "cpu_seconds" in r else "not recorded"
        rows.append([label, name, f"{r['seconds']:.1f}", cpu, ratio,
                     f"{r['peak_mib']:.0f} (data {r['start_mib']:.0f})",
                     f"{r['accuracy']:.4f}", detail])
        if r.get("warnings"):
            notes.append(f"{label}, {name}: warnings {', '.join(r['warnings'])}")
    return rows, notes


def _from_logs(paths: list[str]) -> list[tuple[str, dict]]:
    """The ``label method {json}`` lines printed by earlier runs, grouped by data set."""
    grouped: dict[str, dict] = {}
    for path in paths:
        for line in Path(path).read_text().splitlines():
            for name in METHODS:
                marker = f" {name} {{"
                if marker in line:
                    label, _, rest = line.partition(marker)
                    grouped.setdefault(label, {})[name] = json.loads("{" + rest)
    return list(grouped.items())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    ap.add_argument("--no-usps", action="store_true")
    ap.add_argument("--limit", type=float, default=600.0,
                    help="seconds after which scikit-learn's fit is stopped")
    ap.add_argument("--name", default="propagation")
    ap.add_argument("--from-logs", nargs="*", default=None,
                    help="rebuild the report from the printed lines of earlier runs")
    ap.add_argument("--note", action="append", default=[],
                    help="a sentence to add to the report (e.g. how the logs were made)")
    ap.add_argument("--worker", nargs=2, metavar=("METHOD", "DATA"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    rows, notes = [], []
    load_line = "Machine load: see the runs whose printed lines were combined."
    if args.from_logs:
        for label, results in _from_logs(args.from_logs):
            r, n = _rows(label, results)
            rows += r
            notes += n
    else:
        datasets = [str(n) for n in args.sizes] + ([] if args.no_usps else ["usps"])
        with Contention() as load:
            for data in datasets:
                label = ("USPS 9,298 x 256" if data == "usps"
                         else f"synthetic {int(data):,} x {DIM}")
                results = {}
                for name, method in METHODS.items():
                    # ours are not stopped: the limit is for the peer
                    limit = args.limit if method == "sk_ls" else 3600.0
                    results[name] = run_one(method, data, limit)
                    print(label, name, json.dumps(results[name]), flush=True)
                r, n = _rows(label, results)
                rows += r
                notes += n
        load_line = load.line()
    headers = ["data", "method", "fit s (wall)", "fit CPU s", "sklearn s / this s",
               "peak RSS MiB (at start)", "accuracy (unlabeled)", "detail"]
    sections = [
        f"{N_LABELED_PER_CLASS} labeled rows per class; k = {K} neighbours for every method. "
        "semisup: default parameters (LabelSpreading alpha = 0.99; LabelPropagation with "
        "class mass normalisation; tol = 1e-4; exact kNN below 20,000 rows, NN-descent "
        "above; every fit runs in a fresh process, so the kNN time includes numba's "
        "compilation of pynndescent).  scikit-learn: "
        "`LabelSpreading(kernel='knn', n_neighbors=10)` with its defaults (alpha = 0.2, "
        f"30 sweeps; its kNN search is exact brute force); stopped after {args.limit:.0f} s.",
        table(headers, rows),
        "\n".join(f"- {n}" for n in notes) if notes else "No warnings.",
        *args.note,
        load_line,
    ]
    report(args.name, "Label propagation at scale: semisup vs scikit-learn", sections)


if __name__ == "__main__":
    main()
