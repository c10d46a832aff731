"""``semisup fit`` / ``semisup predict``: any semisup estimator over SVMlight/libsvm files.

Label convention of the files: SVMlight's transductive one, ``0`` marks an unlabeled row
(``--unlabeled -1`` chooses ``-1`` instead, for multi-class files whose classes are
``0..K-1``). Class labels are recoded to ``0..K-1`` for the estimator, so that ``-1`` can be
a class in a file, and mapped back on prediction.

Model files hold data only (:mod:`semisup.cli._modelfile`: arrays and an allow-list of the
exact classes the library writes, no functions, no pickle), so a model file from elsewhere
cannot run code; the bundle is checked from the top down before it is used.
"""

from __future__ import annotations

import ast
import sys
import time
from pathlib import Path

import numpy as np

from semisup import io

# version of the bundle inside a model file (1 was written with skops)
MODEL_FORMAT = 2
_BUNDLE_KEYS = {"format", "estimator", "classes", "n_features"}


class UsageError(Exception):
    """A command-line problem to report in one line."""


def estimator_names() -> list[str]:
    """The estimators ``semisup fit`` offers: those a model file may hold.

    Read from the model-file allow-list, so listing them imports none of them.
    """
    from semisup.cli._modelfile import ESTIMATOR_CLASSES

    return sorted(name.rpartition(".")[2] for name in ESTIMATOR_CLASSES)


def _estimator_class(name: str) -> type:
    import semisup

    names = estimator_names()
    match = {n.lower(): n for n in names}.get(name.lower())
    if match is None:
        other = {n.lower(): n for n in semisup.__all__}.get(name.lower())
        if other == "ActiveSearchPipeline":
            raise UsageError("ActiveSearchPipeline learns from text documents and a search "
                             "index, not from an SVMlight file: use 'semisup active-search "
                             "--index INDEX --labeled FOLDER' (see semisup active-search -h)")
        if other is not None:
            raise UsageError(f"{other} cannot be fitted from the command line; choose one "
                             f"of: {', '.join(names)}")
        raise UsageError(f"unknown estimator {name!r}; choose one of: {', '.join(names)}")
    return getattr(semisup, match)


def _parse_value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text  # a bare word: a string option such as kernel=rbf


def _make_estimator(name: str, params: list[str]):
    cls = _estimator_class(name)
    est = cls()
    values = {}
    for item in params:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--param {item!r}: expected name=value, e.g. --param lam=0.01")
        values[key] = _parse_value(text)
    valid = est.get_params()
    unknown = sorted(set(values) - set(valid))
    if unknown:
        raise UsageError(f"{cls.__name__} has no parameter {unknown[0]!r}; its parameters "
                         f"are: {', '.join(sorted(valid))}")
    return est.set_params(**values)


def _parameter_help(name: str) -> str:
    """The parameters of estimator ``name`` with their defaults (``semisup fit NAME -h``)."""
    import inspect

    cls = _estimator_class(name)
    lines = [f"parameters of {cls.__name__} (-p NAME=VALUE; default shown):"]
    for key, p in inspect.signature(cls.__init__).parameters.items():
        if key != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            lines.append(f"  {key}={p.default!r}")
    doc = (cls.__doc__ or "").strip().splitlines()
    if doc:
        lines.insert(0, f"{cls.__name__}: {doc[0]}")
    lines.append(f"(full description: python -c \"import semisup; "
                 f"help(semisup.{cls.__name__})\")")
    return "\n".join(lines)


def _check_output(path: str | None, flag: str) -> None:
    """Refuse an output path that cannot be written, before any work is done."""
    from semisup.cli._common import output_problem

    problem = None if path is None else output_problem(path)
    if problem:
        raise UsageError(f"{flag} {path}: {problem}")


def _read_labeled(path: str, n_features: int | None = None, max_features="auto"):
    """``(X, y)`` of an SVMlight file; with ``n_features``, shaped like the training data."""
    X, y = io.read_svmlight(path, max_features=max_features)
    if X.shape[1] == 0 and n_features is None:
        raise UsageError(f"{path}: no feature on any line (only labels); expected lines "
                         "'<label> <index>:<value> ...'")
    if n_features is not None:
        if X.shape[1] > n_features:
            raise UsageError(f"{path}: has {X.shape[1]} features, more than the {n_features} "
                             "the model was trained on")
        X.resize((X.shape[0], n_features))  # trailing all-zero columns
    return X, y


def _check_dense_memory(est, X, path: str, max_features) -> None:
    """An estimator that takes dense input only makes an ``n x d`` array of the file."""
    try:
        sparse_ok = est.__sklearn_tags__().input_tags.sparse
    except AttributeError:  # pragma: no cover - every estimator has tags
        return
    need = 8 * X.shape[0] * X.shape[1]
    if sparse_ok or max_features is None or need < 2**28:
        return
    avail = io.available_memory()
    if avail is not None and need > avail:
        raise UsageError(f"{path}: {type(est).__name__} takes dense input, and {X.shape[0]} "
                         f"rows x {X.shape[1]} features need {need / 2**30:.1f} GiB, more "
                         f"than the {avail / 2**30:.1f} GiB available: use an estimator "
                         "for sparse data (e.g. TransductiveSVM) or renumber the features")


