"""USPS pairwise experiment (Belkin, Niyogi & Sindhwani, section 5.2, figure 4).

45 one-vs-one digit problems.  For each pair: the first 400 images of each digit in the
USPS training set (``../shared/data/usps/usps.h5``) form the training set (800 points),
one randomly chosen image of each digit is labeled (2 labels; the paper says "2 randomly
labeled" -- we force one per class so that every method can be trained), the other 798 are
unlabeled; the remaining training images of the two digits form the out-of-sample test set.
10 random labelings per pair.

Preprocessing: PCA to 100 dimensions (fitted on the 4,000 training images of the ten
digits, no labels), as the paper.  Kernel: polynomial of degree 3,
``(gamma <x, z> + 1)^3`` with ``gamma = 1 / mean ||x||^2`` (the paper does not give its
scaling; this keeps ``gamma <x, z>`` of order 1).  Graph: 6-NN, heat weights.
Regularisation exactly as the paper: RLS and SVM with ``gamma l = 0.05`` (``C = 10``), LapRLS
and LapSVM with ``gamma_A l = 0.005`` and ``gamma_I l / (u+l)^2 = 0.045``.  RLS is
scikit-learn's ``KernelRidge`` (``alpha = gamma l``), SVM scikit-learn's ``SVC``
(``C = 1 / (2 gamma l)``) on the two labeled points.

Metrics: as the paper, the error at the precision-recall breakeven point (``1 - PRBEP``,
positive class = the smaller digit; threshold such that as many points are predicted
positive as there are positives), and the error rate of the sign of ``f``; on the
unlabeled points (U) and on the test points (T).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.decomposition import PCA
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS_DIR, Contention, Timer, report, table  # noqa: E402

from semisup.datasets import shared_data_dir  # noqa: E402
from semisup.graph import GraphWarning, adjacency_graph  # noqa: E402
from semisup.kernels import kernel_matrix  # noqa: E402
from semisup.manifold import LapRLS, LapSVM  # noqa: E402

warnings.simplefilter("ignore", GraphWarning)

PER_DIGIT, N_LABELINGS = 400, 10
METHODS = ("RLS", "SVM", "LapRLS", "LapSVM")


def load_usps_train():
    """USPS training images (7291 x 256, pixels in [0, 1]) and digits; private loader
    (``semisup.datasets`` has no full-USPS loader yet)."""
    import h5py

    root = shared_data_dir()
    if root is None:
        raise FileNotFoundError("shared data directory not found (set SEMISUP_DATA)")
    with h5py.File(root / "usps" / "usps.h5", "r") as fh:
        return np.asarray(fh["train/data"], dtype=np.float64), np.asarray(fh["train/target"])


def prbep_error(scores: np.ndarray, positive: np.ndarray) -> float:
    """``1 - PRBEP``: top-``P`` scores predicted positive, ``P`` = number of positives."""
    P = int(positive.sum())
    if P == 0:
        return float("nan")
    top = np.argsort(-scores, kind="stable")[:P]
    return 1.0 - positive[top].mean()


def run_pair(Z, digits, a, b, rng, kparams):
    """Errors ``[method][metric]`` (lists over labelings) for digits ``a < b``."""
    idx_a, idx_b = np.flatnonzero(digits == a), np.flatnonzero(digits == b)
    train = np.r_[idx_a[:PER_DIGIT], idx_b[:PER_DIGIT]]
    test = np.r_[idx_a[PER_DIGIT:], idx_b[PER_DIGIT:]]
    X, Xt = Z[train], Z[test]
    y_true = (digits[train] == b).astype(int)          # class 1 = larger digit
    yt_true = (digits[test] == b).astype(int)
    n = X.shape[0]
    K = kernel_matrix(X, kernel="poly", **kparams)
    Kt = kernel_matrix(Xt, X, kernel="poly", **kparams)
    W = adjacency_graph(X, 6, warn=False)
    out = {m: {k: [] for k in ("err_U", "err_T", "bep_U", "bep_T")} for m in METHODS}
    times = {m: [] for m in METHODS}
    for _ in range(N_LABELINGS):
        lab = np.r_[rng.choice(PER_DIGIT), PER_DIGIT + rng.choice(PER_DIGIT)]
        unl = np.setdiff1d(np.arange(n), lab)
        y = np.full(n, -1)
        y[lab] = y_true[lab]
        l = lab.size
        preds = {}
        with Timer() as t:
            kr = KernelRidge(alpha=0.05, kernel="precomputed").fit(K[np.ix_(lab, lab)],
                                                                     np.where(y[lab] == 1, 1., -1.))
        times["RLS"].append(t.seconds)
        preds["RLS"] = (K[:, lab] @ kr.dual_coef_, Kt[:, lab] @ kr.dual_coef_)
        with Timer() as t:
            svc = SVC(kernel="precomputed", C=10.0).fit(K[np.ix_(lab, lab)],  # 1/(2 gamma l)
                                                                         y[lab])
        times["SVM"].append(t.seconds)
        preds["SVM"] = (svc.decision_function(K[:, lab]), svc.decision_function(Kt[:, lab]))
        for name, cls in (("LapRLS", LapRLS), ("LapSVM", LapSVM)):
            est = cls(gamma_A=0.005 / l, gamma_I=0.045 * n ** 2 / l, kernel="precomputed",
                      graph=W)
            with Timer() as t:
                est.fit(K, y)
            times[name].append(t.seconds)
            preds[name] = (est.training_scores_, est.decision_function(Kt))
        for m, (fU, fT) in preds.items():
            out[m]["err_U"].append(np.mean((fU[unl] > 0) != y_true[unl]))
            out[m]["err_T"].append(np.mean((fT > 0) != yt_true))
            # positive class of the PRBEP: the smaller digit a (label 0, score -f)
            out[m]["bep_U"].append(prbep_error(-fU[unl], y_true[unl] == 0))
            out[m]["bep_T"].append(prbep_error(-fT, yt_true == 0))
    return out, times


def figure(per_pair, pairs, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(17, 4.5))
    x = np.arange(len(pairs))
    for m, style in zip(METHODS, ("C0--", "C1--", "C0-", "C1-"), strict=True):
        axes[0].plot(x, [100 * np.mean(per_pair[p][m]["bep_U"]) for p in pairs], style,
                     label=m, marker=".")
    axes[0].set_xlabel("digit pair (0-1, 0-2, ..., 8-9)")
    axes[0].set_ylabel("1 - PRBEP on unlabeled points (%)")
    axes[0].legend()
    axes[0].set_title("Mean error at PR breakeven, 10 labelings")
    for ax, (m1, m2) in zip(axes[1:], (("SVM", "LapSVM"), ("RLS", "LapRLS")), strict=True):
        s1 = [100 * np.std(per_pair[p][m1]["bep_U"]) for p in pairs]
        s2 = [100 * np.std(per_pair[p][m2]["bep_U"]) for p in pairs]
        ax.scatter(s1, s2, s=14)
        top = max(max(s1), max(s2)) * 1.05
        ax.plot([0, top], [0, top], "k:")
        ax.set_xlabel(f"{m1}: std of 1 - PRBEP (%)")
        ax.set_ylabel(f"{m2}: std of 1 - PRBEP (%)")
        ax.set_title(f"Stability over labelings: {m2} vs {m1}")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=45, help="use the first N of the 45 pairs")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    Xall, digits = load_usps_train()
    pool = np.concatenate([np.flatnonzero(digits == d)[:PER_DIGIT] for d in range(10)])
    pca = PCA(100, random_state=0).fit(Xall[pool])
    Z = pca.transform(Xall)
    kparams = {"degree": 3, "coef0": 1.0,
               "gamma": 1.0 / float(np.mean(np.sum(Z[pool] ** 2, axis=1)))}
    rng = np.random.default_rng(args.seed)
    pairs = list(itertools.combinations(range(10), 2))[:args.pairs]
    per_pair, times = {}, {m: [] for m in METHODS}
    with Contention() as load_meter:
        for a, b in pairs:
            per_pair[(a, b)], t = run_pair(Z, digits, a, b, rng, kparams)
            for m in METHODS:
                times[m] += t[m]
            print(f"  pair {a}-{b}: " + ", ".join(
                f"{m} {100 * np.mean(per_pair[(a, b)][m]['err_U']):.1f}" for m in METHODS),
                file=sys.stderr, flush=True)

    def agg(m, key, fn=np.mean):
        return 100 * np.mean([fn(per_pair[p][m][key]) for p in pairs])

    rows = [[m, *(f"{agg(m, k):.1f}" for k in ("bep_U", "bep_T")),
             f"{agg(m, 'bep_U', np.std):.1f}",
             *(f"{agg(m, k):.1f}" for k in ("err_U", "err_T")), f"{agg(m, 'err_U', np.std):.1f}",
             f"{1e3 * np.median(times[m]):.1f}"] for m in METHODS]
    win_lines = []
    for key, label in (("bep_U", "1 - PRBEP"), ("err_U", "sign error")):
        for base, lap in (("RLS", "LapRLS"), ("SVM", "LapSVM")):
            better = sum(np.mean(per_pair[p][lap][key]) < np.mean(per_pair[p][base][key])
                         for p in pairs)
            stabler = sum(np.std(per_pair[p][lap][key]) < np.std(per_pair[p][base][key])
                          for p in pairs)
            win_lines.append(f"- {label}: {lap} lower mean than {base} on {better} of "
                             f"{len(pairs)} pairs, smaller std over labelings on {stabler}")
    worst = max(pairs, key=lambda p: np.mean(per_pair[p]["LapSVM"]["bep_U"]))
    png = RESULTS_DIR / "bench_usps_pairs.png"
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    figure(per_pair, pairs, png)
    sections = [
        __doc__.split("\n\n", 1)[1].strip(),
        f"{len(pairs)} pairs x {N_LABELINGS} labelings.  Kernel gamma = {kparams['gamma']:.4g}.",
        table(["method", "1-PRBEP % U", "1-PRBEP % T", "std of 1-PRBEP % (U)",
               "sign error % U", "sign error % T", "std of sign error % (U)",
               "fit ms (median)"], rows),
        "\n".join(win_lines),
        "The Laplacian methods rank the points almost perfectly (1-PRBEP, the paper's metric) "
        "but the threshold 0 of their scores is poor with 2 labels: the zero crossing of a "
        "graph-smooth function interpolating one point per class falls where the graph "
        "geometry puts it, not at the class boundary (the class-mass problem of harmonic "
        "solutions).  Because each training set is balanced (400 + 400) and the two labels "
        "give a prior of 1/2, thresholding the unlabeled scores at that prior (class mass "
        "normalisation) would give exactly the 1-PRBEP column on U.",
        f"Hardest pair for LapSVM: {worst[0]}-{worst[1]} "
        f"(1-PRBEP {100 * np.mean(per_pair[worst]['LapSVM']['bep_U']):.1f}% on U).  Per-pair "
        "figure: `benchmarks/results/bench_usps_pairs.png` (left: mean 1-PRBEP per pair; "
        "middle and right: its std over labelings, Laplacian vs inductive method, as figure 4 "
        "of the paper).",
        "Fit times: RLS/SVM solve a 2-point problem; LapRLS/LapSVM take the precomputed "
        "800 x 800 kernel and graph and pay one 800 x 800 LU solve.",
        load_meter.line(),
    ]
    report("bench_usps_pairs", "USPS 45 digit pairs: RLS/SVM vs LapRLS/LapSVM", sections)


if __name__ == "__main__":
    main()
