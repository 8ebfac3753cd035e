"""Options several commands share, declared once; values are parsed here, at the boundary."""

from __future__ import annotations

from typing import Callable, Sequence

import click

from ..analysis.significance import CORRECTIONS, DEFAULT_STATS, MAX_DRAWS, TESTS, StatSettings
from ..encoding.engines import DEVICES, ENGINES
from ..encoding.models import DEFAULT_MODEL, PRECISIONS
from ..errors import UsageError
from ..evaluation.measures import DEFAULT_MEASURES, Measure, parse_measures
from ..formats.judgments import SCORES
from ..golden.chunking import UNITS, ChunkSettings
from ..records import QuerySample
from ..review.order import ORDERS, RANDOM_SHARE
from .paths import FolderPath, database_path, input_path


def measures_option(default: Sequence[str] | None = DEFAULT_MEASURES, help: str = "Measure(s), repeatable or comma-separated",
                    shown: str | None = None) -> Callable:
    """-m/--measure, parsed once here: the command receives a list of Measure (default `default`;
    None: the command receives None when no -m is given, and chooses itself)."""

    def parse(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[Measure] | None:
        if not values and default is None:
            return None
        try:
            return parse_measures(list(values) or list(default or ()))
        except UsageError as exc:
            raise click.BadParameter(str(exc), ctx, param) from None

    return click.option("-m", "--measure", "measures", multiple=True, metavar="NAME", callback=parse,
                        help=f"{help} [default: {shown or ','.join(default or ())}].")


measure_option = measures_option()
rel_level_option = click.option("-l", "--rel-level", default=1, show_default=True, type=click.IntRange(min=0),
                                help="Lowest grade that counts as relevant.")


def seed_option(help: str | None = None, default: int = 0) -> Callable:
    """--seed of a command's random draws: 0 or more, as numpy's generators take (-1 was a traceback from numpy)."""
    return click.option("--seed", type=click.IntRange(0), default=default, show_default=True, help=help)


adjudicate_option = click.option(
    "--adjudicate", default="majority", show_default=True, metavar="majority|REVIEWER|strict",
    help="Settling reviewers' conflicts: majority (ties: lowest grade), a reviewer whose grade wins, or strict (conflicts are "
         "an error that lists them).")
places_option = click.option("--places", default=4, show_default=True, type=click.IntRange(0, 17),
                             help="Decimals shown (JSON keeps every digit).")


def test_options(command: Callable) -> Callable:
    """Options of the paired tests, shared by compare, lift and report."""
    for option in reversed([
        click.option("--test", "test", type=click.Choice(TESTS), default=DEFAULT_STATS.test, show_default=True,
                     help="Whose p-value decides significance: paired t-test, Fisher's randomization, or bootstrap."),
        click.option("--permutations", type=click.IntRange(1, MAX_DRAWS), default=DEFAULT_STATS.permutations, show_default=True,
                     help="Random sign flips of the randomization test (every sign pattern, an exact p, when 2^queries is at most this)."),
        click.option("--bootstrap", type=click.IntRange(1, MAX_DRAWS), default=DEFAULT_STATS.bootstrap, show_default=True,
                     help="Bootstrap resamples of the queries (confidence interval and bootstrap p-value)."),
        seed_option("Seed of the random draws.", DEFAULT_STATS.seed),
        click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=DEFAULT_STATS.alpha,
                     show_default=True, help="Significance level."),
    ]):
        command = option(command)
    return command


def stat_settings(test: str, permutations: int, bootstrap: int, seed: int, alpha: float,
                  correction: str = "none") -> StatSettings:
    return StatSettings(test=test, permutations=permutations, bootstrap=bootstrap, seed=seed, alpha=alpha,
                        correction=correction)


def comparison_options(command: Callable) -> Callable:
    """Which pairs are tested, and how: shared by compare and report."""
    command = test_options(command)
    for option in reversed([
        click.option("--baseline", metavar="RUN",
                     help="Run to test the others against: its name (the file stem) or its file [default: the first]."),
        click.option("--all-pairs", is_flag=True, help="Test every pair of runs instead of each against the baseline."),
        click.option("--correction", type=click.Choice(CORRECTIONS), default=DEFAULT_STATS.correction, show_default=True,
                     help="Multiple-comparison correction, within each measure across the pairs tested."),
    ]):
        command = option(command)
    return command


def cutting_options(command: Callable) -> Callable:
    """trec_eval's -J and -M, which change the lists scored (eval's, and compare's, whose tests are on the values scored)."""
    command = click.option("-M", "--depth", type=click.IntRange(min=1), default=None, metavar="N",
                           help="Score only each query's top N documents (trec_eval -M).")(command)
    return click.option("-J", "--judged-only", is_flag=True,
                        help="Score condensed lists: drop unjudged documents first (trec_eval -J).")(command)


