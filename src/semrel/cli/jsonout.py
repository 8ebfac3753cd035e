"""JSON output that stays valid JSON: NaN and infinities (an undefined kappa or interval) become null."""

from __future__ import annotations

import json
import math
from typing import Any


def finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def json_text(value: Any) -> str:
    return json.dumps(finite(value), indent=2, allow_nan=False)
