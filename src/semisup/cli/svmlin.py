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

Failure safety: the output directory is checked before training; every file is written to a
temporary file and renamed into place when complete, so an error or Ctrl-C never leaves a
truncated ``.weights``/``.outputs`` (a pair is written together or not at all).  File errors
exit with status 2 and one line on stderr, an interrupt with status 130.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from semisup import io
from semisup._validation import CollapseWarning
from semisup._version import __version__
from semisup.cli._common import folder_problem, one_line_warnings
from semisup.cli._model import SVMlinModel
from semisup.cli.fitpredict import MAX_FEATURES_HELP, max_features_arg

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
    p.add_argument("--max-iter", type=int, default=None, metavar="N",
                   help="Newton iterations per solve (default: the estimator's)")
    p.add_argument("--tol", type=float, default=None,
                   help="relative stopping tolerance of the solver (default 1e-6)")
    p.add_argument("-f", dest="weights", metavar="weights_file",
                   help="test mode: weights file written by a training run")
    p.add_argument("-o", "--output-dir", default=".",
                   help="directory for .weights/.outputs files (default: current directory)")
    p.add_argument("--format", choices=["auto", "svmlin", "svmlight"], default="auto",
                   help="input format of a single data file (default: auto-detect)")
    p.add_argument("--max-features", type=max_features_arg, default="auto", metavar="N",
                   help=MAX_FEATURES_HELP)
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


def _read(files: list[str], fmt: str, labels_required=True, max_features="auto"):
    """``(X, labels or None, examples path)`` from an examples/labels pair or one SVMlight file."""
    if len(files) > 2:
        raise UsageError(f"expected at most 2 data files (examples, labels), got {len(files)}")
    svmlight = fmt == "svmlight" or (fmt == "auto" and _is_svmlight(files[0]))
    if svmlight and len(files) != 1:
        raise UsageError(f"{files[0]} is an SVMlight file (each line starts with its label), "
                         f"which carries its labels: give it alone, without {files[1]} "
                         "(--format svmlin reads it as SVMlin examples)")
    if svmlight:
        X, y = io.read_svmlight(files[0], n_features=None, max_features=max_features)
        return X, y, files[0]
    X = io.read_svmlin_examples(files[0], max_features=max_features)
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


def _check_args(args) -> None:
    """Check the numeric options before any file is read, naming the flag at fault."""
    def bad(flag: str, value, want: str) -> UsageError:
        return UsageError(f"{flag} must be {want}, got {value!r}")

    finite = np.isfinite
    if not (finite(args.W) and args.W > 0):
        raise bad("-W (lambda)", args.W, "a finite number > 0")
    if not (finite(args.U) and args.U >= 0):
        raise bad("-U (lambda_u)", args.U, "a finite number >= 0")
    if not 0 < args.R < 1:
        raise bad("-R (positive fraction)", args.R, "a number in (0, 1)")
    if args.S < 1:
        raise bad("-S (switches per round)", args.S, "an integer >= 1")
    for flag, value in (("-Cp", args.Cp), ("-Cn", args.Cn)):
        if not (finite(value) and value > 0):
            raise bad(flag, value, "a finite number > 0")
    if args.max_iter is not None and args.max_iter < 1:
        raise bad("--max-iter", args.max_iter, "an integer >= 1")
    if args.tol is not None and not (finite(args.tol) and args.tol > 0):
        raise bad("--tol", args.tol, "a finite number > 0")


def _check_output_dir(out_dir: str, paths: list[str]) -> None:
    """Create ``out_dir`` and make sure the outputs can be written there, before training."""
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UsageError(f"-o {out_dir}: is a file; -o names the folder that receives the "
                         ".weights and .outputs files")
    try:
        os.makedirs(out_dir, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"-o {out_dir}: cannot create this folder "
                         f"({exc.strerror or type(exc).__name__})") from None
    problem = folder_problem(out_dir)
    if problem:
        raise UsageError(f"-o {out_dir}: {problem}")
    for path in paths:
        if os.path.isdir(path):
            raise UsageError(f"{path}: is a directory; cannot write the output there")


def _write_outputs(items: list[tuple[str, np.ndarray]]) -> None:
    """Write the files in turn (each atomically); on failure remove those already written."""
    done = []
    try:
        for path, vector in items:
            io.write_vector(path, vector)
            done.append(path)
    except BaseException:
        for path in done:
            try:
                os.remove(path)
            except OSError:
                pass
        raise


def _report_warnings(caught) -> None:
    """Show the library's warnings as one line each, worded for the command line."""
    seen = set()
    for w in caught:
        msg = str(w.message)
        if msg in seen or "no unlabeled rows" in msg:
            continue
        seen.add(msg)
        if issubclass(w.category, CollapseWarning):
            msg += " (semisup-svmlin: lower -W, or check -R)"
        elif w.category.__name__ == "ConvergenceWarning":
            msg += " (semisup-svmlin: raise --max-iter or --tol)"
        print(f"semisup-svmlin: warning: {msg}", file=sys.stderr)


