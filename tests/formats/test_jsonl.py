"""JSON Lines read with one-line errors: the file, the line and what is wrong (mutation audit)."""

from __future__ import annotations

import pytest

from semrel.errors import FormatError
from semrel.formats.jsonl import json_text, optional_text, read_jsonl


def test_a_line_that_is_not_an_object_names_its_own_line(write):
    """A list or number on a line was reported one line too far, past blank lines."""
    path = write("rows.jsonl", '{"a": 1}\n\n[1, 2]\n{"b": 2}\n')
    with pytest.raises(FormatError, match=r"rows\.jsonl:3: expected a JSON object, found list") as caught:
        list(read_jsonl(path))
    assert caught.value.line == 3


def test_an_optional_text_field_absent_or_null_is_empty_and_a_number_its_digits():
    """A null title read as the text 'None' (and shown, searched, written back as such)."""
    assert [optional_text({"t": v}, "t", "x.jsonl", 1) for v in (None, 7, "a")] == ["", "7", "a"]
    assert optional_text({}, "t", "x.jsonl", 1) == ""


def test_json_output_writes_undefined_numbers_as_null():
    """An infinite z-score or a NaN inside a tuple stopped the JSON output with a ValueError, or wrote NaN, which is no JSON."""
    assert json_text({"z": float("inf"), "ci": (1.5, float("nan")), "n": [float("-inf")]}, indent=None) == \
        '{"z": null, "ci": [1.5, null], "n": [null]}'
