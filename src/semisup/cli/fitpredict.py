"""``semisup fit`` / ``semisup predict``: any semisup estimator over SVMlight/libsvm files.

Label convention of the files, for a classifier: SVMlight's transductive one, ``0`` marks an
unlabeled row (``--unlabeled -1`` chooses ``-1`` instead, for multi-class files whose classes
are ``0..K-1``). Class labels are recoded to ``0..K-1`` for the estimator, so that ``-1`` can
be a class in a file, and mapped back on prediction.

For a regressor every number is a real target, ``0`` and ``-1`` included: the label tokens
``nan`` and ``?`` (which no target can be) mark the unlabeled rows, and ``--unlabeled VALUE``
names one more marker explicitly.  A regression file without any unlabeled row is a
supervised fit, said once on stderr (rather than refused: a complete file is a legitimate
input, and the note names the option should ``0`` have been meant as the marker).

Start-up: the data file is read and checked before the estimator's module (and with it
scikit-learn, most of a small fit's time) is imported, and ``predict`` evaluates the linear
models from the model file's arrays without importing scikit-learn at all
(:func:`semisup.cli._modelfile.load_linear`).  ``fit`` of TransductiveSVM,
DeterministicAnnealingSVM, L2SVM or RLSClassifier runs the estimator's own fit through its
scikit-learn-free core (:mod:`semisup.linear._core`, :func:`_make_core`) and writes the
model file the estimator writes; other estimators, ``probability=True``, ``'auto'`` modes
and a graph term (``gamma_I > 0``) go through the estimator.

Model files hold data only (:mod:`semisup.cli._modelfile`: arrays and an allow-list of the
exact classes the library writes, no functions, no pickle), so a model file from elsewhere
cannot run code; the bundle is checked from the top down before it is used.
"""

from __future__ import annotations

import ast
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from semisup import io
from semisup._validation import LabelCodingWarning

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


def _estimator_path(name: str) -> str:
    """The module path of estimator ``name`` (case-insensitive), without importing it."""
    from semisup.cli._modelfile import ESTIMATOR_CLASSES

    match = {n.rpartition(".")[2].lower(): n for n in ESTIMATOR_CLASSES}.get(name.lower())
    if match is None:
        _estimator_class(name)  # raises the UsageError naming the choices
    return match


def _is_regressor(name: str) -> bool:
    from semisup.cli._modelfile import REGRESSOR_CLASSES

    return _estimator_path(name) in REGRESSOR_CLASSES


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


def _param_values(params: list[str]) -> dict:
    """``-p NAME=VALUE`` options as a dict of Python values."""
    values = {}
    for item in params:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--param {item!r}: expected name=value, e.g. --param lam=0.01")
        values[key] = _parse_value(text)
    return values


def _make_estimator(name: str, params: list[str]):
    cls = _estimator_class(name)
    est = cls()
    values = _param_values(params)
    valid = est.get_params()
    unknown = sorted(set(values) - set(valid))
    if unknown:
        raise UsageError(f"{cls.__name__} has no parameter {unknown[0]!r}; its parameters "
                         f"are: {', '.join(sorted(valid))}")
    return est.set_params(**values)


def _make_core(name: str, params: list[str], n_classes: int):
    """The scikit-learn-free core of estimator ``name`` (:mod:`semisup.linear._core`) with
    ``params``; None when the estimator itself must fit.

    The core is the estimator's own fit without scikit-learn's validation and API (the
    command line has read and checked the file), and its model file is the estimator's.
    It serves the parameters it implements: not ``probability=True`` (calibration uses
    scikit-learn), nor ``'auto'`` (its cross-validation does), nor a graph term
    (``gamma_I > 0``, scikit-learn's neighbours).  A value the core refuses is refused by
    the same check, with the same message, as the estimator refuses it; an unknown
    parameter name goes to the estimator, which lists the valid ones.
    """
    import inspect

    from semisup.linear._core import CORES

    core = CORES.get(_estimator_path(name))
    if core is None:
        return None
    values = _param_values(params)
    accepted = set(inspect.signature(core.__init__).parameters) - {"self"}
    if not set(values) <= accepted or values.get("probability", False) is not False \
            or any(isinstance(v, str) and v == "auto" for v in values.values()):
        return None   # calibration and the 'auto' modes' cross-validation use scikit-learn
    gamma = values.get("gamma_I", 0.0)
    if type(gamma) not in (int, float) or gamma != 0:
        return None
    return core(**values)


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


