"""BERTScore arithmetic and bert_score's own tables, reproduced without importing bert_score.

The arithmetic follows bert_score 0.3.13: token embeddings of one hidden layer, L2-normalised;
each candidate token is matched to its most similar reference token (precision) and each
reference token to its most similar candidate token (recall); both are averages weighted by
idf (or by 1), with [CLS]/[SEP] weighted 0; F = 2PR/(P+R). bert_score is only read from disk
(its recommended-layer table and rescaling baselines): importing it pulls in torch and
matplotlib, which a run served from the embedding cache never needs.
"""

from __future__ import annotations

import ast
import csv
import functools
import importlib.util
import json
import os
from pathlib import Path
from typing import Iterable

import numpy as np

from ..encoding.models import is_path
from ..errors import UsageError
from ..formats.files import read_text


def _package_dir() -> Path | None:
    spec = importlib.util.find_spec("bert_score")
    return Path(spec.origin).parent if spec and spec.origin else None


@functools.lru_cache(maxsize=1)
def recommended_layers() -> dict[str, int]:
    """bert_score's `model2layers` (model name -> best layer on WMT16), parsed from its source."""
    folder = _package_dir()
    if folder is None:
        return {}
    tree = ast.parse((folder / "utils.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "model2layers" for t in node.targets):
            return dict(ast.literal_eval(node.value))
    return {}


def default_layer(name: str, folder: Path, num_layers: int) -> tuple[int, str]:
    """(layer, why): bert_score's recommended layer for the model's name (bert_score_name), else its last layer."""
    key = bert_score_name(name, folder)
    table = recommended_layers()
    if key in table:
        if table[key] > num_layers:  # a folder named like a bigger model: loading would add random layers
            raise UsageError(f"model {name} has layers 0..{num_layers}, but bert_score recommends layer {table[key]} for "
                             f"{key}, the name it goes by: is it that model? give layer= to choose one")
        return table[key], f"bert_score's recommended layer for {key}"
    return num_layers, "last layer (model not in bert_score's table)"


def model_layer(name: str, folder: Path, num_layers: int, layer: int | None) -> tuple[int, str]:
    """The layer the judge reads (the given one, which the model must have, else its default) and where it came
    from; the review's highlights read the same, so a layer the model lacks is refused there too."""
    if layer is None:
        return default_layer(name, folder, num_layers)
    if not 0 <= layer <= num_layers:
        raise UsageError(f"layer={layer!r}: model {name} has layers 0..{num_layers}")
    return layer, "given"


def bert_score_name(name: str, folder: Path) -> str:
    """The name bert_score's tables (recommended layers, rescaling baselines) know the model by: a Hugging Face name as
    given; a local folder's, the hub name its config.json records (`_name_or_path`) where it records one, else the
    folder's own name ('/models/roberta-large' -> 'roberta-large', which bert_score itself cannot do). The config comes
    first: a folder named distilbert-base-uncased holding MiniLM, whose config names nreimers/MiniLM-L6-H384-uncased, got
    distilbert's baseline and layer. A name alone is weak evidence, so each table's layer count is checked against the
    model's as well."""
    if not os.path.isdir(os.path.expanduser(name)) or not (folder / "config.json").is_file():
        return Path(name).name if is_path(name) else name  # a hub name (its snapshot's folder is a commit hash), as bert_score looks it up
    recorded = json.loads(read_text(folder / "config.json")).get("_name_or_path")  # the folder's config was read to load it
    return recorded if isinstance(recorded, str) and recorded and not is_path(recorded) else folder.name


def shipped_baseline(name: str, folder: Path, layer: int, num_layers: int, lang: str = "en") -> tuple[np.ndarray, str] | None:
    """bert_score's rescaling baseline (P, R, F) for this model and layer, and its file; None if it has none. The model goes
    by bert_score_name; a baseline of another depth than the model's is refused (it is not that model)."""
    root = _package_dir()
    if root is None:
        return None
    key = bert_score_name(name, folder)
    path = root / "rescale_baseline" / lang / f"{key}.tsv"
    if not path.is_file():
        if key != name and (root / "rescale_baseline" / lang / f"{folder.name}.tsv").is_file():  # the folder's name promises one
            raise UsageError(f"bert_score ships no rescaling baseline for {key}, the model its config.json names ({name}); "
                             "use rescale='corpus'")
        return None
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))[1:]
    if len(rows) != num_layers + 1:  # one row per layer 0..num_layers: a model of another depth is not the one named
        raise UsageError(f"{path}: bert_score's baseline for {key} has layers 0..{len(rows) - 1}, but model {name} has layers "
                         f"0..{num_layers}: is it that model? use rescale='corpus'")
    return np.array([float(v) for v in rows[layer][1:4]]), str(path)


