"""TREC collections (SGML documents, topics, document qrels), document ids in gold sets, and query samples."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from helpers import SHARED_DATA, assert_one_error, needs_shared, ok, read_lines, run, write
from semrel.errors import ValidationError
from semrel.golden.locate import answer_chunks
from semrel.golden.sources import CorpusIds, as_spelled, corpus_ids, map_document_ids
from semrel.golden.trec import read_topics
from semrel.records import Chunk, GoldenItem, QuerySample

DATA = Path(__file__).resolve().parents[2] / "data" / "trec"
CLASSIC = """<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal activity.

<narr> Narrative:
A relevant document must name the organization.
</top>

<top>
<num>302</num><title>Poliomyelitis &amp; Post-Polio</title>
</top>
"""
COVID_STYLE = """<topics>
<topic number="1">
  <query>coronavirus origin</query>
  <question>what is the origin of COVID-19</question>
  <narrative>seeking range of information about the SARS-CoV-2 virus's origin</narrative>
</topic>
</topics>
"""



def test_topics_classic_with_or_without_closing_tags_and_trec_covid_style(tmp_path):
    topics = read_topics(write(tmp_path / "t.txt", CLASSIC))
    assert [(t.number, t.fields["title"]) for t in topics] == [("301", "International Organized Crime"),
                                                               ("302", "Poliomyelitis & Post-Polio")]
    assert topics[0].fields["desc"] == "Identify organizations that participate in international criminal activity."
    assert topics[0].fields["narr"] == "A relevant document must name the organization."
    (covid,) = read_topics(write(tmp_path / "c.xml", COVID_STYLE))
    assert covid.number == "1" and covid.fields == {"title": "coronavirus origin", "desc": "what is the origin of COVID-19",
                                                    "narr": "seeking range of information about the SARS-CoV-2 virus's origin"}


def test_a_trec_collection_in_three_commands_scores_as_its_document_qrels(tmp_path):
    """README's TREC commands: the import chunks the documents itself; gold = the judged documents' chunks."""
    corpus, golden, run_file = tmp_path / "corpus.jsonl", tmp_path / "golden.jsonl", tmp_path / "bm25.run"
    result = ok("golden", "import", DATA / "topics.txt", "--qrels", DATA / "qrels.txt", "--docs", DATA / "bikes.trec",
                "--corpus-out", corpus, "-o", golden)
    assert "the BERTScore judge needs them" in result.stderr and "8 queries, 8 with gold chunks" in result.stderr
    # the remedy first, and the topic field as an answer with what it is worth (it read as the first remedy)
    assert "needs them: evaluate on the qrels only (no judge); --answer-col desc" in result.stderr
    assert "a description is no answer" in result.stderr
    items = {i["query_id"]: i for i in read_lines(golden)}
    assert items["402"]["gold_chunk_ids"] == ["BIKE-chain-care-3#0", "BIKE-chain-care-4#0"]
    assert items["402"]["meta"]["grades"] == {"BIKE-chain-care-3#0": 2, "BIKE-chain-care-4#0": 1, "BIKE-gears-3#0": 0}
    assert items["402"]["query"] == "chain wear replacement" and items["402"]["meta"]["no_answer"]
    ok("retrieve", "--corpus", corpus, "--golden", golden, "-o", run_file)
    scores = ok("eval", golden, run_file, "-m", "AP,nDCG@10", "-f", "json").stdout
    # the same documents chunked whole keep the document ids, so the TREC qrels score the run directly
    ok("corpus", "chunk", DATA / "bikes.trec", "--whole", "-o", tmp_path / "whole.jsonl")
    ok("golden", "import", DATA / "topics.txt", "--format", "trec", "--qrels", DATA / "qrels.txt",
       "--corpus", tmp_path / "whole.jsonl", "-o", tmp_path / "g2.jsonl")
    ok("retrieve", "--corpus", tmp_path / "whole.jsonl", "--golden", tmp_path / "g2.jsonl", "-o", tmp_path / "w.run")
    direct = ok("eval", DATA / "qrels.txt", tmp_path / "w.run", "-m", "AP,nDCG@10", "-f", "json").stdout
    assert ok("eval", tmp_path / "g2.jsonl", tmp_path / "w.run", "-m", "AP,nDCG@10", "-f", "json").stdout == direct
    assert scores.replace("bm25", "w") == direct


def test_trec_answers_from_a_topic_field_and_chunked_documents(tmp_path):
    ok("golden", "import", DATA / "topics.txt", "--qrels", DATA / "qrels.txt", "--docs", DATA / "bikes.trec",
       "--answer-col", "desc", "--size", "40", "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    item = read_lines(tmp_path / "g.jsonl")[2]
    assert item["reference_answer"] == "What does a soft or spongy hydraulic brake lever mean?"
    chunks = [c["_id"] for c in read_lines(tmp_path / "c.jsonl") if c["doc_id"] == "BIKE-brakes-2"]
    assert len(chunks) > 2 and item["gold_chunk_ids"] == chunks and item["meta"]["gold_documents"] == ["BIKE-brakes-2"]
    ok("golden", "import", DATA / "topics.txt", "--qrels", DATA / "qrels.txt", "--docs", DATA / "bikes.trec", "--size", "40",
       "--doc-qrels", "first-chunk", "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g1.jsonl")
    assert read_lines(tmp_path / "g1.jsonl")[2]["gold_chunk_ids"] == [chunks[0]]
    assert_one_error(run("golden", "import", DATA / "topics.txt", "--qrels", DATA / "qrels.txt", "--answer-col", "answer",
                         "--corpus", tmp_path / "c.jsonl", "-o", tmp_path / "x.jsonl"), "--answer-col", "title, desc, narr", code=2)
    assert_one_error(run("golden", "import", DATA / "topics.txt", "--format", "trec", "-o", tmp_path / "x.jsonl"),
                     "--qrels", code=2)


def test_the_manifests_of_a_trec_import_record_its_qrels_and_documents(tmp_path):
    """They recorded the topics alone: the qrels that make the gold and the documents that make the corpus went unhashed."""
    ok("golden", "import", DATA / "topics.txt", "--qrels", DATA / "qrels.txt", "--docs", DATA / "bikes.trec",
       "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    for output in ("g.jsonl", "c.jsonl"):
        inputs = json.loads((tmp_path / f"{output}.manifest.json").read_text())["inputs"]
        assert [i["path"] for i in inputs] == [str(DATA / name) for name in ("topics.txt", "qrels.txt", "bikes.trec")]
        assert all(len(i["sha256"]) == 64 for i in inputs)


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    text = " ".join(f"word{n}" for n in range(30))
    write(tmp_path / "beir" / "corpus.jsonl", "".join(f'{{"_id": "{d}", "title": "", "text": "{text} {d}"}}\n'
                                                      for d in ("1239", "77", "5")))
    write(tmp_path / "beir" / "queries.jsonl", '{"_id": "q1", "text": "first?"}\n{"_id": "q2", "text": "second?"}\n')
    write(tmp_path / "beir" / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\nq1\t1239\t1\nq2\t77\t1\nq2\t5\t1\n")
    return tmp_path / "beir"


def test_document_qrels_on_a_chunked_corpus_get_advice_that_works(beir, tmp_path):
    ok("corpus", "chunk", beir, "--size", "12", "-o", tmp_path / "chunks.jsonl")
    line = assert_one_error(run("golden", "import", beir, "--corpus", tmp_path / "chunks.jsonl", "-o", tmp_path / "g.jsonl"),
                            "gold ids are document ids", "'1239'", "'1239#0', '1239#1', ...", "--doc-qrels all-chunks",
                            "--whole")
    assert "re-chunk" not in line
    # the advice, followed: every chunk of a relevant document
    ok("golden", "import", beir, "--corpus", tmp_path / "chunks.jsonl", "--doc-qrels", "all-chunks", "-o", tmp_path / "g.jsonl")
    items = read_lines(tmp_path / "g.jsonl")
    assert items[0]["gold_chunk_ids"] == ["1239#0", "1239#1", "1239#2"] and items[0]["meta"]["gold_documents"] == ["1239"]
    assert items[1]["gold_chunk_ids"] == ["77#0", "77#1", "77#2", "5#0", "5#1", "5#2"]
    # or one chunk per document, named as the document
    ok("corpus", "chunk", beir, "--whole", "-o", tmp_path / "whole.jsonl")
    ok("golden", "import", beir, "--corpus", tmp_path / "whole.jsonl", "-o", tmp_path / "g2.jsonl")
    assert [i["gold_chunk_ids"] for i in read_lines(tmp_path / "g2.jsonl")] == [["1239"], ["77", "5"]]
    # ids that are neither chunk nor document ids say so
    write(tmp_path / "odd.csv", "query,answer,gold_chunk_ids\nq?,a,nowhere#3\n")
    assert_one_error(run("golden", "import", tmp_path / "odd.csv", "--corpus", tmp_path / "whole.jsonl", "-o", tmp_path / "x.jsonl"),
                     "'nowhere#3'", "neither as chunk ids nor as document ids", "--size and --overlap")


def test_a_file_name_given_as_a_gold_id_is_its_document(tmp_path):
    """A golden CSV naming each answer's source file ('1239.md') was refused as ids found nowhere: a document's id is its
    file name without the suffix, and the file name now stands for it as the document id does (refused without
    --doc-qrels, with what works; mapped with it and counted). An id that is no such file name is still unknown."""
    write(tmp_path / "docs" / "1239.md", "Cleaning the chain keeps it quiet. " * 5)
    ok("corpus", "chunk", tmp_path / "docs", "--size", "12", "-o", tmp_path / "chunks.jsonl")
    write(tmp_path / "files.csv", "query,answer,gold\nq?,a,1239.md\n")
    assert_one_error(run("golden", "import", tmp_path / "files.csv", "--corpus", tmp_path / "chunks.jsonl", "-o",
                         tmp_path / "x.jsonl"), "gold ids are document ids", "(first: '1239.md' of query 'q1', a file name: the "
                     "document '1239', whose chunks are '1239#0', '1239#1', ...): give --doc-qrels all-chunks", "--doc-qrels answer-chunk")
    result = ok("golden", "import", tmp_path / "files.csv", "--corpus", tmp_path / "chunks.jsonl", "--doc-qrels", "first-chunk",
                "-o", tmp_path / "x.jsonl")
    assert "gold ids that are file names, taken as their documents (e.g. '1239.md' is '1239'): 1" in result.stderr
    assert read_lines(tmp_path / "x.jsonl")[0]["gold_chunk_ids"] == ["1239#0"]
    write(tmp_path / "other.csv", "query,answer,gold\nq?,a,9999.md\n")
    assert_one_error(run("golden", "import", tmp_path / "other.csv", "--corpus", tmp_path / "chunks.jsonl", "-o",
                         tmp_path / "x.jsonl"), "'9999.md'", "neither as chunk ids nor as document ids")


MANUAL = """# Bike care

