"""Shared solvers against independent references on small problems."""

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp
from conftest import dense_with_bias, make_problem
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from semisup.losses import HingeTerms, squared_hinge
from semisup.regularizers import Ridge
from semisup.solvers.cgls import cgls
from semisup.solvers.dcd import _next_check, l2svm_dual_cd
from semisup.solvers.design import Design
from semisup.solvers.line_search import exact_line_search
from semisup.solvers.mfn import l2svm_mfn
from semisup.solvers.roots import safeguarded_newton


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("parallel", [False, True])
def test_design_products_match_dense(rng, sparse, parallel):
    X, _ = make_problem(rng, n=300, d=40, sparse=sparse)
    Xa = dense_with_bias(X) * np.r_[np.ones(40), 2.5]
    A = Design(X, intercept_scaling=2.5, parallel=parallel)
    rows = np.sort(rng.choice(300, 123, replace=False))
    sub = A.restrict(rows)
    w, q = rng.normal(size=41), rng.normal(size=123)
    np.testing.assert_allclose(sub.matvec(w), Xa[rows] @ w, atol=1e-12)
    np.testing.assert_allclose(sub.rmatvec(q), Xa[rows].T @ q, atol=1e-12)
    # restriction of a restriction composes the row maps
    subsub = sub.restrict(np.array([5, 0, 7]))
    np.testing.assert_allclose(subsub.matvec(w), Xa[rows[[5, 0, 7]]] @ w, atol=1e-12)


@pytest.mark.parametrize("parallel", [False, True])
def test_scattered_rows_are_copied_and_give_the_indexed_products_bit_for_bit(rng, parallel):
    """An active set that serves several products is multiplied on a contiguous copy of its
    rows (the prefetcher's sake); the products are the indexed kernels' to the last bit, and
    long runs are not copied."""
    from semisup.solvers import _kernels
    from semisup.solvers.design import GATHER_AFTER

    X = sp.random(3000, 60, density=0.2, random_state=5, format="csr")
    A = Design(X, intercept_scaling=1.5, parallel=parallel)
    order = np.r_[np.arange(0, 3000, 50), np.setdiff1d(np.arange(3000), np.arange(0, 3000, 50))]
    B = A.restrict(order)                          # labeled-first order: a long run
    w, q = rng.normal(size=61), rng.normal(size=3000)
    for _ in range(GATHER_AFTER + 2):
        B.matvec(w)
    assert B._kernel_view[0] is A._indptr
    active = np.sort(rng.choice(3000, 1400, replace=False))
    sub = B.restrict(active)
    indexed = object.__new__(Design)
    indexed.__dict__.update(sub.__dict__)
    indexed._gather = False
    w, q, c = rng.normal(size=61), rng.normal(size=1400), rng.uniform(size=1400)
    calls = [("matvec", (w,)), ("rmatvec", (q,)), ("weighted_column_sq", (c,)),
             ("row_sq_norms", ())] * 2
    for k, (f, args) in enumerate(calls):
        np.testing.assert_array_equal(getattr(sub, f)(*args), getattr(indexed, f)(*args))
        assert (sub._kernel_view[0] is A._indptr) == (k < GATHER_AFTER)  # copied from then on
    assert sub._kernel_view[0] is not A._indptr
    Xa = dense_with_bias(X) * np.r_[np.ones(60), 1.5]
    np.testing.assert_allclose(sub.matvec(w), Xa[order[active]] @ w, atol=1e-12)
    # the gather kernel itself: scipy's row slicing, index and value types kept
    Y = sp.random(500, 40, density=0.1, random_state=2, format="csr", dtype=np.float32)
    rows = rng.choice(500, 200)
    indptr, indices, data = _kernels.csr_gather_rows(Y.indptr, Y.indices, Y.data, rows)
    Z = Y[rows]
    assert indices.dtype == Y.indices.dtype and data.dtype == np.float32
    np.testing.assert_array_equal(indptr, Z.indptr)
    np.testing.assert_array_equal(indices, Z.indices)
    np.testing.assert_array_equal(data, Z.data)


