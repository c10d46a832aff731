"""Chapter 8 on real text (small): DQG retrieval from an OHSUMED index, the pipeline end to end."""

import numpy as np
import pytest

from semisup.text import ActiveSearchPipeline, SQLiteIndex


@pytest.mark.reproduction
def test_ohsumed_active_search(data_dir, tmp_path):
    from semisup.text.corpora import load_ohsumed

    docs = list(load_ohsumed(data_dir))
    labels = {d.id: d.labels[0] for d in docs}
    index = SQLiteIndex.build(tmp_path / "idx", [(d.id, d.text) for d in docs])
    task = [d for d in docs if d.labels[0] in ("C01", "C02")]
    rng = np.random.default_rng(0)
    y = np.array([d.labels[0] for d in task])
    lab = np.concatenate([rng.choice(np.flatnonzero(y == c), 5, replace=False)
                          for c in ("C01", "C02")])
    pipe = ActiveSearchPipeline(index, generator="dqg", query_size=3, per_query=50,
                                learner="cccp")
    pipe.fit([task[i].text for i in lab], y[lab], ids=[task[i].id for i in lab],
             collection_labels=labels)
    rep = pipe.report_
    # random retrieval from the 7,400 abstracts would be 2.9% relevant (C01 216, C02 75)
    assert rep["precision"] > 0.10
    assert all(set(q.terms) <= set(pipe.vectorizer_.vocabulary_) for q in pipe.queries_)
    test = np.setdiff1d(np.arange(len(task)), lab)
    acc = pipe.score([task[i].text for i in test], y[test])
    assert acc > 0.6  # measured 0.72 (SVM in the thesis, 2 per class: 0.726)
    index.close()
