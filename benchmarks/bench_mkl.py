"""Multiple kernel learning: Tables 4.1 / 4.2 of Xu's thesis (SD = SimpleMKL, SILP, level).

Protocol (§4.3.1): random 50/50 train/test splits, features z-scored with the training
half's mean and deviation (constant features dropped), C = 100, the SimpleMKL bank
(Gaussians of widths 2^-3..2^6 and polynomials of degree 1-3 on all features and on each
single feature, unit trace: m = 13 (d + 1)).  The three solvers run on the same bank in the
same process, one after the other (the order rotates with the split, so that a burst of
load on the shared machine does not always hit the same solver), with the same stopping
rule: the relative duality gap at the current weights < ``--tol`` (§4.3.1), or 500
iterations; the level method's own bound-gap rule is off (``bound_gap=False``).  Time is
the solver's time, wall and process CPU (the bank is shared and timed separately), with
the CPU that other processes used meanwhile (``Contention``); accuracy on the test half;
#kernels = weights > 1e-5.

Resumable: every finished (data set, split) appends one JSON line to ``--runs`` (default
``results/mkl_runs.jsonl``) and is skipped when the command is run again; splits are taken
in the order split 0 of every set, then split 1, ... so that a stopped run leaves the same
number of splits per set.  The tables are written from the file by ``--report``.

    python benchmarks/bench_mkl.py --splits 20            # run / resume, then report
    python benchmarks/bench_mkl.py --report               # tables from the runs so far
    python benchmarks/bench_mkl.py --time-level           # absolute time of the level method
    python benchmarks/bench_mkl.py --plot heart           # Fig. 4.3 (weight trajectories)
    python benchmarks/bench_mkl.py --c-auto --splits 2    # C='auto' against C = 100
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS_DIR, Contention, PeakRSS, report, table  # noqa: E402

from semisup.datasets import shared_data_dir  # noqa: E402
from semisup.mkl import (  # noqa: E402
    KernelBank,
    MKLProblem,
    check_kernel_specs,
    evaluate_kernel,
    level_mkl,
    silp_mkl,
    simple_mkl,
    simplemkl_kernels,
)

SOLVERS = {"SD": simple_mkl, "SILP": silp_mkl, "Level": level_mkl}
# thesis Table 4.1: (n, m, {solver: (time s, acc %, #kernels)})
THESIS = {
    "iono": (175, 442, {"SD": (33.5, 92.1, 26.9), "SILP": (1161.0, 92.0, 24.4),
                        "Level": (7.1, 92.1, 25.4)}),
    "breast": (342, 117, {"SD": (47.4, 96.6, 13.1), "SILP": (54.2, 96.6, 10.6),
                          "Level": (4.6, 96.6, 13.3)}),
    "pima": (384, 117, {"SD": (39.4, 76.9, 16.6), "SILP": (62.0, 76.9, 12.0),
                        "Level": (9.1, 76.9, 17.6)}),
    "sonar": (104, 793, {"SD": (60.1, 79.1, 39.8), "SILP": (1964.3, 79.3, 34.2),
                         "Level": (24.9, 79.0, 38.6)}),
    "wpbc": (198, 442, {"SD": (7.8, 77.0, 19.5), "SILP": (142.0, 76.9, 17.2),
                        "Level": (5.3, 76.9, 20.3)}),
    "heart": (135, 182, {"SD": (4.7, 82.2, 17.5), "SILP": (79.2, 82.2, 15.2),
                         "Level": (2.1, 82.2, 18.6)}),
    "vote": (218, 205, {"SD": (23.7, 95.7, 14.0), "SILP": (26.3, 95.7, 10.6),
                        "Level": (4.1, 95.7, 13.8)}),
    "wdbc": (285, 403, {"SD": (122.9, 96.7, 16.6), "SILP": (146.3, 96.5, 12.9),
                        "Level": (15.5, 96.7, 15.6)}),
}


def load(name: str, root: Path) -> tuple[np.ndarray, np.ndarray]:
    d = root / "uci_small"
    if name == "iono":
        X, y = load_svmlight_file(str(d / "ionosphere_scale.bz2"), n_features=34)
        return X.toarray(), y
    if name == "breast":
        X, y = load_svmlight_file(str(d / "breast-cancer_scale.bz2"), n_features=10)
        return X.toarray()[:, 1:], y                   # column 0 is the sample id
    if name == "heart":
        X, y = load_svmlight_file(str(d / "heart_scale.bz2"), n_features=13)
        return X.toarray(), y
    if name == "pima":
        A = np.loadtxt(d / "pima-indians-diabetes.csv.bz2", delimiter=",")
        return A[:, :-1], np.where(A[:, -1] > 0, 1.0, -1.0)
    if name == "sonar":
        S = np.genfromtxt(d / "sonar.csv.bz2", delimiter=",", dtype=str)
        return S[:, :-1].astype(float), np.where(S[:, -1] == "M", 1.0, -1.0)
    if name in ("wdbc", "wpbc"):
        S = np.genfromtxt(d / f"{name}.data.bz2", delimiter=",", dtype=str)
        X = np.where(S[:, 2:] == "?", "nan", S[:, 2:]).astype(float)
        return X, np.where(np.isin(S[:, 1], ("M", "R")), 1.0, -1.0)
    if name == "vote":
        S = np.genfromtxt(d / "house-votes-84.data.bz2", delimiter=",", dtype=str)
        X = np.where(S[:, 1:] == "y", 1.0, np.where(S[:, 1:] == "n", -1.0, 0.0))
        return X, np.where(S[:, 0] == "democrat", 1.0, -1.0)
    raise ValueError(name)


def split(X, y, seed):
    rng = np.random.default_rng(seed)
    idx = rng.permutation(y.size)
    tr, te = idx[: y.size // 2], idx[y.size // 2:]
    Xtr, Xte = X[tr].copy(), X[te].copy()
    mean = np.nanmean(Xtr, axis=0)                 # wpbc: 4 missing values -> training mean
    Xtr = np.where(np.isnan(Xtr), mean, Xtr)
    Xte = np.where(np.isnan(Xte), mean, Xte)
    sd = Xtr.std(axis=0)
    keep = sd > 0
    Xtr = (Xtr[:, keep] - mean[keep]) / sd[keep]
    Xte = (Xte[:, keep] - mean[keep]) / sd[keep]
    return Xtr, y[tr], Xte, y[te]


def predict(specs, bank, res, ytr, Xtr, Xte):
    coef = res.alpha * ytr
    sv = np.flatnonzero(coef)
    f = np.full(Xte.shape[0], res.bias)
    for k in np.flatnonzero(res.weights):
        f += res.weights[k] * bank.scales[k] * (evaluate_kernel(specs[k], Xte, Xtr[sv])
                                                @ coef[sv])
    return np.where(f > 0, 1.0, -1.0)


def run_split(name, X, y, seed, solvers, tol, record=False, dtype="float64"):
    Xtr, ytr, Xte, yte = split(X, y, seed)
    specs = check_kernel_specs(simplemkl_kernels(Xtr.shape[1]), Xtr.shape[1])
    t0, c0 = time.perf_counter(), time.process_time()
    with PeakRSS() as mem:
        bank = KernelBank.from_specs(specs, Xtr, dtype=dtype)
    out = {"data": name, "seed": seed, "bank": time.perf_counter() - t0,
           "bank_cpu": time.process_time() - c0, "m": bank.n_kernels, "n": int(ytr.size),
           "bank_mib": bank.nbytes / 2**20, "peak_mib": (mem.peak - mem.start) / 2**20}
    # rotate the order with the split: the solvers of one split run back to back
    order = solvers[seed % len(solvers):] + solvers[:seed % len(solvers)]
    for s in order:
        problem = MKLProblem(bank, ytr, 100.0)
        t0, c0 = time.perf_counter(), time.process_time()
        with Contention() as load:
            res = SOLVERS[s](problem, tol=tol, max_iter=500, record_weights=record)
        el, cpu = time.perf_counter() - t0, time.process_time() - c0
        p = res.weights.copy()
        p[p < 1e-5] = 0.0
        res.weights = p / p.sum()
        acc = np.mean(predict(specs, bank, res, ytr, Xtr, Xte) == yte)
        out[s] = {"time": el, "cpu": cpu, "acc": 100 * float(acc),
                  "nk": int(np.count_nonzero(res.weights)), "iter": int(res.n_iter),
                  "svm": int(res.n_svm), "obj": float(res.objective),
                  "conv": bool(res.converged), "foreign": load.foreign_cores}
        if record:
            out[s]["trace"] = res.trace
    return out


def ms(v):
    v = np.asarray(v, dtype=float)
    return f"{v.mean():.2f}±{v.std():.2f}" if v.size > 1 else f"{v.mean():.2f}"


def read_runs(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run(args, root, solvers):
    path = Path(args.runs)
    done = {(r["data"], r["seed"]) for r in read_runs(path)}
    names = args.datasets.split(",")
    data = {}
    deadline = time.time() + 60 * args.minutes if args.minutes else None
    for seed in range(args.splits):
        for name in names:
            if (name, seed) in done:
                continue
            if deadline is not None and time.time() > deadline:
                print(f"--minutes {args.minutes} reached; rerun to resume", flush=True)
                return
            if name not in data:
                data[name] = load(name, root)
            r = run_split(name, *data[name], seed, solvers, args.tol)
            r["load"] = os.getloadavg()[0]
            with path.open("a") as fh:
                fh.write(json.dumps(r) + "\n")
            print(f"{name} split {seed}: " + "  ".join(
                f"{s} {r[s]['time']:.2f}s/{r[s]['cpu']:.2f}cpu acc {r[s]['acc']:.1f} "
                f"nk {r[s]['nk']}" for s in solvers) + f"  load {r['load']:.1f}", flush=True)


def make_report(args, solvers):
    # several runs files (comma-separated: chunks run in parallel processes) are merged
    paths = [Path(f) for f in args.runs.split(",")]
    allruns = [r for path in paths for r in read_runs(path)]
    rows, ratio_rows = [], []
    loads = [r["load"] for r in allruns]
    for name in args.datasets.split(","):
        runs = [r for r in allruns if r["data"] == name and all(s in r for s in solvers)]
        if not runs:
            continue
        n, m = runs[0]["n"], runs[0]["m"]
        _, _, th = THESIS[name]
        for metric, key in (("Time (s, wall)", "time"), ("Time (s, CPU)", "cpu"),
                            ("Acc (%)", "acc"), ("#Kernel", "nk"), ("#SVM solves", "svm"),
                            ("iterations", "iter")):
            row = [f"{name} ({n}, {m}) x{len(runs)}" if key == "time" else "", metric]
            row += [ms([r[s][key] for r in runs]) for s in solvers]
            idx = {"time": 0, "acc": 1, "nk": 2}.get(key)
            row += [" / ".join(f"{th[s][idx]}" for s in solvers) if idx is not None else ""]
            rows.append(row)
        obj = {s: np.mean([r[s]["obj"] for r in runs]) for s in solvers}
        conv = {s: sum(r[s]["conv"] for r in runs) for s in solvers}
        rows.append(["", "objective (converged runs)"]
                    + [f"{obj[s]:.2f} ({conv[s]}/{len(runs)})" for s in solvers] + [""])
        rows.append(["", "bank s / bank MiB / peak MiB",
                     f"{ms([r['bank'] for r in runs])} / {runs[0]['bank_mib']:.1f} / "
                     f"{max(r['peak_mib'] for r in runs):.1f}"] + [""] * len(solvers))
        if "Level" in solvers:
            rr = [f"{name} (x{len(runs)})"]
            for key in ("time", "cpu"):
                for other in ("SD", "SILP"):
                    if other in solvers:
                        rr.append(np.mean([100 * (1 - r["Level"][key] / r[other][key])
                                           for r in runs]))
                    else:
                        rr.append(np.nan)
            rr += [100 * (1 - th["Level"][0] / th[o][0]) for o in ("SD", "SILP")]
            acc = [np.mean([r[s]["acc"] for r in runs]) for s in solvers]
            rr += [max(acc) - min(acc),
                   max(abs(np.mean([r[s]["acc"] for r in runs]) - th[s][1])
                       for s in solvers)]
            ratio_rows.append(rr)
    sections = [f"Runs files {', '.join(f'`{p.name}`' for p in paths)}: {len(allruns)} "
                "(data set, split) runs; machine "
                f"load (1-min average) at the end of each run: min {min(loads):.1f}, median "
                f"{np.median(loads):.1f}, max {max(loads):.1f} (2 cores).  C = 100, tol = "
                f"{args.tol} (relative duality gap at the current weights, for all three "
                "solvers: the level method's bound-gap rule is off), max 500 iterations.  "
                "Times are the solver's; wall and process CPU time of the same run.",
                table(["data (n, m) x splits", "metric", *solvers,
                       "thesis " + " / ".join(solvers)], rows)]
    if ratio_rows:
        avg = ["average"] + [np.nanmean([r[j] for r in ratio_rows])
                             for j in range(1, len(ratio_rows[0]))]
        fmt_rows = [[r[0]] + [f"{v:.1f}" for v in r[1:]] for r in ratio_rows + [avg]]
        sections.append(
            "Time saving of the level method, 1 - T_level / T_other (%), mean of per-split "
            "ratios (Table 4.2), and the accuracy checks (max difference between the three "
            "solvers' mean accuracies; max distance of a solver's mean accuracy to the "
            "thesis's):\n\n" + table(
                ["data", "vs SD (wall)", "vs SILP (wall)", "vs SD (CPU)", "vs SILP (CPU)",
                 "thesis vs SD", "thesis vs SILP", "acc spread (pt)", "acc vs thesis (pt)"],
                fmt_rows))
    if all("foreign" in r[s] for r in allruns for s in solvers if s in r):
        sections.append("CPU used by other processes while each solver ran (cores, mean / "
                        "max over runs; 2 cores in all): " + ", ".join(
                            f"{s} {np.mean([r[s]['foreign'] for r in allruns]):.2f} / "
                            f"{np.max([r[s]['foreign'] for r in allruns]):.2f}"
                            for s in solvers) + ".  Savings are computed from CPU times, "
                        "which the load inflates far less than wall times.")
    if set(solvers) == {"SD", "SILP", "Level"}:
        sections.append(compare_rows(args, allruns))
    report(args.name, "Multiple kernel learning: SimpleMKL (SD), SILP and the level method "
           "(Xu's thesis Tables 4.1-4.2)", sections)


# why a row misses the thesis; the general causes, then per data set (from the runs)
MISS_REASONS = {
    "acc": "a different random sample of 50/50 splits (fewer than the thesis's 20) and the "
           "thesis's own split noise (its std is 1-4 pt); the three solvers agree with "
           "each other, so the difference is the splits, not the solver",
    "nk": "the count depends on the threshold (weights > 1e-5 here; the thesis does not "
          "state one) and on how far below tol the run stops: small weights of the tail "
          "are not yet zero at a relative duality gap of 0.01",
    "SILP": "the thesis's SILP (SimpleMKL toolbox, MOSEK LP) took {th:.0f} s, at least "
            "{th_it:.2f} s per iteration under its 500-iteration cap; here an SILP "
            "iteration (one warm-started SMO, one warm HiGHS LP) cost {ms_other:.1f} ms of "
            "CPU against {ms_level:.1f} ms for a level iteration (its projection QP, by "
            "constraint generation over the cuts), so the saving rests on the iteration "
            "counts alone: "
            "{it_level:.0f} (level, duality gap at its own iterate) against "
            "{it_other:.0f} (SILP)",
    "SD": "SimpleMKL's time varies several-fold between splits ({sd_nc} of the runs "
          "stopped without descent at the SVM's precision before the gap reached tol, "
          "which makes them short); our SimpleMKL forms K(p) + gamma K(D) once per "
          "segment and warm-starts every line-search SVM, so a trial step is cheaper than "
          "in the thesis's; level iterations {it_level:.0f} against SD's {it_other:.0f} "
          "({ms_other:.1f} ms of CPU per SD iteration, {ms_level:.1f} per level iteration)",
}


def compare_rows(args, allruns) -> str:
    """Per Table 4.1/4.2 row: the thesis's number, ours, the difference, why it misses."""
    rows = []
    # the 20 splits of the earlier runs (mkl.md): a larger sample of the accuracy, which the
    # stopping rule hardly moves
    ref = [r for f in ("mkl_runs_a.jsonl", "mkl_runs_b.jsonl")
           for r in read_runs(RESULTS_DIR / f)]
    for name in args.datasets.split(","):
        runs = [r for r in allruns if r["data"] == name and all(s in r for s in SOLVERS)]
        if not runs:
            continue
        th = THESIS[name][2]
        first = f"{name} (x{len(runs)})"
        ref_runs = [r for r in ref if r["data"] == name and all(s in r for s in SOLVERS)]
        for s in SOLVERS:
            ours = np.mean([r[s]["acc"] for r in runs])
            d = ours - th[s][1]
            why = MISS_REASONS["acc"]
            if ref_runs:
                acc20 = np.mean([r[s]["acc"] for r in ref_runs])
                why += (f"; over the {len(ref_runs)} splits of mkl.md {acc20:.1f} % "
                        f"({acc20 - th[s][1]:+.1f})")
                if name == "pima":
                    why += (", so on pima the gap is not only the splits: the thesis does "
                            "not state its preprocessing, and the UCI file codes missing "
                            "values as 0, kept as values here")
            rows.append([first, f"Acc {s} (%)", th[s][1], f"{ours:.1f}", f"{d:+.1f}",
                         why if abs(d) > 2.0 else ""])
            first = ""
        for s in SOLVERS:
            ours = np.mean([r[s]["nk"] for r in runs])
            d = ours - th[s][2]
            miss = abs(d) > max(3.0, 0.3 * th[s][2])
            rows.append(["", f"#Kernel {s}", th[s][2], f"{ours:.1f}", f"{d:+.1f}",
                         MISS_REASONS["nk"] if miss else ""])
        for other in ("SD", "SILP"):
            ths = 100 * (1 - th["Level"][0] / th[other][0])
            ours = np.mean([100 * (1 - r["Level"]["cpu"] / r[other]["cpu"]) for r in runs])
            d = ours - ths
            it_level = np.mean([r["Level"]["iter"] for r in runs])
            it_other = np.mean([r[other]["iter"] for r in runs])
            ms_level = 1e3 * np.mean([r["Level"]["cpu"] / r["Level"]["iter"] for r in runs])
            ms_other = 1e3 * np.mean([r[other]["cpu"] / r[other]["iter"] for r in runs])
            why = MISS_REASONS[other].format(
                th=th[other][0], th_it=th[other][0] / 500, it_level=it_level,
                it_other=it_other, ms_level=ms_level,
                ms_other=ms_other,
                sd_nc=f"{sum(not r['SD']['conv'] for r in runs)}/{len(runs)}")
            rows.append(["", f"Level's time saving vs {other} (%, CPU)", f"{ths:.1f}",
                         f"{ours:.1f}", f"{d:+.1f}", why if d < -15.0 else ""])
    return ("Per row of Tables 4.1-4.2: the thesis's number, ours (mean over the splits), the "
            "difference, and the reason where the row misses (accuracy off by more than 2 pt; "
            "#kernels off by more than max(3, 30 %); a time saving more than 15 pt below the "
            "thesis's; a larger saving than the thesis's is not a miss).  The thesis's "
            "absolute seconds (MATLAB, 2009 hardware) are not comparable with ours, so time "
            "is compared through the level method's saving, the quantity of Table 4.2.\n\n"
            + table(["data", "row", "thesis", "ours", "difference", "reason (misses only)"],
                    rows))


