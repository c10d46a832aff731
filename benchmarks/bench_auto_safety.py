"""How safe should the automatic classifier be? The measurement behind ``safety=0.5``.

For each task and labeling, fits :class:`semisup.AutoClassifier` once (its ``cv_results_``
hold every candidate's paired gain over the best supervised one and its standard error),
and every candidate once on all labels, to know each one's true accuracy on the unlabeled
rows. The rule "choose the best semi-supervised candidate when its gain exceeds ``s``
standard errors" is then replayed for several ``s`` without refitting.

Tasks: four binary pairs of scikit-learn's digits (10 labels, 3 labelings), the SSL
book's digit1, usps, coil2, g241c, bci and text at 10 and 100 labels (first 2 official
splits), and 20 Newsgroups pc vs mac as raw term counts (``../shared/data/pcmac``, 10 and
100 labels, 2 random stratified labelings). The reference is the better of logistic
regression and the RBF SVM on each labeling (the issue's supervised counterparts) -- a
stricter bar than either one.

``--extra`` also cross-validates self-training over logistic regression (same folds, a
second :class:`~semisup.AutoClassifier` whose supervised rows are the same fits) so that
the rule can be replayed with it added: the measurement that decides whether it earns a
place among the default candidates. ``--cost`` times one default fit of AutoClassifier,
LapRLS, TransductiveSVM, S4VM, SelfTraining and TriTraining on two small tasks (the 10x
cost rule of issue 26).

The rows of the first version of this benchmark (before the naive Bayes candidates) are
kept in ``results/auto_safety_v1.jsonl``; tasks not re-run are shown from them.

    python benchmarks/bench_auto_safety.py   # every task: ~30 min on 2 idle cores
    python benchmarks/bench_auto_safety.py --tasks text pcmac digits --extra digits text \\
        pcmac --cost      # the run in results/auto_safety.md
    python benchmarks/bench_auto_safety.py --render   # re-render from the stored rows

``--name NAME`` measures into ``results/NAME.jsonl`` (row by row) and writes the rule
comparison ``results/NAME.md``: the v2 rule and this version's replayed on the same
held-out scores, per cell, with the issue's checks and CPU cost, and the variants of the
rule weighed (:data:`VARIANTS`). ``--labelings`` picks the SSL-book splits and the seeds
of the random labelings (``0 1``: the benchmark's cells), ``--uci`` adds five small UCI
sets, ``--budget`` sets ``time_budget``. The runs behind ``supervised_safety=1.5``:

    python benchmarks/bench_auto_safety.py --name auto_safety_r3s4_dev2 --labelings 2 \
        --uci --budget 1e9      # and --labelings 3; rows concatenated: *_r3s4_dev.jsonl
    python benchmarks/bench_auto_safety.py --name auto_safety_r3s4_a --labelings 0 1 \
        --budget 1e9 --tasks digits digit1 usps coil2 pcmac   # and _b: g241c bci text;
        # concatenated: results/auto_safety_r3s4.jsonl (the final run, once)
    python benchmarks/bench_auto_safety.py --name auto_safety_r3s4 --render
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import sys
import time
import warnings

import numpy as np
from _common import RESULTS_DIR, machine_info

SAFETIES = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5)
ROWS = RESULTS_DIR / "auto_safety.jsonl"
ROWS_V1 = RESULTS_DIR / "auto_safety_v1.jsonl"
COST = RESULTS_DIR / "auto_safety_cost.json"
#: the issue's supervised counterparts: the reference of every comparison
COUNTERPARTS = ("LogisticRegression", "SVC")
#: the default candidates before the naive Bayes ones (v1)
V1 = ("LogisticRegression", "SVC", "LapRLS", "LabelSpreading", "TransductiveSVM")
EXTRA = ("SelfTraining",)


def pcmac_counts():
    """20 Newsgroups pc vs mac as raw term counts (1,943 x 3,289), labels 0/1."""
    import scipy.io
    import scipy.sparse as sp

    from semisup.datasets import shared_data_dir

    m = scipy.io.loadmat(str(shared_data_dir() / "pcmac" / "PCMAC.mat"))
    return sp.csr_matrix(m["fea"].astype(np.float64)), (m["gnd"].ravel() == 2).astype(int)


#: small UCI sets (LIBSVM copies, scaled to [-1, 1]) for developing the rule on other data
UCI = {"ionosphere": ("ionosphere_scale.bz2", 34), "breast-cancer": ("breast-cancer_scale.bz2", 10),
       "heart": ("heart_scale.bz2", 13), "australian": ("australian_scale.bz2", 14),
       "german": ("german.numer_scale.bz2", 24)}


def uci(name: str):
    """A small UCI set of ``../shared/data/uci_small`` as dense ``X`` and 0/1 labels."""
    from sklearn.datasets import load_svmlight_file

    from semisup.datasets import shared_data_dir

    file, d = UCI[name]
    X, y = load_svmlight_file(str(shared_data_dir() / "uci_small" / file), n_features=d)
    X = X.toarray()
    if name == "breast-cancer":
        X = X[:, 1:]          # column 0 is the scaled sample code number, not a measurement
    return X, (y > 0).astype(int)


def _random_labeling(yt, n_labeled: int, seed) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y = np.full(yt.size, -1)
    for c in (0, 1):
        y[rng.choice(np.flatnonzero(yt == c), n_labeled // 2, replace=False)] = c
    return y


def tasks(quick: bool, labelings=(0, 1), uci_sets: bool = False):
    """``(task, labeling, X, y, yt)``. ``labelings``: the SSL book's split indices and the
    seeds of the random labelings; ``(0, 1)`` gives the benchmark's cells (the digit
    pairs then keep their three labelings of one generator)."""
    from sklearn.datasets import load_digits
    from sklearn.preprocessing import normalize

    from semisup.datasets import load_sslbook, partial_labels

    labelings = tuple(labelings)
    default = labelings == (0, 1)
    d = load_digits()
    X_all = normalize(d.data)
    pairs = {"digits 3v8": ([3], [8]), "digits 1v7": ([1], [7]), "digits 4v9": ([4], [9]),
             "digits even/odd": ([0, 2, 4, 6, 8], [1, 3, 5, 7, 9])}
    for name, (neg, pos) in list(pairs.items())[: 1 if quick else None]:
        mask = np.isin(d.target, neg + pos)
        X, yt = X_all[mask], np.isin(d.target[mask], pos).astype(int)
        rng = np.random.default_rng(0)
        for r in (range(1 if quick else 3) if default else labelings):
            y = np.full(yt.size, -1)
            if not default:      # other labelings: one generator per labeling
                rng = np.random.default_rng([7, r])
            for c in (0, 1):
                y[rng.choice(np.flatnonzero(yt == c), 5, replace=False)] = c
            yield f"{name}, 10", r, X, y, yt
    if quick:
        return
    for name in ("digit1", "usps", "coil2", "g241c", "bci", "text"):
        for n_labeled in (10, 100):
            b = load_sslbook(name, n_labeled)
            yt = partial_labels(b.y, np.arange(b.y.size))
            for r in labelings:
                y = np.full(yt.size, -1)
                y[b.splits[r]] = yt[b.splits[r]]
                yield f"{name}, {n_labeled}", r, b.X, y, yt
    X, yt = pcmac_counts()
    for n_labeled in (10, 100):
        for r in labelings:
            yield f"pcmac counts, {n_labeled}", r, X, _random_labeling(yt, n_labeled, r), yt
    if uci_sets:
        for name in UCI:
            X, yt = uci(name)
            for n_labeled in (10, 100):
                for r in labelings:
                    yield (f"{name}, {n_labeled}", r, X,
                           _random_labeling(yt, n_labeled, [11, r]), yt)


def extra_candidates():
    from sklearn.linear_model import LogisticRegression

    from semisup.meta.auto import Candidate
    from semisup.meta.self_training import SelfTraining

    est = SelfTraining(LogisticRegression(max_iter=1000))
    # with and without the wrapper's own labeled-only CV guard, where it has one
    grid = [{}, {"fallback": "none"}] if "fallback" in est.get_params() else [{}]
    return [Candidate("SelfTraining", est, True, grid)]


def setting_name(name: str, params: dict) -> str:
    """As ``cv_results_['candidate_setting']``."""
    return name + ("(" + ", ".join(f"{k}={v!r}" for k, v in params.items()) + ")"
                   if params else "")


def true_accuracy(cands, X, y, yt, cpu: dict | None = None) -> tuple[dict, dict]:
    """Each (candidate, setting) fitted on all labels: accuracy on the unlabeled rows and
    fit time, by setting name (and CPU time into ``cpu`` when given)."""
    from sklearn.base import clone

    unl, lab = y == -1, y != -1
    true, secs = {}, {}
    for cand in cands:
        for params in cand.grid:
            key = setting_name(cand.name, params)
            est = clone(cand.estimator).set_params(**params)
            t0, c0 = time.perf_counter(), time.process_time()
            if cand.semi_supervised:
                pred = est.fit(X, y).transduction_[unl]
            else:
                pred = est.fit(X[lab], y[lab]).predict(X[unl])
            secs[key] = time.perf_counter() - t0
            if cpu is not None:
                cpu[key] = time.process_time() - c0
            true[key] = float(np.mean(pred == yt[unl]))
    return true, secs


def strip_extra(row: dict) -> dict:
    """A stored row without its extra candidates (to measure them again)."""
    keep = [i for i, n in enumerate(row["names"]) if n.split("(")[0] not in EXTRA]
    return {k: ([v[i] for i in keep] if k in ("names", "semi", "scores", "status", "true",
                                              "fit_seconds") else v)
            for k, v in row.items()}


def measure(*args, **kwargs) -> list[dict]:
    """Every row of :func:`iter_measure`."""
    return list(iter_measure(*args, **kwargs))


def iter_measure(quick: bool, extra: list[str] | None, only: list[str] | None,
                 stored: dict | None = None, labelings=(0, 1), uci_sets: bool = False,
                 budget: float | None = None):
    """``stored``: rows by ``(task, labeling)`` whose default run is reused (only the extra
    candidates are measured again). ``budget``: AutoClassifier's ``time_budget`` (its
    default when ``None``)."""
    from semisup import AutoClassifier
    from semisup.meta.auto import auto_candidates

    for task, r, X, y, yt in tasks(quick, labelings, uci_sets):
        if only and not any(o in task for o in only):
            continue
        if stored is not None:
            if (task, r) not in stored:
                continue
            row = strip_extra(stored[(task, r)])
            true = dict(zip(row["names"], row["true"], strict=True))
            fit_secs = dict(zip(row["names"], row["fit_seconds"], strict=True))
            row = {k: v for k, v in row.items() if k not in ("true", "fit_seconds")}
            _extra(row, true, fit_secs, X, y, yt, r)
            row["true"] = [true[name] for name in row["names"]]
            row["fit_seconds"] = [fit_secs[name] for name in row["names"]]
            yield row
            print(f"{task} #{r}: extra candidates measured again", file=sys.stderr)
            continue
        t0, c0 = time.perf_counter(), time.process_time()
        auto = AutoClassifier(random_state=r, **({} if budget is None else
                                                 {"time_budget": budget})).fit(X, y)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        res = auto.cv_results_
        fit_cpu: dict = {}
        true, fit_secs = true_accuracy(auto_candidates(X, 2, int((y != -1).sum())), X, y, yt,
                                       fit_cpu)
        row = {"task": task, "labeling": r, "seconds": seconds, "cpu": cpu,
               "class_counts": np.unique(y[y != -1], return_counts=True)[1].tolist(),
               "names": list(res["candidate_setting"]), "semi": list(res["semi_supervised"]),
               "scores": [None if v is None else np.asarray(v).tolist()
                          for v in res["row_margin_scores"]],
               "acc": [None if v is None else np.asarray(v).tolist()
                       for v in res["row_accuracy"]],
               "fit_cpu": [fit_cpu.get(n) for n in res["candidate_setting"]],
               "chosen": auto.best_candidate_,
               "status": list(res["status"])}
        if extra is not None and (not extra or any(e in task for e in extra)):
            _extra(row, true, fit_secs, X, y, yt, r)
        row["true"] = [true[name] for name in row["names"]]
        row["fit_seconds"] = [fit_secs[name] for name in row["names"]]
        yield row
        print(f"{task} #{r}: chose {auto.best_candidate_} in {seconds:.1f} s", file=sys.stderr)


def _extra(row: dict, true: dict, fit_secs: dict, X, y, yt, r: int) -> None:
    """Cross-validate the extra candidates into ``row`` (same folds: same random_state and
    labels; the supervised rows are the same fits as the default run's, not repeated)."""
    from semisup import AutoClassifier
    from semisup.meta.auto import auto_candidates

    cands = extra_candidates()
    more = AutoClassifier(candidates=[c for c in auto_candidates(X, 2, 2)
                                      if not c.semi_supervised] + cands,
                          time_budget=1e9, random_state=r).fit(X, y)
    m = more.cv_results_
    t_true, t_secs = true_accuracy(cands, X, y, yt)
    for i, name in enumerate(m["candidate_setting"]):
        if m["semi_supervised"][i]:
            row["names"].append(name)
            row["semi"].append(True)
            row["scores"].append(None if m["row_margin_scores"][i] is None else
                                 np.asarray(m["row_margin_scores"][i]).tolist())
            row["status"].append(m["status"][i])
    true.update(t_true)
    fit_secs.update(t_secs)


COSTED = ("AutoClassifier", "LapRLS", "TransductiveSVM", "S4VM", "SelfTraining",
          "TriTraining")


def candidate_cost() -> dict:
    """Seconds of one default fit of each method weighed (and of AutoClassifier) on two
    small tasks."""
    from sklearn.linear_model import LogisticRegression

    from semisup import S4VM, AutoClassifier, LapRLS, TransductiveSVM
    from semisup.meta.self_training import SelfTraining
    from semisup.meta.tritraining import TriTraining

    out = {}
    for task, r, X, y, _ in tasks(quick=False):
        if (task, r) not in (("digits 3v8, 10", 0), ("bci, 10", 0)):
            continue
        secs = {}
        lr = LogisticRegression(max_iter=1000)
        for name, est in zip(COSTED, (AutoClassifier(random_state=0), LapRLS(),
                                      TransductiveSVM(), S4VM(random_state=0),
                                      SelfTraining(lr), TriTraining(lr, random_state=0)),
                             strict=True):
            t0 = time.perf_counter()
            est.fit(X, y)
            secs[name] = time.perf_counter() - t0
        out[f"{task} (n={X.shape[0]})"] = secs
        print(task, secs, file=sys.stderr)
    return out


def replay(row: dict, safety: float, allowed=None) -> int:
    """Index of the candidate :func:`semisup.meta.auto.choose` picks at ``safety`` among
    the settings that ran and whose candidate is in ``allowed`` (all when ``None``)."""
    from semisup.meta.auto import choose

    ran = [i for i, s in enumerate(row["scores"]) if s is not None and
           (allowed is None or row["names"][i].split("(")[0] in allowed)]
    _, chosen = choose([np.asarray(row["scores"][i]) for i in ran],
                       [row["semi"][i] for i in ran], safety)
    return ran[chosen]


def counterpart(row: dict) -> float:
    """Accuracy of the better of the issue's supervised counterparts on this labeling."""
    return max(t for t, n in zip(row["true"], row["names"], strict=True)
               if n in COUNTERPARTS)


def default_list(row: dict) -> set:
    return {n.split("(")[0] for n in row["names"]} - set(EXTRA)


def summary(by_task: dict, lists: dict, safety: float) -> list[str]:
    """One line per candidate list: the issue's checks at ``safety``."""
    out = []
    for label, allowed_of in lists.items():
        cells = []
        for task_rows in by_task.values():
            cells.append(np.mean([(row["true"][replay(row, safety, allowed_of(row))],
                                   counterpart(row), max(row["true"]))
                                  for row in task_rows], axis=0))
        A = np.array(cells)
        d = A[:, 0] - A[:, 1]
        out.append(f"| {label} | {100 * np.mean(d):+.2f} | {100 * d.min():+.1f} | "
                   f"{int(np.sum(d < -0.01))} | {100 * np.mean(A[:, 0] - A[:, 2]):+.2f} | "
                   f"{int(np.sum(A[:, 0] >= A[:, 2] - 0.01))} of {len(A)} |")
    return out


def cost_ratio(row: dict) -> float:
    """AutoClassifier's time over the median single default fit of its semi-supervised
    candidates."""
    return row["seconds"] / np.median(
        [t for t, n, semi in zip(row["fit_seconds"], row["names"], row["semi"], strict=True)
         if semi and "(" not in n and n not in EXTRA])


def render(rows: list[dict], command: str, v1: list[dict], cost: dict | None) -> str:
    by_task = collections.defaultdict(list)
    for row in rows:
        by_task[row["task"]].append(row)
    v1_by_task = collections.defaultdict(list)
    for row in v1:
        v1_by_task[row["task"]].append(row)
    # tasks not re-run keep their v1 rows: their candidate list did not change (dense X)
    merged = dict(by_task)
    for task, task_rows in v1_by_task.items():
        merged.setdefault(task, task_rows)
    has_extra = any(n in EXTRA for row in rows for n in row["names"])
    default = {"**default candidates (this version)**": default_list}
    out = ["# How safe is AutoClassifier, and which candidates earn a place?", "",
           f"Command: `{command}`", "", machine_info(), "",
           "Accuracy on the unlabeled rows, averaged over the labelings of each task (a "
           "*cell*). *Counterpart*: the better of scikit-learn's LogisticRegression and SVC "
           "(defaults, labeled rows) on each labeling, an oracle choice between the issue's "
           "two counterparts. *Best*: the best single candidate measured on the labeling (every "
           "candidate and setting of every list below, each fitted alone with all labels). "
           "Each list's choice is the rule (`safety` = 0.5) replayed on the held-out "
           "scores of one run, so the lists differ only in which candidates they may pick.",
           "", f"Re-run here: {', '.join(by_task)}. "
           f"Not re-run (v1 rows, `results/auto_safety_v1.jsonl`): "
           f"{', '.join(t for t in merged if t not in by_task) or 'none'}; on those dense "
           "tasks the default candidates are the v1 ones, in the same order, so the rule "
           "chooses the same way.", "",
           "## All cells, default candidates (re-run cells + v1 cells)", "",
           "| safety | mean vs counterpart (pts) | worst cell vs counterpart | cells below "
           "counterpart - 1 | mean vs best (pts) | cells within 1 point of best |",
           "|---|---|---|---|---|---|"]
    for s in SAFETIES:
        out += [line.replace("| **default candidates (this version)** |", f"| {s:g} |")
                for line in summary(merged, default, s)]
    lists = {"v1 candidates (no naive Bayes), replayed": lambda row: set(V1)} | default
    if has_extra:
        lists["default + SelfTraining(LogisticRegression)"] = \
            lambda row: default_list(row) | set(EXTRA)
    out += ["", "## Candidate lists on the re-run cells (safety 0.5)", "",
            "| candidates | mean vs counterpart (pts) | worst cell vs counterpart | cells "
            "below counterpart - 1 | mean vs best (pts) | cells within 1 point of best |",
            "|---|---|---|---|---|---|"]
    out += summary(by_task, lists, 0.5)
    extra_cols = " | + SelfTraining" if has_extra else ""
    out += ["", "## Per cell", "",
            "Accuracy (%): *v1 run*: the first version's AutoClassifier in its own run "
            "(`results/auto_safety_v1.jsonl`, same labelings and `random_state`); "
            "*v1 replayed*: the v1 candidates' choice replayed on this run; *auto*: this "
            "version's AutoClassifier. *Cost*: AutoClassifier's wall time over the median "
            "time of one fit of its semi-supervised candidates with their defaults (alone, "
            "on all labels, same task; re-run cells only).", "",
            f"| task | v1 run | v1 replayed | auto{extra_cols} | counterpart | best | auto chose "
            "| auto s | cost |",
            "|---|---|---|---|" + ("---|" if has_extra else "") + "---|---|---|---|---|"]
    for task, task_rows in merged.items():
        old = v1_by_task.get(task)
        old_acc = f"{100 * np.mean([r['true'][replay(r, 0.5)] for r in old]):.1f}" \
            if old else "-"
        rerun = task in by_task

        def acc(allowed_of, task_rows=task_rows):
            return 100 * np.mean([r["true"][replay(r, 0.5, allowed_of(r))] for r in task_rows])
        cells = [old_acc, f"{acc(lambda r: set(V1)):.1f}" if rerun else "-",
                 f"{acc(default_list):.1f}" if rerun else f"({old_acc})"]
        if has_extra:
            cells.append(f"{acc(lambda r: default_list(r) | set(EXTRA)):.1f}"
                         if rerun and all(EXTRA[0] in r["names"] for r in task_rows) else "-")
        cp = 100 * np.mean([counterpart(r) for r in task_rows])
        best = 100 * np.mean([max(r["true"]) for r in task_rows])
        chosen = ", ".join(r["names"][replay(r, 0.5, default_list(r))] for r in task_rows)
        secs = np.mean([r["seconds"] for r in task_rows])
        ratio = f"{np.mean([cost_ratio(r) for r in task_rows]):.0f}x" if rerun else "-"
        out.append(f"| {task} | " + " | ".join(cells) + f" | {cp:.1f} | {best:.1f} | {chosen} "
                   f"| {secs:.1f} | {ratio} |")
    if has_extra:
        raw = "SelfTraining(fallback='none')"
        out += ["", "## Self-training alone (fitted with all labels)", "",
                "SelfTraining over LogisticRegression(max_iter=1000) with its defaults (which "
                "include its own labeled-only CV guard, `fallback='cv'`, where the installed "
                "version has one) and with `fallback='none'` (the plain wrapper).", "",
                "| task | SelfTraining % | fallback='none' % | LogisticRegression % | one fit s "
                "(default / fallback='none' / LogReg) |", "|---|---|---|---|---|"]
        for task, task_rows in by_task.items():
            if not all(EXTRA[0] in r["names"] for r in task_rows):
                continue

            def col(name, key="true", task_rows=task_rows):
                if not all(name in r["names"] for r in task_rows):
                    return np.nan
                return np.mean([r[key][r["names"].index(name)] for r in task_rows])
            out.append(f"| {task} | {100 * col('SelfTraining'):.1f} | "
                       f"{100 * col(raw):.1f} | "
                       f"{100 * col('LogisticRegression'):.1f} | "
                       f"{col('SelfTraining', 'fit_seconds'):.2f} / "
                       f"{col(raw, 'fit_seconds'):.2f} / "
                       f"{col('LogisticRegression', 'fit_seconds'):.3f} |")
    if cost:
        out += ["", "## One default fit of each method weighed (seconds, same run)", "",
                "| task | " + " | ".join(COSTED) + " |", "|---|" + "---|" * len(COSTED)]
        for task, secs in cost.items():
            out.append(f"| {task} | " + " | ".join(f"{secs[k]:.2f}" for k in COSTED) + " |")
    return "\n".join(out) + "\n"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one task, one labeling")
    parser.add_argument("--render", action="store_true", help="re-render the stored rows")
    parser.add_argument("--extra", nargs="*", default=None, metavar="TASK",
                        help="also cross-validate self-training on the tasks whose name "
                             "contains one of these strings (all tasks when none given)")
    parser.add_argument("--cost", action="store_true",
                        help="time one default fit of each method weighed (S4VM, ...)")
    parser.add_argument("--tasks", nargs="*", default=None,
                        help="run only the tasks whose name contains one of these strings")
    parser.add_argument("--dry", action="store_true", help="do not write the results files")
    parser.add_argument("--extra-only", action="store_true",
                        help="reuse the stored rows' default runs; measure only --extra again")
    parser.add_argument("--labelings", nargs="*", type=int, default=[0, 1],
                        help="SSL-book split indices / seeds of the random labelings "
                             "(default 0 1: the benchmark's cells)")
    parser.add_argument("--uci", action="store_true",
                        help="also the small UCI sets of ../shared/data/uci_small")
    parser.add_argument("--budget", type=float, default=None,
                        help="AutoClassifier's time_budget (its default when not given)")
    parser.add_argument("--name", default=None,
                        help="write results/NAME.jsonl and NAME.md (the rule comparison) "
                             "instead of auto_safety.*")
    args = parser.parse_args(argv)
    if args.name is not None:
        return main_named(args)
    command = "python benchmarks/bench_auto_safety.py" + (" --quick" if args.quick else "") + (
        " --tasks " + " ".join(repr(t) for t in args.tasks) if args.tasks else "") + (
        " --extra " + " ".join(repr(t) for t in args.extra) if args.extra is not None
        else "") + (" --cost" if args.cost else "")
    v1 = [json.loads(line) for line in ROWS_V1.read_text().splitlines()] \
        if ROWS_V1.exists() else []
    cost = json.loads(COST.read_text()) if COST.exists() else None
    write = not (args.quick or args.dry)
    if args.render:
        rows = [json.loads(line) for line in ROWS.read_text().splitlines()]
        command = rows[0].get("command", command) if rows else command
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stored = None
            if args.extra_only:
                old_rows = [json.loads(line) for line in ROWS.read_text().splitlines()]
                stored = {(row["task"], row["labeling"]): row for row in old_rows}
                command = old_rows[0]["command"] + f"; then {command} --extra-only"
            rows = measure(args.quick, args.extra, args.tasks, stored)
            if args.cost:
                cost = candidate_cost()
        for row in rows:
            row["command"] = command
        if write:
            ROWS.write_text("".join(json.dumps(r) + "\n" for r in rows))
            if args.cost:
                COST.write_text(json.dumps(cost, indent=1) + "\n")
    text = render(rows, command, v1, cost)
    print(text)
    if write:
        (RESULTS_DIR / "auto_safety.md").write_text(text)


# ------------------------------------------------------------------ named runs (the rule)


def main_named(args) -> None:
    """Measure into ``results/NAME.jsonl`` (or re-render it) and write the rule comparison."""
    path = RESULTS_DIR / f"{args.name}.jsonl"
    command = ("python benchmarks/bench_auto_safety.py --name " + args.name
               + " --labelings " + " ".join(map(str, args.labelings))
               + (" --uci" if args.uci else "")
               + (" --tasks " + " ".join(repr(t) for t in args.tasks) if args.tasks else "")
               + (f" --budget {args.budget:g}" if args.budget is not None else ""))
    if args.render:
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        runs = list(dict.fromkeys(r.get("command", "") for r in rows))
        if len(runs) > 1:    # several runs concatenated into one file
            command = ("; ".join(runs) + f" (rows concatenated into {path.name}); python "
                       f"benchmarks/bench_auto_safety.py --name {args.name} --render")
        elif runs:
            command = runs[0]
    else:
        rows = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for row in iter_measure(False, None, args.tasks, labelings=args.labelings,
                               uci_sets=args.uci, budget=args.budget):
                row["command"] = command
                rows.append(row)
                if not args.dry:     # row by row: a long run keeps what it measured
                    with path.open("a" if len(rows) > 1 else "w") as fh:
                        fh.write(json.dumps(row) + "\n")
    text = render_named(rows, command)
    print(text)
    if not args.dry:
        (RESULTS_DIR / f"{args.name}.md").write_text(text)


def rule_variant(row: dict, safety: float = 0.5, sup_safety: float | None = None,
                 score: str = "scores", semi_pick: str = "ordered") -> int:
    """Index of the setting a variant of the rule picks, replayed on a stored row.

    ``sup_safety``: standard errors by which a later supervised candidate must beat
    logistic regression (``safety`` when ``None``; ``inf``: always logistic regression
    among LR/SVC). ``score``: ``'scores'`` (margins) or ``'acc'`` (right or wrong).
    ``semi_pick``: ``'ordered'`` (:func:`semisup.meta.auto.preferred`) or ``'bound'``
    (the semi-supervised setting with the largest ``gain - safety * se`` over the
    supervised pick).
    """
    from semisup.meta.auto import preferred, safe_choice

    if score == "both":
        return _rule_both(row, safety, sup_safety)
    ran = [i for i, v in enumerate(row[score]) if v is not None]
    sup = [i for i in ran if not row["semi"][i]]
    semi = [i for i in ran if row["semi"][i]]
    S = [np.asarray(v) if v is not None else None for v in row[score]]
    s_sup = safety if sup_safety is None else sup_safety
    best_sup = sup[preferred([S[i] for i in sup], s_sup)] if math.isfinite(s_sup) else sup[0]
    if not semi:
        return best_sup
    if semi_pick == "ordered":
        cand = semi[preferred([S[i] for i in semi], safety)]
        return cand if safe_choice(S[best_sup], S[cand], safety)[0] else best_sup
    best, bound = best_sup, 0.0
    for i in semi:
        won, gain, se = safe_choice(S[best_sup], S[i], safety)
        if won and gain - safety * se > bound:
            best, bound = i, gain - safety * se
    return best


def _rule_both(row: dict, safety: float, sup_safety: float | None) -> int:
    """The ordered rule where a challenger must win on the margins and on accuracy."""
    from semisup.safety import safe_choice

    ran = [i for i, v in enumerate(row["scores"]) if v is not None]
    M = {i: np.asarray(row["scores"][i]) for i in ran}
    A = {i: np.asarray(row["acc"][i]) for i in ran}

    def wins(a, c, s):
        return safe_choice(M[a], M[c], s)[0] and safe_choice(A[a], A[c], s)[0]

    sup = [i for i in ran if not row["semi"][i]]
    semi = [i for i in ran if row["semi"][i]]
    s_sup = safety if sup_safety is None else sup_safety
    best_sup = sup[0]
    if math.isfinite(s_sup):
        for i in sup[1:]:
            if wins(best_sup, i, s_sup):
                best_sup = i
    if not semi:
        return best_sup
    cand = semi[0]
    for i in semi[1:]:
        if wins(cand, i, safety):
            cand = i
    return cand if wins(best_sup, cand, safety) else best_sup


def named_setting(row: dict, name: str) -> float:
    return row["true"][row["names"].index(name)]


def cell_table(rows: list[dict], pick) -> np.ndarray:
    """Per cell (task), mean over labelings of: accuracy of ``pick(row)``, LR, SVC, best."""
    by_task = collections.defaultdict(list)
    for row in rows:
        by_task[row["task"]].append(row)
    out = []
    for task_rows in by_task.values():
        out.append(np.mean([(row["true"][pick(row)], named_setting(row, "LogisticRegression"),
                             named_setting(row, "SVC"), max(row["true"]))
                            for row in task_rows], axis=0))
    return 100 * np.array(out)


def checks(A: np.ndarray) -> str:
    """The issue's first two checks on a cell table, as table cells."""
    below = (A[:, 0] < A[:, 1] - 1) | (A[:, 0] < A[:, 2] - 1)
    worst = np.min(A[:, 0] - np.maximum(A[:, 1], A[:, 2]))
    within = int(np.sum(A[:, 0] >= A[:, 3] - 1))
    return (f"{int(below.sum())} | {worst:+.1f} | "
            f"{np.mean(A[:, 0] - np.maximum(A[:, 1], A[:, 2])):+.2f} | "
            f"{within} of {len(A)} | {np.mean(A[:, 0] - A[:, 3]):+.2f}")


#: rule variants weighed (name -> keyword arguments of :func:`rule_variant`)
VARIANTS = {
    "v2 rule (safety 0.5, LR/SVC by the same rule)": {},
    "safety 0": {"safety": 0.0},
    "safety 1": {"safety": 1.0},
    "SVC must win by 1.5 se (this version)": {"sup_safety": 1.5},
    "SVC must win by 3 se": {"sup_safety": 3.0},
    "always LR among supervised": {"sup_safety": math.inf},
    "bound pick": {"semi_pick": "bound"},
    "bound pick, SVC by 3 se": {"semi_pick": "bound", "sup_safety": 3.0},
    "accuracy scores": {"score": "acc"},
    "accuracy scores, safety 1, SVC by 1.5 se": {"score": "acc", "safety": 1.0,
                                                 "sup_safety": 1.5},
    "win on margins and accuracy": {"score": "both"},
    "win on margins and accuracy, SVC by 1.5 se": {"score": "both", "sup_safety": 1.5},
}


def pick_v2(row: dict) -> int:
    """The v2 rule (``safety=0.5`` for every comparison), replayed."""
    return rule_variant(row)


def pick_now(row: dict) -> int:
    """This version's rule with :class:`~semisup.AutoClassifier`'s defaults, replayed."""
    from semisup import AutoClassifier
    from semisup.meta.auto import choose

    p = AutoClassifier().get_params()
    ran = [i for i, v in enumerate(row["scores"]) if v is not None]
    _, chosen = choose([np.asarray(row["scores"][i]) for i in ran],
                       [row["semi"][i] for i in ran], p["safety"], p["supervised_safety"])
    return ran[chosen]


def cpu_ratio(row: dict) -> float:
    """AutoClassifier's CPU time over the median CPU time of one default fit of its
    semi-supervised candidates (same labeling)."""
    return row["cpu"] / np.median([c for c, n, semi in zip(row["fit_cpu"], row["names"],
                                                            row["semi"], strict=True)
                                   if semi and "(" not in n])


def render_named(rows: list[dict], command: str) -> str:
    """The issue's checks for the v2 rule and this version's, per cell, and the variants
    of the rule weighed."""
    by_task = collections.defaultdict(list)
    for row in rows:
        by_task[row["task"]].append(row)
    ratios = {task: float(np.mean([cpu_ratio(r) for r in task_rows]))
              for task, task_rows in by_task.items()}
    out = ["# AutoClassifier: the rule before (v2) and after, on the same held-out scores",
           "", f"Command: `{command}`", "", machine_info(), "",
           f"{len(rows)} labelings in {len(by_task)} cells (a cell: task and number of "
           "labels, accuracy on the unlabeled rows averaged over its labelings). Both rules "
           "are replayed on the held-out scores of one AutoClassifier fit per labeling "
           "(`time_budget` lifted when the command says `--budget`, so that every candidate "
           "ran: the wall-clock budget on a shared machine must not decide). *Below*: more "
           "than 1 point below LogisticRegression() or SVC() (defaults, labeled rows); worst "
           "and mean against the better of the two; *best*: the best candidate setting "
           "fitted alone with all labels. *CPU cost*: AutoClassifier's CPU time (process "
           "time, all threads) over the median CPU time of one default fit of its "
           "semi-supervised candidates.", "",
           "| rule | cells below a counterpart - 1 | worst cell vs better counterpart | "
           "mean vs better counterpart | within 1 of best | mean vs best |",
           "|---|---|---|---|---|---|"]
    for name, pick in (("v2 rule (before)", pick_v2), ("**this version (after)**", pick_now)):
        out.append(f"| {name} | {checks(cell_table(rows, pick))} |")
    out.append(f"\nCPU cost: median {np.median(list(ratios.values())):.1f}x, max "
               f"{max(ratios.values()):.1f}x, over 10x on "
               f"{sum(v > 10 for v in ratios.values())} of {len(ratios)} cells.")
    out += ["", "## Per cell", "",
            "| task | LR | SVC | best | before | after | after chose | CPU s | CPU cost |",
            "|---|---|---|---|---|---|---|---|---|"]
    for task, task_rows in by_task.items():
        before = cell_table(task_rows, pick_v2)[0]
        after = cell_table(task_rows, pick_now)[0]
        flag = " (below)" if after[0] < max(after[1], after[2]) - 1 else ""
        chosen = ", ".join(r["names"][pick_now(r)] for r in task_rows)
        out.append(f"| {task} | {after[1]:.1f} | {after[2]:.1f} | {after[3]:.1f} | "
                   f"{before[0]:.1f} | {after[0]:.1f}{flag} | {chosen} | "
                   f"{np.mean([r['cpu'] for r in task_rows]):.1f} | {ratios[task]:.1f}x |")
    out += ["", "## Variants of the rule weighed on these rows", "",
            "| rule | cells below a counterpart - 1 | worst cell vs better counterpart | "
            "mean vs better counterpart | within 1 of best | mean vs best |",
            "|---|---|---|---|---|---|"]
    for name, kw in VARIANTS.items():
        out.append(f"| {name} | " + checks(cell_table(rows, lambda r, kw=kw:
                                                        rule_variant(r, **kw))) + " |")
    return "\n".join(out) + "\n"

if __name__ == "__main__":
    main()
