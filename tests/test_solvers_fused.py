"""The fused passes of the solvers (issue 30): one pass where there were two, no branch on a
term's activity, no product whose result is already known -- each checked against the
unfused computation (to the last bit where the summation order is unchanged) and against
dense references, on problems small enough to run with the compiled kernels forced on."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import dense_with_bias, make_problem

import semisup._accel as accel
from semisup.losses import HingeTerms
from semisup.regularizers import Ridge
from semisup.solvers import _kernels
from semisup.solvers import line_search as ls
from semisup.solvers.cgls import LocalRows, cgls, cgls_rows
from semisup.solvers.design import Design
from semisup.solvers.mfn import l2svm_mfn
from semisup.solvers.preconditioners import make_preconditioner


@pytest.fixture
def compiled(monkeypatch):
    """The compiled kernels and passes whatever the size (as on SecStr's 83,679 rows)."""
    monkeypatch.setattr(accel, "COMPILE_MIN_SIZE", 0)


def _sparse(rng, n=400, d=30, density=0.2, dtype=np.float64):
    X = sp.random(n, d, density=density, random_state=int(rng.integers(1 << 30)),
                  format="csr")
    X.data = rng.normal(size=X.data.size)
    return X.astype(dtype)


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rmatvec_pair_equals_two_products_bit_for_bit(rng, compiled, parallel, fit_intercept,
                                                      dtype):
    X = _sparse(rng, dtype=dtype)
    A = Design(X, fit_intercept=fit_intercept, intercept_scaling=1.7, parallel=parallel)
    sub = A.restrict(np.sort(rng.choice(400, 250, replace=False)))
    q1, q2 = rng.normal(size=250), rng.normal(size=250)
    q1[::7] = 0.0  # rows that one of the two skips
    q2[::5] = 0.0
    a, b = sub.rmatvec_pair(q1, q2)
    np.testing.assert_array_equal(a, sub.rmatvec(q1))
    np.testing.assert_array_equal(b, sub.rmatvec(q2))
    Xa = dense_with_bias(X.astype(np.float64))[sub.rows] * np.r_[np.ones(30), 1.7]
    Xa = Xa if fit_intercept else Xa[:, :30]
    np.testing.assert_allclose(a, Xa.T @ q1, atol=1e-12)


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_normal_product_equals_the_product_pair(rng, compiled, parallel, fit_intercept):
    """``q^T C q`` and ``A^T C q`` in one pass: the curvature to the last bit of the serial
    pair (same order of additions), the vector to the last bit of ``rmatvec(C q)``."""
    from semisup.solvers.cgls import _weighted_sq

    X = _sparse(rng)
    A = Design(X, fit_intercept=fit_intercept, intercept_scaling=0.5, parallel=parallel)
    sub = A.restrict(np.sort(rng.choice(400, 300, replace=False)))
    p = rng.normal(size=sub.n_weights)
    cost = rng.uniform(0.0, 2.0, size=300)
    cost[::9] = 0.0
    assert sub.fused_normal_product
    curvature, AtCq = sub.normal_product(p, cost)
    q = sub.matvec(p)
    Cq = np.empty(300)
    reference = _weighted_sq(q, cost, Cq)
    np.testing.assert_array_equal(AtCq[:30], sub.rmatvec(Cq)[:30])
    if parallel:  # the chunks' partial sums are added in another order
        assert curvature == pytest.approx(reference, rel=1e-13)
    else:
        assert curvature == reference
    if fit_intercept:
        assert AtCq[30] == pytest.approx(0.5 * Cq.sum(), rel=1e-12)
    # the numpy route (small data, no compiled kernels) gives the same numbers
    plain = Design(X.toarray(), fit_intercept=fit_intercept, intercept_scaling=0.5)
    plain = plain.restrict(sub.rows)
    assert not plain.fused_normal_product
    c2, v2 = plain.normal_product(p, cost)
    assert c2 == pytest.approx(curvature, rel=1e-12)
    np.testing.assert_allclose(v2, AtCq, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("precondition", [False, "jacobi", "sketch"])
@pytest.mark.parametrize("seeded", [False, True])
def test_fused_cgls_equals_dense_solve_and_the_unfused_iteration(rng, compiled, precondition,
                                                                 seeded):
    X = _sparse(rng, n=300, d=25, density=0.3)
    rows = np.arange(0, 300, 2)
    cost = rng.uniform(0.1, 3.0, size=rows.size)
    target = rng.choice([-1.0, 1.0], size=rows.size)
    A = Design(X).restrict(rows)
    x0 = rng.normal(size=26) if seeded else None
    res = cgls(A, cost, target, Ridge(0.3), x0=x0, tol=1e-12, max_iter=1000,
               precondition=precondition)
    Xa = dense_with_bias(X)[rows]
    exact = np.linalg.solve(0.3 * np.eye(26) + Xa.T @ (cost[:, None] * Xa), Xa.T @ (cost * target))
    assert res.converged
    np.testing.assert_allclose(res.x, exact, rtol=1e-8, atol=1e-10)
    # the same iteration with the two products per step: same iterates up to round-off
    x = np.zeros(26) if x0 is None else x0.copy()
    M = make_preconditioner(precondition, A, cost, Ridge(0.3))
    two = cgls_rows(LocalRows(A, cost, target, fused=False), Ridge(0.3), x, M, 1e-12, 1000,
                    compiled=True, zero_seed=x0 is None)
    assert LocalRows(A, cost, target).fused and not LocalRows(A, cost, target, fused=False).fused
    assert abs(two.n_iter - res.n_iter) <= 1
    np.testing.assert_allclose(two.x, res.x, rtol=1e-9, atol=1e-12)


def test_cgls_started_from_known_outputs_skips_a_product(rng, compiled):
    """MFN hands CGLS the outputs at its seed: the same solution, one product fewer."""
    X = _sparse(rng, n=200, d=20)
    A = Design(X)
    cost, target = rng.uniform(0.1, 2.0, size=200), rng.choice([-1.0, 1.0], size=200)
    x0 = rng.normal(size=21)
    calls = []
    original = Design.matvec

    def counting(self, w, out=None):
        calls.append(1)
        return original(self, w, out)

    outputs = A.matvec(x0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Design, "matvec", counting)
        a = cgls_rows(LocalRows(A, cost, target), Ridge(0.1), x0.copy(), None, 1e-10, 500)
        n_plain = len(calls)
        calls.clear()
        b = cgls_rows(LocalRows(A, cost, target, outputs=outputs), Ridge(0.1), x0.copy(), None,
                      1e-10, 500)
    assert len(calls) == n_plain - 1
    np.testing.assert_array_equal(a.x, b.x)


@pytest.mark.parametrize("sparse", [False, True])
def test_mfn_outputs_are_the_product_at_its_solution(rng, compiled, sparse):
    """After an accepted Newton point the outputs are returned, not recomputed: they must be
    ``A w`` to the last bit, and the objective the one recomputed there."""
    X, y = make_problem(rng, n=300, d=12, sparse=sparse)
    A, terms, reg = Design(X), HingeTerms(y, rng.uniform(0.5, 2.0, size=300)), Ridge(0.05)
    for w0 in (None, rng.normal(size=13)):
        res = l2svm_mfn(A, terms, reg, w0=w0, tol=1e-10)
        assert res.converged
        np.testing.assert_array_equal(res.outputs, A.matvec(res.w))
        assert res.objective == reg.value(res.w) + terms.value(A.matvec(res.w))
    # warm started next to its optimum: no product besides the Newton points'
    calls = []
    original = Design.matvec

    def counting(self, w, out=None):
        calls.append(self.n_rows)
        return original(self, w, out)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Design, "matvec", counting)
        again = l2svm_mfn(A, terms, reg, w0=res.w, outputs0=res.outputs, tol=1e-10)
    assert again.converged
    full = [n for n in calls if n == 300]
    assert len(full) == again.n_iter  # one per Newton point, none to start or to finish


def test_compiled_chunk_bounds_and_row_counts_equal_numpy(rng):
    for trial in range(60):
        n = int(rng.integers(1, 300))
        X = sp.random(n, 15, density=rng.uniform(0.0, 0.6), format="csr", random_state=trial)
        rows = np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False))
        nnz, breaks = _kernels.rows_nnz_and_breaks(X.indptr, rows)
        assert nnz == (X.indptr[rows + 1] - X.indptr[rows]).sum()
        assert breaks == np.count_nonzero(np.diff(rows) != 1)
        for chunks in (1, 2, 3, 8):
            np.testing.assert_array_equal(_kernels.chunk_bounds(X.indptr, rows, chunks),
                                          _kernels.chunk_bounds(X.indptr, rows, chunks,
                                                                int(nnz)))


