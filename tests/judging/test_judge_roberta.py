"""The judge with a RoBERTa-style (byte-level BPE) model from a local folder equals bert_score.score.

No RoBERTa is on disk and nothing may be downloaded, so the test builds a tiny one: a byte-level
BPE tokenizer trained on the repository's sample docs and a 3-layer RobertaModel with fixed random
weights. Random weights are enough: what is compared is tokenization (bert_score's sent_encode,
prefix space included), special tokens, padding and layer choice, all of which move the scores.
"""

from __future__ import annotations

import csv
import random
import re
from pathlib import Path

import numpy as np
import pytest

import semrel
from bert_score_reference import bert_score_reference
from semrel.records import Chunk, GoldenItem

DATA = Path(__file__).resolve().parents[2] / "data"
WORDS_PER_CHUNK = 30


# p's warnings about the fixture (no gold chunks, a tiny model that is not MiniLM): these tests are about the scores
pytestmark = [pytest.mark.filterwarnings("ignore:the golden set lists no gold chunks"),
              pytest.mark.filterwarnings("ignore:p's coefficients were fitted for"),
              pytest.mark.filterwarnings("ignore:.* lie beyond the development sets p was fitted on")]


def _build_model(folder: Path, add_prefix_space: bool) -> Path:
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizer

    folder.mkdir()
    bpe = ByteLevelBPETokenizer()
    bpe.train([str(p) for p in sorted((DATA / "docs").glob("*.md"))], vocab_size=1000, min_frequency=2, show_progress=False,
              special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    bpe.save_model(str(folder))  # vocab.json + merges.txt, read back as a RoBERTa tokenizer
    tokenizer = RobertaTokenizer.from_pretrained(str(folder), model_max_length=512, add_prefix_space=add_prefix_space)
    tokenizer.save_pretrained(str(folder))
    torch.manual_seed(0)
    config = RobertaConfig(vocab_size=len(tokenizer), hidden_size=64, num_hidden_layers=3, num_attention_heads=4,
                           intermediate_size=128, max_position_embeddings=514,  # RoBERTa positions start after the pad id
                           pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    RobertaModel(config).save_pretrained(str(folder))
    return folder


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return _build_model(tmp_path_factory.mktemp("roberta") / "tiny-roberta", add_prefix_space=False)


@pytest.fixture(scope="module")
def data():
    """90 real pairs: the sample docs in 30-word chunks, the 18 sample questions with 5 pooled chunks each."""
    chunks = []
    for path in sorted((DATA / "docs").glob("*.md")):
        words = re.sub(r"^#+ .*$", "", path.read_text(encoding="utf-8"), flags=re.M).split()
        chunks += [Chunk(f"{path.stem}-{k}", " ".join(words[k : k + WORDS_PER_CHUNK]), path.stem, 0, 0)
                   for k in range(0, len(words), WORDS_PER_CHUNK)]
    with open(DATA / "golden.csv", encoding="utf-8") as handle:
        golden = [GoldenItem(r["query_id"], r["query"], (r["reference_answer"],), ()) for r in csv.DictReader(handle)]
    rng = random.Random(3)
    pool = [(g.query_id, c.id, ("bm25",)) for g in golden for c in rng.sample(chunks, 5)]
    return chunks, golden, pool


def _compare(model: Path, data, idf: bool) -> float:
    chunks, golden, pool = data
    result = semrel.judge(chunks, golden, pool, model=str(model), layer=2, idf=idf, cache=False)
    assert len(result.judgments) == 90 and result.windowed == 0 and result.params["layer"] == 2
    texts = {c.id: c.text for c in chunks}
    answers = {g.query_id: g.reference_answers[0] for g in golden}
    extra = {}
    if idf:
        from bert_score.utils import get_idf_dict
        from transformers import AutoTokenizer

        extra["idf"] = get_idf_dict([c.text for c in chunks], AutoTokenizer.from_pretrained(str(model), use_fast=False), nthreads=0)
    expected = bert_score_reference(str(model), [texts[j.chunk_id] for j in result.judgments],
                                    [answers[j.query_id] for j in result.judgments], num_layers=2, **extra)
    scores = np.array([[j.P, j.R, j.F] for j in result.judgments])
    assert scores.std(axis=0).min() > 0.005  # real spread, not a constant
    return float(np.abs(scores - expected).max())


@pytest.mark.slow
@pytest.mark.parametrize("idf", [False, True])
def test_roberta_scores_equal_bert_score(model, data, idf):
    assert _compare(model, data, idf) < 1e-5


def test_tokens_are_bert_scores_sent_encode(model):
    """The ids the judge feeds the model are sent_encode's, first word included (its prefix space or not)."""
    from bert_score.utils import sent_encode
    from transformers import AutoTokenizer

    from semrel.encoding.models import describe_model
    from semrel.judging.judge import TextEncoder

    reference = AutoTokenizer.from_pretrained(str(model), use_fast=False)  # as bert_score loads it
    encoder = TextEncoder(describe_model(str(model)), 2, 512, 128, None, 4096)
    texts = ["  The brake pads wear out. ", "Chain oil"]  # bert_score fails on "" with transformers 5
    assert [encoder.with_specials(ids) for ids in encoder.token_ids(texts)] == [sent_encode(reference, t) for t in texts]
    assert encoder.specials == ([reference.bos_token_id], [reference.eos_token_id])
    assert encoder.token_ids(["", "  "]) == [[], []]  # a blank text gets no prefix space: sent_encode gives <s></s>


@pytest.mark.slow
def test_tokenizer_that_adds_a_prefix_space_itself_also_matches(tmp_path, data):
    """A RoBERTa folder saved with add_prefix_space=True: both tokenize 'ĠThe', and the scores still agree."""
    folder = _build_model(tmp_path / "tiny-roberta-prefix", add_prefix_space=True)
    assert _compare(folder, data, idf=False) < 1e-5
