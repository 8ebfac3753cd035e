"""Chunking keeps integer arrays, not a Python object per word: the same chunks as the per-word
definition kept here as the reference, on random documents and settings, and a 100 MB document
cut within a small multiple of its size (measured in a subprocess under a memory limit)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from semrel.cjk import WORD
from semrel.encoding.models import load_encoder
from semrel.golden import chunking
from semrel.golden.chunking import ChunkSettings, Document, chunk_document

SENTENCE_END = chunking._SENTENCE_END  # what a word (semrel.cjk.WORD) and a sentence are; the arrays are under test


@dataclass(frozen=True)
class Unit:
    start: int
    end: int
    cost: int


def reference_costs(text, words, tokenizer):
    if tokenizer is None:
        return [1] * len(words)
    offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)["offset_mapping"]
    costs, index = [0] * len(words), 0
    for start, end in offsets:
        if end <= start:
            continue
        while index + 1 < len(words) and words[index].end() <= start:
            index += 1
        costs[index] += 1
    return [max(c, 1) for c in costs]


def reference_sentences(text, words, limit):
    ends = [m.end() for m in SENTENCE_END.finditer(text)]
    units, group, boundary = [], [], 0

    def close():
        if sum(w.cost for w in group) > limit:
            units.extend(group)
        elif group:
            units.append(Unit(group[0].start, group[-1].end, sum(w.cost for w in group)))
        group.clear()

    for word in words:
        while boundary < len(ends) and ends[boundary] <= word.start:
            boundary += 1
            close()
        group.append(word)
    close()
    return units


def reference_windows(units, size, overlap):
    def extent(first):
        last, total = first, 0
        while last < len(units) and (last == first or total + units[last].cost <= size):
            total += units[last].cost
            last += 1
        return last

    first = 0
    while first < len(units):
        last = extent(first)
        yield first, last
        if last == len(units):
            return
        following, repeated = last, 0
        while following - 1 > first and repeated + units[following - 1].cost <= overlap:
            following -= 1
            repeated += units[following].cost
        while following < last and extent(following) <= last:
            following += 1
        first = following


def reference_spans(text, settings, tokenizer=None):
    """The chunks' offsets as semrel computed them with a Python object per word (before 0.x)."""
    words = list(WORD.finditer(text))
    if not words:
        return []
    if settings.size is None:
        return [(words[0].start(), words[-1].end())]
    units = [Unit(m.start(), m.end(), c) for m, c in zip(words, reference_costs(text, words, tokenizer))]
    if settings.sentences:
        units = reference_sentences(text, units, settings.size)
    return [(units[a].start, units[b - 1].end) for a, b in reference_windows(units, settings.size, settings.overlap)]


VOCABULARY = ["bee", "hive", "Queen.", "drones!", "wax?", "(nectar).", '"pollen."', "a", "forty-thousand", "é",
              "naïve", "日本語", "句子。", "x" * 30, "end.)", "\u00a0", "ok"]


def random_text(rng: random.Random, words: int) -> str:
    parts = []
    for _ in range(words):
        parts.append(rng.choice(VOCABULARY))
        parts.append(rng.choice([" ", " ", " ", "  ", "\n", "\n\n", "\t", " \n \n", "\u2003"]))
    return rng.choice(["", " ", "\n"]) + "".join(parts)


def spans(chunks):
    return [(c.start, c.end) for c in chunks]


@pytest.mark.parametrize("seed", range(40))
def test_the_same_chunks_as_the_per_word_definition(seed):
    rng = random.Random(seed)
    text = random_text(rng, rng.randint(0, 400))
    for settings in (ChunkSettings(), ChunkSettings(size=rng.randint(1, 30), overlap=0),
                     ChunkSettings(size=12, overlap=rng.randint(0, 11)),
                     ChunkSettings(size=rng.randint(1, 40), overlap=0, sentences=True),
                     ChunkSettings(size=20, overlap=rng.randint(0, 19), sentences=True)):
        assert spans(chunk_document(Document("d", text), settings)) == reference_spans(text, settings), settings


@pytest.fixture(scope="module")
def tokenizer():
    return load_encoder(None)[0]


@pytest.mark.parametrize("seed", range(6))
def test_token_costs_match_the_definition_and_long_texts_tokenized_in_blocks_agree(tokenizer, seed, monkeypatch):
    rng = random.Random(seed)
    text = random_text(rng, 600)
    for settings in (ChunkSettings(size=25, overlap=5, unit="tokens"), ChunkSettings(size=40, unit="tokens", sentences=True)):
        whole = spans(chunk_document(Document("d", text), settings, tokenizer))
        assert whole == reference_spans(text, settings, tokenizer)
        monkeypatch.setattr(chunking, "TOKENIZE_BLOCK", 97)  # many blocks: each word still counts as in the whole text
        assert spans(chunk_document(Document("d", text), settings, tokenizer)) == whole
        monkeypatch.undo()


MEASURE = """
import resource, subprocess, sys
limit = int(sys.argv[1])
def cap():
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
code = subprocess.run(sys.argv[2:], preexec_fn=cap).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(code)
"""