def _break_point_problem(rng, n, mapped, margins):
    o = rng.normal(scale=1.5, size=n)
    ob = o + rng.normal(scale=10 ** rng.uniform(-3, 0), size=n)
    same = rng.random(n) < 0.1
    ob[same] = o[same]                                   # terms that do not move
    m = 2 * n if mapped else n
    rows = rng.integers(0, n, size=m) if mapped else np.empty(0, dtype=np.int64)
    y = rng.choice([-1.0, 1.0], size=m)
    c = np.where(rng.random(m) < 0.1, 0.0, rng.uniform(0.1, 2.0, size=m))
    margin = rng.uniform(-0.5, 1.0, size=m) if margins else np.empty(0)
    return o, ob, rows, y, c, margin


@pytest.mark.parametrize("mapped", [False, True])
@pytest.mark.parametrize("margins", [False, True])
def test_branch_free_break_points_equal_the_numpy_ones(rng, mapped, margins):
    """The compiled first pass and break points of the line search against their numpy twin;
    the root against brute force."""
    for _ in range(20):
        o, ob, rows, y, c, margin = _break_point_problem(rng, 200, mapped, margins)
        args = (o, ob, rows.astype(np.int64), y, c, -0.3, 0.2, ls._PROBES, margin)
        compiled_out = ls._break_points(*args)
        numpy_out = ls._break_points_numpy(*args)
        assert compiled_out[0] == pytest.approx(numpy_out[0], rel=1e-12)
        assert compiled_out[1] == pytest.approx(numpy_out[1], rel=1e-12, abs=1e-14)
        order_c, order_n = np.argsort(compiled_out[2]), np.argsort(numpy_out[2])
        for k in (2, 3, 4):
            np.testing.assert_allclose(compiled_out[k][order_c], numpy_out[k][order_n],
                                       rtol=1e-12, atol=1e-15)
        rows_or_none = rows if mapped else None
        delta = ls.exact_line_search(o, ob, y, c, -0.3, 0.2, rows=rows_or_none,
                                     margin=margin if margins else None)
        t = np.linspace(0.0, max(4.0, 2 * delta), 4001)
        oo = o if not mapped else o[rows]
        dd = (ob - o) if not mapped else (ob - o)[rows]
        mm = margin if margins else 1.0
        phi = -0.3 * t + 0.1 * t ** 2 + 0.5 * np.sum(
            c * np.maximum(0.0, mm - y * (oo + t[:, None] * dd)) ** 2, axis=1)
        assert phi.min() >= -0.3 * delta + 0.1 * delta ** 2 + 0.5 * np.sum(
            c * np.maximum(0.0, mm - y * (oo + delta * dd)) ** 2) - 1e-12