def test_gathering_can_be_turned_off_to_save_memory(rng, monkeypatch):
    from semisup.solvers import design

    monkeypatch.setattr(design, "GATHER_ROWS", False)
    X = sp.random(2000, 30, density=0.2, random_state=1, format="csr")
    A = Design(X, parallel=False)
    rows = np.sort(rng.choice(2000, 900, replace=False))
    sub = A.restrict(rows)
    w = rng.normal(size=31)
    for _ in range(5):
        np.testing.assert_allclose(sub.matvec(w), dense_with_bias(X)[rows] @ w, atol=1e-12)
    assert sub._kernel_view[0] is A._indptr and sub._sub is None  # no copy of the rows


def test_parallel_kernel_chunks_cover_all_rows(rng):
    X = sp.random(5000, 50, density=0.5, random_state=3, format="csr")
    A = Design(X, fit_intercept=False, parallel=True)
    q = rng.normal(size=5000)
    np.testing.assert_allclose(A.rmatvec(q), X.T @ q, rtol=1e-10)
    np.testing.assert_allclose(A.matvec(q[:50]), X @ q[:50], rtol=1e-10)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("seeded", [False, True])
@pytest.mark.parametrize("precondition", [False, "jacobi", "sketch"])
def test_cgls_equals_dense_solve(rng, sparse, seeded, precondition):
    X, y = make_problem(rng, n=80, d=25, sparse=sparse)
    rows = np.arange(0, 80, 2)
    cost = rng.uniform(0.1, 3.0, size=rows.size)
    lam = 0.3
    A = Design(X).restrict(rows)
    x0 = rng.normal(size=26) if seeded else None
    res = cgls(A, cost, y[rows], Ridge(lam), x0=x0, tol=1e-12, max_iter=1000,
               precondition=precondition)
    Xa = dense_with_bias(X)[rows]
    exact = np.linalg.solve(lam * np.eye(26) + Xa.T @ (cost[:, None] * Xa), Xa.T @ (cost * y[rows]))
    assert res.converged
    np.testing.assert_allclose(res.x, exact, rtol=1e-8, atol=1e-10)


def test_design_row_norms_and_materialize_match_dense(rng):
    X, _ = make_problem(rng, n=50, d=7, sparse=True)
    A = Design(X, intercept_scaling=2.0).restrict(np.array([3, 9, 20]))
    Xa = dense_with_bias(X)[[3, 9, 20]] * np.r_[np.ones(7), 2.0]
    np.testing.assert_allclose(A.row_sq_norms(), (Xa**2).sum(1))
    np.testing.assert_allclose(A.materialize().toarray(), Xa)


def test_sketch_preconditioner_needs_far_fewer_iterations_on_correlated_columns(rng):
    """Jacobi ignores correlations between features; the sampled Cholesky factor does not."""
    n, d = 4000, 60
    mix = rng.normal(size=(d, d)) * np.logspace(0, -3, d)  # strongly correlated columns
    X = sp.csr_matrix(rng.normal(size=(n, d)) @ mix)
    y = np.sign(rng.normal(size=n))
    cost = np.r_[np.full(100, 1.0), np.full(n - 100, 1e-3)]  # few heavy rows, as in DA
    A, reg = Design(X), Ridge(1e-6)
    jac = cgls(A, cost, y, reg, tol=1e-8, precondition="jacobi")
    sk = cgls(A, cost, y, reg, tol=1e-8, precondition="sketch")
    assert jac.converged and sk.converged
    assert sk.n_iter * 5 < jac.n_iter
    np.testing.assert_allclose(sk.x, jac.x, rtol=1e-4, atol=1e-6 * np.abs(jac.x).max())


def test_preconditioner_choice():
    from semisup.solvers.preconditioners import make_preconditioner

    A = Design(np.ones((10, 3)))
    assert make_preconditioner(False, A, np.ones(10), Ridge(1.0)) is None
    with pytest.raises(ValueError, match="precondition must be"):
        make_preconditioner("ilu", A, np.ones(10), Ridge(1.0))


