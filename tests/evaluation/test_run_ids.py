"""A run whose chunk ids are not the corpus's (misspelt, of another chunking, document ids) scores every such chunk as
not relevant, which no measure but Judged@k shows: a run sharing no id with the qrels is refused with what it likely
meant. On the demo's data (data/docs chunked as data/demo.toml chunks them)."""

from __future__ import annotations

import re
from pathlib import Path

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

