"""Where the files shipped beside the code (templates/, data/) are, in a checkout or an installed wheel."""

from __future__ import annotations

import site
import sys
import sysconfig
from pathlib import Path

from .errors import SemrelError


def resource_dir(kind: str) -> Path:
    """The top-level `kind` folder of the source checkout (src/semrel), else `<prefix>/share/semrel/<kind>`
    where pyproject's data-files put it when the wheel was installed (`pip install --target DIR`: DIR/share,
    and DIR's parent is no checkout: its own templates/ are not semrel's)."""
    here = Path(__file__).resolve()
    checkout = [here.parents[2] / kind] if here.parents[1].name == "src" else []
    prefixes = dict.fromkeys([str(here.parents[1]), sysconfig.get_path("data"), sys.prefix, sys.base_prefix, site.getuserbase()])
    candidates = checkout + [Path(p) / "share" / "semrel" / kind for p in prefixes if p]
    for folder in candidates:
        if folder.is_dir():
            return folder
    raise SemrelError(f"cannot find semrel's {kind}/ folder (looked in {', '.join(map(str, candidates))}); reinstall semrel")


def template_dir() -> Path:
    return resource_dir("templates")


def semrel_version() -> str:
    """semrel's installed version (0.0.0 from a source tree without an install); `semrel.__version__`."""
    from importlib import metadata  # importlib.metadata alone costs more than the rest of `import semrel`

    try:
        return metadata.version("semrel")
    except metadata.PackageNotFoundError:
        return "0.0.0"
