"""Row-partitioned data on a Dask cluster: the linear semi-supervised SVMs, the PVM and
linear LapRLS (partition-local graphs).

Needs the ``dask`` extra (``pip install "semisup[dask]"``); the rest of the library never
imports this package.  Build a :class:`DistributedDesign` from a ``distributed.Client`` and
pass it to ``fit``::

    from distributed import Client
    from semisup import TransductiveSVM
    from semisup.distributed import DistributedDesign

    client = Client(...)                              # any Dask cluster
    design = DistributedDesign.from_arrays(client, X, y, n_partitions=8)
    clf = TransductiveSVM(lam=1e-3).fit(design, design.labels)
    clf.predict(X_test)                               # an ordinary fitted estimator
    clf.transduction_                                 # a dask array left on the workers
    PrototypeVectorMachine().fit(design, design.labels)   # also LinearLapRLS

For data that does not fit the client, let the workers read their own partitions:
:func:`from_svmlight_files` / :func:`from_svmlin_files` (one file per partition, a glob or a
list) or :func:`from_dask_array` / :func:`from_dask_dataframe` (row chunks kept where the
cluster computed them).
"""

from semisup.distributed.design import (
    DistributedDesign,
    DistributedLabels,
    NotDistributedError,
    WorkerFrozenError,
    WorkerLostError,
    is_distributed,
)
from semisup.distributed.readers import (
    from_dask_array,
    from_dask_dataframe,
    from_svmlight_files,
    from_svmlin_files,
)

__all__ = ["DistributedDesign", "DistributedLabels", "NotDistributedError", "WorkerFrozenError",
           "WorkerLostError", "from_dask_array", "from_dask_dataframe", "from_svmlight_files",
           "from_svmlin_files", "is_distributed"]
