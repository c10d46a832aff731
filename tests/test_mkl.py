"""Multiple kernel learning (Xu's thesis ch. 4): solvers against each other and cvxpy, the
level method's bounds, the x^2 toy, the estimator's API and input checks."""

import pickle
import tracemalloc

import numpy as np
import pytest
from sklearn.svm import SVC

from semisup.mkl import (
    KernelBank,
    MKLProblem,
    MultipleKernelSVC,
    level_mkl,
    silp_mkl,
    simple_mkl,
    simplemkl_kernels,
)
from semisup.mkl.bank import check_kernel_specs, evaluate_kernel
from semisup.solvers.lp import min_max_affine_on_simplex
from semisup.solvers.projection import project_onto_simplex_polyhedron
from semisup.solvers.qp import svm_dual, svm_dual_precomputed

SOLVERS = {"level": level_mkl, "silp": silp_mkl, "simple": simple_mkl}


def toy(rng, n=40, d=3):
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] ** 2 + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n) > 0.8, 1.0, -1.0)
    return X, y


def toy_bank(X, dims=(None, [0], [1])):
    specs = [{"kernel": "rbf", "gamma": g, "features": f} for g in (0.1, 1.0) for f in dims]
    specs += [{"kernel": "poly", "degree": 2, "gamma": 1.0, "coef0": 1.0, "features": None},
              {"kernel": "linear", "features": None}]
    return KernelBank.from_specs(check_kernel_specs(specs, X.shape[1]), X)


def cvxpy_mkl_optimum(bank, y, C):
    """The MKL optimum as a QCQP: max_a sum(a) - t/2, t >= (a o y)^T K_k (a o y) for all k."""
    cp = pytest.importorskip("cvxpy")
    n = y.size
    a = cp.Variable(n)
    t = cp.Variable()
    cons = [a >= 0, a <= C, y @ a == 0]
    for k in range(bank.n_kernels):
        w, V = np.linalg.eigh(bank.kernel(k))
        R = V * np.sqrt(np.clip(w, 0, None))          # K = R R^T
        cons.append(cp.sum_squares(R.T @ cp.multiply(a, y)) <= t)
    prob = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * t), cons)
    prob.solve(solver="CLARABEL")
    return prob.value


# ------------------------------------------------------------------ solver adapters


def test_warm_started_smo_matches_libsvm(rng):
    X, y = toy(rng, n=80)
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    for C in (0.5, 100.0):
        ref = svm_dual(K, y, C, tol=1e-8)
        cold = svm_dual_precomputed(K, y, C, tol=1e-8, alpha0=np.zeros(y.size))
        warm = svm_dual_precomputed(1.3 * K, y, C, tol=1e-8, alpha0=cold.beta)
        ref2 = svm_dual(1.3 * K, y, C, tol=1e-8)
        assert cold.objective == pytest.approx(ref.objective, rel=1e-7)
        assert warm.objective == pytest.approx(ref2.objective, rel=1e-7)
        assert warm.bias == pytest.approx(ref2.bias, abs=1e-4 * max(1, abs(ref2.bias)))
        assert abs(warm.beta @ y) < 1e-8 * C * y.size


def test_lp_and_projection_against_cvxpy(rng):
    cp = pytest.importorskip("cvxpy")
    c = rng.normal(size=6)
    A = rng.normal(size=(6, 8))
    p, theta = min_max_affine_on_simplex(c, A)
    x, t = cp.Variable(8), cp.Variable()
    cp.Problem(cp.Minimize(t), [x >= 0, cp.sum(x) == 1, c - A @ x <= t]).solve()
    assert theta == pytest.approx(t.value, abs=1e-7)
    assert p.sum() == pytest.approx(1.0) and p.min() >= 0
    p0 = rng.dirichlet(np.ones(8))
    h = c - theta - 0.5                      # level set {c - A p <= theta + 0.5}
    got = project_onto_simplex_polyhedron(p0, -A, -h)
    z = cp.Variable(8)
    cp.Problem(cp.Minimize(cp.sum_squares(z - p0)),
               [z >= 0, cp.sum(z) == 1, -A @ z <= -h]).solve()
    np.testing.assert_allclose(got, z.value, atol=1e-5)


