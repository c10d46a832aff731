"""Semi-supervised multiple kernel learning on USPS: Table 4.3 of Xu's thesis.

Protocol (§4.3.2): binary tasks 1v7, 2v3, 2v7, 3v8, 4v7 of the USPS training images; each
run draws 400 random points of the two digits and 20 of them (5 %) are labeled (both
classes present); the 380 unlabeled points are scored.  Base kernels: Gaussians of 10
widths 2^-3..2^6 and polynomials of degree 1-3 on all pixels, and a linear kernel on each
single pixel; pixels are z-scored over the 400 points (constant pixels dropped, so every
per-pixel kernel has a positive trace).  Every base kernel is deformed by the 6-NN graph
Laplacian of the 400 points (eq. 4.10, r = 1, ``semisup.graph``) and scaled to unit trace
on the labeled block; SD (SimpleMKL), SILP and the level method then solve the same MKL
problem (C = 100, relative duality gap < 0.01 or 500 iterations) on that bank, one after the
other in the same process.  Time is the solver's (wall and CPU); the deformed bank is shared
and timed separately.

Resumable: each finished (task, run) appends a JSON line to ``--runs``.

    python benchmarks/bench_mkl_usps.py --runs-per-task 30
    python benchmarks/bench_mkl_usps.py --report
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS_DIR, PeakRSS, report, table  # noqa: E402

from semisup.datasets import load_usps  # noqa: E402
from semisup.graph import adjacency_graph, laplacian  # noqa: E402
from semisup.mkl import (  # noqa: E402
    MKLProblem,
    check_kernel_specs,
    deformed_bank,
    evaluate_kernel,
    level_mkl,
    silp_mkl,
    simple_mkl,
    simplemkl_kernels,
)

SOLVERS = {"SD": simple_mkl, "SILP": silp_mkl, "Level": level_mkl}
TASKS = ((1, 7), (2, 3), (2, 7), (3, 8), (4, 7))
# thesis Table 4.3: {task: {solver: (time s, acc %, #kernels)}}
THESIS = {
    "1v7": {"SD": (13.7, 96.2, 8.4), "SILP": (511.6, 94.6, 7.2), "Level": (2.7, 96.5, 9.4)},
    "2v3": {"SD": (17.0, 86.9, 13.1), "SILP": (1362.0, 86.9, 11.7),
            "Level": (2.4, 87.2, 14.4)},
    "2v7": {"SD": (16.3, 88.3, 12.4), "SILP": (1249.5, 88.1, 10.2),
            "Level": (2.5, 88.6, 13.4)},
    "3v8": {"SD": (11.6, 85.4, 13.6), "SILP": (990.0, 85.5, 11.7),
            "Level": (2.4, 85.8, 14.7)},
    "4v7": {"SD": (13.6, 86.9, 11.3), "SILP": (671.8, 87.0, 9.9), "Level": (1.7, 87.2, 13.2)},
}


def draw(X, digit, task, run, n_points=400, n_labeled=20, scale="zscore"):
    a, b = task
    rng = np.random.default_rng(1000 * (10 * a + b) + run)
    pool = np.flatnonzero(np.isin(digit, task))
    idx = rng.choice(pool, n_points, replace=False)
    y = np.where(digit[idx] == a, 1.0, -1.0)
    while True:
        lab = np.sort(rng.choice(n_points, n_labeled, replace=False))
        if np.unique(y[lab]).size == 2:
            break
    Xs = X[idx]
    sd = Xs.std(axis=0)
    keep = sd > 0
    Xs = Xs[:, keep]
    if scale == "zscore":
        Xs = (Xs - Xs.mean(axis=0)) / sd[keep]
    return Xs, y, lab


def run_one(X, digit, task, run, solvers, tol, C, scale="zscore", normalize="after"):
    Xs, y, lab = draw(X, digit, task, run, scale=scale)
    d = Xs.shape[1]
    specs = check_kernel_specs(simplemkl_kernels(d, single_feature_kinds=("linear",)), d)
    t0, c0 = time.perf_counter(), time.process_time()
    with PeakRSS() as mem:
        L = laplacian(adjacency_graph(Xs, n_neighbors=6))
        bank, Z = deformed_bank(specs, Xs, lab, L, 1.0, normalize=normalize)
    out = {"task": f"{task[0]}v{task[1]}", "run": run, "m": bank.n_kernels,
           "bank": time.perf_counter() - t0, "bank_cpu": time.process_time() - c0,
           "peak_mib": (mem.peak - mem.start) / 2**20}
    unl = np.setdiff1d(np.arange(y.size), lab)
    cols = {}
    for s in solvers:
        problem = MKLProblem(bank, y[lab], C)
        t0, c0 = time.perf_counter(), time.process_time()
        res = SOLVERS[s](problem, tol=tol, max_iter=500)
        el, cpu = time.perf_counter() - t0, time.process_time() - c0
        p = res.weights.copy()
        p[p < 1e-5] = 0.0
        p /= p.sum()
        coef = res.alpha * y[lab]
        f = np.full(unl.size, res.bias)
        for k in np.flatnonzero(p):
            if k not in cols:       # deformed kernel k between every row and the labeled
                cols[k] = evaluate_kernel(specs[k], Xs)[unl] @ Z[k] * bank.scales[k]
            f += p[k] * (cols[k] @ coef)
        acc = 100 * float(np.mean(np.where(f > 0, 1.0, -1.0) == y[unl]))
        out[s] = {"time": el, "cpu": cpu, "acc": acc, "nk": int(np.count_nonzero(p)),
                  "iter": int(res.n_iter), "svm": int(res.n_svm),
                  "obj": float(res.objective), "conv": bool(res.converged)}
    return out


def ms(v):
    v = np.asarray(v, dtype=float)
    return f"{v.mean():.2f}±{v.std():.2f}" if v.size > 1 else f"{v.mean():.2f}"


def read_runs(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def make_report(args, solvers):
    allruns = read_runs(Path(args.runs))
    rows, summary = [], []
    for task in TASKS:
        name = f"{task[0]}v{task[1]}"
        runs = [r for r in allruns if r["task"] == name]
        if not runs:
            continue
        th = THESIS[name]
        for metric, key in (("Time (s, wall)", "time"), ("Time (s, CPU)", "cpu"),
                            ("Acc (%)", "acc"), ("#Kernel", "nk"), ("#SVM solves", "svm"),
                            ("iterations", "iter")):
            row = [f"{name} (m = {runs[0]['m']}) x{len(runs)}" if key == "time" else "",
                   metric]
            row += [ms([r[s][key] for r in runs]) for s in solvers]
            idx = {"time": 0, "acc": 1, "nk": 2}.get(key)
            row += [" / ".join(f"{th[s][idx]}" for s in solvers) if idx is not None else ""]
            rows.append(row)
        rows.append(["", "objective (converged)"] + [
            f"{np.mean([r[s]['obj'] for r in runs]):.3f} "
            f"({sum(r[s]['conv'] for r in runs)}/{len(runs)})" for s in solvers] + [""])
        rows.append(["", "deformed bank s / peak MiB",
                     f"{ms([r['bank'] for r in runs])} / "
                     f"{max(r['peak_mib'] for r in runs):.0f}"] + [""] * len(solvers))
        acc = {s: np.mean([r[s]["acc"] for r in runs]) for s in solvers}
        fastest = {s: np.mean([min(solvers, key=lambda t, r=r: r[t]["cpu"]) == s
                               for r in runs]) for s in solvers}
        summary.append([name, len(runs)] + [f"{acc[s]:.1f} ({acc[s] - th[s][1]:+.1f})"
                                            for s in solvers]
                       + [f"{100 * fastest.get('Level', 0):.0f} %"])
    loads = [r["load"] for r in allruns]
    report(args.name, "Semi-supervised MKL on USPS (Xu's thesis Table 4.3)", [
        f"{len(allruns)} runs; load (1-min average) at the end of each run: min "
        f"{min(loads):.1f}, median {np.median(loads):.1f}, max {max(loads):.1f} (2 cores). "
        f"C = {args.C}, tol = {args.tol}, pixels: {args.scale}, unit trace "
        f"{args.normalize} the deformation.",
        table(["task (m) x runs", "metric", *solvers, "thesis " + " / ".join(solvers)], rows),
        "Accuracy (difference to the thesis) and the share of runs in which the level "
        "method had the lowest CPU time:\n\n" + table(
            ["task", "runs", *[f"{s} acc %" for s in solvers], "level fastest"], summary)])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs-per-task", type=int, default=30)
    ap.add_argument("--solvers", default="SD,SILP,Level")
    ap.add_argument("--tol", type=float, default=0.01)
    ap.add_argument("--C", type=float, default=100.0)
    ap.add_argument("--runs", default=str(RESULTS_DIR / "mkl_usps_runs.jsonl"))
    ap.add_argument("--minutes", type=float, default=None)
    ap.add_argument("--scale", choices=("zscore", "none"), default="zscore",
                    help="pixels z-scored over the 400 points, or raw ([0, 1])")
    ap.add_argument("--normalize", choices=("after", "before"), default="after",
                    help="unit trace of each deformed kernel on the labeled block, or of "
                    "each base kernel on all 400 points before the deformation")
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--name", default="mkl_usps")
    args = ap.parse_args(argv)
    solvers = args.solvers.split(",")
    if not args.report:
        X, digit = load_usps(split="train")
        path = Path(args.runs)
        done = {(r["task"], r["run"]) for r in read_runs(path)}
        deadline = time.time() + 60 * args.minutes if args.minutes else None
        for run in range(args.runs_per_task):
            for task in TASKS:
                if (f"{task[0]}v{task[1]}", run) in done:
                    continue
                if deadline is not None and time.time() > deadline:
                    print("--minutes reached; rerun to resume", flush=True)
                    return make_report(args, solvers)
                r = run_one(X, digit, task, run, solvers, args.tol, args.C, args.scale,
                            args.normalize)
                r["load"] = os.getloadavg()[0]
                with path.open("a") as fh:
                    fh.write(json.dumps(r) + "\n")
                print(f"{r['task']} run {run}: bank {r['bank']:.1f}s " + "  ".join(
                    f"{s} {r[s]['cpu']:.2f}cpu acc {r[s]['acc']:.1f} nk {r[s]['nk']}"
                    for s in solvers), flush=True)
    make_report(args, solvers)


if __name__ == "__main__":
    main()
