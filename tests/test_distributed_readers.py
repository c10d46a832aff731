"""Partitions read by the workers (SVMlight / SVMlin shards, dask arrays and dataframes):
the client never holds the matrix, and the fits equal the single-process fit on the same
rows (objective to 1e-8 relative, identical transduced labels).  Estimators without a
distributed route refuse a DistributedDesign with a TypeError naming the ones that have it.
"""

import numpy as np
import pytest
import scipy.sparse as sp

distributed = pytest.importorskip("distributed")

from semisup import (  # noqa: E402
    L2SVM,
    TransductiveSVM,
)
from semisup.distributed import (  # noqa: E402
    DistributedDesign,
    from_dask_array,
    from_dask_dataframe,
    from_svmlight_files,
    from_svmlin_files,
)
from semisup.io import (  # noqa: E402
    labels_to_svmlin,
    write_svmlight,
    write_svmlin_examples,
    write_svmlin_labels,
)

N, D = 90, 10
SIZES = [30, 25, 35]


@pytest.fixture(scope="module")
def problem():
    """Sparse rows, classes 0/1 (SVMlin's -1/+1); the last column is non-zero only in the
    first shard, so the other shards' files end at a smaller index and must be widened."""
    rng = np.random.default_rng(11)
    X = sp.random(N, D, density=0.4, random_state=12, format="lil")
    X[SIZES[0]:, D - 1] = 0.0
    X[0, D - 1] = 1.5
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    w = rng.normal(size=D)
    y_true = (X @ w + 0.2 * rng.normal(size=N) > 0).astype(np.int64)
    y = np.full(N, -1)
    labeled = rng.choice(N, 14, replace=False)
    y[labeled] = y_true[labeled]
    y[0], y[1] = 0, 1
    return X, y


def _tsvm():
    # as published: a fit on a DistributedDesign has no guard (fallback="cv")
    return TransductiveSVM(lam=0.02, lam_u=1.0, tol=1e-9, lam_u_init=0.05, lam_u_growth=4.0,
                           fallback="none")


def _same(dist, ref):
    assert dist.objective_ == pytest.approx(ref.objective_, rel=1e-8)
    np.testing.assert_array_equal(np.asarray(dist.transduction_), ref.transduction_)
    np.testing.assert_allclose(dist.coef_, ref.coef_, rtol=1e-6, atol=1e-9)


def _bounds():
    return np.concatenate([[0], np.cumsum(SIZES)])


def _no_matrix_on_client(design):
    """Every partition is a loader or a dask future: no array is held here."""
    for part in design._parts:
        assert callable(part) or all(isinstance(p, distributed.Future) for p in part)


def test_svmlight_shards_from_a_glob(client, problem, tmp_path):
    X, y = problem
    b = _bounds()
    for i in range(len(SIZES)):
        write_svmlight(tmp_path / f"shard{i:02d}.svm", X[b[i]:b[i + 1]],
                       labels_to_svmlin(y[b[i]:b[i + 1]]))
    design = from_svmlight_files(client, str(tmp_path / "shard*.svm"), timeout=60)
    try:
        _no_matrix_on_client(design)
        assert (design.n_rows, design.n_features) == (N, D)
        assert design.n_labeled == np.count_nonzero(y != -1)
        np.testing.assert_array_equal(design.partition_rows, SIZES)
        dist = _tsvm().fit(design, design.labels)
    finally:
        design.close()
    _same(dist, _tsvm().fit(X, y))


def test_lost_shards_are_read_again_by_the_workers(client, problem, tmp_path, monkeypatch):
    """After a loss only the lost worker's shards are reloaded, by reading their files."""
    from semisup.distributed import design as design_module

    monkeypatch.setattr(design_module, "_REPLACEMENT_WAIT_S", 0.0)
    X, y = problem
    b = _bounds()
    paths = []
    for i in range(len(SIZES)):
        paths.append(tmp_path / f"s{i}.svm")
        write_svmlight(paths[-1], X[b[i]:b[i + 1]], labels_to_svmlin(y[b[i]:b[i + 1]]))
    design = from_svmlight_files(client, paths, timeout=60)
    try:
        lost = design._partition_home[0][0]
        held = sorted(i for i, (w, _) in design._partition_home.items() if w == lost)
        # as _call records a frozen worker (still listed by the scheduler)
        design._lost, design._excluded = {lost}, {lost}
        design.restart()
        assert design.n_reloaded == len(held)
        assert lost not in design.workers
        _no_matrix_on_client(design)
        dist = L2SVM(lam=0.05, solver="mfn", tol=1e-9).fit(design, design.labels)
    finally:
        design.close()
    _same(dist, L2SVM(lam=0.05, solver="mfn", tol=1e-9).fit(X, y))


