"""Issue 29 (MKL at 10,000 rows x 100 kernels): the fused block kernels of the streaming
bank (``StreamingKernelBank(compiled=True)``, :mod:`semisup.mkl._blocks`) against the packed
bank, whose Gram matrices are formed independently (float64, one numpy pass per kernel)."""

import numpy as np
import pytest

from semisup.mkl import KernelBank, MKLProblem, level_mkl
from semisup.mkl._blocks import POLY, RBF_SQUARE, RBF_START, GroupProgram
from semisup.mkl.bank import (
    StreamingKernelBank,
    auto_kernels,
    check_kernel_specs,
    simplemkl_kernels,
)


def bank_specs(X):
    """Chains of Gaussians (factors of 2: 'auto'; of 4: SimpleMKL), a lone width, every
    polynomial form (integer degrees 1-3, a fractional one, linear), on several subsets."""
    d = X.shape[1]
    specs = auto_kernels(X) + simplemkl_kernels(d, single_features=False)
    specs += [{"kernel": "rbf", "gamma": 0.37, "features": [0, 2]},
              {"kernel": "rbf", "gamma": 0.74, "features": [0, 2]},
              {"kernel": "rbf", "gamma": 0.5, "features": [0, 2]},
              {"kernel": "poly", "gamma": 0.1, "coef0": 3.0, "degree": 2.5, "features": [1]},
              {"kernel": "poly", "gamma": 0.3, "coef0": 1.0, "degree": 4, "features": [1, 3]},
              {"kernel": "linear", "features": [3]}]
    return check_kernel_specs(specs, d)


def rel_err(A, B):
    return float(np.abs(A - B).max() / np.abs(B).max())


@pytest.fixture
def problem(rng):
    X = rng.normal(size=(70, 4))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * X[:, 2] > 0, 1.0, -1.0)
    return X, y


def test_programs_share_exponentials_along_doubling_chains(problem):
    X, _ = problem
    specs = bank_specs(X)
    auto = GroupProgram(specs, list(range(9)))
    # 'auto': 7 Gaussians at 2^-3..2^3 g0 are one chain (one exp, then one squaring each)
    assert auto.chain_gamma.size == 1
    assert auto.kind.tolist() == [RBF_START] + [RBF_SQUARE] * 6 + [POLY, POLY]
    assert auto.steps.tolist()[:7] == [0] + [1] * 6
    # SimpleMKL: gammas 1/(2 sigma^2) differ by 4; a chain stops at a ratio of 2^10
    simple = GroupProgram(specs, list(range(9, 22)))
    assert simple.chain_gamma.size == 2
    assert simple.steps.tolist()[:10] == [0, 2, 2, 2, 2, 2, 0, 2, 2, 2]
    # chains run over consecutive widths: 0.5 between 0.37 and 0.74 breaks theirs
    odd = GroupProgram(specs, [22, 23, 24])
    assert odd.chain_gamma.tolist() == [0.37, 0.5, 0.74]
    assert GroupProgram(specs, [22, 23]).chain_gamma.tolist() == [0.37]
    # a zero weight skips a Gaussian unless a later member of its chain is squared from it
    w = np.zeros(len(specs))
    w[5] = 1.0
    assert auto.needed(w).tolist() == [True] * 6 + [False] * 3


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 1e-6)])
def test_fused_kernels_match_the_packed_bank(problem, rng, dtype, tol):
    X, _ = problem
    # a callable kernel goes around the fused kernels, through full blocks
    specs = bank_specs(X) + [lambda A, B: (A @ B.T + 2.0) ** 2]
    packed = KernelBank.from_specs(specs, X)
    # 9 rows per block, chunks of 3 rows: unequal blocks, mirrored triangle, chunk edges
    fused = StreamingKernelBank(specs, X, dtype=dtype, compiled=True, block_bytes=32 * 70 * 9)
    assert fused.compiled
    fused_chunks = pytest.MonkeyPatch.context()
    with fused_chunks as mp:
        mp.setattr("semisup.mkl._blocks.CHUNK_ENTRIES", 3 * 70)
        errs = np.array([rel_err(fused.kernel(k), packed.kernel(k))
                         for k in range(len(specs))])
        # float32 rows: a Gaussian's relative error is gamma times that of the squared
        # distances, eps32 |D|, which no evaluation order can undo (SimpleMKL's
        # sigma = 1/8 on unit-variance data, 3e-5); polynomials stay below tol
        bound = np.full(len(specs), tol)
        if dtype == np.float32:
            for k, spec in enumerate(specs):
                if not callable(spec) and spec["kernel"] == "rbf":
                    f = spec["features"]
                    Xs = X if f is None else X[:, f]
                    d_max = 4.0 * np.max(np.einsum("ij,ij->i", Xs, Xs))
                    bound[k] += 2.0 * np.finfo(np.float32).eps * spec["gamma"] * d_max
            assert np.all(errs[[7, 8, 25, 26, 27]] <= tol)
        assert np.all(errs <= bound), (int(np.argmax(errs / bound)), errs.max())
        p = rng.random(len(specs))
        p[::3] = 0.0
        p /= p.sum()
        assert rel_err(fused.combine(p), packed.combine(p)) <= bound.max()
        u = rng.normal(size=70)
        u[rng.random(70) < 0.4] = 0.0
        q = fused.quadratic_forms(u)
    np.testing.assert_allclose(q, packed.quadratic_forms(u), rtol=100 * bound.max())
    np.testing.assert_allclose(fused.scales, packed.scales, rtol=tol)


