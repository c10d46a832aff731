"""Aux-SVM and the active-search pipeline on a tiny synthetic collection."""

import numpy as np
import pytest

from semisup.linear import L2SVM, TransductiveSVM
from semisup.text import ActiveSearchPipeline, AuxiliarySVM, MemoryBM25Index, SQLiteIndex


def collection(rng, n=120):
    """Two topics sharing filler words; each document draws most words from its topic."""
    topics = {"space": ["orbit", "rocket", "nasa", "launch", "moon", "shuttle"],
              "med": ["doctor", "patient", "disease", "drug", "clinic", "therapy"]}
    filler = ["the", "said", "new", "year", "report", "people", "time"]
    docs, labels = [], []
    for i in range(n):
        lab = "space" if i % 2 == 0 else "med"
        words = list(rng.choice(topics[lab], 5)) + list(rng.choice(filler, 5))
        if rng.random() < 0.2:  # some cross-topic noise
            other = "med" if lab == "space" else "space"
            words += list(rng.choice(topics[other], 1))
        docs.append(" ".join(words))
        labels.append(lab)
    return docs, np.array(labels)


def test_auxiliary_svm_weights(rng):
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    aux = np.zeros(40, bool)
    aux[20:] = True
    a = AuxiliarySVM(lam=0.5, gamma=0.2, solver="mfn", tol=1e-10).fit(X, y, auxiliary=aux)
    svmlin = {"penalize_intercept": True}   # the auxiliary SVM keeps SVMlin's objective
    ref = L2SVM(lam=0.5, solver="mfn", tol=1e-10, **svmlin).fit(
        X, y, sample_weight=np.where(aux, 0.2, 1))
    np.testing.assert_allclose(a.coef_, ref.coef_)
    assert a.n_auxiliary_ == 20
    # gamma = 0: only the labeled rows count
    z = AuxiliarySVM(lam=0.5, gamma=0.0, solver="mfn", tol=1e-10).fit(X, y, auxiliary=aux)
    ref0 = L2SVM(lam=0.5, solver="mfn", tol=1e-10, **svmlin).fit(X[:20], y[:20])
    np.testing.assert_allclose(z.coef_, ref0.coef_, atol=1e-8)
    with pytest.raises(ValueError, match="boolean mask"):
        AuxiliarySVM().fit(X, y, auxiliary=np.ones(3, bool))
    with pytest.raises(ValueError, match="every labeled row is auxiliary"):
        AuxiliarySVM().fit(X, y, auxiliary=np.ones(40, bool))
    with pytest.raises(ValueError, match="gamma"):
        AuxiliarySVM(gamma=-1).fit(X, y, auxiliary=aux)


@pytest.mark.parametrize("learner", ["svm", "aux", "cccp"])
def test_pipeline_end_to_end(rng, tmp_path, learner):
    docs, labels = collection(rng)
    ids = [f"d{i}" for i in range(len(docs))]
    truth = dict(zip(ids, labels, strict=True))
    lab = np.array([0, 2, 1, 3])
    with SQLiteIndex.build(tmp_path / "idx", list(zip(ids, docs, strict=True))) as index:
        pipe = ActiveSearchPipeline(index, query_size=3, per_query=20, learner=learner,
                                    n_features=None)
        pipe.fit([docs[i] for i in lab], labels[lab], ids=[ids[i] for i in lab],
                 collection_labels=truth)
        rep = pipe.report_
        assert rep["n_queries"] == 4 and len(pipe.queries_) == 4
        assert not set(pipe.retrieved_ids_) & {ids[i] for i in lab}  # labeled excluded
        assert rep["precision"] > 0.7
        test = np.setdiff1d(np.arange(len(docs)), lab)
        assert pipe.score([docs[i] for i in test], labels[test]) > 0.8
        assert set(pipe.predict(["rocket moon orbit", "drug patient"])) <= {"space", "med"}
        if learner == "cccp":  # balance from the query labels of the retrieved documents
            share = np.mean(pipe.retrieved_labels_ == pipe.classes_[1])
            u = pipe.X_train_[len(lab):]
            assert np.mean(pipe.model_.decision_function(u)) == pytest.approx(
                2 * np.clip(share, 0.02, 0.98) - 1, abs=1e-8)


