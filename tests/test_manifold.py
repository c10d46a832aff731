"""Manifold regularization (LapRLS, LapSVM, regularized spectral methods) against independent
references: dense eq. 8, cvxpy on the QP of eq. 9 and on the primal, scipy.optimize on the
squared-hinge primal, scikit-learn's SVC / KernelRidge, dense generalised eigensolvers."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.optimize as so
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_blobs, make_moons
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics import adjusted_rand_score
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from semisup.graph import GraphWarning, adjacency_graph, laplacian
from semisup.kernels import kernel_matrix
from semisup.manifold import (
    LaplacianEigenmaps,
    LapRLS,
    LapSVM,
    RegularizedSpectralClustering,
    deformed_kernel,
)
from semisup.manifold._rkhs import count_duplicate_rows
from semisup.solvers.pcg import pcg
from semisup.solvers.qp import svm_dual

# ------------------------------------------------------------------------------- helpers


def moons(n=200, noise=0.1, seed=1, per_class=1):
    """Two moons with ``per_class`` labeled points per moon (the first ones of each)."""
    X, y_true = make_moons(n, noise=noise, random_state=seed)
    y = np.full(n, -1)
    for c in (0, 1):
        idx = np.flatnonzero(y_true == c)[:per_class]
        y[idx] = c
    return X, y, y_true


def blobs3(n=150, seed=0, per_class=3):
    X, y_true = make_blobs(n, centers=[[0, 0], [4, 0], [0, 4]], cluster_std=0.7,
                           random_state=seed)
    y = np.full(n, -1)
    for c in range(3):
        y[np.flatnonzero(y_true == c)[:per_class]] = c
    return X, y, y_true


def dense_parts(X, y, gamma, k=6, kind="unnormalized", power=1):
    """K, dense L, labeled index, +-1 targets of the labeled rows, n (6-NN heat graph; LapSVM's
    default Laplacian; LapRLS's default is ``kind=RLS_KIND, power=RLS_POWER``)."""
    K = kernel_matrix(X, kernel="rbf", gamma=gamma)
    W = adjacency_graph(X, k, warn=False)
    L = laplacian(W, kind, power).toarray()
    lab = np.flatnonzero(y != -1)
    return K, L, lab, np.where(y[lab] == 1, 1.0, -1.0), X.shape[0]


def eq8(K, L, lab, Y, gamma_A, gamma_I, n):
    """Eq. 8 literally: alpha = (J K + gamma_A l I + gamma_I l/(u+l)^2 L K)^-1 Y."""
    l = lab.size
    J = np.zeros((n, n))
    J[lab, lab] = 1.0
    Yfull = np.zeros((n,) + Y.shape[1:])
    Yfull[lab] = Y
    A = J @ K + gamma_A * l * np.eye(n) + gamma_I * l / n ** 2 * L @ K
    return np.linalg.solve(A, Yfull)


def lapsvm_Q(K, L, lab, yl, gamma_A, gamma_I, n):
    """Eq. 10 literally (dense inverse) and the matrix of eq. 11."""
    J = np.zeros((lab.size, n))
    J[np.arange(lab.size), lab] = 1.0
    Minv = np.linalg.inv(2 * gamma_A * np.eye(n) + 2 * gamma_I / n ** 2 * L @ K)
    Yd = np.diag(yl)
    Q = Yd @ J @ K @ Minv @ J.T @ Yd
    return 0.5 * (Q + Q.T), Minv @ J.T @ Yd


def primal_objective(alpha, b, K, L, lab, yl, gamma_A, gamma_I, n, loss):
    f = K @ alpha
    z = yl * (f[lab] + b)
    V = np.maximum(0, 1 - z) if loss == "hinge" else np.maximum(0, 1 - z) ** 2
    return V.mean() + gamma_A * alpha @ f + gamma_I / n ** 2 * f @ L @ f


# ------------------------------------------------------------------------------- LapRLS

# LapRLS's default Laplacian: normalised (benchmarks/results/graph_defaults.md)
RLS_KIND, RLS_POWER = "normalized", 1


def test_laprls_default_graph_is_the_normalized_laplacian():
    assert (LapRLS().laplacian, LapRLS().laplacian_power) == (RLS_KIND, RLS_POWER)
    # LapSVM too since issue 26 (benchmarks/results/defaults_graph.md)
    assert (LapSVM().laplacian, LapSVM().laplacian_power) == ("normalized", 1)


@pytest.mark.parametrize("kind, power", [("unnormalized", 1), ("normalized", 1),
                                         ("unnormalized", 2)])
def test_laprls_equals_eq8(kind, power):
    X, y, _ = moons(120, per_class=4)
    gA, gI, g = 1e-2, 300.0, 3.0
    est = LapRLS(fallback="none", gamma_A=gA, gamma_I=gI, gamma=g, laplacian=kind,
                 laplacian_power=power)
    est.fit(X, y)
    K, L, lab, yl, n = dense_parts(X, y, g, kind=kind, power=power)
    alpha = eq8(K, L, lab, yl, gA, gI, n)
    np.testing.assert_allclose(est.alpha_[:, 0], alpha, rtol=1e-7, atol=1e-9)
    f = K @ alpha
    objective = np.mean((yl - f[lab]) ** 2) + gA * alpha @ f + gI / n ** 2 * f @ L @ f
    assert est.objective_ == pytest.approx(objective, rel=1e-9)


@pytest.mark.filterwarnings("ignore::semisup.graph.GraphWarning")  # blobs: 3 components
def test_laprls_multiclass_one_solve_equals_eq8_matrix_and_binary_fits():
    X, y, y_true = blobs3()
    est = LapRLS(fallback="none", gamma_A=1e-2, gamma_I=1e3, gamma=1.0).fit(X, y)
    K, L, lab, _, n = dense_parts(X, y, 1.0, kind=RLS_KIND, power=RLS_POWER)
    Y = np.where(y[lab][:, None] == np.arange(3)[None], 1.0, -1.0)    # one-hot +-1
    np.testing.assert_allclose(est.alpha_, eq8(K, L, lab, Y, 1e-2, 1e3, n), rtol=1e-7,
                               atol=1e-9)
    assert est.decision_function(X).shape == (X.shape[0], 3)
    assert np.mean(est.transduction_ == y_true) > 0.95
    # column c is the binary problem "c vs rest"
    yb = np.where(y == -1, -1, (y == 2).astype(int))
    bin_est = LapRLS(fallback="none", gamma_A=1e-2, gamma_I=1e3, gamma=1.0).fit(X, yb)
    np.testing.assert_allclose(bin_est.alpha_[:, 0], est.alpha_[:, 2], rtol=1e-8, atol=1e-10)


def test_laprls_with_intercept_solves_stationarity_system():
    X, y, _ = moons(100, per_class=5)
    gA, gI, g = 1e-2, 100.0, 2.0
    est = LapRLS(fallback="none", gamma_A=gA, gamma_I=gI, gamma=g, fit_intercept=True).fit(X, y)
    K, L, lab, yl, n = dense_parts(X, y, g, kind=RLS_KIND, power=RLS_POWER)
    l = lab.size
    # gradient of the objective in (alpha, b), divided by K: an (n+1) linear system
    J = np.zeros((n, n))
    J[lab, lab] = 1.0
    e = np.zeros(n)
    e[lab] = 1.0
    A = np.zeros((n + 1, n + 1))
    A[:n, :n] = J @ K + gA * l * np.eye(n) + gI * l / n ** 2 * L @ K
    A[:n, n] = e
    A[n, :n] = e @ K
    A[n, n] = l
    rhs = np.r_[np.where(y == 1, 1.0, np.where(y == 0, -1.0, 0.0)), yl.sum()]
    sol = np.linalg.solve(A, rhs)
    np.testing.assert_allclose(est.alpha_[:, 0], sol[:n], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(est.intercept_[0], sol[n], rtol=1e-6, atol=1e-8)


def test_laprls_gamma_I_zero_is_kernel_ridge():
    X, y, _ = moons(150, per_class=6)
    X_test = make_moons(40, noise=0.05, random_state=9)[0]
    gA = 0.05
    est = LapRLS(fallback="none", gamma_A=gA, gamma_I=0.0, gamma=2.0).fit(X, y)
    lab = np.flatnonzero(y != -1)
    kr = KernelRidge(alpha=gA * lab.size, kernel="rbf", gamma=2.0)
    kr.fit(X[lab], np.where(y[lab] == 1, 1.0, -1.0))
    unl = np.setdiff1d(np.arange(150), lab)
    assert np.all(est.alpha_[unl] == 0)               # "zero coefficients over unlabeled data"
    np.testing.assert_allclose(est.alpha_[lab, 0], kr.dual_coef_, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(est.decision_function(X_test), kr.predict(X_test), rtol=1e-7,
                               atol=1e-10)


# ------------------------------------------------------------------------------- LapSVM


def test_lapsvm_dual_beta_matches_cvxpy_qp_and_strong_duality():
    cp = pytest.importorskip("cvxpy")
    X, y, _ = moons(80, per_class=6)
    gA, gI, g = 1e-2, 200.0, 2.0
    est = LapSVM(fallback="none",
                 laplacian="unnormalized", gamma_A=gA, gamma_I=gI, gamma=g, tol=1e-9).fit(X, y)
    K, L, lab, yl, n = dense_parts(X, y, g)
    l = lab.size
    Q, expand = lapsvm_Q(K, L, lab, yl, gA, gI, n)
    beta = cp.Variable(l)
    w, V = np.linalg.eigh(Q)
    F = V * np.sqrt(np.clip(w, 0, None))                      # Q = F F^T
    prob = cp.Problem(cp.Maximize(cp.sum(beta) - 0.5 * cp.sum_squares(F.T @ beta)),
                      [yl @ beta == 0, beta >= 0, beta <= 1.0 / l])
    prob.solve(solver="CLARABEL")
    np.testing.assert_allclose(est.dual_objective_, prob.value, rtol=1e-6)
    np.testing.assert_allclose(est.dual_coef_[0], beta.value, atol=2e-5 / l)
    assert np.all(est.dual_coef_ >= 0) and np.all(est.dual_coef_ <= 1.0 / l + 1e-15)
    np.testing.assert_allclose(est.alpha_[:, 0], expand @ est.dual_coef_[0], rtol=1e-8,
                               atol=1e-10)                     # eq. 11
    # strong duality: the primal hinge objective equals the dual optimum
    np.testing.assert_allclose(est.objective_, est.dual_objective_, rtol=1e-5)
    assert est.objective_ == pytest.approx(
        primal_objective(est.alpha_[:, 0], est.intercept_[0], K, L, lab, yl, gA, gI, n,
                         "hinge"), rel=1e-10)


def test_lapsvm_dual_matches_cvxpy_primal_hinge():
    cp = pytest.importorskip("cvxpy")
    X, y, _ = moons(70, per_class=5, seed=3)
    gA, gI, g = 1e-2, 100.0, 2.0
    est = LapSVM(fallback="none",
                 laplacian="unnormalized", gamma_A=gA, gamma_I=gI, gamma=g, tol=1e-9).fit(X, y)
    K, L, lab, yl, n = dense_parts(X, y, g)
    w, V = np.linalg.eigh(K)
    R = V * np.sqrt(np.clip(w, 0, None))                       # K = R R^T
    wl, Vl = np.linalg.eigh(L)
    S = Vl * np.sqrt(np.clip(wl, 0, None))                     # L = S S^T
    a, b = cp.Variable(n), cp.Variable()
    f = K @ a
    obj = (cp.sum(cp.pos(1 - cp.multiply(yl, f[lab] + b))) / lab.size
           + gA * cp.sum_squares(R.T @ a) + gI / n ** 2 * cp.sum_squares(S.T @ f))
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver="CLARABEL")
    assert est.objective_ == pytest.approx(prob.value, rel=1e-5)
    np.testing.assert_allclose(est.training_scores_, K @ a.value + b.value, atol=2e-3)


@pytest.mark.parametrize("gamma_I", [0.0, 300.0])
def test_lapsvm_primal_pcg_equals_scipy_and_dual_on_squared_hinge(gamma_I):
    X, y, _ = moons(60, per_class=5, seed=1)
    gA, g = 1e-2, 2.0
    primal = LapSVM(fallback="none", laplacian="unnormalized", gamma_A=gA, gamma_I=gamma_I, gamma=g,
                    loss="squared_hinge", solver="primal", tol=1e-8).fit(X, y)
    dual = LapSVM(fallback="none", laplacian="unnormalized", gamma_A=gA, gamma_I=gamma_I, gamma=g,
                  loss="squared_hinge", solver="dual", tol=1e-10).fit(X, y)
    K, L, lab, yl, n = dense_parts(X, y, g)
    # independent, well-conditioned parametrisation: alpha = U S^-1/2 z, so that
    # alpha^T K alpha = ||z||^2 and f = K alpha = U S^1/2 z
    s, U = np.linalg.eigh(K)
    keep = s > 1e-12 * s.max()
    B = U[:, keep] * np.sqrt(s[keep])

    def fun(theta):
        z, b = theta[:-1], theta[-1]
        f = B @ z
        r = np.maximum(0, 1 - yl * (f[lab] + b))
        Lf = L @ f
        val = np.mean(r ** 2) + gA * z @ z + gamma_I / n ** 2 * f @ Lf
        gf = 2 * gamma_I / n ** 2 * Lf
        gf[lab] -= 2 * yl * r / lab.size
        return val, np.r_[B.T @ gf + 2 * gA * z, np.sum(-2 * yl * r) / lab.size]

    ref = so.minimize(fun, np.zeros(B.shape[1] + 1), jac=True, method="L-BFGS-B",
                      options={"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-12})
    assert primal.objective_ <= ref.fun * (1 + 1e-7)
    assert primal.objective_ == pytest.approx(ref.fun, rel=1e-5)
    assert primal.objective_ == pytest.approx(dual.objective_, rel=1e-9)
    assert dual.objective_ == pytest.approx(dual.dual_objective_, rel=1e-7)
    np.testing.assert_allclose(primal.training_scores_, dual.training_scores_, atol=1e-5)
    np.testing.assert_allclose(primal.intercept_, dual.intercept_, atol=1e-5)


@pytest.mark.filterwarnings("ignore::semisup.graph.GraphWarning")  # graph unused
def test_lapsvm_gamma_I_zero_is_svc():
    X, y, _ = moons(150, per_class=8, seed=2)
    X_test = make_moons(50, noise=0.05, random_state=11)[0]
    gA = 0.02
    lab = np.flatnonzero(y != -1)
    est = LapSVM(fallback="none", gamma_A=gA, gamma_I=0.0, gamma=2.0, tol=1e-10).fit(X, y)
    svc = SVC(C=1.0 / (2 * gA * lab.size), kernel="rbf", gamma=2.0, tol=1e-10)
    svc.fit(X[lab], y[lab])
    unl = np.setdiff1d(np.arange(150), lab)
    assert np.all(est.alpha_[unl] == 0)
    np.testing.assert_allclose(est.decision_function(X_test), svc.decision_function(X_test),
                               rtol=1e-6, atol=1e-6)
    assert np.array_equal(est.predict(X_test), svc.predict(X_test))


@pytest.mark.filterwarnings("ignore::semisup.graph.GraphWarning")  # blobs: 3 components
def test_lapsvm_multiclass_one_vs_rest():
    X, y, y_true = blobs3()
    for est in (LapSVM(fallback="none", gamma_A=1e-2, gamma_I=1e3, gamma=1.0),
                LapSVM(fallback="none",
                       gamma_A=1e-2, gamma_I=1e3, gamma=1.0, loss="squared_hinge")):
        est.fit(X, y)
        assert est.alpha_.shape == (X.shape[0], 3)
        assert est.decision_function(X[:5]).shape == (5, 3)
        assert np.mean(est.transduction_ == y_true) > 0.95
    # output 1 is the binary problem "class 1 vs rest"
    yb = np.where(y == -1, -1, (y == 1).astype(int))
    b = LapSVM(fallback="none", gamma_A=1e-2, gamma_I=1e3, gamma=1.0, tol=1e-9).fit(X, yb)
    m = LapSVM(fallback="none", gamma_A=1e-2, gamma_I=1e3, gamma=1.0, tol=1e-9).fit(X, y)
    np.testing.assert_allclose(b.training_scores_, m.training_scores_[:, 1], atol=1e-6)


def test_primal_warns_when_max_iter_reached():
    from sklearn.exceptions import ConvergenceWarning

    X, y, _ = moons(100, per_class=3)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        LapSVM(loss="squared_hinge", gamma=5.0, max_iter=3, tol=1e-12).fit(X, y)


def test_primal_early_stopping_saves_iterations_and_keeps_labels():
    X, y, y_true = moons(300, per_class=2, seed=4)
    full = LapSVM(fallback="none", gamma_A=1e-3, gamma_I=3e4, gamma=5.0, loss="squared_hinge",
                  tol=1e-8, max_iter=5000).fit(X, y)
    early = LapSVM(fallback="none", gamma_A=1e-3, gamma_I=3e4, gamma=5.0, loss="squared_hinge",
                   tol=1e-8, max_iter=5000, early_stopping=0.0, check_every=10).fit(X, y)
    assert early.stopped_early_[0] and not full.stopped_early_[0]
    assert early.n_iter_[0] < full.n_iter_[0]
    assert early.objective_ >= full.objective_ * (1 - 1e-12)
    assert np.mean(early.transduction_ == full.transduction_) > 0.99


# ------------------------------------------------------------------------------- shared


def test_deformed_kernel_turns_supervised_methods_into_laplacian_ones():
    X, y, _ = moons(120, per_class=5)
    gA, gI, g = 1e-2, 500.0, 3.0
    n = X.shape[0]
    K = kernel_matrix(X, kernel="rbf", gamma=g)
    L = laplacian(adjacency_graph(X, 6, warn=False))
    Kt = deformed_kernel(K, L, gI / n ** 2 / gA)
    assert np.allclose(Kt, Kt.T) and np.linalg.eigvalsh(Kt).min() > -1e-8
    lab = np.flatnonzero(y != -1)
    yl = np.where(y[lab] == 1, 1.0, -1.0)
    rls = LapRLS(gamma_A=gA, gamma_I=gI, gamma=g, laplacian="unnormalized",
                 laplacian_power=1).fit(X, y)
    c = np.linalg.solve(Kt[np.ix_(lab, lab)] + gA * lab.size * np.eye(lab.size), yl)
    np.testing.assert_allclose(rls.training_scores_, Kt[:, lab] @ c, atol=1e-8)
    svm = LapSVM(fallback="none",
                 laplacian="unnormalized", gamma_A=gA, gamma_I=gI, gamma=g, tol=1e-10).fit(X, y)
    svc = SVC(kernel="precomputed", C=1 / (2 * gA * lab.size), tol=1e-10)
    svc.fit(Kt[np.ix_(lab, lab)], yl)
    np.testing.assert_allclose(svm.training_scores_, svc.decision_function(Kt[:, lab]),
                               atol=1e-6)


def test_out_of_sample_precomputed_and_given_graph_paths_agree():
    X, y, _ = moons(120, per_class=3)
    X_new = make_moons(30, noise=0.1, random_state=5)[0]
    W = adjacency_graph(X, 6, warn=False)
    for cls in (LapRLS, LapSVM):
        # LapSVM's guard runs on a alone (b's given graph and c's Gram matrix skip it)
        published = {"fallback": "none"}
        a = cls(gamma_A=1e-2, gamma_I=500.0, gamma=3.0, **published).fit(X, y)
        np.testing.assert_allclose(a.decision_function(X), a.training_scores_, atol=1e-9)
        b = cls(gamma_A=1e-2, gamma_I=500.0, gamma=3.0, graph=W).fit(X, y)
        c = cls(gamma_A=1e-2, gamma_I=500.0, kernel="precomputed", graph=W)
        c.fit(kernel_matrix(X, kernel="rbf", gamma=3.0), y)
        Kn = kernel_matrix(X_new, X, kernel="rbf", gamma=3.0)
        np.testing.assert_allclose(b.decision_function(X_new), a.decision_function(X_new),
                                   atol=1e-8)
        np.testing.assert_allclose(c.decision_function(Kn), a.decision_function(X_new),
                                   atol=1e-8)
        assert np.array_equal(c.predict(Kn), a.predict(X_new))


def test_sparse_input_and_graph_scale_sum():
    X, y, _ = moons(100, per_class=4)
    Xs = sp.csr_matrix(X)
    for scale in ("n2", "sum"):
        a = LapRLS(fallback="none", gamma_A=1e-2, gamma_I=10.0, gamma=3.0,
                   graph_scale=scale).fit(X, y)
        b = LapRLS(fallback="none", gamma_A=1e-2, gamma_I=10.0, gamma=3.0,
                   graph_scale=scale).fit(Xs, y)
        np.testing.assert_allclose(a.alpha_, b.alpha_, rtol=1e-8, atol=1e-10)
    W = adjacency_graph(X, 6, warn=False)
    K, L, lab, yl, n = dense_parts(X, y, 3.0, kind=RLS_KIND, power=RLS_POWER)
    # 'sum' scale: gamma_I / sum(W) in place of gamma_I / n^2
    alpha = eq8(K, L, lab, yl, 1e-2, 10.0 * n ** 2 / W.sum(), n)
    np.testing.assert_allclose(a.alpha_[:, 0], alpha, rtol=1e-7, atol=1e-9)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), log_gA=st.floats(-4, 0), log_gI=st.floats(-1, 4),
       n_lab=st.integers(1, 5))
def test_laprls_property_matches_eq8(seed, log_gA, log_gI, n_lab):
    rng = np.random.default_rng(seed)
    n = 40
    X = rng.normal(size=(n, 3))
    y = np.full(n, -1)
    y[:n_lab] = 0
    y[n_lab:2 * n_lab] = 1
    gA, gI = 10.0 ** log_gA, 10.0 ** log_gI
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphWarning)
        est = LapRLS(fallback="none", gamma_A=gA, gamma_I=gI, gamma=0.5).fit(X, y)
        K, L, lab, yl, _ = dense_parts(X, y, 0.5, kind=RLS_KIND, power=RLS_POWER)
    alpha = eq8(K, L, lab, yl, gA, gI, n)
    np.testing.assert_allclose(K @ est.alpha_[:, 0], K @ alpha, rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------------------- two moons


@pytest.mark.parametrize("seed", [0, 1, 3])
def test_two_moons_lapsvm_separates_svm_does_not(seed):
    """Paper, figure 2: 200 points, one label per moon, RBF kernel, 6-NN graph."""
    X, y, y_true = moons(200, per_class=1, seed=seed)
    unl = y == -1
    lap = LapSVM(laplacian="unnormalized", gamma_A=1e-3, gamma_I=1e4, gamma=10.0).fit(X, y)
    svm = LapSVM(gamma_A=1e-3, gamma_I=0.0, gamma=10.0).fit(X, y)
    assert np.mean(lap.transduction_[unl] != y_true[unl]) <= 0.01   # at most 1 of 198
    assert np.mean(svm.transduction_[unl] != y_true[unl]) > 0.1
    # out of sample: fresh points from the same moons
    X_new, y_new = make_moons(400, noise=0.1, random_state=100 + seed)
    assert np.mean(lap.predict(X_new) == y_new) > 0.97


# ------------------------------------------------------------------------------- bad input


def test_bad_labels_error():
    X, _, _ = moons(50)
    with pytest.raises(ValueError, match="no labeled rows"):
        LapRLS().fit(X, np.full(50, -1))
    y = np.full(50, -1)
    y[:3] = 1
    for est in (LapRLS(), LapSVM()):
        with pytest.raises(ValueError, match="1 class"):
            est.fit(X, y)


@pytest.mark.parametrize("kwargs, match", [
    ({"gamma_A": 0.0}, "gamma_A"), ({"gamma_I": -1.0}, "gamma_I"), ({"kernel": "sigmoid"},
                                                                     "kernel"),
    ({"graph": "epsilon"}, "graph"), ({"n_neighbors": 0}, "n_neighbors"),
    ({"laplacian": "random_walk"}, "laplacian"), ({"graph_scale": "l"}, "graph_scale"),
    ({"laplacian_power": 0}, "laplacian_power"), ({"kernel": "precomputed"}, "graph=W"),
])
def test_bad_parameters_name_the_argument(kwargs, match):
    X, y, _ = moons(40, per_class=2)
    with pytest.raises(ValueError, match=match):
        LapRLS(**kwargs).fit(X, y)


def test_lapsvm_bad_solver_loss_combination():
    X, y, _ = moons(40, per_class=2)
    with pytest.raises(ValueError, match="squared_hinge"):
        LapSVM(solver="primal").fit(X, y)
    with pytest.raises(ValueError, match="early_stopping"):
        LapSVM(early_stopping=0.01).fit(X, y)
    with pytest.raises(ValueError, match="loss"):
        LapSVM(loss="log").fit(X, y)


def test_given_graph_must_match():
    X, y, _ = moons(40, per_class=2)
    with pytest.raises(ValueError, match="shape"):
        LapRLS(graph=sp.eye(10, format="csr")).fit(X, y)
    W = sp.random(40, 40, density=0.2, random_state=0, format="csr")
    with pytest.raises(ValueError, match="symmetric"):
        LapRLS(graph=W).fit(X, y)


def test_duplicates_warn_and_stay_finite():
    X, y, _ = moons(80, per_class=3)
    X = np.vstack([X, X[:10]])                                 # 10 exact duplicates
    y = np.r_[y, np.full(10, -1)]
    assert count_duplicate_rows(X) == 10
    assert count_duplicate_rows(sp.csr_matrix(X)) == 10
    # fallback="none": the graph itself is under test, not the guard's choice
    for est in (LapRLS(gamma=3.0, gamma_I=100.0),
                LapSVM(gamma=3.0, gamma_I=100.0, fallback="none"),
                LapSVM(gamma=3.0, gamma_I=100.0, loss="squared_hinge", fallback="none")):
        with pytest.warns(GraphWarning, match="duplicate"):
            est.fit(X, y)
        assert np.all(np.isfinite(est.alpha_)) and np.all(np.isfinite(est.decision_function(X)))
    with pytest.warns(GraphWarning, match="duplicate"):
        emb = LaplacianEigenmaps(gamma=3.0).fit_transform(X)
    assert np.all(np.isfinite(emb))


def test_disconnected_graph_warns_and_stays_finite():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(30, 2)), 100 + rng.normal(size=(30, 2))])
    y = np.full(60, -1)
    y[[0, 1]] = [0, 1]                                         # both labels in one component
    for est in (LapRLS(gamma_I=1e3), LapSVM(gamma_I=1e3),
                LapSVM(gamma_I=1e3, loss="squared_hinge")):
        with pytest.warns(GraphWarning, match="connected components"):
            est.fit(X, y)
        assert np.all(np.isfinite(est.decision_function(X)))
    with pytest.warns(GraphWarning, match="connected components"):
        clus = RegularizedSpectralClustering(gamma=0.5).fit(X)
    assert adjusted_rand_score(clus.labels_, np.repeat([0, 1], 30)) == 1.0


