"""``semisup fit`` / ``semisup predict`` with the regressors: real targets, ``nan`` / ``?``
(or ``--unlabeled VALUE``) for the unlabeled rows, model files that reload exactly."""

from __future__ import annotations

import numpy as np
import pytest

import semisup
from semisup import io
from semisup.cli import _modelfile
from semisup.cli import main as semisup_main

# small, fast settings; COREG draws its pool at random
PARAMS = {"LinearLapRLSRegressor": {"gamma_I": 0.5, "n_neighbors": 5},
          "LapRLSRegressor": {"gamma_I": 1.0, "n_neighbors": 5},
          "COREG": {"random_state": 0, "max_iter": 20}}


def _problem(n: int = 70, d: int = 3, n_labeled: int = 12, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + X[:, 1] - 0.5 * X[:, 2] + 0.05 * rng.normal(size=n)
    return X, y, np.arange(n) < n_labeled


def _write(path, X, labels) -> None:
    """An SVMlight file with the label tokens given as text (``nan``, ``?``, numbers)."""
    lines = [f"{lab} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row))
             for lab, row in zip(labels, X, strict=True)]
    path.write_text("\n".join(lines) + "\n")


def _tokens(y, labeled, marker=("nan", "?", "NaN")):
    return [repr(float(v)) if keep else marker[i % len(marker)]
            for i, (v, keep) in enumerate(zip(y, labeled, strict=True))]


def _run(capsys, *argv) -> tuple[int, str, str]:
    rc = semisup_main.main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_cli_round_trip_equals_the_python_api(tmp_path, capsys, name):
    X, y, labeled = _problem()
    _write(tmp_path / "train.svm", X, _tokens(y, labeled))
    _write(tmp_path / "test.svm", X, [repr(float(v)) for v in y])
    argv = ["fit", name, tmp_path / "train.svm", "-m", tmp_path / "m",
            "--transduction", tmp_path / "tr.txt"]
    for key, value in PARAMS[name].items():
        argv += ["-p", f"{key}={value}"]
    rc, out, err = _run(capsys, *argv)
    assert rc == 0, err
    assert f"({labeled.sum()} labeled, {(~labeled).sum()} unlabeled)" in out
    assert err == ""  # semi-supervised: no supervised-fit note
    rc, out, err = _run(capsys, "predict", tmp_path / "m", tmp_path / "test.svm",
                        "-o", tmp_path / "pred.txt")
    assert rc == 0, err
    # the Python API on the arrays of the same file (sparse, or dense for a dense-only one)
    Xf, yf = io.read_svmlight(tmp_path / "train.svm", missing_labels=True)
    assert np.array_equal(np.isnan(yf), ~labeled)
    cls = getattr(semisup, name)
    ref = cls(**PARAMS[name])
    ref.fit(Xf if name != "COREG" else Xf.toarray(), yf)
    Xin = Xf if name != "COREG" else Xf.toarray()
    expected = ref.predict(Xin)
    got = np.array([float(line) for line in (tmp_path / "pred.txt").read_text().split()])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    transduced = np.array([float(t) for t in (tmp_path / "tr.txt").read_text().split()])
    np.testing.assert_allclose(transduced, ref.transduction_, rtol=0, atol=1e-12)
    rmse = np.sqrt(np.mean((expected - y) ** 2))
    assert f"on the {y.size} rows with a target: RMSE = {rmse:.6g}" in out
    # the model file reloads (full reader, and the scikit-learn-free one for linear models)
    data = (tmp_path / "m").read_bytes()
    back = _modelfile.loads(data, bundle=True)
    assert back["classes"] is None and type(back["estimator"]) is cls
    np.testing.assert_allclose(back["estimator"].predict(Xin), expected, rtol=0, atol=1e-12)
    light = _modelfile.load_linear(data)
    assert (light is None) == (name != "LinearLapRLSRegressor")
    if light is not None:
        np.testing.assert_allclose(light["estimator"].predict(Xf), expected, rtol=0,
                                   atol=1e-12)


def test_predictions_round_trip_float64(tmp_path, capsys):
    """The written values read back as the very float64 predictions (repr precision)."""
    X, y, labeled = _problem(seed=3)
    _write(tmp_path / "t.svm", X, _tokens(y * 1e-7 + 1 / 3, labeled))
    assert _run(capsys, "fit", "LinearLapRLSRegressor", tmp_path / "t.svm", "-m",
                tmp_path / "m")[0] == 0
    assert _run(capsys, "predict", tmp_path / "m", tmp_path / "t.svm", "-o",
                tmp_path / "p")[0] == 0
    est = _modelfile.loads((tmp_path / "m").read_bytes())["estimator"]
    Xf, _ = io.read_svmlight(tmp_path / "t.svm", missing_labels=True)
    text = (tmp_path / "p").read_text().split()
    assert [float(t) for t in text] == est.predict(Xf).tolist()


def test_markers_nan_question_mark_and_explicit(tmp_path, capsys):
    """nan, NaN, ? and an explicit --unlabeled VALUE give the same fit; 0 is a target."""
    X, y, labeled = _problem(seed=1)
    y[3] = 0.0  # a real target of 0 must stay a target
    fits = {}
    for tag, tokens, extra in (
            ("nan", _tokens(y, labeled, ("nan",)), []),
            ("mixed", _tokens(y, labeled, ("?", "NaN", "nan")), []),
            ("explicit", _tokens(y, labeled, ("-999",)), ["--unlabeled", "-999"]),
            ("explicit+nan", _tokens(y, labeled, ("-999", "?")), ["--unlabeled", "-999"])):
        _write(tmp_path / f"{tag}.svm", X, tokens)
        rc, out, err = _run(capsys, "fit", "LinearLapRLSRegressor", tmp_path / f"{tag}.svm",
                            "-m", tmp_path / tag, *extra)
        assert rc == 0, err
        assert f"({labeled.sum()} labeled, {(~labeled).sum()} unlabeled)" in out, tag
        fits[tag] = _modelfile.loads((tmp_path / tag).read_bytes())["estimator"].coef_
    for tag in fits:
        np.testing.assert_array_equal(fits[tag], fits["nan"])
    # without the option, -999 is an ordinary target: every row labeled, said once
    rc, out, err = _run(capsys, "fit", "LinearLapRLSRegressor", tmp_path / "explicit.svm",
                        "-m", tmp_path / "sup")
    assert rc == 0
    assert f"({y.size} labeled, 0 unlabeled)" in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "a supervised fit on all 70 rows" in lines[0]
    assert "--unlabeled VALUE" in lines[0]


def test_classifier_file_is_not_read_with_zero_unlabeled(tmp_path, capsys):
    """A regressor never applies the classifiers' 0 = unlabeled default silently."""
    X, y, labeled = _problem(seed=2)
    _write(tmp_path / "zeros.svm", X, [repr(float(v)) if k else "0" for v, k in
                                       zip(y, labeled, strict=True)])
    rc, out, err = _run(capsys, "fit", "LapRLSRegressor", tmp_path / "zeros.svm", "-m",
                        tmp_path / "m")
    assert rc == 0 and "(70 labeled, 0 unlabeled)" in out
    assert "supervised fit" in err and "0 is a real target" in err
    rc, out, err = _run(capsys, "fit", "LapRLSRegressor", tmp_path / "zeros.svm", "-m",
                        tmp_path / "m", "--unlabeled", "0")
    assert rc == 0 and f"({labeled.sum()} labeled, {(~labeled).sum()} unlabeled)" in out
    assert err == ""


def test_all_unlabeled_is_a_one_line_error(tmp_path, capsys):
    X, y, _ = _problem(n=10)
    path = tmp_path / "none.svm"
    _write(path, X, ["nan", "?"] * 5)
    rc, out, err = _run(capsys, "fit", "COREG", path, "-m", tmp_path / "m")
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and str(path) in err
    assert "every one of the 10 rows is unlabeled" in err
    assert not (tmp_path / "m").exists()


def test_regressor_help_lists_its_parameters(capsys):
    with pytest.raises(SystemExit) as exc:
        semisup_main.main(["fit", "LapRLSRegressor", "-h"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "parameters of LapRLSRegressor" in out
    for line in ("gamma_A=0.01", "gamma_I=100.0", "kernel='rbf'"):
        assert f"  {line}" in out
    assert "regressors (real targets" in out and "COREG" in out


def test_bad_options(tmp_path, capsys):
    X, y, labeled = _problem()
    _write(tmp_path / "r.svm", X, _tokens(y, labeled))
    assert _run(capsys, "fit", "LinearLapRLSRegressor", tmp_path / "r.svm", "-m",
                tmp_path / "m")[0] == 0
    rc, _, err = _run(capsys, "predict", tmp_path / "m", tmp_path / "r.svm", "-o",
                      tmp_path / "p", "--scores")
    assert rc == 2 and "leave out --scores" in err
    # nan / ? are the regressors' marker, not a classifier's
    io.write_svmlight(tmp_path / "c.svm", X, np.where(labeled, np.sign(y), 0))
    rc, _, err = _run(capsys, "fit", "L2SVM", tmp_path / "c.svm", "-m", tmp_path / "c",
                      "--unlabeled", "?")
    assert rc == 2 and "regressors' marker" in err
    # and a classifier's file with nan labels stays an error naming the line
    _write(tmp_path / "cn.svm", X, _tokens(np.sign(y), labeled))
    rc, _, err = _run(capsys, "fit", "L2SVM", tmp_path / "cn.svm", "-m", tmp_path / "c")
    assert rc == 2 and "cn.svm:13: non-finite label 'nan'" in err


def test_reader_missing_labels(tmp_path):
    path = tmp_path / "m.svm"
    path.write_text("1.5 1:1\nnan 1:2\n? 2:3\nNaN 1:1 # c\n\n-0 2:1\n")
    X, y = io.read_svmlight(path, missing_labels=True)
    assert X.shape == (5, 2)
    np.testing.assert_array_equal(np.isnan(y), [False, True, True, True, False])
    assert y[0] == 1.5 and y[4] == 0.0
    with pytest.raises(io.FileFormatError, match=r"m.svm:2: non-finite label 'nan'"):
        io.read_svmlight(path)
    # only the label column, and only these tokens
    for bad, what in (("1 1:nan\n", "non-finite value"), ("-nan 1:1\n", "non-finite label"),
                      ("NA 1:1\n", "non-numeric label"), ("?? 1:1\n", "non-numeric label")):
        path.write_text(bad)
        with pytest.raises(io.FileFormatError, match=what):
            io.read_svmlight(path, missing_labels=True)
