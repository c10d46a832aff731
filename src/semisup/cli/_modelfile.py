"""Model files of ``semisup fit`` / ``semisup predict``: data only, never code.

A model file is a zip archive of uncompressed ``.npy`` arrays (numpy's format, read with
``allow_pickle=False``) and one JSON document, ``model.json``, that describes the object tree
with a closed set of node kinds: ``None``/``bool``/``int``/``float``/``str``, list, tuple,
dict, set, numpy arrays and scalars of numeric, boolean or string dtype, numpy dtypes, the
sparse matrices of ``scipy.sparse`` (CSR/CSC/COO) and *objects* of the classes listed in
:data:`ALLOWED_CLASSES`.  There is no node for a function, a type, a module or a "call this
with these arguments" (pickle's ``__reduce__``), so loading a file can create data and
instances of the listed classes, and nothing else: a class is looked up by its exact name in
the list (never imported by a name the file chooses), created with ``cls.__new__(cls)`` and
given its attributes as scikit-learn's ``__setstate__`` does.

The list holds the exact types the library writes: the estimators the command line can fit
and the types they hold (solver results, the scikit-learn objects inside the self-taught
classifiers); ``tests/test_model_files.py`` fits and saves every estimator the command line
offers to check that it is complete.  Writing an object of any other type fails at ``fit``
time, naming the type, rather than producing a file that ``predict`` would refuse.

For the linear estimators (:data:`LINEAR_CLASSES`) :func:`load_linear` reads the same files
and checks them the same way but builds no object: it returns the estimator's weights as a
:class:`LinearModel`, so that ``semisup predict`` needs neither the estimator's module nor
scikit-learn (whose import is most of the command's time on a small file).  Symmetrically,
``semisup fit`` fits TSVM, DA, L2SVM and RLS without scikit-learn through their cores
(:mod:`semisup.linear._core`); the writer records such a core under the public class it
names in ``_model_file_class``, so the file is the one the estimator would have written.

The format replaced ``skops`` (whose import alone took about 0.8 s of every ``semisup fit`` /
``semisup predict``, and whose default trust of every ``sklearn.*`` type let a crafted file
call a scikit-learn function).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import zipfile
from collections.abc import Iterator

import numpy as np

MAGIC = "semisup-model"
VERSION = 1
_SCHEMA = "model.json"

#: The classifiers a model file's ``estimator`` may be: those the command line fits.
CLASSIFIER_CLASSES: tuple[str, ...] = (
    "semisup.linear.svm.L2SVM",
    "semisup.linear.svm.RLSClassifier",
    "semisup.linear.tsvm.TransductiveSVM",
    "semisup.linear.da.DeterministicAnnealingSVM",
    "semisup.linear.laplacian.LinearLapRLS",
    "semisup.linear.laplacian.LinearLapSVM",
    "semisup.linear.cccp.CCCPS3VM",
    "semisup.manifold.laprls.LapRLS",
    "semisup.manifold.lapsvm.LapSVM",
    "semisup.manifold.spectral.RegularizedSpectralClustering",
    "semisup.prototypes.pvm.PrototypeVectorMachine",
    "semisup.prototypes.baselines.NystromLabelSpreading",
    "semisup.prototypes.baselines.ClusterLapRLS",
    "semisup.transductive.ctsvm.ConvexTSVM",
    "semisup.transductive.rtsvm.SDPRelaxedTSVM",
    "semisup.transductive.rho.RhoTSVM",
    "semisup.mkl.estimator.MultipleKernelSVC",
    "semisup.weak.universum.UniversumSVM",
    "semisup.weak.mixture.MixtureSSL",
    "semisup.weak.selftaught.SelfTaughtClassifier",
    "semisup.weak.selftaught.SupervisedSelfTaught",
    "semisup.text.auxiliary.AuxiliarySVM",
    "semisup.linear.s4vm.S4VM",
    "semisup.propagation.harmonic.LabelPropagation",
    "semisup.propagation.spreading.LabelSpreading",
    "semisup.meta.auto.AutoClassifier",
    "semisup.meta.cotraining.CoTraining",
    "semisup.meta.self_training.SelfTraining",
    "semisup.meta.tritraining.TriTraining",
    "semisup.text.naive_bayes.SemiSupervisedNB",
)

#: The regressors the command line fits (real targets; their model files hold no classes).
REGRESSOR_CLASSES: tuple[str, ...] = (
    "semisup.linear.regression.LinearLapRLSRegressor",
    "semisup.manifold.regression.LapRLSRegressor",
    "semisup.meta.coreg.COREG",
)

#: The classes a model file's ``estimator`` may be: those the command line fits.
ESTIMATOR_CLASSES: tuple[str, ...] = CLASSIFIER_CLASSES + REGRESSOR_CLASSES

#: The estimators whose predictions are ``X coef_^T + intercept_`` (scikit-learn's
#: ``LinearClassifierMixin`` for the classifiers, ``LinearLapRLSRegressor.predict``):
#: :func:`load_linear` evaluates their model files from the arrays, without importing the
#: estimator (and scikit-learn); ``tests/test_cli_startup.py`` checks the predictions
#: against each estimator's own.
LINEAR_CLASSES: tuple[str, ...] = (
    "semisup.linear.svm.L2SVM",
    "semisup.linear.svm.RLSClassifier",
    "semisup.linear.tsvm.TransductiveSVM",
    "semisup.linear.da.DeterministicAnnealingSVM",
    "semisup.linear.laplacian.LinearLapRLS",
    "semisup.linear.laplacian.LinearLapSVM",
    "semisup.linear.cccp.CCCPS3VM",
    "semisup.linear.regression.LinearLapRLSRegressor",
)

#: The exact classes a model file may instantiate (module path and class name): the
#: estimators and the types they hold.
ALLOWED_CLASSES: tuple[str, ...] = ESTIMATOR_CLASSES + (
    "semisup.solvers.mfn.MFNResult",
    "semisup.solvers.logistic.LogisticResult",
    "semisup.solvers.dcd.DCDResult",
    "semisup.solvers.s3vm.TSVMResult",
    "semisup.solvers.s3vm.DAResult",
    "semisup.solvers.svm.PrecomputedSVM",
    "semisup.linear.cccp.CCCPResult",
    "semisup.weak.mixture.MixtureResult",
    "semisup.linear.s4vm.S4VMResult",
    "semisup.meta.tritraining.TriRound",
    "sklearn.linear_model._logistic.LogisticRegression",
    "sklearn.multiclass.OneVsRestClassifier",
    "sklearn.preprocessing._label.LabelBinarizer",
    "sklearn.svm._classes.SVC",
)

# dtype kinds an array or scalar may have: bool, integers, floats, complex, str, bytes
_DTYPE_KINDS = "biufcUS"
_SPARSE_FORMATS = ("csr", "csc", "coo")


class ModelFileError(ValueError):
    """A model file that is not one, or that holds something outside the allow-list."""


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _check_allowed(name) -> None:
    """:class:`ModelFileError` unless ``name`` is on :data:`ALLOWED_CLASSES`."""
    if not isinstance(name, str) or name not in ALLOWED_CLASSES:
        raise ModelFileError(f"refusing type {name!r}: model files may only hold semisup's "
                             "estimators and the types they are written with")


def _resolve(name: str) -> type:
    """The allow-listed class called ``name``; :class:`ModelFileError` for any other name."""
    _check_allowed(name)
    module, _, attr = name.rpartition(".")
    cls = getattr(importlib.import_module(module), attr, None)
    if not isinstance(cls, type) or _qualname(cls) != name:  # pragma: no cover - list rot
        raise ModelFileError(f"type {name!r} is not available in this version of semisup")
    return cls


# --------------------------------------------------------------------------------- writing

class _Writer:
    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}

    def array(self, arr: np.ndarray) -> str:
        key = f"a{len(self.arrays)}"
        self.arrays[key] = arr
        return key

    def node(self, obj, path: str):
        if obj is None or type(obj) in (bool, int, float, str):
            return obj  # JSON keeps them apart (1 and 1.0), NaN and Infinity included
        if isinstance(obj, list):
            return [self.node(v, f"{path}[{i}]") for i, v in enumerate(obj)]
        if type(obj) in (tuple, set, frozenset):
            items = sorted(obj, key=repr) if type(obj) is not tuple else obj
            return {"@": type(obj).__name__,
                    "items": [self.node(v, f"{path}[{i}]") for i, v in enumerate(items)]}
        if type(obj) is dict:
            return {"@": "dict", "items": [[self.node(k, f"{path} key"),
                                            self.node(v, f"{path}[{k!r}]")]
                                           for k, v in obj.items()]}
        if type(obj) is np.ndarray:
            if obj.dtype.kind == "O":
                return {"@": "objarray", "shape": list(obj.shape),
                        "items": [self.node(v, f"{path}[{i}]")
                                  for i, v in enumerate(obj.ravel().tolist())]}
            self._check_dtype(obj.dtype, path)
            return {"@": "ndarray", "key": self.array(obj)}
        if isinstance(obj, np.generic) and type(obj) is np.dtype(type(obj)).type:
            self._check_dtype(obj.dtype, path)
            return {"@": "scalar", "key": self.array(np.asarray(obj))}
        if isinstance(obj, np.dtype):
            self._check_dtype(obj, path)
            return {"@": "dtype", "str": obj.str}
        fmt = _sparse_format(obj)
        if fmt is not None:
            return self._sparse(obj, fmt, path)
        # a scikit-learn-free core (semisup.linear._core) is written as the estimator it is
        # the core of; read from the class's own namespace, so that no subclass inherits it
        name = vars(type(obj)).get("_model_file_class") or _qualname(type(obj))
        if name not in ALLOWED_CLASSES:
            raise ModelFileError(f"cannot write {path}: type {name} is not on the model-file "
                                 "allow-list (semisup.cli._modelfile.ALLOWED_CLASSES)")
        # object.__getstate__ exists from Python 3.11 on
        state = obj.__getstate__() if hasattr(obj, "__getstate__") else dict(vars(obj))
        if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
            raise ModelFileError(f"cannot write {path}: {name} has no attribute dictionary")
        return {"@": "object", "class": name,
                "state": {k: self.node(v, f"{path}.{k}") for k, v in state.items()}}

    @staticmethod
    def _check_dtype(dtype: np.dtype, path: str) -> None:
        if dtype.kind not in _DTYPE_KINDS or dtype.fields is not None:
            raise ModelFileError(f"cannot write {path}: dtype {dtype} is not supported")

    def _sparse(self, X, fmt: str, path: str):
        kind = "array" if type(X).__name__.endswith("_array") else "matrix"
        parts = {"coo": ("data", "row", "col")}.get(fmt, ("data", "indices", "indptr"))
        for part in parts:
            self._check_dtype(getattr(X, part).dtype, path)
        return {"@": "sparse", "format": fmt, "kind": kind, "shape": list(X.shape),
                **{part: self.array(getattr(X, part)) for part in parts}}


def _sparse_format(obj) -> str | None:
    module = type(obj).__module__
    if not module.startswith("scipy.sparse"):
        return None
    name = type(obj).__name__
    fmt = name.split("_")[0]
    if fmt in _SPARSE_FORMATS and name in (f"{fmt}_matrix", f"{fmt}_array"):
        return fmt
    return None


def dumps(bundle: dict) -> bytes:
    """The bytes of a model file holding ``bundle`` (a dict of allow-listed content).

    Raises
    ------
    ModelFileError
        When ``bundle`` holds a type outside :data:`ALLOWED_CLASSES` (naming where).
    """
    writer = _Writer()
    schema = {"format": MAGIC, "version": VERSION, "root": writer.node(bundle, "model")}
    return pack(schema, writer.arrays)


def pack(schema: dict, arrays: dict[str, np.ndarray]) -> bytes:
    """Zip ``schema`` (as ``model.json``) and ``arrays`` (as ``.npy`` members), uncompressed."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr(_SCHEMA, json.dumps(schema))
        for key, arr in arrays.items():
            member = io.BytesIO()
            np.lib.format.write_array(member, arr, allow_pickle=False)
            zf.writestr(f"{key}.npy", member.getvalue())
    return buf.getvalue()


