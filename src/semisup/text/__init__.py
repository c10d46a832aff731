"""Semi-supervised text categorization by active search (chapter 8 of the thesis).

A search backend (:class:`SQLiteIndex`, an embedded BM25 index; :class:`MemoryBM25Index`;
:class:`HTTPSearchBackend`), query generators (:func:`generate_queries`: DQG and the TF,
TF-IDF, odds-ratio and SVM-LW baselines), :class:`AuxiliarySVM` and the pipeline
:class:`ActiveSearchPipeline`.  The Semi-SVM is :class:`semisup.linear.cccp.CCCPS3VM`.
Semi-supervised multinomial naive Bayes by EM: :class:`SemiSupervisedNB`.
"""

from __future__ import annotations

from semisup._lazy import lazy_exports

# imported on first use (as in :mod:`semisup`): the naive Bayes model does not load the
# search stack
_EXPORTS = {
    "SQLiteIndex": "semisup.text.search",
    "MemoryBM25Index": "semisup.text.search",
    "HTTPSearchBackend": "semisup.text.search",
    "SearchBackend": "semisup.text.search",
    "tokenize": "semisup.text.search",
    "generate_queries": "semisup.text.querygen",
    "merge_queries": "semisup.text.querygen",
    "query_analyzer": "semisup.text.querygen",
    "Query": "semisup.text.querygen",
    "AuxiliarySVM": "semisup.text.auxiliary",
    "ActiveSearchPipeline": "semisup.text.pipeline",
    "SemiSupervisedNB": "semisup.text.naive_bayes",
    "CCCPS3VM": "semisup.linear.cccp",
}

__all__ = list(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