@pytest.mark.parametrize("seed", range(4))
def test_projection_by_constraint_generation_equals_the_full_qp(seed):
    """Many cuts, few active (the level method's late iterations): the working-set
    projection equals one QP over every cut, and the sort-based simplex projection equals
    cvxpy's QP."""
    from semisup.solvers.projection import _project_qp, project_onto_simplex

    cp = pytest.importorskip("cvxpy")
    rng = np.random.default_rng(seed)
    m, J = 30, 200
    p0 = rng.dirichlet(np.ones(m))
    A = rng.normal(size=(J, m))
    c = rng.normal(size=J)
    p_star, theta = min_max_affine_on_simplex(c, A)
    h = c - theta - 0.1 * rng.random()               # a non-empty level set
    got = project_onto_simplex_polyhedron(p0, -A, -h)
    full = _project_qp(p0, -A, -h, 1e-9)
    np.testing.assert_allclose(got, full, atol=1e-6)
    assert got.min() >= 0 and got.sum() == pytest.approx(1.0)
    assert np.max(-A @ got + h) <= 1e-7 * max(1.0, np.abs(h).max())
    v = rng.normal(size=m)
    z = cp.Variable(m)
    cp.Problem(cp.Minimize(cp.sum_squares(z - v)), [z >= 0, cp.sum(z) == 1]).solve()
    np.testing.assert_allclose(project_onto_simplex(v), z.value, atol=1e-6)


def test_x_squared_toy_level_step():
    """The worked example of the thesis: min x^2 on [-4, 4] from x0 = -3 (digest §3.3).

    x = 8 p_1 - 4 maps the simplex of R^2 onto [-4, 4]; the cut at x0 is
    g0(x) = 9 - 6 (x + 3) = 15 - 48 p_1."""
    c, A = np.array([15.0]), np.array([[48.0, 0.0]])
    p_silp, f_low = min_max_affine_on_simplex(c, A)
    assert f_low == pytest.approx(-33.0)
    assert 8 * p_silp[0] - 4 == pytest.approx(4.0)            # SILP jumps to the far end
    level = 0.9 * 9.0 + 0.1 * f_low
    assert level == pytest.approx(4.8)
    p0 = np.array([1 / 8, 7 / 8])                              # x0 = -3
    p1 = project_onto_simplex_polyhedron(p0, -A, level - c)
    assert 8 * p1[0] - 4 == pytest.approx(-2.3, abs=1e-6)      # the level method's step


# ------------------------------------------------------------------ the three solvers


@pytest.fixture
def small_problem(rng):
    X, y = toy(rng)
    return toy_bank(X), y


def test_three_solvers_reach_the_cvxpy_optimum(small_problem):
    bank, y = small_problem
    C = 10.0
    ref = cvxpy_mkl_optimum(bank, y, C)
    for name, solve in SOLVERS.items():
        res = solve(MKLProblem(bank, y, C, svm_tol=1e-8), tol=1e-4, max_iter=500)
        assert res.converged, name
        # the relative duality gap bounds J(p) - J* <= tol J(p)
        assert res.objective >= ref * (1 - 1e-6), name
        assert res.objective == pytest.approx(ref, rel=2e-4), name
        assert res.weights.min() >= 0 and res.weights.sum() == pytest.approx(1.0)