def test_cgls_seeding_saves_iterations(rng):
    X, y = make_problem(rng, n=400, d=60, sparse=True)
    A, reg, cost = Design(X), Ridge(1e-2), np.ones(400)
    # Jacobi: the default for this shape is the exact factor, which needs one iteration
    cold = cgls(A, cost, y, reg, tol=1e-8, precondition="jacobi")
    y2 = y.copy()
    y2[:4] *= -1  # a slightly perturbed system, as after a TSVM label switch
    warm = cgls(A, cost, y2, reg, x0=cold.x, tol=1e-8, precondition="jacobi")
    fresh = cgls(A, cost, y2, reg, tol=1e-8, precondition="jacobi")
    assert warm.converged and fresh.converged
    assert warm.n_iter < fresh.n_iter
    np.testing.assert_allclose(warm.x, fresh.x, rtol=1e-5, atol=1e-7)


def test_sketch_as_large_as_the_data_is_the_exact_factor(rng):
    """With every row in the sample the preconditioner is ``R + A^T C A``: one CG step."""
    X, y = make_problem(rng, n=300, d=40, sparse=True)
    A, reg, cost = Design(X), Ridge(1e-2), rng.uniform(0.5, 2.0, 300)
    res = cgls(A, cost, y, reg, tol=1e-10, precondition="sketch")
    assert res.converged and res.n_iter <= 2
    Xd = np.hstack([X.toarray(), np.ones((300, 1))])
    H = 1e-2 * np.eye(41) + Xd.T @ (cost[:, None] * Xd)
    np.testing.assert_allclose(res.x, np.linalg.solve(H, Xd.T @ (cost * y)), rtol=1e-8,
                               atol=1e-10)


def _phi(delta, o, ob, y, c, w, wb, lam):
    wd = w + delta * (wb - w)
    od = o + delta * (ob - o)
    return 0.5 * lam * wd @ wd + 0.5 * np.sum(c * squared_hinge(y * od))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 40), lam=st.floats(1e-4, 10.0))
def test_line_search_equals_brute_force(seed, m, lam):
    rng = np.random.default_rng(seed)
    o, ob = rng.normal(scale=2, size=m), rng.normal(scale=2, size=m)
    y = rng.choice([-1.0, 1.0], size=m)
    c = rng.uniform(0.0, 2.0, size=m)
    w, wb = rng.normal(size=5), rng.normal(size=5)
    step = wb - w
    delta = exact_line_search(o, ob, y, c, lam * w @ step, lam * step @ step)
    ref = so.minimize_scalar(lambda t: _phi(t, o, ob, y, c, w, wb, lam), bounds=(0, 50),
                             method="bounded", options={"xatol": 1e-12})
    phi_d = _phi(delta, o, ob, y, c, w, wb, lam)
    assert delta >= 0
    assert phi_d <= ref.fun + 1e-9 * max(1.0, abs(ref.fun))
    # first-order condition: phi'(delta) = 0 unless the constraint delta >= 0 is active
    h = 1e-6
    if delta > h:
        slope = (_phi(delta + h, o, ob, y, c, w, wb, lam)
                 - _phi(delta - h, o, ob, y, c, w, wb, lam)) / (2 * h)
        assert abs(slope) <= 1e-4 * max(1.0, abs(phi_d))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 30))
def test_line_search_over_shared_rows_equals_expanded_terms(seed, n):
    """DA's two terms per row, given as a row map, equal the explicitly expanded terms."""
    rng = np.random.default_rng(seed)
    o, ob = rng.normal(scale=2, size=n), rng.normal(scale=2, size=n)
    rows = np.concatenate([np.arange(n), np.arange(n)])
    y = np.concatenate([np.ones(n), -np.ones(n)])
    c = rng.uniform(0.0, 1.0, size=2 * n)
    a = exact_line_search(o, ob, y, c, -0.3, 0.7, rows=rows)
    b = exact_line_search(o[rows], ob[rows], y, c, -0.3, 0.7)
    assert a == b


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 60),
       scale=st.sampled_from([0.3, 0.9, 1.1, 1.3, 1.7, 3.0, 10.0, 100.0]))