def lift_options(command: Callable) -> Callable:
    """--base/--reranked and the reorder depth, shared by lift and report."""
    for option in reversed([
        click.option("--base", type=input_path(allow_dash=True), help="The first-stage run."),
        click.option("--reranked", type=input_path(allow_dash=True), help="The same candidates reranked."),
        click.option("--depth", type=click.IntRange(min=1),
                     help="Reranked documents must come from the base run's top DEPTH [default: the base run's depth]."),
    ]):
        command = option(command)
    return command


def engine_options(command):
    """Add the engine options; the command receives them as engine, ray_address, ray_workers, device, precision."""
    options = (
        click.option("--engine", type=click.Choice(ENGINES), default="local", show_default=True,
                     help="Where the encoder runs: in this process, or as Ray Data batch inference on a Ray "
                          "cluster (pip install 'semrel[ray]'). Results are the same."),
        click.option("--ray-address", default=None, metavar="ADDRESS",
                     help="--engine ray: auto (the running cluster), host:port or ray://host:port "
                          "[default: start a local Ray instance]."),
        click.option("--ray-workers", type=int, default=None, metavar="N",
                     help="--engine ray: encoder workers, one model each [default: the cluster's GPUs, else its CPUs]."),
        click.option("--device", type=click.Choice(DEVICES), default="auto", show_default=True,
                     help="Where the encoder computes: auto = a CUDA GPU when torch sees one, else the CPU. "
                          "Batches are bigger on a GPU."),
        click.option("--precision", type=click.Choice(PRECISIONS), default="exact", show_default=True,
                     help="exact: float32, as bert_score. int8: dynamic quantization of the Linear layers (CPU; faster, "
                          "scores move slightly, see docs/judge.md). fp16: half precision (GPU). Recorded in the manifest; "
                          "cached vectors are kept apart per precision."),
    )
    for option in reversed(options):
        command = option(command)
    return command


def chunk_options(default_size: int | None) -> Callable:
    """The chunking options, shared by `corpus chunk` and `golden import`."""
    size_help = "Chunk size in --unit" + ("" if default_size else " [default: one chunk per document]")

    def decorate(command: Callable) -> Callable:
        for option in reversed([
            click.option("--size", type=click.IntRange(min=1), default=default_size, show_default=bool(default_size),
                         help=size_help),
            click.option("--overlap", type=click.IntRange(min=0), default=0, show_default=True,
                         help="How much of a chunk the next one repeats, in --unit."),
            click.option("--unit", type=click.Choice(UNITS), default="words", show_default=True,
                         help="Count words, or tokens of the model's tokenizer."),
            click.option("--sentences", is_flag=True, help="Cut between sentences (longer sentences between words)."),
            click.option("--model", default=None, metavar="NAME", help="Tokenizer for --unit tokens [default: the judge model]."),
            click.option("--whole", is_flag=True,
                         help="One chunk per document whose id is the document id (not <doc_id>#0), so document qrels name it."),
        ]):
            command = option(command)
        return command

    return decorate


def typed(name: str) -> bool:
    """Option `name` of the running command was given on its command line: not left at its default, nor taken from the
    environment (SEMREL_<COMMAND>_<OPTION>, a default for every run, which the options it goes with may not want)."""
    context = click.get_current_context(silent=True)
    return context is not None and context.get_parameter_source(name) is click.core.ParameterSource.COMMANDLINE


def embedding_cache_options(default: str, use: str = "") -> Callable:
    """--cache DIR / --no-cache of the embedding cache (encoding.cache), shared by judge, fill and eval (`use`: for
    --fill-judgments), whose default folders differ (`default` says which); the command receives cache_dir and no_cache,
    and passes the library cache_choice(cache_dir, no_cache)."""

    def decorate(command: Callable) -> Callable:
        for option in reversed([
            click.option("--cache", "cache_dir", type=FolderPath(), default=None, show_envvar=True,
                         help=f"Embedding cache folder{use} [default: {default}]."),
            click.option("--no-cache", is_flag=True, help="Neither read nor write the embedding cache."),
        ]):
            command = option(command)
        return command

    return decorate


def one_cache_choice(no_cache: bool) -> None:
    """--cache and --no-cache typed together: --cache was ignored in silence (from the environment it stays a default)."""
    if no_cache and typed("cache_dir"):
        raise UsageError("give --cache or --no-cache, not both")


def cache_choice(cache_dir: str | None, no_cache: bool) -> str | bool | None:
    """The library's `cache=` from --cache DIR / --no-cache (False: none; None: the default folder), both typed refused."""
    one_cache_choice(no_cache)
    return False if no_cache else cache_dir


def chunk_settings(size: int | None, overlap: int, unit: str, sentences: bool, model: str | None, whole: bool = False) -> ChunkSettings:
    """The chunking options as settings; with --whole, a --size left at its default does not count."""
    if whole:
        context = click.get_current_context(silent=True)
        if context is not None and context.get_parameter_source("size") is click.core.ParameterSource.DEFAULT:
            size = None
    if unit != "tokens" and not typed("model"):  # SEMREL_..._MODEL, a tokenizer for whenever tokens are counted
        model = None
    return ChunkSettings(size=size, overlap=overlap, unit=unit, sentences=sentences, model=model, whole=whole)