def test_level_bounds_bracket_the_optimum(small_problem):
    bank, y = small_problem
    C = 10.0
    ref = cvxpy_mkl_optimum(bank, y, C)
    res = level_mkl(MKLProblem(bank, y, C, svm_tol=1e-9), tol=1e-5, max_iter=300,
                    record_weights=True)
    f_low, f_up = np.array(res.trace["f_low"]), np.array(res.trace["f_up"])
    slack = 1e-6 * abs(ref)
    assert np.all(f_low <= ref + slack) and np.all(f_up >= ref - slack)
    assert np.all(np.diff(f_low) >= -slack) and np.all(np.diff(f_up) <= slack)
    delta = f_up - f_low
    assert delta[-1] < 0.05 * delta[0]
    W = np.array(res.trace["weights"])
    assert W.min() >= 0 and np.allclose(W.sum(axis=1), 1.0)
    # the objective at each iterate is within the bracket's width of the optimum
    obj = np.array(res.trace["objective"])
    assert np.all(obj >= ref - slack)


def test_silp_weights_jump_more_than_level(small_problem):
    """Fig. 4.3: the projection keeps successive weights close; SILP's LP vertices jump."""
    bank, y = small_problem
    runs = {}
    for name in ("level", "silp"):
        res = SOLVERS[name](MKLProblem(bank, y, 10.0), tol=1e-3, max_iter=60,
                            record_weights=True)
        W = np.array(res.trace["weights"])
        runs[name] = np.abs(np.diff(W, axis=0)).sum(axis=1).mean()
    assert runs["level"] < runs["silp"]


# ------------------------------------------------------------------ the estimator


def test_one_kernel_equals_precomputed_svc(rng):
    X, y = toy(rng, n=60)
    Xt = rng.normal(size=(30, 3))
    gamma, C = 0.7, 3.0
    y = (y > 0).astype(int)                 # -1 would mark unlabeled rows
    clf = MultipleKernelSVC(fallback="none", kernels=[{"kernel": "rbf", "gamma": gamma}], C=C,
                            svm_tol=1e-9).fit(X, y)

    def K(A, B):
        return np.exp(-gamma * ((A[:, None] - B[None]) ** 2).sum(-1))

    scale = 1.0 / np.trace(K(X, X))
    ref = SVC(kernel="precomputed", C=C, tol=1e-9).fit(K(X, X) * scale, y)
    np.testing.assert_allclose(clf.weights_, [[1.0]])
    np.testing.assert_allclose(clf.decision_function(Xt),
                               ref.decision_function(K(Xt, X) * scale), atol=1e-5)


def test_estimator_solvers_agree_and_pickle(rng):
    X, y = toy(rng, n=60)
    labels = np.where(y > 0, "a", "b")
    objs = []
    for solver in SOLVERS:
        clf = MultipleKernelSVC(fallback="none",
                                kernels=simplemkl_kernels(3, widths=[0.5, 2.0]), C=10.0,
                                solver=solver, tol=1e-3, max_iter=1000).fit(X, labels)
        objs.append(clf.objective_[0])
        assert set(clf.predict(X)) <= {"a", "b"}
        assert clf.weights_.shape == (1, 5 * 4)
        assert clf.n_kernels_[0] == np.count_nonzero(clf.weights_[0])
        again = pickle.loads(pickle.dumps(clf))
        np.testing.assert_array_equal(again.predict(X), clf.predict(X))
    assert max(objs) - min(objs) <= 2e-3 * max(objs)


def test_float32_bank_and_multiclass(rng):
    X = rng.normal(size=(90, 2))
    y = np.argmax(X @ rng.normal(size=(2, 3)), axis=1)
    kernels = [{"kernel": "rbf", "gamma": g} for g in (0.3, 3.0)] + ["linear"]
    a = MultipleKernelSVC(fallback="none", kernels=kernels, C=10.0).fit(X, y)
    b = MultipleKernelSVC(fallback="none", kernels=kernels, C=10.0, dtype="float32").fit(X, y)
    assert a.weights_.shape == (3, 3)
    assert b.bank_nbytes_ * 2 == a.bank_nbytes_
    np.testing.assert_allclose(a.objective_, b.objective_, rtol=2e-2)
    assert np.mean(a.predict(X) == b.predict(X)) > 0.95
    assert a.score(X, y) > 0.9


