"""``semisup-svmlin`` end to end against the library's own fit of the same files (issue 30).

For each problem, SVMlin-format files (examples + labels, label 0 = unlabeled) are written to
a temporary folder, then, each in a fresh process:

* the command line end to end, ``python -m semisup.cli.svmlin -A {2,3} -W 0.001 -U 1 -R r``
  (wall and CPU seconds of the child, and the "trained in" it prints);
* the API: the same files read with :mod:`semisup.io`, then ``TransductiveSVM`` /
  ``DeterministicAnnealingSVM(lam=0.001, lam_u=1, positive_fraction=r)`` fitted (read and
  fit timed apart; ``max_switches`` as the command line's ``-S`` default, 10000).

Problems: SecStr one-hot (83,679 x 315, SSL-book split 0 with 1,000 labels, ``-R 0.43`` as
in the issue), SVMlin's bundled pcmac example (text, 1,460 x 7,510), the SSL-book ``text``
set (1,500 x 11,960, split 0 with 100 labels) and MNIST even vs odd from LIBSVM's
``mnist.scale.t`` file (10,000 x 784, about 19% non-zeros; 1,000 random labels, tokens
copied verbatim).  ``-R`` is the labeled positive fraction except for SecStr.

The SVMlin C binary is not available here (and is not rebuilt from its code), so its times are
the ones recorded in issue 30 on this machine class, idle: TSVM about 20 s and DA 23.3 s on
SecStr, 0.30 s for pcmac ``-A 2`` end to end; the ratios against them are marked "vs
recorded".  ``--baseline-src DIR`` also runs the command line of another source tree (e.g.
``git archive HEAD src | tar -x -C DIR``), interleaved, for before/after figures.

Usage: ``python benchmarks/bench_cli_speed.py [--sets secstr,pcmac,text,mnist]
[--algorithms 2,3] [--repeat 1] [--baseline-src DIR] [--name bench_cli_speed]``
"""

from __future__ import annotations

import argparse
import bz2
import json
import os
import re
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
DATA = Path(os.environ.get("SEMISUP_DATA", HERE.parent.parent / "shared" / "data"))

#: SVMlin's times recorded in issue 30 (idle machine, end to end), seconds
RECORDED_SVMLIN = {("secstr", 2): 20.0, ("secstr", 3): 23.3, ("pcmac", 2): 0.30}

API_CHILD = r"""
import json, sys, time
t00 = time.perf_counter()
import numpy as np
from semisup import io, TransductiveSVM, DeterministicAnnealingSVM
examples, labels, algorithm, r = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
t0, c0 = time.perf_counter(), time.process_time()
X = io.read_svmlin_examples(examples)
y = io.svmlin_to_labels(io.read_svmlin_labels(labels))
read = time.perf_counter() - t0, time.process_time() - c0
est = (TransductiveSVM(lam=1e-3, lam_u=1.0, positive_fraction=r, max_switches=10000)
       if algorithm == 2 else
       DeterministicAnnealingSVM(lam=1e-3, lam_u=1.0, positive_fraction=r))
t0, c0 = time.perf_counter(), time.process_time()
est.fit(X, y)
fit = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps(dict(read_wall=read[0], read_cpu=read[1], fit_wall=fit[0], fit_cpu=fit[1],
                      objective=float(est.objective_),
                      process_wall=time.perf_counter() - t00)))
"""


# ----------------------------------------------------------------------------- data


def _write_pair(folder: Path, name: str, X, y_svmlin: np.ndarray) -> tuple[Path, Path]:
    from semisup import io

    ex, lab = folder / f"{name}_examples", folder / f"{name}_labels"
    io.write_svmlin_examples(ex, X)
    io.write_svmlin_labels(lab, y_svmlin)
    return ex, lab


def _labeled_fraction(lab: Path) -> float:
    y = np.loadtxt(lab)
    return float(np.mean(y[y != 0] > 0))


def _saved_sets(folder: Path, names: list[str]) -> dict:
    """The problems of an earlier ``--files DIR`` run (written by :func:`make_sets`)."""
    sets = {}
    for name in names:
        ex, lab = folder / f"{name}_examples", folder / f"{name}_labels"
        r = {"secstr": 0.43, "pcmac": 0.5}.get(name) or _labeled_fraction(lab)
        sets[name] = (ex, lab, r, (folder / f"{name}.txt").read_text().strip())
    return sets


