"""`semrel golden import|qrels|validate|stats|split|dedup`: building and curating golden sets."""

from __future__ import annotations

import json
import sys

import click

from ..encoding.models import DEFAULT_MODEL
from ..errors import UsageError
from ..formats.corpus import read_golden, unique_chunks
from ..formats.files import display_name
from ..formats.manifest import run_step
from ..formats.shards import split_files
from ..formats.tables import render
from ..golden.curate import (
    TOGETHER,
    check_format_options,
    dedup_golden,
    golden_qrels_file,
    import_golden_files,
    import_warnings,
    part_path,
    split_golden,
)
from ..golden.importers import BUILDS_CORPUS, FORMATS, ImportOptions
from ..golden.neardup import NEAR_DUPLICATE
from ..golden.sources import DOC_QRELS, IMPORT_THRESHOLD
from ..golden.validate import golden_stats, stats_tables, validate_golden
from ..progress import stderr_steps
from ..terminal import quantity
from .base import LazyGroup, warn, warn_in_flags
from .options import chunk_options, chunk_settings, comma_numbers, query_sample, sample_options, seed_option, typed
from .paths import FolderPath, input_path, output_path


@click.group("golden", short_help='Import, check and curate golden sets.', cls=LazyGroup, lazy={"pick": "semrel.cli.pick:pick_command"})
def golden_group() -> None:
    """Import, check and curate golden sets (queries, reference answers, gold chunk ids)."""


@golden_group.command("import", short_help='Import a golden set (SQuAD, CSV, BEIR and more).')
@click.argument("source", type=input_path(allow_dash=True))
@click.option("-o", "--output", required=True, type=output_path(allow_dash=True), help="golden.jsonl to write.")
@click.option("--format", "format", type=click.Choice(FORMATS), default="auto", show_default=True)
@click.option("--corpus", type=input_path(exists=True, dir_okay=False),
              help="corpus.jsonl the gold chunk ids refer to (checked; llamaindex, ragas, deepeval, giskard: the chunks its "
                   "reference contexts are matched to).")
@click.option("--corpus-out", type=output_path(allow_dash=True),
              help=f"corpus.jsonl to write ({', '.join(BUILDS_CORPUS)}: the source holds the documents; llamaindex, ragas, "
                   "deepeval and giskard without --corpus: its reference contexts, a chunk each; trec with --docs).")
@click.option("--qrels-out", type=output_path(allow_dash=True), help="Also write the gold chunks as TREC qrels.")
@click.option("--qrels", type=input_path(exists=True, dir_okay=False),
              help="trec: the document qrels (qid 0 docno rel) of the topics.")
@click.option("--docs", multiple=True, type=input_path(exists=True),
              help="trec: the collection's documents (TREC SGML files or folders), chunked here into --corpus-out (repeatable).")
@click.option("--doc-qrels", type=click.Choice(DOC_QRELS), default=None,
              help="Gold ids that are document ids (or file names, or paths to them) of the corpus: every chunk of a relevant "
                   "document is gold (all-chunks), its first chunk, or the chunk holding the reference answer (answer-chunk: its "
                   "text, else the chunk sharing most of its word pairs) [default: trec all-chunks; otherwise an error that says so].")
@click.option("--query-col", help="Column of the query (csv/jsonl/parquet/ragas/deepeval/giskard; trec: a topic field, title, desc or "
                                  "narr) [default: query, question or text; ragas: user_input or question; deepeval: input; "
                                  "giskard: question; trec: title].")
@click.option("--answer-col", help="Column of the reference answer [default: reference_answer, answer or answers; ragas: "
                                   "reference, ground_truth or ground_truths; deepeval: expected_output; giskard: reference_answer; "
                                   "trec: none, or a topic field: desc or narr].")
@click.option("--chunk-ids-col", help="Column of the gold chunk ids [default: gold_chunk_ids, chunk_ids or gold].")
@click.option("--id-col", help="Column of the query id [default: query_id, id, qid or _id; else q1, q2, ...].")
@click.option("--threshold", type=click.FloatRange(0, 1), default=IMPORT_THRESHOLD, show_default=True,
              help="llamaindex, ragas, deepeval, giskard: least word overlap for a context to match a chunk when no chunk "
                   "contains it.")
@click.option("--split", metavar="NAME",
              help="The split to read: beir, its qrels/NAME.tsv [default: test]; a folder of a Hugging Face set's shards of "
                   "several splits (train-00000-of-00002.parquet, test-00000-of-00001.parquet, ...), its NAME-*-of-* files "
                   "(required there).")
