"""`semrel corpus chunk`: documents to a corpus.jsonl of chunks."""

from __future__ import annotations

import click

from ..golden.chunking import chunk_files
from ..progress import stderr_steps
from .base import LazyGroup
from .options import chunk_options, chunk_settings
from .paths import input_path, output_path


@click.group("corpus", cls=LazyGroup, short_help='Chunk documents into a corpus.')
def corpus_group() -> None:
    """Build corpora of chunks."""


@corpus_group.command("chunk", short_help='Chunk documents into corpus.jsonl.')
@click.argument("inputs", nargs=-1, required=True, type=input_path(allow_dash=True))
@click.option("-o", "--output", required=True, type=output_path(allow_dash=True), help="corpus.jsonl to write.")
@chunk_options(default_size=200)
def chunk_command(inputs, output, size, overlap, unit, sentences, model):
    """Cut INPUTS (.txt/.md files, folders of them, JSONL {"id","title","text"}, BEIR folders)
    into chunks `<doc_id>#<n>` with character offsets into their documents."""
    documents, rows = chunk_files(inputs, output, chunk_settings(size, overlap, unit, sentences, model), stderr_steps)
    click.echo(f"{documents} documents -> {rows} chunks in {output}", err=True)