def _svmlin_labels(y: np.ndarray, labeled: np.ndarray, positive) -> np.ndarray:
    out = np.zeros(y.shape[0])
    out[labeled] = np.where(y[labeled] == positive, 1.0, -1.0)
    return out


def make_sets(folder: Path, names: list[str]) -> dict:
    """``name -> (examples, labels, -R, description)`` for the problems asked for."""
    from semisup.datasets import load_sslbook, one_hot_secstr

    sets = {}
    if "secstr" in names:
        b = load_sslbook("secstr", 1000)
        X = one_hot_secstr(b.X)
        y = _svmlin_labels(b.y, b.splits[0], np.unique(b.y)[1])
        sets["secstr"] = (*_write_pair(folder, "secstr", X, y), 0.43,
                          f"SecStr one-hot {X.shape[0]:,} x {X.shape[1]}, 1,000 labels")
    if "pcmac" in names:
        d = DATA / "svmlin_example_pcmac"
        y = np.loadtxt(d / "training_labels")
        r = float(np.mean(y[y != 0] > 0))
        for kind in ("examples", "labels"):
            (folder / f"pcmac_{kind}").write_bytes((d / f"training_{kind}").read_bytes())
        sets["pcmac"] = (folder / "pcmac_examples", folder / "pcmac_labels", 0.5,
                         f"SVMlin example pcmac 1,460 x 7,510, {np.count_nonzero(y)} labels "
                         f"(-R 0.5 as the issue's run; labeled fraction {r:.2f})")
    if "text" in names:
        b = load_sslbook("text", 100)
        y = _svmlin_labels(b.y, b.splits[0], 1)
        r = float(np.mean(y[y != 0] > 0))
        sets["text"] = (*_write_pair(folder, "text", b.X, y), r,
                        f"SSL-book text {b.X.shape[0]:,} x {b.X.shape[1]:,}, 100 labels")
    if "mnist" in names:
        # LIBSVM's own file, tokens copied verbatim (short decimals, as files in the wild)
        with bz2.open(DATA / "mnist" / "mnist.scale.t.bz2", "rt") as fh:
            lines = fh.read().splitlines()
        digits = np.array([int(float(line.split(None, 1)[0])) for line in lines])
        ex = folder / "mnist_examples"
        ex.write_text("\n".join(line.split(None, 1)[1] if " " in line else ""
                                for line in lines) + "\n")
        labeled = np.sort(np.random.default_rng(0).choice(len(lines), 1000, replace=False))
        y = _svmlin_labels(digits % 2, labeled, 0)  # +1 = even digit
        lab = folder / "mnist_labels"
        np.savetxt(lab, y, fmt="%d")
        r = float(np.mean(y[y != 0] > 0))
        sets["mnist"] = (ex, lab, r, f"MNIST even/odd (mnist.scale.t) {len(lines):,} x 784, "
                         "1,000 labels")
    for name, (_, _, _, desc) in sets.items():
        (folder / f"{name}.txt").write_text(desc + "\n")
    return sets


# ----------------------------------------------------------------------------- runs