def test_pickle_roundtrip():
    X, y, _ = moons(60, per_class=3)
    for est in (LapRLS(gamma=3.0), LapSVM(gamma=3.0),
                LapSVM(gamma=3.0, loss="squared_hinge"), LaplacianEigenmaps(gamma=3.0)):
        est.fit(X, y)
        clone = pickle.loads(pickle.dumps(est))
        out = "transform" if hasattr(est, "transform") else "decision_function"
        np.testing.assert_allclose(getattr(clone, out)(X), getattr(est, out)(X), rtol=1e-9,
                                   atol=1e-12)


# ------------------------------------------------------------------------------- spectral


def _eq13_reference(K, L, gamma, k):
    """Eq. 13 with a dense generalised eigensolver (needs a well-conditioned K)."""
    n = K.shape[0]
    P = sla.null_space((K @ np.ones(n))[None, :])                    # basis of (K1)^perp
    A = P.T @ (gamma * K + K @ L @ K) @ P
    B = P.T @ K @ K @ P
    vals, V = sla.eigh(0.5 * (A + A.T), 0.5 * (B + B.T), subset_by_index=[0, k - 1])
    return vals, K @ P @ V


def test_regularized_eigenmaps_solve_eq13():
    X, _, _ = moons(100)
    K = kernel_matrix(X, kernel="rbf", gamma=2.0) + 0.5 * np.eye(100)  # well conditioned
    W = adjacency_graph(X, 6, warn=False)
    L = laplacian(W).toarray()
    est = LaplacianEigenmaps(n_components=3, kernel="precomputed", graph=W, gamma_A=1e-3,
                             gamma_I=1.0)
    emb = est.fit_transform(K)
    gamma = 1e-3 / (1.0 / 100 ** 2)
    vals, ref = _eq13_reference(K, L, gamma, 3)
    np.testing.assert_allclose(est.eigenvalues_, vals, rtol=1e-6)
    for j in range(3):
        assert abs(np.corrcoef(emb[:, j], ref[:, j])[0, 1]) > 1 - 1e-6
    np.testing.assert_allclose(emb.mean(axis=0), 0, atol=1e-10)          # f ⊥ 1
    np.testing.assert_allclose(np.linalg.norm(emb, axis=0), 1, rtol=1e-10)  # ||f|| = 1
    np.testing.assert_allclose(est.transform(K), emb, atol=1e-8)         # out of sample = f


