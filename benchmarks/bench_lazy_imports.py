"""Would demand-importing (``importlib.util.LazyLoader``) the modules scikit-learn imports at
module level shorten ``semisup fit``?  Issue 30 asked; this is the measurement behind the
answer (no: the command line does not install it).

Each configuration runs in fresh processes: a meta-path finder wraps the named modules'
loaders in ``LazyLoader`` (only modules not yet imported), then ``import sklearn.base`` and a
``TransductiveSVM`` fit on a 60-row SVMlight file, as ``semisup fit`` does, are timed, and
for every deferred module the report says whether the fit loaded it anyway and which
attribute access (in which file) did.

Usage: ``python benchmarks/bench_lazy_imports.py [--repeat 3]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
from _common import Contention, report, table

PROBE = textwrap.dedent("""
    import importlib.abc, importlib.util, json, sys, time, traceback

    NAMES = set(sys.argv[1].split(",")) - {""}
    first_use = {}

    class Lazy(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name not in NAMES or name in sys.modules:
                return None
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                        spec.loader = importlib.util.LazyLoader(spec.loader)
                    return spec
            return None

    original = importlib.util._LazyModule.__getattribute__

    def spy(self, attr):
        name = object.__getattribute__(self, "__spec__").name
        if name not in first_use:
            frames = [f for f in traceback.extract_stack()[:-1]
                      if "importlib" not in f.filename]
            where = frames[-1] if frames else None
            first_use[name] = (f"{attr} from {where.filename.split('site-packages/')[-1]}:"
                               f"{where.lineno}" if where else attr)
        return original(self, attr)

    importlib.util._LazyModule.__getattribute__ = spy
    sys.meta_path.insert(0, Lazy())
    t0 = time.perf_counter()
    import sklearn.base  # noqa: F401
    t1 = time.perf_counter()
    import numpy as np
    from semisup import TransductiveSVM, io
    X, y = io.read_svmlight(sys.argv[2])
    TransductiveSVM().fit(X, np.where(y == 0, -1, (y > 0).astype(int)))
    t2 = time.perf_counter()
    state = {n: ("deferred" if type(sys.modules.get(n)) is importlib.util._LazyModule
                 else "loaded") for n in NAMES}
    print(json.dumps({"import": t1 - t0, "fit": t2 - t1, "state": state,
                      "first_use": first_use}))
""")

CONFIGS = {"nothing deferred": "", "pandas": "pandas", "scipy.stats": "scipy.stats",
           "pandas, scipy.stats, narwhals": "pandas,scipy.stats,narwhals"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from semisup import io

    out = tempfile.mkdtemp()
    small = os.path.join(out, "small.svm")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 5))
    y = np.where(X[:, 0] > 0, 1, -1)
    y[10:] = 0
    io.write_svmlight(small, X, y)
    results: dict = {}
    with Contention() as load:
        for _ in range(args.repeat):
            for label, names in CONFIGS.items():
                run = subprocess.run([sys.executable, "-c", PROBE, names, small],
                                     capture_output=True, text=True, check=True)
                results.setdefault(label, []).append(json.loads(run.stdout.splitlines()[-1]))
    rows = []
    for label, runs in results.items():
        best = min(runs, key=lambda r: r["import"] + r["fit"])
        rows.append([label, best["import"], best["fit"], best["import"] + best["fit"],
                     "; ".join(f"{n}: {s}" + (f" (first touched: {best['first_use'][n]})"
                                              if n in best["first_use"] else "")
                               for n, s in sorted(best["state"].items())) or "-"])
    report("bench_lazy_imports", "Demand imports (LazyLoader) under semisup fit", [
        load.line(),
        f"Best of {args.repeat} fresh processes (by import + fit); wall seconds.",
        table(["deferred", "import sklearn.base", "read + fit", "total",
               "after the fit"], rows)])


if __name__ == "__main__":
    main()
