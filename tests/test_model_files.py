"""Model files of ``semisup fit`` / ``semisup predict`` hold data, never code.

The allow-list (``semisup.cli._modelfile.ALLOWED_CLASSES``) is checked against what the
library writes, by fitting and saving every estimator the command line offers; then crafted
files of each attack class (a function reference, a foreign type, a ``__reduce__`` to
``os``/``subprocess``, a scikit-learn object holding a callable, a wrong top-level type) are
refused by ``semisup predict`` with a one-line error and no side effect.
"""

from __future__ import annotations

import importlib
import inspect
import io as bytes_io
import json
import os
import pickle
import subprocess
import warnings
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import is_regressor

import semisup
from semisup import io
from semisup.cli import _modelfile
from semisup.cli import main as semisup_main
from semisup.cli.fitpredict import _as_input, _make_estimator, estimator_names

# small enough for the slow routes (SDP relaxations, model selection) to fit in a second
SMALL = {"ConvexTSVM": 16, "SDPRelaxedTSVM": 16}
PARAMS = {"SelfTaughtClassifier": ["n_components=2"], "SupervisedSelfTaught": ["n_components=2"]}
NON_NEGATIVE = {"SemiSupervisedNB"}  # a multinomial model of term counts
# estimators whose one-vs-rest holds other types than the binary model
REGRESSORS = {name.rpartition(".")[2] for name in _modelfile.REGRESSOR_CLASSES}
MULTICLASS = ["SelfTaughtClassifier", "SupervisedSelfTaught", "L2SVM", "LapRLS",
              "PrototypeVectorMachine"]


def _data(n: int = 40, k: int = 2, d: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    per = n // k
    X = np.vstack([rng.normal(size=(per, d)) + 4 * np.eye(d)[c] for c in range(k)])
    y = np.full(X.shape[0], -1)
    for c in range(k):
        y[c * per:c * per + 3] = c
    return sp.csr_matrix(X), y


def _fit(name: str, k: int = 2):
    X, y = _data(SMALL.get(name, 40) + (k == 3) * 2, k)
    if name in NON_NEGATIVE:
        X = abs(X)
    if name in REGRESSORS:  # real targets, NaN for the unlabeled rows
        y = np.where(y == -1, np.nan, X @ np.arange(1.0, X.shape[1] + 1))
    est = _make_estimator(name, PARAMS.get(name, []))
    X = _as_input(est, X)  # as the command line passes it (dense for a dense-only one)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y), X


# ------------------------------------------------------------------------ the allow-list

@pytest.mark.parametrize("name", _modelfile.ALLOWED_CLASSES)
def test_allow_list_names_classes_only(name):
    module, _, attr = name.rpartition(".")
    cls = getattr(importlib.import_module(module), attr)
    assert inspect.isclass(cls) and f"{cls.__module__}.{cls.__qualname__}" == name


def test_cli_offers_every_public_estimator_built_without_arguments():
    """A newly exported estimator must be added to ESTIMATOR_CLASSES (after checking what it
    holds: the round trip below), or the command line would not offer it."""
    expected = set()
    for name in semisup.__all__:
        obj = getattr(semisup, name)
        required = [p for p in inspect.signature(obj.__init__).parameters.values()
                    if p.default is p.empty and p.name != "self"
                    and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)] \
            if inspect.isclass(obj) else ["not a class"]
        if not required and hasattr(obj, "fit") and hasattr(obj, "predict"):
            expected.add(name)
    assert set(estimator_names()) == expected
    # the regressors (real targets, nan / ? unlabeled) are listed as such
    assert REGRESSORS == {name for name in expected if is_regressor(getattr(semisup, name)())}


@pytest.mark.parametrize("name", estimator_names())
def test_every_cli_estimator_round_trips(name):
    """Enumerates the types each estimator holds: writing fails on any type off the list."""
    for k in (2, 3) if name in MULTICLASS else (2,):
        est, X = _fit(name, k)
        back = _modelfile.loads(_modelfile.dumps({"estimator": est}))["estimator"]
        assert type(back) is type(est)
        np.testing.assert_array_equal(back.predict(X), est.predict(X))
        if hasattr(est, "decision_function"):
            np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))


def test_values_round_trip_exactly():
    value = {"a": [1, 2.5, float("nan"), None, True, "x"], 3: (1, np.float32(0.1)),
             "set": {1, 2}, "arr": np.arange(6, dtype=np.int32).reshape(2, 3),
             "str": np.array(["a", "bc"]), "obj": np.array(["a", None], dtype=object),
             "dtype": np.dtype("float32"), "csc": sp.random(4, 3, 0.5, format="csc"),
             "coo": sp.random(4, 3, 0.5, format="coo")}
    back = _modelfile.loads(_modelfile.dumps(value))
    assert back["a"][:2] == [1, 2.5] and np.isnan(back["a"][2]) and back["a"][3:] == [None,
                                                                                    True, "x"]
    assert back[3] == (1, np.float32(0.1)) and type(back[3][1]) is np.float32
    assert back["set"] == {1, 2} and back["dtype"] == np.dtype("float32")
    for key in ("arr", "str", "obj"):
        np.testing.assert_array_equal(back[key], value[key])
        assert back[key].dtype == value[key].dtype
    for key in ("csc", "coo"):
        assert back[key].format == key
        np.testing.assert_array_equal(back[key].toarray(), value[key].toarray())


