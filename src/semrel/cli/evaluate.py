"""`semrel eval`: metric values of runs on qrels."""

from __future__ import annotations

import click

from ..analysis.ppi import ESTIMATE_FORMATS, corrected_estimates, render_estimates
from ..errors import UsageError
from ..evaluation.doclevel import corpus_documents, warn_unlisted
from ..evaluation.files import evaluate_files, read_runs, relation_measures
from ..evaluation.measures import DEFAULT_MEASURES
from ..evaluation.metrics import Options
from ..evaluation.render import render_evaluations
from ..evaluation.zscores import read_zscores, standardise
from ..formats import read_qrels
from ..formats.tables import FORMATS
from ..review.adjudicate import reviewed_sample
from .base import SemrelCommand, warn
from .fill import FILL_CACHE, fill_and_report
from .options import cache_choice, cutting_options, embedding_cache_options, measures_option, places_option, typed
from .paths import database_path, input_path, output_path


@click.command("eval", cls=SemrelCommand, short_help="Score runs on qrels (trec_eval's semantics).")
@click.argument("qrels", type=input_path(allow_dash=True))
@click.argument("runs", nargs=-1, required=True, type=input_path(allow_dash=True))
@measures_option(default=None, shown=f"{','.join(DEFAULT_MEASURES)}; with -f trec: official, trec_eval's own default",
                 help="Measure(s), repeatable or comma-separated; ir_measures and trec_eval names both work "
                      "(nDCG@10 = ndcg_cut.10, RR = recip_rank, AP = map, Bpref = bpref), trec_eval's parameter lists "
                      "(P.5,10 ndcg.1=3,2=9 utility.2,-1,0,0) and sets (all_trec, official, set)")
@click.option("-q", "--per-query", is_flag=True, help="Also print each query's values.")
@click.option("-n", "--no-summary", is_flag=True, help="Print each query's values only, without the 'all' rows (trec_eval -q -n).")
@click.option("-l", "--rel-level", default=1, show_default=True, type=click.IntRange(min=0),
              help="Lowest grade that counts as relevant (nDCG uses the graded rel regardless).")
@click.option("--complete/--no-complete", "-c/-C", default=True, show_default=True,
              help="Average over every query of QRELS, those a run lacks scoring as an empty ranking (trec_eval -c); "
                   "--no-complete: only over the queries a run has (trec_eval without -c).")
@click.option("-R", "--relation", type=click.Choice(["qrels", "qrels_jg", "prefs", "qrels_prefs"]), default="qrels",
              show_default=True,
              help="QRELS' format (trec_eval -R): qrels; qrels_jg, whose second column names a judgment group "
                   "(map_avgjg, P_avgjg, Rprec_mult_avgjg average over the groups); prefs, preference judgments "
                   "('qid group subgroup docid value' lines), or qrels_prefs, qrels read as preferences (each grade "
                   "preferred to the lower ones), both scored by the prefs_* measures (-m all_prefs).")
@cutting_options
@click.option("-N", "--num-docs", type=click.IntRange(min=0), default=0, show_default=True, metavar="N",
              help="Documents in the collection, for utility's non-relevant documents not retrieved (trec_eval -N).")
@click.option("--doc-level", is_flag=True,
              help="Score a chunk run against document qrels: each chunk counts as its document (its doc_id in --corpus, "
                   "else the id before its last '#'), each document once, at its best chunk (MaxP).")
@click.option("--corpus", type=input_path(exists=True, dir_okay=False), default=None,
              help="corpus.jsonl: the chunks' texts for --fill-judgments; their doc_id for --doc-level; and the chunk ids "
                   "the runs should name: a run's chunks it does not list (misspelt, another chunking's) are warned of.")
@click.option("--fill-judgments", type=input_path(exists=True, dir_okay=False), default=None, metavar="JUDGMENTS",
              help="Judge the unjudged chunks in each run's top --fill-depth first (as `semrel fill`, appended to "
                   "JUDGMENTS, the judgments.jsonl QRELS were labelled from; needs --corpus and --golden), then score on "
                   "the completed qrels.")
@click.option("--golden", type=input_path(exists=True, dir_okay=False), default=None,
              help="golden.jsonl (reference answers), for --fill-judgments.")
@click.option("--fill-depth", type=click.IntRange(min=1), default=10, show_default=True, help="Holes filled per query and run.")
@click.option("--filled-qrels", type=output_path(), default=None, help="Also write the completed qrels here (with a manifest).")
@embedding_cache_options(FILL_CACHE, " for --fill-judgments")
@click.option("-Z", "--zscores", type=input_path(exists=True, dir_okay=False), metavar="FILE",
              help="Standardise each query's values with the 'qid measure mean stddev' lines of FILE (trec_eval -Z).")