# --------------------------------------------------------------------------------- reading

class _Reader:
    """Builds the object tree of a model file; with ``build=False`` an object comes back as
    the dict of its state (its class name, checked against the list, under ``"@class"``)
    and no class is imported."""

    def __init__(self, zf: zipfile.ZipFile, build: bool = True):
        self.zf = zf
        self.build = build

    def array(self, key) -> np.ndarray:
        info = self.header(key)
        with self.zf.open(info) as fh:
            return np.lib.format.read_array(fh, allow_pickle=False)

    def header(self, key) -> zipfile.ZipInfo:
        """The member of array ``key``, its header checked (dtype, size) without reading
        its data."""
        if not isinstance(key, str) or f"{key}.npy" not in self.zf.namelist():
            raise ModelFileError(f"missing array {key!r}")
        info = self.zf.getinfo(f"{key}.npy")
        fmt = np.lib.format
        with self.zf.open(info) as fh:
            # the header first: numpy allocates the whole array before reading its data
            version = fmt.read_magic(fh)
            read_header = fmt.read_array_header_1_0 if version == (1, 0) \
                else fmt.read_array_header_2_0
            shape, _, dtype = read_header(fh)
        if dtype.kind not in _DTYPE_KINDS or dtype.fields is not None or dtype.hasobject:
            raise ModelFileError(f"array {key!r} has dtype {dtype}, which is not allowed "
                                 "(no pickled objects)")
        if int(np.prod(shape, dtype=np.float64)) * dtype.itemsize > info.file_size:
            raise ModelFileError(f"array {key!r} claims more data than the file holds")
        return info

    def node(self, node, depth: int = 0):
        if depth > 100:
            raise ModelFileError("nested more than 100 levels deep")
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if isinstance(node, list):
            return [self.node(v, depth + 1) for v in node]
        if not isinstance(node, dict) or not isinstance(node.get("@"), str):
            raise ModelFileError(f"unexpected entry {str(node)[:60]!r}")
        kind = node["@"]
        if kind in ("tuple", "set", "frozenset"):
            items = [self.node(v, depth + 1) for v in self._list(node, "items")]
            return {"tuple": tuple, "set": set, "frozenset": frozenset}[kind](items)
        if kind == "dict":
            out = {}
            for pair in self._list(node, "items"):
                if not isinstance(pair, list) or len(pair) != 2:
                    raise ModelFileError("a dict entry is not a [key, value] pair")
                out[self.node(pair[0], depth + 1)] = self.node(pair[1], depth + 1)
            return out
        if kind == "ndarray":
            return self.array(node.get("key"))
        if kind == "scalar":
            arr = self.array(node.get("key"))
            if arr.ndim != 0:
                raise ModelFileError("a scalar entry holds an array")
            return arr[()]
        if kind == "objarray":
            items = [self.node(v, depth + 1) for v in self._list(node, "items")]
            shape = tuple(self._list(node, "shape"))
            out = np.empty(len(items), dtype=object)
            out[:] = items
            try:
                return out.reshape(shape)
            except (ValueError, TypeError):
                raise ModelFileError("an object array's shape does not match its items") \
                    from None
        if kind == "dtype":
            dtype = np.dtype(str(node.get("str")))
            if dtype.kind not in _DTYPE_KINDS or dtype.fields is not None:
                raise ModelFileError(f"dtype {dtype} is not allowed")
            return dtype
        if kind == "sparse":
            return self._sparse(node)
        if kind == "object":
            # without build, the name is checked but no class imported
            cls = _resolve(node.get("class")) if self.build else _check_allowed(node.get("class"))
            state = node.get("state")
            if not isinstance(state, dict):
                raise ModelFileError(f"{node.get('class')}: state is not a dictionary")
            state = {str(k): self.node(v, depth + 1) for k, v in state.items()}
            if not self.build:
                return {"@class": node["class"], **state}
            obj = cls.__new__(cls)
            if hasattr(cls, "__setstate__"):  # scikit-learn's: version check + dict update
                obj.__setstate__(state)
            else:
                obj.__dict__.update(state)
            return obj
        raise ModelFileError(f"unknown entry kind {kind!r}")

    @staticmethod
    def _list(node: dict, key: str) -> list:
        value = node.get(key)
        if not isinstance(value, list):
            raise ModelFileError(f"{node['@']} entry without a {key!r} list")
        return value

    def _sparse(self, node: dict):
        import scipy.sparse as sp

        fmt, kind = node.get("format"), node.get("kind")
        if fmt not in _SPARSE_FORMATS or kind not in ("matrix", "array"):
            raise ModelFileError(f"sparse format {fmt!r}/{kind!r} is not allowed")
        cls = getattr(sp, f"{fmt}_{kind}")
        shape = tuple(self._list(node, "shape"))
        if len(shape) != 2 or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise ModelFileError(f"bad sparse shape {shape!r}")
        try:
            if fmt == "coo":
                X = cls((self.array(node.get("data")), (self.array(node.get("row")),
                                                        self.array(node.get("col")))),
                        shape=shape)
            else:
                X = cls((self.array(node.get("data")), self.array(node.get("indices")),
                         self.array(node.get("indptr"))), shape=shape)
                X.check_format(full_check=True)  # indices in range: compiled code trusts them
        except (ValueError, TypeError, IndexError) as exc:
            raise ModelFileError(f"inconsistent sparse matrix ({exc})") from None
        return X


