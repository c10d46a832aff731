"""Start-up: ``import semisup``, ``semisup-svmlin -A 2`` on SVMlin's bundled pcmac example and
``semisup fit`` / ``semisup predict`` on a 60-row SVMlight file (TransductiveSVM and L2SVM,
which the command line fits without scikit-learn, and TSVM with ``probability=True``, which
goes through the estimator; the linear regressor; a malformed file), side by side with
``python -c pass`` and ``python -c 'import sklearn.base'`` in the same run.

Each command runs in a fresh interpreter; wall and CPU (user + system, of the child) seconds
are reported: the first run separately (it pays an empty numba cache where there is one: the
numba cache files of the tree are deleted before it), then the best and the median of the
following runs.  CPU seconds are much less sensitive than wall seconds to the other processes
of a shared machine.  ``--baseline-src DIR`` measures a second source tree in the same run,
interleaved (e.g. ``git archive HEAD src | tar -x -C /tmp/base``); a command the baseline
cannot run (a regressor before the command line had them) is reported as failing.

Usage: ``python benchmarks/bench_startup.py [--baseline-src DIR [--baseline-label TEXT]]
[--repeat 5] [--name NAME]``
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
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


def timed(cmd: list[str], src: Path, ok_codes: tuple[int, ...]) -> tuple[float, float] | None:
    """Wall and CPU seconds of ``cmd`` run with ``PYTHONPATH=src``; None when it exits with
    a status outside ``ok_codes``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    rc = subprocess.run(cmd, env=env, capture_output=True).returncode
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return (wall, cpu) if rc in ok_codes else None


def clear_numba_cache(src: Path) -> None:
    for pattern in ("*.nbi", "*.nbc"):
        for f in src.rglob(pattern):
            f.unlink()


def write_files(out: str) -> dict[str, str]:
    """The 60-row classification and regression files (10 / 15 labeled rows) and a malformed
    one."""
    from semisup import io

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    y = np.where(X[:, 0] > 0, 1, -1)
    y[10:] = 0  # 10 labeled rows, 50 unlabeled
    paths = {n: os.path.join(out, n) for n in ("small.svm", "reg.svm", "bad.svm")}
    io.write_svmlight(paths["small.svm"], X, y)
    target = X @ np.arange(1.0, 6.0)
    with open(paths["reg.svm"], "w") as fh:
        for i in range(60):
            label = repr(float(target[i])) if i < 15 else "nan"
            fh.write(label + " " + " ".join(f"{j + 1}:{float(v)!r}"
                                            for j, v in enumerate(X[i])) + "\n")
    with open(paths["bad.svm"], "w") as fh:
        fh.write("1 1:0.5\n-1 2:x\n")
    return paths


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", type=Path, default=SRC, help="source tree measured (default: this "
                    "checkout's; its numba cache files are deleted)")
    ap.add_argument("--baseline-src", type=Path)
    ap.add_argument("--baseline-label", default=None,
                    help="what the baseline tree is, for the report (e.g. a commit)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--name", default="bench_startup", help="results file name")
    args = ap.parse_args()
    out = tempfile.mkdtemp()
    files = write_files(out)
    model, reg_model, pred = (os.path.join(out, n) for n in ("small.model", "reg.model",
                                                             "pred"))
    py = sys.executable
    semisup = [py, "-m", "semisup.cli.main"]
    cli = [py, "-m", "semisup.cli.svmlin", "-A", "2", "-W", "0.001", "-U", "1",
           "-R", "0.5", "-o", out, str(PCMAC / "training_examples"),
           str(PCMAC / "training_labels")]
    # (command, exit statuses that count as a run)
    commands = {
        "python -c pass": ([py, "-c", "pass"], (0,)),
        "python -c 'import semisup'": ([py, "-c", "import semisup"], (0,)),
        "python -c 'import sklearn.base'": ([py, "-c", "import sklearn.base"], (0,)),
        "semisup-svmlin -A 2 -W 0.001 -U 1 -R 0.5 (pcmac)": (cli, (0,)),
        "semisup fit TransductiveSVM (60 rows)": (
            [*semisup, "fit", "TransductiveSVM", files["small.svm"], "-m", model], (0,)),
        "semisup fit TransductiveSVM -p probability=True (60 rows, estimator route)": (
            [*semisup, "fit", "TransductiveSVM", files["small.svm"], "-m", model + "p", "-p",
             "probability=True"], (0,)),
        "semisup fit L2SVM (60 rows)": (
            [*semisup, "fit", "L2SVM", files["small.svm"], "-m", model + "l"], (0,)),
        "semisup predict, TransductiveSVM model (60 rows)": (
            [*semisup, "predict", model, files["small.svm"], "-o", pred], (0,)),
        "semisup fit LinearLapRLSRegressor (60 rows, 45 nan)": (
            [*semisup, "fit", "LinearLapRLSRegressor", files["reg.svm"], "-m", reg_model],
            (0,)),
        "semisup predict, LinearLapRLSRegressor model (60 rows)": (
            [*semisup, "predict", reg_model, files["reg.svm"], "-o", pred], (0,)),
        "semisup fit TransductiveSVM, malformed file (exit 2)": (
            [*semisup, "fit", "TransductiveSVM", files["bad.svm"], "-m", model], (2,)),
    }
    trees = [("this branch", args.src)]
    if args.baseline_src:
        trees.append(("baseline", args.baseline_src))
    first: dict = {}
    runs: dict = {}
    with Contention() as load:
        for _, src in trees:
            clear_numba_cache(src)
        for rep in range(args.repeat + 1):
            for tree, src in trees:
                for what, (cmd, ok) in commands.items():
                    result = timed(cmd, src, ok)
                    key = (what, tree)
                    if rep == 0:
                        first[key] = result
                    elif result is not None:
                        runs.setdefault(key, []).append(result)
    rows = []
    for what in commands:
        for tree, _ in trees:
            key = (what, tree)
            if first[key] is None or key not in runs:
                rows.append([what, tree, "fails", "", "", "", "", "", ""])
                continue
            walls, cpus = zip(*runs[key], strict=True)
            rows.append([what, tree, *first[key], min(walls), statistics.median(walls),
                         min(cpus), statistics.median(cpus), len(walls)])
    report(args.name, "Start-up: import, semisup fit / predict on 60 rows, semisup-svmlin "
           "on pcmac", [
               load.line(),
               *([f"Baseline: {args.baseline_label or args.baseline_src}."]
                 if args.baseline_src else []),
               f"First run (empty numba cache), then the best and the median of {args.repeat} "
               "further runs, each a fresh process; seconds.",
               table(["command", "source", "first wall", "first CPU", "best wall",
                      "median wall", "best CPU", "median CPU", "runs"], rows)])


if __name__ == "__main__":
    main()