def test_line_search_is_equivariant_to_the_step_length(seed, m, scale):
    """Shrinking the step by ``scale`` multiplies the minimiser by ``scale``.

    The search only sorts the break points before the first probe step (1, 1.125, 1.5, 2,
    4) where ``phi' >= 0``; scaling moves the minimiser across every probe, so each branch
    is compared with the unscaled search.
    """
    rng = np.random.default_rng(seed)
    o, ob = rng.normal(scale=2, size=m), rng.normal(scale=2, size=m)
    y = rng.choice([-1.0, 1.0], size=m)
    c = rng.uniform(0.0, 2.0, size=m)
    cross, curv = -abs(rng.normal()), abs(rng.normal()) + 1e-3
    base = exact_line_search(o, ob, y, c, cross, curv)
    scaled = exact_line_search(o, o + (ob - o) / scale, y, c, cross / scale,
                               curv / scale**2)
    assert scaled == pytest.approx(scale * base, rel=1e-9, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 40), m=st.integers(1, 80))
def test_hinge_terms_match_their_definitions(seed, n, m):
    """value / active / newton_system against the numpy formulas of eqs. 2 and 4."""
    rng = np.random.default_rng(seed)
    o = rng.normal(scale=1.5, size=n)
    rows = rng.integers(0, n, size=m)
    y = rng.choice([-1.0, 1.0], size=m)
    c = np.where(rng.random(m) < 0.2, 0.0, rng.uniform(0.1, 2.0, size=m))
    terms = HingeTerms(y, c, rows=rows, n_rows=n)
    assert terms.value(o) == pytest.approx(0.5 * c @ squared_hinge(y * o[rows]), rel=1e-12,
                                           abs=1e-15)
    active = terms.active(o)
    np.testing.assert_array_equal(active, (y * o[rows] < 1.0) & (c > 0.0))
    r, cost, target = terms.newton_system(active)
    row_cost = np.bincount(rows[active], weights=c[active], minlength=n)
    row_rhs = np.bincount(rows[active], weights=(c * y)[active], minlength=n)
    np.testing.assert_array_equal(r, np.flatnonzero(row_cost > 0))
    np.testing.assert_allclose(cost, row_cost[r], rtol=1e-12)
    np.testing.assert_allclose(target, row_rhs[r] / row_cost[r], rtol=1e-12)
    plain = HingeTerms(y, c)
    assert plain.value(o[rows]) == pytest.approx(terms.value(o), rel=1e-12, abs=1e-15)
    np.testing.assert_array_equal(plain.active(o[rows]), active)


def _scipy_l2svm(Xa, y, c, lam):
    def f(w):
        m = np.maximum(0.0, 1.0 - y * (Xa @ w))
        return 0.5 * lam * w @ w + 0.5 * np.sum(c * m * m), lam * w - Xa.T @ (c * m * y)

    res = so.minimize(f, np.zeros(Xa.shape[1]), jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-13, "ftol": 1e-16, "maxiter": 20000})
    return res.fun


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("lam", [1e-3, 0.1, 10.0])
def test_mfn_reaches_scipy_minimum(rng, sparse, lam):
    X, y = make_problem(rng, n=150, d=20, sparse=sparse)
    c = rng.uniform(0.5, 2.0, size=150)
    res = l2svm_mfn(Design(X), HingeTerms(y, c), Ridge(lam))
    ref = _scipy_l2svm(dense_with_bias(X), y, c, lam)
    assert res.converged
    assert (res.objective - ref) / abs(ref) < 1e-8
    assert np.all(np.diff(res.history) <= 1e-12 * abs(res.history[0]))


def test_mfn_kkt_conditions(rng):
    X, y = make_problem(rng, n=200, d=10)
    c, lam = np.ones(200), 0.05
    res = l2svm_mfn(Design(X), HingeTerms(y, c), Ridge(lam), tol=1e-10)
    Xa = dense_with_bias(X)
    m = np.maximum(0.0, 1.0 - y * (Xa @ res.w))
    grad = lam * res.w - Xa.T @ (c * m * y)
    assert np.linalg.norm(grad) <= 1e-7 * np.linalg.norm(Xa.T @ (c * y))


