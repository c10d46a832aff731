"""Prototype vector machine and its baselines against dense and independent references."""

import pickle
import tracemalloc
import warnings

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from semisup.graph import laplacian
from semisup.kernels import kernel_matrix
from semisup.prototypes import (
    ClusterLapRLS,
    NystromLabelSpreading,
    NystromLaplacian,
    PrototypeGraph,
    PrototypeVectorMachine,
    default_n_prototypes,
    prototype_kernel,
    select_prototypes,
)
from semisup.prototypes.lowrank import psd_solve, sparsify_rows, weighted_cross

# ----------------------------------------------------------------------------- helpers


def blobs(rng, n=160, d=3, n_classes=2, n_labeled=4, spread=4.0):
    """Unit Gaussian blobs centred at ``spread`` times the first unit vectors (``spread * 1.4``
    apart); ``n_labeled`` labeled rows per class (the first ones of each class)."""
    y_true = np.repeat(np.arange(n_classes), n // n_classes)
    centres = spread * np.eye(max(n_classes, d))[:n_classes, :d]
    X = centres[y_true] + rng.normal(size=(y_true.size, d))
    y = np.full(y_true.size, -1)
    for c in range(n_classes):
        idx = np.flatnonzero(y_true == c)[:n_labeled]
        y[idx] = c
    return X, y, y_true


def dense_nystrom_laplacian(E, W, kind):
    """Eqs. (13)-(14) written out with numpy's pseudo-inverse."""
    K = E @ np.linalg.pinv(W, rcond=1e-10, hermitian=True) @ E.T
    d = K.sum(axis=1)
    if kind == "unnormalized":
        return np.diag(d) - K
    s = 1.0 / np.sqrt(d)
    return np.eye(K.shape[0]) - s[:, None] * K * s[None, :]


def pvm_dense_pieces(X, y, V, gamma, kind, scale, C2, regularizer):
    """``H``, labeled rows, targets and ``A = s H^T S H + C2 R`` from dense matrices."""
    H = kernel_matrix(X, V, gamma=gamma)
    W = kernel_matrix(V, gamma=gamma)
    S = dense_nystrom_laplacian(H, W, kind)
    lab = np.flatnonzero(y != -1)
    unl = np.flatnonzero(y == -1)
    R = W if regularizer == "rkhs" else H[unl].T @ H[unl]
    A = scale * H.T @ S @ H + C2 * R
    return H, lab, A


# ----------------------------------------------------------------------------- prototypes


def test_default_number_of_prototypes_follows_the_paper():
    assert default_n_prototypes(1000) == 100
    assert default_n_prototypes(3000) == 300
    assert default_n_prototypes(3001) == 200
    assert default_n_prototypes(1_000_000) == 200
    assert default_n_prototypes(10) == 2
    assert default_n_prototypes(1) == 1


@pytest.mark.parametrize("method", ["kmeans", "minibatch"])
def test_kmeans_prototypes_find_separated_clusters(rng, method):
    means = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0], [10.0, 10.0]])
    X = np.repeat(means, 100, axis=0) + 0.3 * rng.normal(size=(400, 2))
    V = select_prototypes(X, 4, method=method, random_state=0)
    dist = np.linalg.norm(V[:, None, :] - means[None], axis=2)
    assert sorted(dist.argmin(axis=1)) == [0, 1, 2, 3]
    assert dist.min(axis=1).max() < 0.5


def test_kmeans_objective_improves_with_iterations_and_is_deterministic(rng):
    X = rng.normal(size=(600, 5))
    inertia = []
    for it in (1, 2, 5, 30):
        V = select_prototypes(X, 20, max_iter=it, random_state=3)
        inertia.append(np.min(((X[:, None] - V[None]) ** 2).sum(-1), axis=1).sum())
    assert all(a >= b - 1e-9 for a, b in zip(inertia, inertia[1:], strict=False))
    np.testing.assert_array_equal(select_prototypes(X, 20, random_state=3),
                                  select_prototypes(X, 20, random_state=3))


def test_random_prototypes_are_rows_and_sparse_input_gives_dense_centres(rng):
    X = rng.normal(size=(50, 4))
    V = select_prototypes(X, 7, method="random", random_state=0)
    assert all(np.any(np.all(X == v, axis=1)) for v in V)
    Vs = select_prototypes(sp.csr_matrix(X), 7, method="kmeans", random_state=0)
    assert isinstance(Vs, np.ndarray) and Vs.shape == (7, 4)
    np.testing.assert_allclose(Vs, select_prototypes(X, 7, method="kmeans", random_state=0))


