"""``semisup fit`` / ``semisup predict`` over SVMlight files, and ``--version``."""

import fractions

import numpy as np
import pytest
from sklearn.datasets import make_moons

from semisup import LapRLS, PrototypeVectorMachine, io
from semisup._version import __version__
from semisup.cli import main as semisup_main
from semisup.cli import svmlin


@pytest.fixture
def moons_files(tmp_path):
    X, y = make_moons(200, noise=0.08, random_state=0)
    y = np.where(y == 1, 1.0, -1.0)
    rng = np.random.default_rng(0)
    y_train = np.zeros_like(y)  # 0 = unlabeled in the files
    labeled = np.r_[rng.choice(np.flatnonzero(y > 0), 4, replace=False),
                    rng.choice(np.flatnonzero(y < 0), 4, replace=False)]
    y_train[labeled] = y[labeled]
    io.write_svmlight(tmp_path / "train.svm", X, y_train)
    io.write_svmlight(tmp_path / "test.svm", X, y)
    return tmp_path, X, y, y_train


@pytest.mark.parametrize("name, cls, params", [
    ("LapRLS", LapRLS, {"gamma_I": 1.0, "n_neighbors": 6}),
    ("prototypevectormachine", PrototypeVectorMachine, {"random_state": 0}),
])
def test_fit_predict_roundtrip(moons_files, capsys, name, cls, params):
    path, X, y, y_train = moons_files
    model, pred = path / "m.skops", path / "pred.txt"
    argv = ["fit", name, str(path / "train.svm"), "-m", str(model),
            "--transduction", str(path / "tr.txt")]
    for key, value in params.items():
        argv += ["-p", f"{key}={value}"]
    assert semisup_main.main(argv) == 0
    assert semisup_main.main(["predict", str(model), str(path / "test.svm"),
                              "-o", str(pred)]) == 0
    out = capsys.readouterr().out
    # the same estimator fitted in Python, on the library's label convention
    y_lib = np.where(y_train == 0, -1, (y_train > 0).astype(int))
    ref = cls(**params).fit(X, y_lib)
    expected = np.where(ref.predict(X) == 1, 1, -1)
    got = np.loadtxt(pred)
    np.testing.assert_array_equal(got, expected)
    acc = 100 * np.mean(expected == y)
    assert f"accuracy on the 200 labeled rows = {acc:.2f} %" in out
    transduced = np.loadtxt(path / "tr.txt")
    np.testing.assert_array_equal(transduced[y_train != 0], y_train[y_train != 0])
    assert semisup_main.main(["predict", str(model), str(path / "test.svm"),
                              "-o", str(pred), "--scores"]) == 0
    np.testing.assert_allclose(np.loadtxt(pred), ref.decision_function(X), rtol=1e-10)


def test_minus_one_is_a_class_in_files(moons_files):
    """-1 in a file is a class (0 marks unlabeled); the model predicts -1 and +1."""
    path, *_ = moons_files
    model = path / "t.skops"
    assert semisup_main.main(["fit", "TransductiveSVM", str(path / "train.svm"), "-m",
                              str(model), "-p", "lam=0.001"]) == 0
    assert semisup_main.main(["predict", str(model), str(path / "test.svm"),
                              "-o", str(path / "p.txt")]) == 0
    assert set(np.loadtxt(path / "p.txt")) == {-1.0, 1.0}


def test_unlabeled_marker_option(tmp_path):
    X, y = make_moons(120, noise=0.08, random_state=1)
    y_file = y.astype(float)  # classes 0/1; -1 marks unlabeled
    y_file[10:110] = -1
    io.write_svmlight(tmp_path / "tr.svm", X, y_file)
    assert semisup_main.main(["fit", "LapRLS", str(tmp_path / "tr.svm"), "-m",
                              str(tmp_path / "m"), "--unlabeled", "-1"]) == 0
    assert semisup_main.main(["predict", str(tmp_path / "m"), str(tmp_path / "tr.svm"),
                              "-o", str(tmp_path / "p"), "--unlabeled", "-1"]) == 0
    assert set(np.loadtxt(tmp_path / "p")) <= {0.0, 1.0}


def test_errors(moons_files, capsys):
    path, X, y, _ = moons_files
    train, model = str(path / "train.svm"), str(path / "m.skops")
    assert semisup_main.main(["fit", "NoSuchModel", train, "-m", model]) == 2
    assert "unknown estimator 'NoSuchModel'" in capsys.readouterr().err
    assert semisup_main.main(["fit", "LapRLS", train, "-m", model, "-p", "bogus=1"]) == 2
    assert "has no parameter 'bogus'" in capsys.readouterr().err
    assert semisup_main.main(["fit", "LapRLS", train, "-m", model, "-p", "gamma_A"]) == 2
    assert "expected name=value" in capsys.readouterr().err
    assert semisup_main.main(["fit", "LapRLS", train, "-m", str(path / "no/dir/m")]) == 2
    assert "does not exist" in capsys.readouterr().err
    # a data file is not a model file
    assert semisup_main.main(["predict", train, train, "-o", str(path / "p")]) == 2
    assert "not a semisup model file" in capsys.readouterr().err
    # more features at predict time than at fit time
    assert semisup_main.main(["fit", "LapRLS", train, "-m", model]) == 0
    io.write_svmlight(path / "wide.svm", np.hstack([X, np.ones((X.shape[0], 1))]), y)
    assert semisup_main.main(["predict", model, str(path / "wide.svm"), "-o",
                              str(path / "p")]) == 2
    assert "more than the 2" in capsys.readouterr().err


def test_old_skops_model_file_is_refused_with_the_fix(tmp_path, capsys):
    """Model files were skops archives before the data-only format: a clear refusal (the
    crafted files of every attack class are in test_model_files.py)."""
    skops = pytest.importorskip("skops.io")
    skops.dump({"format": 1, "estimator": fractions.Fraction(1, 3)}, tmp_path / "old.skops")
    io.write_svmlight(tmp_path / "d.svm", np.ones((2, 2)), np.array([1.0, -1.0]))
    assert semisup_main.main(["predict", str(tmp_path / "old.skops"),
                              str(tmp_path / "d.svm"), "-o", str(tmp_path / "p")]) == 2
    assert "fit the model again" in capsys.readouterr().err
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize("entry, prog", [(semisup_main.main, "semisup"),
                                         (svmlin.main, "semisup-svmlin")])
def test_version(entry, prog, capsys):
    with pytest.raises(SystemExit) as exc:
        entry(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"{prog} {__version__}"
