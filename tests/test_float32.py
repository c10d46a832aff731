"""float32 input: kept where the solvers allow it, converted (once) where they do not.

The user guide's table (docs/user_guide.rst, "float32 input") lists the estimators; these
tests pin each row: the linear family keeps sparse float32 data on its compiled path
(float64 weights and accumulators, objective within float32 rounding of the float64 fit),
the others convert.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import semisup._accel as accel
from semisup import (
    CCCPS3VM,
    L2SVM,
    LaplacianEigenmaps,
    LapRLS,
    LinearLapRLS,
    LinearLapSVM,
    RLSClassifier,
    TransductiveSVM,
)
from semisup._validation import FLOAT_DTYPES, check_X
from semisup.linear import _core as linear_core
from semisup.linear import cccp
from semisup.solvers.design import Design


def _problem(n=400, d=60, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.1, random_state=seed, format="csr",
                  data_rvs=rng.standard_normal)
    w = rng.standard_normal(d)
    truth = (X @ w > 0).astype(int)
    y = np.full(n, -1)
    lab = np.concatenate([np.flatnonzero(truth == 0)[:10], np.flatnonzero(truth == 1)[:10]])
    y[lab] = truth[lab]
    return X, y


def test_check_x_keeps_float32_only_when_asked():
    X = np.ones((3, 2), dtype=np.float32)
    assert check_X(X).dtype == np.float64
    assert check_X(X, dtype=FLOAT_DTYPES).dtype == np.float32
    assert check_X(np.ones((3, 2), dtype=np.int64), dtype=FLOAT_DTYPES).dtype == np.float64
    assert check_X(sp.csr_matrix(X), dtype=FLOAT_DTYPES).dtype == np.float32


def test_design_keeps_float32_on_the_compiled_path_with_float64_results():
    X, _ = _problem()
    X32 = X.astype(np.float32)
    X64 = X32.astype(np.float64)              # the same values, stored wider
    rows = np.arange(0, X.shape[0], 3)
    d32 = Design(X32, parallel=False).restrict(rows)   # explicit parallel: compiled kernels
    d64 = Design(X64, parallel=False).restrict(rows)
    assert d32.X.dtype == np.float32 and d32.X.data is not X64.data
    rng = np.random.default_rng(1)
    w, q = rng.standard_normal(d32.n_weights), rng.standard_normal(rows.size)
    for a, b in [(d32.matvec(w), d64.matvec(w)), (d32.rmatvec(q), d64.rmatvec(q)),
                 (d32.weighted_column_sq(q ** 2), d64.weighted_column_sq(q ** 2)),
                 (d32.row_sq_norms(), d64.row_sq_norms())]:
        assert a.dtype == np.float64
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert d32.materialize().dtype == np.float64       # direct solvers get float64
    # small data on scipy's products: one dtype for matrix and vector, so float64
    assert Design(X32).X.dtype == np.float64


@pytest.mark.parametrize("Est, params", [
    (L2SVM, dict(lam=0.1)), (RLSClassifier, dict(lam=0.1)),
    (TransductiveSVM, dict(lam=0.1, lam_u=0.5)),
    (LinearLapRLS, dict(solver="cg")), (LinearLapRLS, dict(solver="direct")),
    (LinearLapSVM, dict()), (CCCPS3VM, dict(lam=0.1)),
])
def test_linear_family_fits_float32_without_a_float64_copy(Est, params, monkeypatch):
    X, y = _problem()
    seen = []

    class Spy(Design):
        def __init__(self, X, *args, **kwargs):
            super().__init__(X, *args, **kwargs)
            seen.append(self.X.dtype)

    monkeypatch.setattr(linear_core, "Design", Spy)
    monkeypatch.setattr(cccp, "Design", Spy)             # CCCP stacks its own Design
    monkeypatch.setattr(accel, "COMPILE_MIN_SIZE", 0)   # the compiled path at any size
    ref = Est(**params).fit(X, y)                        # float64 data
    assert seen and set(seen) == {np.dtype(np.float64)}
    seen.clear()
    est = Est(**params).fit(X.astype(np.float32), y)
    assert seen and set(seen) == {np.dtype(np.float32)}
    # weights, objective and scores stay float64; the objective moves by float32 rounding
    assert est.coef_.dtype == np.float64
    assert est.decision_function(X.astype(np.float32)).dtype == np.float64
    assert abs(est.objective_ - ref.objective_) <= 1e-5 * abs(ref.objective_)
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-4, atol=1e-4)
    unl = y == -1
    assert np.mean(est.transduction_[unl] == ref.transduction_[unl]) >= 0.98
    np.testing.assert_array_equal(est.transduction_[unl], est.predict(X[unl]))


def test_dense_float32_cccp_stacks_once_in_float64():
    X, y = _problem()
    Xd = X.toarray().astype(np.float32)
    a = CCCPS3VM(lam=0.1).fit(Xd, y)
    b = CCCPS3VM(lam=0.1).fit(Xd.astype(np.float64), y)
    assert cccp._stack(Xd[:3], Xd[3:5]).dtype == np.float64
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-10, atol=1e-12)


def test_dense_float32_goes_to_float64_for_blas():
    X, y = _problem()
    est = L2SVM(lam=0.1).fit(X.toarray().astype(np.float32), y)
    assert est.coef_.dtype == np.float64


def test_estimators_that_convert_still_accept_float32():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 5)).astype(np.float32)
    y = np.full(120, -1)
    y[:10] = (X[:10, 0] > 0).astype(int)
    y[:2] = [0, 1]
    a = LapRLS().fit(X, y)
    b = LapRLS().fit(X.astype(np.float64), y)
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X), rtol=1e-10)
    emb = LaplacianEigenmaps(n_components=2).fit(X)
    assert emb.transform(X).dtype == np.float32          # transformers preserve float32
    assert emb.fit_transform(X).dtype == np.float32
    assert emb.transform(X.astype(np.float64)).dtype == np.float64
