"""Linear manifold regularization: both routes of each method against dense references."""

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp
from conftest import dense_with_bias

from semisup.graph import adjacency_graph, laplacian
from semisup.linear import L2SVM, LinearLapRLS, LinearLapSVM


def problem(rng, n=150, d=8, sparse=False, n_labeled=10):
    y_true = (np.arange(n) >= n // 2).astype(int)
    X = rng.normal(size=(n, d))
    X[:, 0] += np.where(y_true == 1, 2.0, -2.0)
    y = np.full(n, -1)
    lab = np.r_[rng.choice(n // 2, n_labeled // 2, replace=False),
                n // 2 + rng.choice(n // 2, n_labeled // 2, replace=False)]
    y[lab] = y_true[lab]
    return (sp.csr_matrix(X) if sparse else X), y, y_true


def reference_system(X, y, gamma_A, gamma_I, k=6, power=1):
    """Dense eq. 3 quantities: R/l, labeled design, targets (bias as a weight)."""
    W = adjacency_graph(X, k, warn=False)
    L = laplacian(W, power=power).toarray()
    Xa = dense_with_bias(X)
    n = Xa.shape[0]
    lab = y != -1
    yl = np.where(y[lab] == 1, 1.0, -1.0)
    T2 = gamma_A * np.eye(Xa.shape[1]) + gamma_I / n ** 2 * Xa.T @ L @ Xa
    return T2, Xa[lab], yl


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("power", [1, 2])
def test_laprls_direct_and_cg_equal_dense_solve(rng, sparse, power):
    X, y, _ = problem(rng, sparse=sparse)
    gA, gI = 0.05, 50.0
    T2, Xl, yl = reference_system(X, y, gA, gI, power=power)
    l = yl.size
    w_ref = np.linalg.solve(Xl.T @ Xl + l * T2, Xl.T @ yl)   # eq. 3
    for solver in ("direct", "cg"):
        est = LinearLapRLS(fallback="none", gamma_A=gA, gamma_I=gI, n_neighbors=6,
                           laplacian_power=power, solver=solver, tol=1e-12).fit(X, y)
        w = np.r_[est.coef_[0], est.intercept_[0]]
        np.testing.assert_allclose(w, w_ref, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("sparse", [False, True])
def test_lapsvm_transform_and_mfn_equal_scipy(rng, sparse):
    X, y, _ = problem(rng, sparse=sparse)
    gA, gI = 0.05, 50.0
    T2, Xl, yl = reference_system(X, y, gA, gI)
    l = yl.size

    def f(w):  # eq. 2 with the squared hinge
        m = np.maximum(0.0, 1.0 - yl * (Xl @ w))
        return w @ T2 @ w + np.mean(m * m), 2 * T2 @ w - 2 * Xl.T @ (m * yl) / l

    ref = so.minimize(f, np.zeros(Xl.shape[1]), jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-14, "ftol": 1e-16, "maxiter": 50000})
    for solver in ("transform", "mfn"):
        est = LinearLapSVM(fallback="none", gamma_A=gA, gamma_I=gI, n_neighbors=6, solver=solver,
                           tol=1e-12).fit(X, y)
        assert est.objective_ == pytest.approx(ref.fun, rel=1e-8)
        np.testing.assert_allclose(np.r_[est.coef_[0], est.intercept_[0]], ref.x, rtol=1e-4,
                                   atol=1e-6)


def test_lapsvm_hinge_transform_matches_scipy(rng):
    X, y, _ = problem(rng)
    gA, gI = 0.05, 50.0
    T2, Xl, yl = reference_system(X, y, gA, gI)
    est = LinearLapSVM(fallback="none", gamma_A=gA, gamma_I=gI, n_neighbors=6, loss="hinge",
                       tol=1e-10).fit(X, y)

    def f(w):
        return w @ T2 @ w + np.mean(np.maximum(0.0, 1.0 - yl * (Xl @ w)))

    w = np.r_[est.coef_[0], est.intercept_[0]]
    assert est.objective_ == pytest.approx(f(w), rel=1e-10)
    # no random perturbation improves a (non-smooth) optimum
    for _ in range(50):
        assert f(w + 1e-4 * rng.normal(size=w.size)) >= f(w) - 1e-9


def test_gamma_I_zero_is_the_supervised_svm(rng):
    X, y, _ = problem(rng)
    l = int((y != -1).sum())
    lap = LinearLapSVM(fallback="none", gamma_A=0.1, gamma_I=0.0).fit(X, y)
    # (l/2) * eq. 2 = (1/2) * l gamma_A ||w||^2 + ..., the bias regularised as in SVMlin
    sup = L2SVM(lam=2 * 0.1 * l / 2, penalize_intercept=True).fit(X, y)
    np.testing.assert_allclose(lap.coef_, sup.coef_, rtol=1e-5, atol=1e-8)


def parallel_lines(rng, n=300):
    """Two long parallel segments (x1 spans [-10, 10]) one unit either side of x0 = 0.

    Locally the data vary only along x1, so the graph term penalises w1 and leaves w0: the
    linear Laplacian methods find x0 from 4 labels where a supervised fit is misled by x1.
    """
    y_true = (np.arange(n) >= n // 2).astype(int)
    X = np.c_[np.where(y_true == 1, 1.0, -1.0) + 0.005 * rng.normal(size=n),
              rng.uniform(-10, 10, n), 0.005 * rng.normal(size=(n, 3))]
    y = np.full(n, -1)
    lab = np.r_[rng.choice(n // 2, 2, replace=False), n // 2 + rng.choice(n // 2, 2, replace=False)]
    y[lab] = y_true[lab]
    return X, y, y_true


@pytest.mark.filterwarnings("ignore::semisup.graph.GraphWarning")
@pytest.mark.parametrize("cls", [LinearLapRLS, LinearLapSVM])
def test_graph_term_uses_unlabeled_data(cls):
    sup, lap = [], []
    for seed in range(6):
        X, y, y_true = parallel_lines(np.random.default_rng(seed))
        unl = y == -1
        # the published method (the guard would pick between the two)
        sup.append(np.mean(cls(fallback="none", gamma_A=0.1, gamma_I=0.0).fit(X, y)
                           .transduction_[unl] == y_true[unl]))
        lap.append(np.mean(cls(fallback="none", gamma_A=0.1, gamma_I=1e4).fit(X, y)
                           .transduction_[unl] == y_true[unl]))
    assert np.mean(lap) > 0.98
    assert np.mean(lap) > np.mean(sup) + 0.05


def test_warm_start_saves_iterations_and_reaches_same_solution(rng):
    X, y, _ = problem(rng, n=400, d=60, sparse=True)
    cold = LinearLapSVM(fallback="none", gamma_A=0.01, gamma_I=20.0, solver="mfn",
                        tol=1e-10).fit(X, y)
    est = LinearLapSVM(fallback="none", gamma_A=0.01, gamma_I=10.0, solver="mfn", warm_start=True,
                       tol=1e-10).fit(X, y)
    est.set_params(gamma_I=20.0).fit(X, y)
    np.testing.assert_allclose(est.coef_, cold.coef_, rtol=1e-4, atol=1e-6)
    assert est.fit_results_[0].n_cg_iter < cold.fit_results_[0].n_cg_iter


def test_precomputed_graph_and_bad_graph(rng):
    X, y, _ = problem(rng)
    W = adjacency_graph(X, 6, warn=False)
    a = LinearLapRLS(fallback="none", gamma_I=10.0, n_neighbors=6).fit(X, y)
    b = LinearLapRLS(fallback="none", gamma_I=10.0, graph=W).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_)
    with pytest.raises(ValueError, match="graph must be"):
        LinearLapRLS(graph=W[:10, :10]).fit(X, y)
    with pytest.raises(ValueError, match="hinge"):
        LinearLapSVM(loss="hinge", solver="mfn").fit(X, y)


def test_multiclass(rng):
    centers = np.array([[4, 0], [-4, 0], [0, 4]], dtype=float)
    y_true = np.repeat([0, 1, 2], 60)
    X = centers[y_true] + rng.normal(size=(180, 2))
    y = np.full(180, -1)
    for k in range(3):
        y[np.flatnonzero(y_true == k)[:2]] = k
    for est in (LinearLapRLS(gamma_I=10.0), LinearLapSVM(gamma_I=10.0)):
        est.fit(X, y)
        assert est.coef_.shape == (3, 2)
        assert np.mean(est.predict(X) == y_true) > 0.9


@pytest.mark.filterwarnings("ignore::semisup.graph.GraphWarning")
@pytest.mark.parametrize("cls_name", ["TransductiveSVM", "DeterministicAnnealingSVM"])
def test_graph_term_on_top_of_s3vm_losses(cls_name):
    """gamma_I adds the graph regulariser to TSVM / DA through the same solver."""
    import semisup

    cls = getattr(semisup, cls_name)
    X, y, y_true = parallel_lines(np.random.default_rng(4))
    plain = cls(fallback="none", lam=1e-2).fit(X, y)
    same = cls(fallback="none", lam=1e-2, gamma_I=0.0,
               graph=adjacency_graph(X, 10, warn=False)).fit(X, y)
    np.testing.assert_array_equal(plain.coef_, same.coef_)
    lap = cls(fallback="none", lam=1e-2, gamma_I=1e5).fit(X, y)
    unl = y == -1
    assert np.mean(lap.transduction_[unl] == y_true[unl]) > 0.98
    if cls_name == "TransductiveSVM":  # objective still monotone at fixed lam_u'
        hist = lap.fit_results_[0].history
        for prev, cur in zip(hist, hist[1:], strict=False):
            if prev["lam_u"] == cur["lam_u"]:
                assert cur["objective"] <= prev["objective"] * (1 + 1e-10)


@pytest.mark.parametrize("cls", [LinearLapRLS, LinearLapSVM])
def test_default_gamma_A_is_the_logistic_regression_ridge(cls):
    """``gamma_A=None`` is ``4 / l``: the same fit as passing that value."""
    rng = np.random.default_rng(3)
    X = np.r_[rng.normal(-1, 1, (40, 3)), rng.normal(1, 1, (40, 3))]
    y = np.full(80, -1)
    y[[0, 1, 2, 40, 41]] = [0, 0, 0, 1, 1]
    default = cls(fallback="none", n_neighbors=5).fit(X, y)
    explicit = cls(fallback="none", n_neighbors=5, gamma_A=4.0 / 5).fit(X, y)
    np.testing.assert_allclose(default.coef_, explicit.coef_, rtol=1e-10, atol=1e-12)
    other = cls(fallback="none", n_neighbors=5, gamma_A=1e-2).fit(X, y)
    assert not np.allclose(default.coef_, other.coef_)
