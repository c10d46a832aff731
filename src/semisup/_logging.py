"""Diagnostics in one place: the ``semisup`` logger tree, progress bars, convergence reports.

- Every module logs to ``logging.getLogger("semisup.<module>")`` (:func:`get_logger`).
  An estimator's ``verbose`` only sets the level for the duration of its ``fit``
  (:func:`verbosity`: ``1`` INFO, ``2`` and more DEBUG) and, when the application has not
  configured logging, prints to stderr with the elapsed time of the fit.
- Known-length loops (annealing temperatures, ``lam_u`` stages, one-vs-rest classes,
  k-means restarts, graph blocks) show a ``tqdm`` bar when ``verbose`` (:func:`progress`).
- Solvers call :func:`report_unconverged` when they stop at an iteration limit; an
  estimator's ``fit`` runs inside :func:`convergence_check`, which turns all of its reports
  into **one** :class:`~sklearn.exceptions.ConvergenceWarning` naming the parameter to raise.
  Fits nested in another fit (e.g. the cross-validation folds of ``probability=True``)
  report to the outer one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
import warnings
from collections import Counter
from contextlib import contextmanager
from contextvars import ContextVar

ROOT = "semisup"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_CONTEXTLIB_FILE = contextlib.__file__


def _tqdm_class():
    """``tqdm`` on first use: ``import semisup`` and small fits must not pay for it."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a declared dependency
        return None
    return tqdm


def get_logger(name: str) -> logging.Logger:
    """The logger of module ``name`` under the ``semisup`` tree (``semisup.linear.tsvm``...)."""
    if name != ROOT and not name.startswith(ROOT + "."):
        name = f"{ROOT}.{name}"
    return logging.getLogger(name)


class _ElapsedFormatter(logging.Formatter):
    def __init__(self, start: float):
        super().__init__()
        self.start = start

    def format(self, record: logging.LogRecord) -> str:
        return f"[{record.created - self.start:8.2f}s] {record.name}: {record.getMessage()}"


class _TqdmHandler(logging.StreamHandler):
    """Writes through ``tqdm.write`` so that log lines do not break a progress bar."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = self.format(record)
            tqdm = _tqdm_class()
            if tqdm is not None:
                tqdm.write(msg, file=self.stream)
            else:
                self.stream.write(msg + "\n")
            self.flush()
        except Exception:  # pragma: no cover - logging must never raise
            self.handleError(record)


def _verbose_level(verbose) -> int | None:
    if not verbose:
        return None
    return logging.INFO if int(verbose) <= 1 else logging.DEBUG


@contextmanager
def verbosity(verbose):
    """Raise the ``semisup`` logger to the level ``verbose`` asks for, for one fit.

    ``verbose=0`` changes nothing (the application's logging configuration rules). When
    neither the ``semisup`` logger nor any of its ancestors has a handler, a temporary
    stderr handler prefixes each line with the seconds since the fit started.
    """
    level = _verbose_level(verbose)
    if level is None:
        yield
        return
    root = logging.getLogger(ROOT)
    old_level = root.level
    handler = None
    if old_level == logging.NOTSET or old_level > level:
        root.setLevel(level)
    if not root.hasHandlers():
        handler = _TqdmHandler(sys.stderr)
        handler.setFormatter(_ElapsedFormatter(time.time()))
        root.addHandler(handler)
    try:
        yield
    finally:
        root.setLevel(old_level)
        if handler is not None:
            root.removeHandler(handler)


class _NullBar:
    """Stands in for a progress bar when ``verbose`` is off."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress(total: int | None, desc: str, verbose=0, unit: str = "it"):
    """A ``tqdm`` bar over a loop of (at most) ``total`` steps when ``verbose``, else a no-op.

    The bar shows the elapsed time and the rate; it goes to stderr and is removed when
    the loop ends (the summary goes to the log).
    """
    if not verbose or (total is not None and total < 2):
        return _NullBar()
    tqdm = _tqdm_class()
    if tqdm is None:
        return _NullBar()
    return tqdm(total=total, desc=desc, unit=unit, leave=False, file=sys.stderr,
                 mininterval=0.5, dynamic_ncols=True)


_reports: ContextVar[list | None] = ContextVar("semisup_convergence_reports", default=None)


def report_unconverged(solver: str, detail: str = "") -> None:
    """Record that one inner solve of ``solver`` stopped at its iteration limit.

    Inside an estimator's ``fit`` the record joins that fit's single warning; outside one
    (a solver called directly) it is logged at DEBUG level, the caller having the
    solver's ``converged`` flag.
    """
    reports = _reports.get()
    if reports is None:
        get_logger("solvers").debug("%s stopped before converging %s", solver, detail)
    else:
        reports.append((solver, detail))


@contextmanager
def convergence_check(estimator, parameters: dict[str, str]):
    """Collect the non-convergence reports of one ``fit``; warn once at the end.

    Parameters
    ----------
    estimator : estimator
        Named in the warning; its current parameter values are quoted.
    parameters : dict
        For each solver name passed to :func:`report_unconverged`, the estimator
        parameter that bounds it (``{"mfn": "max_iter", "da_inner": "max_inner_iter"}``).
    """
    if _reports.get() is not None:  # nested fit: the outermost fit warns
        yield
        return
    token = _reports.set([])
    try:
        yield
        reports = _reports.get()
    finally:
        _reports.reset(token)
    if not reports:
        return
    counts = Counter(solver for solver, _ in reports)
    parts, fixes = [], []
    for solver, n in counts.items():
        parts.append(f"{n} {solver} solve{'s' if n > 1 else ''}")
        param = parameters.get(solver, "max_iter")
        value = getattr(estimator, param, None)
        fix = f"{param} (currently {param}={value!r})" if value is not None else param
        if fix not in fixes:
            fixes.append(fix)
    last_detail = next((d for _, d in reversed(reports) if d), "")
    message = (f"{type(estimator).__name__} did not converge: {', '.join(parts)} stopped at "
               f"their iteration limit{' (' + last_detail + ')' if last_detail else ''}; "
               f"raise {' and '.join(fixes)} or loosen tol")
    from sklearn.exceptions import ConvergenceWarning  # on demand: a costly import

    warn_at_caller(message, ConvergenceWarning)


def warn_at_caller(message: str, category: type[Warning]) -> None:
    """Warn with the location of the first frame outside semisup: the user's call.

    Every warning of the library goes through here, so it points at the user's ``fit`` (or
    other call) however deep in the library it is raised and whatever wraps the call
    (one-vs-rest, guards, the thread policy of :func:`semisup.base.fit_thread_policy`),
    as ``warnings.warn(..., skip_file_prefixes=...)`` does from Python 3.12.  Also skipped:
    ``contextlib``'s own frames (a warning raised as a ``with`` block of the library exits);
    not the rest of the standard library nor other packages, so a fit called by
    scikit-learn's cross-validation warns at scikit-learn's call, as ``stacklevel`` did.
    """
    frame, level = sys._getframe(1), 2
    while frame is not None and (frame.f_code.co_filename.startswith(_PACKAGE_DIR + os.sep)
                                 or frame.f_code.co_filename == _CONTEXTLIB_FILE):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
