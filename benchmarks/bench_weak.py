"""Unlabeled data that is only partly relevant: thesis chapter 7 (USSL) reproduction.

Parts (``--part``):

* ``synthetic`` -- chapter 7's 2-D Gaussians (digest 6.6): classes centred at (+-0.3, 0)
  with std 0.13 (the thesis says "centred at -0.3, 0, +0.3"; we read it as one axis), the
  irrelevant points centred at 0 with std 0.1, 0.2 or 0.3; per class 5 labeled and 30
  relevant unlabeled points, plus 30 irrelevant unlabeled points; 500 test points per
  class; ``C_L = C_U = 100``, ``eps = 0.2`` (no CV, as the thesis); 20 repetitions.
* ``usps`` / ``mnist`` -- Tables 7.1 / 7.2: digits 5 vs 8, one other digit irrelevant.
  Per class 20 labeled and 30 relevant unlabeled images, plus 30 irrelevant images (the
  thesis's ambiguous counts read per class: n = 130, the size the digest infers); test:
  400 images of 5/8 (200 each) from the test split (USPS: topped up with unused training
  images, its test split has 160 fives).  Pixels scaled so that the mean
  squared row norm is 1.  Hyper-parameters by 3-fold CV on the labeled rows
  (:class:`semisup.model_selection.LabeledStratifiedKFold`) over a reduced grid (see
  ``GRID``: C_L, C_U in {1, 10, 100}, epsilon in ``--eps-grid``, default 0.2 -- the
  thesis's grid, {1, 10, 100, 1000}^2 x {0.1, .., 0.4}, is out of reach on a shared
  2-core machine); the SDP route uses the scalable route's chosen values (an SDP per grid
  point and fold is out of reach).  Columns: USVM (all unlabeled rows as universum,
  squared route), SSL (our TSVM), USSL SDP (hinge, rounded + refit), USSL scalable.
* ``ch6`` -- Table 6.1's toy: MNIST 1 vs 7 with 4 labels, 200 printed letters I, M, N
  rendered with matplotlib's fonts as the weakly related unlabeled rows, 500 test
  digits; SVM vs STL vs SSTL with the thesis's p = 50, lambda = gamma = beta = 10.
* ``scale`` -- the scalable route on MNIST 5 vs 8 with 100x the unlabeled rows
  (3,000 relevant per class + 3,000 irrelevant), and the time on 100,000 rows.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import GridSearchCV

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS_DIR, Contention, PeakRSS, report, table  # noqa: E402

from semisup.linear import TransductiveSVM  # noqa: E402
from semisup.model_selection import LabeledStratifiedKFold  # noqa: E402
from semisup.weak import MixtureSSL, UniversumSVM  # noqa: E402

warnings.simplefilter("ignore")

GRID = {"C_L": [1.0, 10.0, 100.0], "C_U": [1.0, 10.0, 100.0], "epsilon": [0.2]}
FIXED = {"C": 10.0, "epsilon": 0.2}


def tsvm_for(C_L: float, C_U: float, l: int, u: int) -> TransductiveSVM:
    """The TSVM whose objective is Problem I without the irrelevant option (same C's)."""
    lam = 1.0 / (2 * l * C_L)
    lam_u = 2 * u * lam * C_U
    return TransductiveSVM(lam=lam, lam_u=lam_u, lam_u_init=1e-5 * lam_u)


class TSVMC(TransductiveSVM):
    """TSVM parametrised by (C_L, C_U) as MixtureSSL, for a shared CV grid."""

    def __init__(self, C_L: float = 1.0, C_U: float = 1.0):
        self.C_L = C_L
        self.C_U = C_U
        super().__init__()

    def fit(self, X, y):
        y = np.asarray(y)
        l, u = int(np.sum(y != -1)), int(np.sum(y == -1))
        base = tsvm_for(self.C_L, self.C_U, l, u)
        self.lam, self.lam_u, self.lam_u_init = base.lam, base.lam_u, base.lam_u_init
        return super().fit(X, y)


# ----------------------------------------------------------------------------- synthetic


def synthetic(rng, std_irr: float, n_lab=5, n_rel=30, n_irr=30, n_test=500):
    def cls(c, k):
        return rng.normal(size=(k, 2)) * 0.13 + np.array([c, 0.0])
    X = np.r_[cls(0.3, n_lab), cls(-0.3, n_lab), cls(0.3, n_rel), cls(-0.3, n_rel),
              rng.normal(size=(n_irr, 2)) * std_irr]
    y = np.r_[np.ones(n_lab), np.zeros(n_lab), -np.ones(2 * n_rel + n_irr)].astype(int)
    irrelevant = np.r_[np.zeros(2 * n_lab + 2 * n_rel, bool), np.ones(n_irr, bool)]
    Xt = np.r_[cls(0.3, n_test), cls(-0.3, n_test)]
    yt = np.r_[np.ones(n_test), np.zeros(n_test)].astype(int)
    return X, y, irrelevant, Xt, yt


def run_synthetic(reps: int, sdp_reps: int, stds=(0.1, 0.2, 0.3), tag: str = "") -> str:
    """Chapter 7 synthetic, resumable: one JSON line per (spread, repetition, route).

    Repetition ``rep`` of spread ``std`` draws from ``default_rng([rep, round(100 std)])``;
    the scalable columns run for every repetition first, the SDP route on the first
    ``sdp_reps`` afterwards.
    """
    log = RESULTS_DIR / f"weak_synthetic{tag}_runs.jsonl"
    done = {(r["std"], r["rep"], r["kind"]) for r in _load_jsonl(log)}

    def task(std, rep):
        return synthetic(np.random.default_rng([rep, round(100 * std)]), std)

    def fit_one(m, X, y, irr, Xt, yt):
        _, wall, cpu = _timed(m.fit, X, y)
        out = {"err": 100 * (1 - m.score(Xt, yt)), "wall": wall, "cpu": cpu}
        if isinstance(m, MixtureSSL):
            out["irr_flagged"] = 100 * float(np.mean(~m.relevant_[irr]))
            out["rel_flagged"] = 100 * float(np.mean(~m.relevant_[(~irr) & (y == -1)]))
        return out

    for kind, n_rep in (("scalable", reps), ("sdp", sdp_reps)):
        for rep in range(n_rep):
            for std in stds:
                if (std, rep, kind) in done:
                    continue
                X, y, irr, Xt, yt = task(std, rep)
                l, u = int(np.sum(y != -1)), int(np.sum(y == -1))
                rec = {"std": std, "rep": rep, "kind": kind}
                if kind == "scalable":
                    models = {"USVM": UniversumSVM(C=100.0, C_universum=100.0, epsilon=0.2),
                              "SSL": tsvm_for(100.0, 100.0, l, u),
                              "USSL": MixtureSSL(C_L=100.0, C_U=100.0, epsilon=0.2)}
                else:
                    models = {"USSL-SDP": MixtureSSL(C_L=100.0, C_U=100.0, epsilon=0.2,
                                                     method="sdp")}
                for name, m in models.items():
                    rec[name] = fit_one(m, X, y, irr, Xt, yt)
                _append_jsonl(log, rec)
                print(std, rep, kind, {k: round(v["err"], 2) for k, v in rec.items()
                                       if isinstance(v, dict)}, flush=True)
    return synthetic_table(tag, stds)


def synthetic_table(tag: str, stds) -> str:
    recs = _load_jsonl(RESULTS_DIR / f"weak_synthetic{tag}_runs.jsonl")
    rows, n_below = [], 0
    for std in stds:
        sc = [r for r in recs if r["std"] == std and r["kind"] == "scalable"]
        sd = [r for r in recs if r["std"] == std and r["kind"] == "sdp"]
        if not sc:
            continue
        err = {k: np.array([r[k]["err"] for r in sc]) for k in ("USVM", "SSL", "USSL")}
        sdp_err = np.array([r["USSL-SDP"]["err"] for r in sd])
        ssl_paired = np.array([r["SSL"]["err"] for r in sc if r["rep"] < len(sd)])
        below = err["USSL"].mean() < err["SSL"].mean()
        n_below += int(below)

        def fl(rs, key):
            return (f"{np.mean([r[key]['irr_flagged'] for r in rs]):.0f}% / "
                    f"{np.mean([r[key]['rel_flagged'] for r in rs]):.0f}%") if rs else "-"
        rows.append([std, len(sc)] + [f"{v.mean():.2f} ± {v.std():.2f}" for v in err.values()]
                    + [f"{sdp_err.mean():.2f} ± {sdp_err.std():.2f} (n={len(sd)}; SSL on "
                       f"the same draws {ssl_paired.mean():.2f})" if len(sd) else "-",
                       "yes" if below else "no", fl(sc, "USSL"), fl(sd, "USSL-SDP"),
                       " / ".join(f"{np.mean([r[k]['cpu'] for r in sc]):.2g}"
                                  for k in ("USVM", "SSL", "USSL"))
                       + (f" / {np.mean([r['USSL-SDP']['cpu'] for r in sd]):.2g}" if sd
                          else "")])
    headers = ["irrelevant std", "reps", "USVM err %", "SSL (TSVM) err %",
               "USSL scalable err %", "USSL SDP err %", "scalable < SSL",
               "scalable: irrelevant / relevant unlabeled flagged",
               "SDP: irrelevant / relevant unlabeled flagged",
               "CPU s per fit USVM / SSL / scalable / SDP"]
    return (f"## Chapter 7 synthetic (C_L = C_U = 100, eps = 0.2, no CV; USSL scalable below "
            f"SSL in {n_below} of {len(rows)} spreads)\n\n" + table(headers, rows))


# ----------------------------------------------------------------------------- digits


def load_digits_split(name: str):
    from semisup.datasets import load_mnist, load_usps

    if name == "usps":
        (Xtr, ytr), (Xte, yte) = load_usps(split="train"), load_usps(split="test")
    else:
        Xtr, ytr = load_mnist(split="train")
        Xte, yte = load_mnist(split="test")
    Xtr = Xtr.toarray() if hasattr(Xtr, "toarray") else np.asarray(Xtr, dtype=float)
    Xte = Xte.toarray() if hasattr(Xte, "toarray") else np.asarray(Xte, dtype=float)
    lo = Xtr.min()
    Xtr, Xte = Xtr - lo, Xte - lo
    scale = np.sqrt(np.mean(np.sum(Xtr ** 2, axis=1)))
    return Xtr / scale, np.asarray(ytr).astype(int), Xte / scale, np.asarray(yte).astype(int)


def digit_task(data, irrelevant_digit: int, rng, n_lab=20, n_rel=30, n_irr=30, n_test=200):
    Xtr, ytr, Xte, yte = data
    pick = []
    for d in (8, 5):
        idx = rng.permutation(np.flatnonzero(ytr == d))
        pick.append((idx[:n_lab], idx[n_lab:n_lab + n_rel]))
    irr = rng.choice(np.flatnonzero(ytr == irrelevant_digit), n_irr, replace=False)
    lab = np.r_[pick[0][0], pick[1][0]]
    unl = np.r_[pick[0][1], pick[1][1], irr]
    X = np.r_[Xtr[lab], Xtr[unl]]
    y = np.r_[np.where(ytr[lab] == 5, 1, 0), -np.ones(unl.size, dtype=int)]
    # test: n_test images per class from the test split, topped up with training images
    # that are not in the task (USPS's test split has only 160 fives)
    used = np.zeros(ytr.size, bool)
    used[np.r_[lab, unl]] = True
    Xt, yt = [], []
    for d in (5, 8):
        pool_te = np.flatnonzero(yte == d)
        take = rng.choice(pool_te, min(n_test, pool_te.size), replace=False)
        Xt.append(Xte[take])
        rest = n_test - take.size
        if rest:
            pool_tr = np.flatnonzero((ytr == d) & ~used)
            Xt.append(Xtr[rng.choice(pool_tr, rest, replace=False)])
        yt.append(np.full(n_test, 1 if d == 5 else 0))
    is_irr = np.r_[np.zeros(lab.size + 2 * n_rel, bool), np.ones(n_irr, bool)]
    return X, y, is_irr, np.vstack(Xt), np.concatenate(yt)


def cv_fit(est, grid, X, y, seed):
    search = GridSearchCV(est, grid, cv=LabeledStratifiedKFold(3, random_state=seed),
                          error_score=0.0)
    search.fit(X, y)
    return search.best_estimator_, search.best_params_


def _load_jsonl(path: Path) -> list:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _append_jsonl(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fh.write(json.dumps(record) + "\n")


def _timed(fn, *args, **kwargs):
    t0, c0 = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0, time.process_time() - c0


def run_digits(name: str, runs: int, sdp_runs: int, digits, tag: str = "",
               sdp_only: bool = False) -> str:
    """Tables 7.1 / 7.2, resumable: one JSON line per (digit, run, column group).

    Runs are the outer loop, so a cut leaves every digit with the same number of runs.
    ``sdp_only`` fills in the SDP column for the runs whose CV columns are done (it reuses
    the scalable route's CV choice: an SDP per grid point and fold is out of reach).
    """
    log = RESULTS_DIR / f"weak_{name}{tag}_runs.jsonl"
    done = {(r["digit"], r["run"], r["kind"]) for r in _load_jsonl(log)}
    data = load_digits_split(name)
    usvm_grid = {"C": GRID["C_L"], "C_universum": GRID["C_U"], "epsilon": GRID["epsilon"]}
    for run in range(runs):
        for dig in digits:
            # the task depends on (digit, run) only, whichever process draws it
            X, y, is_irr, Xt, yt = digit_task(data, dig, np.random.default_rng([dig, run]))
            if not sdp_only and (dig, run, "cv") not in done:
                rec = {"digit": dig, "run": run, "kind": "cv", "grid": GRID}
                for col, est, grid in (
                        ("USVM", UniversumSVM(), usvm_grid),
                        ("SSL", TSVMC(), {"C_L": GRID["C_L"], "C_U": GRID["C_U"]}),
                        ("USSL", MixtureSSL(), GRID)):
                    (model, best), wall, cpu = _timed(cv_fit, est, grid, X, y, run)
                    rec[col] = {"acc": 100 * model.score(Xt, yt), "best": best,
                                "cv_wall": wall, "cv_cpu": cpu}
                    if col == "USSL":
                        rec[col]["irr_flagged"] = 100 * float(np.mean(~model.relevant_[is_irr]))
                        rel_unl = (~is_irr) & (y == -1)
                        rec[col]["rel_flagged"] = 100 * float(np.mean(~model.relevant_[rel_unl]))
                        _, w1, c1 = _timed(model.fit, X, y)
                        rec[col]["fit_wall"], rec[col]["fit_cpu"] = w1, c1
                # the same three models at one fixed setting (no CV): separates the
                # methods from the noise of CV on 40 labeled rows
                l, u = int(np.sum(y != -1)), int(np.sum(y == -1))
                fixed = {"USVM": UniversumSVM(C=FIXED["C"], C_universum=FIXED["C"],
                                              epsilon=FIXED["epsilon"]),
                         "SSL": tsvm_for(FIXED["C"], FIXED["C"], l, u),
                         "USSL": MixtureSSL(C_L=FIXED["C"], C_U=FIXED["C"],
                                            epsilon=FIXED["epsilon"])}
                rec["fixed"] = {"setting": FIXED}
                for col, model in fixed.items():
                    model.fit(X, y)
                    rec["fixed"][col] = 100 * model.score(Xt, yt)
                rec["fixed"]["irr_flagged"] = 100 * float(
                    np.mean(~fixed["USSL"].relevant_[is_irr]))
                _append_jsonl(log, rec)
                done.add((dig, run, "cv"))
                print(dig, run, {k: round(rec[k]["acc"], 2) for k in ("USVM", "SSL", "USSL")},
                      flush=True)
            if run < sdp_runs and (dig, run, "sdp") not in done and (dig, run, "cv") in done:
                cv = next(r for r in _load_jsonl(log)
                          if (r["digit"], r["run"], r["kind"]) == (dig, run, "cv"))
                sdp, wall, cpu = _timed(MixtureSSL(method="sdp", **cv["USSL"]["best"]).fit,
                                        X, y)
                _append_jsonl(log, {"digit": dig, "run": run, "kind": "sdp",
                                    "acc": 100 * sdp.score(Xt, yt),
                                    "irr_flagged": 100 * float(np.mean(~sdp.relevant_[is_irr])),
                                    "wall": wall, "cpu": cpu})
                done.add((dig, run, "sdp"))
                print(dig, run, "sdp", flush=True)
    return digits_table(name, tag, digits)


THESIS = {"usps": {0: (67.05, 85.05, 89.85), 1: (71.45, 83.61, 89.23), 2: (69.50, 84.44, 89.81),
                   3: (70.43, 84.75, 89.65), 4: (65.80, 85.12, 86.69), 6: (64.80, 78.45, 83.70),
                   7: (66.93, 87.37, 90.42), 9: (72.37, 82.86, 85.13)},
          "mnist": {0: (45.25, 53.25, 58.25), 1: (52.77, 54.10, 60.25), 2: (54.58, 56.92, 57.67),
                    3: (55.14, 52.09, 57.25), 4: (56.65, 57.12, 59.25), 6: (52.75, 54.50, 57.67),
                    7: (60.51, 58.09, 68.50), 9: (59.25, 48.25, 63.00)}}


def digits_table(name: str, tag: str, digits) -> str:
    """Markdown table from the JSON lines (whatever runs are done)."""
    recs = _load_jsonl(RESULTS_DIR / f"weak_{name}{tag}_runs.jsonl")
    rows, wins, n_sets, runs_seen, fixed_wins = [], 0, 0, set(), 0
    for dig in digits:
        cv = [r for r in recs if r["digit"] == dig and r["kind"] == "cv"]
        sdp = [r for r in recs if r["digit"] == dig and r["kind"] == "sdp"]
        if not cv:
            continue
        runs_seen.add(len(cv))
        acc = {k: np.array([r[k]["acc"] for r in cv]) for k in ("USVM", "SSL", "USSL")}
        m = {k: v.mean() for k, v in acc.items()}
        win = m["USSL"] > max(m["USVM"], m["SSL"])
        wins += int(win)
        n_sets += 1
        fx = [r["fixed"] for r in cv if "fixed" in r]
        fx_m = {k: np.mean([f[k] for f in fx]) for k in ("USVM", "SSL", "USSL")} if fx else {}
        fx_win = bool(fx) and fx_m["USSL"] > max(fx_m["USVM"], fx_m["SSL"])
        fixed_wins += int(fx_win)
        fx_s = (" / ".join(f"{fx_m[k]:.2f}" for k in ("USVM", "SSL", "USSL"))
                + (" (USSL best)" if fx_win else "")) if fx else "-"
        th = THESIS[name][dig]
        sdp_s = (f"{np.mean([r['acc'] for r in sdp]):.2f} (n={len(sdp)}, "
                 f"{np.mean([r['irr_flagged'] for r in sdp]):.0f}% irr. flagged)") if sdp else "-"
        rows.append([dig, len(cv)] + [f"{v.mean():.2f} ± {v.std():.2f}" for v in acc.values()]
                    + [sdp_s, "yes" if win else "no",
                       f"{np.mean([r['USSL']['irr_flagged'] for r in cv]):.0f}% / "
                       f"{np.mean([r['USSL']['rel_flagged'] for r in cv]):.0f}%",
                       f"{np.mean([r['USSL']['fit_wall'] for r in cv]):.2f} / "
                       f"{np.mean([r['USSL']['fit_cpu'] for r in cv]):.2f}",
                       fx_s, f"{th[0]:.2f} / {th[1]:.2f} / {th[2]:.2f}"])
    headers = ["irrelevant digit", "runs", "USVM", "SSL (TSVM)", "USSL scalable",
               "USSL SDP (scalable's CV choice)", "USSL scalable > both",
               "scalable: irrelevant / relevant unlabeled flagged",
               "USSL fit s wall / CPU",
               f"no CV (C = {FIXED['C']:g}, eps = {FIXED['epsilon']:g}): USVM / SSL / USSL",
               "thesis USVM / SSL / USSL"]
    grid = recs[0]["grid"] if recs else GRID
    return (f"## {name.upper()} 5 vs 8 (accuracy % on 400 test digits, mean ± std over runs; "
            f"USSL scalable beats both baselines on {wins} of {n_sets} sets with CV, "
            f"on {fixed_wins} of {n_sets} without)\n\n"
            f"CV: 3-fold LabeledStratifiedKFold on the 40 labeled rows; grid {grid}.\n\n"
            + table(headers, rows))


# ----------------------------------------------------------------------------- scale


def run_scale() -> str:
    data = load_digits_split("mnist")
    rows = []
    for dig in (0, 7):
        for factor in (1, 100):
            rng = np.random.default_rng(dig)
            X, y, is_irr, Xt, yt = digit_task(data, dig, rng, n_rel=30 * factor,
                                              n_irr=30 * factor)
            out = {}
            for name, est in (("SSL", tsvm_for(10.0, 10.0, int(np.sum(y != -1)),
                                               int(np.sum(y == -1)))),
                              ("USSL", MixtureSSL(C_L=10.0, C_U=10.0, epsilon=0.1))):
                with PeakRSS() as mem:
                    t0 = time.perf_counter()
                    est.fit(X, y)
                    secs = time.perf_counter() - t0
                out[name] = (100 * est.score(Xt, yt), secs, mem.peak / 2 ** 20)
            rows.append([dig, X.shape[0], *[f"{a:.2f}" for a in (out["SSL"][0],
                                                                out["USSL"][0])],
                         f"{out['USSL'][1]:.2f}", f"{out['USSL'][1] / out['SSL'][1]:.2f}",
                         f"{out['USSL'][2]:.0f}"])
    # 100,000 rows: 2-D synthetic mixture lifted to 50 dimensions
    rng = np.random.default_rng(0)
    n = 100_000
    X, y, _, Xt, yt = synthetic(rng, 0.2, n_lab=50, n_rel=n // 3, n_irr=n - 2 * (n // 3) - 100)
    lift = rng.normal(size=(2, 50))
    X50 = X @ lift + 0.05 * rng.normal(size=(X.shape[0], 50))
    Xt50 = Xt @ lift + 0.05 * rng.normal(size=(Xt.shape[0], 50))
    out = {}
    for name, est in (("SSL", tsvm_for(10.0, 10.0, 100, X.shape[0] - 100)),
                      ("USSL", MixtureSSL(C_L=10.0, C_U=10.0, epsilon=0.2))):
        with PeakRSS() as mem:
            t0 = time.perf_counter()
            est.fit(X50, y)
            secs = time.perf_counter() - t0
        out[name] = (100 * est.score(Xt50, yt), secs, mem.peak / 2 ** 20)
    rows.append(["synthetic 50-D", X.shape[0], f"{out['SSL'][0]:.2f}", f"{out['USSL'][0]:.2f}",
                 f"{out['USSL'][1]:.2f}", f"{out['USSL'][1] / out['SSL'][1]:.2f}",
                 f"{out['USSL'][2]:.0f}"])
    headers = ["irrelevant digit", "rows", "SSL acc %", "USSL acc %", "USSL s",
               "time USSL / SSL", "USSL peak RSS MiB"]
    return ("## Scalable route: 1x and 100x unlabeled rows (MNIST 5 vs 8, C_L = C_U = 10, "
            "no CV), and 100,000 rows\n\n" + table(headers, rows))


# ----------------------------------------------------------------------------- chapter 6


def render_letters(n: int, rng, letters: str = "IMN", size: int = 28) -> np.ndarray:
    """``n`` printed capital letters at ``size x size``, values in [0, 1] (digest 5.7).

    Drawn with matplotlib's bundled DejaVu fonts (sans and serif, normal and bold), at a
    random size, shift and small rotation, like a printed character centred as MNIST's.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    out = np.empty((n, size * size))
    families = ("DejaVu Sans", "DejaVu Serif")
    for k in range(n):
        fig = Figure(figsize=(1, 1), dpi=size)
        canvas = FigureCanvasAgg(fig)
        fig.patch.set_facecolor("black")
        fig.text(0.5 + rng.uniform(-0.06, 0.06), 0.5 + rng.uniform(-0.06, 0.06),
                 letters[k % len(letters)], color="white", ha="center", va="center",
                 fontsize=rng.uniform(46, 58), family=families[rng.integers(2)],
                 weight=("normal", "bold")[rng.integers(2)], rotation=rng.uniform(-12, 12))
        canvas.draw()
        img = np.asarray(canvas.buffer_rgba())[:, :, 0].astype(float) / 255.0
        out[k] = img[:size, :size].ravel()
    return out


def run_chapter6(runs: int) -> str:
    from sklearn.svm import SVC

    from semisup.datasets import load_mnist
    from semisup.weak import SelfTaughtClassifier, SupervisedSelfTaught

    Xtr, ytr = load_mnist(digits=[1, 7], split="train", sparse=False)
    Xte, yte = load_mnist(digits=[1, 7], split="test", sparse=False)
    letters = render_letters(200, np.random.default_rng(0))
    acc = {"SVM": [], "STL": [], "SSTL": []}
    secs = {k: 0.0 for k in acc}
    # thesis toy: p = 50, lambda = gamma = beta = 10, i.e. C = lambda / (2 gamma) = 0.5 and
    # supervised_weight = 2 gamma = 20 (SupervisedSelfTaught's parametrisation)
    for run in range(runs):
        rng = np.random.default_rng(run)
        lab = np.r_[rng.choice(np.flatnonzero(ytr == 1), 2, replace=False),
                    rng.choice(np.flatnonzero(ytr == 7), 2, replace=False)]
        test = rng.choice(yte.size, 500, replace=False)
        X = np.r_[Xtr[lab], letters]
        y = np.r_[ytr[lab], -np.ones(len(letters), dtype=int)]
        models = {"SVM": None,
                  "STL": SelfTaughtClassifier(n_components=50, beta=10.0, C=0.5,
                                              random_state=run),
                  "SSTL": SupervisedSelfTaught(n_components=50, beta=10.0, C=0.5,
                                               supervised_weight=20.0, max_iter=10,
                                               random_state=run)}
        for name, m in models.items():
            t0 = time.perf_counter()
            if m is None:
                m = SVC(kernel="linear", C=0.5).fit(Xtr[lab], ytr[lab])
            else:
                m.fit(X, y)
            secs[name] += time.perf_counter() - t0
            acc[name].append(100 * m.score(Xte[test], yte[test]))
    headers = ["method", "accuracy % (mean ± std)", "thesis Table 6.1", "s per fit"]
    thesis = {"SVM": 83.07, "STL": 78.23, "SSTL": 85.09}
    rows = [[k, f"{np.mean(v):.2f} ± {np.std(v):.2f}", thesis[k], f"{secs[k] / runs:.2g}"]
            for k, v in acc.items()]
    return (f"## Chapter 6 toy: MNIST 1 vs 7 (4 labels), 200 rendered letters I/M/N as "
            f"unlabeled rows, 500 test digits, {runs} runs\n\n" + table(headers, rows))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("synthetic", "usps", "mnist", "scale", "ch6"),
                    default="synthetic")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--sdp-reps", type=int, default=5)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--sdp-runs", type=int, default=2)
    ap.add_argument("--digits", default="0,1,2,3,4,6,7,9")
    ap.add_argument("--eps-grid", default="0.1,0.2,0.3,0.4",
                    help="comma-separated epsilon values for CV (thesis: 0.1,...,0.4)")
    ap.add_argument("--c-grid", default="1,10,100,1000",
                    help="comma-separated C_L = C_U values for CV (thesis: 1,10,100,1000)")
    ap.add_argument("--sdp-only", action="store_true",
                    help="usps/mnist: only fill in the SDP column of runs already done")
    ap.add_argument("--stds", default="0.1,0.2,0.3", help="irrelevant spreads (synthetic)")
    ap.add_argument("--tag", default="", help="suffix of the results file (parallel runs)")
    args = ap.parse_args()
    GRID["epsilon"] = [float(e) for e in args.eps_grid.split(",")]
    GRID["C_L"] = GRID["C_U"] = [float(c) for c in args.c_grid.split(",")]
    with Contention() as load:
        if args.part == "synthetic":
            section = run_synthetic(args.reps, args.sdp_reps,
                                    [float(v) for v in args.stds.split(",")], args.tag)
        elif args.part == "scale":
            section = run_scale()
        elif args.part == "ch6":
            section = run_chapter6(args.runs)
        else:
            digits = [int(d) for d in args.digits.split(",")]
            section = run_digits(args.part, args.runs, args.sdp_runs, digits, args.tag,
                                 args.sdp_only)
    report(f"weak_{args.part}{args.tag}", f"USSL reproduction: {args.part}",
           [section, load.line()])


if __name__ == "__main__":
    main()
