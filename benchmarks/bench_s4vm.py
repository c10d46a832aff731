"""S4VM vs TSVM vs the supervised SVM on the SSL-book sets: is S4VM ever worse than the SVM?

Li & Zhou (TPAMI 2015) claim that S4VM is never significantly worse than the supervised SVM,
where the TSVM sometimes is.  This script checks that claim on the SSL book's benchmark sets
(Chapelle, Schoelkopf & Zien, ch. 21; official splits, accuracy on the unlabeled rows of each
split, the transductive protocol), 10 and 100 labels.

Protocol (no hyper-parameter looks at the labels of the unlabeled rows):

* One feature map per set, shared by the three methods: the RBF empirical kernel map of
  all 1,500 rows (``semisup.linear.s4vm.kernel_feature_map``; the paper's width, ``sigma`` =
  mean distance; the leading ``--n-components`` eigenpairs), the raw tf-idf rows for
  ``text`` (linear kernel).  ``S4VM(kernel='linear')`` on the map is
  ``S4VM(kernel='rbf', n_components=...)`` on ``X``; the map is computed once per set.
* S4VM: the paper's defaults (``C1 = 100``, ``C2 = 0.1``, ``lam = 3``, 100 local searches,
  10 separators, ``beta = 0.1``), ``random_state`` = split number.
* SVM: ``semisup.L2SVM(lam=1/C1)`` on the labeled rows: S4VM's own baseline (same
  objective, squared hinge).
* TSVM: ``semisup.TransductiveSVM`` with the objective of S4VM's separators
  (``lam = 1/(C1 l)``, ``lam_u = C2 u / (C1 l)``; positive fraction from the labeled rows).
* Paired t-test (as the paper) over the splits run, S4VM vs SVM and TSVM vs SVM; "worse"
  means significantly worse at the 5% level.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import PeakRSS, add_thread_arg, apply_threads, report, table  # noqa: E402

from semisup import L2SVM, S4VM, TransductiveSVM  # noqa: E402
from semisup.datasets import load_sslbook, partial_labels  # noqa: E402
from semisup.linear.s4vm import kernel_feature_map, mean_distance_gamma  # noqa: E402

SETS = ("g241c", "g241d", "digit1", "usps", "bci", "text")
C1, C2 = 100.0, 0.1


def features(name: str, X, n_components: int):
    if name == "text":
        return X, 0.0
    t0 = time.perf_counter()
    phi, _ = kernel_feature_map(X, mean_distance_gamma(X), n_components)
    return phi, time.perf_counter() - t0


def run_split(phi, y_true, labeled, seed: int) -> dict:
    y = partial_labels(y_true, labeled, classes=np.unique(y_true))
    truth = np.searchsorted(np.unique(y_true), y_true)
    unl = np.flatnonzero(y == -1)
    l, u = labeled.size, unl.size
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        svm = L2SVM(lam=1.0 / C1, solver="mfn").fit(phi[labeled], y[labeled])
        out["SVM"] = (np.mean(svm.predict(phi[unl]) == truth[unl]), time.perf_counter() - t0)
        t0 = time.perf_counter()
        tsvm = TransductiveSVM(lam=1.0 / (C1 * l), lam_u=C2 * u / (C1 * l)).fit(phi, y)
        out["TSVM"] = (np.mean(tsvm.transduction_[unl] == truth[unl]),
                       time.perf_counter() - t0)
        t0 = time.perf_counter()
        with PeakRSS() as mem:
            s4 = S4VM(kernel="linear", C1=C1, C2=C2, random_state=seed,
                      fallback="none").fit(phi, y)
        out["S4VM"] = (np.mean(s4.transduction_[unl] == truth[unl]), time.perf_counter() - t0)
    out["peak_mib"] = (mem.peak - mem.start) / 2**20
    out["fallback"] = bool(s4.svm_labels_kept_.all())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=list(SETS))
    ap.add_argument("--labels", nargs="+", type=int, default=[10, 100])
    ap.add_argument("--splits", type=int, default=10, help="first N of the 12 official splits")
    ap.add_argument("--text-splits", type=int, default=3,
                    help="splits for text (its sparse S4VM fits take ~1 min each)")
    ap.add_argument("--n-components", type=int, default=100)
    ap.add_argument("--name", default="s4vm")
    add_thread_arg(ap)
    args = ap.parse_args()
    _, threads = apply_threads(args)
    rows, detail = [], []
    worse = {"S4VM": 0, "TSVM": 0}
    for name in args.sets:
        phi_cache = None
        for n_labeled in args.labels:
            b = load_sslbook(name, n_labeled)
            if phi_cache is None:
                phi_cache = features(name, b.X, args.n_components)
            phi, t_map = phi_cache
            res = []
            n_splits = args.text_splits if name == "text" else args.splits
            for s in range(min(n_splits, len(b.splits))):
                r = run_split(phi, b.y, np.asarray(b.splits[s]), s)
                res.append(r)
                print(f"{name} l={n_labeled} split {s}: " + ", ".join(
                    f"{k} {r[k][0]:.3f} ({r[k][1]:.1f}s)" for k in ("SVM", "TSVM", "S4VM")),
                    flush=True)
            acc = {k: np.array([r[k][0] for r in res]) for k in ("SVM", "TSVM", "S4VM")}
            sec = {k: np.mean([r[k][1] for r in res]) for k in ("SVM", "TSVM", "S4VM")}
            verdict = {}
            for k in ("TSVM", "S4VM"):
                diff = acc[k] - acc["SVM"]
                p = stats.ttest_rel(acc[k], acc["SVM"]).pvalue if np.any(diff != 0) \
                    and len(diff) > 1 else 1.0
                p = 1.0 if not np.isfinite(p) else float(p)
                tag = "worse" if p < 0.05 and diff.mean() < 0 else \
                    ("better" if p < 0.05 else "tie")
                worse[k] += tag == "worse"
                verdict[k] = f"{100 * diff.mean():+.1f} ({tag}, p={p:.2g})"
            rows.append([name, n_labeled, len(res),
                         f"{100 * acc['SVM'].mean():.1f}",
                         f"{100 * acc['TSVM'].mean():.1f}", verdict["TSVM"],
                         f"{100 * acc['S4VM'].mean():.1f}", verdict["S4VM"],
                         f"{sec['S4VM'] / sec['TSVM']:.1f}x / {sec['S4VM'] / sec['SVM']:.0f}x",
                         f"{np.max([r['peak_mib'] for r in res]):.0f}",
                         sum(r["fallback"] for r in res)])
            detail.append(f"{name} (l={n_labeled}): feature map {t_map:.1f} s once per set; "
                          f"mean fit time SVM {sec['SVM']:.2f} s, TSVM {sec['TSVM']:.2f} s, "
                          f"S4VM {sec['S4VM']:.2f} s")
    headers = ["set", "labels", "splits", "SVM acc %", "TSVM acc %", "TSVM - SVM (pts)",
               "S4VM acc %", "S4VM - SVM (pts)", "S4VM time / TSVM / SVM",
               "S4VM peak MiB", "S4VM fell back to SVM"]
    summary = (f"Significantly worse than the SVM (paired t-test, 5%) on: TSVM "
               f"{worse['TSVM']} of {len(rows)} (set, labels) cases, S4VM {worse['S4VM']} "
               f"of {len(rows)}.")
    report(args.name, "S4VM vs TSVM vs SVM on the SSL-book sets",
           [__doc__.split("\n\n", 1)[1].strip(), threads,
            f"Splits: the first {args.splits} of the 12 official splits of each set (text: "
            f"the first {args.text_splits}); RBF map rank {args.n_components}.", summary,
            table(headers, rows),
            "\n".join(f"- {d}" for d in detail)])


if __name__ == "__main__":
    main()
