"""SimpleMKL: reduced-gradient descent on the simplex (Rakotomamonjy et al. 2008; the SD
method of Xu's thesis, eq. 4.3).

``J(p) = max_alpha f(p, alpha)`` is minimised over the simplex with the gradient
``dJ/dp_k = -q_k / 2``.  With ``mu = argmax p`` the reduced gradient is
``r_k = dJ/dp_k - dJ/dp_mu``; the descent direction is ``D_k = -r_k`` except ``D_k = 0``
where ``p_k = 0`` and ``r_k > 0``, and ``D_mu = -sum_{k != mu} D_k`` (so ``sum D = 0``).  Along
``D`` the weights move to the largest feasible step (one weight reaches zero and leaves the
direction) for as long as ``J`` decreases, then a golden-section search on the last segment
picks the step.  Every trial step costs an SVM solve, which is what makes the method slow.
"""

from __future__ import annotations

import logging

import numpy as np

from semisup.mkl._common import check_solver_args, new_trace, record
from semisup.mkl.problem import MKLProblem, MKLResult, SVMPoint

logger = logging.getLogger("semisup.mkl")

_GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0
_ZERO = 1e-12


def descent_direction(p: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """The reduced-gradient descent direction of SimpleMKL at ``p``."""
    mu = int(np.argmax(p))
    red = grad - grad[mu]
    D = -red
    D[(p <= _ZERO) & (red > 0)] = 0.0
    return _balance(D, mu)


def _balance(D: np.ndarray, mu: int) -> np.ndarray:
    """Drop round-off entries of ``D`` and set ``D_mu`` so that ``sum D = 0``."""
    D[mu] = 0.0
    D[np.abs(D) <= 1e-12 * max(float(np.abs(D).max()), np.finfo(float).tiny)] = 0.0
    D[mu] = -D.sum()
    return D


def _step(p: np.ndarray, D: np.ndarray, gamma: float) -> np.ndarray:
    out = p + gamma * D
    # round-off leaves weights of 1e-17 that would cap the next step at that size
    out[out < _ZERO] = 0.0
    return out / out.sum()


def simple_mkl(problem: MKLProblem, tol: float = 0.01, max_iter: int = 500,
               relative_gap: bool = True, p0: np.ndarray | None = None,
               record_weights: bool = False, line_search_tol: float = 0.1) -> MKLResult:
    """Minimise eq. 4.1 by SimpleMKL's reduced gradient descent.

    Parameters
    ----------
    problem : MKLProblem
        The problem of eq. 4.1: a kernel bank, ``+1/-1`` labels and ``C``.
    tol : float
        Stopping tolerance on the duality gap.
    max_iter : int
        Outer (gradient) iterations.
    relative_gap : bool
        Duality gap relative to the objective.
    p0 : ndarray of shape (m,), optional
        Starting weights (default uniform).
    record_weights : bool
        Keep every iteration's weights in ``trace['weights']``.
    line_search_tol : float
        The golden-section search stops when its bracket is below this fraction of the
        last segment.

    Returns
    -------
    MKLResult
        ``trace`` holds ``objective``, ``gap`` and ``n_svm`` per iteration.
    """
    p = check_solver_args(problem, tol, max_iter, p0)
    trace = new_trace(("n_svm",))
    point = problem.solve_svm(p)
    converged = False
    for it in range(1, max_iter + 1):
        gap = point.gap(relative_gap)
        record(trace, point, gap, record_weights, n_svm=problem.n_svm)
        logger.debug("simple it=%d J=%.6g gap=%.3g", it, point.objective, gap)
        if gap <= tol:
            converged = True
            break
        new = _descend(problem, point, line_search_tol)
        if new is None:         # no decrease along D at the SVM's precision
            break
        point = new
    return MKLResult(weights=point.p, alpha=point.alpha, bias=point.bias,
                     objective=point.objective, n_iter=it, n_svm=problem.n_svm,
                     converged=converged, trace=trace)


def _descend(problem: MKLProblem, point: SVMPoint, ls_tol: float) -> SVMPoint | None:
    """One SimpleMKL iteration from ``point``: the descent loop, then the line search.

    Along a segment ``p + gamma D`` the kernel is ``K(p) + gamma K(D)``: both are formed
    once per segment, so a trial step costs ``O(n^2)`` plus its SVM, and only the accepted
    point gets its cut (the gradient).
    """
    p = point.p
    D = descent_direction(p, -0.5 * point.q)
    if np.max(np.abs(D)) <= 1e-14:
        return None
    current = point
    Kp = problem.bank.combine(p)
    while True:
        if np.any((D < 0) & (p <= 0)):
            D = D.copy()
            D[(D < 0) & (p <= 0)] = 0.0
            D = _balance(D, int(np.argmax(p)))
        neg = D < 0
        if not neg.any():
            return None
        ratios = -p[neg] / D[neg]
        k = np.flatnonzero(neg)[int(np.argmin(ratios))]
        gamma_max = float(ratios.min())
        KD = problem.bank.combine(D)

        def trial(gamma, p=p, D=D, Kp=Kp, KD=KD):
            return problem.solve_svm(_step(p, D, gamma), K=Kp + gamma * KD, cut=False)

        p_end = _step(p, D, gamma_max)
        p_end[k] = 0.0
        p_end /= p_end.sum()
        K_end = Kp + gamma_max * KD
        end = problem.solve_svm(p_end, K=K_end, cut=False)
        if end.objective < current.objective:
            # keep going along D with p_k removed from it
            p, current, Kp = p_end, end, K_end
            D = D.copy()
            D[k] = 0.0
            D = _balance(D, int(np.argmax(p)))
            if np.max(np.abs(D)) <= 1e-14:
                break
            continue
        # golden-section search for the step on [0, gamma_max] along D from p
        lo, hi = 0.0, gamma_max
        best_gamma, best_point = 0.0, current
        a = hi - _GOLDEN * (hi - lo)
        b = lo + _GOLDEN * (hi - lo)
        fa, fb = trial(a), trial(b)
        while hi - lo > ls_tol * gamma_max:
            if fa.objective < fb.objective:
                hi, b, fb = b, a, fa
                a = hi - _GOLDEN * (hi - lo)
                fa = trial(a)
            else:
                lo, a, fa = a, b, fb
                b = lo + _GOLDEN * (hi - lo)
                fb = trial(b)
        for g, cand in ((a, fa), (b, fb)):
            if cand.objective < best_point.objective:
                best_gamma, best_point = g, cand
        if best_gamma == 0.0:
            # the minimiser lies below the golden-section resolution: backtrack towards 0
            g = min(a, b)
            for _ in range(40):
                g *= 0.5
                cand = trial(g)
                if cand.objective < current.objective:
                    return problem.add_cut(cand)
            return None if current is point else problem.add_cut(current)
        return problem.add_cut(best_point)
    return problem.add_cut(current)