Clean the chain every month. Use a rag and degreaser to remove the old grime from each link.

After cleaning, apply a drop of oil on the rollers of each link and wipe off the excess after ten minutes.

Tyres should be pumped to the pressure printed on their sidewall, usually between 80 and 120 psi for road bikes.

Brake pads wear out; replace them when the grooves are gone.
"""


def test_answer_chunk_finds_the_chunk_of_a_named_document_that_holds_the_answer(tmp_path):
    """A golden CSV that says which file each answer is in, not which chunk: --doc-qrels answer-chunk makes gold the
    chunk holding the answer's words (punctuation aside), else the one sharing most of its word pairs, else none, and
    says how many went each way. all-chunks would make all 4 chunks gold, first-chunk the title's."""
    write(tmp_path / "docs" / "manual.md", MANUAL)
    ok("corpus", "chunk", tmp_path / "docs", "--size", "20", "--overlap", "0", "-o", tmp_path / "c.jsonl")
    assert [c["text"].split()[-1] for c in read_lines(tmp_path / "c.jsonl")] == ["each", "after", "for", "gone."]
    write(tmp_path / "g.csv", "question,answer,source\n"
                              "Where is oil applied?,On the rollers of each link.,manual.md\n"  # in manual#1 as written
                              "How hard to pump tyres?,To the pressure on the tyre wall: 80 to 120 psi on a road bike.,manual.md\n"
                              "Who?,Nobody knows,manual.md\n")  # no word pair of it anywhere
    result = ok("golden", "import", tmp_path / "g.csv", "--corpus", tmp_path / "c.jsonl", "--chunk-ids-col", "source",
                "--doc-qrels", "answer-chunk", "-o", tmp_path / "g.jsonl")
    assert [line for line in result.stderr.splitlines() if "warning" in line] == [
        "semrel: warning: gold ids that are file names, taken as their documents (e.g. 'manual.md' is 'manual'): 3",
        "semrel: warning: relevant documents (made into 2 gold chunks, --doc-qrels answer-chunk): 3",
        "semrel: warning: relevant documents no chunk of which holds the answer's text, whose gold is the chunk sharing most "
        "of its word pairs (--doc-qrels answer-chunk; the least shares, worth a look: 'q2' 0.21; meta.answer_chunks gives "
        "each): 1",
        "semrel: warning: relevant documents sharing no word pair with the answer, which give no gold chunk (--doc-qrels "
        "answer-chunk; `semrel golden pick` picks it by hand): 1"]
    items = read_lines(tmp_path / "g.jsonl")
    assert [i["gold_chunk_ids"] for i in items] == [["manual#1"], ["manual#2"], []]
    assert [i["meta"]["answer_chunks"] for i in items] == [
        {"manual": {"how": "text", "score": 1.0, "chunks": 1}}, {"manual": {"how": "pairs", "score": 0.2143, "chunks": 1}},
        {"manual": {"how": "none", "score": 0.0, "chunks": 0}}]
    assert items[0]["meta"]["gold_documents"] == ["manual"]
    # golden stats (and the report, which shows them) say how much of the gold rests on word pairs alone
    stats = json.loads(ok("golden", "stats", tmp_path / "g.jsonl", "-f", "json").stdout)
    assert {k: v for k, v in stats["counts"].items() if k.endswith("(answer-chunk)")} == {
        "gold documents whose chunk holds the answer's text (answer-chunk)": 1,
        "gold documents whose chunk shares only word pairs of the answer (answer-chunk)": 1,
        "gold documents of which no chunk shares a word pair of the answer (answer-chunk)": 1}
    # and name the queries on the least share, which the import's warning alone had named (stderr, gone after a run)
    note = ("gold found by the answer's word pairs alone, on the least shares (worth a look: `semrel golden pick` picks again a "
            "query whose gold_chunk_ids you clear): 'q2' 0.21")
    assert stats["notes"] == [note]
    assert ok("golden", "stats", tmp_path / "g.jsonl").stdout.endswith(f"\n{note}\n")
    ok("report", "--golden", tmp_path / "g.jsonl", "-o", tmp_path / "r.html")
    assert note.replace("'", "&#39;") in (tmp_path / "r.html").read_text()
    # a typo in the file's name was blamed on the chunking alone, and sent to `golden validate`, which reads no CSV
    write(tmp_path / "typo.csv", "question,answer,source\nWhere is oil applied?,On the rollers.,manul.md\n")
    line = assert_one_error(run("golden", "import", tmp_path / "typo.csv", "--corpus", tmp_path / "c.jsonl", "--chunk-ids-col",
                                "source", "--doc-qrels", "answer-chunk", "-o", tmp_path / "t.jsonl"),
                            "(first: 'manul.md' of query 'q1'; did you mean 'manual.md', of the document 'manual'?)")
    assert "golden validate" not in line