@chunk_options(default_size=None)
@sample_options
def import_command(source, output, format, corpus, corpus_out, qrels_out, qrels, docs, doc_qrels, query_col, answer_col,
                   chunk_ids_col, id_col, threshold, split, size, overlap, unit, sentences, model, whole, limit, sample_size,
                   sample_seed):
    """Import SOURCE (SQuAD-style JSON or its rows in Parquet or JSONL, LlamaIndex rag_dataset.json or
    question-context pairs, a ragas testset, DeepEval dataset or Giskard RAGET testset (CSV, JSON, JSONL or Parquet), CSV, JSONL, Parquet (a
    Hugging Face dataset's files), a BEIR folder, PubMedQA's ori_pqal.json, MS MARCO QnA JSON, a Cranfield folder or
    TREC topics with --qrels) as a golden.jsonl.

    With --limit or --sample only those queries are kept (the corpus keeps every document)."""
    shards = split_files(source, split)  # a folder of shards is listed here once, and its shards passed down
    # typed: from the environment they stay defaults for the sources they apply to
    check_format_options(source, format, split, shards, (typed("split"), typed("threshold")), ("--split", "--threshold", "--corpus"))
    settings = chunk_settings(size, overlap, unit, sentences, model, whole)
    columns = {"query": query_col, "answer": answer_col, "chunk_ids": chunk_ids_col, "id": id_col}
    options = ImportOptions(settings=settings, corpus=corpus, columns=columns, threshold=threshold, split=split, qrels=qrels,
                            docs=tuple(docs), doc_qrels=doc_qrels, sample=query_sample(limit, sample_size, sample_seed))
    result = import_golden_files(source, output, format, options, corpus_out, qrels_out, stderr_steps, shards)
    for note in import_warnings(result, options):
        warn_in_flags(note)
    rows = len(result.items)
    if "contexts_matched" in result.params:
        p = result.params
        matched = ", ".join(f"{n} {how}" for how, n in p["contexts_matched"].items())
        click.echo(f"reference contexts matched: {matched} (overlap threshold {threshold})", err=True)
        spans = sum(p["contexts_spanning_chunks"].values())
        if "corpus" in p:
            click.echo(f"corpus: {p['corpus']} -> {corpus_out}", err=True)
        elif p["contexts_longer_than_median_chunk"] or spans:
            widest = max((int(k) for k in p["contexts_spanning_chunks"]), default=1)
            spanning = (f"{spans} span several chunks (up to {widest}), and every chunk they cover is gold" if spans
                        else "each lies within one chunk")
            click.echo(f"{p['contexts_longer_than_median_chunk']} of {p['contexts']} reference contexts are longer than the "
                       f"median chunk ({p['median_chunk_words']} words); {spanning}", err=True)
    with_gold = sum(bool(i.gold_chunk_ids) for i in result.items)
    sampled = result.params.get("queries")
    of = f" (of {sampled['source']:,}: {'--limit' if 'limit' in sampled else '--sample'})" if sampled else ""
    click.echo(f"{quantity(rows, 'query')}{of}, {with_gold:,} with gold chunks -> {output}", err=True)


@golden_group.command("qrels", short_help="Write a golden set's gold chunks as qrels.")
@click.argument("golden", type=input_path(allow_dash=True))
@click.option("-o", "--output", required=True, type=output_path(allow_dash=True), help="TREC qrels to write.")
def qrels_command(golden, output):
    """Write GOLDEN's gold chunks as TREC qrels: rel 1, or the grades recorded in meta["grades"] (a gold chunk
    they lack, or grade 0, is rel 1)."""
    judgments = golden_qrels_file(golden, output)
    if not judgments and run_step() is None:  # written all the same: `semrel run` reads it as no gold, and says so itself
        warn(f"{display_name(golden)} lists no gold chunks, so {display_name(output)} is empty: pick them with `semrel golden pick`, "
             "or derive labels from the reference answers with `semrel judge` and `semrel label`")
    click.echo(f"{quantity(judgments, 'judgment')} -> {output}", err=True)


@golden_group.command("validate", short_help='List every problem of a golden set.')
@click.argument("golden", type=input_path(allow_dash=True))
@click.option("--corpus", type=input_path(exists=True, dir_okay=False),
              help="corpus.jsonl: check that it holds every gold chunk, and that a gold chunk holds its query's recorded answer "
                   "span (meta.answer_spans).")
def validate_command(golden, corpus):
    """Report every problem of GOLDEN with its line; exit 1 if any is an error."""
    found = validate_golden(golden, unique_chunks(corpus) if corpus else None)
    for issue in found.issues:
        click.echo(f"{display_name(golden)}:{issue.line}: {issue.severity}: {issue.message}")
    checked = "" if corpus else " (gold chunk ids not checked: no --corpus)"
    click.echo(f"{quantity(found.queries, 'query')}: {quantity(found.errors, 'error')}, {quantity(found.warnings, 'warning')}{checked}",
               err=True)
    if found.errors:
        sys.exit(1)


