"""Multiple kernel learning: Tables 4.1 / 4.2 of Xu's thesis (SD = SimpleMKL, SILP, level).

Protocol (§4.3.1): random 50/50 train/test splits, features z-scored with the training
half's mean and deviation (constant features dropped), C = 100, the SimpleMKL bank
(Gaussians of widths 2^-3..2^6 and polynomials of degree 1-3 on all features and on each
single feature, unit trace: m = 13 (d + 1)).  The three solvers run on the same bank in the
same process, one after the other, with the same stopping rule (relative duality gap
< ``--tol``, or 500 iterations).  Time is the solver's time (the bank is shared and timed
separately, as "bank s"); accuracy on the test half; #kernels = weights > 1e-5.

Run ``python benchmarks/bench_mkl.py --splits 20`` (the thesis's protocol, hours on 2 busy
cores because of SILP) or fewer splits / a subset: ``--splits 2 --datasets heart,vote``.
``--plot heart`` also draws the weight trajectories of the three solvers (Fig. 4.3).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS_DIR, PeakRSS, report, table  # noqa: E402

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


def run_split(name, X, y, seed, solvers, tol, record=False):
    Xtr, ytr, Xte, yte = split(X, y, seed)
    specs = check_kernel_specs(simplemkl_kernels(Xtr.shape[1]), Xtr.shape[1])
    t0 = time.perf_counter()
    with PeakRSS() as mem:
        bank = KernelBank.from_specs(specs, Xtr)
    t_bank = time.perf_counter() - t0
    out = {"bank": t_bank, "m": bank.n_kernels, "n": ytr.size, "peak": mem.peak}
    for s in solvers:
        problem = MKLProblem(bank, ytr, 100.0)
        t0 = time.perf_counter()
        res = SOLVERS[s](problem, tol=tol, max_iter=500, record_weights=record)
        el = time.perf_counter() - t0
        p = res.weights.copy()
        p[p < 1e-5] = 0.0
        res.weights = p / p.sum()
        acc = np.mean(predict(specs, bank, res, ytr, Xtr, Xte) == yte)
        out[s] = {"time": el, "acc": 100 * acc, "nk": np.count_nonzero(res.weights),
                  "iter": res.n_iter, "svm": res.n_svm, "obj": res.objective,
                  "conv": res.converged, "trace": res.trace}
    return out


def ms(v):
    v = np.asarray(v, dtype=float)
    return f"{v.mean():.2f}±{v.std():.2f}" if v.size > 1 else f"{v.mean():.2f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--datasets", default=",".join(THESIS))
    ap.add_argument("--solvers", default="SD,SILP,Level")
    ap.add_argument("--tol", type=float, default=0.01)
    ap.add_argument("--plot", default=None, help="data set for the weight-trajectory plot")
    ap.add_argument("--name", default="mkl")
    args = ap.parse_args(argv)
    root = shared_data_dir()
    if root is None:
        raise SystemExit("shared data not found (set SEMISUP_DATA)")
    solvers = args.solvers.split(",")
    load0 = os.getloadavg()
    rows, ratio_rows, sections = [], [], []
    for name in args.datasets.split(","):
        X, y = load(name, root)
        runs = [run_split(name, X, y, seed, solvers, args.tol) for seed in range(args.splits)]
        n, m = runs[0]["n"], runs[0]["m"]
        tn, tm, th = THESIS[name]
        for metric, key in (("Time (s)", "time"), ("Acc (%)", "acc"), ("#Kernel", "nk"),
                            ("#SVM solves", "svm"), ("iterations", "iter")):
            row = [f"{name} ({n}, {m})" if key == "time" else "", metric]
            row += [ms([r[s][key] for r in runs]) for s in solvers]
            if key in ("time", "acc", "nk"):
                idx = {"time": 0, "acc": 1, "nk": 2}[key]
                row += [" / ".join(f"{th[s][idx]}" for s in solvers)]
            else:
                row += [""]
            rows.append(row)
        obj = {s: np.mean([r[s]["obj"] for r in runs]) for s in solvers}
        conv = {s: sum(r[s]["conv"] for r in runs) for s in solvers}
        rows.append(["", "objective (converged runs)"]
                    + [f"{obj[s]:.2f} ({conv[s]}/{len(runs)})" for s in solvers] + [""])
        rows.append(["", "bank s / peak RSS MiB", ms([r["bank"] for r in runs]),
                     f"{max(r['peak'] for r in runs) / 2**20:.0f}"] + [""] * (len(solvers) - 1))
        if "Level" in solvers:
            rr = [name]
            for other in ("SD", "SILP"):
                if other in solvers:
                    per_run = [100 * (1 - r["Level"]["time"] / r[other]["time"]) for r in runs]
                    rr.append(f"{np.mean(per_run):.1f}")
                else:
                    rr.append("-")
            thesis_ratio = [100 * (1 - th["Level"][0] / th[o][0]) for o in ("SD", "SILP")]
            rr += [f"{thesis_ratio[0]:.1f}", f"{thesis_ratio[1]:.1f}"]
            ratio_rows.append(rr)
        print(table(["data (n, m)", "metric", *solvers, "thesis " + "/".join(solvers)],
                    rows[-7:]), flush=True)
    load1 = os.getloadavg()
    sections.append(f"{args.splits} random 50/50 splits per data set, C = 100, tol = "
                    f"{args.tol} (relative duality gap), max 500 iterations. Machine load "
                    f"(1-min average) {load0[0]:.1f} at the start, {load1[0]:.1f} at the end "
                    "(2 cores shared with other jobs: compare times within a row only).")
    sections.append(table(["data (n, m)", "metric", *solvers,
                           "thesis " + " / ".join(solvers)], rows))
    if ratio_rows:
        avg = ["average"]
        for j in (1, 2):
            vals = [float(r[j]) for r in ratio_rows if r[j] != "-"]
            avg.append(f"{np.mean(vals):.1f}" if vals else "-")
        avg += [f"{np.mean([float(r[3]) for r in ratio_rows]):.1f}",
                f"{np.mean([float(r[4]) for r in ratio_rows]):.1f}"]
        sections.append("Time saving of the level method, 1 - T_level / T_other (%), mean "
                        "of per-split ratios (Table 4.2):\n\n" + table(
                            ["data", "Level/SD", "Level/SILP", "thesis Level/SD",
                             "thesis Level/SILP"], ratio_rows + [avg]))
    if args.plot:
        sections.append(plot(args.plot, root, args.tol))
    report(args.name, "Multiple kernel learning: SimpleMKL (SD), SILP and the level method "
           "(Xu's thesis Tables 4.1-4.2)", sections)


def plot(name, root, tol):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X, y = load(name, root)
    r = run_split(name, X, y, 0, list(SOLVERS), tol, record=True)
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), sharey=True)
    for ax, s in zip(axes, SOLVERS, strict=True):
        W = np.array(r[s]["trace"]["weights"])
        top = np.argsort(W[-1])[::-1][:6]
        for k in top:
            ax.plot(np.arange(1, W.shape[0] + 1), W[:, k], lw=1.2)
        ax.set_title(f"{s} ({W.shape[0]} iterations)")
        ax.set_xlabel("iteration")
    axes[0].set_ylabel("kernel weight (6 largest at the end)")
    fig.suptitle(f"Kernel weight trajectories on {name}, split 0 (Fig. 4.3)")
    fig.tight_layout()
    path = RESULTS_DIR / f"mkl_weights_{name}.png"
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return f"Weight trajectories: `{path.relative_to(RESULTS_DIR.parent.parent)}`."


if __name__ == "__main__":
    main()
