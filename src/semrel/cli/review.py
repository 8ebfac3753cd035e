"""`semrel review start|simulate|stats|export`: people check derived labels; nothing they decide is lost."""

from __future__ import annotations

import contextlib
import math
import shlex
import sys

import click
from rich.console import Console

from ..analysis.agreement import agreement_table, confusion_text
from ..analysis.significance import MAX_DRAWS
from ..formats import read_qrels
from ..formats.jsonl import json_text
from ..formats.tables import Table, render
from ..formats.trec import graded_pairs
from ..review.adjudicate import export_reviewed
from ..review.engine import (
    QueueRequest,
    QueueSettings,
    Session,
    check_reviewer_name,
    join_queue,
    labelling_of,
    look_alike_note,
    look_alike_reviewer,
)
from ..review.highlight import token_similarities
from ..review.order import RANDOM_SHARE
from ..review.simulate import simulate, simulated_note
from ..review.stats import review_stats
from ..terminal import agreeing, quantity, unfiltered
from .base import LazyGroup, warn, warn_in_flags
from .options import adjudicate_option, check_highlights, db_option, highlight_options, queue_options, seed_option, typed
from .paths import input_path, output_path
from .review_terminal import TerminalReview


@click.group("review", short_help="Review derived labels; agreement; export.", cls=LazyGroup,
             lazy={"serve": "semrel.cli.review_web:serve_command"})
def review_group() -> None:
    """Review derived labels in the terminal; report agreement; export reviewed qrels."""


