"""`semrel run CONFIG.toml` and `semrel init`: the pipeline from one config file."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

import click
from click.core import ParameterSource

from ..errors import UsageError
from ..formats.files import atomic_writer, no_such_file
from ..golden.importers import FORMATS
from ..terminal import quantity
from .base import SemrelCommand
from .paths import input_path, output_path
from .pipeline import run_pipeline
from .run_config import STEPS, Step
from .run_starter import starter_config


@click.command("run", cls=SemrelCommand, short_help='Run the pipeline a config file describes.')
@click.argument("config", type=input_path(dir_okay=False))
@click.option("--set", "sets", multiple=True, metavar="SECTION.KEY=VALUE",
              help="Override a config value (repeatable), e.g. --set label.threshold=0.72 --set retrieve.methods=bm25,dense.")
@click.option("--dry-run", is_flag=True, help="Print the commands of the steps that would run, and run none.")
@click.option("--force", multiple=True, type=click.Choice(STEPS), metavar="STEP",
              help=f"Run STEP even when up to date, or over an output changed since it made it (repeatable; "
                   f"its dependants follow): {', '.join(STEPS)}.")
def run_command(config, sets, dry_run, force):
    """Run the pipeline CONFIG describes (see `semrel init` and docs/run.md), skipping up-to-date steps.

    A value set with --set wins over the environment variable SEMREL_<SECTION>_<KEY> (e.g.
    SEMREL_LABEL_THRESHOLD=0.72, SEMREL_OUT=out2), which wins over the config file, which wins over
    the defaults. Ends with each step's wall time, the eval tables, the derived labels' kappa against the golden
    set's and where the report is.
    """
    summary = run_pipeline(config, sets=sets, environ=os.environ, dry_run=dry_run, force=tuple(force),
                           echo=lambda line: click.echo(line, err=True))
    if dry_run:
        for step, status, _ in summary:
            if status == "would run":
                click.echo(step.shell())
        click.echo()
    width = max(len(step.name) for step, _, _ in summary)
    click.echo(f"{'step':<{width}}  status     seconds")
    for step, status, seconds in summary:  # a dry run times nothing: no column of zeros
        click.echo(f"{step.name:<{width}}  {status:<9}  {'-' if dry_run else f'{seconds:.2f}':>7}")
    skipped = sum(st == "skipped" for _, st, _ in summary)
    if dry_run:
        click.echo(f"total: {sum(st == 'would run' for _, st, _ in summary)} would run, {skipped} skipped")
        return
    click.echo(f"total: {sum(s for _, _, s in summary):.2f}s, {sum(st == 'ran' for _, st, _ in summary)} ran, {skipped} skipped")
    for step, _, _ in summary:
        if step.command == ("eval",):
            with open(step.outputs[0], encoding="utf-8") as table:
                click.echo(f"\n{step.name} ({step.outputs[0]}):\n{table.read().rstrip()}")
        if step.command == ("agree",):
            click.echo(f"\n{agreement_line(step.outputs[0], review_command([s for s, _, _ in summary]))}")
        if step.name == "report":
            click.echo(f"\nreport: {os.path.abspath(step.outputs[0])}")


def review_command(steps: Sequence[Step]) -> str:
    """`semrel review start` with this run's files, ready to paste: as bare words it failed on --db, then asked for
    the judgments, labels, corpus and golden set the run had made."""
    judge = next(step for step in steps if step.command == ("judge",))
    labels = next(step for step in steps if step.command == ("label",)).outputs[0]
    given = [word for flag in ("--corpus", "--golden") for word in (flag, judge.args[judge.args.index(flag) + 1])]
    return shlex.join(["semrel", "review", "start", "--db", os.path.join(os.path.dirname(labels), "review.sqlite"), "--reviewer",
                       "YOUR_NAME", "--judgments", judge.outputs[0], "--labels", labels, *given])


def agreement_line(path: str, review: str) -> str:
    """The derived labels' agreement with the golden set's, from the agree step's figures: how far to trust the tables
    above, which the report shows but the end of a run did not."""
    from ..judging.labels import IN_SAMPLE, fitted_pairs
    from ..report.html import read_agreement

    agreement = read_agreement(path)
    labels = agreement["labels"]
    low, high = labels.get("kappa_low"), labels.get("kappa_high")  # null where nan (too few pairs to resample)
    kappa = ("undefined" if labels["kappa"] is None else f"{labels['kappa']:.3f}" +
             (f" (95% interval {low:.3f} to {high:.3f})" if low is not None and high is not None else ""))
    queries = labels.get("queries")  # how little a kappa can rest on: 22 pairs of 2 queries with gold
    of = f" of {quantity(queries, 'query')}" if isinstance(queries, int) else ""
    fitted = fitted_pairs(agreement)
    caveat = f" (the labels were fitted to {quantity(fitted, 'reviewed pair')}: {IN_SAMPLE})" if fitted else ""
    return (f"derived labels against the golden set's ({path}): kappa {kappa} over {quantity(labels['n'], 'pair')}{of}{caveat}; "
            f"check them against people's grades with `{review}` (docs/review.md)")


@click.command("init", cls=SemrelCommand, short_help='Write a starter config for `semrel run`.')
@click.option("--golden", default="golden.csv", show_default=True,
              help="The golden QA file (SQuAD, LlamaIndex rag_dataset, a ragas testset or DeepEval dataset, CSV/JSONL, a "
                   "BEIR or Cranfield folder, PubMedQA, MS MARCO QnA, TREC topics): its format decides the config.")
@click.option("--docs", default=None,
              help="Folder (or file) of the documents to chunk, for formats that do not hold them "
                   "[default: a folder of documents beside a rag_dataset.json or a ragas or DeepEval testset, else docs].")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="GOLDEN's format, where it cannot be told from the file (as for `semrel golden import`).")
@click.option("--qrels", type=input_path(exists=True, dir_okay=False), help="TREC topics: their document qrels.")
@click.option("--sample", type=click.IntRange(min=1), default=None, metavar="N", help="Work on N queries drawn at random.")
@click.option("-o", "--output", default="semrel.toml", show_default=True, type=output_path(dir_okay=False))
@click.option("--force", is_flag=True, help="Overwrite an existing config.")
def init_command(golden, docs, fmt, qrels, sample, output, force):
    """Write a commented starter config for `semrel run` that fits GOLDEN: a file that holds its documents (SQuAD,
    PubMedQA, MS MARCO, Cranfield) gets no docs folder and chunking to suit its contexts; a BEIR folder uses its
    corpus.jsonl as it is (a corpus in Parquet is chunked a chunk per document); a rag_dataset.json, ragas testset or
    DeepEval dataset gets chunks near its contexts' length (without documents, its contexts are the corpus); queries
    without reference answers turn the judge off. What it found is printed."""
    if os.path.exists(output) and not force:
        raise UsageError(f"{output}: already exists (--force overwrites it)")
    if not os.path.exists(golden):
        if click.get_current_context().get_parameter_source("golden") is ParameterSource.DEFAULT:  # `semrel init` alone
            raise UsageError(f"no --golden given, and no {golden} here: name your golden set with --golden FILE (its formats: "
                             "semrel init --help)")
        raise no_such_file(golden, "file or folder")
    text, notes = starter_config(output, golden, docs, qrels=qrels, sample=sample, fmt=fmt)
    with atomic_writer(output) as out:
        out.write(text)
    for note in notes:
        click.echo(f"semrel: {note}", err=True)
    if output == "-":  # the config itself went to stdout: the line would end up inside it, and `semrel run -` reads no stdin
        click.echo("wrote the config to stdout; save it to a file and check it with `semrel run FILE --dry-run`", err=True)
    else:
        typed = shlex.quote(output)  # as a shell takes it: `sub/my cfg.toml` unquoted is two arguments
        click.echo(f"wrote {output}; check it with `semrel run {typed} --dry-run`, run it with: semrel run {typed}", err=True)
