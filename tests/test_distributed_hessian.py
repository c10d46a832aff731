"""The distributed Newton systems from the workers' partial Hessians (issue 30).

For designs of at most ``HESSIAN_MAX_WEIGHTS`` weights and sparse rows each worker returns
``A_J^T C_J A_J`` of its active rows with every Newton system and the client solves it
(CGLS on the summed Hessian, preconditioned by its Cholesky factor): no CG round trips.
Checked here: the worker's Hessian against the dense closed form (also after incremental
updates), the fits against the single-process fits and an L2-SVM optimum from
``scipy.optimize``, and that above the threshold the Jacobi route (CG on the workers) is
used.  Two worker processes (the ``client`` fixture of ``conftest.py``).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

distributed = pytest.importorskip("distributed")

from semisup import L2SVM, DeterministicAnnealingSVM, TransductiveSVM  # noqa: E402
from semisup.distributed import DistributedDesign, _solvers  # noqa: E402
from semisup.distributed._worker import BlockWorker, weighted_gram  # noqa: E402
from semisup.solvers.design import Design  # noqa: E402

N, D, N_LABELED = 150, 14, 20

# the S3VMs as published: a fit on a DistributedDesign has no guard (fallback="cv"), so the
# one-process reference must not have it either
ESTIMATORS = {
    "L2SVM": lambda: L2SVM(lam=0.05, solver="mfn", tol=1e-9),
    "TSVM": lambda: TransductiveSVM(lam=0.02, lam_u=1.0, tol=1e-9, lam_u_init=0.05,
                                    lam_u_growth=4.0, fallback="none"),
    "DA": lambda: DeterministicAnnealingSVM(lam=0.02, lam_u=1.0, tol=1e-9,
                                            temperature_init=1.0, temperature_decay=10.0,
                                            kl_tol=1e-2, entropy_tol=5e-2, fallback="none"),
}


@pytest.fixture(scope="module")
def problem():
    rng = np.random.default_rng(11)
    X = sp.random(N, D, density=0.3, random_state=12, format="csr")
    X.data = rng.normal(size=X.data.size)
    w = rng.normal(size=D)
    y_true = np.where(X @ w + 0.3 * rng.normal(size=N) > 0, 1, 0)
    y = np.full(N, -1)
    y[:N_LABELED] = y_true[:N_LABELED]
    y[0], y[1] = 0, 1
    return X, y


def _dense_gram(X, cost, scaling):
    A = np.hstack([X.toarray() if sp.issparse(X) else X, np.full((X.shape[0], 1), scaling)])
    return A.T @ (A * cost[:, None])


@pytest.mark.parametrize("sparse", [True, False])
def test_weighted_gram_equals_the_dense_closed_form(sparse):
    rng = np.random.default_rng(0)
    X = sp.random(40, 9, density=0.3, random_state=1, format="csr")
    X.data = rng.normal(size=X.data.size)
    X = X if sparse else X.toarray()
    rows = np.array([1, 4, 5, 17, 30, 39])
    cost = rng.uniform(0.1, 2.0, rows.size)
    A = Design(X, True, 1.7).restrict(rows)
    expected = _dense_gram(X[rows], cost, 1.7)
    np.testing.assert_allclose(weighted_gram(A, cost), np.triu(expected), rtol=1e-12,
                               atol=1e-13)


def test_worker_hessian_updated_from_changed_rows_equals_a_rebuild():
    """Rows entering and leaving the active set (costs changing) update the worker's
    Hessian; it equals the Hessian computed from scratch at the new costs, and the client's
    copy built from the workers' deltas equals it bit for bit (a stale copy is refetched)."""
    rng = np.random.default_rng(2)
    X = sp.random(60, 8, density=0.4, random_state=3, format="csr")
    X.data = rng.normal(size=X.data.size)
    y = np.where(rng.normal(size=60) > 0, 1, 0)
    worker = BlockWorker([(0, X[:25], y[:25]), (1, X[25:], y[25:])])
    worker.prepare(True, 1.0, np.array([0, 1]), {0: 0, 1: 0})
    worker.set_binary(1)
    worker.problem_costs(0.3, 0.7)
    o = [rng.normal(scale=1.5, size=b.A.n_rows) for b in worker.blocks]
    client_side = _OneWorker(worker)
    for step in range(4):
        for b, ob in zip(worker.blocks, o, strict=True):
            if step:  # a few rows enter or leave the active set
                ob[rng.choice(ob.size, 3, replace=False)] = rng.normal(scale=3.0, size=3)
            b.o = ob.copy()
        worker.newton_system()
        message = worker.hessian(9)
        if step == 2:  # a message the client never read: its copy is stale
            worker.newton_system()
            message = worker.hessian(9)
        packed = _solvers.worker_hessians(client_side, [message])
        H = _solvers.unpack_upper(packed, 9)
        expected = sum(_dense_gram(X[b.index * 25:][b.lab][b.rows_j], b.cost_j, 1.0)
                       for b in worker.blocks)
        np.testing.assert_allclose(H, expected, rtol=1e-11, atol=1e-12)
        # the client's copy is the worker's Hessian bit for bit
        np.testing.assert_array_equal(packed, worker.G[np.triu_indices(9)])
        if step:  # the update path, not a rebuild, was taken; only the changes were sent
            assert all(b.G_updates > 0 for b in worker.blocks)
            assert message[0] == "delta" and message[3].size < packed.size
    # the stale copy (step 2) was replaced by one fetch of the whole Hessian
    assert client_side.calls == ["hessian_full"]