# ----------------------------------------------------------------------------- low rank


def test_prototype_kernel_blocks_and_sparse_input(rng):
    X, V = rng.normal(size=(37, 4)), rng.normal(size=(6, 4))
    ref = np.exp(-0.3 * ((X[:, None] - V[None]) ** 2).sum(-1))
    np.testing.assert_allclose(prototype_kernel(X, V, 0.3, block_size=5), ref, rtol=1e-12)
    np.testing.assert_allclose(prototype_kernel(sp.csr_matrix(X), V, 0.3), ref, rtol=1e-12)


def test_sparsify_rows_keeps_the_nearest_prototypes(rng):
    H = rng.random((20, 9))
    S = sparsify_rows(H, 3)
    assert S.nnz == 60 and np.all(np.diff(S.indptr) == 3)
    for i in range(20):
        keep = np.sort(np.argsort(H[i])[-3:])
        np.testing.assert_array_equal(S[i].indices, keep)
        np.testing.assert_allclose(S[i].data, H[i, keep])
    np.testing.assert_allclose(sparsify_rows(H, 9).toarray(), H)


@pytest.mark.parametrize("sparse_a", [False, True])
@pytest.mark.parametrize("sparse_b", [False, True, None])
def test_weighted_cross(rng, sparse_a, sparse_b):
    A = rng.normal(size=(41, 5))
    B = rng.normal(size=(41, 3))
    w = rng.random(41)
    As = sp.csr_matrix(A) if sparse_a else A
    if sparse_b is None:   # the Gram matrix A^T diag(w) A
        np.testing.assert_allclose(weighted_cross(As, weights=w, block_size=7),
                                   A.T @ (w[:, None] * A), rtol=1e-12, atol=1e-12)
        return
    Bs = sp.csr_matrix(B) if sparse_b else B
    np.testing.assert_allclose(weighted_cross(As, Bs, w, block_size=7), A.T @ (w[:, None] * B),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["unnormalized", "normalized"])
def test_nystrom_laplacian_is_exact_when_every_point_is_a_landmark(rng, kind):
    """With V = X, E W^+ E^T = K: eqs. (13)-(14) must equal the graph Laplacians of K."""
    X = rng.normal(size=(30, 3))
    K = kernel_matrix(X, gamma=0.5)
    lap = NystromLaplacian(K, K, kind=kind)
    ref = laplacian(sp.csr_matrix(K), kind=kind).toarray()
    np.testing.assert_allclose(lap.to_dense(), ref, atol=1e-7)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(8, 40), m=st.integers(2, 8), kind=st.sampled_from(["unnormalized",
                                                                          "normalized"]),
       seed=st.integers(0, 2**16), k=st.integers(1, 8))
def test_nystrom_laplacian_operators_match_the_dense_matrix(n, m, kind, seed, k):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    V = X[rng.choice(n, size=min(m, n), replace=False)] + 0.01 * rng.normal(size=(min(m, n), 3))
    E = kernel_matrix(X, V, gamma=0.4)
    W = kernel_matrix(V, gamma=0.4)
    lap = NystromLaplacian(E, W, kind=kind)
    S = dense_nystrom_laplacian(E, W, kind)
    np.testing.assert_allclose(lap.to_dense(), S, atol=1e-7 * max(1, np.abs(S).max()))
    f = rng.normal(size=n)
    np.testing.assert_allclose(lap.matvec(f), S @ f, atol=1e-6 * max(1, np.abs(S).max()))
    ref = E.T @ S @ E
    tol = 1e-6 * max(1.0, np.abs(ref).max(), np.abs(E.T @ E).max())
    np.testing.assert_allclose(lap.project(), ref, atol=tol)
    B = sparsify_rows(E, k)
    refB = B.toarray().T @ S @ B.toarray()
    np.testing.assert_allclose(lap.project(B), refB, atol=tol)
    if kind == "unnormalized":    # a Laplacian: constants are in its null space
        np.testing.assert_allclose(lap.matvec(np.ones(n)), 0.0, atol=1e-6 * lap.degree.max())
    else:
        G = lap.normalized_affinity_factor()
        np.testing.assert_allclose(np.eye(n) - G @ G.T, S, atol=1e-6)


