"""Resuming a distributed fit after a worker loss, from its last completed step.

The single-machine loops (:func:`semisup.solvers.s3vm.transductive_svm_rows`,
:func:`~semisup.solvers.s3vm.deterministic_annealing_rows`,
:func:`semisup.solvers.mfn.mfn_rows`) run on the client and are deterministic given what
their row objects return.  A :class:`FitJournal` keeps, for the fit in progress:

* the result of every completed call of the TSVM/DA row object (one TSVM retraining or
  switching round, one DA p-step or w-step, ...), and the ``w`` of the last completed
  Newton step of the MFN in progress;
* the worker calls that define the per-row state those calls leave behind (problem set-up,
  outputs ``o = A w``, temporary labels and their switches, beliefs), arguments copied.

After a loss only the lost partitions are reloaded (:meth:`DistributedDesign.restart`) and
the fit runs again from its start with :class:`ResumableS3VMRows`: its calls answer from
the journal without touching the workers until the journal is used up; then the recorded
state calls are replayed once on every block (a few matrix-vector products: the outputs
are recomputed only where a later call reads them) and the fit continues live, an
interrupted MFN from its last Newton step.  Lost work is bounded by the calls since the
last completed one.  The answer is the uninterrupted fit's up to the solver tolerance (the
resumed MFN rebuilds its preconditioner and restarts CG from the checkpoint), not bit for
bit.
"""

from __future__ import annotations

import dataclasses
import logging

import numpy as np

from semisup.distributed._solvers import BlockMFNRows, BlockS3VMRows, l2svm_mfn
from semisup.solvers.s3vm import _FIRST_PAIRS

logger = logging.getLogger("semisup.distributed")

# worker calls whose effect outlives the row-object call that made them
DEFINING = frozenset({
    "prepare", "clear_problem", "set_binary", "problem_supervised", "problem_costs",
    "problem_transductive", "problem_annealing", "outputs", "finish_outputs",
    "finish_annealing", "unlabeled_outputs",
    "initial_labels", "switch", "start_beliefs", "compute_g", "set_beliefs",
})
_SETS_OUTPUTS = frozenset({"outputs", "finish_outputs", "finish_annealing",
                           "unlabeled_outputs"})
# (finish_annealing also computes g from the outputs it sets, which the p-step's
# set_beliefs reads: it is never superseded)
_READS_OUTPUTS = frozenset({"initial_labels", "compute_g", "finish_annealing"})


def _copy(value):
    """Arguments as they were when sent (the solvers update ``w`` in place)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_copy(v) for v in value)
    return value


class FitJournal:
    """What a fit on a :class:`~semisup.distributed.DistributedDesign` has completed.

    Attributes
    ----------
    done : dict
        Results of the finished binary problems (one-vs-rest), by problem number.
    problem : int or None
        The binary problem in progress.
    calls : list of (str, object)
        Completed row-object calls of that problem and their results.
    state : list of (str, tuple)
        Defining worker calls made by those calls (outputs kept only where read later).
    newton_w : ndarray or None
        ``w`` after the last completed Newton step of the MFN in progress.
    n_resumed, n_replayed : int
        Resumptions so far; row-object calls answered from the journal.
    """

    def __init__(self):
        self.done: dict = {}
        self.problem: int | None = None
        self.calls: list = []
        self.state: list = []
        self.newton_w: np.ndarray | None = None
        self.newton_steps = 0
        self.n_resumed = 0
        self.n_replayed = 0
        self._pending: list = []
        self._recording = False

    def start_problem(self, k: int) -> None:
        """A new binary problem: forget the previous one's calls (its result is in done)."""
        if self.problem != k:
            self.problem, self.calls, self.state = k, [], []
            self.newton_w, self.newton_steps = None, 0
        self._pending = []

    def record(self, method: str, args: tuple) -> None:
        """Called by the design after a successful worker call."""
        if self._recording and method in DEFINING:
            self._pending.append((method, _copy(args)))

    def commit(self, method: str, result) -> None:
        """A row-object call completed: keep its result and its defining calls."""
        for entry in self._pending:
            if entry[0] in _SETS_OUTPUTS:
                # an earlier outputs call that nothing read since is superseded
                for j in range(len(self.state) - 1, -1, -1):
                    if self.state[j][0] in _READS_OUTPUTS:
                        break
                    if self.state[j][0] in _SETS_OUTPUTS:
                        del self.state[j]
                        break
            self.state.append(entry)
        self._pending = []
        if method in ("mfn", "supervised"):
            # only the latest retraining's preconditioner can be used again
            for j in range(len(self.calls) - 1, -1, -1):
                if self.calls[j][0] in ("mfn", "supervised"):
                    old = self.calls[j][1]
                    if old.preconditioner is not None:
                        self.calls[j] = (self.calls[j][0],
                                         dataclasses.replace(old, preconditioner=None))
                    break
            self.newton_w, self.newton_steps = None, 0
        self.calls.append((method, result))

    def discard_pending(self) -> None:
        self._pending = []