@click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="trec: trec_eval's own lines (measure, query, value), in its order.")
@places_option
@click.option("--reviewed", type=database_path(exists=True, dir_okay=False), metavar="DB",
              help="A review database: show each value next to its estimate corrected by the reviewed random "
                   "sample, with a 95% interval (prediction-powered inference; see `semrel estimate`).")
def eval_command(qrels, runs, measures, per_query, no_summary, rel_level, complete, relation, judged_only, depth, num_docs, doc_level,
                 corpus, fill_judgments, golden, fill_depth, filled_qrels, cache_dir, no_cache, zscores, fmt, places, reviewed):
    """Score RUNS (TREC run files, or ranx's Parquet or .json) on QRELS with trec_eval's exact semantics.

    Queries in QRELS that a run lacks score 0 and count in the mean (trec_eval -c);
    queries only in a run are ignored. Both are reported on stderr, as is a cutoff past every
    run's deepest ranking (R@100 of runs of 20) and, with --corpus, a run's chunk ids the corpus does not list
    (misspelt, another chunking's: they count as not relevant). With -f trec the output is trec_eval's, line for line.
    """
    trec_eval_default = measures is None and fmt == "trec"  # trec_eval's own output, P_1000 and all, as its users expect it
    plain = "--doc-level, --fill-judgments, --corpus or --reviewed" if doc_level or fill_judgments or reviewed or corpus else ""
    measures = relation_measures(relation, measures, "official" if fmt == "trec" else DEFAULT_MEASURES, plain, "-Z" if zscores else "")
    if not fill_judgments and typed("fill_depth"):  # ignored in silence before
        raise UsageError("--fill-depth goes with --fill-judgments: it is how deep each run's holes are filled")
    if not fill_judgments and (typed("cache_dir") or no_cache):
        raise UsageError("--cache and --no-cache go with --fill-judgments: they are the embedding cache its judging uses")
    cache = cache_choice(cache_dir, no_cache)
    if no_summary and fmt == "trec" and len(runs) > 1:
        raise UsageError("-n with -f trec prints lines that do not name their run: give one run, or another --format")
    per_query = per_query or no_summary
    if reviewed:
        if per_query or fmt not in ESTIMATE_FORMATS:
            raise UsageError("--reviewed gives one estimate per run and measure: use it without --per-query or -n, "
                             f"with --format {', '.join(ESTIMATE_FORMATS[:-1])} or {ESTIMATE_FORMATS[-1]}")
        # the estimate scores the qrels as they are (trec_eval -c); these were ignored, silently
        if not complete or judged_only or depth or num_docs or zscores or doc_level or fill_judgments:
            raise UsageError("--reviewed estimates on complete rankings and the qrels as they are: "
                             "it does not go with -C, -J, -M, -N, -Z, --doc-level or --fill-judgments")
        judged, scored = read_qrels(qrels), read_runs(runs)
        if corpus:
            mapping = corpus_documents(corpus)
            for run in scored:
                warn_unlisted(run, mapping, judged, warn)
        estimates = corrected_estimates(judged, scored, measures, reviewed_sample(reviewed), 0.95, rel_level, warn)
        click.echo(render_estimates(estimates, 0.95, fmt, places), nl=False)
        return
    options = Options(rel_level, complete, judged_only, depth, num_docs)
    if relation != "qrels":  # -Z standardises qrels scores only
        click.echo(render_evaluations(evaluate_files(qrels, runs, measures, warn=warn, options=options, relation=relation),
                                      fmt, per_query, places, not no_summary), nl=False)
        return
    table = read_zscores(zscores) if zscores else None  # a bad file is said before any run is read
    completed, loaded = None, None
    if fill_judgments:
        if not (corpus and golden):
            raise UsageError("--fill-judgments judges chunks against reference answers: give --corpus and --golden")
        if doc_level:
            raise UsageError("--fill-judgments fills chunk qrels; it does not go with --doc-level")
        filled = fill_and_report(qrels, runs, fill_judgments, corpus, golden, fill_depth, filled_qrels, cache)
        completed, loaded = filled.qrels, filled.runs
    elif golden or filled_qrels:
        raise UsageError("--golden and --filled-qrels go with --fill-judgments")
    results = evaluate_files(qrels, runs, measures, rel_level, warn=warn, options=options, doc_level=doc_level,
                             offer_doc_level=True, corpus=None if fill_judgments else corpus, qrels=completed, runs=loaded,
                             cutoffs=not trec_eval_default)
    if table is not None:
        results = [standardise(r, table, warn) for r in results]
    click.echo(render_evaluations(results, fmt, per_query, places, not no_summary), nl=False)