def idf_table(token_lists: Iterable[Iterable[int]], vocab_size: int) -> tuple[np.ndarray, int]:
    """(idf per token id, number of documents): log((N+1)/(df+1)), as bert_score's get_idf_dict.

    Unseen tokens get log(N+1); [CLS]/[SEP] occur in every document and so get 0.
    """
    df = np.zeros(vocab_size, dtype=np.int64)
    n = 0
    for ids in token_lists:
        df[np.unique(np.asarray(ids, dtype=np.int64))] += 1
        n += 1
    return np.log((n + 1) / (df + 1)), n


def plain_weights(vocab_size: int, special_ids: Iterable[int]) -> np.ndarray:
    """Weight 1 for every token but the special ones (0), bert_score's weights without idf."""
    weights = np.ones(vocab_size, dtype=np.float64)
    weights[[i for i in special_ids if i is not None]] = 0.0
    return weights


def weighted_mean(values: np.ndarray, weights: np.ndarray, starts: np.ndarray, axis: int) -> np.ndarray:
    """Per-segment weighted average along `axis`; a segment whose weights sum to 0 scores 0."""
    shape = [1, 1]
    shape[axis] = -1
    total = np.add.reduceat(values * weights.reshape(shape), starts, axis=axis)
    norm = np.add.reduceat(weights, starts).reshape(shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0, total / np.where(norm > 0, norm, 1), 0.0)


def greedy_match(
    cand: np.ndarray, cand_weights: np.ndarray, cand_starts: np.ndarray,
    ref: np.ndarray, ref_weights: np.ndarray, ref_starts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P, R, F of every candidate segment against every reference segment, each (n_cand, n_ref).

    `cand` and `ref` hold normalised token embeddings of several texts (or windows) stacked
    row-wise, segment k starting at row `starts[k]`; one matrix product scores them all.
    """
    return _greedy_scores(np.maximum(cand @ ref.T, 0.0), cand_weights, cand_starts, ref_weights, ref_starts)[:3]


def greedy_match_tokens(
    cand: np.ndarray, cand_weights: np.ndarray, cand_starts: np.ndarray,
    ref: np.ndarray, ref_weights: np.ndarray, ref_starts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """greedy_match's P, R, F (the same arithmetic, one product) and each reference token's best
    cosine over every candidate token (all segments): what the judge's `own` feature reads. That is
    the best over segments of each segment's best, already at hand, not another pass over the product
    (with one segment, its row)."""
    *scores, best_cand = _greedy_scores(np.maximum(cand @ ref.T, 0.0), cand_weights, cand_starts, ref_weights, ref_starts)
    return (*scores, best_cand[0] if len(best_cand) == 1 else best_cand.max(axis=0))


def _greedy_scores(
    sim: np.ndarray, cand_weights: np.ndarray, cand_starts: np.ndarray, ref_weights: np.ndarray, ref_starts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """P, R, F and each reference token's best match per candidate segment."""
    best_ref = np.maximum.reduceat(sim, ref_starts, axis=1)  # each candidate token's best match per reference
    best_cand = np.maximum.reduceat(sim, cand_starts, axis=0)  # each reference token's best match per candidate
    precision = weighted_mean(best_ref, cand_weights, cand_starts, axis=0)
    recall = weighted_mean(best_cand, ref_weights, ref_starts, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = np.nan_to_num(2 * precision * recall / (precision + recall), nan=0.0)
    return precision, recall, f1, best_cand


def rescale(scores: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """(score - b) / (1 - b) per component, bert_score's rescaling."""
    return (scores - baseline) / (1 - baseline)
