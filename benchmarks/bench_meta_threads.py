"""Self-, co-, tri-training and AutoClassifier defaults: BLAS team against one thread.

The wrappers fit many small base models (scikit-learn's ``LogisticRegression`` by default),
where OpenBLAS's thread team costs more than it brings
(:func:`semisup.solvers._kernels.narrow_data_threads`); so do the automatic classifier, on
its candidates, and MixtureSSL and SelfTaughtClassifier, with their guards.  Each of them
with its defaults
(``random_state=0``) on the multi-class sets of the benchmark of defaults with 2 labels per
class (draw 1 of ``bench_defaults``), two ways on an idle machine: the library's rule (one
thread on dense data of at most 512 features, and for the self-, co- and tri-training
wrappers over their default scikit-learn base model at any width: MNIST's 784 pixels) and
the rule switched off (the team).  One run each; wall and CPU seconds, and whether the
transductions are equal.

Run: ``python benchmarks/bench_meta_threads.py`` -> ``results/bench_meta_threads.md``
(about 10 minutes on 2 cores).
"""

from __future__ import annotations

import os
import sys
import time
import warnings

import numpy as np
from _common import report, semi_targets, table

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_defaults import load_set, make_estimator  # noqa: E402

SETS = ("coil", "segment", "dna", "satimage", "usps10", "mnist10")
WRAPPERS = ("SelfTraining", "CoTraining", "TriTraining", "AutoClassifier", "MixtureSSL",
            "SelfTaughtClassifier")


def _fit(name: str, X, y, rule: bool):
    from semisup.meta import self_training
    from semisup.solvers import _kernels

    saved = _kernels.NARROW_FEATURES
    _kernels.NARROW_FEATURES = saved if rule else -1
    if not rule:   # nor the wrappers' one thread over a scikit-learn base model
        self_training.narrow_data_threads = lambda X, small_fits=False: \
            _kernels.narrow_data_threads(X)
    try:
        t, c = time.perf_counter(), time.process_time()
        est = make_estimator(name).fit(X, y)
        return time.perf_counter() - t, time.process_time() - c, est.transduction_
    finally:
        _kernels.NARROW_FEATURES = saved
        self_training.narrow_data_threads = _kernels.narrow_data_threads


def main() -> None:
    warnings.simplefilter("ignore")
    rows = []
    for set_name in SETS:
        data = load_set(set_name)
        _, lab, unl = data.splits("2/class", 1)[0]
        y = semi_targets(data.y, lab)
        for name in WRAPPERS:
            team = _fit(name, data.X, y, rule=False)
            one = _fit(name, data.X, y, rule=True)
            rows.append([set_name, data.X.shape[1], data.n_classes, name, team[0], one[0],
                         one[0] / team[0], team[1], one[1],
                         f"{100 * np.mean(one[2][unl] == data.y[unl]):.1f}",
                         bool(np.array_equal(team[2], one[2]))])
            print(rows[-1], flush=True)
    r = np.array([row[6] for row in rows])
    summary = (f"Wall time, the library's rule against the team: median {np.median(r):.2f}x, "
               f"range {r.min():.2f}-{r.max():.2f}x over {len(rows)} fits.")
    head = ["set", "features", "classes", "wrapper", "wall, team (s)", "wall, rule (s)",
            "rule / team", "CPU, team (s)", "CPU, rule (s)", "accuracy %",
            "same transduction"]
    report("bench_meta_threads", "Self-, co-, tri-training and the automatic classifier: "
           "BLAS team against the library's thread rule (idle machine)",
           [summary, table(head, rows)])


if __name__ == "__main__":
    main()