@pytest.mark.filterwarnings("ignore::semisup.graph.GraphWarning")
def test_semi_supervised_deformed_kernels(rng):
    # two interleaved half circles: the graph carries the labels along each arc
    t = rng.uniform(0, np.pi, size=200)
    upper = rng.random(200) < 0.5
    X = np.c_[np.where(upper, np.cos(t), 1 - np.cos(t)),
              np.where(upper, np.sin(t), 0.5 - np.sin(t))] + 0.05 * rng.normal(size=(200, 2))
    y_true = upper.astype(int)
    y = np.full(200, -1)
    for c in (0, 1):
        y[np.flatnonzero(y_true == c)[:3]] = c
    kernels = [{"kernel": "rbf", "gamma": g} for g in (0.5, 2.0, 8.0)]
    semi = MultipleKernelSVC(fallback="none",
                             kernels=kernels, C=100.0, laplacian_ratio=10.0).fit(X, y)
    sup = MultipleKernelSVC(fallback="none", kernels=kernels, C=100.0).fit(X[y >= 0], y[y >= 0])
    unl = y == -1
    acc_semi = np.mean(semi.transduction_[unl] == y_true[unl])
    acc_sup = np.mean(sup.predict(X[unl]) == y_true[unl])
    assert acc_semi > 0.95 and acc_semi > acc_sup
    np.testing.assert_array_equal(semi.predict(X), semi.transduction_)
    # with r = 0 the deformation is the identity: the supervised fit on the labeled rows
    flat = MultipleKernelSVC(fallback="none",
                             kernels=kernels, C=100.0, laplacian_ratio=0.0).fit(X, y)
    np.testing.assert_allclose(flat.decision_function(X), sup.decision_function(X),
                               atol=1e-4)


def test_deformation_is_eq_4_10(rng):
    """K~ = K - K (I + L K)^-1 L K (eq. 4.10) on the labeled block, as the bank holds it."""
    from semisup.graph import adjacency_graph, laplacian
    from semisup.mkl.bank import evaluate_kernel

    X = rng.normal(size=(30, 2))
    y = np.full(30, -1)
    y[:4] = [0, 1, 0, 1]
    spec = {"kernel": "rbf", "gamma": 1.0}
    clf = MultipleKernelSVC(fallback="none", kernels=[spec], C=1.0).fit(X, y)
    L = laplacian(adjacency_graph(X, n_neighbors=6)).toarray()
    K = evaluate_kernel(check_kernel_specs([spec], 2)[0], X)
    Kd = K - K @ np.linalg.solve(np.eye(30) + L @ K, L @ K)
    lab = np.arange(4)
    got = clf._kernel_columns(X[lab], 0, lab)
    np.testing.assert_allclose(got, Kd[:4, :4] / np.trace(Kd[:4, :4]), atol=1e-10)


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize("kwargs, match", [
    ({"kernels": []}, "empty"),
    ({"kernels": ["cosine"]}, "kernels\\[0\\]"),
    ({"kernels": [lambda A, B: np.ones((3, 3))]}, "mismatched shapes"),
    ({"kernels": [lambda A, B: -A @ B.T]}, "positive semi-definite"),
    ({"kernels": [lambda A, B: np.full((A.shape[0], B.shape[0]), np.nan)]}, "NaN"),
    ({"C": 0.0}, "C must be"),
    ({"C": -1.0}, "C must be"),
    ({"solver": "mosek"}, "solver must be"),
    ({"dtype": "int8"}, "dtype"),
])
def test_bad_input(rng, kwargs, match):
    X, y = toy(rng, n=20)
    y = (y > 0).astype(int)
    with pytest.raises(ValueError, match=match):
        MultipleKernelSVC(fallback="none", **kwargs).fit(X, y)