def _read_labeled(path: str, n_features: int | None = None, max_features="auto",
                  regression: bool = False):
    """``(X, y)`` of an SVMlight file; with ``n_features``, shaped like the training data.

    With ``regression`` the labels ``nan`` and ``?`` read as NaN (a missing target)."""
    X, y = io.read_svmlight(path, max_features=max_features, missing_labels=regression)
    if X.shape[1] == 0 and n_features is None:
        raise UsageError(f"{path}: no feature on any line (only labels); expected lines "
                         "'<label> <index>:<value> ...'")
    if n_features is not None:
        if X.shape[1] > n_features:
            raise UsageError(f"{path}: has {X.shape[1]} features, more than the {n_features} "
                             "the model was trained on")
        X.resize((X.shape[0], n_features))  # trailing all-zero columns
    return X, y


def _takes_sparse(est) -> bool:
    try:
        return bool(est.__sklearn_tags__().input_tags.sparse)
    except AttributeError:  # the predict path's LinearModel (sparse X @ dense weights)
        return True


def _as_input(est, X):
    """``X`` as ``est`` takes it: the CSR matrix, or a dense array for a dense-only one."""
    return X if _takes_sparse(est) else X.toarray()


def _check_dense_memory(est, X, path: str, max_features) -> None:
    """An estimator that takes dense input only makes an ``n x d`` array of the file."""
    need = 8 * X.shape[0] * X.shape[1]
    if _takes_sparse(est) or max_features is None or need < 2**28:
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


def _format_values(values: np.ndarray) -> list[str]:
    """Real values as ``repr`` writes them: the shortest text that reads back as the same
    float64."""
    return [repr(v) for v in np.asarray(values, dtype=np.float64).tolist()]


def _classifier_marker(value: float | None) -> float:
    """The unlabeled label of a classifier's file: 0 by default; a number."""
    if value is None:
        return 0.0
    if math.isnan(value):
        raise UsageError("--unlabeled nan/?: a classifier's files mark unlabeled rows with a "
                         "number (default 0); nan and ? are the regressors' marker")
    return value


def _missing_targets(y: np.ndarray, marker: float | None) -> np.ndarray:
    """Rows of a regression file without a target: NaN (``nan``, ``?``) or ``marker``."""
    missing = np.isnan(y)
    if marker is not None and not math.isnan(marker):
        missing |= y == marker
    return missing


def _marker_words(marker: float | None) -> str:
    extra = "" if marker is None or math.isnan(marker) else f" or {marker:g}"
    return f"nan, ?{extra}"


