"""``fit`` of the linear estimators on a :class:`~semisup.distributed.DistributedDesign`.

Reached from :meth:`semisup.linear._base.LinearSemiSupervisedClassifier.fit` when ``X`` is
a distributed design, so the estimators keep one API.  Sets the same fitted attributes as
the single-machine fit.
"""

from __future__ import annotations

import logging

import numpy as np

from semisup.distributed._resume import FitJournal, ResumableS3VMRows, resumable_mfn
from semisup.distributed.design import (
    NOT_DISTRIBUTED,
    DistributedLabels,
    NotDistributedError,
    WorkerLostError,
)
from semisup.solvers.s3vm import deterministic_annealing_rows, transductive_svm_rows

logger = logging.getLogger("semisup.distributed")


def _with_restarts(name: str, design, fit, journal=None):
    """``fit()``, run again after a worker loss (at most ``design.max_restarts`` times):
    only the lost partitions are reloaded, and a fit keeping a ``journal`` resumes from
    its last completed step (:mod:`semisup.distributed._resume`)."""
    design.rebalance()  # onto workers that joined since the design was built or last fit
    design._journal = journal
    try:
        for attempt in range(design.max_restarts + 1):
            try:
                return fit()
            except WorkerLostError as exc:
                if attempt == design.max_restarts:
                    raise type(exc)(
                        f"{name}.fit: {exc}; gave up after {design.max_restarts} restart(s) "
                        f"— no result was stored", exc.workers) from exc
                logger.warning("%s.fit: %s; reloading the lost partitions and %s", name, exc,
                               "resuming" if journal is not None else "starting over")
                design.restart()
    finally:
        design._journal = None


def fit_pvm_distributed(estimator, design, y=None) -> None:
    """``PrototypeVectorMachine.fit`` on ``design`` (see :mod:`semisup.distributed._pvm`);
    restarted after a worker loss as :func:`fit_distributed`."""
    from semisup.distributed._pvm import fit_pvm

    _with_restarts(type(estimator).__name__, design, lambda: fit_pvm(estimator, design, y))


def fit_distributed(estimator, design, y=None, sample_weight=None):
    """Fit ``estimator`` (L2SVM, TransductiveSVM, DeterministicAnnealingSVM or LinearLapRLS)
    on ``design``.

    A worker lost during the fit makes the design reload its partitions and the fit start
    over (at most ``design.max_restarts`` times); the estimator is only updated by a fit that
    ran to its end, so a failure never leaves a partial answer behind.
    """
    from semisup.linear.da import DeterministicAnnealingSVM
    from semisup.linear.laplacian import LinearLapRLS
    from semisup.linear.svm import L2SVM
    from semisup.linear.tsvm import TransductiveSVM

    name = type(estimator).__name__
    if not isinstance(estimator, (L2SVM, TransductiveSVM, DeterministicAnnealingSVM,
                                  LinearLapRLS)):
        raise NotDistributedError(f"{name}: {NOT_DISTRIBUTED}")
    if y is not None and not (isinstance(y, DistributedLabels) and y.design is design):
        raise ValueError("y: the labels of a DistributedDesign travel with its rows; call "
                         "fit(design, design.labels) or fit(design, None)")
    if sample_weight is not None:
        raise ValueError("sample_weight is not supported with a DistributedDesign; use "
                         "cost_positive/cost_negative or pass a matrix")
    estimator._validate_params()
    estimator._validate_params_common()
    if isinstance(estimator, (TransductiveSVM, DeterministicAnnealingSVM)) \
            and estimator.lam is None:
        raise ValueError(f"lam: {name} on a DistributedDesign needs a number (lam=None, the "
                         "data-driven default, reads every row in this process); pass e.g. "
                         "lam=semisup.linear._defaults.default_lam(X_sample) for a sample of "
                         "the rows")
    if getattr(estimator, "gamma_I", 0.0) and not isinstance(estimator, LinearLapRLS):
        raise ValueError(f"gamma_I: {name} on a DistributedDesign has no graph term; set "
                         f"gamma_I=0 or pass a matrix")
    if isinstance(estimator, L2SVM) and estimator.solver not in ("auto", "mfn"):
        raise ValueError(f"solver={estimator.solver!r} is not available on a DistributedDesign "
                         f"(dual coordinate descent is sequential): use solver='mfn' or 'auto'")
    journal = FitJournal()
    fitted = _with_restarts(name, design, lambda: _fit(estimator, design, journal), journal)
    if hasattr(estimator, "fallback"):
        # the guard of semisup.safety refits fold by fold in this process: not on row blocks
        fitted.update(fallback_=False, cv_scores_=None)
    for key, value in fitted.items():
        setattr(estimator, key, value)
    return estimator


