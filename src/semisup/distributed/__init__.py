"""Row-partitioned data on a Dask cluster for the linear semi-supervised SVMs.

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
"""

from semisup.distributed.design import (
    DistributedDesign,
    DistributedLabels,
    WorkerLostError,
    is_distributed,
)

__all__ = ["DistributedDesign", "DistributedLabels", "WorkerLostError", "is_distributed"]
