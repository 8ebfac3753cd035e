"""A run whose chunk ids are not the corpus's (misspelt, of another chunking, document ids) scores every such chunk as
not relevant, which no measure but Judged@k shows: `eval`/`compare --corpus` say so, and a run sharing no id with the
qrels is refused with what it likely meant. On the demo's data (data/docs chunked as data/demo.toml chunks them)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pytest

from helpers import assert_one_error, run

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> dict[str, str]:
    """The demo's corpus, its gold qrels and a bm25 run, made by the commands `make demo` runs."""
    folder = tmp_path_factory.mktemp("demo")
    files = {name: str(folder / name) for name in ("corpus.jsonl", "golden.jsonl", "gold.qrels", "bm25.run")}
    for args in (("corpus", "chunk", DATA / "docs", "--size", "120", "--overlap", "20", "-o", files["corpus.jsonl"]),
                 ("golden", "import", DATA / "golden.csv", "--corpus", files["corpus.jsonl"], "-o", files["golden.jsonl"]),
                 ("golden", "qrels", files["golden.jsonl"], "-o", files["gold.qrels"]),
                 ("retrieve", "--corpus", files["corpus.jsonl"], "--golden", files["golden.jsonl"], "--method", "bm25", "-k", "20",
                  "-o", files["bm25.run"])):
        assert run(*map(str, args)).exit_code == 0, args
    return files


def respelt(demo, write, name: str, old: str, new: str) -> str:
    """The bm25 run with `old` in its chunk ids replaced by `new` (a regular expression), as run `name`."""
    lines = Path(demo["bm25.run"]).read_text().splitlines(keepends=True)
    return write(f"{name}.run", "".join(" ".join([*f[:2], re.sub(old, new, f[2]), *f[3:]]) + "\n" for f in map(str.split, lines)))


def test_eval_with_a_corpus_warns_of_the_run_chunks_it_does_not_list(cli, write, demo):
    corpus, qrels = demo["corpus.jsonl"], demo["gold.qrels"]
    measures = ("-m", "nDCG@10,P@10,Judged@10", "-f", "json")
    right = cli("eval", qrels, demo["bm25.run"], "--corpus", corpus, *measures)
    assert right.exit_code == 0 and "corpus" not in right.stderr  # the demo's own run names the corpus's chunks
    mine = respelt(demo, write, "mine", r"^brakes#", "brakes-")  # one document's chunks spelt as a user's retriever spells them
    assert "brakes-1" in Path(mine).read_text()
    rows = Path(mine).read_text().count("brakes-")
    assert rows == 51
    result = cli("eval", qrels, mine, "--corpus", corpus, *measures)
    assert result.exit_code == 0 and result.stderr.splitlines()[0] == (
        "semrel: warning: 51 of the 336 rows of run 'mine' (15%) name chunks the corpus does not list (e.g. 'brakes-3', "
        "'brakes-0', 'brakes-1'): they count as not relevant; check that the run and the corpus match ('brakes#3' of the "
        "corpus is spelt 'brakes-3' in the run)"), result.stderr
    # the values are those without --corpus: the warning says why they are low, and changes nothing
    assert result.stdout == cli("eval", qrels, mine, *measures).stdout
    scored = json.loads(result.stdout)["mine"]["all"]
    assert scored["nDCG@10"] < json.loads(right.stdout)["bm25"]["all"]["nDCG@10"] and scored["Judged@10"] < 1
    compared = cli("compare", qrels, demo["bm25.run"], mine, "--corpus", corpus, "-m", "P@10")
    assert compared.exit_code == 0 and "51 of the 336 rows of run 'mine' (15%)" in compared.stderr
    assert "run 'bm25'" not in compared.stderr


