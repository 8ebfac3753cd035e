"""Running an encoder over many texts: length-sorted batches, so padding costs little."""

from __future__ import annotations

import ctypes
import functools
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

import numpy as np

from ..progress import Advance
from .models import load_encoder, load_tokenizer, resolve_model, unloadable

if TYPE_CHECKING:
    import torch

Reduce = Callable[["torch.Tensor", "torch.Tensor"], np.ndarray]
"""What a batch's (states, attention mask) become on the way out of the model: normalised_tokens, mean_pooled."""


GPU_TOKENS = 65536
"""Tokens per batch on a GPU: far more than on CPU (where bigger batches are no faster), so the device stays busy."""
GPU_BATCH = 1024
CPU_BATCH = 128


def batch_limits(device: str, max_tokens: int) -> tuple[int, int]:
    """(tokens, rows) per batch on `device`: the caller's CPU budget, raised to GPU_TOKENS and GPU_BATCH rows on CUDA."""
    return (max(max_tokens, GPU_TOKENS), GPU_BATCH) if device == "cuda" else (max_tokens, CPU_BATCH)


def length_batches(lengths: Sequence[int], max_tokens: int = 16384, max_batch: int = CPU_BATCH) -> list[np.ndarray]:
    """Indices grouped into batches of similar length, longest first, each within a token budget."""
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    batches: list[np.ndarray] = []
    current: list[int] = []
    width = 0
    for i in order:
        width = max(width, int(lengths[i])) if current else int(lengths[i])
        if current and (len(current) + 1) * width > max_tokens or len(current) == max_batch:
            batches.append(np.array(current))
            current, width = [], int(lengths[i])
        current.append(i)
    if current:
        batches.append(np.array(current))
    return batches


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def release_freed_memory() -> None:
    """Hand freed heap memory back to the OS (glibc only).

    Batches of ever-changing shapes fragment glibc's heap, so without this the peak RSS of a long
    encoding run creeps up batch after batch (1.0 GB after 400 chunks instead of 0.75 GB, growing).
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def token_windows(ids: Sequence[int], size: int, overlap: int) -> list[Sequence[int]]:
    """`ids` cut into windows of `size` tokens overlapping by `overlap`; the last window ends at the end.

    Every window but a lone short one is exactly `size` long (the last is shifted back rather
    than left short), so the windows of one text batch together without padding.
    """
    if len(ids) <= size:
        return [ids]
    step = max(1, size - overlap)
    starts = list(range(0, len(ids) - size, step)) + [len(ids) - size]
    return [ids[s : s + size] for s in starts]


def forward_batches(
    encoded: Sequence[Sequence[int]],
    model_name: str | None = None,
    layer: int | None = None,
    max_tokens: int = 16384,
    advance: Advance | None = None,
    device: str = "cpu",
    precision: str = "exact",
    whole: bool = False,
) -> Iterator[tuple[np.ndarray, "torch.Tensor", "torch.Tensor", "torch.Tensor"]]:
    """(indices, input ids, attention mask, states of `layer`) per length-sorted batch of token id lists.

    `layer` None means the last; otherwise the model is loaded with only `layer` layers, so the
    layers above it cost nothing. On CUDA batches are bigger (batch_limits); states are float32 whatever the precision.
    `whole`: `encoded` is one batch already, cut by someone else (a Ray driver, for its workers), run as it is.
    """
    import torch

    tokenizer, model = load_encoder(model_name, device, layers=layer, precision=precision)
    pad = tokenizer.pad_token_id or 0
    tokens, rows = batch_limits(device, max_tokens)
    with torch.inference_mode():
        batches: list[np.ndarray] = [np.arange(len(encoded))] if whole else \
            length_batches([len(e) for e in encoded], max_tokens=tokens, max_batch=rows)
        for batch in batches:
            width = max(len(encoded[i]) for i in batch)
            ids = torch.full((len(batch), width), pad, dtype=torch.long, device=device)
            mask = torch.zeros((len(batch), width), dtype=torch.long, device=device)
            for row, i in enumerate(batch):
                ids[row, : len(encoded[i])] = torch.as_tensor(encoded[i])
                mask[row, : len(encoded[i])] = 1
            states = model(input_ids=ids, attention_mask=mask).last_hidden_state.float()
            yield batch, ids, mask, states
            del states
            release_freed_memory()
            if advance:
                advance(len(batch))


def normalised_tokens(states: "torch.Tensor", mask: "torch.Tensor") -> np.ndarray:
    """Each token's vector, L2-normalised: what BERTScore matches; (rows, width, dim), padding included."""
    import torch

    return torch.nn.functional.normalize(states, dim=-1).cpu().numpy()


def mean_pooled(states: "torch.Tensor", mask: "torch.Tensor") -> np.ndarray:
    """Mean over the real tokens, L2-normalised (sentence-transformers' recipe); (rows, dim)."""
    import torch

    weights = mask.unsqueeze(-1).to(states.dtype)
    pooled = (states * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1).cpu().numpy()


def reduced_batches(
    encoded: Sequence[Sequence[int]], model_name: str | None, layer: int | None, max_tokens: int, reduce: Reduce,
    device: str = "cpu", precision: str = "exact", whole: bool = False,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(indices, reduce(states, mask)) per length-sorted batch (`whole`: `encoded` as one batch): the model step every engine runs."""
    for batch, _, mask, states in forward_batches(encoded, model_name, layer, max_tokens, device=device, precision=precision,
                                                  whole=whole):
        yield batch, reduce(states, mask)


def truncated_ids(texts: Sequence[str], model_name: str | None = None, max_length: int | None = None) -> list[list[int]]:
    """Token ids with special tokens, cut at `max_length` (default: the model's limit); no weights loaded.
    No texts give no ids (a tokenizer fails on an empty batch), so encoding nothing yields nothing."""
    if not texts:
        return []
    from transformers import AutoConfig

    tokenizer = load_tokenizer(model_name)
    if max_length is None:
        location = resolve_model(model_name)
        try:
            config = AutoConfig.from_pretrained(location, trust_remote_code=False)  # never the folder's own code (load_tokenizer)
        except (OSError, ValueError) as exc:
            raise unloadable(location, exc) from None
        max_length = min(tokenizer.model_max_length, getattr(config, "max_position_embeddings", 512))
    return tokenizer(list(texts), add_special_tokens=True, truncation=True, max_length=max_length)["input_ids"]


def hidden_states(
    texts: Sequence[str],
    model_name: str | None = None,
    layer: int | None = None,
    max_length: int | None = None,
    max_tokens: int = 16384,
    advance: Advance | None = None,
) -> Iterator[tuple[np.ndarray, "torch.Tensor", "torch.Tensor", "torch.Tensor"]]:
    """(text indices, input ids, attention mask, states of `layer`) per batch; layer None = last.

    Texts longer than `max_length` tokens (default: the model's limit) are truncated here;
    callers that must not lose text split it into windows first (token_windows, forward_batches).
    """
    yield from forward_batches(truncated_ids(texts, model_name, max_length), model_name, layer, max_tokens, advance)
