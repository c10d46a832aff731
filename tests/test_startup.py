"""Start-up: lazy top-level imports, the numba-free path for small problems, the CLI's model."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

import semisup
from semisup import _accel, io
from semisup.cli._model import SVMlinModel
from semisup.losses import HingeTerms
from semisup.regularizers import Ridge
from semisup.solvers.cgls import cgls
from semisup.solvers.design import Design
from semisup.solvers.line_search import exact_line_search
from semisup.solvers.mfn import l2svm_mfn

HEAVY = ("sklearn", "numba", "scipy.special", "scipy.linalg", "scipy.stats", "pandas",
         "pynndescent", "semisup.manifold", "semisup.prototypes", "semisup.graph")


def _loaded_after(code: str) -> set[str]:
    """Top-level packages (and semisup subpackages) imported by ``code`` in a fresh process."""
    probe = textwrap.dedent(code) + textwrap.dedent("""
        import sys
        print(" ".join(sorted(sys.modules)))
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, env=_env()).stdout.split()
    return {m for m in out if m in HEAVY or m.split(".")[0] in HEAVY}


def _env():
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.pop("SEMISUP_COMPILE_MIN_SIZE", None)
    return env


def test_import_semisup_loads_nothing_heavy():
    assert _loaded_after("import semisup") == set()


def test_exports_resolve_lazily_and_completely():
    assert set(semisup.__all__) == set(semisup._EXPORTS)
    for name in semisup.__all__:
        obj = getattr(semisup, name)
        assert obj.__name__ == name
        assert name in dir(semisup)
    with pytest.raises(AttributeError, match="no attribute 'NoSuchModel'"):
        semisup.NoSuchModel  # noqa: B018
    ns = {}
    exec("from semisup import TransductiveSVM", ns)
    assert ns["TransductiveSVM"] is semisup.TransductiveSVM


def test_linear_family_does_not_load_other_stacks():
    loaded = _loaded_after("from semisup import TransductiveSVM, DeterministicAnnealingSVM")
    assert not loaded & {"numba", "pynndescent", "semisup.manifold", "semisup.prototypes",
                         "semisup.graph"}


def test_svmlin_cli_on_a_small_problem_loads_nothing_heavy(tmp_path):
    rng = np.random.default_rng(0)
    X = sp.random(80, 30, density=0.2, format="csr", random_state=0)
    y = np.where(rng.random(80) < 0.5, 1, -1)
    y[10:] = 0
    y[:2] = [1, -1]
    io.write_svmlin_examples(tmp_path / "ex", X)
    io.write_svmlin_labels(tmp_path / "lab", y)
    loaded = _loaded_after(f"""
        from semisup.cli.svmlin import main
        assert main(["-A", "2", "-W", "0.001", "-U", "1", "-R", "0.5", "-o", {str(tmp_path)!r},
                     {str(tmp_path / "ex")!r}, {str(tmp_path / "lab")!r}]) == 0
    """)
    assert loaded == set()
    assert (tmp_path / "ex.weights").exists()


def test_pickle_through_lazy_export():
    X = np.r_[np.random.default_rng(0).normal(size=(20, 2)) + 2,
              np.random.default_rng(1).normal(size=(20, 2)) - 2]
    y = np.full(40, -1)
    y[[0, 1, 20, 21]] = [1, 1, 0, 0]
    est = semisup.TransductiveSVM().fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))


def _problem(seed=0, n=300, d=40):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.15, format="csr", random_state=seed)
    w = rng.normal(size=d)
    y = np.sign(X @ w + 0.1 * rng.normal(size=n))
    y[y == 0] = 1
    return X, y


