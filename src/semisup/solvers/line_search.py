"""Exact line search for piecewise-quadratic objectives (section 2.2 of the SVMlin paper).

Along the ray ``w + delta (w_bar - w)`` the objective

    phi(delta) = (1/2) w(delta)^T R w(delta) + (1/2) sum_i c_i max(0, 1 - y_i o_i(delta))^2

is strictly convex and piecewise quadratic; ``phi'`` is continuous and piecewise linear
with break points where an example enters or leaves the active set.  We collect the
break points ahead of 0 in one compiled pass (no per-term temporaries: DA has two terms per
unlabeled row), sort them and walk them to the root of ``phi'``.  Only the break points before
the first of a few probe steps (1, 1.125, 1.5, 2, 4) where ``phi' >= 0`` are collected.
"""

from __future__ import annotations

import numpy as np

from semisup._accel import njit, use_compiled_vectors

# phi' is evaluated at these steps in the first pass; break points beyond the first one
# where phi' >= 0 cannot matter.  Exact Newton steps give 1; the loose first pass of MFN and
# annealing steps a little more.
_PROBES = np.array([1.0, 1.125, 1.5, 2.0, 4.0])


@njit(cache=True, nogil=True)
def _break_points(o, ob, rows, y, c, reg_cross, reg_curv, probes, m):
    """Slope and intercept of ``phi'`` at 0 and the break points that matter, one pass each.

    ``rows[i]`` is the data row of term ``i`` (``rows`` empty: term ``i`` uses row ``i``).
    Returns ``(slope, intercept, bp, dslope, dint)``: at break point ``bp[k]`` the slope of
    ``phi'`` changes by ``dslope[k]`` and its intercept by ``dint[k]``.  Only break points up
    to the first of ``probes`` where ``phi' >= 0`` are returned (the root lies before it):
    near a Newton step that is the few terms whose activity differs between ``w`` and
    ``w_bar``, not every term ahead, whose sort cost more than the rest of the search.
    """
    n_terms = y.shape[0]
    mapped = rows.shape[0] > 0
    shifted = m.shape[0] > 0
    slope = reg_curv
    intercept = reg_cross
    deriv = reg_cross + reg_curv * probes  # phi' at the probes
    for i in range(n_terms):
        r = rows[i] if mapped else i
        d = ob[r] - o[r]
        if c[i] <= 0.0 or d == 0.0:
            continue
        mi = m[i] if shifted else 1.0
        t = y[i] * mi  # the term's target: y_i^2 = 1
        # whether a term is active is a coin toss per term (DA's two terms of a row): no
        # branch on it, whose mispredictions cost more than the arithmetic (2.5x here); an
        # inactive term adds an exact zero.  At the probes ``od - t`` is written as
        # ``-y (m - y od)``, the same number (``y = +-1``), so that ``max(., 0)`` selects
        ca = c[i] * np.float64(y[i] * o[r] < mi)
        slope += ca * d * d
        intercept += ca * (o[r] - t) * d
        for p in range(probes.shape[0]):
            od = o[r] + probes[p] * d
            deriv[p] += c[i] * (-y[i] * max(mi - y[i] * od, 0.0)) * d
    limit = np.inf
    for p in range(probes.shape[0]):
        if deriv[p] >= 0.0:
            limit = probes[p]
            break
    # room for every term instead of a counting pass (a division per term) ahead of the
    # filling one: uninitialised memory costs nothing until written, and views are returned.
    # Every term is written and the end advances only past the kept ones: no branch on
    # ``0 < b <= limit`` (a coin toss on the sign of ``b``)
    bp = np.empty(n_terms + 1)
    dslope = np.empty(n_terms + 1)
    dint = np.empty(n_terms + 1)
    k = 0
    for i in range(n_terms):
        r = rows[i] if mapped else i
        d = ob[r] - o[r]
        mi = m[i] if shifted else 1.0
        t = y[i] * mi
        b = (t - o[r]) / d if d != 0.0 else 0.0
        # an active term leaves the set at its break point, an inactive one enters
        sign = 1.0 - 2.0 * np.float64(y[i] * o[r] < mi)
        bp[k] = b
        dslope[k] = sign * c[i] * d * d
        dint[k] = sign * c[i] * (o[r] - t) * d
        k += np.int64((c[i] > 0.0) & (b > 0.0) & (b <= limit))
    return slope, intercept, bp[:k], dslope[:k], dint[:k]