def test_bank_rejects_mismatched_and_indefinite_matrices():
    with pytest.raises(ValueError, match="mismatched shapes"):
        KernelBank.from_matrices([np.eye(3), np.eye(4)])
    with pytest.raises(ValueError, match="positive semi-definite"):
        KernelBank.from_matrices([np.diag([1.0, -1.0, 1.0])])
    with pytest.raises(ValueError, match="empty"):
        KernelBank.from_matrices([])


def test_memory_guard_refuses_before_allocating(rng):
    X = rng.normal(size=(3000, 10))        # 143 kernels x 3000 x 3001 / 2 x 8 B = 4.8 GiB
    y = (X[:, 0] > 0).astype(int)
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="max_memory"):
            MultipleKernelSVC(fallback="none", kernels="simplemkl", bank="packed").fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20


def test_semi_supervised_memory_guard_counts_the_deformation(rng):
    """With unlabeled rows the footprint is the labeled bank plus m n l deformation columns
    and the n x n kernels: a problem whose labeled bank is tiny (20 rows) but whose
    deformation is not (3000 rows x 143 kernels: 69 MiB of Z, 137 MiB of n x n) is refused
    before the graph is built, and the estimate is what a fit that passes reports."""
    from semisup.mkl.bank import check_deformed_memory

    X = rng.normal(size=(3000, 10))
    y = np.full(3000, -1)
    y[:20] = np.arange(20) % 2
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="deformation columns.*max_memory"):
            MultipleKernelSVC(fallback="none",
                              kernels="simplemkl", max_memory=100 * 2**20).fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20
    need = check_deformed_memory(143, 3000, 20, np.float64, np.inf)
    assert need == 143 * 210 * 8 + 143 * 3000 * 20 * 8 + 2 * 3000**2 * 8
    small = MultipleKernelSVC(fallback="none",
                              kernels=[{"kernel": "rbf", "gamma": 0.1}]).fit(X[:200], y[:200])
    assert small.memory_nbytes_ == check_deformed_memory(1, 200, 20, np.float64, np.inf)
    assert small.bank_nbytes_ == 210 * 8


# ------------------------------------------------------------------ storage and speed paths


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_packed_bank_equals_dense_kernels(rng, dtype):
    """The packed upper-triangle bank: every kernel, K(p) and the quadratic forms (on few,
    most and all rows) equal the dense computation from evaluate_kernel."""
    from semisup.mkl import evaluate_kernel

    X = rng.normal(size=(30, 4))
    specs = check_kernel_specs(
        simplemkl_kernels(4, single_feature_kinds=("rbf", "poly", "linear")), 4)
    bank = KernelBank.from_specs(specs, X, dtype=dtype)
    assert bank.nbytes == len(specs) * 30 * 31 // 2 * np.dtype(dtype).itemsize
    tol = 1e-12 if dtype == np.float64 else 1e-6
    dense = []
    for k, spec in enumerate(specs):
        K = evaluate_kernel(spec, X)
        K /= np.trace(K)
        np.testing.assert_allclose(bank.kernel(k), K, atol=tol * np.abs(K).max())
        dense.append(K)
    dense = np.stack(dense, axis=-1)
    p = rng.dirichlet(np.ones(len(specs)))
    np.testing.assert_allclose(bank.combine(p), dense @ p, rtol=10 * tol, atol=10 * tol)
    for n_sv in (3, 25, 30):
        u = np.zeros(30)
        u[rng.choice(30, n_sv, replace=False)] = rng.normal(size=n_sv)
        np.testing.assert_allclose(bank.quadratic_forms(u),
                                   np.einsum("i,ijk,j->k", u, dense, u),
                                   rtol=100 * tol, atol=100 * tol)
    # from precomputed matrices: the same packed bank
    again = KernelBank.from_matrices([dense[:, :, k] for k in range(5)], normalize=False)
    np.testing.assert_allclose(again.packed, bank.packed[:, :5], rtol=tol, atol=tol)


