"""The library names its parameters (`size=`, `format='trec'`); the CLI shows the options a user typed
(`--size`, `--format trec`), and leaves alone text that only looks like a parameter (a path holding '=')."""

from __future__ import annotations

import pytest

from semrel.cli.base import in_flags
from semrel.cli.golden import golden_group


@pytest.mark.parametrize(("message", "shown"), [
    ("size= does not apply to pubmedqa: each context is one chunk", "--size does not apply to pubmedqa: each context is one chunk"),
    ("format='trec' needs qrels=", "--format trec needs --qrels"),
    ("threshold=5.0: out of range", "--threshold 5.0: out of range"),
    ("doc_qrels=all-chunks; see docs", "--doc-qrels all-chunks; see docs"),
    # a folder named size=1 is a path: the warning printed '--size 1/corpus.jsonl'
    ("judged documents not in size=1/corpus.jsonl or without text: 3", "judged documents not in size=1/corpus.jsonl or without text: 3"),
    ("unknown=3 stays", "unknown=3 stays"),
])
def test_parameters_become_the_options_typed(message, shown):
    assert in_flags(message, golden_group.get_command(None, "import")) == shown


def test_a_parameter_named_as_its_option_is_shown_as_that_option():
    """judge's --sample is the parameter sample_size; the library's sample= was printed as it was."""
    from semrel.cli.judge import judge_command

    assert in_flags("give limit= N (the first N queries) or sample= N (N at random), not both", judge_command) == \
        "give --limit N (the first N queries) or --sample N (N at random), not both"



def test_a_flag_set_true_is_shown_as_the_flag_alone():
    """The comparison library says all_pairs=True; `semrel report --baseline X --all-pairs` printed '--all-pairs True'."""
    from semrel.cli.report import report_command

    assert in_flags("give baseline= or all_pairs=True, not both", report_command) == "give --baseline or --all-pairs, not both"
    assert in_flags("unknown=True stays", report_command) == "unknown=True stays"


def test_a_parameter_set_false_is_shown_as_the_option_that_turns_it_off():
    """retrieve's cache=False is --no-cache (it printed '--cache False'); where the command has no such option the
    parameter stays as the library spelled it."""
    from semrel.cli.fill import fill_command
    from semrel.cli.pool import pool_command
    from semrel.cli.retrieve import retrieve_command

    assert in_flags("pass cache='DIR' or cache=False", retrieve_command) == "pass --cache DIR or --no-cache"
    assert in_flags("pass cache='DIR' or cache=False", fill_command) == "pass --cache DIR or --no-cache"  # before 2026-12-07 it had none
    assert in_flags("pass cache='DIR' or cache=False", pool_command) == "pass cache='DIR' or cache=False"
    assert in_flags("unknown=False stays", retrieve_command) == "unknown=False stays"
