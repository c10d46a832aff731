"""Data adjacency graphs and their Laplacians, shared by every graph-based method."""

from semisup.graph.adjacency import (
    GraphWarning,
    adjacency_graph,
    check_graph,
    edge_weights,
    symmetrize,
)
from semisup.graph.knn import knn_search
from semisup.graph.laplacian import graph_scale, laplacian

__all__ = ["GraphWarning", "adjacency_graph", "check_graph", "edge_weights", "graph_scale",
           "knn_search", "laplacian", "symmetrize"]
