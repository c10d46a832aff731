"""Start-up: ``import semisup``, ``semisup-svmlin -A 2`` on SVMlin's bundled pcmac example and
``semisup fit`` / ``semisup predict`` (TransductiveSVM) on a 60-row SVMlight file.

Each command runs in a fresh interpreter; wall and CPU (user + system, of the child) seconds
are reported, the first run separately (it pays an empty numba cache where there is one: the
numba cache files of the tree are deleted before it) and the best of the following runs.
CPU seconds are much less sensitive than wall seconds to the other processes of a shared
machine.  ``--baseline-src DIR`` measures a second source tree in the same run, interleaved.

Usage: ``python benchmarks/bench_startup.py [--baseline-src DIR] [--repeat 5] [--name NAME]``
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import Contention, report, table

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
PCMAC = Path(os.environ.get("SEMISUP_DATA", HERE.parent.parent / "shared" / "data")) \
    / "svmlin_example_pcmac"


def timed(cmd: list[str], src: Path) -> tuple[float, float]:
    """Wall and CPU seconds of ``cmd`` run with ``PYTHONPATH=src``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def clear_numba_cache(src: Path) -> None:
    for pattern in ("*.nbi", "*.nbc"):
        for f in src.rglob(pattern):
            f.unlink()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", type=Path, default=SRC, help="source tree measured (default: this "
                    "checkout's; its numba cache files are deleted)")
    ap.add_argument("--baseline-src", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--name", default="bench_startup", help="results file name")
    args = ap.parse_args()
    out = tempfile.mkdtemp()
    small, model, pred = (os.path.join(out, n) for n in ("small.svm", "small.model", "pred"))
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    y = np.where(X[:, 0] > 0, 1, -1)
    y[10:] = 0  # 10 labeled rows, 50 unlabeled
    from semisup import io

    io.write_svmlight(small, X, y)
    cli = [sys.executable, "-m", "semisup.cli.svmlin", "-A", "2", "-W", "0.001", "-U", "1",
           "-R", "0.5", "-o", out, str(PCMAC / "training_examples"),
           str(PCMAC / "training_labels")]
    commands = {"python -c pass": [sys.executable, "-c", "pass"],
                "python -c 'import semisup'": [sys.executable, "-c", "import semisup"],
                "semisup-svmlin -A 2 -W 0.001 -U 1 -R 0.5 (pcmac)": cli,
                "semisup fit TransductiveSVM (60 rows)": [
                    sys.executable, "-m", "semisup.cli.main", "fit", "TransductiveSVM", small,
                    "-m", model],
                "semisup predict (60 rows)": [sys.executable, "-m", "semisup.cli.main",
                                              "predict", model, small, "-o", pred]}
    trees = [("this branch", args.src)]
    if args.baseline_src:
        trees.append(("baseline", args.baseline_src))
    first, best = {}, {}
    with Contention() as load:
        for _, src in trees:
            clear_numba_cache(src)
        for rep in range(args.repeat + 1):
            for tree, src in trees:
                for what, cmd in commands.items():
                    w, c = timed(cmd, src)
                    key = (what, tree)
                    if rep == 0:
                        first[key] = (w, c)
                    else:
                        bw, bc = best.get(key, (float("inf"), float("inf")))
                        best[key] = (min(bw, w), min(bc, c))
    rows = [[what, tree, *first[(what, tree)], *best[(what, tree)]]
            for what in commands for tree, _ in trees]
    report(args.name, "Start-up: import and the SVMlin command line on pcmac", [
        load.line(),
        f"First run (empty numba cache) and best of {args.repeat} further runs; seconds.",
        table(["command", "source", "first wall", "first CPU", "best wall", "best CPU"], rows)])


if __name__ == "__main__":
    main()
