"""DA's guard: fold fits at its own tolerances or at ``GUARD_FOLD_TOL`` (issue 26).

For every cell (set, labels, split), ``DeterministicAnnealingSVM()`` (its guard on) is
fitted twice in one process: with the guard's semi-supervised fold fits at the estimator's
own ``tol`` and ``kl_tol`` (1e-6, the former behaviour) and at ``GUARD_FOLD_TOL``; reported:
the guard's decision (keep / fall back), its estimated gain, accuracy on the unlabeled rows
and CPU seconds of the whole fit.

Run::

    nice -n 5 python benchmarks/da_guard_tol.py --sets sslbook --split 2
    nice -n 5 python benchmarks/da_guard_tol.py --sets dna satimage segment usps10 --split 3
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import GROUPS, load_set  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", nargs="+", default=["sslbook"])
    ap.add_argument("--labels", nargs="+", type=int, default=[10, 100])
    ap.add_argument("--split", type=int, default=2)
    args = ap.parse_args()
    from semisup import DeterministicAnnealingSVM
    from semisup.linear import _core

    warnings.simplefilter("ignore")
    loose = _core.DeterministicAnnealingSVM._guard_fold_params
    modes = {"own tolerances": lambda self: {}, "GUARD_FOLD_TOL": loose}
    same, cells, cpu = 0, 0, {m: 0.0 for m in modes}
    print("| set | labels | fold fits | decision | gain (se) | accuracy % | CPU (s) |")
    print("|---|---|---|---|---|---|---|")
    for name in [n for s in args.sets for n in GROUPS.get(s, [s])]:
        d = load_set(name)
        for n_labeled in args.labels:
            lab, unl, y = d.official_split(n_labeled, args.split)
            decisions = []
            for mode, hook in modes.items():
                _core.DeterministicAnnealingSVM._guard_fold_params = hook
                t0 = time.process_time()
                est = DeterministicAnnealingSVM().fit(d.X, y)
                seconds = time.process_time() - t0
                cpu[mode] += seconds
                cv = est.cv_scores_
                decision = "none" if cv is None else ("keep" if cv["keep"] else "fallback")
                gain = "-" if cv is None else f"{cv['gain']:+.3f} ({cv['gain_se']:.3f})"
                decisions.append(decision)
                acc = 100 * np.mean(est.transduction_[unl] == d.y[unl])
                print(f"| {name} | {n_labeled} | {mode} | {decision} | {gain} | {acc:.1f} | "
                      f"{seconds:.1f} |", flush=True)
            cells += 1
            same += decisions[0] == decisions[1]
    _core.DeterministicAnnealingSVM._guard_fold_params = loose
    print(f"\nSame decision on {same} of {cells} cells; CPU in all: "
          + ", ".join(f"{m} {v:.1f} s" for m, v in cpu.items()))


if __name__ == "__main__":
    main()