def test_an_unknown_chunk_id_in_nfd_gets_no_suggestion_cut_from_a_file_name(tmp_path):
    """'café#0' in NFD (an id built from a macOS file name) differs from its NFC stem, so it passed for a file name, and
    the suggestion cut at the NFC stem's length lost the '#': 'did you mean café0', a chunk no corpus holds. In NFD, a
    file name still gets its document."""
    write(tmp_path / "docs" / "café.txt", "Chain oil goes on the rollers.")
    ok("corpus", "chunk", tmp_path / "docs", "-o", tmp_path / "c.jsonl")
    nfd = unicodedata.normalize("NFD", "café")
    for gold, said in ((f"{nfd}#1", f"(first: '{nfd}#1' of query 'q1'), neither"),
                       (f"{nfd}s.md", f"(first: '{nfd}s.md' of query 'q1'; did you mean 'café.md', of the document 'café'?)")):
        write(tmp_path / "g.csv", f"question,answer,gold\nWhere?,On the rollers.,{gold}\n")
        assert_one_error(run("golden", "import", tmp_path / "g.csv", "--corpus", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"),
                         said)


def test_gold_ids_in_another_unicode_form_are_written_as_the_corpus_spells_them(tmp_path):
    """'café#0' typed in NFD (an e and a combining accent, as macOS names files) is not the corpus's 'café#0' in NFC,
    which `corpus chunk` makes of any file: the import refused it as no chunk of the corpus, and without --corpus its
    qrels matched no run. With --corpus it is written as the corpus spells it (grades too), and said; ids the corpus holds
    as they are stay as they are, whatever their form."""
    nfc, nfd = "café", unicodedata.normalize("NFD", "café")
    write(tmp_path / "docs" / f"{nfd}.txt", "Espresso is brewed by forcing hot water through ground coffee.")
    write(tmp_path / "docs" / "tea.txt", "Green tea is steamed, not fermented.")
    ok("corpus", "chunk", tmp_path / "docs", "-o", tmp_path / "c.jsonl")
    golden = write(tmp_path / "g.jsonl", "".join(json.dumps(row) + "\n" for row in (
        {"query_id": "q1", "query": "How is espresso made?", "reference_answer": "hot water", "gold_chunk_ids": [f"{nfd}#0"],
         "meta": {"grades": {f"{nfd}#0": 2}}},
        {"query_id": "q2", "query": "Is green tea fermented?", "reference_answer": "no", "gold_chunk_ids": ["tea#0"]})))
    out = tmp_path / "out.jsonl"
    result = ok("golden", "import", golden, "--corpus", tmp_path / "c.jsonl", "-o", out, "--qrels-out", tmp_path / "g.qrels")
    assert "semrel: warning: gold ids written as the corpus spells them, which differed from its ids only in Unicode form (e.g. " \
           "'cafe\\u0301#0' is 'caf\\xe9#0': an accent typed apart, as macOS names files): 1" in result.stderr.splitlines()
    assert [(i["gold_chunk_ids"], i["meta"].get("grades")) for i in read_lines(out)] == [([f"{nfc}#0"], {f"{nfc}#0": 2}), (["tea#0"], None)]
    assert (tmp_path / "g.qrels").read_text(encoding="utf-8") == f"q1 0 {nfc}#0 2\nq2 0 tea#0 1\n"
    assert ok("golden", "validate", out, "--corpus", tmp_path / "c.jsonl").stdout == ""
    # a document id in NFD is the corpus's document too (mapped to its chunks as --doc-qrels says)
    write(tmp_path / "d.csv", f"question,answer,gold\nHow is espresso made?,hot water,{nfd}\n")
    ok("golden", "import", tmp_path / "d.csv", "--corpus", tmp_path / "c.jsonl", "--doc-qrels", "all-chunks", "-o", out)
    assert read_lines(out)[0]["gold_chunk_ids"] == [f"{nfc}#0"]


def test_ids_the_corpus_holds_as_they_are_keep_their_form():
    """A corpus of JSONL documents keeps their ids as given, NFD too: the gold is written in the corpus's form, whichever
    it is, and an id the corpus holds exactly is never changed (nor one it spells two ways, which is not known)."""
    nfc, nfd = "café#0", unicodedata.normalize("NFD", "café#0")
    items = [GoldenItem("q1", "Q?", ("a",), (nfc,)), GoldenItem("q2", "Q?", ("a",), (nfd, "tea#0"))]
    assert as_spelled(items, CorpusIds({nfd, "tea#0"}, {}))[0] == [GoldenItem("q1", "Q?", ("a",), (nfd,)), items[1]]
    assert as_spelled(items, CorpusIds({nfd, "tea#0"}, {}))[1] == {nfc: nfd}
    assert as_spelled(items, CorpusIds({nfc, nfd}, {})) == (items, {})
    # accents out of their canonical order: neither NFC nor NFD, and a corpus that holds both leaves it unknown
    third = [GoldenItem("q3", "Q?", ("a",), ("e\u0301\u0323#0",))]
    forms = {unicodedata.normalize(form, "e\u0301\u0323#0") for form in ("NFC", "NFD")}
    assert len(forms) == 2 and as_spelled(third, CorpusIds(forms, {})) == (third, {})
    assert as_spelled(third, CorpusIds({"e\u0323\u0301#0"}, {}))[1] == {"e\u0301\u0323#0": "e\u0323\u0301#0"}


def test_a_gold_id_in_another_unicode_form_than_the_corpus_names_the_corpus_spelling(tmp_path):
    """validate, and every command that checks gold against a corpus (split --together documents, pick, judge), said only
    'not in the corpus' of an id that prints as the corpus's: they name the corpus's id and the import that writes it so."""
    nfd = unicodedata.normalize("NFD", "café")
    write(tmp_path / "docs" / "café.txt", "Espresso is brewed by forcing hot water through ground coffee.")
    ok("corpus", "chunk", tmp_path / "docs", "-o", tmp_path / "c.jsonl")
    golden = write(tmp_path / "g.jsonl", json.dumps({"query_id": "q1", "query": "How is espresso made?", "reference_answer": "hot water",
                                                     "gold_chunk_ids": [f"{nfd}#0"]}) + "\n")
    spelled = ("the corpus has 'café#0', the same id in another Unicode form ('caf\\xe9#0', not 'cafe\\u0301#0': an accent typed "
               "apart, as macOS names files): import the golden set's source again with `semrel golden import SOURCE --corpus "
               "CORPUS`, which writes gold ids as the corpus spells them")
    result = run("golden", "validate", golden, "--corpus", tmp_path / "c.jsonl")
    assert result.exit_code == 1
    assert result.stdout == f"{golden}:1: error: gold chunk '{nfd}#0' of query 'q1' is not in the corpus; {spelled}\n"
    assert assert_one_error(run("golden", "split", golden, "-o", tmp_path / "parts", "--together", "documents", "--corpus",
                                tmp_path / "c.jsonl", "--sizes", "1")) == (
        f"semrel: error: {golden}: 1 gold chunk id is not in the corpus (first: '{nfd}#0' of query 'q1'); {spelled}; "
        "`semrel golden validate GOLDEN --corpus CORPUS` lists them all")


def test_a_gold_id_cut_at_a_comma_it_holds_is_named_whole_with_the_json_list_that_keeps_it(tmp_path):
    """A file 'report, final.txt' makes the chunk 'report,_final#0'; a cell naming it is split at the comma, and the error
    named only the piece 'report', with no word of the JSON list that keeps an id whole."""
    write(tmp_path / "docs" / "report, final.txt", "Chain oil goes on the rollers.")
    ok("corpus", "chunk", tmp_path / "docs", "-o", tmp_path / "c.jsonl")
    write(tmp_path / "g.csv", 'question,answer,gold\nWhere?,On the rollers.,"report,_final#0"\n')
    assert_one_error(run("golden", "import", tmp_path / "g.csv", "--corpus", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl"),
                     "(first: 'report' of query 'q1'; the chunk id 'report,_final#0' holds ',', at which a cell's ids are split: "
                     'give the cell as a JSON list, ["report,_final#0"])')
    write(tmp_path / "g.csv", 'question,answer,gold\nWhere?,On the rollers.,"[""report,_final#0""]"\n')
    ok("golden", "import", tmp_path / "g.csv", "--corpus", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")


@pytest.mark.parametrize("source", ["docs/manual.md", "/home/me/project/docs/manual.md", "docs/manual"])
def test_a_gold_id_that_is_a_path_to_the_document_names_the_document_its_tail_names(tmp_path, source):
    """A loader's `source` is the path it was given ('docs/manual.md', or absolute); the corpus names the document by its
    path inside the folder chunked ('manual'). The import refused it, blaming the chunking, and init saw no column of
    documents in it, so `semrel run` imported no gold at all."""
    write(tmp_path / "docs" / "manual.md", MANUAL)
    write(tmp_path / "docs" / "sub" / "manual.md", "Another manual, on brakes: pads wear out.")
    ok("corpus", "chunk", tmp_path / "docs", "--size", "20", "-o", tmp_path / "c.jsonl")
    golden = {}
    for name, gold in (("named", "manual.md"), ("path", source)):
        write(tmp_path / f"{name}.csv", f"question,answer,source\nWhere is oil applied?,On the rollers.,{gold}\n")
        ok("golden", "import", tmp_path / f"{name}.csv", "--corpus", tmp_path / "c.jsonl", "--chunk-ids-col", "source",
           "--doc-qrels", "answer-chunk", "-o", tmp_path / f"{name}.jsonl")
        golden[name] = read_lines(tmp_path / f"{name}.jsonl")[0]
    assert golden["path"]["gold_chunk_ids"] == golden["named"]["gold_chunk_ids"] != []
    assert golden["path"]["meta"]["gold_documents"] == ["manual"]
    said = ok("init", "--golden", tmp_path / "path.csv", "--docs", tmp_path / "docs", "-o", tmp_path / "semrel.toml").stderr
    assert "column 'source' names each answer's document" in said
    # the longest tail is the document: sub/manual.md is the other manual, not 'manual'
    write(tmp_path / "sub.csv", "question,answer,source\nWhat wears out?,Pads.,/home/me/docs/sub/manual.md\n")
    ok("golden", "import", tmp_path / "sub.csv", "--corpus", tmp_path / "c.jsonl", "--chunk-ids-col", "source",
       "--doc-qrels", "all-chunks", "-o", tmp_path / "sub.jsonl")
    assert read_lines(tmp_path / "sub.jsonl")[0]["meta"]["gold_documents"] == ["sub/manual"]


def test_a_file_name_with_spaces_in_the_source_column_is_one_document(tmp_path):
    """'Bike Manual.md' was cut at its spaces into the ids 'Bike' and 'Manual.md', refused as unknown; a file name is
    one id, its blanks made '_' as the corpus's document id has them. Ids a cell separates by spaces still part."""
    write(tmp_path / "docs" / "Bike Manual.md", MANUAL)
    write(tmp_path / "docs" / "old notes" / "brakes v2.md", "Another manual, on brakes: pads wear out.")
    ok("corpus", "chunk", tmp_path / "docs", "--size", "20", "-o", tmp_path / "c.jsonl")
    write(tmp_path / "g.csv", "question,answer,source\nWhere is oil applied?,On the rollers.,Bike Manual.md\n"
                              "What wears out?,Pads.,/home/me/docs/old notes/brakes v2.md\n"
                              "Both?,Pads.,Bike Manual.md; old notes/brakes v2.md\n"
                              "Chunks?,Pads.,Bike_Manual#0 old_notes/brakes_v2#0\n"
                              "Listed?,Pads.,\"[\"\"Bike Manual.md\"\"]\"\n")
    ok("golden", "import", tmp_path / "g.csv", "--corpus", tmp_path / "c.jsonl", "--chunk-ids-col", "source",
       "--doc-qrels", "first-chunk", "-o", tmp_path / "g.jsonl")
    assert [i["gold_chunk_ids"] for i in read_lines(tmp_path / "g.jsonl")] == [
        ["Bike_Manual#0"], ["old_notes/brakes_v2#0"], ["Bike_Manual#0", "old_notes/brakes_v2#0"],
        ["Bike_Manual#0", "old_notes/brakes_v2#0"], ["Bike_Manual#0"]]


def test_a_file_named_on_macos_in_nfd_is_the_document_a_golden_set_names_in_nfc(tmp_path):
    """macOS names files in NFD ('e' and a combining accent); a CSV typed on a keyboard has 'café.txt' in NFC, and the
    two, the same to the eye, did not match: the import said the corpus lacked the document."""
    import unicodedata

    write(tmp_path / "docs" / unicodedata.normalize("NFD", "Résumé/café.txt"), "Café crème brûlée.")
    ok("corpus", "chunk", tmp_path / "docs", "-o", tmp_path / "c.jsonl")
    assert [c["_id"] for c in read_lines(tmp_path / "c.jsonl")] == [unicodedata.normalize("NFC", "Résumé/café#0")]
    typed = "question,answer,source\nWhere?,crème,Résumé/café.txt\nAnd?,crème,Résumé/café#0\n"
    write(tmp_path / "g.csv", unicodedata.normalize("NFC", typed))
    ok("golden", "import", tmp_path / "g.csv", "--corpus", tmp_path / "c.jsonl", "--chunk-ids-col", "source",
       "--doc-qrels", "first-chunk", "-o", tmp_path / "g.jsonl")
    assert [i["gold_chunk_ids"] for i in read_lines(tmp_path / "g.jsonl")] == [["Résumé/café#0"]] * 2


def test_answer_chunk_where_several_chunks_hold_a_short_answer_keeps_those_nearest_the_question():
    """'ten' is in two chunks; the question's words tell which (all of them on a tie)."""
    chunks = [("d#0", "It took ten days to fix the brakes."), ("d#1", "The chain has ten links per inch."), ("d#2", "Nothing.")]
    assert answer_chunks("How many links per inch has the chain?", ["ten"], chunks) == (["d#1"], "text", 1.0)
    assert answer_chunks("How many?", ["ten"], chunks) == (["d#0", "d#1"], "text", 1.0)
    assert answer_chunks("Q?", ["", "the brakes took ten days"], chunks) == (["d#0"], "pairs", 0.75)
    assert answer_chunks("Q?", ["x"], chunks) == ([], "none", 0.0)


def test_answer_chunk_weighs_every_reference_answer_and_reads_words_not_characters():
    """A golden set may give several answers (SQuAD's variants): the chunk holding any one of them is gold, and the
    best share of any one answer's pairs ranks the rest. Question words are words, punctuation aside ('chain?')."""
    chunks = [("d#0", "It took ten days to fix the brakes."), ("d#1", "The chain has ten links per inch."), ("d#2", "* * *")]
    assert answer_chunks("Q?", ["eleven", "ten days"], chunks) == (["d#0"], "text", 1.0)  # not only a chunk holding every answer
    assert answer_chunks("Q?", ["the chain had nine links", "it took ten days to mend"], chunks) == (["d#0"], "pairs", 0.8)
    assert answer_chunks("Which chain?", ["ten"], chunks) == (["d#1"], "text", 1.0)
    assert answer_chunks("Q?", ["?", "took ten"], chunks) == (["d#0"], "text", 1.0)  # an answer of no words holds nowhere
    assert answer_chunks("Q?", ["ten"], []) == ([], "none", 0.0)  # a document without chunks


def test_answer_chunk_ties_go_to_document_order_not_id_order():
    """Chunks that tie keep the document's order (a chunk id's text sorts 'd#10' before 'd#9'), and on a tie of word
    pairs the first of them is the one gold chunk."""
    chunks = [("d#9", "The chain has ten links."), ("d#10", "Ten links per inch, the chain.")]
    assert answer_chunks("How many?", ["ten links"], chunks) == (["d#9", "d#10"], "text", 1.0)
    assert answer_chunks("Q?", ["the chain is long"], chunks) == (["d#9"], "pairs", 1 / 3)
    assert answer_chunks("Q?", ["the chain is long"], chunks[::-1]) == (["d#10"], "pairs", 1 / 3)


@needs_shared("covid_qa_deepset/200423_covidQA.json")
def test_answer_chunk_recovers_covid_qas_span_gold_from_the_document_alone(tmp_path):
    """COVID-QA's gold chunks come from each answer's character offset. Given only the article (a document id per
    question) and the answer text, answer-chunk finds the same gold chunk for 280 of the first 300 questions: the
    rest are short answers in several chunks, or answers straddling two."""
    corpus, golden = tmp_path / "c.jsonl", tmp_path / "g.jsonl"
    ok("golden", "import", SHARED_DATA / "covid_qa_deepset" / "200423_covidQA.json", "--size", "150", "--limit", "300",
       "--corpus-out", corpus, "-o", golden)
    doc_of = {c["_id"]: c["doc_id"] for c in read_lines(corpus)}
    items = [i for i in read_lines(golden) if i["gold_chunk_ids"]]
    write(tmp_path / "by-doc.jsonl", "".join(json.dumps({
        "query_id": i["query_id"], "query": i["query"], "reference_answer": i["reference_answer"],
        "gold_chunk_ids": sorted({doc_of[g] for g in i["gold_chunk_ids"]})}) + "\n" for i in items))
    ok("golden", "import", tmp_path / "by-doc.jsonl", "--corpus", corpus, "--doc-qrels", "answer-chunk", "-o", tmp_path / "a.jsonl")
    found = {i["query_id"]: i["gold_chunk_ids"] for i in read_lines(tmp_path / "a.jsonl")}
    same = sum(found[i["query_id"]] == i["gold_chunk_ids"] for i in items)
    assert (len(items), same) == (300, 280)


@pytest.mark.parametrize(("mode", "drop_unknown"), [("all-chunks", False), ("first-chunk", False), ("all-chunks", True), (None, False)])
def test_import_keeps_the_ids_its_golden_set_names_and_maps_them_as_with_every_id(mode, drop_unknown):
    """The corpus is read once for the ids the golden set names (chunk ids, document ids and their chunks); mapping
    and checking with those gives what the whole corpus's ids gave, so no more than those needs keeping."""
    chunks = [Chunk(chunk_id, "text", doc_id, 0, 4) for chunk_id, doc_id in
              [("a#0", "a"), ("a#1", "a"), ("a#2", "a"), ("b", "b"), ("c#0", "c"), ("c#1", "c"), ("unnamed#0", "unnamed")]]
    items = [GoldenItem("q1", "Q?", (), ("a", "b", "nowhere"), {}),
             GoldenItem("q2", "Q?", (), ("c",), {"grades": {"c": 2, "a#1": 1, "x": 0}}),
             GoldenItem("q3", "Q?", (), ("b",), {})]
    named = corpus_ids(chunks, items)
    assert named == CorpusIds({"a#0", "a#1", "a#2", "b", "c#0", "c#1"}, {"a": ["a#0", "a#1", "a#2"], "b": ["b"], "c": ["c#0", "c#1"]})
    every = CorpusIds({c.id for c in chunks}, {d: [c.id for c in chunks if c.doc_id == d] for d in dict.fromkeys(c.doc_id for c in chunks)})

    def mapped(ids: CorpusIds) -> object:
        try:
            return map_document_ids(items, ids, mode, "g.jsonl", "corpus.jsonl", drop_unknown)
        except ValidationError as exc:
            return str(exc)

    assert mapped(named) == mapped(every)


def test_query_samples_are_reproducible(tmp_path, monkeypatch):
    items = list(range(50))
    assert QuerySample(size=10, seed=3).apply(items) == QuerySample(size=10, seed=3).apply(items)
    assert QuerySample(size=10, seed=3).apply(items) != QuerySample(size=10, seed=4).apply(items)
    assert QuerySample(size=10, seed=3).apply(items) == sorted(QuerySample(size=10, seed=3).apply(items))
    assert QuerySample(limit=3).apply(items) == [0, 1, 2] and QuerySample(size=99).apply(items) == items
    golden = write(tmp_path / "g.csv", "query,answer\n" + "".join(f"question {n}?,answer {n}\n" for n in range(30)))
    result = ok("golden", "import", golden, "--sample", "5", "--sample-seed", "1", "-o", tmp_path / "s.jsonl")
    assert "5 queries (of 30: --sample)" in result.stderr
    first = [i["query_id"] for i in read_lines(tmp_path / "s.jsonl")]
    ok("golden", "import", golden, "--sample", "5", "--sample-seed", "1", "-o", tmp_path / "s2.jsonl")
    assert [i["query_id"] for i in read_lines(tmp_path / "s2.jsonl")] == first and len(first) == 5
    ok("golden", "import", golden, "--limit", "2", "-o", tmp_path / "l.jsonl")
    assert [i["query_id"] for i in read_lines(tmp_path / "l.jsonl")] == ["q1", "q2"]
    assert_one_error(run("golden", "import", golden, "--limit", "2", "--sample", "3", "-o", tmp_path / "x.jsonl"), "not both",
                     code=2)
    # --sample-seed alone drew nothing and said nothing; from the environment it is a default for whenever --sample is given
    for other in ([], ["--limit", "2"]):
        result = run("golden", "import", golden, "--sample-seed", "1", *other, "-o", tmp_path / "x.jsonl")
        assert result.exit_code == 2 and result.stderr == ("semrel: error: --sample-seed goes with --sample: it seeds the N "
                                                           "queries drawn at random\n")
    monkeypatch.setenv("SEMREL_GOLDEN_IMPORT_SAMPLE_SEED", "1")
    ok("golden", "import", golden, "-o", tmp_path / "e.jsonl")


def test_counts_of_a_sampled_import_say_they_are_the_whole_sources(tmp_path):
    """The importer counts the whole file: `--limit 2` of 30 queries, 10 of them without an answer, said
    'queries without an answer: 10' of a golden set of 2 queries that all have one."""
    rows = "".join(f"question {n}?,{'answer ' + str(n) if n < 20 else ''}\n" for n in range(30))
    golden = write(tmp_path / "g.csv", "query,answer\n" + rows)
    result = ok("golden", "import", golden, "--limit", "2", "-o", tmp_path / "l.jsonl")
    assert "queries without an answer (in the whole source of 30 queries, before sampling): 10" in result.stderr
    assert "before sampling" not in ok("golden", "import", golden, "-o", tmp_path / "all.jsonl").stderr


def test_documents_of_docs_that_are_skipped_are_said_on_stderr(tmp_path):
    """They went to the manifest alone: a TREC collection could lose documents without a word."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "bikes.trec").write_bytes((DATA / "bikes.trec").read_bytes())
    (docs / "empty.md").write_text("\n")
    result = ok("golden", "import", DATA / "topics.txt", "--qrels", DATA / "qrels.txt", "--docs", docs,
                "--corpus-out", tmp_path / "c.jsonl", "-o", tmp_path / "g.jsonl")
    assert "warning: documents of --docs skipped (no text: nothing to chunk): 1" in result.stderr


def test_import_counts_its_pass_over_the_corpus(tmp_path):
    """Checking gold ids against a million-chunk corpus read for 9 s with no line on stderr."""
    from helpers import recorder
    from semrel.golden.importers import import_golden
    from semrel.golden.sources import ImportOptions

    write(tmp_path / "docs" / "manual.md", MANUAL)
    ok("corpus", "chunk", tmp_path / "docs", "--size", "20", "--overlap", "0", "-o", tmp_path / "c.jsonl")
    write(tmp_path / "g.csv", "question,answer,gold\nWhere is oil applied?,On the rollers.,manual#1\n")
    seen: list = []
    import_golden(str(tmp_path / "g.csv"), "auto", ImportOptions(corpus=str(tmp_path / "c.jsonl")), recorder(seen))
    assert [(label, total, sum(counts)) for label, total, counts in seen] == [(f"reading {tmp_path / 'c.jsonl'}", None, 4)]


def test_a_version_number_is_no_file_suffix():
    """'abc v1.2' was read as one file name with a space ('abc_v1.2'), as if '.2' were a suffix like '.pdf'."""
    from semrel.golden.importers import _cell_ids

    assert _cell_ids("abc v1.2") == ["abc", "v1.2"]
    assert _cell_ids("User Guide.pdf; notes v2.md") == ["User_Guide.pdf", "notes_v2.md"]
    assert _cell_ids("old notes/brakes v2.md.gz") == ["old_notes/brakes_v2.md.gz"]
