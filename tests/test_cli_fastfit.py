"""``semisup fit`` without scikit-learn: TSVM and DA fitted through their cores
(:mod:`semisup.linear._core`) write the model file the estimators write.

The route is the estimators' own fit (one implementation); these tests hold it to that: the
files of both routes load to equal estimators, predict the same, and a fit reports the same
warnings and errors; anything the core does not serve goes to the estimator.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp

from semisup import io
from semisup.cli import _modelfile, fitpredict
from semisup.cli import main as semisup_main
from semisup.linear import _core
from semisup.linear.da import DeterministicAnnealingSVM
from semisup.linear.svm import L2SVM, RLSClassifier
from semisup.linear.tsvm import TransductiveSVM


def _write(path, X, labels) -> str:
    io.write_svmlight(path, X, labels)
    return str(path)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A dense-rowed and a sparse binary file (0 = unlabeled) and a 3-class one."""
    tmp = tmp_path_factory.mktemp("fastfit")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, -1)
    y[12:] = 0
    Xs = sp.random(80, 30, density=0.15, format="csr", random_state=1)
    Xs.data = rng.normal(size=Xs.nnz)
    ys = np.where(Xs @ rng.normal(size=30) > 0, 1, -1)
    ys[16:] = 0
    ys[:2] = [1, -1]
    y3 = np.zeros(60, dtype=int)
    y3[:15] = np.repeat([1, 2, 3], 5)
    X3 = X + np.repeat(np.eye(5)[:3] * 3, 20, axis=0)
    mostly = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, 1, -1)
    mostly[50:] = 0  # more rows of class code 0 than unlabeled rows: no SVMlin-coding warning
    return {"dense": _write(tmp / "dense.svm", X, y), "sparse": _write(tmp / "sparse.svm", Xs, ys),
            "multi": _write(tmp / "multi.svm", X3, y3), "tmp": tmp,
            "mostly": _write(tmp / "mostly.svm", X, mostly),
            "all": _write(tmp / "all.svm", X, np.where(mostly == 0, 1, mostly))}


def _fit(argv: list[str], *, estimator_route: bool, monkeypatch, capsys) -> str:
    """Run ``semisup fit ARGV`` in this process on the chosen route; what it wrote on stderr
    (its warnings, one line each)."""
    capsys.readouterr()
    with monkeypatch.context() as m:
        if estimator_route:
            m.setattr(fitpredict, "_make_core", lambda *args: None)
        with warnings.catch_warnings():
            warnings.simplefilter("always")  # each route warns, whatever the other did
            assert semisup_main.main(["fit", *argv]) == 0
    return capsys.readouterr().err


