"""`semrel corpus chunk`: documents to a corpus.jsonl of chunks."""

from __future__ import annotations

import click

from ..formats.corpus import write_corpus
from ..formats.manifest import write_manifest
from ..golden.chunking import chunk_documents, read_documents
from ..progress import stderr_steps
from .options import chunk_options, chunk_settings


@click.group("corpus")
def corpus_group() -> None:
    """Build corpora of chunks."""


@corpus_group.command("chunk")
@click.argument("inputs", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("-o", "--output", required=True, type=click.Path(allow_dash=True), help="corpus.jsonl to write.")
@chunk_options(default_size=200)
def chunk_command(inputs, output, size, overlap, unit, sentences, model):
    """Cut INPUTS (.txt/.md files, folders of them, JSONL {"id","title","text"}, BEIR folders)
    into chunks `<doc_id>#<n>` with character offsets into their documents."""
    settings = chunk_settings(size, overlap, unit, sentences, model)
    documents = read_documents(inputs)
    chunks = chunk_documents(documents, settings, steps=stderr_steps)
    rows = write_corpus(chunks, output)
    write_manifest(output, inputs=inputs, params=settings.describe(), rows=rows)
    click.echo(f"{len(documents)} documents -> {rows} chunks in {output}", err=True)