def _fit(est, dd, journal: FitJournal | None = None) -> dict:
    from semisup.linear._base import class_fractions
    from semisup.linear.da import DeterministicAnnealingSVM
    from semisup.linear.laplacian import LinearLapRLS
    from semisup.linear.svm import L2SVM
    from semisup.linear.tsvm import TransductiveSVM

    classes = dd.classes
    if classes.size < 2:
        raise ValueError(f"y contains {classes.size} class among its labeled rows; at least 2 "
                         f"are needed")
    if isinstance(est, (TransductiveSVM, DeterministicAnnealingSVM)) and dd.n_unlabeled == 0:
        raise ValueError("y has no unlabeled rows (-1): a semi-supervised fit needs some")
    n_weights = dd.n_features + int(est.fit_intercept)
    dd._call("prepare", bool(est.fit_intercept), float(est.intercept_scaling), classes,
             dd._unl_offsets)
    if isinstance(est, LinearLapRLS):
        from semisup.distributed._laprls import fit_laprls

        lap = fit_laprls(est, dd)
        return _fitted(est, dd, lap["coef"], lap["intercept"], lap["results"],
                       adjacency_=None)
    positives = [1] if classes.size == 2 else list(range(classes.size))
    mfn_options = dict(tol=est.tol, max_iter=est.max_iter or 50, max_cg_iter=est.max_cg_iter)
    results = []
    fractions = class_fractions(getattr(est, "positive_fraction", None), classes)
    journal = journal if journal is not None else FitJournal()
    for i, k in enumerate(positives):
        if i in journal.done:  # finished before a worker was lost
            results.append(journal.done[i])
            continue
        journal.start_problem(i)
        dd._call("clear_problem")
        n_pos = dd._sum("set_binary", k)
        prior = n_pos / dd.n_labeled if fractions is None else float(fractions[i])
        if isinstance(est, L2SVM):
            dd._call("problem_costs", float(est.cost_positive), float(est.cost_negative))
            from semisup.regularizers import Ridge
            reg = Ridge.with_bias(est.lam, n_weights, est.fit_intercept,
                                  est.penalize_intercept)
            res = resumable_mfn(dd, journal, reg, n_weights, **mfn_options)
        elif isinstance(est, TransductiveSVM):
            res = transductive_svm_rows(
                ResumableS3VMRows(dd, n_weights, journal), est.lam, est.lam_u,
                est._positive_fraction(prior), mfn_options=mfn_options,
                **est._algorithm_options())
        else:
            res = deterministic_annealing_rows(
                ResumableS3VMRows(dd, n_weights, journal), est.lam, est.lam_u,
                est._positive_fraction(prior), mfn_options=mfn_options,
                **est._algorithm_options())
        journal.done[i] = res
        results.append(res)
    d = dd.n_features
    coef = np.vstack([r.w[:d] for r in results])
    intercept = np.array([r.w[d] * est.intercept_scaling if est.fit_intercept else 0.0
                          for r in results])
    extra = {"solver_": "mfn"} if isinstance(est, L2SVM) else {}
    return _fitted(est, dd, coef, intercept, results, **extra)


def _fitted(est, dd, coef, intercept, results, **extra) -> dict:
    classes = dd.classes
    d = dd.n_features
    if dd.gather_transduction:
        per_block = sorted(b for per in dd._call("predict_index", coef, intercept) for b in per)
        transduction = classes[np.concatenate([b[1] for b in per_block])]
    else:  # a dask array whose chunks stay on the workers
        transduction = dd.row_values("block_labels", coef, intercept, classes,
                                     dtype=classes.dtype)
    fitted = {
        "classes_": classes, "coef_": coef, "intercept_": intercept,
        "n_features_in_": d, "fit_results_": results,
        "objective_": results[0].objective if len(results) == 1
        else np.array([r.objective for r in results]),
        "n_iter_": np.array([r.n_iter for r in results]),
        "transduction_": transduction,
    }
    fitted.update(extra)
    return fitted