def test_psd_solve_gives_the_minimum_norm_solution(rng):
    U = rng.normal(size=(6, 3))
    A = U @ U.T
    b = A @ rng.normal(size=6)
    x = psd_solve(A, b)
    np.testing.assert_allclose(x, np.linalg.pinv(A) @ b, atol=1e-8)


# ----------------------------------------------------------------------------- PVM, square


@pytest.mark.parametrize("kind", ["unnormalized", "normalized"])
@pytest.mark.parametrize("regularizer", ["unlabeled", "rkhs"])
def test_square_loss_minimises_eq22(rng, kind, regularizer):
    X, y, _ = blobs(rng, n=80)
    V = select_prototypes(X, 10, random_state=0)
    gamma, C1, C2, scale = 0.2, 3.0, 0.5, 0.01
    est = PrototypeVectorMachine(fallback="none",
                                 prototypes=V, gamma=gamma, C1=C1, C2=C2, laplacian=kind,
                                 regularizer=regularizer, graph_scale=scale).fit(X, y)
    H, lab, A = pvm_dense_pieces(X, y, V, gamma, kind, scale, C2, regularizer)
    yl = np.where(y[lab] == 1, 1.0, -1.0)

    def objective(f):
        r = H[lab] @ f - yl
        return f @ A @ f + C1 * r @ r, 2 * A @ f + 2 * C1 * H[lab].T @ r

    opt = so.minimize(objective, np.zeros(10), jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000})
    f = est.prototype_labels_[:, 0]
    assert objective(f)[0] <= opt.fun + 1e-8 * max(1, abs(opt.fun))
    np.testing.assert_allclose(H @ f, H @ opt.x, atol=1e-4)
    np.testing.assert_allclose(est.decision_function(X), H @ f, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["unnormalized", "normalized"])
def test_pvm_with_all_points_as_prototypes_is_laprls(rng, kind):
    """V = X, RKHS regulariser, C1 = 1/l, C2 = gamma_A, s = gamma_I/n^2: eq. (22) is LapRLS
    (eq. 5) with the kernel graph; compare with its closed form (eq. 6)."""
    X, y, _ = blobs(rng, n=60, n_labeled=5)
    Xt = rng.normal(size=(15, 3))
    gamma, gA, gI = 1.0, 1e-2, 1.0
    n, lab = X.shape[0], np.flatnonzero(y != -1)
    l = lab.size
    K = kernel_matrix(X, gamma=gamma)
    L = laplacian(sp.csr_matrix(K), kind=kind).toarray()
    J = np.zeros((n, n))
    J[lab, lab] = 1.0
    Y = np.zeros(n)
    Y[lab] = np.where(y[lab] == 1, 1.0, -1.0)
    alpha = np.linalg.solve(J @ K + gA * l * np.eye(n) + gI * l / n ** 2 * L @ K, Y)
    est = PrototypeVectorMachine(fallback="none",
                                 prototypes=X, gamma=gamma, regularizer="rkhs", C1=1.0 / l,
                                 C2=gA, graph_scale=gI / n ** 2, laplacian=kind).fit(X, y)
    ref = kernel_matrix(Xt, X, gamma=gamma) @ alpha
    np.testing.assert_allclose(est.decision_function(Xt), ref, atol=1e-7)


def test_pvm_matches_semisup_manifold_laprls(rng):
    """Same reduction against the library's LapRLS (its graph drops self-loops, which the
    unnormalised Laplacian ignores)."""
    from semisup.manifold import LapRLS

    X, y, _ = blobs(rng, n=60, n_labeled=5)
    Xt = rng.normal(size=(15, 3))
    gamma, gA, gI, n, l = 1.0, 1e-2, 2.0, 60, 10
    K = kernel_matrix(X, gamma=gamma)
    ref = LapRLS(gamma_A=gA, gamma_I=gI, gamma=gamma, graph=K,
                 laplacian="unnormalized", laplacian_power=1).fit(X, y)
    est = PrototypeVectorMachine(fallback="none",
                                 prototypes=X, gamma=gamma, regularizer="rkhs", C1=1.0 / l,
                                 C2=gA, graph_scale=gI / n ** 2,
                                 laplacian="unnormalized").fit(X, y)
    np.testing.assert_allclose(est.decision_function(Xt), ref.decision_function(Xt),
                               atol=1e-7)