def test_level_method_on_fused_bank_matches_packed(problem):
    X, y = problem
    specs = bank_specs(X)
    packed = level_mkl(MKLProblem(KernelBank.from_specs(specs, X), y, 10.0, svm_tol=1e-8),
                       tol=1e-2)
    bank = StreamingKernelBank(specs, X, compiled=True, block_bytes=32 * 70 * 16)
    fused = level_mkl(MKLProblem(bank, y, 10.0, svm_tol=1e-8), tol=1e-2)
    assert packed.converged and fused.converged
    assert fused.objective == pytest.approx(packed.objective, rel=1e-6)
    np.testing.assert_allclose(fused.weights, packed.weights, atol=1e-3)


def test_compiled_choice(problem):
    X, _ = problem
    specs = bank_specs(X)
    # 70 x 70 kernel values do not repay numba's start-up; 10,000 rows do
    assert not StreamingKernelBank(specs, X).compiled
    with pytest.raises(ValueError, match="compiled must be True, False or 'auto'"):
        StreamingKernelBank(specs, X, compiled="yes")


def test_product_cache_gives_the_same_kernels_and_is_counted(problem, rng, monkeypatch):
    X, y = problem
    specs = bank_specs(X)
    kw = dict(compiled=True, block_bytes=32 * 70 * 9)
    plain = StreamingKernelBank(specs, X, **kw)
    cached = StreamingKernelBank(specs, X, cache_bytes=2**30, **kw)
    # 8 blocks of 9 rows (the last 7) against the rows from their own start, per subset
    entries = sum(min(9, 70 - s) * (70 - s) for s in range(0, 70, 9))
    n_subsets = len(cached._groups)
    assert cached.cache_nbytes == n_subsets * entries * 8
    assert cached.nbytes == plain.nbytes + cached.cache_nbytes
    too_small = StreamingKernelBank(specs, X, cache_bytes=cached.cache_nbytes - 1, **kw)
    assert too_small.cache_nbytes == 0 and plain.cache_nbytes == 0
    for _ in range(2):          # the second request reads the kept products
        p = rng.random(len(specs))
        p /= p.sum()
        np.testing.assert_array_equal(cached.combine(p), plain.combine(p))
    # the estimator counts the cache in the footprint it checks against max_memory
    monkeypatch.setattr("semisup.mkl.bank.use_compiled", lambda size: True)
    yc = (y > 0).astype(int)
    from semisup import MultipleKernelSVC

    kw = dict(kernels=specs[:9], C=10.0)
    packed = MultipleKernelSVC(fallback="none", **kw).fit(X, yc)
    stream = MultipleKernelSVC(fallback="none", **kw, bank="streaming").fit(X, yc)
    # one subset (all features), one block of 70 rows: 70 x 70 float64 products kept, on
    # top of the level method's two combined kernels and a 128 MiB block
    cache = 70 * 70 * 8
    assert stream.bank_ == "streaming"
    assert stream.memory_nbytes_ == 2 * 70 * 70 * 8 + 2**27 + cache
    np.testing.assert_allclose(stream.weights_, packed.weights_, atol=1e-6)
    # a cap that leaves no room for them: blocks of 256 x 70 bytes and no cache
    no_room = MultipleKernelSVC(fallback="none",
                                **kw, bank="streaming", max_memory=2 * 70 * 70 * 8 + 20_000)
    no_room.fit(X, yc)
    assert no_room.memory_nbytes_ == 2 * 70 * 70 * 8 + 256 * 70
    assert no_room.bank_nbytes_ == stream.bank_nbytes_ - cache