def time_level(args, root):
    """Absolute time of the level method per Table 4.1 problem (split 0): bank + solver."""
    rows = []
    for name in args.datasets.split(","):
        X, y = load(name, root)
        Xtr, ytr, Xte, yte = split(X, y, 0)
        specs = check_kernel_specs(simplemkl_kernels(Xtr.shape[1]), Xtr.shape[1])
        best = None
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            bank = KernelBank.from_specs(specs, Xtr)
            t1 = time.perf_counter()
            res = level_mkl(MKLProblem(bank, ytr, 100.0), tol=args.tol, max_iter=500)
            t2, c2 = time.perf_counter(), time.process_time()
            cur = (t2 - t0, c2 - c0, t1 - t0, t2 - t1)
            best = cur if best is None or cur[0] < best[0] else best
        rows.append([name, ytr.size, bank.n_kernels, f"{best[2]:.3f}", f"{best[3]:.3f}",
                     f"{best[0]:.3f}", f"{best[1]:.3f}", res.n_iter,
                     f"{'yes' if best[0] < 2.0 else 'NO'} / {'yes' if best[1] < 2.0 else 'NO'}"])
    report(args.name, "Level method MKL: absolute time per Table 4.1 problem (split 0, "
           f"best of {args.repeat})",
           [f"Load (1-min average) at the end: {os.getloadavg()[0]:.2f} on "
            f"{os.cpu_count()} cores: on a busy machine the wall time is inflated by the "
            "load and the process CPU time is the better estimate of the idle wall time "
            "(single-threaded).  Numba is warmed up first; the time includes building "
            "the SimpleMKL bank.",
            table(["data", "n", "m", "bank s", "level s", "total s (wall)", "total s (CPU)",
                   "iterations", "< 2 s (wall / CPU)"], rows)])


