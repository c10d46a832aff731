"""Usenet post cleaning (headers, quotes, signatures) and the 20 Newsgroups reader."""

import io
import json
import tarfile

import pytest

from semisup.text.corpora import (
    NEWSGROUP_PARTS,
    load_20newsgroups,
    strip_newsgroup_post,
)

POST = """From: jdoe@cs.example.edu (John Doe)
Subject: Re: Re: carburetor icing
Organization: Example University, Dept. of Things,
   Somewhere
Lines: 14
NNTP-Posting-Host: sparky.cs.example.edu

In article <1993Apr1.123@host.example.com> alice@host.example.com
(Alice Smith) writes:
> My carburetor freezes every winter morning.
From article <C5x.1@uni.example.edu>, by bob@uni.example.edu (Bob):
Also see <1993Apr2.77@host.example.com> for the thread.
>> Older quoted line about chokes.
|  Another quoting style.

Intake heating fixes carburetor icing on most engines.
Check the thermostat first.

--
John Doe   jdoe@cs.example.edu
"Sig quote goes here"
"""


def test_strip_all_parts():
    out = strip_newsgroup_post(POST)
    lines = out.splitlines()
    assert lines[0] == "carburetor icing"  # subject kept, its Re: prefixes dropped
    assert "Intake heating fixes carburetor icing on most engines." in lines
    assert "Check the thermostat first." in lines
    for gone in ("jdoe", "Organization", "Example University", "Somewhere", "Lines",
                 "sparky", "In article", "Alice", "writes", "freezes", "chokes",
                 "Another quoting", "Sig quote", "Bob", "thread"):
        assert gone not in out, gone


def test_strip_each_part_alone():
    head = strip_newsgroup_post(POST, remove="headers", keep_subject=False)
    assert "jdoe@cs" not in head.split("--")[0] and "Subject" not in head
    assert "carburetor icing" not in head.splitlines()[0]
    assert "> My carburetor freezes" in head and "Sig quote" in head
    quotes = strip_newsgroup_post(POST, remove=("quotes",))
    assert quotes.startswith("From: jdoe") and "freezes" not in quotes
    assert "In article" not in quotes and "(Alice Smith) writes:" not in quotes
    assert "Sig quote" in quotes
    sig = strip_newsgroup_post(POST, remove=["signature"])
    assert "Sig quote" not in sig and "> My carburetor freezes" in sig
    assert sig.rstrip().endswith("Check the thermostat first.")
    assert strip_newsgroup_post(POST, remove=()) == POST


def test_strip_leaves_body_text_alone():
    # no header block: nothing is taken for one
    body = "Just a body line.\n\nSecond paragraph: with a colon.\n"
    assert strip_newsgroup_post(body) == body.strip("\n")
    # a long tail after "--" is body text, not a signature
    long_tail = "Subject: x\n\nintro\n--\n" + "".join(f"row {i}\n" for i in range(11))
    assert "row 10" in strip_newsgroup_post(long_tail)
    assert "row 10" not in strip_newsgroup_post(long_tail, max_signature_lines=11)
    # only the last delimiter counts
    two = "Subject: y\n\na\n--\nmiddle\n-- \nsig\n"
    assert strip_newsgroup_post(two).splitlines()[-1] == "middle"


def test_strip_bad_remove():
    with pytest.raises(ValueError, match="remove must be a subset"):
        strip_newsgroup_post(POST, remove=("header",))


def _archive(folder, posts):
    folder.mkdir()
    with tarfile.open(folder / "20news-bydate.tar.xz", "w:xz") as tf:
        for name, text in posts.items():
            raw = text.encode("latin-1")
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            tf.addfile(info, io.BytesIO(raw))


