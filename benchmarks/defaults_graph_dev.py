"""Development runs of the graph/kernel family's defaults (issue 26) against SVC.

Like ``benchmarks/defaults_dev.py`` (the benchmark's measure in-process: accuracy on the
unlabeled rows of one official split, ``random_state=0``), but against the counterpart that
``benchmarks/bench_defaults.py`` gives LapRLS, LapSVM and the propagation methods --
scikit-learn's ``SVC()`` on the same labeled rows -- and for several candidate settings in
one process (each ``--params`` string is one candidate; the data are loaded once).  Prints
one line per cell and candidate (with ``gamma_I_`` when the fit chose it) and, per
candidate, the cells at ``>= SVC - 1`` point, the mean gain over SVC and the median CPU
seconds of a fit.  Results: ``benchmarks/results/defaults_graph.md``.

Run::

    nice -n 5 python benchmarks/defaults_graph_dev.py LapRLS --split 2 \\
        --params '' 'gamma_I="auto"'
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import SSLBOOK, load_set, make_estimator  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("classifier")
    ap.add_argument("--sets", nargs="+", default=SSLBOOK)
    ap.add_argument("--labels", nargs="+", type=int, default=[10, 100])
    ap.add_argument("--split", type=int, default=2, help="official split (1 = the benchmark's)")
    ap.add_argument("--params", nargs="+", default=[""],
                    help="one keyword-argument string per candidate, e.g. 'gamma_I=0.0'")
    args = ap.parse_args()
    from sklearn.svm import SVC

    cands = [eval(f"dict({p})") for p in args.params]  # noqa: S307  (a developer's command)
    warnings.simplefilter("ignore")
    gains = [[] for _ in cands]
    cpus = [[] for _ in cands]
    for name in args.sets:
        d = load_set(name)
        for n_labeled in args.labels:
            lab = np.sort(np.asarray(d.official[n_labeled][args.split - 1]))
            unl = np.setdiff1d(np.arange(d.y.size), lab)
            y = np.full(d.y.size, -1)
            y[lab] = d.y[lab]
            svc = SVC().fit(d.X[lab], d.y[lab])
            acc_svc = 100 * np.mean(svc.predict(d.X[unl]) == d.y[unl])
            for c, params in enumerate(cands):
                t0 = time.process_time()
                est = make_estimator(args.classifier).set_params(**params).fit(d.X, y)
                cpu = time.process_time() - t0
                acc = 100 * np.mean(est.transduction_[unl] == d.y[unl])
                gains[c].append(acc - acc_svc)
                cpus[c].append(cpu)
                chosen = getattr(est, "gamma_I_", None)
                extra = f"  gamma_I_ {chosen:.3g}" if chosen is not None else ""
                print(f"{name:7s} {n_labeled:3d} split {args.split} [{args.params[c]}]  "
                      f"SVC {acc_svc:5.1f}  {args.classifier} {acc:5.1f}  "
                      f"gain {acc - acc_svc:+6.1f}{'  FAIL' if acc < acc_svc - 1 else ''}"
                      f"  cpu {cpu:.2f} s{extra}", flush=True)
    for c, p in enumerate(args.params):
        g = np.array(gains[c])
        print(f"{args.classifier} [{p}]: {np.sum(g >= -1)} of {g.size} cells >= SVC - 1 pt, "
              f"mean gain {g.mean():+.2f} pts, median cpu {np.median(cpus[c]):.2f} s")


if __name__ == "__main__":
    main()
