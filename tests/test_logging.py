"""Diagnostics: the semisup logger tree, verbose, progress bars, one ConvergenceWarning per fit."""

import ast
import logging
import pathlib
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import semisup
from semisup import (
    L2SVM,
    DeterministicAnnealingSVM,
    LapSVM,
    LinearLapSVM,
    RLSClassifier,
    TransductiveSVM,
)
from semisup._logging import convergence_check, progress, report_unconverged


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-1.5, 1, size=(100, 4)), rng.normal(1.5, 1, size=(100, 4))])
    y_true = np.repeat([0, 1], 100)
    y = np.full(200, -1)
    labeled = np.r_[0:5, 100:105]
    y[labeled] = y_true[labeled]
    return X, y


@pytest.fixture(scope="module")
def three_classes():
    rng = np.random.default_rng(1)
    centres = np.array([[0, 4], [4, 0], [-4, -4]])
    X = np.vstack([rng.normal(c, 1, size=(60, 2)) for c in centres])
    y = np.full(180, -1)
    for k in range(3):
        y[60 * k:60 * k + 4] = k
    return X, y


def _convergence_warnings(fit):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return [w for w in caught if issubclass(w.category, ConvergenceWarning)]


@pytest.mark.parametrize("est, param", [
    (TransductiveSVM(max_iter=1), "max_iter"),
    (DeterministicAnnealingSVM(max_iter=1), "max_iter"),
    (DeterministicAnnealingSVM(max_inner_iter=1, kl_tol=1e-30), "max_inner_iter"),
    (L2SVM(max_iter=1, solver="mfn"), "max_iter"),
    (RLSClassifier(max_cg_iter=1, tol=1e-14), "max_cg_iter"),
    (LinearLapSVM(max_iter=1, solver="mfn"), "max_iter"),
    (LapSVM(loss="squared_hinge", solver="primal", max_iter=2), "max_iter"),
], ids=lambda v: type(v).__name__ if not isinstance(v, str) else v)
def test_one_convergence_warning_per_fit_naming_the_parameter(problem, est, param):
    X, y = problem
    caught = _convergence_warnings(lambda: est.fit(X, y))
    assert len(caught) == 1
    message = str(caught[0].message)
    assert f"raise {param} (currently {param}={getattr(est, param)!r})" in message
    assert type(est).__name__ in message
    assert caught[0].filename == __file__   # points at the caller's fit, not at semisup


def test_one_warning_for_one_vs_rest_and_probability_folds(three_classes):
    X, y = three_classes
    est = TransductiveSVM(max_iter=1, probability=True)
    caught = _convergence_warnings(lambda: est.fit(X, y))
    assert len(caught) == 1
    # 3 binary problems in the fit and in each of the 4 folds, several MFN solves each
    n = int(str(caught[0].message).split(": ")[1].split(" mfn")[0])
    assert n >= 3 * 5


@pytest.mark.parametrize("est", [TransductiveSVM(), DeterministicAnnealingSVM(), L2SVM()],
                         ids=lambda e: type(e).__name__)
def test_default_fits_do_not_warn(problem, est):
    X, y = problem
    assert _convergence_warnings(lambda: est.fit(X, y)) == []


def test_nested_reports_reach_the_outermost_fit():
    class Dummy:
        max_iter = 3

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with convergence_check(Dummy(), {"inner": "max_iter"}):
            report_unconverged("inner")
            with convergence_check(Dummy(), {}):
                report_unconverged("inner")
    assert len(caught) == 1 and "2 inner solves" in str(caught[0].message)
    # outside any fit: nothing is raised
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report_unconverged("inner")


def test_verbose_logs_to_the_semisup_tree(problem, caplog):
    X, y = problem
    with caplog.at_level(logging.DEBUG, logger="semisup"):
        TransductiveSVM().fit(X, y)
    quiet = [r for r in caplog.records if r.levelno >= logging.INFO]
    caplog.clear()
    logging.getLogger("semisup").setLevel(logging.NOTSET)
    TransductiveSVM(verbose=1, fallback="none").fit(X, y)
    DeterministicAnnealingSVM(verbose=2).fit(X, y)
    names = {r.name for r in caplog.records}
    assert "semisup.solvers.s3vm" in names  # where the TSVM and DA algorithms live
    assert all(n.startswith("semisup.") for n in names)
    assert any("TSVM:" in r.getMessage() and r.levelno == logging.INFO
               for r in caplog.records)
    # verbose only lasts for its fit
    assert logging.getLogger("semisup").level == logging.NOTSET
    assert quiet and all(r.name.startswith("semisup") for r in quiet)


def test_verbose_without_logging_config_prints_elapsed_time(problem, capsys, monkeypatch):
    X, y = problem
    # as in a script that never configured logging (pytest puts handlers on the root)
    monkeypatch.setattr(logging.getLogger(), "handlers", [])
    root = logging.getLogger("semisup")
    assert not root.hasHandlers()
    handlers = list(root.handlers)
    # as published: the final fit of the default guard may be the supervised counterpart
    TransductiveSVM(verbose=1, fallback="none").fit(X, y)
    err = capsys.readouterr().err
    assert "s] semisup.solvers.s3vm: TSVM:" in err         # "[    0.05s] ..." prefix
    assert "TSVM lam_u stages" in err                      # the tqdm bar
    assert root.handlers == handlers                       # the temporary handler is gone
    TransductiveSVM().fit(X, y)
    assert capsys.readouterr().err == ""


def test_progress_is_a_no_op_when_quiet(capsys):
    with progress(10, "loop", verbose=0) as bar:
        for _ in range(10):
            bar.update()
    assert capsys.readouterr().err == ""
    with progress(10, "loop", verbose=1) as bar:
        for _ in range(10):
            bar.update()
    assert "loop" in capsys.readouterr().err


def test_library_code_never_prints():
    """Diagnostics go through logging; only the command-line tools write to stdout."""
    root = pathlib.Path(semisup.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        if "cli" in path.relative_to(root).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
                offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert offenders == []


def test_every_library_warning_points_at_the_caller():
    """Warnings go through warn_at_caller (the first frame outside semisup), never through
    a fixed stacklevel that a wrapper or a new private layer would shift."""
    root = pathlib.Path(semisup.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        if path.name == "_logging.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "warn"
                    and getattr(node.func.value, "id", None) == "warnings"):
                offenders.append(f"{path.relative_to(root)}:{node.lineno}")
    assert offenders == []