def c_auto(args, root):
    """``C='auto'`` (labeled-only CV over ``C_GRID``) against the thesis's fixed C = 100."""
    from semisup.mkl import MultipleKernelSVC
    from semisup.mkl.estimator import C_GRID

    rows = []
    with Contention() as busy:
        for name in args.datasets.split(","):
            X, y = load(name, root)
            for seed in range(args.splits):
                Xtr, ytr, Xte, yte = split(X, y, seed)
                specs = check_kernel_specs(simplemkl_kernels(Xtr.shape[1]), Xtr.shape[1])
                ytr01, yte01 = (ytr > 0).astype(int), (yte > 0).astype(int)
                out = [name, seed]
                for C in (100.0, "auto"):
                    c0 = time.process_time()
                    clf = MultipleKernelSVC(kernels=specs, C=C, tol=args.tol).fit(Xtr, ytr01)
                    out += [f"{clf.C_:g}", f"{100 * clf.score(Xte, yte01):.1f}",
                            f"{time.process_time() - c0:.1f}"]
                rows.append(out)
                print(*out, flush=True)
    report(args.name, "MKL: C chosen by labeled-only CV (C='auto') against C = 100",
           [f"Level method, SimpleMKL bank, the splits of Table 4.1 (seeds 0..{args.splits - 1}"
            f"), tol = {args.tol}.  C='auto': 5-fold stratified CV over the training half "
            f"(semisup.model_selection.select_parameter), grid {list(C_GRID)}; the test half "
            f"is never seen.  {busy.line()}",
            table(["data", "split", "C", "acc % (C = 100)", "CPU s", "C chosen",
                   "acc % (C='auto')", "CPU s (CV + refit)"], rows)])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--datasets", default=",".join(THESIS))
    ap.add_argument("--solvers", default="SD,SILP,Level")
    ap.add_argument("--tol", type=float, default=0.01)
    ap.add_argument("--runs", default=str(RESULTS_DIR / "mkl_runs.jsonl"),
                    help="JSON-lines file the runs are appended to (--report: several, "
                    "comma-separated)")
    ap.add_argument("--minutes", type=float, default=None,
                    help="stop starting new splits after this many minutes")
    ap.add_argument("--report", action="store_true", help="only write the tables")
    ap.add_argument("--time-level", action="store_true",
                    help="absolute time of the level method per problem")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--c-auto", action="store_true",
                    help="C='auto' against C = 100 on --splits splits of --datasets")
    ap.add_argument("--plot", default=None, help="data set for the weight-trajectory plot")
    ap.add_argument("--name", default=None)
    args = ap.parse_args(argv)
    root = shared_data_dir()
    if root is None:
        raise SystemExit("shared data not found (set SEMISUP_DATA)")
    solvers = args.solvers.split(",")
    if args.plot:
        args.name = args.name or "mkl_weights"
        return plot(args, root)
    if args.c_auto:
        args.name = args.name or "mkl_c_auto"
        _warm_up()
        return c_auto(args, root)
    if args.time_level:
        args.name = args.name or "mkl_level_time"
        _warm_up()
        return time_level(args, root)
    args.name = args.name or "mkl"
    if not args.report:
        _warm_up()
        run(args, root, solvers)
    make_report(args, solvers)


