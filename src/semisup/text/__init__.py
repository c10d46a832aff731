"""Semi-supervised text categorization by active search (chapter 8 of the thesis).

A search backend (:class:`SQLiteIndex`, an embedded BM25 index; :class:`MemoryBM25Index`;
:class:`HTTPSearchBackend`), query generators (:func:`generate_queries`: DQG and the TF,
TF-IDF, odds-ratio and SVM-LW baselines), :class:`AuxiliarySVM` and the pipeline
:class:`ActiveSearchPipeline`.  The Semi-SVM is :class:`semisup.linear.cccp.CCCPS3VM`.
"""

from semisup.linear.cccp import CCCPS3VM
from semisup.text.auxiliary import AuxiliarySVM
from semisup.text.pipeline import ActiveSearchPipeline
from semisup.text.querygen import Query, generate_queries, merge_queries, query_analyzer
from semisup.text.search import (
    HTTPSearchBackend,
    MemoryBM25Index,
    SearchBackend,
    SQLiteIndex,
    tokenize,
)

__all__ = ["SQLiteIndex", "MemoryBM25Index", "HTTPSearchBackend", "SearchBackend", "tokenize",
           "generate_queries", "merge_queries", "query_analyzer", "Query", "AuxiliarySVM",
           "ActiveSearchPipeline",
           "CCCPS3VM"]