def test_svmlin_shards_with_an_unlabeled_shard(client, problem, tmp_path):
    X, y = problem
    b = _bounds()
    examples, labels = [], []
    for i in range(len(SIZES)):
        ex = tmp_path / f"part{i}.examples"
        write_svmlin_examples(ex, X[b[i]:b[i + 1]])
        examples.append(ex)
        if np.any(y[b[i]:b[i + 1]] != -1):
            lab = tmp_path / f"part{i}.labels"
            write_svmlin_labels(lab, labels_to_svmlin(y[b[i]:b[i + 1]]))
            labels.append(lab)
        else:
            labels.append(None)
    # the last shard's labeled rows become unlabeled when its labels file is left out
    y_used = y.copy()
    y_used[b[2]:] = -1
    labels[2] = None
    design = from_svmlin_files(client, examples, labels)
    try:
        _no_matrix_on_client(design)
        dist = L2SVM(lam=0.05, solver="mfn", tol=1e-9).fit(design, design.labels)
    finally:
        design.close()
    _same(dist, L2SVM(lam=0.05, solver="mfn", tol=1e-9).fit(X, y_used))


def test_dask_array_chunks_stay_on_their_workers(client, problem):
    da = pytest.importorskip("dask.array")
    X, y = problem
    Xd = X.toarray()
    # chunks computed on the workers (the client never builds the matrix from them)
    Xa = da.from_array(Xd, chunks=(SIZES[0], 4)).persist()
    ya = da.from_array(y, chunks=(20,))
    design = from_dask_array(client, Xa, ya, timeout=60)
    try:
        _no_matrix_on_client(design)
        who = client.who_has([p[0] for p in design._parts])
        for i, part in enumerate(design._parts):  # each block where its chunk was computed
            assert design._partition_home[i][0] in who[part[0].key]
        dist = _tsvm().fit(design, design.labels)
    finally:
        design.close()
    _same(dist, _tsvm().fit(Xd, y))


def test_dask_dataframe(client, problem):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = problem
    frame = pd.DataFrame(X.toarray(), columns=[f"f{j}" for j in range(D)])
    frame["label"] = y
    ddf = dd.from_pandas(frame, npartitions=3)
    design = from_dask_dataframe(client, ddf, "label")
    try:
        assert design.n_rows == N and design.n_features == D
        dist = L2SVM(lam=0.05, solver="mfn", tol=1e-9).fit(design, design.labels)
    finally:
        design.close()
    _same(dist, L2SVM(lam=0.05, solver="mfn", tol=1e-9).fit(X.toarray(), y))
    with pytest.raises(ValueError, match="label_column 'nope'"):
        from_dask_dataframe(client, ddf, "nope")


def test_reader_bad_input(client, problem, tmp_path):
    X, y = problem
    with pytest.raises(FileNotFoundError, match="matches no file"):
        from_svmlight_files(client, str(tmp_path / "none*.svm"))
    with pytest.raises(ValueError, match="labels must be 'svmlin'"):
        from_svmlight_files(client, [tmp_path / "a.svm"], labels="pm1")
    with pytest.raises(ValueError, match="one per examples file"):
        from_svmlin_files(client, [tmp_path / "a", tmp_path / "b"], [tmp_path / "a.l"])
    with pytest.raises(TypeError, match="2-D dask array"):
        from_dask_array(client, X, y)
    write_svmlight(tmp_path / "wide.svm", X, labels_to_svmlin(y))
    with pytest.raises(Exception, match="10"):  # the reader names the index beyond 5 columns
        from_svmlight_files(client, [tmp_path / "wide.svm"], n_features=5, timeout=30)
    with pytest.raises(ValueError, match="n_features must be"):
        DistributedDesign.from_arrays(client, X, y, n_features=0)


SUPPORTED = {"L2SVM", "TransductiveSVM", "DeterministicAnnealingSVM", "LinearLapRLS",
             "PrototypeVectorMachine"}


def test_estimators_without_a_distributed_route_refuse_clearly(client, problem):
    """Every public estimator outside the distributed five: a TypeError naming them."""
    import inspect

    import semisup
    from semisup.distributed import NotDistributedError

    X, y = problem
    design = DistributedDesign.from_arrays(client, X, y, n_partitions=2)
    checked = []
    try:
        for name in semisup.__all__:
            cls = getattr(semisup, name)
            if not inspect.isclass(cls) or not hasattr(cls, "fit") or name in SUPPORTED:
                continue
            try:
                est = cls()
            except TypeError:  # needs constructor arguments (a search backend)
                continue
            with pytest.raises(TypeError, match="only L2SVM, TransductiveSVM.*"
                                                "PrototypeVectorMachine can fit one") as info:
                est.fit(design, design.labels)
            assert isinstance(info.value, NotDistributedError)
            checked.append(name)
    finally:
        design.close()
    assert {"LapRLS", "LapSVM", "RLSClassifier", "LinearLapSVM"} <= set(checked)
