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
"""

from semisup.distributed.design import (
    DistributedDesign,
    DistributedLabels,
    WorkerLostError,
    is_distributed,
)

__all__ = ["DistributedDesign", "DistributedLabels", "WorkerLostError", "is_distributed"]
