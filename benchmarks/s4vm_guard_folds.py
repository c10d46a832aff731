"""S4VM's guard: fold fits with 30 local searches against the default 100 (issue 26).

For each (set, labels) cell of one split: the guard's decision (``fallback_``), its margin
score gain, and the CPU seconds of the whole guarded fit, with the folds' fits at
``GUARD_FOLD_CANDIDATES`` local searches (the library's) and at ``n_candidates`` (100, the
final fit's).  Prints a markdown table and the number of cells where the two decide alike.

Run::

    python benchmarks/s4vm_guard_folds.py --split 3
    python benchmarks/s4vm_guard_folds.py --sets uci ida --split 4
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import GROUPS, load_set  # noqa: E402


def main() -> None:
    from semisup import S4VM

    class FullFolds(S4VM):
        """The guard's folds at the final fit's ``n_candidates``."""

        def _guard_fold_params(self, X) -> dict:
            return {}

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="+", default=["sslbook"])
    ap.add_argument("--split", type=int, default=3)
    args = ap.parse_args()
    names = [n for g in args.sets for n in GROUPS.get(g, [g])]
    print(f"Split {args.split}.\n")
    print("| set | labels | fell back (100 / 30) | gain (100 / 30) | CPU s (100 / 30) |")
    print("|---|---|---|---|---|")
    agree = total = 0
    cpu = [0.0, 0.0]
    for name in names:
        ds = load_set(name)
        for n_labeled in (10, 100):
            _, _, y = ds.official_split(n_labeled, args.split)
            out = []
            for i, cls in enumerate((FullFolds, S4VM)):
                t0 = time.process_time()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    model = cls(random_state=0).fit(ds.X, y)
                spent = time.process_time() - t0
                cpu[i] += spent
                gain = "-" if model.cv_scores_ is None else f"{model.cv_scores_['gain']:+.3f}"
                out.append((model.fallback_, gain, spent))
            total += 1
            agree += out[0][0] == out[1][0]
            print(f"| {name} | {n_labeled} | {out[0][0]} / {out[1][0]} | {out[0][1]} / "
                  f"{out[1][1]} | {out[0][2]:.1f} / {out[1][2]:.1f} |", flush=True)
    print(f"\nSame decision on {agree} of {total} cells; CPU {cpu[0]:.0f} s with 100-search "
          f"folds, {cpu[1]:.0f} s with 30.")


if __name__ == "__main__":
    main()