def fit(args) -> int:
    # everything that can be checked without the estimator's module first: a bad name, an
    # unwritable output or a malformed file then costs no scikit-learn import
    regression = _is_regressor(args.estimator)
    _check_output(args.model, "--model")
    _check_output(args.transduction, "--transduction")
    marker = args.unlabeled if regression else _classifier_marker(args.unlabeled)
    X, y = _read_labeled(args.data, max_features=args.max_features, regression=regression)
    if regression:
        missing = _missing_targets(y, marker)
        n_unl = int(missing.sum())
        if n_unl == y.size:
            raise UsageError(f"{args.data}: every one of the {y.size} rows is unlabeled (label "
                             f"{_marker_words(marker)}); a regressor needs rows with a target")
        target = np.where(missing, np.nan, y)
        if n_unl == 0:
            how = ("no row is unlabeled (label nan or ?)" if marker is None or math.isnan(marker)
                   else f"no row has the unlabeled label {marker:g} (nor nan or ?)")
            print(f"semisup fit: warning: {how}: a supervised fit on all {y.size} rows (for a "
                  "regressor 0 is a real target; --unlabeled VALUE names another marker)",
                  file=sys.stderr)
        known = target[~missing]
        what = f"targets in [{known.min():.6g}, {known.max():.6g}]"
    else:
        classes, target = _encode(y, marker)
        n_unl = int(np.sum(target == -1))
        if classes.size < 2:
            raise UsageError(f"{args.data}: {classes.size} class"
                             f"{'es' if classes.size != 1 else ''} among the labeled rows "
                             f"(labels other than {marker:g}); at least 2 are needed")
        if n_unl == 0:
            print(f"semisup fit: warning: no row has the unlabeled label {marker:g}: "
                  "training on labeled rows only (--unlabeled chooses the marker)",
                  file=sys.stderr)
        what = f"classes {', '.join(_format_labels(classes))}"
    est = None if regression else _make_core(args.estimator, args.param, classes.size)
    if est is None:
        est = _make_estimator(args.estimator, args.param)
    _check_dense_memory(est, X, args.data, args.max_features)
    print(f"semisup: {type(est).__name__} on {X.shape[0]} rows ({X.shape[0] - n_unl} "
          f"labeled, {n_unl} unlabeled), {X.shape[1]} features, {what}")
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        if n_unl == 0:  # said above, with the option that changes it: once is enough
            warnings.filterwarnings("ignore", "y has no unlabeled rows", UserWarning)
        # the class codes 0..K-1 / -1 are this command's own coding, never SVMlin's: the
        # estimators' warning about SVMlin's 0 = unlabeled does not apply to them
        warnings.filterwarnings("ignore", category=LabelCodingWarning)
        est.fit(_as_input(est, X), target)
    elapsed = time.perf_counter() - t0
    bundle = {"format": MODEL_FORMAT, "estimator": est,
              "classes": None if regression else classes, "n_features": int(X.shape[1])}
    _save(bundle, args.model)
    print(f"semisup: trained in {elapsed:.3f} s; wrote {args.model}")
    if hasattr(est, "selection_"):   # AutoClassifier: what it chose and why
        print(f"semisup: chose {est.best_candidate_}: {est.selection_}")
    guard = getattr(est, "cv_scores_", None)
    if isinstance(guard, dict) and "keep" in guard:   # fallback="cv" (semisup.safety)
        print(f"semisup: labeled-only CV accuracy {guard['semi_supervised']:.3f} "
              f"(semi-supervised) vs {guard['supervised']:.3f} (supervised counterpart), "
              f"margin score gain {guard['gain']:+.3f} +- {guard['gain_se']:.3f}: "
              + ("kept the semi-supervised fit" if guard["keep"] else
                 "the model is the supervised counterpart (-p fallback=none fits the "
                 "method as published)"))
    if args.transduction and regression:
        io._write_lines(args.transduction, _format_values(est.transduction_))
        print(f"semisup: wrote the fitted values of all training rows to {args.transduction}")
        return 0
    if args.transduction and hasattr(est, "transduction_"):
        io._write_lines(args.transduction,
                        _format_labels(classes[np.asarray(est.transduction_, dtype=int)]))
        print(f"semisup: wrote the labels of all training rows to {args.transduction}")
    return 0


def _save(bundle: dict, path: str) -> None:
    from semisup.cli import _modelfile

    io._write_chunks(path, [_modelfile.dumps(bundle)])