def _check_estimator_entry(root) -> None:
    """The bundle's ``estimator`` must be an object of :data:`ESTIMATOR_CLASSES`: checked on
    the description, before anything in the file is built."""
    items = root.get("items") if isinstance(root, dict) and root.get("@") == "dict" else None
    entry = next((pair[1] for pair in items or () if isinstance(pair, list) and len(pair) == 2
                  and pair[0] == "estimator"), None)
    if not isinstance(entry, dict) or entry.get("@") != "object":
        raise ModelFileError("it holds no estimator")
    if entry.get("class") not in ESTIMATOR_CLASSES:
        raise ModelFileError(f"the model is a {str(entry.get('class'))[:100]}, not a "
                             "semisup estimator the command line writes")


class LinearModel:
    """A linear estimator of a model file, evaluated from its arrays (no scikit-learn).

    ``decision_function`` is ``X coef_^T + intercept_`` (one column per class with more
    than two classes, one vector otherwise) and ``predict`` takes, as scikit-learn's
    ``LinearClassifierMixin.predict``, ``classes_[score > 0]`` for two classes and the
    class of the largest score otherwise; for a regressor (``coef_`` of shape
    ``(n_features,)``) ``predict`` is ``X coef_ + intercept_``.

    Attributes
    ----------
    stored_class : str
        The estimator class the file holds (an entry of :data:`LINEAR_CLASSES`).
    coef_, intercept_, classes_, n_features_in_
        The estimator's arrays, as fitted (``classes_`` None for a regressor).
    """

    def __init__(self, stored_class: str, coef_: np.ndarray, intercept_, classes_,
                 n_features_in_: int):
        self.stored_class = stored_class
        self.coef_ = coef_
        self.intercept_ = intercept_
        self.classes_ = classes_
        self.n_features_in_ = n_features_in_
        self.regressor = stored_class in REGRESSOR_CLASSES

    def decision_function(self, X) -> np.ndarray:
        """``X coef_^T + intercept_`` of a classifier (raveled for two classes)."""
        scores = np.asarray(X @ self.coef_.T) + self.intercept_
        return scores.reshape(-1) if scores.shape[1] == 1 else scores

    def predict(self, X) -> np.ndarray:
        """Class codes (``classes_`` entries) or, for a regressor, real predictions."""
        if self.regressor:
            return np.asarray(X @ self.coef_).ravel() + self.intercept_
        scores = self.decision_function(X)
        index = (scores > 0).astype(np.intp) if scores.ndim == 1 else scores.argmax(axis=1)
        return self.classes_[index]