def test_incremental_lp_equals_fresh_solves(rng):
    """Cuts added one at a time to the warm HiGHS model give the value of a fresh
    scipy linprog solve of the same LP after every cut."""
    from scipy.optimize import linprog

    from semisup.solvers.lp import CuttingPlaneLP

    m = 12
    lp = CuttingPlaneLP(m)
    C, A = [], []
    for _ in range(15):
        C.append(rng.normal())
        A.append(rng.normal(size=m))
        lp.add(C[-1], A[-1])
        p, theta = lp.solve()
        J = len(C)
        ref = linprog(np.r_[np.zeros(m), 1.0],
                      A_ub=np.hstack([-np.asarray(A), -np.ones((J, 1))]),
                      b_ub=-np.asarray(C), A_eq=np.r_[np.ones(m), 0.0][None],
                      b_eq=[1.0], bounds=[(0, None)] * m + [(None, None)], method="highs")
        assert theta == pytest.approx(ref.fun, abs=1e-8)
        assert p.min() >= 0 and p.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="slopes"):
        lp.add(0.0, np.ones(m + 1))


def test_low_rank_deformation_equals_factorisation(rng):
    """The Woodbury route for per-feature linear kernels equals the LU route of
    semisup.manifold (the same deformed bank and the same Z)."""
    from semisup.graph import adjacency_graph, laplacian
    from semisup.mkl import deformed_bank

    X = rng.normal(size=(50, 3))
    L = laplacian(adjacency_graph(X, n_neighbors=6))
    lab = np.array([0, 4, 7, 19, 33, 41])
    specs = check_kernel_specs([{"kernel": "linear", "features": [1]},
                                {"kernel": "linear", "features": [0, 2]}], 3)
    # callables force the generic O(n^3) route
    generic = [lambda A, B, f=f: A[:, f] @ B[:, f].T for f in ([1], [0, 2])]
    fast_bank, fast_Z = deformed_bank(specs, X, lab, L, 0.7)
    ref_bank, ref_Z = deformed_bank(generic, X, lab, L, 0.7)
    np.testing.assert_allclose(fast_bank.packed, ref_bank.packed, rtol=1e-10, atol=1e-12)
    for a, b in zip(fast_Z, ref_Z, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_one_svm_implementation_behind_both_entry_points(rng):
    """fit_precomputed_svm and svm_dual_precomputed are one routine: same dual, cold and
    warm-started, with and without a bias."""
    from semisup.solvers.svm import fit_precomputed_svm

    X, y = toy(rng, n=60)
    K = np.exp(-0.3 * ((X[:, None] - X[None]) ** 2).sum(-1))
    for fit_intercept in (True, False):
        model = fit_precomputed_svm(K, y, 2.0, fit_intercept=fit_intercept, tol=1e-8)
        dual = svm_dual_precomputed(K, y, 2.0, tol=1e-8, fit_intercept=fit_intercept)
        np.testing.assert_allclose(model.beta, dual.beta, atol=1e-9)
        assert model.objective == pytest.approx(dual.objective, rel=1e-12)
    cold = fit_precomputed_svm(1.2 * K, y, 2.0, tol=1e-8)
    start = svm_dual_precomputed(K, y, 2.0, tol=1e-8).beta      # feasible for 1.2 K too
    warm = fit_precomputed_svm(1.2 * K, y, 2.0, tol=1e-8, alpha0=start)
    assert warm.objective == pytest.approx(cold.objective, rel=1e-7)
    np.testing.assert_allclose(warm.decision_function(K), cold.decision_function(K),
                               atol=1e-3)
    with pytest.raises(ValueError, match="fit_intercept"):
        fit_precomputed_svm(K, y, 2.0, fit_intercept=False, alpha0=np.zeros(y.size))


def test_line_search_trial_points_equal_full_solves(rng):
    """SimpleMKL's trial points (kernel K(p) + gamma K(D), no cut) have the objective of a
    full solve at the same weights; add_cut then gives the same cut."""
    X, y = toy(rng)
    bank = toy_bank(X)
    m = bank.n_kernels
    p = rng.dirichlet(np.ones(m))
    D = rng.normal(size=m)
    D -= D.mean()
    gamma = 0.5 * float(np.min(-p[D < 0] / D[D < 0]))
    full = MKLProblem(bank, y, 10.0, svm_tol=1e-9).solve_svm(p + gamma * D)
    prob = MKLProblem(bank, y, 10.0, svm_tol=1e-9)
    trial = prob.solve_svm(p + gamma * D, K=bank.combine(p) + gamma * bank.combine(D),
                           cut=False)
    assert trial.q is None
    assert trial.objective == pytest.approx(full.objective, rel=1e-8)
    prob.add_cut(trial)
    np.testing.assert_allclose(trial.q, full.q, rtol=1e-6, atol=1e-9)
    assert trial.objective == pytest.approx(full.objective, rel=1e-8)


def test_deformation_normalised_before_or_after(rng):
    """normalize='before' is eq. 4.10 on the unit-trace (over all rows) kernel, by both
    routes; normalize='after' makes a rank-one kernel blind to the graph (its deformation
    is a rescaling), which 'before' is not."""
    from semisup.graph import adjacency_graph, laplacian
    from semisup.mkl import deformed_bank

    X = rng.normal(size=(40, 3))
    L = laplacian(adjacency_graph(X, n_neighbors=5))
    lab = np.array([1, 5, 8, 20, 31])
    specs = check_kernel_specs([{"kernel": "linear", "features": [2]},
                                {"kernel": "rbf", "gamma": 0.5}], 3)
    generic = [lambda A, B: A[:, [2]] @ B[:, [2]].T, specs[1]]
    fast, Zf = deformed_bank(specs, X, lab, L, 0.8, normalize="before")
    slow, Zs = deformed_bank(generic, X, lab, L, 0.8, normalize="before")
    np.testing.assert_allclose(fast.packed, slow.packed, rtol=1e-10, atol=1e-13)
    for k, spec in enumerate(specs):
        K = evaluate_kernel(spec, X)
        K /= np.trace(K)
        deformed = K - K @ np.linalg.solve(np.eye(40) + 0.8 * L @ K, 0.8 * L @ K)
        np.testing.assert_allclose(fast.kernel(k), deformed[np.ix_(lab, lab)],
                                   rtol=1e-8, atol=1e-12)
        # out-of-sample form used for prediction: scales * K[:, all] Z = deformed[:, lab]
        np.testing.assert_allclose(evaluate_kernel(spec, X) @ Zf[k] * fast.scales[k],
                                   deformed[:, lab], rtol=1e-8, atol=1e-12)
    after, _ = deformed_bank(specs, X, lab, L, 0.8, normalize="after")
    plain, _ = deformed_bank(specs, X, lab, L, 0.0, normalize="after")
    np.testing.assert_allclose(after.kernel(0), plain.kernel(0), rtol=1e-10)
    assert not np.allclose(after.kernel(1), plain.kernel(1), rtol=1e-3)
    # 'before' keeps the factor 1 / (1 + r v^T L v) (times the trace scaling): the
    # labeled block is a multiple of the plain one, with trace below 1
    nz = np.abs(plain.kernel(0)) > 1e-12
    ratio = fast.kernel(0)[nz] / plain.kernel(0)[nz]
    assert np.ptp(ratio) < 1e-8 * ratio.max()
    v = X[:, 2] / np.linalg.norm(X[:, 2])
    assert np.trace(fast.kernel(0)) == pytest.approx(
        np.sum(v[lab] ** 2) / (1 + 0.8 * v @ (L @ v)), rel=1e-10)
    with pytest.raises(ValueError, match="normalize"):
        deformed_bank(specs, X, lab, L, 0.8, normalize="middle")
