"""Where the benchmarks find the real data: ../shared/data beside the checkout, or SEMREL_DATA (as the tests do),
for a clone or worktree that does not lie beside it."""

from __future__ import annotations

import os
from pathlib import Path

SHARED_DATA = Path(os.environ.get("SEMREL_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