def test_writer_refuses_what_the_reader_would_refuse():
    from sklearn.datasets import dump_svmlight_file
    from sklearn.preprocessing import FunctionTransformer

    for bad, word in ((FunctionTransformer(dump_svmlight_file), "FunctionTransformer"),
                      ({"f": len}, "builtin_function_or_method"),
                      ({"t": np.float64}, "type"),
                      ({"m": np.matrix([[1.0]])}, "numpy.matrix")):
        with pytest.raises(_modelfile.ModelFileError, match=word):
            _modelfile.dumps(bad)


# ------------------------------------------------------------------------ crafted files

def _genuine(tmp_path):
    """A model file written by ``semisup fit``, its test data, and its unpacked parts."""
    X, y = _data()
    y_file = np.where(y == -1, 0.0, np.where(y == 1, 1.0, -1.0))
    io.write_svmlight(tmp_path / "train.svm", X, y_file)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert semisup_main.main(["fit", "L2SVM", str(tmp_path / "train.svm"), "-m",
                                  str(tmp_path / "good.model")]) == 0
    with zipfile.ZipFile(tmp_path / "good.model") as zf:
        schema = json.loads(zf.read("model.json"))
        arrays = {n[:-4]: np.load(bytes_io.BytesIO(zf.read(n)))
                  for n in zf.namelist() if n.endswith(".npy")}
    return schema, arrays


def _estimator_entry(schema):
    return next(pair for pair in schema["root"]["items"] if pair[0] == "estimator")


