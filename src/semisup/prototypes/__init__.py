"""Prototype vector machines (Zhang, Kwok & Parvin) and their scalable baselines.

``m`` k-means prototypes approximate the graph Laplacian (Nyström) and carry the model, so
graph-regularised semi-supervised learning costs ``O(n m^2)`` time and ``O(n m)`` memory.
"""

from semisup.prototypes.baselines import ClusterLapRLS, NystromLabelSpreading
from semisup.prototypes.lowrank import NystromLaplacian, prototype_kernel
from semisup.prototypes.problem import PrototypeGraph
from semisup.prototypes.prototypes import default_n_prototypes, select_prototypes
from semisup.prototypes.pvm import PrototypeVectorMachine

__all__ = [
    "ClusterLapRLS",
    "NystromLabelSpreading",
    "NystromLaplacian",
    "PrototypeGraph",
    "PrototypeVectorMachine",
    "default_n_prototypes",
    "prototype_kernel",
    "select_prototypes",
]