_LINEAR_STATE = ("coef_", "intercept_", "classes_", "n_features_in_")


def load_linear(data: bytes) -> dict | None:
    """The bundle of a model file whose estimator is in :data:`LINEAR_CLASSES`, with the
    estimator as a :class:`LinearModel`; None for any other estimator.

    The whole file is read and checked as :func:`loads` checks it (allow-list, dtypes,
    sizes, sparse indices), but no object is built and no class imported: the prediction
    needs only the estimator's ``coef_``, ``intercept_``, ``classes_`` and
    ``n_features_in_``.

    Raises
    ------
    ModelFileError
        As :func:`loads`, and for arrays of the wrong shape or kind.
    """
    try:
        return _load_linear(data)
    except ModelFileError:
        raise
    except (KeyError, ValueError, TypeError, OSError, EOFError, zipfile.BadZipFile,
            zipfile.LargeZipFile, MemoryError, RecursionError) as exc:
        raise ModelFileError(f"damaged ({type(exc).__name__}: {exc})") from None


def _load_linear(data: bytes) -> dict | None:
    with _open(data) as (zf, schema):
        root = schema.get("root")
        _check_estimator_entry(root)
        entry = next(pair[1] for pair in root["items"] if pair[0] == "estimator")
        name = entry["class"]
        if name not in LINEAR_CLASSES:
            return None
        # the whole tree is read and checked as the full reader does (allow-list, dtypes,
        # sizes, sparse indices), only no object is built: a file loads() refuses is refused
        out = _Reader(zf, build=False).node(root)
        state = out["estimator"]
        coef, intercept, classes, d = (state.get(key) for key in _LINEAR_STATE)
        regressor = name in REGRESSOR_CLASSES
        if isinstance(d, bool) or not isinstance(d, int) or d < 0:
            raise ModelFileError(f"{name}: n_features_in_ is not a count")
        if not isinstance(coef, np.ndarray) or coef.dtype.kind != "f":
            raise ModelFileError(f"{name}: coef_ is not an array of floats")
        if regressor:
            ok = coef.shape == (d,) and isinstance(intercept, (float, np.floating))
        else:
            n_out = None if not isinstance(classes, np.ndarray) or classes.ndim != 1 \
                else (1 if classes.size == 2 else classes.size)
            ok = n_out is not None and coef.shape == (n_out, d) \
                and isinstance(intercept, np.ndarray) and intercept.shape == (n_out,) \
                and intercept.dtype.kind == "f"
        if not ok:
            raise ModelFileError(f"{name}: coef_ / intercept_ / classes_ of inconsistent "
                                 "shapes")
        out["estimator"] = LinearModel(name, coef, intercept, classes, d)
        return out