def sample_options(command: Callable) -> Callable:
    """--limit / --sample / --seed: which queries of the golden set to work on (records.QuerySample)."""
    for option in reversed([
        click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N", help="Only the first N queries."),
        click.option("--sample", "sample_size", type=click.IntRange(min=1), default=None, metavar="N",
                     help="N queries drawn at random with --sample-seed (file order kept; the same N and seed give the same queries)."),
        click.option("--sample-seed", type=int, default=0, show_default=True, help="Seed of --sample."),
    ]):
        command = option(command)
    return command


def query_sample(limit: int | None, size: int | None, seed: int) -> QuerySample:
    if size is None and typed("sample_seed"):  # it was ignored in silence: without --sample no query is drawn at random
        raise UsageError("--sample-seed goes with --sample: it seeds the N queries drawn at random")
    return QuerySample(limit=limit, size=size, seed=seed)


db_option = click.option("--db", required=True, type=database_path(dir_okay=False), help="The review database (SQLite).")


QUEUE_OPTIONS = [
    click.option("--judgments", type=input_path(exists=True, dir_okay=False), help="judgments.jsonl."),
    click.option("--labels", type=input_path(exists=True, dir_okay=False), help="The derived qrels (proposed grades)."),
    click.option("--corpus", type=input_path(exists=True, dir_okay=False), help="corpus.jsonl (chunk texts)."),
    click.option("--golden", type=input_path(exists=True, dir_okay=False), help="golden.jsonl (queries, reference answers)."),
    click.option("--on", type=click.Choice(SCORES),
                 help="The thresholded score: p (the judge's probability) or P, R, F [default: the labels' manifest's; R for "
                      "--thresholds given as numbers]."),
    click.option("--thresholds", help="Comma-separated thresholds (one: binary) or the file `semrel calibrate -o` wrote "
                                      "[default: the rule in the labels' manifest]."),
    click.option("--order", type=click.Choice(ORDERS), default="uncertain", show_default=True,
                 help="uncertain: nearest a threshold (for p: the cut) first, mixed with a random sample; random; query: by query id; "
                      "query-sample: whole queries in a random order (`estimate` corrects nDCG, AP, R@k by them without bias)."),
    click.option("--random-share", type=click.FloatRange(0, 1), default=RANDOM_SHARE, show_default=True,
                 help="With --order uncertain: share of positions taken by the seeded random sample."),
    seed_option(),
    click.option("--limit", type=click.IntRange(1), help="Queue only the first N pairs."),
    click.option("--overlap", type=click.IntRange(0), default=0, show_default=True,
                 help="The first K queued pairs are shown to every reviewer (for inter-reviewer agreement)."),
]


def queue_options(command):
    """The options that build or join a queue (`serve` takes them; `start` and `simulate` add --reviewer)."""
    for option in reversed(QUEUE_OPTIONS):
        command = option(command)
    return command


HIGHLIGHT_OPTIONS = [
    click.option("--blind", is_flag=True, help="Hide the judge's scores, proposed grade and highlights."),
    click.option("--no-highlight", is_flag=True, help="Do not shade the chunk tokens BERTScore matched (no model needed)."),
    click.option("--model", help=f"Encoder for the highlights [default: {DEFAULT_MODEL}, offline]."),
    click.option("--layer", type=click.IntRange(0), default=None,
                 help="Layer of the highlights [default: the one `semrel judge` takes for --model: 6 for all-MiniLM-L6-v2]."),
]


def highlight_options(command):
    """What a reviewer is shown of the judge (`review start` and `review serve` alike)."""
    for option in reversed(HIGHLIGHT_OPTIONS):
        command = option(command)
    return command


def check_highlights(blind: bool, no_highlight: bool) -> None:
    """--model or --layer typed where no highlight is shaded: they were ignored in silence."""
    hidden = "--blind" if blind else "--no-highlight" if no_highlight else None
    given = [option for option in ("model", "layer") if typed(option)]
    if hidden and given:
        raise UsageError(f"--{given[0]} chooses the encoder of the highlights, which {hidden} leaves out: give one or the other")


def comma_numbers(text: str | None, kind: type, option: str, example: str, each: str = "") -> tuple | None:
    """An option's comma-separated numbers (None: not given). An empty value is refused, not read as the option
    left out: '--ratio ""' from a script whose variable was unset would otherwise split by the default."""
    if text is None:
        return None
    try:
        return tuple(kind(part) for part in text.split(","))
    except ValueError:
        raise UsageError(f"{option} {text!r}: give comma-separated {'whole ' if kind is int else ''}numbers"
                         f"{', ' + each if each else ''}, e.g. {example}") from None
