"""Issue 27's command-line rough edges: each one a clear one-line message, no internal names."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
import scipy.sparse as sp

from semisup import io
from semisup.cli import svmlin
from semisup.cli.main import main as semisup_main


@pytest.fixture
def files(tmp_path):
    """An SVMlin examples/labels pair, the same data as one SVMlight file, a 2-class model."""
    rng = np.random.default_rng(0)
    n = 60
    y_true = np.where(np.arange(n) < n // 2, 1.0, -1.0)
    X = rng.normal(size=(n, 4))
    X[:, 0] += 3 * y_true
    labels = np.zeros(n)
    labels[[0, 1, 2, 30, 31, 32]] = y_true[[0, 1, 2, 30, 31, 32]]
    io.write_svmlin_examples(tmp_path / "ex", sp.csr_matrix(X))
    io.write_svmlin_labels(tmp_path / "lab", labels)
    io.write_svmlight(tmp_path / "train.svm", X, labels)
    io.write_svmlight(tmp_path / "test.svm", X, y_true)
    return tmp_path


def _error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and ".part" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0], err
    return lines[0]


def _unwritable_folder() -> str:
    """A folder in which even root cannot create a file."""
    if not os.path.isdir("/proc/sys"):
        pytest.skip("needs Linux's /proc/sys (a folder no one can create files in)")
    return "/proc/sys"


def test_svmlin_output_that_is_a_file(files, capsys):
    assert svmlin.main(["-o", str(files / "lab"), str(files / "ex"), str(files / "lab")]) == 2
    err = _error(capsys)
    assert "File exists" not in err and "is a file; -o names the folder" in err


def test_svmlin_output_folder_without_write_access(files, capsys):
    folder = _unwritable_folder()
    assert svmlin.main(["-o", folder, str(files / "ex"), str(files / "lab")]) == 2
    err = _error(capsys)
    assert f"-o {folder}: cannot create files in {folder}" in err
    assert not re.search(r"/proc/sys/\S", err)  # no temporary file name


def test_svmlight_file_with_a_labels_file(files, capsys):
    assert svmlin.main([str(files / "train.svm"), str(files / "lab")]) == 2
    err = _error(capsys)
    assert "missing ':'" not in err
    assert "is an SVMlight file" in err and "give it alone" in err


@pytest.mark.parametrize("where", ["missing", "unwritable", "folder"])
def test_predict_output_that_cannot_be_written(files, capsys, where):
    model = files / "m.model"
    assert semisup_main(["fit", "L2SVM", str(files / "train.svm"), "-m", str(model)]) == 0
    capsys.readouterr()
    out = {"missing": str(files / "no" / "p.txt"), "folder": str(files),
           "unwritable": os.path.join(_unwritable_folder() if where == "unwritable" else "",
                                      "p.txt")}[where]
    assert semisup_main(["predict", str(model), str(files / "test.svm"), "-o", out]) == 2
    err = _error(capsys)
    assert f"-o {out}: " in err
    assert {"missing": "does not exist", "folder": "is a folder",
            "unwritable": "cannot create files"}[where] in err


def test_fit_outputs_are_checked_before_training(files, capsys, monkeypatch):
    from semisup.linear import svm

    monkeypatch.setattr(svm.L2SVM, "fit", lambda *a, **k: pytest.fail("trained"))
    for flag in ("-m", "--transduction"):
        extra = ["-m", str(files / "m")] if flag == "--transduction" else []
        argv = ["fit", "L2SVM", str(files / "train.svm"), *extra,
                flag, str(files / "no" / "x")]
        assert semisup_main(argv) == 2
        assert "does not exist" in _error(capsys)


def test_model_with_the_wrong_number_of_classes(files, capsys):
    from semisup.cli import fitpredict

    model = files / "m.model"
    assert semisup_main(["fit", "L2SVM", str(files / "train.svm"), "-m", str(model)]) == 0
    bundle = fitpredict._load(str(model))
    bundle["classes"] = np.array([-1.0, 1.0, 2.0])  # three labels for a two-class estimator
    fitpredict._save(bundle, str(model))
    capsys.readouterr()
    assert semisup_main(["predict", str(model), str(files / "test.svm"), "-o",
                         str(files / "p")]) == 2
    err = _error(capsys)
    assert "IndexError" not in err and "lists 3 class labels but its estimator predicts 2" in err
    assert not (files / "p").exists()


def test_fit_warnings_are_one_line(files, capsys):
    """A LapRLS graph with two components warns (GraphWarning): one line, no source line."""
    far = files / "far.svm"
    X = np.r_[np.zeros((10, 2)), np.full((10, 2), 100.0)] + \
        np.random.default_rng(0).normal(size=(20, 2))
    y = np.zeros(20)
    y[[0, 10]] = [1, -1]
    io.write_svmlight(far, X, y)
    assert semisup_main(["fit", "LapRLS", str(far), "-m", str(files / "m")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err and all(line.startswith("semisup fit: warning: ") for line in err)
    assert any(line.endswith("(GraphWarning)") for line in err)


def test_svmlin_collapse_warning_in_svmlin_words(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)) + 20.0  # off-centre: a strong ridge leaves only the bias
    labels = np.zeros(60)
    labels[[0, 1, 2, 30, 31, 32]] = [1, 1, 1, -1, -1, -1]
    X[:30, 0] += 2
    io.write_svmlight(tmp_path / "c.svm", X, labels)
    assert svmlin.main(["-A", "2", "-W", "10000", "-o", str(tmp_path),
                        str(tmp_path / "c.svm")]) == 0
    err = capsys.readouterr().err
    assert "collapsed to one class" in err
    assert "SVMlinModel" not in err and "class 0" not in err
    assert re.search(r"unlabeled examples was labeled [+-]1", err)
    assert "(semisup-svmlin: lower -W, or check -R)" in err


def test_fit_active_search_pipeline_points_to_its_command(files, capsys):
    assert semisup_main(["fit", "ActiveSearchPipeline", str(files / "train.svm"), "-m",
                         str(files / "m")]) == 2
    assert "semisup active-search" in _error(capsys)


def test_fit_help_lists_estimators_and_parameters(capsys):
    with pytest.raises(SystemExit) as exc:
        semisup_main(["fit", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name in ("TransductiveSVM", "LapRLS", "PrototypeVectorMachine", "CCCPS3VM"):
        assert name in out
    assert "ActiveSearchPipeline" not in out
    assert "-p NAME=VALUE" in out and "Python literal" in out
    with pytest.raises(SystemExit):
        semisup_main(["fit", "laprls", "-h"])
    out = capsys.readouterr().out
    assert "parameters of LapRLS" in out and "gamma_I=" in out and "n_neighbors=6" in out


def test_max_features_flag(files, capsys):
    """--max-features reaches the reader in both commands (the guard is in test_io.py)."""
    assert semisup_main(["fit", "L2SVM", str(files / "train.svm"), "-m", str(files / "m"),
                         "--max-features", "3"]) == 2
    assert "feature index 4 is above the limit of 3 features" in _error(capsys)
    assert not (files / "m").exists()
    assert svmlin.main(["--max-features", "3", "-o", str(files), str(files / "ex"),
                        str(files / "lab")]) == 2
    assert "above the limit of 3" in _error(capsys)
    assert semisup_main(["fit", "L2SVM", str(files / "train.svm"), "-m", str(files / "m"),
                         "--max-features", "4"]) == 0
    with pytest.raises(SystemExit):
        semisup_main(["fit", "L2SVM", "x", "-m", "y", "--max-features", "0"])
    assert "expected 'auto', 'none' or an integer >= 1" in capsys.readouterr().err


def test_dense_only_estimator_on_a_wide_file(tmp_path, capsys, monkeypatch):
    """A dense-only estimator makes an n x d array of the file: checked against the memory
    available before fitting (4 rows x 9e6 columns = 0.27 GiB against 16 MiB; the reader's
    own check is set aside with an explicit --max-features). Every estimator the command line
    offers takes sparse input today, so one is made dense-only for the test."""
    from semisup import RhoTSVM
    from semisup import io as semisup_io

    sparse_tags = RhoTSVM.__sklearn_tags__

    def dense_only(self):
        tags = sparse_tags(self)
        tags.input_tags.sparse = False
        return tags

    monkeypatch.setattr(RhoTSVM, "__sklearn_tags__", dense_only)
    path = tmp_path / "wide.svm"
    path.write_text("1 1:1\n-1 2:1\n0 3:1\n0 1:1 9000000:1\n")
    monkeypatch.setattr(semisup_io, "available_memory", lambda: 2**24)
    assert semisup_main(["fit", "RhoTSVM", str(path), "-m", str(tmp_path / "m"),
                         "--max-features", "10000000"]) == 2
    err = _error(capsys)
    assert "RhoTSVM takes dense input" in err and "GiB" in err
    assert not (tmp_path / "m").exists()