def _encode(y: np.ndarray, unlabeled: float) -> tuple[np.ndarray, np.ndarray]:
    """Classes (sorted labels other than ``unlabeled``) and codes ``0..K-1`` / ``-1``."""
    mask = y == unlabeled
    classes, codes = np.unique(y[~mask], return_inverse=True)
    coded = np.full(y.shape, -1, dtype=np.int64)
    coded[~mask] = codes
    return classes, coded


def _format_labels(values: np.ndarray) -> list[str]:
    if np.all(values == np.round(values)):
        return [str(int(v)) for v in values]
    return [f"{v:.17g}" for v in values]


def fit(args) -> int:
    est = _make_estimator(args.estimator, args.param)
    _check_output(args.model, "--model")
    _check_output(args.transduction, "--transduction")
    X, y = _read_labeled(args.data, max_features=args.max_features)
    _check_dense_memory(est, X, args.data, args.max_features)
    classes, coded = _encode(y, args.unlabeled)
    n_unl = int(np.sum(coded == -1))
    if classes.size < 2:
        raise UsageError(f"{args.data}: {classes.size} class{'es' if classes.size != 1 else ''} "
                         f"among the labeled rows (labels other than {args.unlabeled:g}); at "
                         "least 2 are needed")
    if n_unl == 0:
        print(f"semisup fit: warning: no row has the unlabeled label {args.unlabeled:g}: "
              "training on labeled rows only (--unlabeled chooses the marker)",
              file=sys.stderr)
    print(f"semisup: {type(est).__name__} on {X.shape[0]} rows ({X.shape[0] - n_unl} "
          f"labeled, {n_unl} unlabeled), {X.shape[1]} features, classes "
          f"{', '.join(_format_labels(classes))}")
    t0 = time.perf_counter()
    est.fit(X, coded)
    elapsed = time.perf_counter() - t0
    bundle = {"format": MODEL_FORMAT, "estimator": est, "classes": classes,
              "n_features": int(X.shape[1])}
    _save(bundle, args.model)
    print(f"semisup: trained in {elapsed:.3f} s; wrote {args.model}")
    if hasattr(est, "selection_"):   # AutoClassifier: what it chose and why
        print(f"semisup: chose {est.best_candidate_}: {est.selection_}")
    if args.transduction and hasattr(est, "transduction_"):
        io._write_lines(args.transduction,
                        _format_labels(classes[np.asarray(est.transduction_, dtype=int)]))
        print(f"semisup: wrote the labels of all training rows to {args.transduction}")
    return 0


def _save(bundle: dict, path: str) -> None:
    from semisup.cli import _modelfile

    io._write_chunks(path, [_modelfile.dumps(bundle)])


def _load(path: str) -> dict:
    """The bundle of a model file, checked from the top down before any part is used."""
    from semisup.cli import _modelfile

    data = Path(path).read_bytes()
    try:
        bundle = _modelfile.loads(data, bundle=True)
    except _modelfile.ModelFileError as exc:
        raise UsageError(f"{path}: not a semisup model file written by 'semisup fit': "
                         f"{exc}") from None
    if not isinstance(bundle, dict) or set(bundle) != _BUNDLE_KEYS \
            or bundle["format"] != MODEL_FORMAT:
        raise UsageError(f"{path}: not a semisup model file (written by 'semisup fit')")
    est, classes, n_features = bundle["estimator"], bundle["classes"], bundle["n_features"]
    name = f"{type(est).__module__}.{type(est).__qualname__}"
    if name not in _modelfile.ESTIMATOR_CLASSES:
        raise UsageError(f"{path}: the model is a {name}, not a semisup estimator")
    if not (isinstance(classes, np.ndarray) and classes.ndim == 1 and classes.dtype.kind == "f"
            and classes.size >= 2 and np.all(np.isfinite(classes))
            and np.all(np.diff(classes) > 0)):
        raise UsageError(f"{path}: damaged model file: its class labels are not a sorted "
                         "list of at least 2 distinct numbers")
    if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 0 \
            or getattr(est, "n_features_in_", n_features) != n_features:
        raise UsageError(f"{path}: damaged model file: inconsistent number of features")
    codes = np.asarray(getattr(est, "classes_", []))
    if codes.shape != classes.shape or not np.array_equal(codes, np.arange(classes.size)):
        raise UsageError(f"{path}: damaged model file: it lists {classes.size} class labels "
                         f"but its estimator predicts {codes.size} classes")
    return bundle