def _warm_up():
    """Compile the numba SMO outside the timings."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    specs = check_kernel_specs(simplemkl_kernels(2), 2)
    level_mkl(MKLProblem(KernelBank.from_specs(specs, X), np.sign(X[:, 0] + 1e-9), 1.0))


def plot(args, root):
    """Fig. 4.3: the kernel weights of the three solvers along their iterations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    name = args.plot
    X, y = load(name, root)
    _warm_up()
    r = run_split(name, X, y, 0, list(SOLVERS), args.tol, record=True)
    # the kernels that matter to any solver: largest final weight over the three
    finals = np.array([r[s]["trace"]["weights"][-1] for s in SOLVERS])
    top = np.argsort(finals.max(axis=0))[::-1][:6]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), sharey=True)
    rows = []
    for ax, s in zip(axes, SOLVERS, strict=True):
        W = np.array(r[s]["trace"]["weights"])
        for k in top:
            ax.plot(np.arange(1, W.shape[0] + 1), W[:, k], lw=1.2, label=f"kernel {k}")
        ax.set_title(f"{s} ({W.shape[0]} iterations)")
        ax.set_xlabel("iteration")
        step = np.abs(np.diff(W, axis=0)).sum(axis=1) if W.shape[0] > 1 else np.zeros(1)
        rows.append([s, W.shape[0], f"{step.mean():.3f}", f"{step.max():.3f}",
                     f"{r[s]['time']:.2f}", f"{r[s]['cpu']:.2f}", f"{r[s]['obj']:.2f}",
                     f"{r[s]['acc']:.1f}"])
    axes[0].set_ylabel("kernel weight")
    axes[-1].legend(fontsize=7, loc="upper right")
    fig.suptitle(f"Kernel weight trajectories on {name}, split 0, the 6 kernels with the "
                 "largest final weight (Fig. 4.3)")
    fig.tight_layout()
    path = RESULTS_DIR / f"mkl_weights_{name}.png"
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    report(args.name, f"Kernel weight trajectories of SD, SILP and level on {name} (Fig. 4.3)",
           [f"Figure: `benchmarks/results/{path.name}`.  Load {os.getloadavg()[0]:.1f}.",
            table(["solver", "iterations", "mean L1 step of p", "max L1 step of p",
                   "time s (wall)", "time s (CPU)", "objective", "acc %"], rows)])


if __name__ == "__main__":
    main()