def test_load_20newsgroups_remove(tmp_path):
    only_header = "From: a@b.c\nOrganization: none\n\n> quoted only\n"
    _archive(tmp_path / "20newsgroups_bydate", {
        "20news-bydate-train/rec.autos/101": POST,
        "20news-bydate-test/rec.motorcycles/202": "From: x@y.z\nSubject: Re: bikes\n\n"
                                                    "Ride safely.\n",
        "20news-bydate-test/rec.motorcycles/203": only_header,
    })
    raw = {d.id: d for d in load_20newsgroups(tmp_path, remove=())}
    assert set(raw) == {"20ng/train/rec.autos/101", "20ng/test/rec.motorcycles/202",
                        "20ng/test/rec.motorcycles/203"}
    assert raw["20ng/train/rec.autos/101"].text == POST  # remove=(): the raw post
    clean = {d.id: d for d in load_20newsgroups(tmp_path)}  # default: all parts removed
    assert "20ng/test/rec.motorcycles/203" not in clean  # nothing left: skipped
    assert [d.text for d in load_20newsgroups(tmp_path, remove=NEWSGROUP_PARTS)] == \
        [d.text for d in clean.values()]
    assert clean["20ng/test/rec.motorcycles/202"].text == "bikes\n\nRide safely."
    d = clean["20ng/train/rec.autos/101"]
    assert d.labels == ("rec.autos",) and d.split == "train"
    assert d.text == strip_newsgroup_post(POST)
    with pytest.raises(ValueError, match="remove"):
        next(load_20newsgroups(tmp_path, remove=("footer",)))


def _post(i, topic, words):
    return (f"From: poster{i}@{topic}host.example.edu\nSubject: Re: {words[0]}\n"
            f"Organization: Boilerplate Institute\n\n"
            f"In article <{i}@x.y> someone writes:\n> quoted {words[1]} text\n\n"
            f"{' '.join(words)} discussion\n\n-- \nsignature line {i}\n")


def test_index_preprocess(tmp_path):
    from semisup.text import SQLiteIndex

    posts = [("a", _post(0, "space", ["orbit", "rocket", "moon"])),
             ("b", _post(1, "med", ["doctor", "patient", "drug"]))]
    with SQLiteIndex.build(tmp_path / "raw", posts) as raw:
        assert sorted(raw.search(["boilerplate"], 5)[0]) == ["a", "b"]
    with SQLiteIndex.build(tmp_path / "clean", posts,
                           preprocess=strip_newsgroup_post) as clean:
        assert clean.search(["boilerplate"], 5)[0] == []
        assert clean.search(["signature"], 5)[0] == []
        assert clean.search(["rocket"], 5)[0] == ["a"]
        assert clean.documents(["b"]) == [strip_newsgroup_post(posts[1][1])]
    with pytest.raises(ValueError, match="preprocess"):
        SQLiteIndex.build(tmp_path / "bad", posts, preprocess="strip")


def test_cli_strip_usenet(tmp_path):
    from semisup.cli.main import main
    from semisup.text import SQLiteIndex

    topics = {"space": ["orbit", "rocket", "moon", "launch", "nasa"],
              "med": ["doctor", "patient", "drug", "clinic", "therapy"]}
    coll, lab = tmp_path / "coll", tmp_path / "lab"
    coll.mkdir()
    for i in range(20):
        topic = "space" if i % 2 == 0 else "med"
        words = [topics[topic][(i + j) % 5] for j in range(4)]
        (coll / f"{i:02d}").write_text(_post(i, topic, words), encoding="utf-8")
        if i < 4:
            (lab / topic).mkdir(parents=True, exist_ok=True)
            (lab / topic / f"{i}").write_text(_post(i, topic, words), encoding="utf-8")
    rc = main(["active-search", "--index", str(tmp_path / "idx"), "--build-from", str(coll),
               "--labeled", str(lab), "--per-query", "5", "--learner", "svm",
               "--n-features", "5", "--strip-usenet", "--report", str(tmp_path / "r.json")])
    assert rc == 0
    with SQLiteIndex.open(tmp_path / "idx") as index:
        texts = index.documents([f"{i:02d}" for i in range(20)])
    assert not any("Boilerplate" in t or "writes" in t or "signature" in t for t in texts)
    rep = json.loads((tmp_path / "r.json").read_text())
    terms = {t for q in rep["queries"] for t in q["terms"]}
    assert not terms & {"boilerplate", "institute", "signature", "writes", "quoted", "edu"}
