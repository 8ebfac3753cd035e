"""JSON Lines read with one-line errors: the file, the line and what is wrong (mutation audit)."""

from __future__ import annotations

import pytest

from semrel.errors import FormatError
from semrel.formats.jsonl import json_text, optional_text, read_jsonl, with_field


def test_a_line_that_is_not_an_object_names_its_own_line(write):
    """A list or number on a line was reported one line too far, past blank lines."""
    path = write("rows.jsonl", '{"a": 1}\n\n[1, 2]\n{"b": 2}\n')
    with pytest.raises(FormatError, match=r"rows\.jsonl:3: expected a JSON object, found list") as caught:
        list(read_jsonl(path))
    assert caught.value.line == 3


@pytest.mark.parametrize("last, told", [
    ('{"query_id": "q", "chunk_id": "d", "P": 0.', True),  # cut short inside a number, an object left open
    ('{"query_id": "q", "chunk_id": "d', True),  # inside a string
    ('{"query_id": "q", "ids": ["a", "b"', True),  # inside a list
    ('{', True),  # the first line of an object written over several lines
    ('{"query_id": "q" "chunk_id": "d"}', False),  # complete, but wrong: no hint of a cut
    ('{"query_id": "q}", "x": 1,}', False),  # a brace inside a string does not count
])
def test_a_line_that_ends_inside_its_json_says_the_file_may_be_cut_short(write, last, told):
    """A judgments.jsonl whose copy stopped mid-line said only "invalid JSON (Expecting ',' delimiter)"."""
    path = write("rows.jsonl", '{"a": 1}\n' + last)
    with pytest.raises(FormatError, match=r"rows\.jsonl:2: invalid JSON") as caught:
        list(read_jsonl(path))
    hint = ("the line ends with an object, list or string left open: a file cut short by a copy or write that stopped, or a "
            "record spread over several lines, where JSON Lines holds one a line?")
    assert caught.value.hint == (hint if told else None)


def test_an_optional_text_field_absent_or_null_is_empty_and_a_number_its_digits():
    """A null title read as the text 'None' (and shown, searched, written back as such)."""
    assert [optional_text({"t": v}, "t", "x.jsonl", 1) for v in (None, 7, "a")] == ["", "7", "a"]
    assert optional_text({}, "t", "x.jsonl", 1) == ""


def test_json_output_writes_undefined_numbers_as_null():
    """An infinite z-score or a NaN inside a tuple stopped the JSON output with a ValueError, or wrote NaN, which is no JSON."""
    assert json_text({"z": float("inf"), "ci": (1.5, float("nan")), "n": [float("-inf")]}, indent=None) == \
        '{"z": null, "ci": [1.5, null], "n": [null]}'


@pytest.mark.parametrize("line, expected", [
    ('{"a": 1.50, "g": [], "e": 1E5}', '{"a": 1.50, "g": ["x#1", "é"], "e": 1E5}'),
    ('{"a":"caf\\u00e9","g":null}', '{"a":"caf\\u00e9","g":["x#1","é"]}'),
    ('{"a": {"g": 1}, "b": [{"}": "{"}]}', '{"a": {"g": 1}, "b": [{"}": "{"}], "g": ["x#1", "é"]}'),  # added at the end
    ('{}', '{"g":["x#1","é"]}'),
    ('{"g":[1],"g":[2]}', '{"g":[1],"g":["x#1","é"]}'),  # the value json keeps is the one replaced
])
def test_with_field_replaces_one_value_and_keeps_every_other_byte(line, expected):
    assert with_field(line, "g", ["x#1", "é"]) == expected