def test_square_path_equals_solve(rng):
    X, y, _ = blobs(rng, n=150, n_classes=3, n_labeled=6)
    V = select_prototypes(X, 15, random_state=0)
    graph = PrototypeGraph(X, V, 0.3)
    lab = np.flatnonzero(y != -1)
    Y = np.where(y[lab][:, None] == np.arange(3)[None], 1.0, -1.0)
    C1s = [1e-3, 0.1, 1.0, 10.0, 1e3]
    for C1, F in zip(C1s, graph.square_path(lab, Y, C1s, C2=0.1), strict=True):
        ref = graph.solve(lab, Y, C1=C1, C2=0.1).prototype_labels
        np.testing.assert_allclose(graph.H @ F, graph.H @ ref, atol=1e-8)


@pytest.mark.parametrize("loss", ["square", "hinge"])
def test_multiclass_is_one_vs_rest_in_one_target_matrix(rng, loss):
    X, y, _ = blobs(rng, n=150, n_classes=3, n_labeled=5)
    V = select_prototypes(X, 15, random_state=0)
    params = dict(loss=loss, prototypes=V, gamma=0.2, C1=2.0, C2=0.1, tol=1e-10,
                  random_state=0, fallback="none")
    multi = PrototypeVectorMachine(**params).fit(X, y)
    scores = multi.decision_function(X)
    assert scores.shape == (150, 3)
    for k in range(3):
        yk = np.where(y == -1, -1, (y == k).astype(int))
        binary = PrototypeVectorMachine(**params).fit(X, yk)
        np.testing.assert_allclose(scores[:, k], binary.decision_function(X), atol=1e-5)
    np.testing.assert_array_equal(multi.predict(X), np.argmax(scores, axis=1))


# ----------------------------------------------------------------------------- PVM, hinge


@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("kind", ["unnormalized", "normalized"])
def test_hinge_loss_matches_cvxpy(rng, fit_intercept, kind):
    """Eqs. (24)-(29): the SVM-solver route equals the primal solved by cvxpy."""
    cp = pytest.importorskip("cvxpy")
    X, y, _ = blobs(rng, n=90, n_labeled=12, spread=1.0)
    V = select_prototypes(X, 12, random_state=0)
    gamma, C1, C2, scale = 0.3, 0.7, 0.2, 0.05
    est = PrototypeVectorMachine(fallback="none",
                                 loss="hinge", prototypes=V, gamma=gamma, C1=C1, C2=C2,
                                 laplacian=kind, graph_scale=scale, fit_intercept=fit_intercept,
                                 tol=1e-10, random_state=0).fit(X, y)
    H, lab, A = pvm_dense_pieces(X, y, V, gamma, kind, scale, C2, "unlabeled")
    yl = np.where(y[lab] == 1, 1.0, -1.0)
    f = cp.Variable(12)
    b = cp.Variable() if fit_intercept else 0.0
    A = 0.5 * (A + A.T)
    obj = 0.5 * cp.quad_form(f, cp.psd_wrap(A)) + C1 * cp.sum(
        cp.pos(1 - cp.multiply(yl, H[lab] @ f + b)))
    cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL")
    b_ref = float(b.value) if fit_intercept else 0.0

    def primal(fv, bias):
        return 0.5 * fv @ A @ fv + C1 * np.maximum(0, 1 - yl * (H[lab] @ fv + bias)).sum()

    fv, bias = est.prototype_labels_[:, 0], est.intercept_[0]
    # A is positive definite, so f_v is unique; the bias of a hinge loss need not be (any
    # value in an interval when no dual variable is strictly inside the box)
    np.testing.assert_allclose(H @ fv, H @ f.value, atol=2e-4 * max(1.0, np.abs(H @ fv).max()))
    assert primal(fv, bias) == pytest.approx(primal(f.value, b_ref), rel=1e-6)
    np.testing.assert_allclose(est.decision_function(X), H @ fv + bias, atol=1e-10)


# ----------------------------------------------------------------------------- PVM, API