@pytest.mark.parametrize("algorithm", [0, 1, 2, 3])
def test_cli_model_matches_estimators(algorithm):
    """The CLI's scikit-learn-free model fits exactly what the estimators fit."""
    from semisup import L2SVM, DeterministicAnnealingSVM, RLSClassifier, TransductiveSVM

    X, y = _problem()
    y_est = (y > 0).astype(int)
    y_est[60:] = -1
    kw = dict(lam=0.01, lam_u=1.0, positive_fraction=0.5)
    # SVMlin's algorithms as published: the estimators without the guard of fallback="cv"
    est = [RLSClassifier(lam=0.01, penalize_intercept=True),
           L2SVM(lam=0.01, solver="mfn", penalize_intercept=True),
           TransductiveSVM(max_switches=10000, fallback="none", **kw),
           DeterministicAnnealingSVM(fallback="none", **kw)][algorithm]
    est.fit(X, y_est)
    model = SVMlinModel(algorithm, max_switches=10000, **kw).fit(X, y_est)
    np.testing.assert_allclose(model.coef_, est.coef_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.intercept_, est.intercept_, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(model.decision_function(X), est.decision_function(X),
                               rtol=1e-9, atol=1e-12)


def test_cli_model_rejects_one_class():
    X, y = _problem()
    with pytest.raises(ValueError, match="1 class"):
        SVMlinModel(2).fit(X, np.where(np.arange(X.shape[0]) < 5, 1, -1))


def _pieces(X, y):
    A = Design(X).restrict(np.arange(0, X.shape[0], 2))
    m = A.n_rows
    rng = np.random.default_rng(3)
    c = rng.random(m)
    p = rng.normal(size=A.n_weights)
    q = rng.normal(size=m)
    rows = np.concatenate([np.arange(m), np.arange(m)])
    terms = HingeTerms(np.r_[y[::2], -y[::2]], np.r_[c, c[::-1]], rows=rows, n_rows=m)
    o = A.matvec(p)
    active = terms.active(o)
    ob = A.matvec(p + rng.normal(size=A.n_weights))
    shifted = HingeTerms(terms.y, terms.cost, rows=rows, n_rows=m,
                         margin=rng.uniform(-0.5, 1.5, size=2 * m))
    return dict(
        matvec=o, rmatvec=A.rmatvec(q), colsq=A.weighted_column_sq(c),
        rowsq=A.row_sq_norms(), value=terms.value(o), active=active,
        system=np.concatenate(terms.newton_system(active)),
        step=exact_line_search(o, ob, terms.y, terms.cost, 0.3, 2.0, rows=rows),
        cgls=cgls(A, c, y[::2], Ridge(0.1), tol=1e-12).x,
        mfn=l2svm_mfn(A, HingeTerms(y[::2], c), Ridge(0.1), tol=1e-12).w,
        # per-term margins (the Universum SVM's epsilon-insensitive halves)
        value_margin=shifted.value(o), active_margin=shifted.active(o),
        system_margin=np.concatenate(shifted.newton_system(shifted.active(o))),
        step_margin=exact_line_search(o, ob, shifted.y, shifted.cost, 0.3, 2.0, rows=rows,
                                      margin=shifted.margin))


def test_numpy_twins_agree_with_compiled_kernels(monkeypatch):
    """Below ``COMPILE_MIN_SIZE`` numpy/scipy run every product, loss and search: same values."""
    X, y = _problem(1)
    monkeypatch.setattr(_accel, "COMPILE_MIN_SIZE", 10**12)
    small = _pieces(X, y)
    monkeypatch.setattr(_accel, "COMPILE_MIN_SIZE", 0)
    big = _pieces(X, y)
    for key in small:
        np.testing.assert_allclose(small[key], big[key], rtol=1e-9, atol=1e-11, err_msg=key)


@pytest.mark.parametrize("text", [
    "1:1 3:2.5\n2:-1e-3\n\n4:7\n",
    "1:1 2:1:3\n",          # two colons in a token
    "1:1 :3\n", "1:1 3:\n",  # a colon at a token's edge
    "3:1 2:1\n", "2:1 2:1\n",  # indices not increasing
    "0:1\n", "1.5:2\n", "1e0:2\n", "+1:2 3:+.5\n", "1:1 99999999999:1\n",
])
def test_fast_parser_matches_or_defers(text, tmp_path):
    """The vectorised fast path returns what the line-by-line parser returns, or defers."""
    path = tmp_path / "ex"
    path.write_text(text)
    body = text.rstrip("\n").encode()
    parsed = io._parse_fast(body, labelled=False)
    try:
        expected, _ = io._parse_slow("ex", body, labelled=False, n_features=None)
    except io.FileFormatError:
        assert parsed is None
        return
    if parsed is not None:
        got = io._fast_result(parsed, None, None)[0]
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got.toarray(), expected.toarray())


@pytest.mark.parametrize("preset", [None, "active"])
def test_numba_threads_sleep_when_idle_unless_the_user_chose(preset):
    # Spinning OpenMP threads make the parallel products slower than the serial ones on a
    # busy machine: the library asks for a passive policy before numba starts its runtime.
    env = _env()
    env.pop("OMP_WAIT_POLICY", None)
    if preset is not None:
        env["OMP_WAIT_POLICY"] = preset
    probe = textwrap.dedent("""
        import os
        import numpy as np, scipy.sparse as sp
        from semisup.solvers._kernels import n_threads
        from semisup.solvers.design import Design
        before = os.environ.get("OMP_WAIT_POLICY")
        Design(sp.random(50, 8, density=0.5, format="csr", random_state=0), parallel=True
               ).matvec(np.ones(9))
        print(before, os.environ.get("OMP_WAIT_POLICY"), n_threads() >= 1)
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, env=env).stdout.split()
    expected = preset if preset is not None else "PASSIVE"
    assert out == [str(preset), expected, "True"]
