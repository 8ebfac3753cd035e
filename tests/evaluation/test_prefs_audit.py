"""Mutation audit of evaluation/prefs.py and formats/columns.py: behaviours the other tests left unpinned (each test
names the mutant ids, F.. prefs, K.. columns, that it kills); values worked out by hand from the rules in prefs.py. Those
of *_Rnonrel (F17, F30, F31) are also what a trec_eval built from NIST's source prints for the same files."""

from __future__ import annotations

import pytest

from helpers import message_lines
from semrel.evaluation.metrics import Options
from semrel.evaluation.prefs import evaluate_preferences
from semrel.formats.trec import read_preferences, read_run


def scores(write, prefs: str, run: str, measures: str = "all_prefs", from_qrels: bool = False, **options) -> dict:
    """{measure: value} of query q, the run given as doc ids best first."""
    lines = "".join(f"q Q0 {doc} {rank} {100 - rank} r\n" for rank, doc in enumerate(run.split(), start=1))
    result = evaluate_preferences(read_preferences(write("p.txt", prefs), from_qrels), read_run(write("r.run", lines)),
                                  measures, Options(**options))
    return {m.name: result.per_query(m)["q"] for m in result.values}


def test_transitivity_closes_chains_longer_than_two(write):
    # F9: a > b > c > d > e, one link per subgroup: the closure holds all 10 pairs (one squaring finds only 7)
    chain = "".join(f"q g s{i} {hi} 2\nq g s{i} {lo} 1\n" for i, (hi, lo) in enumerate(["ab", "bc", "cd", "de"]))
    got = scores(write, chain, "a b c d e")
    assert (got["prefs_num_prefs_poss"], got["prefs_num_prefs_ful"]) == (10, 10)


def test_in_a_group_of_levels_a_negative_level_counts_as_non_relevant(write):
    # F17: one subgroup, a (1) over x and y (-1): R = 1 < N = 2, so the lowest level keeps its first document (x, ranked
    # first) and every document is counted against it, none fulfilled: 0 of 3 (were -1 not non-relevant: (1 + 1) / (2 + 1))
    got = scores(write, "q g s a 1\nq g s x -1\nq g s y -1\n", "x a y")
    assert (got["prefs_avgjg_Rnonrel"], got["prefs_avgjg_Rnonrel_ret"], got["prefs_simp"]) == (0.0, 0.0, 0.5)


def test_rnonrel_ret_leaves_out_preferences_among_upper_levels_with_an_unretrieved_document(write):
    # F30: levels a (2) > b (1) > x, y, z (0); b is not retrieved, so R = 1 retrieved relevant < N = 3: x alone is kept,
    # a > b (b unretrieved) is out of scope, and each of the 4 retrieved documents is counted against x: a wins, 1 of 4
    # (counting a > b too would give 2 of 5)
    got = scores(write, "q g s a 2\nq g s b 1\nq g s x 0\nq g s y 0\nq g s z 0\n", "a x y z")
    assert got["prefs_avgjg_Rnonrel_ret"] == 0.25
    assert got["prefs_avgjg_Rnonrel"] == pytest.approx(4 / 11)


def test_rnonrel_counts_preferences_between_unretrieved_upper_levels_as_failed(write):
    # F31: levels a (3) > b (2) > x, y, z (0), only x y z retrieved: R = 2 < N = 3, x and y kept. a > b is judged but,
    # neither being retrieved, not fulfilled; x wins against y: 1 of 1 + 5 * 2 (2 of 11 were a > b fulfilled)
    got = scores(write, "q g s a 3\nq g s b 2\nq g s x 0\nq g s y 0\nq g s z 0\n", "x y z")
    assert got["prefs_avgjg_Rnonrel"] == pytest.approx(1 / 11)


def test_of_two_bad_groups_the_first_by_name_is_named(cli, write):
    # F50: groups are checked in name order (g1 before g2), whatever the file's order
    prefs = write("p.txt", "q g2 s a 2\nq g2 s a 1\nq g1 s b 2\nq g1 s b 1\n")
    result = cli("eval", prefs, write("r.run", "q Q0 a 1 1 r\n"), "-R", "prefs")
    assert result.exit_code == 1 and "p.txt:4: query 'q', group 'g1': doc 'b' is twice in subgroup 's'" in result.stderr, result.stderr
    assert len(message_lines(result.stderr)) == 1 and "Traceback" not in result.stderr


def test_a_bad_preference_line_is_named_past_comments_and_blank_lines(cli, write):
    # F55: the line number counts the comment and blank lines before it (not the row among the data lines)
    prefs = write("p.txt", "# judged by two people\n\nq g s a 2\nq g s a 1\n")
    result = cli("eval", prefs, write("r.run", "q Q0 a 1 1 r\n"), "-R", "prefs")
    assert result.exit_code == 1 and "p.txt:4: query 'q', group 'g': doc 'a' is twice in subgroup 's'" in result.stderr, result.stderr


def test_a_last_line_ending_in_a_blank_without_a_newline_is_read(write):
    # K9: 'q 0 d 1 ' at the very end of the file (no newline after it): the blank is no fifth column
    prefs = read_preferences(write("q.txt", "q 0 a 2\nq 0 b 1 "), True)
    assert list(prefs.doc_ids) == ["a", "b"] and list(prefs.values) == [2.0, 1.0]
