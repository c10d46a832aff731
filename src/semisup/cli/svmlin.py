"""``semisup-svmlin``: a drop-in for the SVMlin command line.

Training::

    semisup-svmlin [options] training_examples training_labels
    semisup-svmlin [options] training_file.svm           # SVMlight file, label 0 = unlabeled

writes ``<examples>.weights`` (one weight per line, bias last) and ``<examples>.outputs``
(one score per training row) in the output directory (default: current directory), named
after the examples file as SVMlin does.  Testing::

    semisup-svmlin -f weights_file test_examples [test_labels]
    semisup-svmlin -f weights_file test_file.svm

writes ``<test examples>.outputs`` and prints the accuracy when labels are given.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import os
import sys
import time
from pathlib import Path

import numpy as np

from semisup import io
from semisup._version import __version__
from semisup.linear import L2SVM, DeterministicAnnealingSVM, RLSClassifier, TransductiveSVM

ALGORITHMS = {0: "regularized least squares (RLS)", 1: "L2-SVM-MFN",
              2: "transductive L2-SVM-MFN, multiple switching (TSVM)",
              3: "deterministic annealing semi-supervised L2-SVM (DA)"}


class UsageError(Exception):
    """A command-line problem to report in one line."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="semisup-svmlin",
        description="Large scale linear semi-supervised SVMs, SVMlin-compatible. Labels: +1, "
                    "-1, 0 (unlabeled).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="training:  semisup-svmlin [options] training_examples training_labels\n"
               "testing:   semisup-svmlin -f weights_file test_examples [test_labels]\n"
               "SVMlight files with labels may replace an examples/labels pair.")
    p.add_argument("-A", type=int, default=1, choices=sorted(ALGORITHMS), metavar="A",
                   help="algorithm: 0 RLS, 1 L2-SVM-MFN, 2 TSVM (multi-switch), "
                        "3 DA (default 1)")
    p.add_argument("-W", type=float, default=1.0, help="regularization lambda (default 1)")
    p.add_argument("-U", type=float, default=1.0, help="unlabeled weight lambda_u (default 1)")
    p.add_argument("-S", type=int, default=10000,
                   help="maximum pairs switched per TSVM round (default 10000)")
    p.add_argument("-R", type=float, default=0.5,
                   help="positive fraction of unlabeled data (default 0.5)")
    p.add_argument("-Cp", type=float, default=1.0, help="cost of positive examples (-A 1)")
    p.add_argument("-Cn", type=float, default=1.0, help="cost of negative examples (-A 1)")
    p.add_argument("-f", dest="weights", metavar="weights_file",
                   help="test mode: weights file written by a training run")
    p.add_argument("-o", "--output-dir", default=".",
                   help="directory for .weights/.outputs files (default: current directory)")
    p.add_argument("--format", choices=["auto", "svmlin", "svmlight"], default="auto",
                   help="input format of a single data file (default: auto-detect)")
    p.add_argument("-v", "--verbose", action="count", default=0, help="show progress")
    p.add_argument("--version", action="version", version=f"semisup-svmlin {__version__}")
    p.add_argument("files", nargs="+", help="examples [labels], or one SVMlight file")
    return p


def _is_svmlight(path: str) -> bool:
    """A file whose first token has no ':' carries labels (SVMlight); SVMlin has none."""
    opener = {".bz2": bz2.open, ".gz": gzip.open}.get(Path(path).suffix, open)
    with opener(path, "rt") as fh:
        for line in fh:
            tok = line.split("#", 1)[0].split()
            if tok:
                return ":" not in tok[0]
    return False


def _read(files: list[str], fmt: str, n_features: int | None = None, labels_required=True):
    """``(X, labels or None, examples path)`` from an examples/labels pair or one SVMlight file."""
    if len(files) > 2:
        raise UsageError(f"expected at most 2 data files (examples, labels), got {len(files)}")
    if fmt == "svmlight" or (fmt == "auto" and len(files) == 1 and _is_svmlight(files[0])):
        if len(files) != 1:
            raise UsageError("an SVMlight file carries its labels: give it alone")
        X, y = io.read_svmlight(files[0], n_features=None)
        return X, y, files[0]
    X = io.read_svmlin_examples(files[0])
    if len(files) == 1:
        if labels_required:
            raise UsageError(f"{files[0]}: SVMlin examples need a labels file as second "
                             "argument (+1, -1, or 0 for unlabeled)")
        return X, None, files[0]
    y = io.read_svmlin_labels(files[1])
    io.check_consistent(X, y, files[0], files[1])
    return X, y, files[0]


