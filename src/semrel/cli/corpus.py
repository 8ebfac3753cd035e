"""`semrel corpus chunk`: documents to a corpus.jsonl of chunks."""

from __future__ import annotations

import click

from ..golden.chunking import chunk_files
from ..progress import stderr_steps
from ..terminal import quantity
from .base import LazyGroup, warn
from .options import chunk_options, chunk_settings
from .paths import input_path, output_path


@click.group("corpus", cls=LazyGroup, short_help='Chunk documents into a corpus.')
def corpus_group() -> None:
    """Build corpora of chunks."""


@corpus_group.command("chunk", short_help='Chunk documents into corpus.jsonl.')
@click.argument("inputs", nargs=-1, required=True, type=input_path(allow_dash=True))
@click.option("-o", "--output", required=True, type=output_path(allow_dash=True), help="corpus.jsonl to write.")
@click.option("--exclude", multiple=True, metavar="GLOB",
              help="Inside folders, skip files whose name or relative path, or a folder's they are in, matches GLOB (repeatable), "
                   "e.g. --exclude 'README*' --exclude drafts.")
@chunk_options(default_size=200)
def chunk_command(inputs, output, exclude, size, overlap, unit, sentences, model, whole):
    """Cut INPUTS into chunks `<doc_id>#<n>` (with --whole: one chunk `<doc_id>` per document) with
    character offsets into their (extracted) text.

    INPUTS: .txt/.md, .pdf, .html/.htm, .docx and TREC SGML files (<DOC><DOCNO>..., several
    documents a file; recognised by .trec/.sgml or by their first tag), folders of them (read
    recursively; what is skipped is listed on stderr, a count per reason), JSONL {"id","title","text"},
    Parquet with those columns (a Hugging Face corpus), BEIR folders and Cranfield's cran.all.1400 (or
    its folder). PDF chunks carry their pages, HTML/.docx/Markdown chunks their section headings (a
    "meta" key in corpus.jsonl).
    """
    settings = chunk_settings(size, overlap, unit, sentences, model, whole)
    documents, rows, report = chunk_files(inputs, output, settings, stderr_steps, exclude)
    click.echo(f"semrel: read {report.read_line()}", err=True)
    for line in report.skip_lines():
        warn(line)
    click.echo(f"{quantity(documents, 'document')} -> {quantity(rows, 'chunk')} in {output}", err=True)
