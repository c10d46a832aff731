"""Safeguarded Newton / bisection root finding for monotone scalar equations."""

from __future__ import annotations

import numpy as np


def safeguarded_newton(func, lo: float, hi: float, x0: float | None = None,
                       tol: float = 1e-10, max_iter: int = 200) -> float:
    """Root of a continuous non-decreasing function on ``[lo, hi]``.

    Newton steps are taken while they stay inside the current bracket and shrink the
    residual; otherwise the bracket is bisected, so convergence is guaranteed.

    Parameters
    ----------
    func : callable
        ``func(x) -> (value, derivative)``; ``value`` non-decreasing in ``x``,
        ``func(lo) <= 0 <= func(hi)``.
    lo, hi : float
        Bracket.
    x0 : float, optional
        Starting point (midpoint of the bracket when omitted or outside it).
    tol : float
        Stop when ``|value| <= tol``.
    max_iter : int
        Iteration limit.

    Returns
    -------
    float
    """
    x = 0.5 * (lo + hi) if x0 is None or not lo <= x0 <= hi else float(x0)
    for _ in range(max_iter):
        v, dv = func(x)
        if abs(v) <= tol:
            return x
        if v < 0:
            lo = x
        else:
            hi = x
        x_new = x - v / dv if dv > 0 else np.nan
        if not lo < x_new < hi:
            x_new = 0.5 * (lo + hi)
        if x_new == x or hi - lo <= 4 * np.finfo(float).eps * max(1.0, abs(x)):
            return x_new
        x = x_new
    return x
