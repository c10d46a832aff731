"""
Naive Bayes with EM on unlabeled documents
==========================================

Nigam, McCallum, Thrun & Mitchell (2000): a multinomial naive Bayes classifier fitted on a
few labeled documents, then improved by expectation-maximisation over many unlabeled ones —
the E-step gives each unlabeled document a class distribution, the M-step re-estimates the
word distributions from all documents.  The documents here are drawn from a multinomial
mixture of five topics over a 2,000-word vocabulary (words shared across topics, sixty words
a document), so that naive Bayes is the right model; the curve shows the error on held-out
documents against the number of labeled ones, for scikit-learn's ``MultinomialNB`` on the
labeled documents only and for :class:`semisup.SemiSupervisedNB` with 5,000 unlabeled
documents (the paper's Figure 2 shape: the largest gain with the fewest labels).
``benchmarks/bench_nb_em.py`` runs the same comparison on 20 Newsgroups.
"""

import matplotlib.pyplot as plt
import numpy as np
import scipy.sparse as sp
from sklearn.naive_bayes import MultinomialNB

from semisup import SemiSupervisedNB

rng = np.random.default_rng(0)
n_topics, vocabulary, length = 5, 2000, 60
background = rng.dirichlet(np.full(vocabulary, 0.5))
topics = 0.85 * background + 0.15 * rng.dirichlet(np.full(vocabulary, 0.05), size=n_topics)


def documents(n):
    labels = rng.integers(n_topics, size=n)
    counts = np.vstack([rng.multinomial(length, topics[c]) for c in labels])
    return sp.csr_matrix(counts), labels


X_pool, y_pool = documents(5000)
X_test, y_test = documents(2000)
sizes = [5, 10, 20, 50, 100, 200]
errors = {"MultinomialNB (labeled only)": [], "SemiSupervisedNB (+ 5,000 unlabeled)": []}
for n_labeled in sizes:
    per_run = {name: [] for name in errors}
    for run in range(3):
        pick = np.random.default_rng(run).choice(len(y_pool), n_labeled, replace=False)
        y = np.full(len(y_pool), -1)
        y[pick] = y_pool[pick]
        supervised = MultinomialNB().fit(X_pool[pick], y_pool[pick])
        em = SemiSupervisedNB(random_state=run).fit(X_pool, y)
        for name, model in zip(errors, (supervised, em), strict=True):
            per_run[name].append(np.mean(model.predict(X_test) != y_test))
    for name in errors:
        errors[name].append(100 * np.mean(per_run[name]))

fig, ax = plt.subplots(figsize=(6, 4))
for name, err in errors.items():
    ax.semilogx(sizes, err, "o-", label=name)
ax.set_xticks(sizes, [str(s) for s in sizes])
ax.set_xlabel("number of labeled documents")
ax.set_ylabel("error on held-out documents, % (mean of 3 draws)")
ax.legend()
fig.tight_layout()
plt.show()
