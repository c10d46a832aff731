"""Issue 29 (MKL): the streaming kernel bank against independent Gram matrices, one
stopping rule (the duality gap) for the three solvers, and ``C='auto'``."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel
from sklearn.svm import SVC

from semisup.mkl import KernelBank, MKLProblem, MultipleKernelSVC, level_mkl, silp_mkl, simple_mkl
from semisup.mkl.bank import StreamingKernelBank, check_kernel_specs, check_streaming_memory
from semisup.mkl.estimator import C_GRID
from semisup.model_selection import auto_folds

SPECS = [{"kernel": "rbf", "gamma": 0.3, "features": None},
         {"kernel": "rbf", "gamma": 2.0, "features": [1]},
         {"kernel": "poly", "gamma": 0.5, "coef0": 1.0, "degree": 2, "features": [0, 2]},
         {"kernel": "linear", "features": None}]


def reference_grams(X):
    """The four kernels of SPECS from scikit-learn, each scaled to unit trace."""
    grams = [rbf_kernel(X, gamma=0.3), rbf_kernel(X[:, [1]], gamma=2.0),
             polynomial_kernel(X[:, [0, 2]], degree=2, gamma=0.5, coef0=1.0), X @ X.T]
    return [K / np.trace(K) for K in grams]


def data(rng, n=60):
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * X[:, 2] > 0, 1.0, -1.0)
    return X, y


def test_streaming_bank_matches_independent_grams(rng):
    X, _ = data(rng)
    ref = reference_grams(X)
    specs = check_kernel_specs(SPECS + [lambda A, B: (A @ B.T + 2.0) ** 2], 3)
    ref.append((X @ X.T + 2.0) ** 2 / np.trace((X @ X.T + 2.0) ** 2))
    # 7 rows per block: blocks of unequal size and the mirrored lower triangle are exercised
    bank = StreamingKernelBank(specs, X, block_bytes=32 * 60 * 7)
    p = np.array([0.1, 0.0, 0.4, 0.3, 0.2])
    K = sum(pk * Rk for pk, Rk in zip(p, ref, strict=True))
    np.testing.assert_allclose(bank.combine(p), K, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(bank.kernel(2), ref[2], rtol=1e-12, atol=1e-15)
    u = rng.normal(size=60)
    u[rng.random(60) < 0.5] = 0.0
    np.testing.assert_allclose(bank.quadratic_forms(u), [u @ R @ u for R in ref], rtol=1e-10)
    assert bank.quadratic_forms(np.zeros(60)).tolist() == [0.0] * 5
    f32 = StreamingKernelBank(specs, X, dtype=np.float32)
    np.testing.assert_allclose(f32.combine(p), K, atol=1e-6 * np.abs(K).max())


def test_level_on_streaming_bank_matches_packed(rng):
    X, y = data(rng)
    specs = check_kernel_specs(SPECS, 3)
    packed = level_mkl(MKLProblem(KernelBank.from_specs(specs, X), y, 10.0, svm_tol=1e-8),
                       tol=1e-4)
    stream = level_mkl(MKLProblem(StreamingKernelBank(specs, X, block_bytes=32 * 60 * 16), y,
                                  10.0, svm_tol=1e-8), tol=1e-4)
    assert packed.converged and stream.converged
    # the same iterates up to round-off (summation order differs)
    assert stream.objective == pytest.approx(packed.objective, rel=1e-6)
    np.testing.assert_allclose(stream.weights, packed.weights, atol=1e-3)


def test_estimator_switches_to_streaming_when_the_bank_does_not_fit(rng):
    X, y = data(rng, 80)
    yc = (y > 0).astype(int)
    specs = SPECS + [{"kernel": "rbf", "gamma": g} for g in (0.01, 0.1, 1.0, 3.0, 10.0)]
    kw = dict(kernels=specs, C=10.0, tol=1e-3)
    packed = MultipleKernelSVC(**kw).fit(X, yc)
    # packed: 9 x 80 x 81 / 2 x 8 bytes = 233 kB; streaming: 2 x 80 x 80 x 8 bytes = 102 kB
    # and blocks of 20 kB
    small = MultipleKernelSVC(**kw, max_memory=200_000).fit(X, yc)
    assert packed.bank_ == "packed" and small.bank_ == "streaming"
    np.testing.assert_allclose(small.weights_, packed.weights_, atol=1e-6)
    np.testing.assert_array_equal(small.predict(X), packed.predict(X))
    with pytest.raises(ValueError, match="bank must be one of"):
        MultipleKernelSVC(bank="disk").fit(X, yc)
    y_semi = np.where(np.arange(80) < 20, yc, -1)
    with pytest.raises(ValueError, match="bank='streaming' is for supervised fits"):
        MultipleKernelSVC(bank="streaming").fit(X, y_semi)
    with pytest.raises(ValueError, match="max_memory"):
        MultipleKernelSVC(**kw, bank="packed", max_memory=1000).fit(X, yc)
    with pytest.raises(ValueError, match="solver='level'.*max_memory"):
        check_streaming_memory(10_000, "simple", 2**27, 2 * 2**30)
    # 10,000 rows need 2 combined kernels of 0.8 GB with the level method
    assert check_streaming_memory(10_000, "level", 2**27, 8 * 2**30) < 2 * 2**30


# ------------------------------------------------------------------ one stopping rule


@pytest.mark.parametrize("solve", [level_mkl, silp_mkl, simple_mkl])
def test_every_solver_stops_on_the_duality_gap(rng, solve):
    X, y = data(rng)
    bank = KernelBank.from_specs(check_kernel_specs(SPECS, 3), X)
    problem = MKLProblem(bank, y, 10.0, svm_tol=1e-8)
    res = solve(problem, tol=1e-3, max_iter=500)
    assert res.converged
    # the stop is the relative duality gap at the returned weights, recomputed here
    alpha_y = res.alpha * y
    q = np.array([alpha_y @ bank.kernel(k) @ alpha_y for k in range(bank.n_kernels)])
    gap = (q.max() - q @ res.weights) / (2 * res.objective)
    assert gap <= 1e-3 * (1 + 1e-6)
    assert res.trace["gap"][-1] == pytest.approx(gap, rel=1e-6, abs=1e-9)


def test_level_bound_gap_rule_is_looser_and_off_by_default(rng):
    X, y = data(rng)
    bank = KernelBank.from_specs(check_kernel_specs(SPECS, 3), X)
    one = level_mkl(MKLProblem(bank, y, 10.0, svm_tol=1e-8), tol=1e-3)
    own = level_mkl(MKLProblem(bank, y, 10.0, svm_tol=1e-8), tol=1e-3, bound_gap=True)
    assert one.converged and own.converged
    assert own.n_iter <= one.n_iter
    assert one.trace["gap"][-1] <= 1e-3
    # Delta <= J(p^i) - min_p f(p, alpha^i) = (relative gap) J(p^i) at every iterate,
    # because f_up <= J(p^i) and f_low >= min_p f(p, alpha^i)
    f_up, f_low = np.array(one.trace["f_up"]), np.array(one.trace["f_low"])
    obj, gap = np.array(one.trace["objective"]), np.array(one.trace["gap"])
    assert np.all(f_up - f_low <= gap * obj * (1 + 1e-9) + 1e-9)


# ------------------------------------------------------------------ C = 'auto'


def test_C_auto_matches_a_direct_labeled_only_cv(rng):
    X, y = data(rng, 30)
    yc = (y > 0).astype(int)
    specs = check_kernel_specs(SPECS[:2], 3)
    clf = MultipleKernelSVC(kernels=specs, C="auto", tol=1e-3).fit(X, yc)
    assert clf.C_ in C_GRID
    scores = clf.cv_results_["mean_test_score"]
    assert scores.shape == (len(C_GRID),)
    assert clf.C_ == C_GRID[int(np.flatnonzero(scores >= scores.max() - 1e-12)[0])]
    # one value checked by hand: the same folds, each fitted on its kept rows only
    folds = auto_folds(yc)
    v = 2
    acc = []
    for train, test in folds:
        est = MultipleKernelSVC(kernels=specs, C=C_GRID[v], tol=1e-3).fit(X[train], yc[train])
        acc.append(np.mean(est.predict(X[test]) == yc[test]))
    assert scores[v] == pytest.approx(np.mean(acc))
    # the final model is the refit at C_ on every row
    ref = MultipleKernelSVC(kernels=specs, C=clf.C_, tol=1e-3).fit(X, yc)
    np.testing.assert_allclose(clf.weights_, ref.weights_)
    assert clf.get_params()["C"] == "auto"
    with pytest.raises(ValueError, match="C must be a finite number > 0 or 'auto'"):
        MultipleKernelSVC(C=-1.0).fit(X, yc)


def test_C_auto_fixed_kernel_sanity(rng):
    """On one kernel the MKL fit is an SVM: the selected C gives sklearn's SVC predictions."""
    X, y = data(rng, 40)
    yc = (y > 0).astype(int)
    spec = [{"kernel": "rbf", "gamma": 0.3, "features": None}]
    clf = MultipleKernelSVC(kernels=spec, C="auto").fit(X, yc)
    K = rbf_kernel(X, gamma=0.3)
    # the SVM with C on K / trace(K) is the SVM with C / trace(K) on K (alpha scaled)
    svc = SVC(kernel="precomputed", C=clf.C_ / np.trace(K), tol=1e-8).fit(K, yc)
    np.testing.assert_allclose(clf.decision_function(X), svc.decision_function(K),
                               atol=1e-4)


