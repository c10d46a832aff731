"""DA's per-row statistics in fused passes (issue 30): the p-step, entropy, KL divergence and
objectives of :class:`~semisup.solvers.s3vm.LocalS3VMRows` on large problems against the
numpy functions that define them, and a whole fit on both routes."""

from __future__ import annotations

import numpy as np
import pytest

import semisup._accel as accel
from semisup.losses import transductive_objective
from semisup.solvers import s3vm


class _Rows:
    """The two numbers :class:`~semisup.solvers.s3vm.LocalS3VMRows` reads from a design."""

    def __init__(self, n):
        self.n_rows = n


def _rows(compiled: bool, monkeypatch, l=40, u=3000, weights=False, seed=0):
    rng = np.random.default_rng(seed)
    monkeypatch.setattr(accel, "COMPILE_MIN_SIZE", 0 if compiled else 10 ** 9)
    sw = rng.uniform(0.2, 3.0, size=l + u) if weights else None
    rows = s3vm.LocalS3VMRows(_Rows(l + u), l, rng.choice([-1.0, 1.0], size=l), sw)
    assert rows._compiled == compiled
    rows.o = rng.normal(scale=1.5, size=l + u)
    rows.start_beliefs(0.4)
    return rows


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")  # numpy's KL
@pytest.mark.parametrize("weights", [False, True])
def test_fused_p_step_and_statistics_equal_the_numpy_functions(monkeypatch, weights):
    a = _rows(False, monkeypatch, weights=weights)
    b = _rows(True, monkeypatch, weights=weights)
    rng = np.random.default_rng(1)
    # temperatures down to where beliefs reach exact 0 and 1 (0 log 0, an infinite KL)
    for T in (10.0, 1.0, 0.1, 1e-2, 1e-4, 1e-4):
        o = rng.normal(scale=1.5, size=a.o.shape[0])
        a.o, b.o = o, o.copy()
        a.p_step(1.0, T, 0.4)
        b.p_step(1.0, T, 0.4)
        np.testing.assert_allclose(b.p, a.p, rtol=1e-9, atol=1e-12)
        h_a, h_b = a.entropy(), b.entropy()
        assert h_b == pytest.approx(h_a, rel=1e-9, abs=1e-9)
        kl_a, kl_b = a.kl(), b.kl()
        assert kl_b == pytest.approx(kl_a, rel=1e-8, abs=1e-9) or kl_a == kl_b == np.inf
        # the objectives at the same beliefs
        b.p = a.p.copy()
        assert b.annealing_objective(0.3, 1.0, T, h_a) == pytest.approx(
            a.annealing_objective(0.3, 1.0, T, h_a), rel=1e-12)
        assert b.transductive_objective(0.3, 1.0) == pytest.approx(
            a.transductive_objective(0.3, 1.0), rel=1e-12)
    assert np.any(a.p == 0.0) and np.any(a.p == 1.0)  # the exact ends were reached
    b.p_step(1.0, 0.5, 0.4)  # the balance constraint (eq. 7) holds on the fused route too
    assert np.mean(b.p) == pytest.approx(0.4, abs=1e-9)
    ref = transductive_objective(0.3, b.o[:40], b.y_l, b.o[40:], 1.0, b.weights)
    assert b.transductive_objective(0.3, 1.0) == pytest.approx(ref, rel=1e-12)


def test_infinite_kl_when_a_belief_leaves_an_exact_end(monkeypatch):
    """``KL(p, q)`` is infinite where ``q`` was exactly 0 or 1 and ``p`` is not (numpy's
    ``rel_entr``): the inner loop must not stop on it, on either route."""
    for compiled in (False, True):
        rows = _rows(compiled, monkeypatch, u=200)
        rows.o = np.r_[np.zeros(40), np.linspace(-3, 3, 200)]
        rows.p_step(1.0, 1e-4, 0.4)       # hard beliefs: exact zeros and ones
        assert np.any(rows.p == 0.0)
        rows.o = np.r_[np.zeros(40), np.linspace(3, -3, 200)]
        rows.p_step(1.0, 10.0, 0.4)       # soft again
        assert rows.kl() == np.inf


def test_fast_quantile_is_numpys_to_the_last_bit():
    rng = np.random.default_rng(3)
    for trial in range(200):
        n = int(rng.integers(1, 3000))
        kind = trial % 4
        g = [rng.normal(size=n), np.round(rng.normal(size=n), 1),       # ties
             rng.exponential(size=n) ** 4,                               # skewed
             np.r_[np.zeros(n // 2), rng.normal(size=n - n // 2)]][kind]  # a block of equal
        for q in (0.0, 0.1, 0.43, 0.5, 0.999, 1.0, float(rng.uniform())):
            assert s3vm._quantile(g, q, float(g.min()), float(g.max())) == np.quantile(g, q)


@pytest.mark.parametrize("weights", [False, True])
def test_da_fit_is_the_same_on_both_routes(monkeypatch, weights):
    """A whole DA fit with the fused statistics and compiled kernels against the numpy route:
    the same path (iterations), objective and labels up to round-off."""
    import scipy.sparse as sp

    from semisup.solvers.design import Design

    rng = np.random.default_rng(5)
    n, d, l = 1500, 20, 40
    X = rng.normal(size=(n, d))
    w_true = rng.normal(size=d)
    y = np.where(X @ w_true > 0, 1.0, -1.0)
    sw = rng.uniform(0.5, 2.0, size=n) if weights else None
    results = []
    for compiled in (False, True):
        monkeypatch.setattr(accel, "COMPILE_MIN_SIZE", 0 if compiled else 10 ** 9)
        res = s3vm.deterministic_annealing(Design(sp.csr_matrix(X)), l, y[:l], 1e-2, 1.0,
                                           float(np.mean(y[:l] > 0)), sample_weight=sw)
        results.append(res)
    a, b = results
    assert b.n_iter == a.n_iter
    assert b.objective == pytest.approx(a.objective, rel=1e-9)
    np.testing.assert_array_equal(np.sign(b.beliefs - 0.5), np.sign(a.beliefs - 0.5))
    np.testing.assert_allclose(b.w, a.w, rtol=1e-6, atol=1e-8)
