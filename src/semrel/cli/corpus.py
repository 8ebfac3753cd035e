"""`semrel corpus chunk`: documents to a corpus.jsonl of chunks."""

from __future__ import annotations

from typing import Callable

import click

from ..formats.corpus import write_corpus
from ..formats.manifest import write_manifest
from ..golden.chunking import UNITS, ChunkSettings, chunk_documents, read_documents
from .progress import stderr_bar


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
        ]):
            command = option(command)
        return command

    return decorate


def settings_from(size: int | None, overlap: int, unit: str, sentences: bool, model: str | None) -> ChunkSettings:
    return ChunkSettings(size=size, overlap=overlap, unit=unit, sentences=sentences, model=model)


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
    settings = settings_from(size, overlap, unit, sentences, model)
    documents = read_documents(inputs)
    with stderr_bar("chunking", len(documents)) as bar:
        chunks = chunk_documents(documents, settings, progress=bar.update)
    rows = write_corpus(chunks, output)
    write_manifest(output, inputs=inputs, params=settings.describe(), rows=rows)
    click.echo(f"{len(documents)} documents -> {rows} chunks in {output}", err=True)
