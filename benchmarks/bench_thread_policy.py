"""Parallel kernels on a busy machine: OpenMP's idle threads spinning (``active``) or asleep.

DA (``lam=1e-3, lam_u=1``) on SecStr 83,679 x 315 one-hot with 1,000 labels (SSL-book split 0),
each fit in a fresh subprocess whose ``OMP_WAIT_POLICY`` is ``active`` (spinning, what numba's
OpenMP runtime did before ``semisup._accel.import_numba``) or ``PASSIVE`` (the library's
default now); the two alternate run by run so that both see the same machine load.  The JIT is
warmed on a 3,000-row slice before the timed fit.  Run it while the machine is busy: on an
idle machine the two policies cost the same.

Usage: ``python benchmarks/bench_thread_policy.py [--repeat 2]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from _common import Contention, report, table

SRC = Path(__file__).resolve().parent.parent / "src"

CHILD = r"""
import json, time
import numpy as np
from semisup import DeterministicAnnealingSVM
from semisup.datasets import load_sslbook, one_hot_secstr, partial_labels
b = load_sslbook("secstr", 1000)
X = one_hot_secstr(b.X)
y = partial_labels(b.y, b.splits[0])
DeterministicAnnealingSVM(lam=1e-3, lam_u=1.0).fit(X[:3000], y[:3000])
t, c = time.perf_counter(), time.process_time()
m = DeterministicAnnealingSVM(lam=1e-3, lam_u=1.0).fit(X, y)
u = y == -1
print(json.dumps({"wall": time.perf_counter() - t, "cpu": time.process_time() - c,
                  "acc": 100 * float(np.mean(m.transduction_[u] == b.y[u]))}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    rows = []
    with Contention() as load:
        for rep in range(args.repeat):
            for policy in ("active", "PASSIVE"):
                env = {**os.environ, "PYTHONPATH": str(SRC), "OMP_WAIT_POLICY": policy}
                before = os.getloadavg()[0]
                out = subprocess.run([sys.executable, "-c", CHILD], env=env, check=True,
                                     capture_output=True, text=True).stdout
                r = json.loads(out.strip().splitlines()[-1])
                rows.append([rep + 1, policy, before, r["wall"], r["cpu"], r["acc"]])
                print(rows[-1], flush=True)
    walls = {p: min(r[3] for r in rows if r[1] == p) for p in ("active", "PASSIVE")}
    report("bench_thread_policy", "DA on SecStr 83k with the machine busy: OMP_WAIT_POLICY", [
        load.line(),
        table(["run", "OMP_WAIT_POLICY", "load avg before", "wall s", "CPU s",
               "unlabeled acc %"], rows),
        f"Best wall time, active / PASSIVE: {walls['active'] / walls['PASSIVE']:.2f}x.",
    ])


if __name__ == "__main__":
    main()