def _load(path: str, linear: bool = False) -> dict:
    """The bundle of a model file, checked from the top down before any part is used.

    With ``linear``, a linear model comes back as a
    :class:`semisup.cli._modelfile.LinearModel` (evaluated from its arrays, scikit-learn
    never imported); any other model, and every model without ``linear``, as its estimator.
    """
    from semisup.cli import _modelfile

    data = Path(path).read_bytes()
    try:
        bundle = _modelfile.load_linear(data) if linear else None
        if bundle is None:
            bundle = _modelfile.loads(data, bundle=True)
    except _modelfile.ModelFileError as exc:
        raise UsageError(f"{path}: not a semisup model file written by 'semisup fit': "
                         f"{exc}") from None
    if not isinstance(bundle, dict) or set(bundle) != _BUNDLE_KEYS \
            or bundle["format"] != MODEL_FORMAT:
        raise UsageError(f"{path}: not a semisup model file (written by 'semisup fit')")
    est, classes, n_features = bundle["estimator"], bundle["classes"], bundle["n_features"]
    name = getattr(est, "stored_class", f"{type(est).__module__}.{type(est).__qualname__}")
    if name not in _modelfile.ESTIMATOR_CLASSES:
        raise UsageError(f"{path}: the model is a {name}, not a semisup estimator")
    if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 0 \
            or getattr(est, "n_features_in_", n_features) != n_features:
        raise UsageError(f"{path}: damaged model file: inconsistent number of features")
    if name in _modelfile.REGRESSOR_CLASSES:
        if classes is not None:
            raise UsageError(f"{path}: damaged model file: class labels for a regressor")
        return bundle
    if not (isinstance(classes, np.ndarray) and classes.ndim == 1 and classes.dtype.kind == "f"
            and classes.size >= 2 and np.all(np.isfinite(classes))
            and np.all(np.diff(classes) > 0)):
        raise UsageError(f"{path}: damaged model file: its class labels are not a sorted "
                         "list of at least 2 distinct numbers")
    codes = np.asarray(getattr(est, "classes_", []))
    if codes.shape != classes.shape or not np.array_equal(codes, np.arange(classes.size)):
        raise UsageError(f"{path}: damaged model file: it lists {classes.size} class labels "
                         f"but its estimator predicts {codes.size} classes")
    return bundle


def predict(args) -> int:
    _check_output(args.output, "-o")
    bundle = _load(args.model, linear=True)
    est, classes = bundle["estimator"], bundle["classes"]
    regression = classes is None
    if regression and args.scores:
        raise UsageError("--scores: a regressor's predictions are already real values; "
                         "leave out --scores")
    marker = args.unlabeled if regression else _classifier_marker(args.unlabeled)
    X, y = _read_labeled(args.data, n_features=bundle["n_features"],
                         max_features=args.max_features, regression=regression)
    X = _as_input(est, X)
    if regression:
        return _predict_values(args, est, X, y, marker)
    pred = classes[np.asarray(est.predict(X), dtype=int)]
    if args.scores:
        scores = np.asarray(est.decision_function(X))
        lines = [" ".join(f"{v:.17g}" for v in np.atleast_1d(row)) for row in scores]
    else:
        lines = _format_labels(pred)
    io._write_lines(args.output, lines)
    print(f"semisup: wrote {'scores' if args.scores else 'predictions'} for {X.shape[0]} "
          f"rows to {args.output}")
    labeled = y != marker
    if labeled.any():
        acc = np.mean(pred[labeled] == y[labeled])
        print(f"semisup: accuracy on the {int(labeled.sum())} labeled rows = "
              f"{100 * acc:.2f} %")
    return 0


def _predict_values(args, est, X, y: np.ndarray, marker: float | None) -> int:
    """``semisup predict`` with a regressor: real values, then the error on known targets."""
    pred = np.asarray(est.predict(X), dtype=np.float64)
    io._write_lines(args.output, _format_values(pred))
    print(f"semisup: wrote predictions for {X.shape[0]} rows to {args.output}")
    known = ~_missing_targets(y, marker)
    if known.any():
        err = pred[known] - y[known]
        spread = float(np.sum((y[known] - y[known].mean()) ** 2))
        r2 = f"{1 - float(err @ err) / spread:.4f}" if spread > 0 else "undefined"
        print(f"semisup: on the {int(known.sum())} rows with a target: RMSE = "
              f"{math.sqrt(float(err @ err) / err.size):.6g}, R^2 = {r2}")
    return 0


