"""docs/python.md says every output in its session is what the code printed: the session is run here, block after block
in one namespace as a notebook runs it, on the outputs of `semrel run data/demo.toml`, and each block's printed value is
compared with the text the page shows beneath it. The python blocks of the other pages (README.md, docs/*.md) run too, in
the demo's output folder; a block that needs files the demo does not make starts with the line `# not run: why`."""

from __future__ import annotations

import ast
import contextlib
import io
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"```python\n(.*?)```\n(?:```text\n(.*?)```)?", re.S)
NUMBER = re.compile(r"-?\d+\.\d{7,}(?:e-?\d+)?")  # judge scores may differ from the 7th decimal on another CPU or torch build


def blocks(page: Path = ROOT / "docs" / "python.md") -> list[tuple[str, str | None]]:
    return [(code, shown or None) for code, shown in BLOCK.findall(page.read_text(encoding="utf-8"))]


def other_pages() -> list[Path]:
    return [page for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))] if page.name != "python.md"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """A folder holding data/ and the outputs `semrel run data/demo.toml` makes of it in out/demo."""
    root = tmp_path_factory.mktemp("demo")
    shutil.copytree(ROOT / "data", root / "data")
    subprocess.run([sys.executable, "-m", "semrel.cli", "run", "data/demo.toml"], cwd=root, check=True, capture_output=True)
    return root


def printed(code: str, namespace: dict) -> tuple[str, list[str]]:
    """What a notebook cell shows: its prints and the value of its last expression (None shows nothing); and its warnings."""
    tree = ast.parse(code)
    tail = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(tree, "<docs/python.md>", "exec"), namespace)
        value = eval(compile(ast.Expression(tail.value), "<docs/python.md>", "eval"), namespace) if tail else None
        if value is not None:
            print(value if hasattr(value, "to_string") else repr(value))  # a DataFrame as pandas prints it
    return out.getvalue().strip(), [str(w.message) for w in caught]


def same(got: str, shown: str) -> bool:
    """The same text, numbers of 7 or more decimals within 1e-6 of each other: rounding both to 6 decimals failed on a
    CPU whose score of 0.78556345 the page shows as 0.78556355, either side of a rounding boundary."""
    numbers = [[float(n) for n in NUMBER.findall(text)] for text in (got, shown)]
    return (NUMBER.sub("#", got) == NUMBER.sub("#", shown) and len(numbers[0]) == len(numbers[1])
            and all(abs(a - b) <= 1e-6 for a, b in zip(*numbers)))


def test_the_page_has_a_session_to_run():
    found = blocks()
    assert len(found) >= 30 and sum(shown is not None for _, shown in found) >= 25


@pytest.mark.slow
def test_every_output_on_the_page_is_what_its_code_prints(demo, tmp_path, monkeypatch):
    pandas = pytest.importorskip("pandas")
    shutil.copytree(demo, tmp_path, dirs_exist_ok=True)  # the session writes into out/demo
    monkeypatch.chdir(tmp_path)
    pandas.set_option("display.width", 120, "display.max_columns", None)  # as a wide console shows tables (80 columns elide)
    namespace: dict = {"__name__": "__main__"}
    differences = []
    for code, shown in blocks():
        got, said = printed(code, namespace)
        if shown is not None and not same(got, shown.strip()):
            differences.append(f"{code}\n--- the page shows\n{shown.strip()}\n--- the code prints\n{got}")
        if bool(re.search(r"#.*\bwarns\b", code)) != bool(said):  # the page says which calls warn
            differences.append(f"{code}\n--- warned {said}")
    assert not differences, "\n\n".join(differences)


@pytest.mark.slow
def test_the_python_blocks_of_the_other_pages_run_in_the_demos_output_folder(demo, tmp_path, monkeypatch):
    shutil.copytree(demo / "out" / "demo", tmp_path, dirs_exist_ok=True)  # a block may write a file the demo made
    monkeypatch.chdir(tmp_path)
    ran, failed = 0, []
    for page in other_pages():
        for code, _ in blocks(page):
            if code.startswith("# not run:"):
                continue
            try:
                printed(code, {"__name__": "__main__"})
            except Exception as error:
                failed.append(f"{page.name}:\n{code}--- {type(error).__name__}: {error}")
            ran += 1
    assert ran >= 1 and not failed, "\n\n".join(failed)
