"""Exact line search for piecewise-quadratic objectives (section 2.2 of the SVMlin paper).

Along the ray ``w + delta (w_bar - w)`` the objective

    phi(delta) = (1/2) w(delta)^T R w(delta) + (1/2) sum_i c_i max(0, 1 - y_i o_i(delta))^2

is strictly convex and piecewise quadratic; ``phi'`` is continuous and piecewise linear
with break points where an example enters or leaves the active set.  We sort the
break points and walk them (vectorised with cumulative sums) to the root of ``phi'``.
"""

from __future__ import annotations

import numpy as np


def exact_line_search(outputs: np.ndarray, outputs_bar: np.ndarray, y: np.ndarray,
                      cost: np.ndarray, reg_cross: float, reg_curv: float) -> float:
    """Minimiser ``delta >= 0`` of eq. 5 of the SVMlin paper.

    Parameters
    ----------
    outputs, outputs_bar : ndarray of shape (m,)
        Outputs ``o_i`` at ``w`` and ``w_bar`` of every loss term (a data row may
        appear in several terms, as the duplicated unlabeled rows of deterministic
        annealing do).
    y : ndarray of shape (m,)
        Target sign ``+1/-1`` of each term.
    cost : ndarray of shape (m,)
        Non-negative cost ``c_i`` of each term.
    reg_cross, reg_curv : float
        ``w^T R (w_bar - w)`` and ``(w_bar - w)^T R (w_bar - w)``.

    Returns
    -------
    float
        The exact minimiser of ``phi`` over ``delta >= 0``.
    """
    d = outputs_bar - outputs
    moving = (d != 0.0) & (cost > 0.0)
    o, d, yy, c = outputs[moving], d[moving], y[moving], cost[moving]
    active = yy * o < 1.0
    slope = reg_curv + float(np.sum(c[active] * d[active] ** 2))
    intercept = reg_cross + float(np.sum(c[active] * (o[active] - yy[active]) * d[active]))
    if intercept >= 0.0:  # phi is non-decreasing from delta = 0
        return 0.0
    # break points strictly ahead: terms leaving (active) or entering (inactive) the set
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = (yy - o) / d
    ahead = bp > 0.0
    bp, o, d, yy, c, active = bp[ahead], o[ahead], d[ahead], yy[ahead], c[ahead], active[ahead]
    order = np.argsort(bp, kind="stable")
    bp = bp[order]
    sign = np.where(active[order], -1.0, 1.0)  # leaving removes the term, entering adds it
    dslope = sign * (c * d * d)[order]
    dint = sign * (c * (o - yy) * d)[order]
    # slope/intercept on the segment that ends at break point k
    seg_slope = slope + np.concatenate(([0.0], np.cumsum(dslope)))
    seg_int = intercept + np.concatenate(([0.0], np.cumsum(dint)))
    deriv_at_bp = seg_int[:-1] + seg_slope[:-1] * bp
    nonneg = deriv_at_bp >= 0.0  # monotone: phi' is non-decreasing
    k = int(np.argmax(nonneg)) if nonneg.any() else bp.shape[0]
    s, i0 = seg_slope[k], seg_int[k]
    if s <= 0.0:
        return float(bp[k - 1]) if k > 0 else 0.0
    return float(-i0 / s)