def _output_path(out_dir: str, examples: str, suffix: str) -> str:
    name = Path(examples).name
    for ext in (".bz2", ".gz"):
        name = name.removesuffix(ext)
    return os.path.join(out_dir, name + suffix)


def _estimator(args):
    common = dict(verbose=max(args.verbose - 1, 0))
    if args.A == 0:
        return RLSClassifier(lam=args.W, **common)
    if args.A == 1:
        return L2SVM(lam=args.W, cost_positive=args.Cp, cost_negative=args.Cn, solver="mfn",
                     **common)
    if args.A == 2:
        return TransductiveSVM(lam=args.W, lam_u=args.U, positive_fraction=args.R,
                               max_switches=args.S, **common)
    return DeterministicAnnealingSVM(lam=args.W, lam_u=args.U, positive_fraction=args.R,
                                     **common)


def _check_labels(y: np.ndarray, path: str, allow_unlabeled: bool) -> None:
    ok = np.isin(y, [-1.0, 0.0, 1.0] if allow_unlabeled else [-1.0, 1.0])
    if not ok.all():
        i = int(np.argmin(ok))
        want = "+1, -1 or 0" if allow_unlabeled else "+1 or -1"
        raise io.FileFormatError(path, i + 1, f"label {y[i]:g} is not binary", want)


def train(args) -> int:
    X, y, examples = _read(args.files, args.format)
    _check_labels(y, args.files[-1], allow_unlabeled=True)
    n_l, n_u = int(np.count_nonzero(y)), int(np.count_nonzero(y == 0))
    if args.A in (2, 3) and n_u == 0:
        print("semisup-svmlin: warning: no unlabeled examples (label 0); training a "
              "supervised model", file=sys.stderr)
    # SVMlin's +1/-1 classes; 0 becomes the library's unlabeled marker -1
    y_est = np.where(y == 0, -1, (y > 0).astype(int))
    est = _estimator(args)
    print(f"semisup-svmlin: {ALGORITHMS[args.A]} on {X.shape[0]} examples ({n_l} labeled, "
          f"{n_u} unlabeled), {X.shape[1]} features, {X.nnz} non-zeros")
    t0 = time.perf_counter()
    est.fit(X, y_est)
    elapsed = time.perf_counter() - t0
    w = np.r_[est.coef_[0], est.intercept_[0] / est.intercept_scaling]
    outputs = est.decision_function(X)
    os.makedirs(args.output_dir, exist_ok=True)
    wpath = _output_path(args.output_dir, examples, ".weights")
    opath = _output_path(args.output_dir, examples, ".outputs")
    io.write_vector(wpath, w)
    io.write_vector(opath, outputs)
    res = est.fit_results_[0]
    extra = f", {res.n_switches} label switches" if hasattr(res, "n_switches") else ""
    print(f"semisup-svmlin: trained in {elapsed:.3f} s; objective {est.objective_:.6g}, "
          f"{res.n_iter} iterations{extra}")
    labeled = y != 0
    if labeled.any():
        acc = np.mean(np.where(outputs[labeled] > 0, 1.0, -1.0) == y[labeled])
        print(f"semisup-svmlin: accuracy on labeled training examples = {100 * acc:.2f} %")
    print(f"semisup-svmlin: wrote {wpath} and {opath}")
    return 0


def test(args) -> int:
    w = io.read_vector(args.weights)
    if w.size < 1:
        raise io.FileFormatError(args.weights, None, "no weights", "one weight per line")
    X, y, examples = _read(args.files, args.format, labels_required=False)
    d = w.size - 1
    if X.shape[1] > d:  # features never seen in training carry weight 0
        X = X[:, :d]
    elif X.shape[1] < d:
        X.resize((X.shape[0], d))
    outputs = X @ w[:d] + w[d]
    os.makedirs(args.output_dir, exist_ok=True)
    opath = _output_path(args.output_dir, examples, ".outputs")
    io.write_vector(opath, outputs)
    print(f"semisup-svmlin: wrote {opath}")
    if y is not None:
        _check_labels(y, args.files[-1], allow_unlabeled=True)
        labeled = y != 0
        acc = np.mean(np.where(outputs[labeled] > 0, 1.0, -1.0) == y[labeled])
        print(f"Accuracy = {100 * acc:.2f} %")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status (0 success, 2 bad input)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.weights is not None:
            return test(args)
        return train(args)
    except (io.FileFormatError, UsageError, FileNotFoundError, IsADirectoryError,
            PermissionError, ValueError) as exc:
        msg = str(exc)
        if isinstance(exc, FileNotFoundError) and exc.filename:
            msg = f"{exc.filename}: no such file"
        print(f"semisup-svmlin: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