@njit(cache=True, nogil=True)
def _walk(slope, intercept, bp, dslope, dint, order):
    """Root of the piecewise-linear, non-decreasing ``phi'`` (break points in ``order``)."""
    prev = 0.0
    for k in order:
        if intercept + slope * bp[k] >= 0.0:  # phi' crosses zero before this break point
            break
        prev = bp[k]
        slope += dslope[k]
        intercept += dint[k]
    if slope <= 0.0:
        return prev
    return -intercept / slope


def _break_points_numpy(o, ob, rows, y, c, reg_cross, reg_curv, probes, m):
    """:func:`_break_points` in numpy (small problems: no compilation)."""
    if rows.shape[0] > 0:
        o, ob = o[rows], ob[rows]
    d = ob - o
    keep = (c > 0.0) & (d != 0.0)
    m = np.ones(y.shape[0]) if m.shape[0] == 0 else m
    o, d, y, c, m = o[keep], d[keep], y[keep], c[keep], m[keep]
    t = y * m  # the terms' targets (y_i^2 = 1)
    act = y * o < m
    slope = reg_curv + float(np.sum(c[act] * d[act] * d[act]))
    intercept = reg_cross + float(np.sum(c[act] * (o[act] - t[act]) * d[act]))
    od = o + probes[:, None] * d
    deriv = reg_cross + reg_curv * probes + np.sum(
        np.where(y * od < m, c * (od - t) * d, 0.0), axis=1)
    nonneg = np.flatnonzero(deriv >= 0.0)
    limit = probes[nonneg[0]] if nonneg.size else np.inf
    b = (t - o) / d
    sel = (b > 0.0) & (b <= limit)
    sign = np.where(act[sel], -1.0, 1.0)
    return (slope, intercept, b[sel], sign * c[sel] * d[sel] ** 2,
            sign * c[sel] * (o[sel] - t[sel]) * d[sel])


def _walk_numpy(slope, intercept, bp, dslope, dint, order):
    """:func:`_walk` in numpy: slope and intercept after each break point by cumulative sums."""
    bp = bp[order]
    slopes = slope + np.concatenate(([0.0], np.cumsum(dslope[order])))
    intercepts = intercept + np.concatenate(([0.0], np.cumsum(dint[order])))
    crossed = np.flatnonzero(intercepts[:-1] + slopes[:-1] * bp >= 0.0)
    k = int(crossed[0]) if crossed.size else bp.size
    prev = bp[k - 1] if k > 0 else 0.0
    if slopes[k] <= 0.0:
        return prev
    return -intercepts[k] / slopes[k]


def exact_line_search(outputs: np.ndarray, outputs_bar: np.ndarray, y: np.ndarray,
                      cost: np.ndarray, reg_cross: float, reg_curv: float,
                      rows: np.ndarray | None = None,
                      margin: np.ndarray | None = None) -> float:
    """Minimiser ``delta >= 0`` of eq. 5 of the SVMlin paper.

    Parameters
    ----------
    outputs, outputs_bar : ndarray
        Outputs at ``w`` and ``w_bar``: of every loss term, or of every data row when
        ``rows`` maps the terms to rows (a data row may appear in several terms, as the
        duplicated unlabeled rows of deterministic annealing do).
    y : ndarray of shape (m,)
        Target sign ``+1/-1`` of each term.
    cost : ndarray of shape (m,)
        Non-negative cost ``c_i`` of each term.
    reg_cross, reg_curv : float
        ``w^T R (w_bar - w)`` and ``(w_bar - w)^T R (w_bar - w)``.
    rows : ndarray of int of shape (m,), optional
        Data row of each term (no per-term copy of the outputs is made).
    margin : ndarray of shape (m,), optional
        Margin ``m_i`` of each term, whose loss is ``max(0, m_i - y_i o_i)^2``; 1 when
        omitted (see :class:`semisup.losses.HingeTerms`).

    Returns
    -------
    float
        The exact minimiser of ``phi`` over ``delta >= 0``.
    """
    rows = np.empty(0, dtype=np.int64) if rows is None else rows
    margin = np.empty(0) if margin is None else np.asarray(margin, dtype=np.float64)
    compiled = use_compiled_vectors(len(y))
    slope, intercept, bp, dslope, dint = (_break_points if compiled else _break_points_numpy)(
        np.asarray(outputs, dtype=np.float64), np.asarray(outputs_bar, dtype=np.float64),
        rows, np.asarray(y, dtype=np.float64), np.asarray(cost, dtype=np.float64),
        float(reg_cross), float(reg_curv), _PROBES, margin)
    if intercept >= 0.0:  # phi is non-decreasing from delta = 0
        return 0.0
    walk = _walk if compiled else _walk_numpy
    return float(walk(slope, intercept, bp, dslope, dint, np.argsort(bp, kind="stable")))
