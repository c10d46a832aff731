"""Bookkeeping shared by the MKL solvers: argument checks, traces, the cutting-plane model."""

from __future__ import annotations

import numbers

import numpy as np

from semisup.mkl.problem import MKLProblem, SVMPoint
from semisup.solvers.lp import CuttingPlaneLP


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


class CuttingPlaneModel:
    """The cutting-plane model of ``J`` shared by the level method and SILP (eq. 4.5).

    Each SVM solve at ``p^j`` gives the cut ``f(p, alpha^j) = s_j - 1/2 q^j . p <= J(p)``;
    ``g(p) = max_j f(p, alpha^j)`` is a lower model of ``J``.  The model keeps

    * ``f_low = min_{p in P} g(p)`` (an LP, eq. 4.6, re-solved warm after each cut) and its
      minimiser ``p_lp`` (SILP's next weights),
    * ``f_up = min_j J(p^j)`` and the point that attains it (Theorem 1:
      ``f_low <= J* <= f_up``).

    Parameters
    ----------
    n_kernels : int
    """

    def __init__(self, n_kernels: int):
        self._lp = CuttingPlaneLP(n_kernels)
        self.f_low = -np.inf
        self.f_up = np.inf
        self.best: SVMPoint | None = None
        self.p_lp: np.ndarray | None = None

    def add(self, point: SVMPoint) -> None:
        """Add the cut of ``point``; update ``f_up``, ``f_low`` and ``p_lp``."""
        if point.objective < self.f_up:
            self.f_up, self.best = point.objective, point
        self._lp.add(point.s, 0.5 * point.q)
        self.p_lp, low = self._lp.solve()
        # the model only grows, so f_low cannot decrease; an inexact SVM can push f_up a
        # hair below it, and the bracket is then closed
        self.f_low = min(max(self.f_low, low), self.f_up)

    @property
    def delta(self) -> float:
        """``f_up - f_low``."""
        return self.f_up - self.f_low

    def level_set(self, level: float) -> tuple[np.ndarray, np.ndarray]:
        """``(G, h)`` with ``{p : g(p) <= level} = {p : G p <= h}``.

        ``s_j - q^j . p / 2 <= level``  <=>  ``(-q^j / 2) . p <= level - s_j``.
        """
        return -np.asarray(self._lp.A), level - np.asarray(self._lp.c)