@pytest.mark.parametrize("margins", [False, True])
def test_branch_free_hinge_passes_equal_their_definitions(rng, compiled, margins):
    for _ in range(10):
        n, m = 300, 600
        o = rng.normal(scale=1.5, size=n)
        rows = rng.integers(0, n, size=m)
        y = rng.choice([-1.0, 1.0], size=m)
        c = np.where(rng.random(m) < 0.2, 0.0, rng.uniform(0.1, 2.0, size=m))
        margin = rng.uniform(-0.5, 1.0, size=m) if margins else None
        terms = HingeTerms(y, c, rows=rows, n_rows=n, margin=margin)
        assert terms._compiled
        mm = 1.0 if margin is None else margin
        z = mm - y * o[rows]
        assert terms.value(o) == pytest.approx(0.5 * c @ np.maximum(z, 0.0) ** 2, rel=1e-12)
        active = terms.active(o)
        np.testing.assert_array_equal(active, (z > 0.0) & (c > 0.0))
        r, cost, target = terms.newton_system(active)
        row_cost = np.bincount(rows[active], weights=c[active], minlength=n)
        row_rhs = np.bincount(rows[active], weights=(c * y * mm)[active], minlength=n)
        np.testing.assert_array_equal(r, np.flatnonzero(row_cost > 0))
        np.testing.assert_allclose(cost, row_cost[r], rtol=1e-12)
        np.testing.assert_allclose(target, row_rhs[r] / row_cost[r], rtol=1e-12)
