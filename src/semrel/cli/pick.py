"""`semrel golden pick`: the terminal front end of the pick session (single keys via click.getchar)."""

from __future__ import annotations

import os
import shutil
import textwrap

import click

from ..encoding.models import DEFAULT_MODEL
from ..golden.pick import Current, PickSession, excerpt, open_pick_session
from ..progress import stderr_steps
from ..terminal import quantity
from .base import SemrelCommand, is_suspend, read_key, suspend, warn
from .options import one_cache_choice
from .paths import FolderPath, input_path, output_path

HELP = ("keys: 1-9 and 0 mark or unmark a candidate (0 = the tenth) · n next query (marks accepted; none = no chunk holds "
        "the answer) · s skip (left without gold, its marks dropped; not offered again) · u undo · q quit (all is saved) · ? help")
QUIT_KEYS = ("q", "", "\x03", "\x04")


def width() -> int:
    """Columns to wrap at: the terminal's, at most 100 (lines of 100 wrapped again by a narrower terminal lost their indent)."""
    return max(40, min(100, shutil.get_terminal_size((100, 24)).columns - 1))


def render(current: Current, session: PickSession, chars: int) -> None:
    counts, columns = session.counts(), width()
    title = f"── query {current.item.query_id} · {counts['open']} open, {counts['done']} done, {counts['skipped']} skipped "
    click.echo("\n" + title + "─" * max(0, min(20, columns - len(title))))
    click.echo(f"Q: {current.item.query}")
    for answer in current.item.reference_answers:
        click.echo(f"A: {answer}")
    for number, candidate in enumerate(current.candidates, start=1):
        mark = "*" if candidate.chunk.id in current.gold else " "
        found = ", ".join(f"{name} #{rank}" for name, rank in candidate.found_by)
        click.echo(f" [{number % 10}]{mark} {candidate.chunk.id}  ({found})")
        shown = excerpt(candidate.chunk.text, " ".join(current.item.reference_answers), chars)
        click.echo(textwrap.fill(shown, width=columns, initial_indent="      ", subsequent_indent="      "))
    click.echo(textwrap.fill("keys: 1-9,0 mark · n next · s skip · u undo · q quit · ? help", width=columns))


def interact(session: PickSession, chars: int) -> None:
    """Show each open query and act on keys until the person quits. With none left open, one more key: `u` undoes the
    last action (a `n` or `s` on the last query, whose skip said 'u undoes', ended pick at once, and a resume with
    nothing open quit before reading a key, so it stayed for good), any other quits."""
    shown = None
    while True:
        current = session.current()
        if current is None:
            if not session.history:
                break
            click.echo("no query is left open: u undoes the last action, any other key quits")
            if read_key() != "u":
                break
            undone = session.undo()
            click.echo(f"undid {undone.action} of query {undone.query_id}" if undone else "nothing to undo")
            shown = None
            continue
        if shown != current.item.query_id:
            render(current, session, chars)
            shown = current.item.query_id
        key = read_key()
        if key in QUIT_KEYS:
            break
        if key.isspace():
            continue
        # '²' and '٣' are digits too, but no candidate's number; '01' (a paste, or two keys one raw read returned) is two keys
        if len(key) == 1 and key.isascii() and key.isdigit():
            chunk_id = session.toggle(int(key) or 10)
            if chunk_id is None:
                click.echo(f"no candidate {key}")
            else:
                gold = session.states[current.item.query_id].gold  # the toggled query's marks, as saved
                click.echo(f"{'marked' if chunk_id in gold else 'unmarked'} {chunk_id}; gold: {', '.join(gold) or 'none'}")
        elif key == "n":
            session.next()
        elif key == "s":
            session.skip()
            dropped = [g for g in current.gold if g not in session.states[current.item.query_id].gold]
            if dropped:
                click.echo(f"skipped {current.item.query_id}: left without gold, marks dropped: {', '.join(dropped)} (u undoes)")
        elif key == "u":
            undone = session.undo()
            click.echo(f"undid {undone.action} of query {undone.query_id}" if undone else "nothing to undo")
            shown = None
        elif key == "?":
            click.echo(textwrap.fill(HELP, width=width()))
        elif is_suspend(key):  # Ctrl-Z: stop until `fg`, then the query is shown again
            suspend()
            shown = None
        else:
            click.echo(f"unknown key {key!r}; ? for help")


@click.command("pick", cls=SemrelCommand, short_help='Pick gold chunks by hand.')
@click.option("--golden", required=True, type=click.Path(), help="golden.jsonl; its queries without gold chunks are offered.")
@click.option("--corpus", required=True, type=input_path(allow_dash=True), help="corpus.jsonl the chunk ids refer to.")
@click.option("-o", "--output", default=None, type=output_path(sidecars=(".pick.jsonl",)),
              help="Golden set to write [default: rewrite --golden in place]. The journal is OUTPUT.pick.jsonl.")
@click.option("--candidates", "per_method", default=5, show_default=True, type=int,
              help="Top chunks from each of BM25 and dense (1-5; duplicates shown once).")
@click.option("--chars", default=400, show_default=True, type=click.IntRange(40), help="Characters of each chunk shown.")
@click.option("--model", default=None, help=f"Dense encoder [default: {DEFAULT_MODEL}].")
@click.option("--cache", "cache_dir", type=FolderPath(), default=None,
              help="Folder of the indexes `semrel retrieve` keeps (chunk vectors per model and the BM25 index on disk, so "
                   "a chunk is encoded and indexed once, and the corpus is not held in memory) [default: the user cache dir].")
@click.option("--no-cache", is_flag=True, help="Read the corpus whole and encode and index it in memory; neither read nor write "
                                               "the cache.")
def pick_command(golden, corpus, output, per_method, chars, model, cache_dir, no_cache):
    """Mark gold chunks by hand for queries that have none, one key per choice.

    Every key is saved at once (journal + golden set rewritten atomically); run the same
    command again to resume where you stopped. Gold chunks edited by hand in the golden set
    since are kept over the journal's (with a warning; u brings the journal's back).
    """
    # Nothing is written before the first key that changes something (see golden.pick), so the
    # closing line says whether anything was saved.
    one_cache_choice(no_cache)
    session = open_pick_session(golden, corpus, output, per_method, model, stderr_steps, cache_dir, not no_cache)
    for edit in session.edits:  # a query never picked had its chunks from --golden (-o names another file)
        source = "the journal" if edit.query_id in session.journaled else golden
        warn(f"query {edit.query_id!r}: {session.output} was edited since pick wrote it; kept its gold chunks "
             f"{', '.join(edit.after.gold) or 'none'} over {source}'s {', '.join(edit.before.gold) or 'none'} (u brings those back)")
    if session.moved:  # chunk ids are positions: an edited document moved another text under a picked id
        query, chunk = session.moved[0]
        warn(f"{quantity(len(session.moved), 'picked gold chunk', 'hold')} other text in {corpus} than "
             f"when picked (e.g. {chunk}, gold for query {query!r}): chunk ids are positions in their document, so an edited "
             f"document moves text between them; check them and fix the ids in {session.output} by hand (pick keeps a hand edit "
             "over its journal)")
    interact(session, chars)
    counts = session.counts()
    left = "; run the same command to resume" if counts["open"] else ""
    kept = "left as it was" if os.path.exists(session.output) else "not written"  # -o a new file: there is nothing to leave
    done = f"saved {session.output}" if session.saved else f"no changes; {session.output} {kept}"
    click.echo(f"{done}: {counts['done']} done, {counts['skipped']} skipped, {counts['open']} open{left}")