def test_small_gamma_gives_laplacian_eigenmaps():
    X, _, _ = moons(150, noise=0.08)
    W = adjacency_graph(X, 10, warn=False)
    L = laplacian(W).toarray()
    fiedler = np.linalg.eigh(L)[1][:, 1]
    est = LaplacianEigenmaps(n_components=1, gamma=20.0, graph=W, gamma_A=1e-10).fit(X)
    assert abs(np.corrcoef(est.embedding_[:, 0], fiedler)[0, 1]) > 0.99


def test_spectral_clustering_two_moons_and_out_of_sample():
    X, _, y_true = moons(200)
    est = RegularizedSpectralClustering(gamma=20.0, gamma_A=1e-6).fit(X)
    assert adjusted_rand_score(est.labels_, y_true) == 1.0
    # a large gamma_A (ambient smoothness dominates) no longer follows the moons
    smooth = RegularizedSpectralClustering(gamma=20.0, gamma_A=1e-2).fit(X)
    assert adjusted_rand_score(smooth.labels_, y_true) < 0.5
    X_new, y_new = make_moons(300, noise=0.1, random_state=3)
    assert adjusted_rand_score(est.predict(X_new), y_new) > 0.9
    np.testing.assert_array_equal(est.predict(X), est.labels_)


@pytest.mark.filterwarnings("ignore::semisup.graph.GraphWarning")  # blobs: 3 components
def test_spectral_clustering_three_blobs():
    X, _, y_true = blobs3(150)
    est = RegularizedSpectralClustering(n_clusters=3, random_state=0).fit(X)
    assert adjusted_rand_score(est.labels_, y_true) > 0.95