def _estimator(args):
    # the solvers without scikit-learn's import (semisup.cli._model): start-up dominates the
    # small problems users try first
    extra = {k: v for k, v in (("max_iter", args.max_iter), ("tol", args.tol)) if v is not None}
    return SVMlinModel(args.A, lam=args.W, lam_u=args.U, positive_fraction=args.R,
                       max_switches=args.S, cost_positive=args.Cp, cost_negative=args.Cn,
                       verbose=max(args.verbose - 1, 0), **extra)


def _check_labels(y: np.ndarray, path: str, allow_unlabeled: bool) -> None:
    ok = np.isin(y, [-1.0, 0.0, 1.0] if allow_unlabeled else [-1.0, 1.0])
    if not ok.all():
        i = int(np.argmin(ok))
        want = "+1, -1 or 0" if allow_unlabeled else "+1 or -1"
        raise io.FileFormatError(path, i + 1, f"label {y[i]:g} is not binary", want)


def train(args) -> int:
    _check_args(args)
    X, y, examples = _read(args.files, args.format, max_features=args.max_features)
    _check_labels(y, args.files[-1], allow_unlabeled=True)
    n_l, n_u = int(np.count_nonzero(y)), int(np.count_nonzero(y == 0))
    if args.A in (2, 3) and n_u == 0:
        print("semisup-svmlin: warning: no unlabeled examples (label 0); training a "
              "supervised model", file=sys.stderr)
    if n_l == 0:
        raise UsageError(f"{args.files[-1]}: no labeled examples (every label is 0); label "
                         "some examples +1 or -1")
    if not (np.any(y > 0) and np.any(y < 0)):
        only = "+1" if np.any(y > 0) else "-1"
        raise UsageError(f"{args.files[-1]}: every labeled example is {only}; label examples "
                         "of both classes (+1 and -1)")
    wpath = _output_path(args.output_dir, examples, ".weights")
    opath = _output_path(args.output_dir, examples, ".outputs")
    _check_output_dir(args.output_dir, [wpath, opath])
    y_est = io.svmlin_to_labels(y)
    est = _estimator(args)
    print(f"semisup-svmlin: {ALGORITHMS[args.A]} on {X.shape[0]} examples ({n_l} labeled, "
          f"{n_u} unlabeled), {X.shape[1]} features, {X.nnz} non-zeros")
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y_est)
    elapsed = time.perf_counter() - t0
    _report_warnings(caught)
    w = np.r_[est.coef_[0], est.intercept_[0] / est.intercept_scaling]
    outputs = est.decision_function(X)
    _write_outputs([(wpath, w), (opath, outputs)])
    res = est.fit_results_[0]
    extra = f", {res.n_switches} label switches" if hasattr(res, "n_switches") else ""
    print(f"semisup-svmlin: trained in {elapsed:.3f} s; objective {est.objective_:.10g}, "
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
    X, y, examples = _read(args.files, args.format, labels_required=False,
                           max_features=args.max_features)
    if y is not None:  # refuse before writing anything
        _check_labels(y, args.files[-1], allow_unlabeled=True)
        if not np.any(y != 0):
            raise UsageError(f"{args.files[-1]}: every test label is 0 (unlabeled), so there "
                             "is no accuracy to compute; give +1/-1 labels, or leave the "
                             "labels file out to only write the outputs")
    d = w.size - 1
    if X.shape[1] > d:
        # SVMlin files carry no dimension: features beyond the weights are either unseen in
        # training (weight 0, correct) or the weights file is truncated (wrong); say which
        extra = X[:, d:]
        if extra.nnz:
            print(f"semisup-svmlin: warning: the test data has {X.shape[1]} features but "
                  f"{args.weights} holds weights for {d} (plus the bias); {extra.nnz} "
                  f"non-zeros in {np.unique(extra.indices).size} features beyond {d} get "
                  "weight 0. If these features were seen in training, the weights file is "
                  "truncated: retrain", file=sys.stderr)
        X = X[:, :d]
    elif X.shape[1] < d:
        X.resize((X.shape[0], d))
    outputs = X @ w[:d] + w[d]
    opath = _output_path(args.output_dir, examples, ".outputs")
    _check_output_dir(args.output_dir, [opath])
    _write_outputs([(opath, outputs)])
    print(f"semisup-svmlin: wrote {opath}")
    if y is not None:
        labeled = y != 0
        acc = np.mean(np.where(outputs[labeled] > 0, 1.0, -1.0) == y[labeled])
        print(f"Accuracy = {100 * acc:.2f} %")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status (0 success, 2 bad input or file error, 130 Ctrl-C)."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        with one_line_warnings("semisup-svmlin"):
            if args.weights is not None:
                return test(args)
            return train(args)
    except (io.FileFormatError, UsageError, OSError, ValueError) as exc:
        msg = str(exc)
        if isinstance(exc, FileNotFoundError) and exc.filename:
            msg = f"{exc.filename}: no such file"
        elif isinstance(exc, OSError) and exc.filename and exc.strerror:
            msg = f"{exc.filename}: {exc.strerror}"
        print(f"semisup-svmlin: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("semisup-svmlin: interrupted; no output written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
