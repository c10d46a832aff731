"""USSL's SDP route: the solver's own options (``ussl_sdp(options=)``, ``sdp_options``)."""

import warnings

import numpy as np
import pytest

cp = pytest.importorskip("cvxpy")

from semisup.weak import MixtureSSL  # noqa: E402
from semisup.weak.mixture import ussl_sdp  # noqa: E402


def _tiny(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal([1.0, 0.0], 0.4, (5, 2)), rng.normal([-1.0, 0.0], 0.4, (5, 2)),
              rng.normal(0.0, 0.1, (3, 2))]
    order = np.r_[0, 1, 5, 6, 2, 3, 4, 7, 8, 9, 10, 11, 12]   # 4 labeled rows first
    Z = np.hstack([X[order], np.ones((13, 1))])
    return Z, np.array([1.0, 1.0, -1.0, -1.0])


def test_fixed_scale_reaches_the_interior_point_value():
    # the tables' SCS setting (fixed scale 1, benchmarks/bench_weak_sdp.py) solves the same
    # SDP as Clarabel, the independent interior-point reference
    Z, y_l = _tiny()
    args = (Z @ Z.T, y_l, 1.0, 1.0, 0.2, 3.0)
    ref = ussl_sdp(*args, solver="CLARABEL")
    scs = ussl_sdp(*args, tol=1e-7, options={"adaptive_scale": False, "scale": 1.0})
    assert ref.status == scs.status == "optimal"
    assert scs.value == pytest.approx(ref.value, rel=1e-4, abs=1e-6)


def test_options_override_the_iteration_cap():
    Z, y_l = _tiny()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        capped = ussl_sdp(Z @ Z.T, y_l, 1.0, 1.0, 0.2, 3.0, tol=1e-9, max_iter=100_000,
                          options={"max_iters": 5})
    assert capped.n_iter <= 5
    assert capped.status == "optimal_inaccurate"


def test_mixture_sdp_options_validated_and_used():
    Z, y_l = _tiny()
    X = Z[:, :2]
    y = np.r_[(y_l > 0).astype(int), -np.ones(9, dtype=int)]
    with pytest.raises(ValueError, match="sdp_options"):
        MixtureSSL(fallback="none", method="sdp", sdp_options="scale=1").fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = MixtureSSL(fallback="none", method="sdp", sdp_options={"max_iters": 5}).fit(X, y)
    assert m.fit_result_.n_iter <= 5
