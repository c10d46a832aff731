"""Start-up of ``semisup fit`` / ``semisup predict``: the file is checked before the
estimator (and scikit-learn) is imported, and ``predict`` evaluates linear models from the
model file's arrays (``semisup.cli._modelfile.LinearModel``) without scikit-learn."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model._base import LinearClassifierMixin

from semisup import io
from semisup.cli import _modelfile
from semisup.cli.fitpredict import _make_estimator

LINEAR = [name.rpartition(".")[2] for name in _modelfile.LINEAR_CLASSES]


def _class(path: str) -> type:
    module, _, attr = path.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def _data(k: int, regression: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    n, d = 60, 6
    X = sp.random(n, d, density=0.6, format="csr", random_state=seed) \
        + sp.csr_matrix(np.eye(d)[rng.integers(0, d, n)] * 2)
    if regression:
        y = np.full(n, np.nan)
        y[:15] = X[:15] @ rng.normal(size=d)
        return sp.csr_matrix(X), y
    y = np.full(n, -1)
    y[:3 * k] = np.repeat(np.arange(k), 3)
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("path", _modelfile.LINEAR_CLASSES)
def test_linear_model_equals_the_estimator(path):
    """The arrays-only evaluation gives each estimator's own predictions (1e-12)."""
    cls = _class(path)
    regression = path in _modelfile.REGRESSOR_CLASSES
    if not regression:  # the rule LinearModel implements is scikit-learn's, not overridden
        assert cls.predict is LinearClassifierMixin.predict
    for k in (2,) if regression else (2, 3):
        X, y = _data(k, regression)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = _make_estimator(cls.__name__, []).fit(X, y)
        bundle = {"format": 2, "estimator": est, "classes": None if regression else
                  np.arange(k, dtype=float), "n_features": X.shape[1]}
        light = _modelfile.load_linear(_modelfile.dumps(bundle))
        model = light["estimator"]
        assert isinstance(model, _modelfile.LinearModel) and model.stored_class == path
        Xt, _ = _data(k, regression, seed=1)
        if regression:
            np.testing.assert_allclose(model.predict(Xt), est.predict(Xt), rtol=0,
                                       atol=1e-12)
        else:
            np.testing.assert_allclose(model.decision_function(Xt),
                                       est.decision_function(Xt), rtol=0, atol=1e-12)
            np.testing.assert_array_equal(model.predict(Xt), est.predict(Xt))


def test_linear_model_refuses_inconsistent_arrays():
    X, y = _data(2, False)
    est = _make_estimator("L2SVM", []).fit(X, y)
    est.coef_ = np.vstack([est.coef_, est.coef_])  # two rows for a binary model
    with pytest.raises(_modelfile.ModelFileError, match="inconsistent shapes"):
        _modelfile.load_linear(_modelfile.dumps({"estimator": est}))
    # a non-linear estimator is left to the full reader
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lap = _make_estimator("LapRLS", []).fit(X.toarray(), y)
    assert _modelfile.load_linear(_modelfile.dumps({"estimator": lap})) is None


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def _modules_after(argv: list[str]) -> tuple[int, set[str]]:
    """Exit status of ``semisup ARGV`` in a fresh process, and the top-level modules it
    imported."""
    probe = textwrap.dedent(f"""
        import sys
        from semisup.cli.main import main
        rc = main({argv!r})
        print("@@", rc, " ".join(sorted({{m.split(".")[0] for m in sys.modules}})))
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, env=_env()).stdout.splitlines()[-1].split()
    assert out[0] == "@@"
    return int(out[1]), set(out[2:])


@pytest.fixture
def small(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    y = np.where(X[:, 0] > 0, 1, -1)
    y[10:] = 0
    io.write_svmlight(tmp_path / "small.svm", X, y)
    return tmp_path


def test_predict_of_a_linear_model_imports_no_scikit_learn(small):
    from semisup.cli import main as semisup_main

    model = str(small / "m")
    assert semisup_main.main(["fit", "TransductiveSVM", str(small / "small.svm"), "-m",
                              model]) == 0
    rc, loaded = _modules_after(["predict", model, str(small / "small.svm"), "-o",
                                 str(small / "p")])
    assert rc == 0 and (small / "p").exists()
    assert not loaded & {"sklearn", "pandas", "numba"}


def test_a_malformed_file_is_refused_before_any_estimator_import(small):
    bad = small / "bad.svm"
    bad.write_text("1 1:0.5\n-1 2:x\n")
    rc, loaded = _modules_after(["fit", "TransductiveSVM", str(bad), "-m", str(small / "m")])
    assert rc == 2 and "sklearn" not in loaded
    rc, loaded = _modules_after(["fit", "NoSuchModel", str(bad), "-m", str(small / "m")])
    assert rc == 2 and "sklearn" not in loaded
