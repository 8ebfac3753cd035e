"""The starter config `semrel init` writes: commented, with the keys a golden set's shape calls for."""

from __future__ import annotations

import json
import math
import os

from ..errors import UsageError
from ..formats.files import same_file
from ..judging import labels
from ..terminal import agreeing, quantity
from .run_config import within

STARTER_TOP = """\
# semrel run config: `semrel run {name}` runs every step below; a step whose inputs and settings
# are unchanged since it last ran is skipped. Paths are relative to this file.
# Any key can be overridden: SEMREL_LABEL_THRESHOLD=0.72, or `--set label.threshold=0.72` (wins).
# Reference: docs/run.md.
# Written by `semrel init` for {golden} ({what}).

out = "{out}"                  # folder for every output (corpus.jsonl, runs/, judgments.jsonl, report.html...)
"""

STARTER_REST = """
[retrieve]
methods = ["bm25", "dense"]    # any of bm25, dense, hybrid (dense and hybrid encode with MiniLM)
k = 20                         # chunks per query in each run

[bm25]
# k1 = 1.5                     # term saturation; Terrier uses 1.2
# b = 0.75                     # length normalisation
# stemmer = "english"          # Snowball English; "porter", "none", or another PyStemmer algorithm
# stopwords = "en"             # "none", a list name (de, fr, ...) or a file of one word per line

[pool]
depth = 10                     # top chunks of each run the judge scores

[judge]
enabled = {judge}{judge_note}
# model = "all-MiniLM-L6-v2"   # encoder (local folder or name)
# layer = 6
idf = false
rescale = "none"               # none, baseline or corpus
cache = "cache"                # embedding cache, inside out

[label]
# default: relevant when the judge's probability p >= {cut} (docs/judge.md, "Label quality")
# graded = false               # true: grades 0-3 from p
# calibration = "cal.json"     # `semrel calibrate JUDGMENTS REVIEWED -o cal.json`: p refitted on reviewed pairs
# threshold = 0.70             # instead: a threshold on one BERTScore component (on), binary
# on = "R"                     # P, R or F (or p)
# grades = "0.6,0.7,0.8"       # instead: graded labels by thresholds on `on`

[eval]
# eval's default set with recall at the runs' depth (R@100 of 20 chunks a query would be recall at 20); [] = the default
measures = ["nDCG@10", "AP", "RR", "R@20", "P@10", "Success@10"]

[agree]
enabled = true                 # judge labels against the golden set's labels -> agreement.json

[compare]
enabled = true                 # significance of the differences between runs (two or more methods)

[sensitivity]
enabled = true
measure = "nDCG@10"            # how the ranking of runs moves with the label threshold

[lift]
# base = "bm25"                # reranking lift: this run's top chunks reranked by `rerank`
# rerank = "dense"
# depth = 10                   # how many of them are reranked [default: all]

[report]
enabled = true                 # report.html

[engine]
name = "local"                 # where the model runs for judge and dense retrieval: local or ray
# address = "auto"             # ray: an existing cluster (auto, host:port, ray://host:port) [default: start one here]
# workers = 4                  # ray: model workers [default: the cluster's GPUs, else its CPUs]
"""

LONG_CONTEXT = 200  # words: SQuAD contexts longer than this (at the median) are chunked (MiniLM reads 256 tokens)
# words: the largest chunk init suggests for a testset of reference contexts (rag_dataset, ragas, DeepEval). A chunk at the
# contexts' median split half of them, a context then covering two or more chunks, a few words of its tail one of them
# (a gold chunk that barely holds it).
CONTEXT_CHUNK_MAX = 200


