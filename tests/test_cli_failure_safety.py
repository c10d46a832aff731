"""``semisup-svmlin`` never leaves a half-written file and reports failures in one line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp

from semisup import io
from semisup.cli import svmlin


@pytest.fixture
def toy(tmp_path):
    rng = np.random.default_rng(0)
    n, d = 80, 6
    y_true = np.where(np.arange(n) < n // 2, 1.0, -1.0)
    X = rng.normal(size=(n, d))
    X[:, 0] += 3 * y_true
    labels = np.zeros(n)
    labels[[0, 1, 2, 40, 41, 42]] = y_true[[0, 1, 2, 40, 41, 42]]
    data = tmp_path / "data"
    data.mkdir()
    ex, lab = data / "ex", data / "lab"
    io.write_svmlin_examples(ex, sp.csr_matrix(X))
    io.write_svmlin_labels(lab, labels)
    out = tmp_path / "out"
    out.mkdir()
    return ex, lab, out, X, y_true


def _one_line_error(err: str) -> None:
    assert "Traceback" not in err
    lines = [ln for ln in err.strip().splitlines() if ln]
    assert len(lines) == 1 and lines[0].startswith("semisup-svmlin: "), err


class _FailingFile:
    """A writable file that writes part of what it gets, then raises ``exc``."""

    def __init__(self, path, exc):
        self.fh = open(path, "wb")
        self.exc = exc

    def write(self, data):
        self.fh.write(data[: len(data) // 2])
        self.fh.flush()
        raise self.exc

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.fh.close()


def _fail_on_write(monkeypatch, exc, nth: int = 1):
    """Make the ``nth`` file opened for writing fail part-way."""
    real = io._open_write
    count = {"n": 0}

    def opener(path, kind):
        count["n"] += 1
        if count["n"] == nth:
            return _FailingFile(path, exc)
        return real(path, kind)

    monkeypatch.setattr(io, "_open_write", opener)


@pytest.mark.parametrize("nth", [1, 2])  # the .weights file, or the .outputs file after it
@pytest.mark.parametrize("exc, status", [(OSError(28, "No space left on device"), 2),
                                         (KeyboardInterrupt(), 130)])
def test_failed_write_leaves_no_partial_output(toy, monkeypatch, capsys, exc, status, nth):
    ex, lab, out, _, _ = toy
    _fail_on_write(monkeypatch, exc, nth)
    rc = svmlin.main(["-A", "1", "-W", "0.01", "-o", str(out), str(ex), str(lab)])
    assert rc == status
    _one_line_error(capsys.readouterr().err)
    assert os.listdir(out) == []     # no .weights, no .outputs, no temporary file


def test_failed_write_keeps_the_previous_file(toy, monkeypatch):
    ex, lab, out, _, _ = toy
    old = out / "ex.weights"
    old.write_text("1\n2\n")
    _fail_on_write(monkeypatch, OSError(28, "No space left on device"))
    assert svmlin.main(["-A", "1", "-W", "0.01", "-o", str(out), str(ex), str(lab)]) == 2
    assert old.read_text() == "1\n2\n"
    assert sorted(os.listdir(out)) == ["ex.weights"]


def test_interrupt_mid_write_in_a_real_process(toy):
    """A real SIGINT delivered while the weights file is being written: exit 130, no
    traceback, and nothing (not even a temporary file) left in the output directory."""
    ex, lab, out, _, _ = toy
    script = textwrap.dedent(f"""
        import os, signal, sys
        # a shell's background job starts with SIGINT ignored; a terminal's Ctrl-C is not
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from semisup import io
        from semisup.cli import svmlin
        real = io._open_write
        class Killed:
            def __init__(self, path, kind):
                self.fh = real(path, kind)
            def write(self, data):
                self.fh.write(data[: len(data) // 2])
                self.fh.flush()
                os.kill(os.getpid(), signal.SIGINT)   # Ctrl-C, mid-file
                self.fh.write(data[len(data) // 2:])
            def __enter__(self):
                return self
            def __exit__(self, *a):
                self.fh.close()
        io._open_write = Killed
        sys.exit(svmlin.main(["-A", "2", "-W", "0.01", "-o", {str(out)!r}, {str(ex)!r},
                              {str(lab)!r}]))
    """)
    env = dict(os.environ)
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 130, proc.stderr
    _one_line_error(proc.stderr)
    assert os.listdir(out) == []


@pytest.mark.parametrize("kind", ["file", "under_file", "readonly"])
def test_output_location_is_checked_before_training(toy, monkeypatch, capsys, tmp_path, kind):
    ex, lab, out, _, _ = toy
    if kind in ("file", "under_file"):
        target = tmp_path / "not_a_dir"
        target.write_text("")
        if kind == "under_file":
            target = target / "sub"
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only directories")
        target = tmp_path / "ro"
        target.mkdir()
        target.chmod(0o500)

    def no_training(args):
        raise AssertionError("training started before the output location was checked")

    monkeypatch.setattr(svmlin, "_estimator", no_training)
    rc = svmlin.main(["-A", "1", "-o", str(target), str(ex), str(lab)])
    assert rc == 2
    _one_line_error(capsys.readouterr().err)


def test_weights_output_path_that_is_a_directory(toy, monkeypatch, capsys):
    ex, lab, out, _, _ = toy
    (out / "ex.weights").mkdir()
    monkeypatch.setattr(svmlin, "_estimator", lambda args: pytest.fail("trained"))
    assert svmlin.main(["-A", "1", "-o", str(out), str(ex), str(lab)]) == 2
    assert "is a directory" in capsys.readouterr().err


# ------------------------------------------------------------------------------ test mode

def _train(toy, *extra):
    ex, lab, out, _, _ = toy
    assert svmlin.main(["-A", "1", "-W", "0.01", *extra, "-o", str(out), str(ex),
                        str(lab)]) == 0
    return out / "ex.weights"


def test_truncated_weights_file_is_reported(toy, capsys, tmp_path):
    ex, lab, out, X, y_true = toy
    weights = _train(toy)
    w = io.read_vector(weights)
    short = tmp_path / "short.weights"
    io.write_vector(short, np.r_[w[:3], w[-1]])    # lost features 4..6
    test_lab = tmp_path / "test_lab"
    io.write_svmlin_labels(test_lab, y_true)
    capsys.readouterr()
    assert svmlin.main(["-f", str(short), "-o", str(out), str(ex), str(test_lab)]) == 0
    err = capsys.readouterr().err
    assert "6 features" in err and "weights for 3" in err and "truncated" in err
    # a complete weights file draws no warning
    assert svmlin.main(["-f", str(weights), "-o", str(out), str(ex), str(test_lab)]) == 0
    assert capsys.readouterr().err == ""


def test_test_labels_all_zero_are_refused(toy, capsys, tmp_path):
    ex, lab, out, X, _ = toy
    weights = _train(toy)
    zeros = tmp_path / "zeros"
    io.write_svmlin_labels(zeros, np.zeros(X.shape[0]))
    test_out = tmp_path / "test_out"
    capsys.readouterr()
    rc = svmlin.main(["-f", str(weights), "-o", str(test_out), str(ex), str(zeros)])
    assert rc == 2
    captured = capsys.readouterr()
    _one_line_error(captured.err)
    assert "nan" not in captured.out.lower() and "every test label is 0" in captured.err
    assert not test_out.exists() or os.listdir(test_out) == []


# ------------------------------------------------------------------------------ messages

@pytest.mark.parametrize("args, flag", [
    (["-W", "-1"], "-W"), (["-W", "nan"], "-W"), (["-U", "-2"], "-U"), (["-R", "1.5"], "-R"),
    (["-S", "0"], "-S"), (["-Cp", "0"], "-Cp"), (["--max-iter", "0"], "--max-iter"),
    (["--tol", "-1"], "--tol"),
])
def test_bad_flag_values_name_the_flag(toy, capsys, args, flag):
    ex, lab, out, _, _ = toy
    assert svmlin.main(["-A", "2", *args, "-o", str(out), str(ex), str(lab)]) == 2
    err = capsys.readouterr().err
    _one_line_error(err)
    assert f"error: {flag} " in err and not re.search(r"\blam\b", err)


def test_convergence_warning_names_the_cli_flags(toy, capsys):
    ex, lab, out, _, _ = toy
    assert svmlin.main(["-A", "1", "-W", "1e-6", "--max-iter", "1", "--tol", "1e-12",
                        "-o", str(out), str(ex), str(lab)]) == 0
    err = capsys.readouterr().err
    assert "--max-iter" in err and "Traceback" not in err


def test_max_iter_and_tol_reach_the_estimator(toy, monkeypatch):
    seen = {}
    real = svmlin._estimator

    def spy(args):
        est = real(args)
        seen.update(max_iter=est.max_iter, tol=est.tol)
        return est

    monkeypatch.setattr(svmlin, "_estimator", spy)
    _train(toy, "--max-iter", "7", "--tol", "1e-4")
    assert seen["max_iter"] == 7 and seen["tol"] == 1e-4


def test_all_labels_zero_at_training_is_refused(toy, capsys, tmp_path):
    ex, _, out, X, _ = toy
    zeros = tmp_path / "zeros"
    io.write_svmlin_labels(zeros, np.zeros(X.shape[0]))
    assert svmlin.main(["-A", "2", "-o", str(out), str(ex), str(zeros)]) == 2
    _one_line_error(capsys.readouterr().err)
    assert os.listdir(out) == []