def test_transduction_labels_and_string_classes(rng):
    X, y, y_true = blobs(rng, n=120, n_labeled=5)
    names = np.array(["cat", "dog"])
    ys = names[np.maximum(y, 0)].astype(object)
    ys[y == -1] = -1
    est = PrototypeVectorMachine(n_prototypes=12, random_state=0).fit(X, ys)
    unl = y == -1
    np.testing.assert_array_equal(est.transduction_[~unl], ys[~unl])
    np.testing.assert_array_equal(est.transduction_[unl], est.predict(X[unl]))
    assert set(est.classes_) == {"cat", "dog"}
    assert np.mean(est.transduction_ == names[y_true]) > 0.95


@pytest.mark.parametrize("loss", ["square", "hinge"])
def test_sparse_input_equals_dense_and_is_deterministic(rng, loss):
    X, y, _ = blobs(rng, n=100, d=6)
    X[np.abs(X) < 0.5] = 0.0
    a = PrototypeVectorMachine(fallback="none",
                               loss=loss, n_prototypes=10, random_state=4).fit(X, y)
    b = PrototypeVectorMachine(fallback="none", loss=loss, n_prototypes=10,
                               random_state=4).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(a.prototypes_, b.prototypes_, atol=1e-10)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(sp.csr_matrix(X)),
                               atol=1e-6)
    c = PrototypeVectorMachine(fallback="none",
                               loss=loss, n_prototypes=10, random_state=4).fit(X, y)
    np.testing.assert_array_equal(a.decision_function(X), c.decision_function(X))
    restored = pickle.loads(pickle.dumps(a))
    np.testing.assert_array_equal(restored.decision_function(X), a.decision_function(X))


def test_nearest_prototype_sparsification(rng):
    X, y, _ = blobs(rng, n=100)
    V = select_prototypes(X, 10, random_state=0)
    dense = PrototypeVectorMachine(fallback="none", prototypes=V, gamma=0.3, C2=0.1).fit(X, y)
    full = PrototypeVectorMachine(fallback="none", prototypes=V, gamma=0.3, C2=0.1,
                                  n_nearest_prototypes=10).fit(X, y)
    np.testing.assert_allclose(full.decision_function(X), dense.decision_function(X),
                               atol=1e-8)
    sparse = PrototypeVectorMachine(fallback="none", prototypes=V, gamma=0.3, C2=0.1,
                                    n_nearest_prototypes=3).fit(X, y)
    Ht = sparsify_rows(kernel_matrix(X, V, gamma=0.3), 3)
    np.testing.assert_allclose(sparse.decision_function(X),
                               Ht @ sparse.prototype_labels_[:, 0], atol=1e-12)


def test_fit_never_allocates_an_n_by_n_matrix(rng):
    n, m = 8000, 20
    X = rng.normal(size=(n, 5))
    y = np.full(n, -1)
    y[:10], y[10:20] = 0, 1
    for est in (PrototypeVectorMachine(n_prototypes=m, random_state=0),
                PrototypeVectorMachine(loss="hinge", n_prototypes=m, random_state=0),
                NystromLabelSpreading(n_prototypes=m, random_state=0)):
        tracemalloc.start()
        est.fit(X, y)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        # n^2 doubles would be 512 MB; O(n m) arrays are about 1.3 MB each
        assert peak < 40 * 2**20, (type(est).__name__, peak)


@pytest.mark.parametrize("params, match", [
    (dict(loss="log"), "loss"),
    (dict(C1=0.0), "C1"),
    (dict(C2=-1.0), "C2"),
    (dict(regularizer="l1"), "regularizer"),
    (dict(laplacian="random_walk"), "laplacian"),
    (dict(graph_scale="n2"), "graph_scale"),
    (dict(n_prototypes=0), "n_prototypes"),
    (dict(n_prototypes=500), "n_prototypes"),
    (dict(prototypes="spectral"), "prototypes"),
    (dict(prototypes=np.zeros((3, 7))), "prototypes"),
    (dict(n_nearest_prototypes=0), "n_nearest_prototypes"),
    (dict(kmeans_max_iter=0), "kmeans_max_iter"),
    (dict(fit_intercept=True), "fit_intercept"),
    (dict(gamma=-1.0), "gamma"),
])
def test_parameter_errors_name_the_argument(rng, params, match):
    X, y, _ = blobs(rng, n=40)
    with pytest.raises(ValueError, match=match):
        PrototypeVectorMachine(**params).fit(X, y)


