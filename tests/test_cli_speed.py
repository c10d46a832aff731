"""The command line's fit runs under the same thread limits as the estimators' (issue 30)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

PROBE = textwrap.dedent("""
    import json, sys
    import numpy as np, scipy.sparse as sp
    from threadpoolctl import threadpool_info
    from semisup.cli._model import SVMlinModel

    seen = []
    solve = SVMlinModel._solve

    def spy(self, *args):
        result = solve(self, *args)
        # still inside the limit: every BLAS library loaded by now, scipy.linalg's included
        seen.extend(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
        return result

    SVMlinModel._solve = spy
    rng = np.random.default_rng(0)
    X = sp.random(200, 50, density=0.1, format="csr", random_state=rng)
    y = np.full(200, -1)
    y[:20] = np.arange(20) % 2
    assert "sklearn" not in sys.modules
    SVMlinModel(int(sys.argv[1]), lam=0.01).fit(X, y)
    print(json.dumps(seen))
""")


def test_blas_is_limited_during_the_cli_solve_on_sparse_data():
    """Small sparse data (scipy's products) and large (the compiled kernels; scipy's own
    OpenBLAS, which the preconditioner uses, is loaded before the limit is set), in a
    process without scikit-learn: BLAS threads spinning there made TSVM on the SSL-book
    text set take 46 s from the command line against 0.6 s for the estimator's fit
    (benchmarks/results/bench_cli_speed.md)."""
    env = {**os.environ}
    for algorithm, compile_min in ((1, "200000"), (2, "200000"), (2, "0")):
        env["SEMISUP_COMPILE_MIN_SIZE"] = compile_min
        out = subprocess.run([sys.executable, "-c", PROBE, str(algorithm)], check=True,
                             capture_output=True, text=True, env=env).stdout
        threads = json.loads(out.strip().splitlines()[-1])
        assert threads, "no BLAS library found"
        assert threads == [1] * len(threads), threads