def peak_rss_mb(args: list[str], limit_gb: float = 3.0) -> tuple[int, float]:
    """(exit code, peak RSS in MB) of `python -m semrel.cli args` run under an address-space limit."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", MEASURE, str(int(limit_gb * 2**30)), sys.executable, "-m", "semrel.cli", *args],
                          env=env, capture_output=True, text=True, timeout=600)
    return done.returncode, int(done.stdout.strip().splitlines()[-1]) / 1024


@pytest.mark.slow
def test_a_100_mb_document_is_cut_within_five_times_its_size(tmp_path):
    rng = random.Random(0)
    words = ["bees", "forage", "within", "three", "kilometres", "of", "the", "hive.", "A", "colony", "holds", "workers!"]
    line = " ".join(rng.choice(words) for _ in range(2000)) + "\n"
    document = tmp_path / "big.txt"
    size = 100 * 2**20
    with open(document, "w", encoding="ascii") as out:
        for _ in range(size // len(line)):
            out.write(line)
    megabytes = os.path.getsize(document) / 2**20
    code, rss = peak_rss_mb(["corpus", "chunk", str(document), "--size", "200", "--overlap", "20", "-o", str(tmp_path / "c.jsonl")])
    assert code == 0
    print(f"corpus chunk of one {megabytes:.0f} MB document: peak RSS {rss:.0f} MB ({rss / megabytes:.1f}x)")
    assert rss < 5 * megabytes
    with open(tmp_path / "c.jsonl", encoding="utf-8") as corpus:
        first = json.loads(corpus.readline())
    assert first["_id"] == "big#0" and len(first["text"].split()) == 200
    assert Path(tmp_path / "c.jsonl.manifest.json").exists()


def test_a_jsonl_corpus_is_chunked_as_a_stream(tmp_path):
    """Every document was read before the first was cut: 71 MB of JSONL peaked 76 MB above a small
    corpus's run. Now memory stays near the interpreter's own, whatever the corpus's size. The small
    run is the baseline, measured here, because the interpreter's own size differs between machines."""
    rng = random.Random(1)
    words = ["bees", "forage", "within", "three", "kilometres", "of", "the", "hive.", "A", "colony", "holds", "workers!"]

    def chunk_peak(documents: int) -> tuple[float, float]:
        corpus = tmp_path / f"docs{documents}.jsonl"
        with open(corpus, "w", encoding="ascii") as out:
            for i in range(documents):
                out.write(json.dumps({"id": f"d{i}", "text": " ".join(rng.choices(words, k=300))}) + "\n")
        output = tmp_path / f"c{documents}.jsonl"
        code, rss = peak_rss_mb(["corpus", "chunk", str(corpus), "--size", "100", "-o", str(output)])
        assert code == 0
        assert sum(1 for _ in open(output, encoding="utf-8")) == 3 * documents
        return os.path.getsize(corpus) / 2**20, rss

    _, baseline = chunk_peak(100)
    megabytes, rss = chunk_peak(40_000)
    print(f"corpus chunk of a {megabytes:.0f} MB JSONL corpus: peak RSS {rss:.0f} MB, {rss - baseline:.0f} MB above 100 documents")
    assert megabytes > 60 and rss - baseline < 0.4 * megabytes


@pytest.mark.parametrize("command", ["validate", "stats", "import", "import llamaindex"])
def test_golden_commands_read_the_corpus_as_a_stream(tmp_path, command):
    """They held every chunk's text to check ids, count words or match contexts: a 69 MB corpus peaked 66 MB above a small
    one's run (import 67 MB; a rag_dataset's import, which indexed every chunk, 970 MB). Now they keep the ids (validate,
    import) or the lengths (stats, a rag_dataset's median chunk); a rag_dataset's contexts are indexed, not the chunks.
    The small corpus's run is the baseline, as above."""
    queen = "The queen lays up to two thousand eggs a day."
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"query_id": "q", "query": "Q?", "reference_answer": "A.", "gold_chunk_ids": ["d1#0"]}) + "\n")
    rag = tmp_path / "rag_dataset.json"
    rag.write_text(json.dumps({"examples": [{"query": "Eggs?", "reference_contexts": [queen], "reference_answer": "2000."}]}))
    source = {"validate": [str(golden)], "stats": [str(golden)], "import": [str(golden), "--format", "jsonl"],
              "import llamaindex": [str(rag)]}[command]
    text = "bees forage within three kilometres of the hive " * 500

    def peak(chunks: int) -> tuple[float, float]:
        corpus, output = tmp_path / f"c{chunks}.jsonl", tmp_path / f"g{chunks}.jsonl"
        with open(corpus, "w", encoding="ascii") as out:
            for i in range(chunks):
                out.write(json.dumps({"_id": f"d{i}#0", "text": text + queen * (i == 1)}) + "\n")
        written = ["-o", str(output)] if command.startswith("import") else []
        code, rss = peak_rss_mb(["golden", command.split()[0], *source, "--corpus", str(corpus), *written])
        assert code == 0
        if written:
            assert [json.loads(line)["gold_chunk_ids"] for line in open(output, encoding="utf-8")] == [["d1#0"]]
        return os.path.getsize(corpus) / 2**20, rss

    _, baseline = peak(10)
    megabytes, rss = peak(3_000)
    print(f"golden {command} with a {megabytes:.0f} MB corpus: peak RSS {rss:.0f} MB, {rss - baseline:.0f} MB above 10 chunks")
    assert megabytes > 60 and rss - baseline < 0.4 * megabytes
