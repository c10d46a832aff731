"""Deterministic annealing semi-supervised SVM (section 3.2 of the SVMlin paper)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, logit, rel_entr, xlogy

from semisup._logging import get_logger, progress, report_unconverged
from semisup._validation import check_positive
from semisup.linear._s3vm import SemiSupervisedLinearSVM
from semisup.losses import (
    HingeTerms,
    split_sample_weight,
    squared_hinge,
    transductive_objective,
)
from semisup.regularizers import Ridge
from semisup.solvers.mfn import l2svm_mfn
from semisup.solvers.roots import safeguarded_newton

logger = get_logger(__name__)


def optimal_beliefs(g: np.ndarray, temperature: float, positive_fraction: float,
                    tol: float = 1e-10) -> tuple[np.ndarray, float]:
    """The p-step: minimise eq. 6 over ``p`` subject to the balance constraint (eq. 7).

    ``p_j = 1 / (1 + exp((g_j - 2 nu) / T))`` (eq. 9) with ``2 nu`` the root of
    ``mean_j p_j = r``, found by safeguarded Newton / bisection.

    Parameters
    ----------
    g : ndarray
        ``g_j = lam_u [l_2(o_j) - l_2(-o_j)]``.
    temperature : float
        ``T > 0``.
    positive_fraction : float
        ``r`` in (0, 1).
    tol : float
        Tolerance on ``|mean p - r|``.

    Returns
    -------
    p : ndarray
    two_nu : float
    """
    T, r = float(temperature), float(positive_fraction)

    def balance(s):
        p = expit((s - g) / T)
        return float(p.mean()) - r, float(np.mean(p * (1.0 - p))) / T

    shift = T * float(logit(r))
    lo, hi = float(g.min()) + shift, float(g.max()) + shift
    s = safeguarded_newton(balance, lo, hi, x0=float(np.quantile(g, r)), tol=tol)
    return expit((s - g) / T), s


def binary_entropy(p: np.ndarray) -> float:
    """``H(p) = -sum_j [p_j log p_j + (1 - p_j) log(1 - p_j)]``."""
    return -float(np.sum(xlogy(p, p) + xlogy(1.0 - p, 1.0 - p)))


def binary_kl(p: np.ndarray, q: np.ndarray) -> float:
    """``KL(p, q) = sum_j p_j log(p_j/q_j) + (1-p_j) log((1-p_j)/(1-q_j))`` (section 3.2.3)."""
    return float(np.sum(rel_entr(p, q) + rel_entr(1.0 - p, 1.0 - q)))


def annealing_objective(reg_value: float, outputs_l, y_l, outputs_u, p, lam_u: float,
                        temperature: float, weights=None) -> float:
    """The DA objective of eq. 6 at temperature ``T`` (weighted means with ``weights``)."""
    u = outputs_u.shape[0]
    c_l, v_u = (np.full(y_l.shape[0], 1.0 / y_l.shape[0]), np.full(u, 1.0 / u)) \
        if weights is None else weights
    obj = reg_value + 0.5 * float(c_l @ squared_hinge(y_l * outputs_l))
    obj += 0.5 * lam_u * float((v_u * p) @ squared_hinge(outputs_u)
                               + (v_u * (1.0 - p)) @ squared_hinge(-outputs_u))
    return obj - 0.5 * temperature / u * binary_entropy(p)


@dataclass
class DAResult:
    """Outcome of :func:`deterministic_annealing`.

    Attributes
    ----------
    w : ndarray
        Weights of the lowest transductive objective seen on the annealing path.
    beliefs : ndarray
        ``p_j`` at the returned solution.
    objective : float
        Its transductive objective (section 3.2.3).
    n_iter : int
        Alternating (p, w) iterations in total.
    n_cg_iter : int
        CGLS iterations in total.
    history : list of dict
        Per inner iteration: temperature, DA objective (eq. 6) after the p-step and
        after the w-step, KL divergence, entropy, transductive objective.
    """

    w: np.ndarray
    beliefs: np.ndarray
    objective: float
    n_iter: int
    n_cg_iter: int
    history: list = field(default_factory=list)


def deterministic_annealing(A, n_labeled: int, y_l: np.ndarray, lam: float, lam_u: float,
                            positive_fraction: float, temperature_init: float | None = None,
                            temperature_decay: float = 1.5, max_outer_iter: int = 30,
                            max_inner_iter: int = 100, kl_tol: float = 1e-6,
                            entropy_tol: float = 1e-6, mfn_options: dict | None = None,
                            reg=None, verbose: int = 0,
                            sample_weight: np.ndarray | None = None) -> DAResult:
    """DA for semi-supervised L2-SVMs: track the minimiser of eq. 6 as ``T`` decreases.

    For each temperature, alternate the p-step (:func:`optimal_beliefs`) and the w-step
    (L2-SVM-MFN on the labeled rows plus every unlabeled row twice, with labels +1 and -1
    and costs ``lam_u p_j / u`` and ``lam_u (1 - p_j) / u`` — the duplicated rows share
    one data row, so no data is copied) until ``KL(p, q) < u kl_tol``; then divide ``T`` by
    ``temperature_decay`` until the entropy falls below ``u entropy_tol``.

    Parameters
    ----------
    A : Design
        Labeled rows first, then unlabeled rows.
    n_labeled : int
    y_l : ndarray
        ``+1/-1`` labels of the labeled rows.
    lam, lam_u : float
    positive_fraction : float
        ``r`` in the balance constraint (eq. 7).
    temperature_init : float, optional
        Starting ``T``; ``10 * lam_u`` when omitted.
    temperature_decay : float
    max_outer_iter, max_inner_iter : int
    kl_tol, entropy_tol : float
    mfn_options : dict
    reg : regulariser, optional
        ``Ridge(lam)`` by default; a :class:`semisup.regularizers.GraphRidge` adds a graph
        term (manifold regularization on top of the S3VM loss).
    verbose : int
        A progress bar over the temperatures; one DEBUG line per temperature.
    sample_weight : ndarray, optional
        Row weights (labeled rows first): weighted means in eq. 6 (the p-step's ``g_j``
        scales with ``u v_j``), see :func:`semisup.losses.split_sample_weight`.
    """
    opts = dict(mfn_options or {})
    l = n_labeled
    u = A.n_rows - l
    reg = Ridge(lam) if reg is None else reg
    weights = split_sample_weight(sample_weight, l, u)
    c_l, v_u = (np.full(l, 1.0 / l), np.full(u, 1.0 / max(u, 1))) if weights is None \
        else weights
    sup = l2svm_mfn(A.restrict(np.arange(l)), HingeTerms(y_l, c_l), reg, **opts)
    w = sup.w
    o = A.matvec(w)
    r = float(positive_fraction)
    if u == 0 or lam_u == 0.0:
        return DAResult(w=w, beliefs=np.full(u, r), objective=sup.objective, n_iter=sup.n_iter,
                        n_cg_iter=sup.n_cg_iter)
    unl = np.arange(l, l + u)
    rows = np.concatenate([np.arange(l), unl, unl])
    y = np.concatenate([y_l, np.ones(u), -np.ones(u)])
    cost = np.empty(l + 2 * u)
    cost[:l] = c_l
    T = 10.0 * lam_u if temperature_init is None else float(temperature_init)
    p = np.full(u, r)
    best_obj = transductive_objective(reg.value(w), o[:l], y_l, o[l:], lam_u, weights)
    best_w, best_p = w.copy(), p.copy()
    history = []
    n_iter, n_cg = 0, sup.n_cg_iter
    bar = progress(max_outer_iter, "DA temperatures", verbose, "T")
    for _outer in range(max_outer_iter):
        for _inner in range(max_inner_iter):
            q = p
            g = lam_u * (squared_hinge(o[l:]) - squared_hinge(-o[l:]))
            if weights is not None:
                g *= u * v_u
            p, _ = optimal_beliefs(g, T, r)
            obj_p = annealing_objective(reg.value(w), o[:l], y_l, o[l:], p, lam_u, T, weights)
            cost[l:l + u] = lam_u * p * v_u
            cost[l + u:] = lam_u * (1.0 - p) * v_u
            res = l2svm_mfn(A, HingeTerms(y, cost, rows=rows, n_rows=l + u), reg,
                            w0=w, outputs0=o, **opts)
            w, o = res.w, res.outputs
            n_iter += 1
            n_cg += res.n_cg_iter
            kl = binary_kl(p, q)
            tobj = transductive_objective(reg.value(w), o[:l], y_l, o[l:], lam_u, weights)
            history.append({
                "temperature": T, "objective_p_step": obj_p,
                "objective_w_step": annealing_objective(reg.value(w), o[:l], y_l, o[l:], p,
                                                        lam_u, T, weights),
                "kl": kl, "entropy": binary_entropy(p), "transductive_objective": tobj})
            if tobj < best_obj:
                best_obj, best_w, best_p = tobj, w.copy(), p.copy()
            if kl < u * kl_tol:
                break
        else:
            report_unconverged("DA inner", f"KL >= u kl_tol after {max_inner_iter} (p, w) "
                                           f"iterations at T={T:.3g}")
        entropy = binary_entropy(p)
        logger.debug("DA T=%.4g inner=%d entropy/u=%.3g objective=%.8g best=%.8g", T,
                     _inner + 1, entropy / u, tobj, best_obj)
        bar.update()
        if entropy < u * entropy_tol:
            break
        T /= temperature_decay
    else:
        # the best objective on the path is returned either way: not a failure to converge
        logger.info("DA: entropy/u still >= entropy_tol after %d temperatures",
                    max_outer_iter)
    bar.close()
    logger.info("DA: %d temperatures, %d (p, w) iterations, %d CG iterations, objective %.8g",
                _outer + 1, n_iter, n_cg, best_obj)
    return DAResult(w=best_w, beliefs=best_p, objective=best_obj, n_iter=n_iter,
                    n_cg_iter=n_cg, history=history)


class DeterministicAnnealingSVM(SemiSupervisedLinearSVM):
    """Deterministic annealing semi-supervised linear SVM (DA, SVMlin's ``-A 3``).

    Relaxes the unlabeled labels of the TSVM objective to beliefs ``p_j`` with an entropy
    term weighted by a temperature ``T`` (eq. 6, balance constraint eq. 7) and tracks the
    minimiser while ``T`` is lowered (Sindhwani & Keerthi, 2006, section 3.2).  Returns the
    weights with the lowest transductive objective seen on the path.

    Parameters
    ----------
    lam : float, default=1e-3
        ``lambda`` (SVMlin ``-W``).
    lam_u : float, default=1.0
        ``lambda'`` (SVMlin ``-U``).
    positive_fraction : float or None, default=None
        ``r`` (SVMlin ``-R``); ``None`` takes the positive fraction of the labeled rows.
    temperature_init : float or None, default=None
        Starting temperature; ``10 * lam_u`` when ``None``.
    temperature_decay : float, default=1.5
        ``T`` is divided by this after each temperature.
    max_outer_iter : int, default=30
        Temperatures tried at most.
    max_inner_iter : int, default=100
        Alternating (p, w) iterations per temperature at most.
    kl_tol : float, default=1e-6
        Inner loop stops when ``KL(p, q) < u kl_tol``.
    entropy_tol : float, default=1e-6
        Annealing stops when ``H(p) < u entropy_tol``.
    gamma_I : float, default=0.0
        Weight of a graph (manifold) regulariser ``(gamma_I / 2n^2) (Xw)^T L (Xw)`` added to
        the objective; 0 is the paper's method.
    graph : sparse matrix of shape (n_samples, n_samples), optional
        Adjacency for the graph term (e.g. ``semisup.graph.adjacency_graph(X, 10,
        metric='cosine')`` for text); a 10-NN heat-kernel graph when omitted.
    fit_intercept, intercept_scaling, tol, max_iter, max_cg_iter, verbose, probability :
        As :class:`L2SVM`; ``verbose=1`` shows a progress bar (elapsed time) over the
        annealing loop.

    Attributes
    ----------
    coef_, intercept_, classes_, transduction_ : as :class:`TransductiveSVM`.
    objective_ : float or ndarray
        Lowest transductive objective on the annealing path.
    fit_results_ : list of DAResult
        With the per-iteration history of objectives, KL divergences and entropies.
    """

    def __init__(self, lam: float = 1e-3, lam_u: float = 1.0,
                 positive_fraction: float | None = None, temperature_init: float | None = None,
                 temperature_decay: float = 1.5, max_outer_iter: int = 30,
                 max_inner_iter: int = 100, kl_tol: float = 1e-6, entropy_tol: float = 1e-6,
                 gamma_I: float = 0.0, graph=None, fit_intercept: bool = True,
                 intercept_scaling: float = 1.0, tol: float = 1e-6,
                 max_iter: int = 50, max_cg_iter: int = 10_000, verbose: int = 0,
                 probability: bool = False):
        self.lam = lam
        self.lam_u = lam_u
        self.positive_fraction = positive_fraction
        self.temperature_init = temperature_init
        self.temperature_decay = temperature_decay
        self.max_outer_iter = max_outer_iter
        self.max_inner_iter = max_inner_iter
        self.kl_tol = kl_tol
        self.entropy_tol = entropy_tol
        self.gamma_I = gamma_I
        self.graph = graph
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.tol = tol
        self.max_iter = max_iter
        self.max_cg_iter = max_cg_iter
        self.verbose = verbose
        self.probability = probability

    def _validate_params(self) -> None:
        super()._validate_params()
        if self.temperature_init is not None:
            check_positive(self.temperature_init, "temperature_init")
        if not self.temperature_decay > 1:
            raise ValueError(f"temperature_decay must be > 1, got {self.temperature_decay!r}")

    _algorithm = staticmethod(deterministic_annealing)

    def _algorithm_options(self) -> dict:
        return dict(temperature_init=self.temperature_init,
                    temperature_decay=self.temperature_decay, max_outer_iter=self.max_outer_iter,
                    max_inner_iter=self.max_inner_iter, kl_tol=self.kl_tol,
                    entropy_tol=self.entropy_tol)