def test_C_auto_semi_supervised_keeps_held_out_rows_unlabeled(rng):
    X, y = data(rng, 40)
    yc = (y > 0).astype(int)
    lab = np.r_[np.flatnonzero(yc == 0)[:5], np.flatnonzero(yc == 1)[:5]]
    y_semi = np.full(40, -1)
    y_semi[lab] = yc[lab]
    specs = check_kernel_specs(SPECS[:2], 3)
    clf = MultipleKernelSVC(kernels=specs, C="auto", tol=1e-2, fallback="none").fit(X, y_semi)
    assert clf.C_ in C_GRID and clf.bank_ == "packed"
    # one value by hand: each fold fits on every row, its held-out labels hidden
    v = 1
    acc = []
    for train, test in auto_folds(y_semi):
        y_fold = np.full(40, -1)
        y_fold[train] = yc[train]
        est = MultipleKernelSVC(kernels=specs, C=C_GRID[v], tol=1e-2,
                                fallback="none").fit(X, y_fold)
        acc.append(np.mean(est.predict(X[test]) == yc[test]))
    assert clf.cv_results_["mean_test_score"][v] == pytest.approx(np.mean(acc))


def test_decision_function_matches_independent_kernels(rng):
    X, y = data(rng, 60)
    Xt = rng.normal(size=(25, 3))
    clf = MultipleKernelSVC(kernels=SPECS, C=10.0, tol=1e-3).fit(X, (y > 0).astype(int))

    def grams(A, B):
        return [rbf_kernel(A, B, gamma=0.3), rbf_kernel(A[:, [1]], B[:, [1]], gamma=2.0),
                polynomial_kernel(A[:, [0, 2]], B[:, [0, 2]], degree=2, gamma=0.5, coef0=1.0),
                A @ B.T]

    traces = [np.trace(K) for K in grams(X, X)]
    p, coef = clf.weights_[0], clf.dual_coef_[0]
    f = sum(pk / t * K @ coef for pk, t, K in zip(p, traces, grams(Xt, X), strict=True))
    np.testing.assert_allclose(clf.decision_function(Xt), f + clf.intercept_[0], atol=1e-10)
