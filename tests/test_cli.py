"""The command-line tools: SVMlin compatibility, errors without tracebacks, the demo."""

import numpy as np
import pytest
import scipy.sparse as sp

from semisup import io
from semisup.cli import svmlin
from semisup.cli.main import main as semisup_main


@pytest.fixture
def toy_files(tmp_path):
    rng = np.random.default_rng(0)
    n, d = 80, 6
    y_true = np.where(np.arange(n) < n // 2, 1.0, -1.0)
    X = rng.normal(size=(n, d))
    X[:, 0] += 3 * y_true
    labels = np.zeros(n)
    labels[[0, 1, 2, 40, 41, 42]] = y_true[[0, 1, 2, 40, 41, 42]]
    ex, lab = tmp_path / "train_ex", tmp_path / "train_lab"
    io.write_svmlin_examples(ex, sp.csr_matrix(X))
    io.write_svmlin_labels(lab, labels)
    return tmp_path, ex, lab, X, y_true


@pytest.mark.parametrize("algo", ["0", "1", "2", "3"])
def test_train_then_test_round_trip(toy_files, algo, capsys):
    tmp, ex, lab, X, y_true = toy_files
    lam = "1" if algo == "0" else "0.01"  # least squares interpolates 6 points at small lam
    rc = svmlin.main(["-A", algo, "-W", lam, "-o", str(tmp), str(ex), str(lab)])
    assert rc == 0
    w = io.read_vector(tmp / "train_ex.weights")
    out = io.read_vector(tmp / "train_ex.outputs")
    assert w.shape == (7,) and out.shape == (80,)
    np.testing.assert_allclose(out, X @ w[:6] + w[6], rtol=1e-9, atol=1e-12)
    test_lab = tmp / "test_lab"
    io.write_svmlin_labels(test_lab, y_true)
    capsys.readouterr()
    rc = svmlin.main(["-f", str(tmp / "train_ex.weights"), "-o", str(tmp), str(ex),
                      str(test_lab)])
    assert rc == 0
    acc = float(capsys.readouterr().out.split("Accuracy = ")[1].split()[0])
    assert acc > 90


def test_svmlight_input(toy_files, tmp_path):
    _, ex, lab, X, y_true = toy_files
    f = tmp_path / "train.svm"
    io.write_svmlight(f, sp.csr_matrix(X), io.read_svmlin_labels(lab))
    assert svmlin.main(["-A", "2", "-W", "0.01", "-o", str(tmp_path), str(f)]) == 0
    assert (tmp_path / "train.svm.weights").exists()


@pytest.mark.parametrize("content, where", [
    ("1:0.5 2:x\n", "2:x"), ("0:1.0\n", "0:1.0"), ("3:1 2:1\n", "2:1"), ("1:nan\n", "nan"),
])
def test_malformed_examples_fail_with_line_number(tmp_path, capsys, content, where):
    ex = tmp_path / "ex"
    ex.write_text("1:1 2:1\n" + content)
    lab = tmp_path / "lab"
    lab.write_text("1\n-1\n")
    rc = svmlin.main(["-o", str(tmp_path), str(ex), str(lab)])
    err = capsys.readouterr().err
    assert rc == 2
    assert f"{ex}:2:" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("labels, message", [
    ("1\n-1\n1\n", "3"),            # ragged: 3 labels for 2 examples
    ("1\nabc\n", ":2:"),
    ("1\n2\n", ":2:"),
    ("", "empty"),
])
def test_bad_labels_file(tmp_path, capsys, labels, message):
    ex = tmp_path / "ex"
    ex.write_text("1:1\n2:1\n")
    lab = tmp_path / "lab"
    lab.write_text(labels)
    rc = svmlin.main(["-o", str(tmp_path), str(ex), str(lab)])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err


def test_missing_file_and_single_class(tmp_path, capsys):
    assert svmlin.main([str(tmp_path / "nope"), str(tmp_path / "nope2")]) == 2
    assert "no such file" in capsys.readouterr().err
    ex, lab = tmp_path / "ex", tmp_path / "lab"
    ex.write_text("1:1\n2:1\n1:2\n")
    lab.write_text("1\n1\n0\n")
    assert svmlin.main(["-A", "2", "-o", str(tmp_path), str(ex), str(lab)]) == 2
    assert "class" in capsys.readouterr().err


def test_demo_runs_and_shows_gain(capsys):
    assert semisup_main(["demo", "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    assert "| 3 vs 8 |" in out and "AutoClassifier (chooses)" in out
    assert "AutoClassifier on 3 vs 8: chose" in out
