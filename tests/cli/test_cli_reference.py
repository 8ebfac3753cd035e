"""docs/commands.md is the commands' own --help; `semrel doctor` reports what it finds."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from semrel.cli import main
from semrel.cli.reference import WIDTH, command_reference

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "commands.md"


def test_command_reference_is_in_sync_with_the_code():
    assert REFERENCE.read_text(encoding="utf-8") == command_reference(), (
        "docs/commands.md is stale: run `python -m semrel.cli.reference > docs/commands.md`"
    )


def test_reference_covers_every_command_and_the_help_it_prints():
    text = command_reference()
    for path in (["eval"], ["golden", "pick"], ["review", "serve"], ["judge"], ["sensitivity"], ["doctor"]):
        assert f"## `semrel {' '.join(path)}`" in text
        printed = CliRunner().invoke(main, [*path, "--help"], prog_name="semrel", terminal_width=WIDTH).stdout
        assert printed.strip() in text


def test_doctor_finds_the_default_model_without_loading_it(cli):

    result = cli("doctor")
    assert result.exit_code == 0
    lines = {line.split()[0]: line for line in result.stdout.splitlines()[2:] if line.strip()}
    assert "all-MiniLM-L6-v2" in lines["default"] and "6 layers" in lines["default"] and "MISSING" not in lines["default"]
    assert "semrel" in lines and "torch" in lines