def assert_same(a, b, where: str = "estimator") -> None:
    """Equal types, keys and values; floating-point arrays and numbers to 1e-12."""
    assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, err_msg=where)
        else:
            np.testing.assert_array_equal(a, b, err_msg=where)
    elif isinstance(a, (float, np.floating)):
        assert a == b or abs(a - b) <= 1e-12 * max(1.0, abs(a)) \
            or (np.isnan(a) and np.isnan(b)), where
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{where}: keys {list(a)} != {list(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            assert_same(u, v, f"{where}[{i}]")
    elif hasattr(a, "__dict__"):
        assert_same(vars(a), vars(b), where)
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


CASES = [
    ("TransductiveSVM", []),
    ("TransductiveSVM", ["lam=0.01", "lam_u=0.5", "max_switches=1"]),
    ("TransductiveSVM", ["positive_fraction=[0.6, 0.4]", "intercept_scaling=2.0",
                         "lam_u_growth=2.0", "probability=False", "gamma_I=0"]),
    ("transductivesvm", ["positive_fraction=0.3", "fit_intercept=False", "tol=1e-4"]),
    ("TransductiveSVM", ["fallback=none"]),   # the default "cv" runs the guard in the others
    ("DeterministicAnnealingSVM", []),
    ("DeterministicAnnealingSVM", ["lam=0.01", "temperature_decay=2.0", "max_outer_iter=5"]),
    ("DeterministicAnnealingSVM", ["positive_fraction=0.4", "temperature_init=1.0",
                                   "kl_tol=1e-4"]),
    ("L2SVM", []),
    ("L2SVM", ["lam=0.5", "solver=mfn", "cost_positive=2.0"]),
    ("RLSClassifier", ["lam=0.1", "fit_intercept=False"]),
]


@pytest.mark.parametrize("data", ["dense", "sparse"])
@pytest.mark.parametrize("name, params", CASES)
def test_core_route_writes_the_estimators_model_file(files, data, name, params, monkeypatch,
                                                     capsys):
    _check_routes(files, data, name, params, monkeypatch, capsys)


@pytest.mark.parametrize("name", ["TransductiveSVM", "DeterministicAnnealingSVM", "L2SVM",
                                  "RLSClassifier"])
def test_core_route_on_a_three_class_file(files, name, monkeypatch, capsys):
    """One-vs-rest through the core: the file the estimator writes."""
    _check_routes(files, "multi", name, [], monkeypatch, capsys)


@pytest.mark.parametrize("data", ["mostly", "all"])
@pytest.mark.parametrize("name", ["TransductiveSVM", "DeterministicAnnealingSVM"])
def test_core_route_on_mostly_or_all_labeled_files(files, data, name, monkeypatch, capsys):
    """Few or no unlabeled rows: the same files and the same (absence of) warnings."""
    err = _check_routes(files, data, name, [], monkeypatch, capsys)
    # the command's own class codes 0/1/-1 never draw the estimators' SVMlin-coding warning
    assert "LabelCodingWarning" not in err
    assert ("no row has the unlabeled label" in err) == (data == "all")


def _check_routes(files, data, name, params, monkeypatch, capsys) -> str:
    """Fit, predict and score with both routes; check they agree; the core's stderr."""
    tmp = files["tmp"]
    options = [x for p in params for x in ("-p", p)]
    assert isinstance(fitpredict._make_core(name, params, 2), _core.LinearClassifierCore)
    paths, outputs, caught = {}, {}, {}
    for route in ("core", "estimator"):
        paths[route] = str(tmp / f"{data}-{route}.model")
        transduction = tmp / f"{data}-{route}.tr"
        caught[route] = _fit([name, files[data], "-m", paths[route], *options,
                              "--transduction", str(transduction)],
                             estimator_route=route == "estimator", monkeypatch=monkeypatch,
                             capsys=capsys)
        outputs[route] = [transduction.read_text()]
        for scores in ([], ["--scores"]):
            out = tmp / f"{data}-{route}.pred"
            assert semisup_main.main(["predict", paths[route], files[data], "-o", str(out),
                                      *scores]) == 0
            outputs[route].append(out.read_text())
    # the same bytes in every member (the archives differ only in their time stamps)
    with zipfile.ZipFile(paths["core"]) as a, zipfile.ZipFile(paths["estimator"]) as b:
        assert a.namelist() == b.namelist()
        assert all(a.read(member) == b.read(member) for member in a.namelist())
    loaded = {route: _modelfile.loads(open(path, "rb").read(), bundle=True)
              for route, path in paths.items()}
    public = {"transductivesvm": TransductiveSVM, "l2svm": L2SVM,
              "rlsclassifier": RLSClassifier,
              "deterministicannealingsvm": DeterministicAnnealingSVM}[name.lower()]
    assert type(loaded["core"]["estimator"]) is public
    assert_same(loaded["core"], loaded["estimator"])
    assert outputs["core"] == outputs["estimator"]
    assert caught["core"] == caught["estimator"]
    return caught["core"]


def test_core_equals_the_estimator_in_python(rng):
    """The core on a dense array (and CSR) fits what the estimator fits, one-vs-rest too."""
    X = rng.normal(size=(50, 4))
    y = np.full(50, -1)
    y[:12] = np.repeat([0, 1, 2], 4)
    for Xi in (X, sp.csr_matrix(X)):
        for k in (2, 3):
            yk = np.where(y >= k, -1, y)
            for public, core in ((TransductiveSVM, _core.TransductiveSVM),
                                 (DeterministicAnnealingSVM, _core.DeterministicAnnealingSVM)):
                a = core(lam=0.01).fit(Xi, yk)
                b = public(lam=0.01).fit(Xi, yk)
                assert_same(vars(a), vars(b))


@pytest.mark.parametrize("params, kind", [
    # the method as published: the default guard would replace the collapsed fit
    (["lam=1e3", "intercept_scaling=1e3", "positive_fraction=0.9", "fallback=none"],
     "CollapseWarning"),
    (["lam=100", "max_iter=1"], "ConvergenceWarning")])
def test_the_routes_warn_alike(files, monkeypatch, capsys, params, kind):
    """Collapse and non-convergence warnings name the public class on both routes."""
    argv = ["TransductiveSVM", files["dense"], "-m", str(files["tmp"] / "w.model"),
            *(x for p in params for x in ("-p", p))]
    core = _fit(argv, estimator_route=False, monkeypatch=monkeypatch, capsys=capsys)
    assert core == _fit(argv, estimator_route=True, monkeypatch=monkeypatch, capsys=capsys)
    assert core.startswith("semisup fit: warning: TransductiveSVM") and f"({kind})" in core


@pytest.mark.parametrize("param, message", [("lam=-1", "lam must be a finite number > 0"),
                                            ("max_switches=0", "max_switches must be"),
                                            ("fallback=bad", "fallback"),
                                            ("temperature_decay=1", None)])
def test_bad_values_are_refused_alike(files, capsys, monkeypatch, param, message):
    name = "DeterministicAnnealingSVM" if param.startswith("temperature") else "TransductiveSVM"
    argv = ["fit", name, files["dense"], "-m", str(files["tmp"] / "bad.model"), "-p", param]
    assert semisup_main.main(argv) == 2
    core_err = capsys.readouterr().err
    with monkeypatch.context() as m:
        m.setattr(fitpredict, "_make_core", lambda *args: None)
        assert semisup_main.main(argv) == 2
    assert capsys.readouterr().err == core_err
    assert message is None or message in core_err


def test_what_the_core_does_not_serve_goes_to_the_estimator():
    """probability=True, a graph term, an unknown name, several classes, other models."""
    assert fitpredict._make_core("TransductiveSVM", ["probability=True"], 2) is None
    assert fitpredict._make_core("TransductiveSVM", ["gamma_I=1.0"], 2) is None
    assert fitpredict._make_core("TransductiveSVM", ["gamma=1.0"], 2) is None
    assert fitpredict._make_core("L2SVM", ["lam=auto"], 2) is None   # CV: scikit-learn
    assert fitpredict._make_core("LapRLS", [], 2) is None
    assert isinstance(fitpredict._make_core("TransductiveSVM", [], 3), _core.TransductiveSVM)
    assert isinstance(fitpredict._make_core("DeterministicAnnealingSVM", ["verbose=0"], 2),
                      _core.DeterministicAnnealingSVM)


def test_cores_are_the_estimators_cores():
    """Each core names its public class, which subclasses it and takes the same parameters."""
    from semisup.cli._modelfile import LINEAR_CLASSES, _resolve

    assert set(_core.CORES) <= set(LINEAR_CLASSES)
    for path, core in _core.CORES.items():
        public = _resolve(path)
        assert issubclass(public, core) and public.__name__ == core.__name__
        assert public.__init__ is core.__init__
        assert "_model_file_class" not in vars(public)


def test_writer_uses_the_public_name_only_for_a_core_itself(rng):
    """A subclass of a core does not inherit the public name: the writer refuses it."""
    X = rng.normal(size=(30, 3))
    y = np.full(30, -1)
    y[:4] = [0, 1, 0, 1]

    class MyTSVM(_core.TransductiveSVM):
        pass

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = MyTSVM().fit(X, y)
    with pytest.raises(_modelfile.ModelFileError, match="not on the model-file allow-list"):
        _modelfile.dumps({"estimator": est})


def test_core_refuses_what_it_does_not_handle(rng):
    X = rng.normal(size=(20, 3))
    y = np.full(20, -1)
    y[:4] = [0, 1, 0, 1]
    with pytest.raises(ValueError, match="probability=True needs the estimator"):
        _core.TransductiveSVM(probability=True).fit(X, y)
    with pytest.raises(ValueError, match="X must be a float64"):
        _core.TransductiveSVM().fit(X.astype(np.float32), y)
    with pytest.raises(ValueError, match="class code"):
        _core.TransductiveSVM().fit(X, y.astype(float))
    with pytest.raises(ValueError, match="NaN or infinity"):
        _core.TransductiveSVM().fit(np.where(X > 1, np.nan, X), y)
    with pytest.raises(ValueError, match="at least 2 are needed"):
        _core.TransductiveSVM().fit(X, np.where(y == 1, 0, y))


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def _run(argv: list[str]) -> tuple[int, bool]:
    """Exit status of ``semisup ARGV`` in a fresh process, and whether it imported
    scikit-learn."""
    probe = textwrap.dedent(f"""
        import sys
        from semisup.cli.main import main
        rc = main({argv!r})
        print("@@", rc, "sklearn" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, env=_env()).stdout.splitlines()[-1].split()
    assert out[0] == "@@"
    return int(out[1]), out[2] == "True"


def test_fit_of_a_small_binary_file_imports_no_scikit_learn(files):
    model = str(files["tmp"] / "sub.model")
    for name in ("TransductiveSVM", "DeterministicAnnealingSVM", "L2SVM", "RLSClassifier"):
        for data in ("dense", "multi"):
            assert _run(["fit", name, files[data], "-m", model, "-p", "lam=0.01"]) \
                == (0, False)
    # the others still fit, through the estimator (and scikit-learn)
    for argv in (["L2SVM", files["multi"], "-p", "lam=auto"],
                 ["TransductiveSVM", files["dense"], "-p", "probability=True"],
                 ["DeterministicAnnealingSVM", files["dense"], "-p", "gamma_I=1.0"]):
        assert _run(["fit", *argv, "-m", model]) == (0, True)
        bundle = _modelfile.loads(open(model, "rb").read(), bundle=True)
        assert bundle["estimator"].coef_.shape[0] == (3 if argv[1] == files["multi"] else 1)
