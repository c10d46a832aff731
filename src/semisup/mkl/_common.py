"""Bookkeeping shared by the MKL solvers: argument checks, traces, the stopping test."""

from __future__ import annotations

import numbers

import numpy as np

from semisup.mkl.problem import MKLProblem, SVMPoint


def check_solver_args(problem: MKLProblem, tol: float, max_iter: int,
                      p0: np.ndarray | None) -> np.ndarray:
    """Validate the common arguments; return the starting weights (``e/m`` by default)."""
    if not isinstance(problem, MKLProblem):
        raise ValueError(f"problem must be an MKLProblem, got {type(problem).__name__}")
    if not (isinstance(tol, numbers.Real) and tol > 0):
        raise ValueError(f"tol must be > 0, got {tol!r}")
    if not (isinstance(max_iter, numbers.Integral) and max_iter >= 1):
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    m = problem.n_kernels
    if p0 is None:
        return np.full(m, 1.0 / m)
    p0 = np.asarray(p0, dtype=np.float64)
    if p0.shape != (m,) or np.any(p0 < 0) or not np.isclose(p0.sum(), 1.0):
        raise ValueError(f"p0 must be {m} non-negative weights summing to 1")
    return p0


def new_trace(keys: tuple[str, ...]) -> dict:
    return {k: [] for k in ("objective", "gap", *keys)}


def record(trace: dict, point: SVMPoint, gap: float, record_weights: bool, **extra) -> None:
    trace["objective"].append(point.objective)
    trace["gap"].append(gap)
    for k, v in extra.items():
        trace[k].append(v)
    if record_weights:
        trace.setdefault("weights", []).append(point.p.copy())
