"""The Chinese, Japanese and Korean characters that spaces do not split into words: one home for their ranges and for
what a word is, so chunk sizes (golden/chunking: a character is a word), the judge's short answers (a word count) and
BM25 tokens (retrieval/lexical: overlapping bigrams) agree on which characters they are."""

from __future__ import annotations

import re

HAN_KANA = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
"""Hiragana and katakana (full- and half-width) and Han ideographs (the BMP blocks, compatibility ones, and the
supplementary planes' extensions B to H): Chinese and Japanese put no spaces between their words."""

IDEOGRAPHIC_MARKS = "\u3005-\u3007"
"""々 (repeat the last ideograph), 〆 and 〇: written inside Han words (人々, 〇〇年), so BM25 keeps them in a run."""

HANGUL = "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uffa0-\uffdc"
"""Hangul syllables and jamo (with the compatibility and half-width forms). Korean puts spaces between words, so chunk
sizes count its words as others'; but a word carries its particles (서울에서, 서울은), so BM25 bigrams it as Lucene does."""

WIDTH_FORMS = "\uff01-\uff5e\uff61-\uff9f"
"""Full-width ASCII (ＰＣ, ２０２４) and half-width katakana (ｶﾞｲﾄﾞ): the same words as PC, 2024 and ガイド, typed in the
other width, as Japanese text often is. BM25 folds them (NFKC), as Lucene's CJKWidthFilter does."""

BIGRAMMED = HAN_KANA + IDEOGRAPHIC_MARKS + HANGUL
"""What BM25 indexes as overlapping bigrams (Lucene's CJKBigramFilter defaults: Han, hiragana, katakana and Hangul)."""


WORD = re.compile(rf"[{HAN_KANA}][^\s\w]*|[^\s{HAN_KANA}]+")
"""A word: a run of non-space characters, except that each ideograph or kana is one (with the punctuation after it), as
word processors count them; Chinese and Japanese put no spaces between words, so a page of them was one word."""


def count_words(text: str) -> int:
    """Words as chunk sizes count them (an ideograph or kana is one)."""
    return sum(1 for _ in WORD.finditer(text))
