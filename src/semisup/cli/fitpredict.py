"""``semisup fit`` / ``semisup predict``: any semisup estimator over SVMlight/libsvm files.

Label convention of the files: SVMlight's transductive one, ``0`` marks an unlabeled row
(``--unlabeled -1`` chooses ``-1`` instead, for multi-class files whose classes are
``0..K-1``). Class labels are recoded to ``0..K-1`` for the estimator, so that ``-1`` can be
a class in a file, and mapped back on prediction.

Model files are written with ``skops`` (no pickle): loading refuses any type that is not
semisup's, numpy's, scipy's or scikit-learn's, so a model file from elsewhere cannot run
code.
"""

from __future__ import annotations

import ast
import sys
import time
from pathlib import Path

import numpy as np

from semisup import io

MODEL_FORMAT = 1
# types a model file may hold; skops refuses anything else unless listed here
_TRUSTED_MODULES = ("semisup.", "numpy.", "scipy.sparse.", "sklearn.")


class UsageError(Exception):
    """A command-line problem to report in one line."""


def estimator_names() -> list[str]:
    """Public semisup estimators that can be fitted and predict."""
    import semisup

    names = []
    for name in semisup.__all__:
        obj = getattr(semisup, name)
        if isinstance(obj, type) and hasattr(obj, "fit") and hasattr(obj, "predict"):
            names.append(name)
    return sorted(names)


def _make_estimator(name: str, params: list[str]):
    import semisup

    names = estimator_names()
    match = {n.lower(): n for n in names}.get(name.lower())
    if match is None:
        raise UsageError(f"unknown estimator {name!r}; choose one of: {', '.join(names)}")
    est = getattr(semisup, match)()
    values = {}
    for item in params:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--param {item!r}: expected name=value, e.g. --param lam=0.01")
        try:
            values[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            values[key] = text  # a bare word: a string option such as kernel=rbf
    valid = est.get_params()
    unknown = sorted(set(values) - set(valid))
    if unknown:
        raise UsageError(f"{match} has no parameter {unknown[0]!r}; its parameters are: "
                         f"{', '.join(sorted(valid))}")
    return est.set_params(**values)


def _read_labeled(path: str, n_features: int | None = None):
    """``(X, y)`` of an SVMlight file; with ``n_features``, shaped like the training data."""
    X, y = io.read_svmlight(path)
    if n_features is not None:
        if X.shape[1] > n_features:
            raise UsageError(f"{path}: has {X.shape[1]} features, more than the {n_features} "
                             "the model was trained on")
        X.resize((X.shape[0], n_features))  # trailing all-zero columns
    return X, y


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
    out = Path(args.model)
    if out.parent and not out.parent.is_dir():
        raise UsageError(f"--model {args.model}: directory {out.parent} does not exist")
    X, y = _read_labeled(args.data)
    classes, coded = _encode(y, args.unlabeled)
    n_unl = int(np.sum(coded == -1))
    if classes.size < 2:
        raise UsageError(f"{args.data}: {classes.size} class among the labeled rows "
                         f"(labels other than {args.unlabeled:g}); at least 2 are needed")
    if n_unl == 0:
        print(f"semisup: warning: no row has the unlabeled label {args.unlabeled:g}: "
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
    if args.transduction and hasattr(est, "transduction_"):
        io._write_lines(args.transduction,
                        _format_labels(classes[np.asarray(est.transduction_, dtype=int)]))
        print(f"semisup: wrote the labels of all training rows to {args.transduction}")
    return 0


def _save(bundle: dict, path: str) -> None:
    import skops.io as sio

    io._write_chunks(path, [sio.dumps(bundle)])


def _load(path: str) -> dict:
    import skops.io as sio

    try:
        data = Path(path).read_bytes()
        untrusted = sio.get_untrusted_types(data=data)
    except FileNotFoundError:
        raise
    except Exception as exc:  # skops raises several types for a file that is not its own
        raise UsageError(f"{path}: not a semisup model file ({exc})") from None
    foreign = [t for t in untrusted if not t.startswith(_TRUSTED_MODULES)]
    if foreign:
        raise UsageError(f"{path}: refusing to load types from outside semisup, numpy, scipy "
                         f"and scikit-learn: {', '.join(foreign)}")
    bundle = sio.loads(data, trusted=untrusted)
    if not isinstance(bundle, dict) or bundle.get("format") != MODEL_FORMAT:
        raise UsageError(f"{path}: not a semisup model file (written by 'semisup fit')")
    return bundle


def predict(args) -> int:
    bundle = _load(args.model)
    est, classes = bundle["estimator"], bundle["classes"]
    X, y = _read_labeled(args.data, n_features=bundle["n_features"])
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


def add_parsers(sub) -> None:
    """Register ``fit`` and ``predict`` on the ``semisup`` command's subparsers."""
    convention = ("rows labeled UNLABELED (default 0, SVMlight's transductive convention) "
                  "are unlabeled")
    p = sub.add_parser("fit", help="fit any semisup estimator on an SVMlight/libsvm file",
                       description="Fit an estimator; " + convention + ".")
    p.add_argument("estimator", help="estimator class name, e.g. TransductiveSVM, LapRLS, "
                                     "PrototypeVectorMachine (case-insensitive)")
    p.add_argument("data", help="training file in SVMlight/libsvm format")
    p.add_argument("-m", "--model", required=True, help="model file to write (skops format)")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="estimator parameter, repeatable (e.g. -p lam=0.001 -p kernel=rbf)")
    p.add_argument("--unlabeled", type=float, default=0.0, metavar="UNLABELED",
                   help="label value that marks unlabeled rows (default 0)")
    p.add_argument("--transduction", metavar="FILE",
                   help="also write the labels the model gives every training row")
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
    q.set_defaults(run=predict)