def test_mfn_with_shared_rows_equals_expanded_rows(rng):
    """Terms sharing a data row (DA's duplicated rows) equal physically duplicated rows."""
    X, y = make_problem(rng, n=60, d=8)
    rows = np.concatenate([np.arange(60), np.arange(30)])
    yy = np.concatenate([y, -y[:30]])
    c = rng.uniform(0.2, 1.0, size=90)
    shared = l2svm_mfn(Design(X), HingeTerms(yy, c, rows=rows, n_rows=60), Ridge(0.1), tol=1e-10)
    copied = l2svm_mfn(Design(np.vstack([X, X[:30]])), HingeTerms(yy, c), Ridge(0.1), tol=1e-10)
    np.testing.assert_allclose(shared.w, copied.w, rtol=1e-7, atol=1e-9)
    assert shared.objective == pytest.approx(copied.objective, rel=1e-10)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("lam", [1e-3, 0.1, 10.0])
def test_dual_cd_gap_certifies_the_scipy_minimum(rng, lam, fit_intercept):
    X, y = make_problem(rng, n=150, d=20, sparse=True)
    c = rng.uniform(0.5, 2.0, size=150)
    res = l2svm_dual_cd(Design(X, fit_intercept=fit_intercept), HingeTerms(y, c), lam, tol=1e-9,
                        max_epochs=100_000)
    Xa = dense_with_bias(X) if fit_intercept else X.toarray()
    ref = _scipy_l2svm(Xa, y, c, lam)
    assert res.converged
    # weak duality brackets the minimum, and the gap bounds the distance to it
    assert res.dual_objective <= ref * (1 + 1e-10)
    assert res.objective >= ref * (1 - 1e-10)
    assert (res.objective - ref) / ref <= 1e-9 + 1e-10


def test_dual_cd_kkt_and_zero_cost_terms(rng):
    """At the optimum alpha_i = c_i max(0, 1 - y_i o_i) / lam; zero-cost terms stay at 0."""
    X, y = make_problem(rng, n=120, d=10, sparse=True)
    c, lam = rng.uniform(0.5, 2.0, size=120), 0.05
    c[:10] = 0.0
    res = l2svm_dual_cd(Design(X), HingeTerms(y, c), lam, tol=1e-12, max_epochs=100_000)
    m = np.maximum(0.0, 1.0 - y * res.outputs)
    np.testing.assert_allclose(res.alpha, c * m / lam, rtol=1e-4, atol=1e-5)
    assert np.all(res.alpha[:10] == 0)
    mfn = l2svm_mfn(Design(X), HingeTerms(y, c), Ridge(lam), tol=1e-10)
    np.testing.assert_allclose(res.w, mfn.w, rtol=1e-5, atol=1e-6)


def test_dual_cd_gap_checks_follow_linear_convergence():
    """Checks land where the last two extrapolate the gap to ``tol``, at most 2x further."""
    checks = []
    assert _next_check(checks, 4, 1e-1, 1e-6, 4) == 4  # one point: keep the chunk
    # gap 1e-1 -> 1e-2 over 4 epochs: 1e-6 is 16 epochs further, capped at twice 4
    assert _next_check(checks, 8, 1e-2, 1e-6, 4) == 8
    assert _next_check(checks, 16, 1e-4, 1e-6, 8) in (8, 9)  # 8 more, rounded up
    assert _next_check(checks, 24, 2e-6, 1e-6, 8) == 2  # almost there: check again soon
    assert _next_check(checks, 26, 3e-6, 1e-6, 2) == 4  # gap rose: no trend, double
    assert all(e > 0 for e, _ in checks)


def test_dual_cd_gives_up_when_the_gap_falls_too_slowly(rng):
    """``give_up_epochs``: stop early (unconverged, ``gave_up``) on a stalling run, never on
    one that reaches ``tol`` in time."""
    X, y = make_problem(rng, n=150, d=20, sparse=True)
    terms = HingeTerms(y, np.ones(150))
    easy = l2svm_dual_cd(Design(X), terms, 1.0, give_up_epochs=2000)
    assert easy.converged and not easy.gave_up
    # one-hot rows (15 positions x 4 symbols), many more rows than features, tiny lam
    codes = rng.integers(0, 4, size=(600, 15))
    Xo = sp.csr_matrix((np.ones(600 * 15), (np.arange(15) * 4 + codes).ravel(),
                        np.arange(0, 600 * 15 + 1, 15)), shape=(600, 60))
    yo = np.where(Xo @ rng.normal(size=60) + rng.normal(size=600) > 0, 1.0, -1.0)
    slow = l2svm_dual_cd(Design(Xo), HingeTerms(yo, np.ones(600)), 1e-4, give_up_epochs=500)
    assert slow.gave_up and not slow.converged and slow.n_iter <= 500


