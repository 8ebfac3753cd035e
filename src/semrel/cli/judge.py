"""`semrel judge` (BERTScore of pooled chunks against reference answers) and `semrel label` (qrels)."""

from __future__ import annotations

import os

import click

from ..encoding.models import DEFAULT_MODEL
from ..errors import Interrupted, UsageError
from ..interrupts import InterruptedAfterWriting
from ..judging.labels import NULL_SAMPLE
from ..progress import stderr_steps
from ..terminal import quantity
from .base import SemrelCommand, warn
from .options import cache_choice, embedding_cache_options, engine_options, query_sample, sample_options, seed_option, typed
from .paths import input_path, output_path


@click.command("judge", cls=SemrelCommand, short_help='Score pooled pairs with BERTScore.')
@click.option("--corpus", required=True, type=input_path(allow_dash=True), help="corpus.jsonl of the chunks.")
@click.option("--golden", required=True, type=input_path(allow_dash=True), help="golden.jsonl with the reference answers.")
@click.option("--pool", type=input_path(allow_dash=True),
              help="pool.tsv of (query, chunk) pairs to judge; gold chunks are always judged too.")
@click.option("-o", "--output", required=True, type=output_path(sidecars=(".partial",), allow_dash=True), help="judgments.jsonl to write.")
@click.option("--model", default=None, metavar="NAME_OR_PATH", show_envvar=True, help=f"Encoder [default: {DEFAULT_MODEL}, offline].")
@click.option("--layer", type=int, default=None,
              help="Hidden layer [default: bert_score's recommended layer for the model, else the last].")
@click.option("--idf/--no-idf", default=False, show_default=True,
              help="Weight the tokens of P, R and F by idf over the corpus chunks (p's features always weigh the "
                   "answer's tokens by idf over a sample of 1,000 chunks).")
@click.option("--rescale", type=click.Choice(["none", "baseline", "corpus"]), default="none", show_default=True,
              help="baseline: bert_score's shipped baseline for the model; corpus: one from random unrelated pairs.")
@click.option("--baseline-pairs", type=click.IntRange(10), default=500, show_default=True,
              help="Unrelated pairs sampled for --rescale corpus.")
@seed_option("Seed of the --rescale corpus sample and of p's null and idf samples.")
@click.option("--null-sample", type=click.IntRange(0), default=NULL_SAMPLE, show_default=True, metavar="CHUNKS",
              help="Corpus chunks (a seeded sample) scored against every query, behind each pair's probability p; 0: no p.")
@click.option("--window", type=int, default=None, metavar="TOKENS",
              help="Tokens per window when a chunk is longer [default: the model's limit, as bert_score]; "
                   f"256 suits {DEFAULT_MODEL} (its training length).")
@click.option("--overlap", type=click.IntRange(0), default=None, metavar="TOKENS",
              help="Tokens shared by consecutive windows of a long chunk, under half the window [default: a quarter of it].")
@embedding_cache_options("the user cache dir")
@engine_options
@sample_options
def judge_command(corpus, golden, pool, output, model, layer, idf, rescale, baseline_pairs, seed, null_sample, window, overlap,
                  cache_dir, no_cache, engine, ray_address, ray_workers, device, precision, limit, sample_size, sample_seed):
    """Score each pooled (query, chunk) pair with BERTScore: candidate = chunk, reference = answer.

    Writes {"query_id","chunk_id","P","R","F","source","p","features"} per pair and a manifest: p is
    the probability that the chunk is relevant (what `semrel label` thresholds), from label-free
    features of the pair, its query's pool and a null sample of corpus chunks, the answer's tokens
    weighted by their idf over a sample of the corpus. Chunks over the
    model's token limit are scored in overlapping windows (best window kept); a run that is
    stopped resumes from OUTPUT.partial when started again with the same inputs. With --engine ray
    only texts missing from the cache go to the cluster; the judgments are the local engine's.
    """
    from ..encoding.engines import make_engine
    from ..judging.judge import judge  # imported here: `semrel label` and `--help` stay instant

    cache = cache_choice(cache_dir, no_cache)
    if rescale != "corpus" and typed("baseline_pairs"):  # ignored in silence before
        raise UsageError(f"--baseline-pairs is the sample of --rescale corpus; it does not apply to --rescale {rescale}")

    try:
        result = judge(corpus, golden, pool, output, model=model, layer=layer, idf=idf, rescale=rescale, window=window,
                       overlap=overlap, baseline_pairs=baseline_pairs, seed=seed, null_sample=null_sample,
                       cache=cache,
                       engine=make_engine(engine, ray_address, ray_workers, device, precision), steps=stderr_steps,
                       sample=query_sample(limit, sample_size, sample_seed), warn=warn)
    except InterruptedAfterWriting:
        raise  # the judgments are written in full: the group's message says so
    except KeyboardInterrupt:
        kept = ("nothing was written" if output == "-"
                else f"finished pairs are kept in {output}.partial; run the same command again to resume"
                if os.path.exists(f"{output}.partial") else "no pair was finished yet")
        raise Interrupted(f"interrupted; {kept}") from None
    baseline = (result.params["baseline"] or {}).get("pairs", 0) if rescale == "corpus" else 0
    click.echo(
        f"judged {quantity(len(result.judgments), 'pair')}" + (f" and {quantity(baseline, 'baseline pair')}" if baseline else "")
        + (f" and {quantity(result.null_pairs, 'null-sample pair')}" if result.null_pairs else "")
        + f" ({result.resumed:,} resumed, {result.scored:,} scored): {quantity(result.encoded, 'text')} encoded, {result.cached:,} "
        f"from cache; {quantity(result.windowed, 'long chunk')} scored in windows",
        err=True,
    )