def test_graph_scale_auto_is_independent_of_n(rng):
    """'auto' makes the graph term an average: duplicating every row leaves f unchanged."""
    X, y, _ = blobs(rng, n=80)
    V = select_prototypes(X, 8, random_state=0)
    X2 = np.vstack([X, X])
    y2 = np.r_[y, np.full(80, -1)]
    for kind in ("unnormalized", "normalized"):
        a = PrototypeVectorMachine(prototypes=V, gamma=0.3, laplacian=kind).fit(X, y)
        b = PrototypeVectorMachine(prototypes=V, gamma=0.3, laplacian=kind).fit(X2, y2)
        np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), atol=1e-7)


# ----------------------------------------------------------------------------- baselines


def test_nystrom_label_spreading_with_all_landmarks_is_lgc(rng):
    """With V = X the Woodbury route must give LGC's closed form (eq. 8)."""
    X, y, _ = blobs(rng, n=70, n_classes=3, n_labeled=3)
    gamma, alpha = 0.4, 0.9
    est = NystromLabelSpreading(fallback="none", prototypes=X, gamma=gamma, alpha=alpha).fit(X, y)
    K = kernel_matrix(X, gamma=gamma)
    s = 1.0 / np.sqrt(K.sum(axis=1))
    Q = s[:, None] * K * s[None, :]
    Y0 = np.zeros((X.shape[0], 3))
    lab = np.flatnonzero(y != -1)
    Y0[lab, y[lab]] = 1.0
    F = (1 - alpha) * np.linalg.solve(np.eye(X.shape[0]) - alpha * Q, Y0)
    dist = F / F.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(est.label_distributions_, dist, atol=1e-6)
    unl = y == -1
    np.testing.assert_array_equal(est.transduction_[unl], np.argmax(F[unl], axis=1))
    # out-of-sample: one more spreading step, K(x, X) D^-1/2 F
    Xt = rng.normal(size=(9, 3))
    ref = kernel_matrix(Xt, X, gamma=gamma) @ (s[:, None] * F)
    np.testing.assert_array_equal(est.predict(Xt), np.argmax(ref, axis=1))


def test_cluster_laprls_with_every_unlabeled_row_as_prototype_is_laprls(rng):
    from semisup.manifold import LapRLS

    X, y, _ = blobs(rng, n=60, n_labeled=4)
    lab, unl = np.flatnonzero(y != -1), np.flatnonzero(y == -1)
    gamma = 0.3
    cb = ClusterLapRLS(fallback="none",
                       prototypes=X[unl], gamma=gamma, gamma_A=1e-2, gamma_I=3.0).fit(X, y)
    order = np.r_[lab, unl]
    full = LapRLS(gamma_A=1e-2, gamma_I=3.0, gamma=gamma, laplacian="unnormalized",
                  laplacian_power=1,
                  graph=kernel_matrix(X[order], gamma=gamma)).fit(X[order], y[order])
    Xt = rng.normal(size=(12, 3))
    np.testing.assert_allclose(cb.decision_function(Xt), full.decision_function(Xt),
                               atol=1e-8)
    np.testing.assert_array_equal(cb.transduction_[unl], full.predict(X[unl]))


def test_baselines_separate_blobs(rng):
    X, y, y_true = blobs(rng, n=200, n_classes=3, n_labeled=3)
    unl = y == -1
    for est in (NystromLabelSpreading(n_prototypes=30, random_state=0),
                ClusterLapRLS(n_prototypes=20, random_state=0),
                ClusterLapRLS(n_prototypes=20, graph="knn", random_state=0)):
        est.fit(X, y)
        assert np.mean(est.transduction_[unl] == y_true[unl]) > 0.9, type(est).__name__


# ----------------------------------------------------------------------------- sklearn API

_MINUS_ONE = ("y == -1 marks unlabeled rows (the sklearn.semi_supervised convention), so the "
              "check's class label -1 cannot be a class")


@parametrize_with_checks(
    [PrototypeVectorMachine(), PrototypeVectorMachine(loss="hinge"),
     PrototypeVectorMachine(loss="hinge", fit_intercept=True),
     PrototypeVectorMachine(n_nearest_prototypes=2, regularizer="rkhs", C2=0.1),
     NystromLabelSpreading(), ClusterLapRLS()],
    expected_failed_checks=lambda est: {"check_classifiers_classes": _MINUS_ONE},
)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)
