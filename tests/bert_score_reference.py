"""bert_score.score as the reference the judge's scores must equal, with each real pair padded as semrel treats it."""

from __future__ import annotations

import numpy as np

BATCH = 8
"""bert_score encodes its texts in batches of this many, each padded to its longest; one batch of all of them,
padded to the sentinel, cost 28 s of the 30 s the reference took on 290 COVID-QA pairs (small batches: a few)."""


def bert_score_reference(model: str, cands: list[str], refs: list, **kwargs) -> np.ndarray:
    """bert_score.score with a longer sentinel pair after every real pair, as (n, 3) P, R, F.

    bert_score pads each batch of pairs and masks padding to similarity 0, so a token's best match
    is max(0, best cosine) for every pair that is not the longest of its batch (nearly all pairs);
    semrel applies that rule to all pairs. A sentinel in every batch makes every real pair a padded
    one, so the comparison does not depend on how bert_score happened to batch them. It is one
    token longer than the longest real text on each side: bert_score pads every pair of a batch to it.
    """
    import bert_score
    from transformers import AutoTokenizer

    refs = [list(r) if isinstance(r, (list, tuple)) else [r] for r in refs]
    assert max(len(r) for r in refs) < BATCH  # so no batch of pairs (a pair per reference) misses a sentinel
    tokenizer = AutoTokenizer.from_pretrained(model)
    longest = max(len(tokenizer.tokenize(text)) for text in cands + [r for rs in refs for r in rs])
    sentinel_cand, sentinel_ref = " ".join(["sentinel"] * (longest + 1)), " ".join(["padding"] * (longest + 1))
    P, R, F = bert_score.score([t for c in cands for t in (c, sentinel_cand)], [t for r in refs for t in (r, [sentinel_ref])],
                               model_type=model, batch_size=BATCH, **kwargs)
    return np.stack([P.numpy(), R.numpy(), F.numpy()], axis=1)[::2]
