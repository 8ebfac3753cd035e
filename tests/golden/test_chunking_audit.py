"""Token costs: a word without a token of its own costs one, and a long text tokenized in blocks costs as the whole text."""

from __future__ import annotations

import re

from semrel.cjk import count_words
from semrel.encoding.models import load_encoder
from semrel.golden import chunking
from semrel.golden.chunking import ChunkSettings, Document, chunk_document


def test_a_word_the_tokenizer_drops_still_costs_one_token():
    """A zero-width space is a word (not whitespace) that the tokenizer gives no token: costed 0, it rode free in the
    chunk before it, so a 1-token chunk held two words."""
    tokenizer = load_encoder(None)[0]
    text = "bees \u200b hive"
    assert [s for s, e in tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]] == [0, 7]
    chunks = chunk_document(Document("z", text), ChunkSettings(size=1, unit="tokens"), tokenizer)
    assert [(c.id, c.text, c.start, c.end) for c in chunks] == [("z#0", "bees", 0, 4), ("z#1", "\u200b", 5, 6), ("z#2", "hive", 7, 11)]
    chunks = chunk_document(Document("z", text), ChunkSettings(size=2, unit="tokens"), tokenizer)
    assert [c.text for c in chunks] == ["bees \u200b", "hive"]


def leading_space_tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False):
    """Like RoBERTa's: a word after whitespace is one token, a word at the very start of the text one token per character."""
    offsets = []
    for match in re.finditer(r"\S+", text):
        if match.start() and text[match.start() - 1].isspace():
            offsets.append((match.start(), match.end()))
        else:
            offsets += [(i, i + 1) for i in range(match.start(), match.end())]
    return {"offset_mapping": offsets}


def test_a_long_text_tokenized_in_blocks_costs_each_word_as_the_whole_text_does(monkeypatch):
    """Each block after the first starts at the whitespace before a word, so a tokenizer that attaches it to the word (RoBERTa)
    sees the word as in the whole text; a block starting at the word itself made that word cost one token per character."""
    text = "alpha beta gamma delta " * 20
    starts = chunking._word_starts(text)
    whole = chunking._word_costs(text, starts, leading_space_tokenizer)
    assert whole.tolist() == [5] + [1] * 79
    monkeypatch.setattr(chunking, "TOKENIZE_BLOCK", 16)
    assert len(chunking._token_blocks(text, starts)) > 20
    assert chunking._word_costs(text, starts, leading_space_tokenizer).tolist() == whole.tolist()


def test_the_manifest_records_whole_only_when_it_is_given():
    """Manifests written before --whole existed lack the key: a run without it must still describe itself as they did."""
    assert ChunkSettings(size=10).describe() == {"size": 10, "overlap": 0, "unit": "words", "sentences": False, "model": None}
    assert ChunkSettings(whole=True).describe() == {"size": None, "overlap": 0, "unit": "words", "sentences": False, "model": None,
                                                    "whole": True}


def test_chinese_and_japanese_text_without_spaces_is_cut_to_size():
    """Each ideograph or kana is a word: a Chinese page, having no spaces, was one "word" and so one chunk of any
    length; 。！？ end sentences, though no space follows them."""
    text = "这是第一句话。日本語の文です！" * 3  # 6 words, then 7
    chunks = chunk_document(Document("zh", text), ChunkSettings(size=6))
    assert [c.text for c in chunks][:3] == ["这是第一句话。", "日本語の文で", "す！这是第一句"]
    assert len(chunks) == 7 and all(text[c.start:c.end] == c.text for c in chunks)
    chunks = chunk_document(Document("zh", text), ChunkSettings(size=8, sentences=True))
    assert [c.text for c in chunks][:2] == ["这是第一句话。", "日本語の文です！"]
    assert [c.text for c in chunk_document(Document("mixed", "GPU显卡。 fast"), ChunkSettings(size=2))] == ["GPU显", "卡。 fast"]
    assert count_words("中文text 字。") == 4