def test_dual_cd_is_deterministic_and_needs_sparse_input(rng):
    X, y = make_problem(rng, n=80, d=6, sparse=True)
    terms = HingeTerms(y, np.ones(80))
    a = l2svm_dual_cd(Design(X), terms, 0.1, random_state=3)
    b = l2svm_dual_cd(Design(X), terms, 0.1, random_state=3)
    np.testing.assert_array_equal(a.w, b.w)
    with pytest.raises(ValueError, match="sparse"):
        l2svm_dual_cd(Design(X.toarray()), terms, 0.1)


@settings(max_examples=50, deadline=None)
@given(g=arrays(np.float64, st.integers(1, 50), elements=st.floats(-5, 5)),
       target=st.floats(-0.9, 0.9))
def test_safeguarded_newton_finds_root(g, target):
    def f(x):
        t = np.tanh(x - g)
        return float(t.mean()) - target, float((1 - t * t).mean())

    x = safeguarded_newton(f, float(g.min()) - 5, float(g.max()) + 5, tol=1e-12)
    assert abs(f(x)[0]) <= 1e-10


def test_sparse_solves_run_with_one_blas_thread():
    """Sparse fits keep BLAS to one thread (its spinning threads would take numba's cores)."""
    from threadpoolctl import threadpool_info

    from semisup.solvers._kernels import sparse_solver_threads

    def blas_threads():
        return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}

    before = blas_threads()
    with sparse_solver_threads(True):
        assert blas_threads() <= {1}
    assert blas_threads() == before  # restored on exit


def test_dense_solves_use_one_blas_thread_when_narrow_or_busy(monkeypatch):
    """Dense designs of at most DENSE_ONE_THREAD_MAX_FEATURES features solve with one BLAS
    thread (a team costs more than it saves there, and far more on a busy machine); wider
    ones keep the team unless another thread is runnable when the fit starts."""
    from threadpoolctl import threadpool_info

    from semisup.linear import _core

    def blas_threads():
        return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}

    before = blas_threads()
    narrow = Design(np.ones((400, _core.DENSE_ONE_THREAD_MAX_FEATURES)))
    wide = Design(np.ones((4, _core.DENSE_ONE_THREAD_MAX_FEATURES + 1)))
    for busy in (False, True):
        monkeypatch.setattr(_core, "machine_busy", lambda busy=busy: busy)
        with _core.solver_threads(narrow):
            assert blas_threads() <= {1}
        assert blas_threads() == before
        with _core.solver_threads(wide):
            assert blas_threads() == ({1} if busy else before)
        assert blas_threads() == before


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), lam=st.floats(1e-3, 10.0),
       precondition=st.sampled_from(["jacobi", "sketch", False]))
def test_cgls_with_a_free_bias_solves_the_normal_equations(seed, lam, precondition):
    """``Ridge(lam, free=last)``: ``[diag(lam, .., lam, 0) + A^T C A] x = A^T C t``, a dense
    solve as the reference (the constant column keeps the system definite)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 4)) + rng.normal(scale=3.0, size=4)
    cost, t = rng.uniform(0.1, 2.0, 30), rng.choice([-1.0, 1.0], 30)
    design = Design(X)
    reg = Ridge.with_bias(lam, design.n_weights, True, penalize_intercept=False)
    res = cgls(design, cost, t, reg, tol=1e-12, precondition=precondition)
    A = dense_with_bias(X)
    H = np.diag(np.r_[np.full(4, lam), 0.0]) + A.T @ (cost[:, None] * A)
    np.testing.assert_allclose(res.x, np.linalg.solve(H, A.T @ (cost * t)), rtol=1e-7,
                               atol=1e-8)
    assert reg.value(res.x) == pytest.approx(0.5 * lam * res.x[:4] @ res.x[:4])
