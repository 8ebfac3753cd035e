"""BM25 over Chinese, Japanese and Korean: runs of their characters are indexed as overlapping bigrams (a lone
character as itself), as Lucene's CJKAnalyzer does, on disk and in memory alike; other text keeps bm25s' tokens."""

from __future__ import annotations

import json

import numpy as np

import semrel.retrieval.lexical as lexical
from semrel.retrieval.corpus import Corpus
from semrel.retrieval.lexical import Bm25Settings, LexicalStore, Vocabulary
from semrel.retrieval.retrieve import BM25_PARAMS, Bm25Index, StoredBm25

ROWS = [
    {"_id": "zh-beijing", "text": "北京今天的天气很好，阳光明媚。"},
    {"_id": "zh-shanghai", "text": "上海是中国最大的经济中心之一。"},
    {"_id": "zh-panda", "text": "熊猫主要生活在四川的竹林里，每天吃很多竹子。"},
    {"_id": "ja-tokyo", "text": "東京の天気は朝から雨が降っています。"},
    {"_id": "ja-fuji", "text": "富士山は日本で一番高い山です。"},
    {"_id": "ja-case", "title": "iPhone用ケース", "text": "スマートフォンを落としても割れません。"},
    {"_id": "ko-seoul", "text": "서울에서 김치찌개를 먹었어요."},
    {"_id": "en-weather", "text": "The weather in Beijing is sunny today."},
]
QUERIES = {"北京的天气怎么样？": "zh-beijing", "熊猫吃竹子吗": "zh-panda", "中国的经济中心": "zh-shanghai",
           "日本で一番高い山は？": "ja-fuji", "東京の天気": "ja-tokyo", "iPhoneのケース": "ja-case",
           "서울 김치찌개": "ko-seoul", "weather in Beijing": "en-weather"}


def corpus_file(path) -> str:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    return str(path)


def test_cjk_runs_are_overlapping_bigrams_and_a_lone_character_is_itself():
    words = lexical.words
    assert words("北京今天的天气很好，阳光明媚。") == ["北京", "京今", "今天", "天的", "的天", "天气", "气很", "很好",
                                                   "阳光", "光明", "明媚"]
    assert words("東京の天気") == ["東京", "京の", "の天", "天気"]  # kana and kanji bigrammed together, as Lucene does
    assert words("「猫」が好き") == ["猫", "が好", "好き"]
    assert words("人々、〇〇年") == ["人々", "〇〇", "〇年"]
    assert words("서울에서 먹었어요") == ["서울", "울에", "에서", "먹었", "었어", "어요"]
    assert words("iphone用ケース 2024年 ジョン・スミス") == ["iphone", "用ケ", "ケー", "ース", "2024", "年", "ジョ", "ョン", "スミ", "ミス"]
    assert words("x猫 猫y ab猫cd") == ["猫", "猫", "ab", "猫", "cd"]  # what is left of a word is a token from two characters on


def test_stopwords_and_stemmers_leave_cjk_tokens_alone():
    analyzer = lexical.Analyzer(Bm25Settings(stopwords="zh", stemmer="english"))
    assert "一些" in analyzer.stop
    assert analyzer.terms("一些 running studies") == ["一些", "run", "studi"]
    assert lexical.Analyzer(Bm25Settings()).terms("The runners 跑步 of Tokyo") == ["runner", "跑步", "tokyo"]


def test_a_chinese_query_finds_its_chinese_chunk_on_disk_and_in_memory(tmp_path):
    path = corpus_file(tmp_path / "corpus.jsonl")
    stored = StoredBm25(LexicalStore(tmp_path / "cache", BM25_PARAMS).index(path))
    memory = Bm25Index(Corpus.read(path))
    ids = [r["_id"] for r in ROWS]
    on_disk, in_memory = stored.search(list(QUERIES), 3), memory.search(list(QUERIES), 3)
    for (query, expected), (positions, scores), (memory_positions, memory_scores) in zip(QUERIES.items(), on_disk, in_memory):
        assert len(positions) and ids[positions[0]] == expected, (query, [ids[p] for p in positions])
        assert np.array_equal(positions, memory_positions) and np.array_equal(scores, memory_scores), query


def test_cjk_scores_equal_bm25s_given_the_same_tokens(tmp_path):
    import bm25s

    path = corpus_file(tmp_path / "corpus.jsonl")
    settings = Bm25Settings()
    analyzer = lexical.Analyzer(settings)
    texts = [f"{r['title']} {r['text']}" if r.get("title") else r["text"] for r in ROWS]
    reference = bm25s.BM25()
    reference.index([analyzer.terms(t) for t in texts], show_progress=False)
    index = LexicalStore(tmp_path / "cache", BM25_PARAMS).index(path)
    for query in QUERIES:
        ids = reference.get_tokens_ids(analyzer.terms(query))
        assert ids, query
        assert np.array_equal(index.scores(query), reference.get_scores_from_ids(ids)), query  # bit for bit, float32


def test_full_width_letters_and_half_width_katakana_are_folded_as_lucenes_cjk_width_filter_does(tmp_path):
    """ＰＣ, ２０２４ and ｽﾏｰﾄﾌｫﾝ were tokens of their own, so a query typed in the usual width missed them."""
    words = lexical.words
    assert words("ｽﾏｰﾄﾌｫﾝのｶﾞｲﾄﾞ") == words("スマートフォンのガイド") == ["スマ", "マー", "ート", "トフ", "フォ", "ォン", "ンの", "のガ",
                                                                     "ガイ", "イド"]  # ｶﾞ is one kana, ガ
    assert words("ｐｃの２０２４年 ａｂｃ") == words("pcの2024年 abc") == ["pc", "の", "2024", "年", "abc"]
    rows = [{"_id": "wide", "text": "ＰＣ用ｹｰｽ ２０２４"}, {"_id": "other", "text": "猫 cat"}]
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    (positions, _), = StoredBm25(LexicalStore(tmp_path / "cache", BM25_PARAMS).index(str(path))).search(["PC ケース 2024"], 2)
    assert [rows[p]["_id"] for p in positions] == ["wide"]


ENGLISH = ["The patients' running studies (2019-2020) showed e.coli & x-ray results: 95% of 1,024 cases.",
           "Naïve café-goers résumé; Straße ΑΘΗΝΑ Москва ﬁne ² snake_case_words a b c",  # NFKC would fold ﬁ and ²: not done
           "Vaccine VACCINE vaccines vaccinated, runner runs ran; it's won't O'Brien co-operate",
           "", "   ", "I a x 42 7 __init__ foo.bar@example.com https://example.org/path?q=1"]


def test_text_without_cjk_gets_exactly_the_tokens_bm25s_gave_it_before():
    """The tokens (and so every score) of English and other non-CJK text are bm25s' own, stopwords and stemmer
    included, as they were before CJK text was bigrammed."""
    import bm25s
    import Stemmer

    for stopwords, stemmer in (("en", "english"), ("none", "none"), ("de", "porter")):
        expected = bm25s.tokenize(ENGLISH, stopwords=[] if stopwords == "none" else stopwords, return_ids=False, show_progress=False,
                                  stemmer=None if stemmer == "none" else Stemmer.Stemmer(stemmer))
        vocabulary = Vocabulary(Bm25Settings(stopwords=stopwords, stemmer=stemmer))
        terms, docs = vocabulary.block(ENGLISH)
        assert [[vocabulary.list[t] for t in terms[docs == i]] for i in range(len(ENGLISH))] == expected
        assert [vocabulary.query(t) for t in ENGLISH] == [[vocabulary.terms[w] for w in e] for e in expected]