class CheckpointMFNRows(BlockMFNRows):
    """:class:`BlockMFNRows` that records ``w`` after every completed Newton step (the same
    arithmetic as :func:`semisup.solvers.mfn.mfn_rows`) in the journal."""

    def __init__(self, dd, n_weights, journal: FitJournal, **kwargs):
        super().__init__(dd, n_weights, **kwargs)
        self.journal = journal
        self._w = None

    def start(self, w):
        self._w = np.zeros(self.n) if w is None else np.array(w, dtype=np.float64)
        return super().start(w)

    def newton_point(self, w_bar) -> bool:
        self._w_bar = np.array(w_bar, copy=True)
        return super().newton_point(w_bar)

    def accept_newton_point(self) -> float:
        value = super().accept_newton_point()
        self._w = self._w_bar
        self._checkpoint()
        return value

    def step(self, delta: float) -> float:
        value = super().step(delta)
        self._w = self._w + delta * (self._w_bar - self._w)
        self._checkpoint()
        return value

    def _checkpoint(self) -> None:
        self.journal.newton_w = self._w.copy()
        self.journal.newton_steps += 1


def resumable_mfn(dd, journal: FitJournal, reg, n_weights: int, w0=None,
                  outputs_ready: bool = False, candidates: int = 0,
                  annealing: float | None = None, **options):
    """:func:`semisup.distributed._solvers.l2svm_mfn` that checkpoints every Newton step and,
    when the journal holds a checkpoint of this MFN, starts from it (its outputs recomputed)
    instead of ``w0``."""
    steps_before = 0
    if journal.newton_w is not None:
        w0, outputs_ready = journal.newton_w, False
        steps_before = journal.newton_steps
        logger.warning("resuming the MFN from its Newton step %d", steps_before)
        if not journal.calls:  # an L2SVM fit (within TSVM/DA the row object counts)
            dd.n_resumed += 1
    rows = CheckpointMFNRows(dd, n_weights, journal, outputs_ready=outputs_ready,
                             candidates=candidates, annealing=annealing)
    journal.newton_steps = steps_before
    return l2svm_mfn(dd, reg, n_weights, w0=w0, rows=rows, **options)


def _journaled(name: str):
    def method(self, *args):
        return self._journal_call(name, lambda: getattr(BlockS3VMRows, name)(self, *args))

    method.__name__ = name
    method.__doc__ = f"``BlockS3VMRows.{name}``, answered from the journal while resuming."
    return method


class ResumableS3VMRows(BlockS3VMRows):
    """:class:`~semisup.distributed._solvers.BlockS3VMRows` whose calls are journaled, and
    answered from the journal when the fit is resumed (see the module docstring)."""

    def __init__(self, dd, n_weights: int, journal: FitJournal):
        super().__init__(dd, n_weights)
        self.journal = journal
        self._cursor = 0
        self._replayed = 0  # calls this object answered from the journal
        self._restored = False

    def _restore(self) -> None:
        """Replay the recorded state calls on every block, once, before going live."""
        self._restored = True
        self.journal.n_resumed += 1
        self.dd.n_resumed += 1
        logger.warning("resuming the fit after %d completed steps: replaying %d state "
                       "calls on the workers", self._replayed, len(self.journal.state))
        for method, args in self.journal.state:
            self.dd._call(method, *args)

    def supervised(self, reg, opts: dict):
        def live():
            self.dd._call("problem_supervised", self.n_labeled)
            return resumable_mfn(self.dd, self.journal, reg, self.n_weights, **opts)

        return self._journal_call("supervised", live)

    def mfn(self, reg, w, preconditioner0, opts: dict):
        return self._journal_call("mfn", lambda: resumable_mfn(
            self.dd, self.journal, reg, self.n_weights, w0=w, outputs_ready=True,
            preconditioner0=preconditioner0, candidates=self._candidates,
            annealing=self._annealing, **opts))

    def problem_transductive(self, lam_cur: float) -> None:
        # (set here too: a call answered from the journal does not run the method)
        self._candidates = _FIRST_PAIRS
        return self._journal_call("problem_transductive", lambda: BlockS3VMRows.
                                  problem_transductive(self, lam_cur))

    def problem_annealing(self, lam_u: float) -> None:
        # (set here too: a call answered from the journal does not run the method)
        self._candidates, self._annealing = 0, lam_u
        return self._journal_call("problem_annealing", lambda: BlockS3VMRows.
                                  problem_annealing(self, lam_u))

    def p_step(self, lam_u: float, temperature: float, positive_fraction: float) -> None:
        # the p-step leaves H(p) and KL(p, q) here, read by entropy() and kl() later
        def live():
            BlockS3VMRows.p_step(self, lam_u, temperature, positive_fraction)
            return self._entropy, self._kl

        self._entropy, self._kl = self._journal_call("p_step", live)

    def _journal_call(self, name: str, live):
        """``live()`` recorded in the journal, or its recorded result while resuming."""
        journal = self.journal
        if self._cursor < len(journal.calls):
            recorded, result = journal.calls[self._cursor]
            if recorded != name:
                raise RuntimeError(f"resuming a distributed fit: expected the call "
                                   f"{recorded!r} but the solver made {name!r}")
            self._cursor += 1
            self._replayed += 1
            journal.n_replayed += 1
            return result
        if self._replayed and not self._restored:
            self._restore()
        journal._recording = True
        try:
            result = live()
        except BaseException:
            journal.discard_pending()
            raise
        finally:
            journal._recording = False
        journal.commit(name, result)
        self._cursor += 1
        return result


for _name in ("outputs", "transductive_objective", "initial_labels", "switch_candidates",
              "switch", "labels_u", "start_beliefs", "entropy", "kl",
              "annealing_objective", "keep_best", "best_beliefs"):
    setattr(ResumableS3VMRows, _name, _journaled(_name))
del _name
