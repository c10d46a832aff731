"""Development runs of issue 26's defaults on official splits other than the benchmark's.

``benchmarks/bench_defaults.py`` measures split 1 of each SSL-book set; defaults were chosen
on split 2 with this script (in-process, no timeout): for one classifier (its defaults,
``random_state=0`` where it has one, changed by ``--params``), accuracy on the unlabeled
rows against scikit-learn's ``LogisticRegression()`` on the same labeled rows, and CPU
seconds of the fit.  ``GaussianNBEM`` is a prototype, not a library class: naive Bayes EM
with Gaussian class-conditionals (diagonal variance pooled over the classes, Nigam et al.'s
EM with the multinomial replaced), used to judge whether ``SemiSupervisedNB`` should take
real-valued features.  Results: ``benchmarks/results/defaults_round3.md``.

Run::

    nice -n 5 python benchmarks/defaults_dev.py UniversumSVM --split 2
    nice -n 5 python benchmarks/defaults_dev.py UniversumSVM --params 'unlabeled="universum"'
    nice -n 5 python benchmarks/defaults_dev.py GaussianNBEM --split 2 --params 'lam_u=0.0'

``--counterpart svc`` scores against scikit-learn's ``SVC()`` instead, the counterpart
``bench_defaults.py`` gives the kernel and graph methods; several ``--params`` strings are
several candidates fitted in one process (data loaded once), each summarised with the
median CPU seconds of its fits and, where the fit chose it, ``gamma_I_``
(``benchmarks/results/defaults_graph.md``)::

    nice -n 5 python benchmarks/defaults_dev.py LapRLS --split 2 --counterpart svc \\
        --params '' 'gamma_I="auto"'

On the small UCI and IDA sets (``--sets uci ida``), which have no official splits,
``--split s`` is the stratified draw of seed ``s``; the benchmark uses seeds 1 and 2, so
develop on 3 and up (``benchmarks/results/s4vm_defaults.md``)::

    nice -n 5 python benchmarks/defaults_dev.py S4VM --sets uci ida --split 3 \\
        --counterpart svc --params 'C1=100.0, gamma="mean_distance"' ''
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import GROUPS, SSLBOOK, load_set, make_estimator  # noqa: E402


def gaussian_nb_em(X_l, y_l, X_u, n_classes: int, lam_u: float = 1.0,
                   max_iter: int = 100) -> np.ndarray:
    """Class posteriors of the unlabeled rows under a Gaussian naive Bayes EM (prototype)."""
    R_l, R_u, prev = np.eye(n_classes)[y_l], None, -np.inf
    spread = np.var(np.r_[X_l, X_u], axis=0)
    for _ in range(max_iter):
        W = R_l.sum(0) + (lam_u * R_u.sum(0) if R_u is not None else 0)
        S1 = R_l.T @ X_l + (lam_u * R_u.T @ X_u if R_u is not None else 0)
        S2 = R_l.T @ X_l ** 2 + (lam_u * R_u.T @ X_u ** 2 if R_u is not None else 0)
        mu = S1 / W[:, None]
        var = ((S2 / W[:, None] - mu ** 2) * W[:, None]).sum(0) / W.sum()
        var = np.maximum(var, 0) + 1e-9 * spread.max() + 1e-3 * spread  # variance floor
        log_w = np.log((W + 1) / (W.sum() + n_classes))
        L = (-0.5 * (((X_u[:, None, :] - mu[None]) ** 2) / var).sum(-1)
             - 0.5 * np.log(2 * np.pi * var).sum() + log_w[None])
        top = L.max(1, keepdims=True)
        P = np.exp(L - top)
        value = float((np.log(P.sum(1)) + top.ravel()).sum())
        R_u = P / P.sum(1, keepdims=True)
        if lam_u == 0 or value - prev < 1e-6 * abs(value):
            break
        prev = value
    return R_u


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("classifier")
    ap.add_argument("--sets", nargs="+", default=SSLBOOK,
                    help="set names or groups (sslbook, uci, ida)")
    ap.add_argument("--labels", nargs="+", type=int, default=[10, 100])
    ap.add_argument("--split", type=int, default=2,
                    help="official split (1 = the benchmark's); on the UCI and IDA sets the "
                         "stratified draw of that seed (1 and 2 are the benchmark's)")
    ap.add_argument("--params", nargs="+", default=[""],
                    help="keyword arguments, e.g. 'lam_u=0.1'; several strings: several "
                         "candidates")
    ap.add_argument("--counterpart", choices=["logreg", "svc"], default="logreg")
    args = ap.parse_args()
    cands = [eval(f"dict({p})") for p in args.params]  # noqa: S307  (a developer's command line)
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC

    ref_name, Ref = ("SVC", SVC) if args.counterpart == "svc" else ("LogReg", LogisticRegression)
    warnings.simplefilter("ignore")
    gains = [[] for _ in cands]
    cpus = [[] for _ in cands]
    names = [n for s in args.sets for n in GROUPS.get(s, [s])]
    for name in names:
        d = load_set(name)
        for n_labeled in args.labels:
            lab, unl, y = d.official_split(n_labeled, args.split)
            ref = Ref().fit(d.X[lab], d.y[lab])
            acc_ref = 100 * np.mean(ref.predict(d.X[unl]) == d.y[unl])
            for c, params in enumerate(cands):
                t0 = time.process_time()
                chosen = None
                if args.classifier == "GaussianNBEM":
                    X = np.asarray(d.X.toarray() if hasattr(d.X, "toarray") else d.X, float)
                    classes, y_l = np.unique(d.y[lab], return_inverse=True)
                    R = gaussian_nb_em(X[lab], y_l, X[unl], classes.size, **params)
                    pred = classes[R.argmax(1)]
                else:
                    est = make_estimator(args.classifier).set_params(**params).fit(d.X, y)
                    pred = est.transduction_[unl]
                    chosen = getattr(est, "gamma_I_", None)
                cpu = time.process_time() - t0
                acc = 100 * np.mean(pred == d.y[unl])
                gains[c].append(acc - acc_ref)
                cpus[c].append(cpu)
                tag = f" [{args.params[c]}]" if len(cands) > 1 else ""
                extra = f"  gamma_I_ {chosen:.3g}" if chosen is not None else ""
                print(f"{name:7s} {n_labeled:3d} split {args.split}{tag}  {ref_name} "
                      f"{acc_ref:5.1f}  {args.classifier} {acc:5.1f}  gain {acc - acc_ref:+6.1f}"
                      f"{'  below cp - 1' if acc < acc_ref - 1 else ''}  cpu {cpu:.2f} s"
                      f"{extra}", flush=True)
    for c, p in enumerate(args.params):
        g = np.array(gains[c])
        print(f"{args.classifier} {p}: {np.sum(g >= -1)} of {g.size} cells >= {ref_name} - 1 "
              f"pt, mean gain {g.mean():+.2f} pts, median cpu {np.median(cpus[c]):.2f} s")


if __name__ == "__main__":
    main()