def _predict(tmp_path, model_path, capsys):
    out = tmp_path / "predictions.txt"
    rc = semisup_main.main(["predict", str(model_path), str(tmp_path / "train.svm"),
                            "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()  # refused before anything was written
    return err


def _crafted(tmp_path, schema, arrays, name="evil.model"):
    path = tmp_path / name
    path.write_bytes(_modelfile.pack(schema, arrays))
    return path


def _obj(cls: str, **state):
    return {"@": "object", "class": cls, "state": state}


def test_genuine_file_predicts(tmp_path, capsys):
    _genuine(tmp_path)
    assert semisup_main.main(["predict", str(tmp_path / "good.model"),
                              str(tmp_path / "train.svm"), "-o", str(tmp_path / "p")]) == 0
    assert (tmp_path / "p").exists()


def test_function_reference_is_refused(tmp_path, capsys):
    schema, arrays = _genuine(tmp_path)
    victim = tmp_path / "written_by_the_model_file"
    func = _obj("sklearn.datasets._svmlight_format_io.dump_svmlight_file", f=str(victim))
    # inside a genuine estimator (refused by the allow-list) and as the estimator itself
    # (refused by the top-level check, before anything is built)
    _estimator_entry(schema)[1]["state"]["coef_"] = func
    err = _predict(tmp_path, _crafted(tmp_path, schema, arrays), capsys)
    assert "refusing type 'sklearn.datasets._svmlight_format_io.dump_svmlight_file'" in err
    _estimator_entry(schema)[1] = func
    err = _predict(tmp_path, _crafted(tmp_path, schema, arrays), capsys)
    assert "not a semisup estimator" in err
    assert not victim.exists()


@pytest.mark.parametrize("foreign", ["fractions.Fraction", "collections.OrderedDict",
                                     "builtins.eval", "numpy.lib.npyio.NpzFile"])
def test_foreign_type_is_refused(tmp_path, capsys, foreign):
    schema, arrays = _genuine(tmp_path)
    # hidden deep in a genuine estimator's state, not only at the top
    _estimator_entry(schema)[1]["state"]["fit_results_"] = [_obj(foreign)]
    err = _predict(tmp_path, _crafted(tmp_path, schema, arrays), capsys)
    assert f"refusing type {foreign!r}" in err


class _Reduce:
    def __init__(self, func, args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


@pytest.mark.parametrize("call", ["os", "subprocess"])
def test_reduce_to_os_or_subprocess_is_refused(tmp_path, capsys, call):
    schema, arrays = _genuine(tmp_path)
    victim = tmp_path / "created_by_reduce"
    payload = _Reduce(os.system, (f"touch {victim}",)) if call == "os" else \
        _Reduce(subprocess.call, (["touch", str(victim)],))
    # 1. a pickle named as the model file
    raw = tmp_path / "pickled.model"
    raw.write_bytes(pickle.dumps({"format": 2, "estimator": payload}))
    assert "not a zip archive" in _predict(tmp_path, raw, capsys)
    # 2. the pickle inside a genuine file, as an object array (np.save's pickle route)
    member = bytes_io.BytesIO()
    np.save(member, np.array([payload, 1], dtype=object), allow_pickle=True)
    buf = bytes_io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("model.json", json.dumps(schema))
        for key, arr in arrays.items():
            item = bytes_io.BytesIO()
            np.save(item, arr)
            zf.writestr(f"{key}.npy", member.getvalue() if key == "a0" else item.getvalue())
    (tmp_path / "embedded.model").write_bytes(buf.getvalue())
    err = _predict(tmp_path, tmp_path / "embedded.model", capsys)
    assert "pickle" in err.lower() or "allow_pickle" in err
    # 3. a reduce node in the description
    _estimator_entry(schema)[1]["state"]["coef_"] = {"@": "reduce", "func": f"{call}.system",
                                                      "args": ["x"]}
    assert "unknown entry kind 'reduce'" in _predict(
        tmp_path, _crafted(tmp_path, schema, arrays), capsys)
    assert not victim.exists()


def test_scikit_learn_object_holding_a_callable_is_refused(tmp_path, capsys):
    """The issue's file: FunctionTransformer(dump_svmlight_file, kw_args={'f': path})."""
    schema, arrays = _genuine(tmp_path)
    victim = tmp_path / "dumped.svm"
    func = _obj("sklearn.datasets._svmlight_format_io.dump_svmlight_file")
    kw = {"@": "dict", "items": [["f", str(victim)]]}
    transformer = _obj("sklearn.preprocessing._function_transformer.FunctionTransformer",
                       func=func, kw_args=kw)
    estimator = _estimator_entry(schema)[1]
    _estimator_entry(schema)[1] = transformer
    err = _predict(tmp_path, _crafted(tmp_path, schema, arrays), capsys)
    assert "FunctionTransformer" in err
    # held by a genuine estimator, and by an allow-listed scikit-learn object in it
    _estimator_entry(schema)[1] = estimator
    estimator["state"]["fit_results_"] = [transformer]
    err = _predict(tmp_path, _crafted(tmp_path, schema, arrays), capsys)
    assert "refusing type 'sklearn.preprocessing._function_transformer" in err
    estimator["state"]["fit_results_"] = [_obj("sklearn.svm._classes.SVC", kernel=func)]
    err = _predict(tmp_path, _crafted(tmp_path, schema, arrays), capsys)
    assert "refusing type 'sklearn.datasets._svmlight_format_io.dump_svmlight_file'" in err
    assert not victim.exists()


@pytest.mark.parametrize("top", ["sklearn.svm._classes.SVC", "semisup.solvers.mfn.MFNResult"])
def test_top_level_must_be_a_cli_estimator(tmp_path, capsys, top):
    schema, arrays = _genuine(tmp_path)
    _estimator_entry(schema)[1] = _obj(top)
    err = _predict(tmp_path, _crafted(tmp_path, schema, arrays), capsys)
    assert f"the model is a {top}, not a semisup estimator" in err
    assert "warning" not in err  # refused on the description: nothing was built


def test_damaged_files_are_refused(tmp_path, capsys):
    schema, arrays = _genuine(tmp_path)
    good = _crafted(tmp_path, schema, arrays)
    # truncated
    (tmp_path / "cut.model").write_bytes(good.read_bytes()[:200])
    _predict(tmp_path, tmp_path / "cut.model", capsys)
    # a compressed member (could expand without bound)
    buf = bytes_io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("model.json", json.dumps(schema))
    (tmp_path / "zip.model").write_bytes(buf.getvalue())
    assert "compressed" in _predict(tmp_path, tmp_path / "zip.model", capsys)
    # an array header claiming 8 TB (numpy would allocate before reading)
    header = bytes_io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (10**12,)})
    buf = bytes_io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("model.json", json.dumps(schema))
        for key, arr in arrays.items():
            item = bytes_io.BytesIO()
            np.save(item, arr)
            zf.writestr(f"{key}.npy", header.getvalue() + b"\0" * 8 if key == "a0"
                        else item.getvalue())
    (tmp_path / "huge.model").write_bytes(buf.getvalue())
    assert "claims more data" in _predict(tmp_path, tmp_path / "huge.model", capsys)
    # nested too deep for the parser
    buf = bytes_io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("model.json", "[" * 10**5)
    (tmp_path / "deep.model").write_bytes(buf.getvalue())
    assert "not JSON" in _predict(tmp_path, tmp_path / "deep.model", capsys)
    # a member cut short inside the archive
    data = good.read_bytes()
    at = data.index(b"model.json") + 10  # inside the first member
    (tmp_path / "holed.model").write_bytes(data[:at] + b"\0" * 40 + data[at + 40:])
    _predict(tmp_path, tmp_path / "holed.model", capsys)
    # sparse indices out of range (compiled code would read out of bounds)
    state = _estimator_entry(schema)[1]["state"]
    key = "a_bad"
    arrays[key] = np.array([0, 99], dtype=np.int32)
    state["graph_"] = {"@": "sparse", "format": "csr", "kind": "matrix", "shape": [2, 2],
                       "data": "a_ones", "indices": key, "indptr": "a_ptr"}
    arrays["a_ones"], arrays["a_ptr"] = np.ones(2), np.array([0, 1, 2], dtype=np.int32)
    assert "sparse" in _predict(tmp_path, _crafted(tmp_path, schema, arrays), capsys)