def _child(cmd: list[str], src: Path) -> tuple[float, float, str]:
    """Wall and CPU seconds (user + system of the child) and stdout of ``cmd``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out


def run_cli(src: Path, ex: Path, lab: Path, algorithm: int, r: float, out: str) -> dict:
    cmd = [sys.executable, "-m", "semisup.cli.svmlin", "-A", str(algorithm), "-W", "0.001",
           "-U", "1", "-R", str(r), "-o", out, str(ex), str(lab)]
    wall, cpu, text = _child(cmd, src)
    trained = re.search(r"trained in ([0-9.]+) s; objective ([-0-9.e+]+)", text)
    return dict(wall=wall, cpu=cpu, trained=float(trained.group(1)),
                objective=float(trained.group(2)))


def run_api(src: Path, ex: Path, lab: Path, algorithm: int, r: float) -> dict:
    wall, cpu, text = _child([sys.executable, "-c", API_CHILD, str(ex), str(lab),
                              str(algorithm), str(r)], src)
    return dict(json.loads(text.strip().splitlines()[-1]), wall=wall, cpu=cpu)


def _rel(a: float, b: float) -> str:
    """Relative difference of two objectives as printed by the command line (10 digits)."""
    return f"{abs(a - b) / max(abs(b), 1e-300):.1e}"


def _best(runs: list[dict], key: str) -> float:
    return min(run[key] for run in runs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="secstr,pcmac,text,mnist")
    ap.add_argument("--algorithms", default="2,3")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--src", type=Path, default=SRC)
    ap.add_argument("--baseline-src", type=Path)
    ap.add_argument("--name", default="bench_cli_speed")
    ap.add_argument("--files", type=Path, help="folder for the SVMlin files: written there "
                    "when it has none, reused when it has them (e.g. on a machine without "
                    "the shared data)")
    args = ap.parse_args()
    algorithms = [int(a) for a in args.algorithms.split(",")]
    names = args.sets.split(",")
    folder = args.files or Path(tempfile.mkdtemp(prefix="bench_cli_speed_"))
    folder.mkdir(parents=True, exist_ok=True)
    out = tempfile.mkdtemp(prefix="bench_cli_speed_out_")
    if all((folder / f"{name}.txt").exists() for name in names):
        sets = _saved_sets(folder, names)
    else:
        sets = make_sets(folder, names)
    rows, notes = [], []
    with Contention() as load:
        for name, (ex, lab, r, _) in sets.items():
            for algorithm in algorithms:
                cli, api, base = [], [], []
                for _ in range(args.repeat):
                    cli.append(run_cli(args.src, ex, lab, algorithm, r, out))
                    api.append(run_api(args.src, ex, lab, algorithm, r))
                    if args.baseline_src:
                        base.append(run_cli(args.baseline_src, ex, lab, algorithm, r, out))
                cli_wall, api_wall = _best(cli, "wall"), _best(api, "wall")
                ref = RECORDED_SVMLIN.get((name, algorithm))
                vs = "n/a" if ref is None else f"{cli_wall / ref:.2f}x"
                gap = abs(cli[0]["objective"] - api[0]["objective"]) \
                    / max(abs(api[0]["objective"]), 1e-300)
                rows.append([
                    name, f"-A {algorithm}", f"{cli_wall:.2f}", f"{_best(cli, 'cpu'):.2f}",
                    f"{_best(cli, 'trained'):.2f}",
                    f"{_best(api, 'read_wall'):.2f}", f"{_best(api, 'fit_wall'):.2f}",
                    f"{api_wall:.2f}", f"{_best(api, 'cpu'):.2f}",
                    f"{cli_wall / api_wall:.2f}",
                    "-" if ref is None else f"{ref:.2f}", vs,
                    "-" if not base else f"{_best(base, 'wall'):.2f} / "
                                         f"{_best(base, 'cpu'):.2f}",
                    "-" if not base else _rel(cli[0]["objective"], base[0]["objective"]),
                    f"{gap:.1e}"])
                print(rows[-1], flush=True)
    headers = ["set", "alg", "CLI wall", "CLI CPU", "CLI trained in", "API read",
               "API fit", "API process wall", "API process CPU", "CLI / API wall",
               "SVMlin recorded", "CLI vs recorded", "baseline CLI wall / CPU",
               "CLI objective vs baseline", "objective rel. diff"]
    notes = [f"- **{name}**: {desc}; files in SVMlin format (`-R {r:g}`)."
             for name, (_, _, r, desc) in sets.items()]
    report(args.name, "semisup-svmlin end to end vs the API fit of the same files", [
        load.line(),
        f"Best of {args.repeat} run(s) each, seconds; every run a fresh process.  'CLI' is "
        "`python -m semisup.cli.svmlin -A a -W 0.001 -U 1 -R r` end to end; 'API' a process "
        "reading the same files with semisup.io and fitting the estimator (read, fit and "
        "whole-process wall time).  'SVMlin recorded': the SVMlin release's end-to-end time "
        "recorded in issue 30 on an idle machine of this class (the C binary is not "
        "available here); 'CLI vs recorded' divides this run's CLI wall time by it, so a "
        "busy machine makes it look worse.  'baseline': the command line of `--baseline-src`, "
        "run interleaved with ours (same load); 'CLI objective vs baseline' compares the "
        "objectives the two command lines print; 'objective rel. diff' compares ours with "
        "the API fit's.",
        "\n".join(notes),
        table(headers, rows)])


if __name__ == "__main__":
    main()