def unlabeled_arg(text: str) -> float:
    """``--unlabeled``: a number, or ``nan`` / ``?`` (the regressors' marker, NaN)."""
    import argparse

    word = text.strip()
    if word.lower() in ("nan", "?"):
        return math.nan
    try:
        value = float(word)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a number (or nan / ?), got {text!r}")
    return value


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

    from semisup.cli._modelfile import REGRESSOR_CLASSES

    regressors = sorted(name.rpartition(".")[2] for name in REGRESSOR_CLASSES)
    names, reg = (textwrap.fill(", ".join(group), width=78, initial_indent="  ",
                                subsequent_indent="  ")
                  for group in ([n for n in estimator_names() if n not in regressors],
                                regressors))
    return (f"classifiers (case-insensitive):\n{names}\n\n"
            f"regressors (real targets; rows labeled nan or ? are unlabeled, and 0 is a\n"
            f"target; --unlabeled VALUE names one more marker):\n{reg}\n\n"
            "parameters:\n"
            "  -p NAME=VALUE sets a constructor parameter of the estimator (repeat -p for\n"
            "  more); VALUE is read as a Python literal (0.001, 10, True, None, 'rbf',\n"
            "  [1, 2]) or else taken as a word (kernel=rbf).  'semisup fit ESTIMATOR -h'\n"
            "  lists ESTIMATOR's parameters and their defaults.\n\n"
            "example:\n"
            "  semisup fit TransductiveSVM train.svm -m model.semisup -p lam=0.001\n"
            "  semisup predict model.semisup test.svm -o predictions.txt\n"
            "  semisup fit LapRLSRegressor prices.svm -m reg.semisup -p gamma_I=10")


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
    import textwrap

    convention = ("for a classifier rows labeled UNLABELED (default 0, SVMlight's "
                  "transductive convention) are unlabeled; for a regressor rows labeled nan "
                  "or ? (and UNLABELED if given)")
    p = sub.add_parser("fit", help="fit any semisup estimator on an SVMlight/libsvm file",
                       description=textwrap.fill("Fit an estimator; " + convention + ".",
                                                 width=78),
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
    p.add_argument("--unlabeled", type=unlabeled_arg, default=None, metavar="UNLABELED",
                   help="label value that marks unlabeled rows (classifiers: default 0; "
                        "regressors: nan and ? always, this value as well)")
    p.add_argument("--transduction", metavar="FILE",
                   help="also write the labels (a regressor: the fitted values) the model "
                        "gives every training row")
    p.add_argument("--max-features", type=max_features_arg, default="auto", metavar="N",
                   help=MAX_FEATURES_HELP)
    p.set_defaults(run=fit)
    q = sub.add_parser("predict", help="predict with a model written by 'semisup fit'",
                       description="Predict the rows of an SVMlight/libsvm file; prints the "
                                   "accuracy (a regressor: RMSE and R^2) on its labeled rows "
                                   "(" + convention + ").")
    q.add_argument("model", help="model file written by 'semisup fit'")
    q.add_argument("data", help="file in SVMlight/libsvm format (labels may be the "
                                "unlabeled marker)")
    q.add_argument("-o", "--output", required=True, help="file for one prediction per line")
    q.add_argument("--scores", action="store_true",
                   help="write decision_function values instead of labels (classifiers)")
    q.add_argument("--unlabeled", type=unlabeled_arg, default=None, metavar="UNLABELED",
                   help="label value that marks rows to leave out of the accuracy (default "
                        "0) or, for a regressor, of the error (nan and ? always)")
    q.add_argument("--max-features", type=max_features_arg, default="auto", metavar="N",
                   help=MAX_FEATURES_HELP)
    q.set_defaults(run=predict)