def test_pipeline_any_estimator_and_generators(rng):
    docs, labels = collection(rng)
    index = MemoryBM25Index(docs)
    lab = np.array([0, 2, 4, 1, 3, 5])
    for gen in ("tf", "tfidf", "or", "svm", "dqg"):
        pipe = ActiveSearchPipeline(index, generator=gen, per_query=15,
                                    learner=TransductiveSVM(lam=1e-2), n_features=10)
        pipe.fit([docs[i] for i in lab], labels[lab], ids=[str(i) for i in lab])
        assert isinstance(pipe.model_, TransductiveSVM)
        assert pipe.features_.size == 10
        assert pipe.report_["n_queries"] == (6 if gen == "dqg" else 2)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_pipeline_balance_reaches_estimators(rng):
    """balance='retrieved' sets an estimator's unset positive_fraction to the query-label share."""
    from semisup.linear import DeterministicAnnealingSVM

    docs, labels = collection(rng)
    index = MemoryBM25Index(docs)
    lab = np.array([0, 2, 1, 3])
    args = ([docs[i] for i in lab], labels[lab])
    kw = dict(ids=[str(i) for i in lab])
    for est in (TransductiveSVM(lam=1e-2), DeterministicAnnealingSVM(lam=1e-2)):
        pipe = ActiveSearchPipeline(index, per_query=15, learner=est).fit(*args, **kw)
        share = np.clip(np.mean(pipe.retrieved_labels_ == pipe.classes_[1]), 0.02, 0.98)
        assert pipe.model_.positive_fraction == pytest.approx(share)
        assert est.positive_fraction is None  # the given estimator is untouched (cloned)
        pipe = ActiveSearchPipeline(index, per_query=15, learner=est,
                                    balance="labeled").fit(*args, **kw)
        assert pipe.model_.positive_fraction is None
    fixed = ActiveSearchPipeline(index, per_query=15,
                                 learner=TransductiveSVM(positive_fraction=0.4)).fit(*args, **kw)
    assert fixed.model_.positive_fraction == 0.4  # a user's fraction wins
    # three classes: one fraction per class
    docs3 = [d + " " + ("alpha beta gamma" if i % 3 == 0 else "") for i, d in enumerate(docs)]
    labels3 = np.where(np.arange(len(docs)) % 3 == 0, "greek", labels)
    lab3 = np.array([0, 3, 2, 4, 1, 5])
    pipe = ActiveSearchPipeline(MemoryBM25Index(docs3), per_query=15,
                                learner=TransductiveSVM(lam=1e-2))
    pipe.fit([docs3[i] for i in lab3], labels3[lab3], ids=[str(i) for i in lab3])
    shares = np.clip([np.mean(pipe.retrieved_labels_ == c) for c in pipe.classes_], 0.02, 0.98)
    np.testing.assert_allclose(pipe.model_.positive_fraction, shares)
    assert pipe.classes_.size == 3


def test_pipeline_bad_input(rng):
    docs, labels = collection(rng, n=20)
    index = MemoryBM25Index(docs)
    with pytest.raises(ValueError, match="generator"):
        ActiveSearchPipeline(index, generator="x").fit(docs[:4], labels[:4])
    with pytest.raises(ValueError, match="learner"):
        ActiveSearchPipeline(index, learner="x").fit(docs[:4], labels[:4])
    with pytest.raises(ValueError, match="backend"):
        ActiveSearchPipeline(object()).fit(docs[:4], labels[:4])
    with pytest.raises(ValueError, match="one entry per document"):
        ActiveSearchPipeline(index).fit(docs[:4], labels[:3])
    with pytest.raises(ValueError, match="empty"):
        ActiveSearchPipeline(index).fit(docs[:3] + ["..."], labels[:4])
    with pytest.raises(ValueError, match="balance"):
        ActiveSearchPipeline(index, balance="x").fit(docs[:4], labels[:4])
    with pytest.raises(ValueError, match="no query retrieved"):
        ActiveSearchPipeline(MemoryBM25Index(["zzz yyy"])).fit(docs[:4], labels[:4])


def test_cli_active_search(rng, tmp_path, capsys):
    import pickle

    from semisup.cli.main import main

    docs, labels = collection(rng, n=60)
    coll = tmp_path / "coll"
    coll.mkdir()
    for i, d in enumerate(docs):
        (coll / f"{i:03d}.txt").write_text(d, encoding="utf-8")
    lab = tmp_path / "lab"
    for i in range(4):
        (lab / labels[i]).mkdir(parents=True, exist_ok=True)
        (lab / labels[i] / f"{i}.txt").write_text(docs[i], encoding="utf-8")
    model = tmp_path / "m.pkl"
    rc = main(["active-search", "--index", str(tmp_path / "idx"), "--build-from", str(coll),
               "--labeled", str(lab), "--per-query", "10", "--learner", "aux", "--model",
               str(model), "--report", str(tmp_path / "r.json")])
    assert rc == 0
    out = capsys.readouterr().out
    assert "retrieved" in out and "AuxiliarySVM" in out
    pipe = pickle.loads(model.read_bytes())
    assert set(pipe.predict(["rocket orbit moon"])) <= {"space", "med"}
    # reuse the index without rebuilding; a non-index folder is a clear error
    assert main(["active-search", "--index", str(tmp_path / "idx"), "--labeled", str(lab),
                 "--per-query", "10", "--learner", "svm"]) == 0
    assert main(["active-search", "--index", str(coll), "--labeled", str(lab)]) == 2
    assert "not a semisup search index" in capsys.readouterr().err
