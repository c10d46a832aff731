import numpy as np
import pytest
import scipy.sparse as sp


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def make_problem(rng, n=120, d=15, sparse=False, density=0.3):
    """A random binary classification problem with a dense or CSR design."""
    if sparse:
        X = sp.random(n, d, density=density, random_state=int(rng.integers(1 << 30)),
                      format="csr")
        X.data = rng.normal(size=X.data.size)
    else:
        X = rng.normal(size=(n, d))
    w_true = rng.normal(size=d)
    Xd = X.toarray() if sp.issparse(X) else X
    y = np.where(Xd @ w_true + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def dense_with_bias(X):
    Xd = X.toarray() if sp.issparse(X) else np.asarray(X)
    return np.hstack([Xd, np.ones((Xd.shape[0], 1))])


@pytest.fixture(scope="session")
def data_dir():
    """``../shared/data``; tests that need it are skipped, with the reason, when absent."""
    from semisup.datasets import shared_data_dir

    path = shared_data_dir()
    if path is None:
        pytest.skip("benchmark data not found: set SEMISUP_DATA or place the shared data "
                    "directory at ../shared/data next to the repository")
    return path


@pytest.fixture(scope="module")
def _dask_client():
    """A Dask ``LocalCluster`` of two worker processes, one thread each, per test module."""
    import logging

    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, silence_logs=logging.CRITICAL)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture
def client(_dask_client):
    """The module's client once both workers are up: a test before may have killed one, and
    on a busy machine its nanny can take seconds to restart it."""
    _dask_client.wait_for_workers(2, timeout=120)
    return _dask_client