def predict(args) -> int:
    _check_output(args.output, "-o")
    bundle = _load(args.model)
    est, classes = bundle["estimator"], bundle["classes"]
    X, y = _read_labeled(args.data, n_features=bundle["n_features"],
                         max_features=args.max_features)
    if args.scores:
        scores = np.asarray(est.decision_function(X))
        lines = [" ".join(f"{v:.17g}" for v in np.atleast_1d(row)) for row in scores]
    else:
        lines = _format_labels(classes[np.asarray(est.predict(X), dtype=int)])
    io._write_lines(args.output, lines)
    print(f"semisup: wrote {'scores' if args.scores else 'predictions'} for {X.shape[0]} "
          f"rows to {args.output}")
    labeled = y != args.unlabeled
    if labeled.any():
        pred = classes[np.asarray(est.predict(X[np.flatnonzero(labeled)]), dtype=int)]
        acc = np.mean(pred == y[labeled])
        print(f"semisup: accuracy on the {int(labeled.sum())} labeled rows = "
              f"{100 * acc:.2f} %")
    return 0


def max_features_arg(text: str):
    """``--max-features``: 'auto' (default), 'none' or an integer >= 1."""
    import argparse

    word = text.strip().lower()
    if word in ("auto", "none"):
        return "auto" if word == "auto" else None
    try:
        value = int(word)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 'auto', 'none' or an integer >= 1, got "
                                         f"{text!r}")
    return value


MAX_FEATURES_HELP = ("largest feature index accepted in the input: 'auto' (default: "
                     f"{io.DEFAULT_MAX_FEATURES:,} and what the available memory holds), "
                     "an integer, or 'none'")


def _fit_epilog() -> str:
    import textwrap

    names = textwrap.fill(", ".join(estimator_names()), width=78, initial_indent="  ",
                          subsequent_indent="  ")
    return (f"estimators (case-insensitive):\n{names}\n\n"
            "parameters:\n"
            "  -p NAME=VALUE sets a constructor parameter of the estimator (repeat -p for\n"
            "  more); VALUE is read as a Python literal (0.001, 10, True, None, 'rbf',\n"
            "  [1, 2]) or else taken as a word (kernel=rbf).  'semisup fit ESTIMATOR -h'\n"
            "  lists ESTIMATOR's parameters and their defaults.\n\n"
            "example:\n"
            "  semisup fit TransductiveSVM train.svm -m model.semisup -p lam=0.001\n"
            "  semisup predict model.semisup test.svm -o predictions.txt")


def _help_action():
    import argparse

    class FitHelp(argparse.Action):
        """``-h``: the usage and estimators, then the parameters of a named estimator."""

        def __init__(self, option_strings, dest=argparse.SUPPRESS,
                     default=argparse.SUPPRESS, help=None):
            super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

        def __call__(self, parser, namespace, values, option_string=None):
            parser.print_help()
            name = getattr(namespace, "estimator", None)
            if name:
                try:
                    text = _parameter_help(name)
                except UsageError as exc:
                    text = str(exc)
                print("\n" + text)
            parser.exit()

    return FitHelp


def add_parsers(sub) -> None:
    """Register ``fit`` and ``predict`` on the ``semisup`` command's subparsers."""
    import argparse

    convention = ("rows labeled UNLABELED (default 0, SVMlight's transductive convention) "
                  "are unlabeled")
    p = sub.add_parser("fit", help="fit any semisup estimator on an SVMlight/libsvm file",
                       description="Fit an estimator; " + convention + ".",
                       epilog=_fit_epilog(), add_help=False,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-h", "--help", action=_help_action(),
                   help="show this help (and, after ESTIMATOR, its parameters) and exit")
    p.add_argument("estimator", metavar="ESTIMATOR",
                   help="estimator class name (list below), e.g. TransductiveSVM, LapRLS")
    p.add_argument("data", help="training file in SVMlight/libsvm format")
    p.add_argument("-m", "--model", required=True,
                   help="model file to write (data only: arrays and a JSON description)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="estimator parameter, repeatable (e.g. -p lam=0.001 -p kernel=rbf)")
    p.add_argument("--unlabeled", type=float, default=0.0, metavar="UNLABELED",
                   help="label value that marks unlabeled rows (default 0)")
    p.add_argument("--transduction", metavar="FILE",
                   help="also write the labels the model gives every training row")
    p.add_argument("--max-features", type=max_features_arg, default="auto", metavar="N",
                   help=MAX_FEATURES_HELP)
    p.set_defaults(run=fit)
    q = sub.add_parser("predict", help="predict with a model written by 'semisup fit'",
                       description="Predict the rows of an SVMlight/libsvm file; prints the "
                                   "accuracy on its labeled rows (" + convention + ").")
    q.add_argument("model", help="model file written by 'semisup fit'")
    q.add_argument("data", help="file in SVMlight/libsvm format (labels may be the "
                                "unlabeled marker)")
    q.add_argument("-o", "--output", required=True, help="file for one prediction per line")
    q.add_argument("--scores", action="store_true",
                   help="write decision_function values instead of labels")
    q.add_argument("--unlabeled", type=float, default=0.0, metavar="UNLABELED",
                   help="label value that marks rows to leave out of the accuracy (default 0)")
    q.add_argument("--max-features", type=max_features_arg, default="auto", metavar="N",
                   help=MAX_FEATURES_HELP)
    q.set_defaults(run=predict)