class _OneWorker:
    """The design as :func:`_solvers.worker_hessians` sees it: one worker, called here."""

    workers = ["w"]

    def __init__(self, worker):
        self.worker, self.calls = worker, []

    def _call(self, method, *args):
        self.calls.append(method)
        return [getattr(self.worker, method)(*args)]


def _fit(client, X, y, name, parts=3):
    design = DistributedDesign.from_arrays(client, X, y, n_partitions=parts)
    try:
        est = ESTIMATORS[name]().fit(design, design.labels)
        return est, dict(design.calls_by_method)
    finally:
        design.close()


def _same(dist, ref):
    assert dist.objective_ == pytest.approx(ref.objective_, rel=1e-8)
    np.testing.assert_array_equal(np.asarray(dist.transduction_), ref.transduction_)


@pytest.mark.parametrize("name", ["L2SVM", "TSVM", "DA"])
def test_hessian_route_equals_one_process(client, problem, name):
    X, y = problem
    dist, calls = _fit(client, X, y, name)
    assert calls.get("newton_start", 0) > 0
    # the Newton systems are solved on the client: no CG step, no Jacobi diagonal
    assert "cg_step" not in calls and "jacobi_diagonal" not in calls
    _same(dist, ESTIMATORS[name]().fit(X, y))


def test_hessian_route_l2svm_matches_scipy_optimize(client, problem):
    """An independent reference: eq. 2 minimised by L-BFGS on the labeled rows."""
    X, y = problem
    dist, _ = _fit(client, X, y, "L2SVM")
    lab = y >= 0
    A = np.hstack([X[lab].toarray(), np.ones((lab.sum(), 1))])
    t = np.where(y[lab] == 1, 1.0, -1.0)
    lam = 0.05

    ridge = np.r_[np.full(D, lam), 0.0]   # L2SVM's default bias is free, as LogisticRegression's

    def f(w):
        m = np.maximum(0.0, 1.0 - t * (A @ w))
        return 0.5 * w @ (ridge * w) + 0.5 * m @ m, ridge * w - A.T @ (t * m)

    ref = minimize(f, np.zeros(D + 1), jac=True, method="L-BFGS-B",
                   options=dict(gtol=1e-12, ftol=1e-15, maxiter=5000))
    assert dist.objective_ == pytest.approx(ref.fun, rel=1e-8)
    np.testing.assert_allclose(dist.coef_[0], ref.x[:D], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dist.intercept_[0], ref.x[D], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["L2SVM", "TSVM"])
def test_above_the_threshold_the_jacobi_route_is_used(client, problem, monkeypatch, name):
    X, y = problem
    monkeypatch.setattr(_solvers, "HESSIAN_MAX_WEIGHTS", D)  # D + 1 weights: above it
    dist, calls = _fit(client, X, y, name)
    assert calls.get("cg_step", 0) > 0 and calls.get("jacobi_diagonal", 0) > 0
    assert "hessian" not in calls
    _same(dist, ESTIMATORS[name]().fit(X, y))


def test_hessian_preconditioner_with_cg_on_the_workers(client, problem, monkeypatch):
    """``precondition="hessian"`` on rows too dense for the direct route: the Hessian is
    fetched when the reuse rule asks for it, CG runs on the workers for a few iterations."""
    X, y = problem
    monkeypatch.setattr(_solvers, "DIRECT_MAX_ROW_NNZ", 0)
    original = _solvers.l2svm_mfn
    monkeypatch.setattr(_solvers, "l2svm_mfn",
                        lambda *a, **k: original(*a, **{**k, "precondition": "hessian"}))
    from semisup.distributed import _resume

    monkeypatch.setattr(_resume, "l2svm_mfn", _solvers.l2svm_mfn)
    dist, calls = _fit(client, X, y, "TSVM")
    assert calls.get("hessian", 0) > 0 and "jacobi_diagonal" not in calls
    # the factor is exact when fresh and reused while the costs moved by at most 5%
    assert calls["cg_step"] <= 4 * calls["newton_point"]  # one newton_point per Newton step
    _same(dist, ESTIMATORS["TSVM"]().fit(X, y))


def test_unknown_preconditioner_is_refused(client, problem):
    X, y = problem
    design = DistributedDesign.from_arrays(client, X, y, n_partitions=2)
    try:
        with pytest.raises(ValueError, match="precondition must be 'auto', 'hessian'"):
            _solvers.l2svm_mfn(design, None, D + 1, precondition="sketch")
    finally:
        design.close()
