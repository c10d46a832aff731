"""Distributed PVM and linear LapRLS on a local Dask cluster against the single-machine fits.

PVM: the same prototypes (k-means with the same seeds, then Lloyd iterations on the blocks),
the same kernel width, prototype labels to round-off and identical transduced labels, for
1 and 7 partitions, unbalanced partitions and partitions without labeled rows.  LapRLS: with
one partition the single-machine fit; with several, the single-machine fit on the
block-diagonal graph of the partition-local kNN graphs (the documented approximation).
"""

import os
import pickle
import signal
import time

import numpy as np
import pytest
import scipy.sparse as sp

distributed = pytest.importorskip("distributed")
dask_array = pytest.importorskip("dask.array")

from semisup import LinearLapRLS  # noqa: E402
from semisup.distributed import DistributedDesign, WorkerLostError  # noqa: E402
from semisup.distributed._pvm import DesignRows  # noqa: E402
from semisup.linear.laplacian import graph_laplacian  # noqa: E402
from semisup.prototypes import PrototypeVectorMachine  # noqa: E402

LAYOUTS = {
    "1": dict(n_partitions=1),
    "7": dict(n_partitions=7),
    "unbalanced": dict(sizes=[1, 9, 150, 2, 78]),
    "labeled-apart": dict(sizes=[12, 100, 128]),
}


@pytest.fixture(scope="module")
def blobs():
    """Three Gaussian classes in 4-d; the 12 labeled rows first (4 per class)."""
    rng = np.random.default_rng(7)
    centers = np.array([[-2.0, 0, 0, 0], [2.0, 0, 0, 0], [0, 2.5, 0, 0]])
    labels = rng.integers(0, 3, size=240)
    labels[:12] = np.repeat([0, 1, 2], 4)
    X = centers[labels] + rng.normal(size=(240, 4))
    y = np.full(240, -1)
    y[:12] = labels[:12]
    return X, y


PVM_CONFIGS = {
    "square": dict(),
    "hinge-sparse-H": dict(loss="hinge", n_nearest_prototypes=4, laplacian="unnormalized"),
    "rkhs-random": dict(C2=0.1, regularizer="rkhs", prototypes="random"),
}


def _assert_same_pvm(dist, ref, X):
    np.testing.assert_allclose(dist.prototypes_, ref.prototypes_, rtol=1e-10, atol=1e-12)
    assert dist.gamma_ == pytest.approx(ref.gamma_, rel=1e-12)
    assert dist.graph_scale_ == pytest.approx(ref.graph_scale_, rel=1e-12)
    scale = np.abs(ref.prototype_labels_).max()
    np.testing.assert_allclose(dist.prototype_labels_, ref.prototype_labels_, rtol=1e-7,
                               atol=1e-9 * scale)
    np.testing.assert_array_equal(dist.classes_, ref.classes_)
    np.testing.assert_array_equal(dist.transduction_, ref.transduction_)
    np.testing.assert_allclose(dist.decision_function(X), ref.decision_function(X),
                               rtol=1e-7, atol=1e-9 * scale)


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("config", list(PVM_CONFIGS))
def test_distributed_pvm_equals_single_machine(client, blobs, config, layout):
    if config != "square" and layout not in ("7", "labeled-apart"):
        pytest.skip("the other configurations run on two layouts (keeps the module short)")
    X, y = blobs
    # row blocks skip the guard: the reference is the single-machine fit as published
    kw = dict(n_prototypes=24, random_state=0, fallback="none", **PVM_CONFIGS[config])
    ref = PrototypeVectorMachine(**kw).fit(X, y)
    design = DistributedDesign.from_arrays(client, X, y, **LAYOUTS[layout])
    try:
        dist = PrototypeVectorMachine(**kw).fit(design, design.labels)
    finally:
        design.close()
    _assert_same_pvm(dist, ref, X)
    assert set(dist.timings_) == {"prototypes", "graph", "solve"}
    # one label per row, left on the workers (a dask array) unless the design gathers it
    assert isinstance(dist.transduction_, dask_array.Array)
    assert dist.transduction_.shape == (X.shape[0],)
    pickle.loads(pickle.dumps(dist))


def test_distributed_pvm_sparse_rows(client, blobs):
    """CSR partitions: k-means and ``K(X, V)`` on sparse blocks, as on one machine."""
    X, y = blobs
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.7, X, 0.0))
    kw = dict(n_prototypes=20, random_state=3, kmeans_max_iter=3, fallback="none")
    ref = PrototypeVectorMachine(**kw).fit(Xs, y)
    design = DistributedDesign.from_arrays(client, Xs, y, n_partitions=3,
                                           gather_transduction=True)
    dist = PrototypeVectorMachine(**kw).fit(design, None)
    design.close()
    _assert_same_pvm(dist, ref, Xs)
    assert isinstance(dist.transduction_, np.ndarray)  # asked for: gathered