# ------------------------------------------------------------------------------- solvers


def test_svm_dual_matches_cvxpy():
    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(0)
    A = rng.normal(size=(25, 4))
    G = A @ A.T
    y = np.where(A[:, 0] + 0.3 * rng.normal(size=25) > 0, 1.0, -1.0)
    res = svm_dual(G, y, C=0.7, tol=1e-10)
    b = cp.Variable(25)
    prob = cp.Problem(cp.Maximize(cp.sum(b) - 0.5 * cp.sum_squares(A.T @ cp.multiply(y, b))),
                      [y @ b == 0, b >= 0, b <= 0.7])
    prob.solve(solver="CLARABEL")
    assert res.objective == pytest.approx(prob.value, rel=1e-7)
    np.testing.assert_allclose(res.beta, b.value, atol=1e-5)
    with pytest.raises(ValueError, match="both"):
        svm_dual(G, np.ones(25), C=1.0)


def test_linear_pcg_solves_spd_system():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(50, 50))
    H = A @ A.T + 0.1 * np.eye(50)
    b = rng.normal(size=50)
    d = np.diag(H)
    res = pcg(lambda v: H @ v, b, precond=lambda r: r / d, tol=1e-12, max_iter=500)
    assert res.converged
    np.testing.assert_allclose(res.x, np.linalg.solve(H, b), rtol=1e-8, atol=1e-10)


# ------------------------------------------------------------------------------- sklearn API

_MINUS_ONE = ("y == -1 marks unlabeled rows (the sklearn.semi_supervised convention), so the "
              "check's class label -1 cannot be a class")


@parametrize_with_checks(
    [LapRLS(), LapSVM(), LapSVM(loss="squared_hinge"), RegularizedSpectralClustering(),
     LaplacianEigenmaps()],
    expected_failed_checks=lambda est: {"check_classifiers_classes": _MINUS_ONE}
    if isinstance(est, LapRLS | LapSVM) else {},
)
@pytest.mark.filterwarnings("ignore:y has no unlabeled rows:UserWarning")
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GraphWarning)
        check(estimator)
