"""Which graph should LapRLS/LapSVM use by default? Graph choices across the SSL-book sets.

Protocol.  For every SSL-book set, official split and number of labeled rows (10, 100), and
every graph configuration (edge weights heat/binary/cosine, unnormalised/normalised
Laplacian, ``k``, Laplacian power ``p``, heat-width rule: the global mean rule or per-point
``t='local'``), ``gamma_I`` is chosen by ``GridSearchCV`` with
:class:`semisup.model_selection.LabeledStratifiedKFold` (labeled rows only; every unlabeled
row in every training fold; 3 folds, fewer when a class has fewer labeled rows).  The grid
is ordered so that ties of the (coarse) CV estimate go to the library's default value
``gamma_I = 1e4`` first.  Recorded per configuration: its CV estimate and the accuracy of the
refitted choice on the unlabeled rows of the split (never seen by the search).  The peer is
the supervised method with the same kernel (``gamma_I = 0``: kernel RLS / SVM on the
labeled rows) with ``gamma_A`` tuned by the same CV.

Modes:

* ``sweep`` (LapRLS, every graph configuration of :data:`CONFIGS`);
* ``compare`` (LapSVM with the old and the new default graph against the SVM; LapRLS against
  RLS is read from the sweep's records for the same cases);
* ``defaults`` (no search: LapRLS and LapSVM fitted once with every parameter at its default
  except the graph, :data:`DEFAULT_CANDIDATES`, against the same estimator with
  ``gamma_I = 0``, i.e. what a user gets without tuning).

Every finished (set, labels, split, configuration) is appended at once to
``benchmarks/results/graph_defaults.jsonl`` and skipped by later runs, so the sweep can be
stopped and resumed, and several processes can share the sets.  ``--report`` writes
``benchmarks/results/graph_defaults.md`` from the JSONL file.

Run (CPU-bound, one thread; ~2 min per (set, split, labels) at n = 1,500)::

    OMP_NUM_THREADS=1 nice -n 5 python benchmarks/bench_graph_defaults.py sweep \\
        --sets digit1 usps coil2 bci g241c g241d text --splits 1 2 --labels 10 100
    python benchmarks/bench_graph_defaults.py compare --sets ... --splits 1 2 3
    python benchmarks/bench_graph_defaults.py --report
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from collections import defaultdict

import numpy as np
from sklearn.model_selection import GridSearchCV

sys.path.insert(0, os.path.dirname(__file__))
from _common import RESULTS_DIR, command_line, machine_info, table  # noqa: E402

from semisup import LapRLS, LapSVM  # noqa: E402
from semisup.datasets import load_sslbook, partial_labels  # noqa: E402
from semisup.model_selection import LabeledStratifiedKFold  # noqa: E402

JSONL = RESULTS_DIR / "graph_defaults.jsonl"
REPORT = RESULTS_DIR / "graph_defaults.md"


def _cfg(weight="heat", lap="unnormalized", k=6, p=1, t=None):
    cfg = dict(graph_weight=weight, laplacian=lap, n_neighbors=k, laplacian_power=p, t=t,
               graph_metric="cosine" if weight == "cosine" else "euclidean")
    return cfg


#: the old library default (the paper's graph) first
OLD_DEFAULT = _cfg()
CONFIGS = [
    OLD_DEFAULT, _cfg(k=12), _cfg(lap="normalized"), _cfg(lap="normalized", k=12),
    _cfg("binary"), _cfg("binary", k=12), _cfg("binary", "normalized"),
    _cfg("binary", "normalized", k=12),
    _cfg("cosine", "normalized"), _cfg("cosine", "unnormalized"),
    _cfg(p=2), _cfg(lap="normalized", p=2),
    _cfg(t="local"), _cfg(lap="normalized", t="local"),
]
#: graphs compared as defaults (no tuning) in ``defaults`` mode: the old one first
DEFAULT_CANDIDATES = [OLD_DEFAULT, _cfg(lap="normalized"), _cfg(lap="normalized", p=2)]
# ties of the CV estimate resolve to the first grid point: the default 1e4, then outwards
GAMMA_I = [1e4, 1e3, 1e5, 1e2, 1e6, 1e1]
GAMMA_A_SUPERVISED = [1e-4, 1e-3, 1e-5, 1e-2, 1e-6, 1e-1]


def name(cfg: dict | None) -> str:
    if cfg is None:
        return "supervised (gamma_I = 0)"
    t = "local" if cfg["t"] == "local" else "mean"
    return (f"{cfg['graph_weight']}, {cfg['laplacian'][:5]}., k={cfg['n_neighbors']}, "
            f"p={cfg['laplacian_power']}, t={t}")


def _done() -> set:
    keys = set()
    if JSONL.exists():
        for line in JSONL.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                keys.add((r["mode"], r["estimator"], r["set"], r["n_labeled"], r["split"],
                          r["graph"]))
    return keys


def _cv(y: np.ndarray, seed: int) -> LabeledStratifiedKFold:
    counts = np.unique(y[y != -1], return_counts=True)[1]
    return LabeledStratifiedKFold(int(max(2, min(3, counts.min()))), random_state=seed)


def _search(estimator, grid, X, y, cv, truth, unl) -> dict:
    search = GridSearchCV(estimator, grid, cv=cv)
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, y)
    acc = float(np.mean(search.best_estimator_.transduction_[unl] == truth[unl]))
    return dict(cv=float(search.best_score_), acc=acc,
                best={k: float(v) for k, v in search.best_params_.items()},
                wall=time.perf_counter() - t0, cpu=time.process_time() - c0)


def run_defaults(sets, splits, labels) -> None:
    """One fit per (estimator, graph) at the default ``gamma_A``/``gamma_I``: no search."""
    done = _done()
    for set_name in sets:
        for n_labeled in labels:
            data = load_sslbook(set_name, n_labeled)
            classes = np.unique(data.y)
            truth = partial_labels(data.y, np.arange(data.y.size), classes=classes)
            for s in splits:
                y = partial_labels(data.y, data.splits[s - 1], classes=classes)
                unl = data.unlabeled_splits[s - 1]
                for Est in (LapRLS, LapSVM):
                    for cfg in [None] + DEFAULT_CANDIDATES:
                        key = ("defaults", Est.__name__, set_name, n_labeled, s, name(cfg))
                        if key in done:
                            continue
                        est = Est(gamma_I=0.0) if cfg is None else Est(**cfg)
                        t0, c0 = time.perf_counter(), time.process_time()
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            est.fit(data.X, y)
                        acc = float(np.mean(est.transduction_[unl] == truth[unl]))
                        rec = dict(mode="defaults", estimator=Est.__name__, set=set_name,
                                   n_labeled=n_labeled, split=s, graph=name(cfg), params=cfg,
                                   cv=float("nan"), acc=acc, wall=time.perf_counter() - t0,
                                   cpu=time.process_time() - c0, load=os.getloadavg()[0])
                        with open(JSONL, "a") as fh:
                            fh.write(json.dumps(rec) + "\n")
                        print(set_name, n_labeled, s, Est.__name__, name(cfg), f"{acc:.3f}",
                              f"{rec['wall']:.1f}s", flush=True)


def run(mode: str, sets, splits, labels, new_default: dict | None) -> None:
    if mode == "defaults":
        run_defaults(sets, splits, labels)
        return
    done = _done()
    if mode == "sweep":
        plan = [("LapRLS", cfg) for cfg in [None] + CONFIGS]
    else:
        graphs = [OLD_DEFAULT] + ([new_default] if new_default and new_default != OLD_DEFAULT
                                  else [])
        # LapRLS with these graphs is part of the sweep: the report takes it from there
        plan = [("LapSVM", cfg) for cfg in [None] + graphs]
    for set_name in sets:
        for n_labeled in labels:
            data = load_sslbook(set_name, n_labeled)
            classes = np.unique(data.y)
            truth = partial_labels(data.y, np.arange(data.y.size), classes=classes)
            for s in splits:
                y = partial_labels(data.y, data.splits[s - 1], classes=classes)
                unl = data.unlabeled_splits[s - 1]
                cv = _cv(y, s)
                for est_name, cfg in plan:
                    key = (mode, est_name, set_name, n_labeled, s, name(cfg))
                    if key in done:
                        continue
                    Est = LapRLS if est_name == "LapRLS" else LapSVM
                    if cfg is None:
                        est, grid = Est(gamma_I=0.0), {"gamma_A": GAMMA_A_SUPERVISED}
                    else:
                        est, grid = Est(**cfg), {"gamma_I": GAMMA_I}
                    rec = _search(est, grid, data.X, y, cv, truth, unl)
                    rec.update(mode=mode, estimator=est_name, set=set_name,
                               n_labeled=n_labeled, split=s, graph=name(cfg), params=cfg,
                               load=os.getloadavg()[0])
                    with open(JSONL, "a") as fh:
                        fh.write(json.dumps(rec) + "\n")
                    print(set_name, n_labeled, s, est_name, name(cfg), f"{rec['cv']:.3f}",
                          f"{rec['acc']:.3f}", f"{rec['wall']:.1f}s", flush=True)


# ----------------------------------------------------------------------------- report


def _cases(records):
    """{(estimator, set, labels, split): {graph: record}} keeping complete cases only."""
    cases = defaultdict(dict)
    for r in records:
        cases[(r["estimator"], r["set"], r["n_labeled"], r["split"])][r["graph"]] = r
    return cases


def sweep_table(records) -> tuple[list, list, str | None]:
    cases = _cases(r for r in records if r["mode"] == "sweep")
    graphs = [name(c) for c in CONFIGS]
    sup = name(None)
    full = {k: v for k, v in cases.items() if all(g in v for g in graphs + [sup])}
    stats = {g: dict(win=0, cvwin=0, beats=0, acc=[], rank=[]) for g in graphs}
    for case in full.values():
        accs = np.array([case[g]["acc"] for g in graphs])
        cvs = np.array([case[g]["cv"] for g in graphs])
        # average rank by accuracy on the unlabeled rows (1 = best; ties share)
        order = (-accs).argsort(kind="stable")
        ranks = np.empty(len(graphs))
        ranks[order] = np.arange(1, len(graphs) + 1)
        for v in np.unique(accs):
            ranks[accs == v] = ranks[accs == v].mean()
        for i, g in enumerate(graphs):
            st = stats[g]
            st["win"] += accs[i] >= accs.max() - 1e-12
            st["cvwin"] += cvs[i] >= cvs.max() - 1e-12
            st["beats"] += case[g]["acc"] > case[sup]["acc"]
            st["acc"].append(accs[i])
            st["rank"].append(ranks[i])
    n = len(full)
    rows = []
    for g in graphs:
        st = stats[g]
        if not st["acc"]:
            continue
        rows.append([g, f"{np.mean(st['acc']):.4f}", f"{np.mean(st['rank']):.2f}",
                     int(st["win"]), int(st["cvwin"]), f"{int(st['beats'])}/{n}"])
    rows.sort(key=lambda r: float(r[2]))
    sup_acc = np.mean([c[sup]["acc"] for c in full.values()]) if full else float("nan")
    rows.append([sup + " (peer)", f"{sup_acc:.4f}", "-", "-", "-", "-"])
    best = rows[0][0] if rows and n else None
    return rows, sorted(full), best


def per_set_table(records, graphs) -> list:
    cases = _cases(r for r in records if r["mode"] == "sweep")
    by = defaultdict(lambda: defaultdict(list))
    for (_, s, nl, _), case in cases.items():
        for g in graphs + [name(None)]:
            if g in case:
                by[(s, nl)][g].append(case[g]["acc"])
    rows = []
    for (s, nl), d in sorted(by.items()):
        rows.append([f"{s} / {nl}", len(d[graphs[0]])] +
                    [f"{np.mean(d[g]):.3f}" if d[g] else "" for g in graphs + [name(None)]])
    return rows


def compare_table(records) -> list:
    svm = [r for r in records if r["mode"] == "compare"]
    graphs = sorted({r["graph"] for r in svm} - {name(None)})
    # LapRLS: the sweep's records for the same graphs and cases
    svm_cases = {(r["set"], r["n_labeled"], r["split"]) for r in svm}
    rls = [r for r in records if r["mode"] == "sweep" and r["graph"] in graphs + [name(None)]
           and (r["set"], r["n_labeled"], r["split"]) in svm_cases]
    cases = _cases(svm + rls)
    sup = name(None)
    rows = []
    for est in ("LapRLS", "LapSVM"):
        for g in graphs:
            sel = [c for (e, *_), c in cases.items() if e == est and g in c and sup in c]
            if not sel:
                continue
            diff = np.array([c[g]["acc"] - c[sup]["acc"] for c in sel])
            rows.append([est, g, f"{int((diff > 0).sum())}/{len(sel)}",
                         f"{int((diff < 0).sum())}", f"{100 * diff.mean():+.2f}",
                         f"{100 * np.median(diff):+.2f}",
                         f"{np.mean([c[g]['acc'] for c in sel]):.4f}",
                         f"{np.mean([c[sup]['acc'] for c in sel]):.4f}"])
    return rows


def defaults_table(records) -> list:
    """Untuned fits: each candidate graph against the old default and against ``gamma_I=0``."""
    cases = _cases(r for r in records if r["mode"] == "defaults")
    old, sup = name(OLD_DEFAULT), name(None)
    rows = []
    for est in ("LapRLS", "LapSVM"):
        for g in [name(c) for c in DEFAULT_CANDIDATES]:
            sel = [c for (e, *_), c in cases.items() if e == est and all(
                k in c for k in (g, old, sup))]
            if not sel:
                continue
            acc = np.array([c[g]["acc"] for c in sel])
            d_old = acc - np.array([c[old]["acc"] for c in sel])
            d_sup = acc - np.array([c[sup]["acc"] for c in sel])
            rows.append([est, g, len(sel), f"{acc.mean():.4f}",
                         f"{int((d_old > 0).sum())}/{int((d_old < 0).sum())}",
                         f"{100 * d_old.mean():+.2f}",
                         f"{int((d_sup > 0).sum())}/{int((d_sup < 0).sum())}",
                         f"{100 * d_sup.mean():+.2f}"])
    return rows


def report() -> None:
    records = [json.loads(x) for x in JSONL.read_text().splitlines() if x.strip()]
    graphs = [name(c) for c in CONFIGS]
    rows, cases, best = sweep_table(records)
    sets = sorted({c[1] for c in cases})
    loads = [r["load"] for r in records]
    cpu = sum(r["cpu"] for r in records)
    lines = [
        "# Graph defaults of LapRLS / LapSVM across the SSL-book sets", "",
        "Commands (resumable; results appended to `graph_defaults.jsonl`):", "",
        "```",
        "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \\",
        "  nice -n 5 python benchmarks/bench_graph_defaults.py sweep --sets <set> "
        "--splits 1 2 --labels 10 100",
        "nice -n 5 python benchmarks/bench_graph_defaults.py compare --sets <set> "
        "--splits 1 2 3 --labels 10 100",
        "python benchmarks/bench_graph_defaults.py --report",
        "```", "",
        machine_info(), "",
        f"Load average (1 min) during the runs: {min(loads):.1f} to {max(loads):.1f}; "
        f"process CPU time of all searches {cpu / 60:.1f} min. Last report: "
        f"`{command_line()}`.", "",
        "## Sweep: LapRLS with each graph, `gamma_I` chosen by labeled-only CV", "",
        f"{len(cases)} complete cases (set x labeled rows x official split) over the sets "
        f"{', '.join(sets)}. `gamma_I` in {GAMMA_I} (this order: CV ties go to the "
        "default 1e4), `gamma_A = 1e-4`, rbf kernel with the default width; "
        "`LabeledStratifiedKFold(3)` over the labeled rows (2 folds when a class has 2 "
        "labeled rows). Peer: kernel RLS (`gamma_I = 0`) with `gamma_A` in "
        f"{GAMMA_A_SUPERVISED} chosen by the same CV. Columns: mean accuracy on the "
        "unlabeled rows of the refitted CV choice; mean rank among the graphs (1 = best, "
        "ties share); wins = cases where the graph has the best unlabeled accuracy (ties: "
        "all win); CV wins = best CV estimate; beats supervised = unlabeled accuracy above "
        "the peer's.", "",
        table(["graph (weights, Laplacian, k, power, heat width)", "mean acc. unlabeled",
               "mean rank", "wins", "CV wins", "beats supervised"], rows), "",
        f"Best mean rank: **{best}**.", "",
        "### Mean accuracy on the unlabeled rows per set / labeled rows", "",
        table(["set / l", "splits"] + graphs + ["supervised"], per_set_table(records, graphs)),
        "",
    ]
    comp = compare_table(records)
    if comp:
        lines += [
            "## LapRLS / LapSVM against RLS / SVM: old and new default graph", "",
            "Same protocol (graph fixed, `gamma_I` by CV; supervised: `gamma_I = 0`, "
            "`gamma_A` by CV). Wins = cases where the semi-supervised method has the higher "
            "accuracy on the unlabeled rows; differences in points.", "",
            table(["estimator", "graph", "beats supervised", "loses", "mean diff.",
                   "median diff.", "mean acc.", "supervised mean acc."], comp), "",
        ]
    dflt = defaults_table(records)
    if dflt:
        cases = {(r["set"], r["n_labeled"]) for r in records if r["mode"] == "defaults"}
        lines += [
            "## Untuned: every parameter at its default except the graph", "",
            "One fit per case (no search): `gamma_A = 1e-4`, `gamma_I = 1e4` (LapRLS) / the "
            "LapSVM defaults; peer = the same estimator with `gamma_I = 0` (kernel RLS / SVM "
            "on the labeled rows). Sets / labels: "
            f"{', '.join(f'{s}/{nl}' for s, nl in sorted(cases))}. Columns: cases; mean "
            "accuracy on the unlabeled rows; wins/losses and mean difference (points) "
            "against the old default graph and against `gamma_I = 0`.", "",
            table(["estimator", "graph", "cases", "mean acc. unlabeled",
                   "vs old default (wins/losses)", "mean diff. vs old",
                   "vs gamma_I = 0 (wins/losses)", "mean diff. vs gamma_I = 0"], dflt), "",
        ]
    lines += [
        "## Decision", "",
        "`LapRLS` now defaults to the normalised Laplacian (`laplacian='normalized'`, power 1): "
        "it beats the old graph in most untuned fits and ranks above it when `gamma_I` is "
        "tuned. Its square (power 2) scores higher on these sets but misclassifies 12-46 % "
        "of two moons with one label per moon at the default weights "
        "(`tests/test_graph_defaults.py`), so it is not the default. `LapSVM` keeps the "
        "paper's graph: only untuned evidence exists for it (no tuned sweep was run).", ""]
    REPORT.write_text("\n".join(lines))
    print("\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", nargs="?", choices=("sweep", "compare", "defaults"))
    ap.add_argument("--sets", nargs="+", default=["digit1", "usps", "coil2", "bci", "g241c",
                                                  "g241d", "text"])
    ap.add_argument("--splits", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--labels", nargs="+", type=int, default=[10, 100])
    ap.add_argument("--new-default", type=json.loads, default=None,
                    help="compare mode: the new default graph as a JSON dict of LapRLS "
                         "parameters (default: the estimators' current defaults)")
    ap.add_argument("--report", action="store_true")
    args = ap.parse_args()
    if args.mode:
        new = args.new_default
        if new is None:
            p = LapRLS().get_params()
            new = {k: p[k] for k in OLD_DEFAULT}
        new = {**OLD_DEFAULT, **new}
        run(args.mode, args.sets, args.splits, args.labels, new)
    if args.report:
        report()


if __name__ == "__main__":
    main()