@pytest.mark.parametrize(("old", "new", "hint"), [
    (r"^(gears)#(\d+)$", r"Gears#0\2", "('gears#0' of the corpus is spelt 'Gears#00' in the run)"),
    (r"^(gears)#0$", r"\1", "('gears' is a document of the corpus, whose chunk ids are like 'gears#0': the run names documents "
                              "where chunk ids are expected)"),
    (r"^(gears)#(\d+)$", r"\1#1\2", "('gears#10' is not a chunk of the document 'gears' of the corpus, whose chunks are like "
                                    "'gears#0': the run may come from another chunking)"),
])
def test_the_warning_says_what_an_unlisted_id_likely_is(cli, write, demo, old, new, hint):
    """A misspelling (case, punctuation, leading zeros), a document id where chunk ids are expected, another chunking."""
    result = cli("eval", demo["gold.qrels"], respelt(demo, write, "mine", old, new), "--corpus", demo["corpus.jsonl"], "-m", "P@10")
    assert result.exit_code == 0 and "semrel: warning: " in result.stderr
    assert result.stderr.splitlines()[0].endswith(f"check that the run and the corpus match {hint}"), result.stderr


def test_a_run_sharing_no_chunk_id_with_the_qrels_is_refused_with_what_it_likely_meant(cli, write, demo):
    """No corpus needed: nothing of the run is judged anywhere, and its ids are the qrels' spelt otherwise."""
    mine = respelt(demo, write, "mine", "#", "-")
    assert_one_error(cli("eval", demo["gold.qrels"], mine), "mine.run shares no document id with", "gold.qrels: the qrels judge",
                     "the run returns 'chain-care-2', 'chain-care-1', 'cleaning-storage-1' ('chain-care#1' of the qrels is "
                     "spelt 'chain-care-1' in the run)")
    seen: set[tuple[str, str]] = set()  # each document once per query, at its first chunk: a run of documents
    for line in Path(demo["bm25.run"]).read_text().splitlines():
        query, _, chunk, *_ = line.split()
        seen.add((query, chunk.split("#")[0]))
    documents = write("documents.run", "".join(f"{q} Q0 {d} 1 1 d\n" for q, d in sorted(seen)))
    assert_one_error(cli("compare", demo["gold.qrels"], demo["bm25.run"], documents),
                     "('brakes' is a document of the qrels, whose chunk ids are like 'brakes#1': the run names documents "
                     "where chunk ids are expected)")


def test_corpus_is_refused_with_judgments_it_does_not_check(cli, demo):
    """-R prefs/qrels_jg score the runs on their own judgments: --corpus was taken there and did nothing."""
    assert_one_error(cli("eval", demo["gold.qrels"], demo["bm25.run"], "-R", "qrels_prefs", "--corpus", demo["corpus.jsonl"]),
                     "-R qrels_prefs scores its own judgments; it does not go with --doc-level, --fill-judgments, --corpus", code=2)


def test_unlisted_chunks_the_qrels_judge_are_said_to_be_in_the_qrels_too(cli, write):
    """Where the qrels judge the run's unlisted chunks they do not count as not relevant: the qrels and the run share
    another chunking, and the warning says so instead."""
    corpus = write("corpus.jsonl", "".join(json.dumps({"_id": c, "text": "t"}) + "\n" for c in ("a#0", "a#1")))
    qrels = write("gold.qrels", "q1 0 a#0 1\nq1 0 x#9 1\n")
    result = cli("eval", qrels, write("r.run", "q1 Q0 x#9 1 2 r\nq1 Q0 a#0 2 1 r\n"), "--corpus", corpus, "-m", "P@2")
    assert result.exit_code == 0 and result.stderr.splitlines()[0] == (
        "semrel: warning: 1 of the 2 rows of run 'r' (50%) names a chunk the corpus does not list (e.g. 'x#9'): the qrels judge 1 "
        "of them, so the qrels too name chunks the corpus does not list; check that the run and the corpus match"), result.stderr


def test_the_spelling_blind_key_splits_letters_from_digits_on_either_side():
    """'v2b#0' spelt 'V2-B-00' is the same chunk: runs of letters and of digits are split whichever comes first."""
    from semrel.evaluation.doclevel import id_key

    keys = id_key(pa.array(["manual-3", "Manual#03", "manual3", "v2b#0", "V2-B-00", "v2b0"])).to_pylist()
    assert keys == ["manual#3"] * 3 + ["v#2#b#0"] * 3
