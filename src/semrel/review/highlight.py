"""Which words of a chunk BERTScore matched to the answer: each chunk token's best cosine
similarity to any answer token, at the judge's layer, as character spans of the chunk.

This is the greedy matching behind BERTScore recall and precision, shown rather than summed,
so a reviewer sees what the judge saw. Long chunks are encoded in windows, none truncated.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..encoding.encode import hidden_states
from ..encoding.models import describe_model, load_encoder
from ..judging.bertscore import model_layer

WINDOW_TOKENS = 256


def token_similarities(
    chunk: str, answers: Sequence[str], model_name: str | None = None, layer: int | None = None
) -> list[tuple[int, int, float]]:
    """(start, end, best similarity to an answer token) for each token of `chunk`, at `layer` as `semrel judge`
    reads it: None is the one it takes for the model when not told (bert_score's recommended layer, else the last)."""
    info = describe_model(model_name)
    layer = model_layer(info.name, info.folder, info.num_layers, layer)[0]  # one the model lacks is refused, as the judge refuses it
    tokenizer, _ = load_encoder(model_name)
    offsets = tokenizer(chunk, add_special_tokens=False, return_offsets_mapping=True, verbose=False)["offset_mapping"]
    if not offsets or not any(a.strip() for a in answers):
        return []
    step = WINDOW_TOKENS - 2
    windows = [(offsets[i][0], offsets[min(i + step, len(offsets)) - 1][1]) for i in range(0, len(offsets), step)]
    texts = [chunk[a:b] for a, b in windows] + [a for a in answers if a.strip()]
    encoded = tokenizer(texts, truncation=True, max_length=WINDOW_TOKENS, return_offsets_mapping=True,
                        return_special_tokens_mask=True)
    vectors: list[np.ndarray] = [np.zeros(0)] * len(texts)
    for batch, _, _, states in hidden_states(texts, model_name, layer=layer, max_length=WINDOW_TOKENS):
        for row, i in enumerate(batch.tolist()):
            keep = np.flatnonzero(np.asarray(encoded["special_tokens_mask"][i]) == 0)
            tokens = states[row, keep].float().numpy()
            vectors[i] = tokens / np.maximum(np.linalg.norm(tokens, axis=1, keepdims=True), 1e-12)
    answer_tokens = np.concatenate(vectors[len(windows):])
    if not len(answer_tokens):  # answers only of what the tokenizer drops (zero-width or control characters)
        return []
    spans: list[tuple[int, int, float]] = []
    for w, (start, _) in enumerate(windows):
        token_offsets = [o for o, special in zip(encoded["offset_mapping"][w], encoded["special_tokens_mask"][w]) if not special]
        best = (vectors[w] @ answer_tokens.T).max(axis=1)
        spans += [(start + a, start + b, float(s)) for (a, b), s in zip(token_offsets, best.tolist())]
    return spans


def shades(spans: Sequence[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """(start, end, strength in (0, 1]) of the tokens above the chunk's median similarity,
    scaled so the closest match is 1: what a front end shades, stronger for closer matches."""
    if not spans:
        return []
    values = sorted(s for _, _, s in spans)
    low, high = values[len(values) // 2], values[-1]
    if high <= low:
        return []
    return [(start, end, (s - low) / (high - low)) for start, end, s in spans if s > low]