@golden_group.command("stats", short_help='Count and describe a golden set and corpus.')
@click.argument("golden", type=input_path(allow_dash=True))
@click.option("--corpus", type=input_path(exists=True, dir_okay=False), help="Also describe this corpus.jsonl.")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "markdown", "json"]), default="table", show_default=True)
def stats_command(golden, corpus, fmt):
    """Counts and length distributions (in words) of GOLDEN and its corpus."""
    stats = golden_stats(read_golden(golden), unique_chunks(corpus) if corpus else None)
    if fmt == "json":
        click.echo(json.dumps(stats, indent=2))
        return
    counts, lengths = stats_tables(stats)
    click.echo(render(counts, fmt, places=0) + "\n" + render(lengths, fmt, places=1), nl=False)
    for note in stats.get("notes", []):
        click.echo(f"\n{note}")


threshold_option = click.option("--threshold", type=float, default=NEAR_DUPLICATE, show_default=True,
                                help="Cosine similarity of query embeddings at which two queries are near-duplicates.")
model_option = click.option("--model", default=None, metavar="NAME", help=f"Embedding model [default: {DEFAULT_MODEL}].")


@golden_group.command("split", short_help='Split a golden set, near-duplicates together.')
@click.argument("golden", type=input_path(allow_dash=True))
@click.option("-o", "--output-dir", required=True, type=FolderPath(), help="Folder for the parts.")
@click.option("--ratio", help="Fraction(s) of the parts, comma-separated; the rest is the last part [default: 0.8].")
@click.option("--sizes", help="Query counts of the parts, comma-separated (instead of --ratio); the queries left over are "
                             "one more part, the last.")
@click.option("--names", default=None, help="Part names, comma-separated [default: train,test or train,dev,test; with "
                                           "--sizes part1,... and rest]. With --sizes, a name left out for the rest is 'rest'.")
@seed_option("Seed of the hash that orders the groups by query id.")
@threshold_option
@model_option
@click.option("--together", type=click.Choice(list(TOGETHER)),
              help="Also keep in one part the queries that share a gold chunk (gold) or a document of their gold chunks "
                   "(documents, read from --corpus): else a test query may find its answer where a train query's is.")
@click.option("--corpus", type=input_path(exists=True, dir_okay=False), help="corpus.jsonl, for --together documents.")
def split_command(golden, output_dir, ratio, sizes, names, seed, threshold, model, together, corpus):
    """Split GOLDEN into parts (deterministic by --seed and the query ids, whatever their order: a query added
    moves about one other); near-duplicate queries stay together."""
    ratios, counts = comma_numbers(ratio, float, "--ratio", "0.8,0.1"), comma_numbers(sizes, int, "--sizes", "200,100")
    parts = split_golden(read_golden(golden, require_text=True), golden, output_dir, ratios, counts,
                         None if names is None else names.split(","), seed, threshold, model, stderr_steps, warn_in_flags, together, corpus)
    for name, part in parts.items():
        click.echo(f"{name}: {quantity(len(part), 'query')} -> {part_path(output_dir, name)}", err=True)


@golden_group.command("dedup", short_help='Find (and remove) near-duplicate queries.')
@click.argument("golden", type=input_path(allow_dash=True))
@click.option("--report", "report", default="-", show_default=True, type=output_path(allow_dash=True),
              help="JSONL report, one line per group of near-duplicates.")
@click.option("--apply", is_flag=True, help="Write the golden set without the duplicates (to -o).")
@click.option("-o", "--output", type=output_path(allow_dash=True), help="Deduplicated golden.jsonl (with --apply).")
@threshold_option
@model_option
def dedup_command(golden, report, apply, output, threshold, model):
    """Find near-duplicate queries in GOLDEN; only --apply removes them (keeping the first of each group)."""
    if apply != bool(output):
        raise UsageError("--apply and -o go together: -o names the deduplicated golden set")
    result = dedup_golden(read_golden(golden, require_text=True), golden, report, output if apply else None, threshold, model, stderr_steps)
    removed = sum(len(r["duplicates"]) for r in result.report)
    if apply:
        for note in result.merges:
            warn(note)
        click.echo(f"{quantity(len(result.report), 'group')} of near-duplicates; removed {removed:,}, kept {len(result.kept):,} -> "
                   f"{output}", err=True)
    else:
        click.echo(f"{quantity(len(result.report), 'group')} of near-duplicates ({quantity(removed, 'query')} would go); "
                   "nothing removed (use --apply -o FILE)", err=True)
