"""The harness of ``benchmarks/bench_defaults.py`` on tiny slices, so that it cannot rot.

The benchmark itself (every classifier on every set) is run by hand; here: the child
process is killed at the timeout, errors and collapses are recorded, the records resume and
re-render, and one small real set runs end to end with two classifiers.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_defaults.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_defaults", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["bench_defaults"] = mod
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop("bench_defaults", None)


class Sleeper(ClassifierMixin, BaseEstimator):
    """Hangs in fit (a solver that never returns)."""

    def fit(self, X, y):
        time.sleep(60)
        return self


class Spinner(ClassifierMixin, BaseEstimator):
    """Burns CPU in fit (a solver that iterates for ever)."""

    def fit(self, X, y):
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < 60:
            sum(range(10_000))
        return self


class Broken(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        raise ValueError("bad input: refused\nsecond line of the message")


class Constant(ClassifierMixin, BaseEstimator):
    """Puts every row in the first labeled class (a collapse, without a warning)."""

    def fit(self, X, y):
        y = np.asarray(y)
        self.classes_ = np.unique(y[y != -1])
        self.transduction_ = np.full(y.shape[0], self.classes_[0])
        return self

    def predict(self, X):
        return np.full(X.shape[0], self.classes_[0])


def _blobs(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.r_[np.zeros(n // 2, int), np.ones(n - n // 2, int)]
    X = rng.normal(size=(n, 3)) + 3.0 * y[:, None]
    return X, y


def test_stratified_draw_keeps_every_class(bench):
    y = np.r_[np.zeros(95, int), np.ones(5, int), np.full(50, 2)]
    for seed in range(5):
        lab = bench.stratified_draw(y, 10, seed)
        assert lab.size == 10 and np.unique(lab).size == 10
        counts = np.bincount(y[lab], minlength=3)
        assert counts.min() >= 1 and counts[0] > counts[2] > 0
    assert np.array_equal(bench.stratified_draw(y, 10, 3), bench.stratified_draw(y, 10, 3))


def test_per_class_splits_draw_k_rows_of_every_class(bench):
    y = np.repeat([0, 1, 2], [30, 5, 12])
    data = bench.DataSet("toy", "extra", np.zeros((y.size, 2)), y)
    for split, lab, unl in data.splits("2/class", 3):
        assert np.bincount(y[lab]).tolist() == [2, 2, 2]
        assert np.array_equal(np.sort(np.r_[lab, unl]), np.arange(y.size))
        assert np.array_equal(lab, bench.per_class_draw(y, 2, seed=split))
    firsts = [lab.tolist() for _, lab, _ in data.splits("2/class", 2)]
    assert firsts[0] != firsts[1]   # one draw per split


def test_splits_from_a_first_split_are_those_splits(bench):
    """``--first-split 6 --splits 2``: splits 6 and 7, as ``official_split`` draws them."""
    y = np.repeat([0, 1], [40, 20])
    data = bench.DataSet("toy", "uci", np.zeros((y.size, 2)), y)
    got = data.splits(10, 2, first=6)
    assert [s for s, _, _ in got] == [6, 7]
    for s, lab, unl in got:
        ref_lab, ref_unl, _ = data.official_split(10, s)
        assert np.array_equal(lab, ref_lab) and np.array_equal(unl, ref_unl)
    assert not np.array_equal(got[0][1], data.splits(10, 1)[0][1])


def test_counterpart_mapping(bench):
    assert bench.counterpart("TransductiveSVM") == "LogisticRegression"
    assert bench.counterpart("LapSVM") == "SVC"
    assert bench.counterpart("SemiSupervisedNB", counts=True) == "MultinomialNB"
    assert bench.counterpart("SemiSupervisedNB", counts=False) == "LogisticRegression"
    # by the default kernel: linear Universum SVM, RBF S4VM
    assert bench.counterpart("UniversumSVM") == "LogisticRegression"
    assert bench.counterpart("S4VM") == "SVC"


def test_discovery_finds_exported_classifiers(bench):
    found = bench.discover_classifiers()
    assert {"L2SVM", "LapRLS", "TransductiveSVM"} <= set(found)
    # transformers and estimators that need arguments are left out
    assert "LaplacianEigenmaps" not in found and "ActiveSearchPipeline" not in found


def test_timeout_error_and_collapse_are_recorded(bench, monkeypatch):
    # pure-Python fits: safe to fork even after numba kernels ran in this process
    monkeypatch.setattr(bench, "START_METHOD", "fork")
    monkeypatch.setitem(bench.EXTRA_FACTORIES, "Sleeper", Sleeper)
    monkeypatch.setitem(bench.EXTRA_FACTORIES, "Spinner", Spinner)
    monkeypatch.setitem(bench.EXTRA_FACTORIES, "Broken", Broken)
    monkeypatch.setitem(bench.EXTRA_FACTORIES, "Constant", Constant)
    X, y = _blobs()
    tasks = [(s, np.array([0, 1, 2, 30, 31, 32]) + s, None) for s in (1, 2)]
    tasks = [(s, lab, np.setdiff1d(np.arange(60), lab)) for s, lab, _ in tasks]

    # CPU-bound: killed once both its wall and its CPU time pass the timeout
    t0 = time.perf_counter()
    out = list(bench.run_classifier("Spinner", X, y, tasks, timeout=0.5, memory_gb=0,
                                    kill_after=50))
    assert time.perf_counter() - t0 < 30  # killed, not waited for
    assert out[0][1]["timeout"] and out[0][1]["acc"] is None
    assert out[0][1]["killed"] == "over 0.5 s" and out[0][1]["cpu"] > 0.5
    assert out[1][1]["skipped"] and "timed out" in out[1][1]["error"]
    # idle (waiting, no CPU): killed by the wall-time cap
    out = list(bench.run_classifier("Sleeper", X, y, tasks[:1], timeout=0.5, memory_gb=0,
                                    kill_after=1.0))
    assert out[0][1]["timeout"] and out[0][1]["killed"].startswith("wall time")

    out = list(bench.run_classifier("Broken", X, y, tasks, timeout=30, memory_gb=0))
    assert [r["error"] for _, r in out] == ["ValueError: bad input: refused"] * 2

    out = list(bench.run_classifier("Constant", X, y, tasks, timeout=30, memory_gb=0))
    for _, rec in out:
        assert rec["collapse"] and not rec["warned"] and rec["error"] is None
        assert rec["acc"] == pytest.approx(0.5, abs=0.06)


def test_end_to_end_on_heart(bench, tmp_path, data_dir, monkeypatch):
    if not (data_dir / "uci_small" / "heart_scale.bz2").is_file():
        pytest.skip("uci_small/heart_scale.bz2 not in the shared data directory")
    # the start method used when this process has run numba kernels (fork is the other
    # test's); children then import the library themselves
    monkeypatch.setattr(bench, "START_METHOD", "forkserver")
    argv = ["--sets", "heart", "--labels", "10", "--splits", "1", "--classifiers", "L2SVM",
            "LapRLS", "--results-dir", str(tmp_path), "--name", "t"]
    text = bench.main(argv)
    recs = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    names = {r["classifier"] for r in recs}
    assert names == {"LogisticRegression", "SVC", "L2SVM", "LapRLS"}
    for r in recs:
        assert r["finished"] and 0.5 <= r["acc"] <= 1.0 and r["n"] == 270
    by = {r["classifier"]: r for r in recs}
    assert by["L2SVM"]["counterpart"] == "LogisticRegression"
    assert by["LapRLS"]["counterpart"] == "SVC"
    # the reference for the supervised counterpart: scikit-learn on the same labeled rows
    from sklearn.linear_model import LogisticRegression

    d = bench.load_set("heart")
    (_, lab, unl), = d.splits(10, 1)
    ref = LogisticRegression().fit(d.X[lab], d.y[lab]).predict(d.X[unl])
    assert by["LogisticRegression"]["acc"] == pytest.approx(np.mean(ref == d.y[unl]))
    for section in ("## 1. Per classifier", "## 2.", "## 3. Per cell",
                    "## 4. Which method for my data"):
        assert section in text
    # a second run refuses to overwrite; --resume fits nothing new; --render re-renders
    with pytest.raises(SystemExit, match="--resume"):
        bench.main(argv)
    bench.main([*argv, "--resume"])
    assert len((tmp_path / "t.jsonl").read_text().splitlines()) == len(recs)
    rendered = bench.main([*argv, "--render"])
    assert rendered.split("## 1.")[1] == text.split("## 1.")[1]