def loads(data: bytes, *, bundle: bool = False) -> object:
    """The object tree of a model file (see the module docstring for what it may hold).

    With ``bundle=True`` the top level must be a dict whose ``estimator`` is one of
    :data:`ESTIMATOR_CLASSES`, checked before any object is created.

    Raises
    ------
    ModelFileError
        For anything but a model file of this format made of allow-listed content.
    """
    try:
        return _loads(data, bundle)
    except ModelFileError:
        raise
    except (KeyError, ValueError, TypeError, OSError, EOFError, zipfile.BadZipFile,
            zipfile.LargeZipFile, MemoryError, RecursionError) as exc:
        raise ModelFileError(f"damaged ({type(exc).__name__}: {exc})") from None


def _loads(data: bytes, bundle: bool) -> object:
    with _open(data) as (zf, schema):
        if bundle:
            _check_estimator_entry(schema.get("root"))
        return _Reader(zf).node(schema.get("root"))


@contextlib.contextmanager
def _open(data: bytes) -> Iterator[tuple[zipfile.ZipFile, dict]]:
    """The archive and its checked description (``model.json``)."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise ModelFileError("not a model file (not a zip archive)") from None
    with zf:
        infos = zf.infolist()
        if any(info.compress_type != zipfile.ZIP_STORED for info in infos):
            # the writer never compresses: a compressed member could expand without bound
            raise ModelFileError("compressed members (not written by semisup)")
        if _SCHEMA not in zf.namelist():
            raise ModelFileError(f"no {_SCHEMA} (model files from semisup before this "
                                 "format were skops files: fit the model again)")
        try:
            schema = json.loads(zf.read(_SCHEMA))
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise ModelFileError(f"{_SCHEMA} is not JSON ({type(exc).__name__})") from None
        if not isinstance(schema, dict) or schema.get("format") != MAGIC:
            raise ModelFileError(f"{_SCHEMA} is not a semisup model description")
        if schema.get("version") != VERSION:
            raise ModelFileError(f"format version {schema.get('version')!r}; this semisup "
                                 f"reads version {VERSION}")
        yield zf, schema