class PipeConsole(Console):
    """rich's console, but a reader gone from the pipe (`review start ... | head`) stops the command as it stops every
    other one (the group's exit 141), not with rich's own SystemExit(1), which read as a failure."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


REVIEWER_OPTION = click.option("--reviewer", required=True, help="Your name, as recorded with each decision.")


def queue_request(judgments, labels, corpus, golden, on, thresholds, order, random_share, seed, limit, overlap) -> QueueRequest:
    """The queue the options name (queue_options); SEMREL_REVIEW_*_RANDOM_SHARE is a default for the uncertain order only."""
    if order != "uncertain" and not typed("random_share"):
        random_share = RANDOM_SHARE
    return QueueRequest(judgments, labels, corpus, golden, on, thresholds, QueueSettings(order, random_share, seed, limit, overlap))


@review_group.command("start", short_help='Review pairs in the terminal.')
@db_option
@REVIEWER_OPTION
@queue_options
@highlight_options
@click.option("--page-lines", type=click.IntRange(3), help="Chunk lines per page [default: from the terminal height].")
def start_command(db, reviewer, blind, no_highlight, model, layer, page_lines, **queue):
    """Review pairs one key at a time. The first start builds the queue from the files; later
    starts (any reviewer, at the same time too) join it and resume at the next unreviewed pair."""
    reviewer = check_reviewer_name(reviewer)  # before the database is opened
    check_highlights(blind, no_highlight)
    conn = join_queue(db, queue_request(**queue), warn_in_flags)  # the library's warnings name its parameters (on=)
    if like := look_alike_reviewer(conn, reviewer):  # before the Session records the name
        warn(f"--reviewer: {look_alike_note(reviewer, like, db)}; quit (q) and start again with --reviewer {like!r} if you are them")
    session = Session(conn, reviewer)
    if (note := simulated_note(session, db)) is not None:
        warn(note)

    def highlighter(task):
        return token_similarities(task.chunk, task.answers, model, layer)

    with contextlib.closing(session.conn):
        TerminalReview(session, labelling_of(session.conn), PipeConsole(file=unfiltered(sys.stdout), highlight=False), blind,
                       None if no_highlight else highlighter, page_lines).run()


@review_group.command("simulate", short_help='Simulate a review from known labels.')
@db_option
@REVIEWER_OPTION
@queue_options
@click.option("--human", required=True, type=input_path(exists=True, dir_okay=False),
              help="Qrels (or a golden.jsonl) whose grades stand in for the reviewer's.")
@click.option("--unlisted-as-zero", is_flag=True,
              help="A queued pair of a query the human file holds but does not list is graded 0 (gold-chunk qrels).")
def simulate_command(db, reviewer, human, unlisted_as_zero, **queue):
    """Review every queued pair automatically from a labels file (e.g. gold chunks standing in
    for people), so that `review stats`, `review export` with `calibrate`, and `estimate` can be tried
    before a real review. Pairs the file does not cover are skipped."""
    grades = graded_pairs(read_qrels(human))  # before the database is opened: a bad file (a pair listed twice) leaves no database behind
    graded, skipped = simulate(db, reviewer, grades, queue_request(**queue), warn_in_flags, unlisted_as_zero)
    click.echo(f"{reviewer}: graded {quantity(graded, 'pair')} from {human}, skipped {skipped}; agreement with the judge: "
               f"semrel review stats --db {shlex.quote(str(db))}", err=True)


def _timed(value: float | None) -> float | str:
    """A speed figure, or '-' where none was timed (a simulated reviewer, piped keys): not 'nan'."""
    return "-" if value is None or math.isnan(value) else value


@review_group.command("stats", short_help='Show reviewer agreement and progress.')
@db_option
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@seed_option("Seed of the bootstrap.")
@click.option("--resamples", type=click.IntRange(10, MAX_DRAWS), default=1000, show_default=True, help="Bootstrap resamples.")
def stats_command(db, fmt, seed, resamples):
    """Per reviewer counts and speed; agreement between reviewers and with the judge."""
    stats = review_stats(db, resamples=resamples, seed=seed)
    if fmt == "json":
        click.echo(json_text(stats.to_json()))
        return
    click.echo(f"{stats.reviewed} of {quantity(stats.tasks, 'pair')} {agreeing(stats.reviewed, 'have')} a human grade\n")
    reviewers = Table(["reviewer", "graded", "skipped", "flags", "notes", "undos", "stale", "median s", "per hour"],
                      [[r.reviewer, r.graded, r.skipped, r.flags, r.notes, r.undos, r.stale, *map(_timed, (r.median_seconds, r.per_hour))]
                       for r in stats.reviewers])
    click.echo(render(reviewers, "table", places=1))
    if stats.agreements:
        click.echo("\n" + agreement_table([(a.first, a.second, a.agreement) for a in stats.agreements]))
        for a in stats.agreements:
            click.echo("\n" + confusion_text(f"{a.first} vs {a.second}", a.agreement, a.first, a.second), nl=False)


@review_group.command("export", short_help='Write qrels with the reviewed labels.')
@db_option
@click.option("--labels", required=True, type=input_path(exists=True, dir_okay=False), help="The derived qrels.")
@click.option("-o", "--output", required=True, type=output_path(sidecars=(".sources.jsonl", ".sources.jsonl.manifest.json"),
                                                                 dir_okay=False), help="Reviewed qrels to write.")
@adjudicate_option
@click.option("--only-reviewed", is_flag=True, help="Write only the pairs with a human grade (e.g. to calibrate on).")
@click.option("--by-reviewer", type=output_path(dir_okay=False), metavar="FILE",
              help="Also write each reviewer's grades, unsettled, as trec_eval's qrels_jg (second column: the reviewer, "
                   "spaces made _), for `semrel agree FILE LABELS --groups` or `semrel eval -R qrels_jg`.")
def export_command(db, labels, output, adjudicate, only_reviewed, by_reviewer):
    """Write the derived qrels with human grades overriding them, and OUTPUT.sources.jsonl
    saying where each label came from (both with their manifests, put in place together).
    Decisions on pairs whose texts changed since are left out, and counted in a warning."""
    counts = export_reviewed(db, labels, output, adjudicate, only_reviewed, warn, by_reviewer)
    summary = ", ".join(f"{source} {n}" for source, n in sorted(counts.items()))
    click.echo(f"wrote {output}: {quantity(sum(counts.values()), 'label')} ({summary})", err=True)
    if by_reviewer:
        click.echo(f"wrote {by_reviewer}: each reviewer's grades (trec_eval's qrels_jg)", err=True)