def starter_config(output: str, golden: str, docs: str | None = None, out: str = "out", qrels: str | None = None,
                   sample: int | None = None, fmt: str = "auto") -> tuple[str, list[str]]:
    """A commented config that fits `golden` (its format `fmt`, or read from the file: SQuAD, LlamaIndex, ragas, DeepEval, BEIR,
    PubMedQA, MS MARCO QnA, Cranfield, CSV/JSONL, TREC topics), with paths relative to the config's folder, and
    notes for the user (what was found, what is missing)."""
    from ..golden.importers import CONTEXT_FORMATS, FORMAT_NAMES, ONE_CHUNK_EACH
    from ..golden.inspect import document_column, summarise_source

    base = os.path.dirname(os.path.abspath(output))

    def rel(path: str) -> str:
        """`path` relative to the config, as a TOML string (a quote or backslash in a name must not end it); absolute
        where the two share no folder but the root ("../../../data/x" would break when the config moves)."""
        full = os.path.abspath(path)
        shared = os.path.commonpath([full, base])
        text = (full if shared == os.path.dirname(shared) else os.path.relpath(full, base)).replace(os.sep, "/")
        return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")  # JSON's escapes are TOML's, bar DEL

    found = summarise_source(golden, fmt)
    fmt, notes = found.format, []
    what = f"{FORMAT_NAMES.get(fmt, fmt)}, {quantity(found.queries, 'query')}, {found.with_answers:,} with a reference answer"
    corpus: list[str] = []
    folder: str | None = None  # the documents folder to chunk, for formats that do not hold their documents
    golden_lines = [f'file = {rel(golden)}', f'format = "{fmt}"']
    if qrels:
        golden_lines.append(f'qrels = {rel(qrels)}  # the document qrels of the topics')
    elif fmt == "trec":
        raise UsageError(f"{golden}: TREC topics need their qrels: give --qrels QRELS")
    golden_lines.append(f"sample = {sample}                   # queries drawn at random with the seed below; remove for all"
                        if sample else "# sample = 100                 # work on 100 queries drawn at random (or: limit = 100)")
    golden_lines.append("seed = 0")
    if sample and sample >= found.queries:
        notes.append(f"--sample {sample}: the file has {quantity(found.queries, 'query')}; all of them are used")
    if docs and (found.holds_documents or fmt == "beir"):  # said, not dropped without a word
        notes.append(f"--docs {docs}: not used: {FORMAT_NAMES[fmt]} holds its documents")
    median = found.median_context
    if fmt in CONTEXT_FORMATS and not (docs or found.docs_folder):
        corpus += ["# No docs: none were found beside the file, so the import step writes its reference contexts as",
                   "# corpus.jsonl, a chunk each: retrieval then searches the contexts alone. To search the documents",
                   "# they were cut from, set docs to their folder (and size, words per chunk)."]
        notes.append("no documents beside the file: the corpus is its reference contexts, a chunk each (give --docs to chunk "
                     "the documents instead)")
    elif found.holds_documents:
        corpus.append(f"# No docs: {FORMAT_NAMES[fmt]} holds its documents; the import step writes corpus.jsonl from it.")
        if fmt == "squad" and median is not None and median > LONG_CONTEXT:
            corpus += [f"# The contexts are long (median {median:,} words): each is cut into chunks, and the chunk",
                       "# holding the answer is gold.",
                       "size = 150                     # words per chunk", "overlap = 0"]
            notes.append(f"contexts are long (median {median:,} words): chunked into 150-word chunks")
        elif fmt == "squad":
            corpus += [f"# Each context is one chunk (median {median or 0:,} words); set a size to cut them.",
                       "# size = 150"]
        elif fmt in ONE_CHUNK_EACH:
            collection, item = ONE_CHUNK_EACH[fmt]
            corpus.append(f"# (each {collection} {item} is one chunk: size does not apply)")
        else:
            corpus.append("# size = 120                   # one chunk per document unless set")
    elif fmt == "beir" and found.corpus_file:
        corpus += [f'file = {rel(found.corpus_file)}   # the BEIR corpus as it is: one chunk per document, '
                   "ids as the qrels name them"]
    elif fmt == "beir":
        corpus += ["# The BEIR corpus is Parquet: chunked here into corpus.jsonl as it is.",
                   f"docs = {rel(golden)}", "whole = true                   # one chunk per document, ids as the qrels name them"]
    else:
        folder = docs or found.docs_folder or "docs"
        if os.path.isdir(folder) and (same_file(folder, base) or within(base, folder)):  # every `out` beside the config is in it
            raise UsageError(f"--docs {folder}: the documents folder holds the config's folder, so the outputs would be written "
                             "among the documents (and chunked at the next run): move the documents into a folder of their own "
                             "(e.g. docs/), or write the config outside them with -o")
        if not os.path.exists(folder):
            notes.append(f"{folder}: no such folder yet: put the documents there or edit [corpus] docs")
        corpus += ["# The documents to chunk: a folder or a file (.txt, .md, .pdf, .html, .docx, TREC SGML).",
                   f'docs = {rel(folder)}']
        if fmt in CONTEXT_FORMATS:
            longest = found.long_context
            size = min(CONTEXT_CHUNK_MAX, max(20, math.ceil((longest or 200) / 10) * 10))
            corpus += [f"# Chunks as long as most reference contexts (9 in 10 have {longest or 0:,} words or fewer; median "
                       f"{median or 0:,}): a", "# context then falls in one chunk, or two where it straddles a boundary "
                       "(every chunk it covers is gold).", f"size = {size}                     # words per chunk", "overlap = 0"]
        elif fmt == "trec":
            corpus.append("whole = true                   # one chunk per document, named by its DOCNO as the qrels are")
        else:
            corpus += ["size = 120                     # words per chunk: the gold chunk ids must come from these settings",
                       "overlap = 20                   # words shared by neighbouring chunks"]
    judge, judge_note = "true", "                 # BERTScore judge of each pooled (query, chunk) pair"
    if not found.with_answers:
        judge = "false"
        judge_note = ("                # off: the queries have no reference answers, which the BERTScore judge\n"
                      "                               # needs; the runs are scored on the gold qrels only")
        notes.append("no reference answers: the judge is off; the runs are scored on the gold qrels")
    if fmt == "trec" and found.with_answers == 0:
        golden_lines.append('# answer_col = "desc"         # a topic field as the reference answer, for the judge to score '
                            "chunks against")
    found_column = document_column(golden, fmt, folder) if folder and os.path.exists(folder) and not found.with_gold else None
    if found_column:
        column, unnamed = found_column
        golden_lines += [f"chunk_ids_col = {json.dumps(column, ensure_ascii=False)}".ljust(30) + " # names each answer's document",
                         'doc_qrels = "answer-chunk"     # gold: the chunk of that document holding the answer']
        notes.append(f"column {column!r} names each answer's document: the chunk holding the answer is gold "
                     '([golden] doc_qrels = "answer-chunk")')
        if unnamed:  # the import would stop on them: said now, where the column was read against the folder anyway
            line, value = unnamed[0]
            notes.append(f"{quantity(len(unnamed), 'value')} of {column!r} {agreeing(len(unnamed), 'name')} "
                         f"no document of {folder} (first: {value!r}, line {line}): fix {'them' if len(unnamed) > 1 else 'it'}, "
                         "or the import stops on it")
    given = [golden, qrels, found.corpus_file if fmt == "beir" else None, folder]
    chosen, n = out, 1
    while any(p and (within(p, os.path.join(base, chosen)) or same_file(p, os.path.join(base, chosen))) for p in given):
        # `run` would refuse to write over them, or into the documents folder
        n += 1
        chosen = f"{out}-{n}"
    if chosen != out:
        notes.append(f'out = "{chosen}": {out}/ holds files of yours, which the pipeline\'s outputs could overwrite')
    text = (STARTER_TOP.format(name=os.path.basename(output), golden=rel(golden), what=what, out=chosen)
            + "\n[corpus]\n" + "\n".join(corpus) + "\n\n[golden]\n" + "\n".join(golden_lines) + "\n"
            + STARTER_REST.format(judge=judge, judge_note=judge_note, cut=labels.CUT))
    return text, [what, *notes]