def test_design_rows_by_global_position(client, blobs):
    X, y = blobs
    design = DistributedDesign.from_arrays(client, X, y, sizes=[5, 0, 200, 35])
    idx = np.array([239, 0, 5, 5, 4, 204, 205, 17])
    np.testing.assert_array_equal(DesignRows(design)[idx], X[idx])
    design.close()


def _block_diagonal_graph(X, sizes, **options):
    """The adjacency the distributed LapRLS uses: each partition's own kNN graph."""
    blocks, start = [], 0
    for size in sizes:
        part = X[start:start + size]
        blocks.append(graph_laplacian(part, **options)[1] if size >= 2
                      else sp.csr_matrix((size, size)))
        start += size
    return sp.block_diag(blocks, format="csr")


@pytest.mark.filterwarnings("ignore:n_neighbors=6 >= n_samples")
@pytest.mark.parametrize("solver", ["cg", "direct"])
@pytest.mark.parametrize("layout", ["1", "unbalanced"])
def test_distributed_laprls(client, blobs, layout, solver):
    X, y = blobs
    # as published: a fit on a DistributedDesign has no guard (fallback="cv")
    kw = dict(gamma_A=1e-2, gamma_I=5.0, n_neighbors=6, solver=solver, tol=1e-10,
              graph_scale="sum", fallback="none")
    design = DistributedDesign.from_arrays(client, X, y, **LAYOUTS[layout])
    try:
        dist = LinearLapRLS(**kw).fit(design, design.labels)
    finally:
        design.close()
    if layout == "1":
        ref = LinearLapRLS(**kw).fit(X, y)           # the single-machine fit itself
    else:
        sizes = LAYOUTS[layout]["sizes"]
        W = _block_diagonal_graph(X, sizes, n_neighbors=6, metric="euclidean",
                                  weight="heat", kind="unnormalized")
        ref = LinearLapRLS(**kw, graph=W).fit(X, y)
        differs = LinearLapRLS(**kw).fit(X, y)      # the approximation is not a no-op
        assert abs(differs.objective_[0] - ref.objective_[0]) > 1e-6 * abs(ref.objective_[0])
    np.testing.assert_allclose(dist.objective_, ref.objective_, rtol=1e-8)
    np.testing.assert_allclose(dist.coef_, ref.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_array_equal(dist.transduction_, ref.transduction_)
    assert isinstance(dist.transduction_, dask_array.Array)
    dist.transduction_ = np.asarray(dist.transduction_)  # what to pickle for use elsewhere
    pickle.loads(pickle.dumps(dist))


def test_bad_input(client, blobs):
    X, y = blobs
    design = DistributedDesign.from_arrays(client, X, y, n_partitions=2)
    with pytest.raises(ValueError, match="probability"):
        PrototypeVectorMachine(probability=True).fit(design, None)
    with pytest.raises(ValueError, match="minibatch"):
        PrototypeVectorMachine(prototypes="minibatch").fit(design, None)
    with pytest.raises(ValueError, match="design.labels"):
        PrototypeVectorMachine().fit(design, y)
    with pytest.raises(ValueError, match="graph=None"):
        LinearLapRLS(graph=sp.eye(X.shape[0], format="csr")).fit(design, None)
    with pytest.raises(ValueError, match="kmeans_max_iter"):
        PrototypeVectorMachine(kmeans_max_iter=0).fit(design, None)
    design.close()


def test_pvm_worker_killed_mid_fit_recovers(client, blobs):
    X, y = blobs
    kw = dict(n_prototypes=24, random_state=0, fallback="none")
    design = DistributedDesign.from_arrays(client, X, y, n_partitions=3, timeout=60)
    original, count = design._call, [0]

    def call(method, *args):
        count[0] += 1
        if count[0] == 6:  # inside the Lloyd iterations
            os.kill(client.run(os.getpid)[design.workers[0]], signal.SIGKILL)
            time.sleep(0.5)
        return original(method, *args)

    design._call = call
    dist = PrototypeVectorMachine(**kw).fit(design, design.labels)
    design.close()
    _assert_same_pvm(dist, PrototypeVectorMachine(**kw).fit(X, y), X)
    client.wait_for_workers(2, timeout=60)
    assert count[0] > 6


def test_pvm_worker_lost_without_restarts(client, blobs):
    X, y = blobs
    design = DistributedDesign.from_arrays(client, X, y, n_partitions=3, max_restarts=0,
                                           timeout=60)
    design._actors[0] = None  # a handle that fails: what a dead actor gives
    est = PrototypeVectorMachine(n_prototypes=10)
    with pytest.raises(WorkerLostError, match="no result was stored"):
        est.fit(design, None)
    assert not hasattr(est, "prototype_labels_")
    design.close()
