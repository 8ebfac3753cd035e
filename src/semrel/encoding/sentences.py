"""Sentence embeddings: mean-pooled, L2-normalised last-layer vectors, on any engine."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..progress import Advance
from .encode import mean_pooled, truncated_ids
from .engines import LOCAL, Engine
from .models import describe_model

# what dense vectors are, for `semrel run` to hash: a change here reruns the steps that made them
RECIPE = "mean-pooled, L2-normalised, texts cut at the model folder's max_seq_length (since 2026-12-01; at 512 before)"


def sentence_embeddings(
    texts: Sequence[str], model_name: str | None = None, advance: Advance | None = None, engine: Engine | None = None
) -> np.ndarray:
    """(texts, dim) float32, sentence-transformers' recipe; `advance(n)` after each batch.

    Texts are cut where sentence-transformers cuts them: the model folder's max_seq_length (256 for
    all-MiniLM-L6-v2, its training length), else the model's limit. `engine` runs the model (default:
    here, in this process); every engine gives the same vectors.
    """
    result: np.ndarray | None = None
    ids = truncated_ids(texts, model_name, describe_model(model_name).sentence_length)
    for batch, pooled in (engine or LOCAL).run(ids, model_name, None, 16384, mean_pooled):
        if result is None:
            result = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
        result[batch] = pooled
        if advance:
            advance(len(batch))
    return result if result is not None else np.zeros((0, 0), dtype=np.float32)
