"""The prefs_* measures on small cases worked out by hand from trec_eval's definitions (the replay of
its own test files is in test_trec_eval_suite.py), and bad preference files giving one clear line."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import message_lines
from semrel.errors import ValidationError
from semrel.evaluation.metrics import Options
from semrel.evaluation.prefs import evaluate_preferences
from semrel.formats.trec import read_preferences, read_run
from semrel.records import Preferences


def scores(write, prefs: str, run: str, measures: str = "all_prefs", from_qrels: bool = False, **options) -> dict:
    """{measure: value} of query q, the run given as doc ids best first (or 'doc:score' pairs)."""
    lines = []
    for rank, item in enumerate(run.split(), start=1):
        doc, _, score = item.partition(":")
        lines.append(f"q Q0 {doc} {rank} {score or 100 - rank} r\n")
    result = evaluate_preferences(read_preferences(write("p.txt", prefs), from_qrels), read_run(write("r.run", "".join(lines))),
                                  measures, Options(**options))
    return {m.name: result.per_query(m)["q"] for m in result.values}


ONE = "q g s a 2\nq g s b 1\n"  # one preference: a > b


def test_one_preference_either_way(write):
    kept = scores(write, ONE, "a b")
    assert kept["prefs_simp"] == kept["prefs_pair"] == kept["prefs_avgjg"] == kept["prefs_simp_ret"] == 1.0
    assert (kept["prefs_num_prefs_poss"], kept["prefs_num_prefs_ful"], kept["prefs_num_prefs_ful_ret"]) == (1, 1, 1)
    broken = scores(write, ONE, "b a")
    assert broken["prefs_simp"] == broken["prefs_pair"] == broken["prefs_simp_ret"] == 0.0
    assert (broken["prefs_num_prefs_poss"], broken["prefs_num_prefs_ful"]) == (1, 0)


def test_an_unretrieved_document_implies_the_preference(write):
    # a retrieved, b not: fulfilled by implication; no preference has both retrieved, so the _ret ones are 0
    only_a = scores(write, ONE, "a x")
    assert only_a["prefs_simp"] == only_a["prefs_simp_imp"] == 1.0 and only_a["prefs_simp_ret"] == 0.0
    assert (only_a["prefs_num_prefs_ful"], only_a["prefs_num_prefs_ful_ret"]) == (1, 0)
    # b retrieved, a not: failed
    assert scores(write, ONE, "b x")["prefs_simp"] == 0.0
    # neither: a failure for prefs_simp, not counted by the _imp measures
    neither = scores(write, ONE, "x")
    assert neither["prefs_num_prefs_poss"] == 1 and neither["prefs_simp"] == neither["prefs_simp_imp"] == 0.0


def test_ties_within_a_subgroup_state_no_preference(write):
    tied = "q g s a 2\nq g s b 2\nq g s c 1\n"  # a > c and b > c; a and b tie
    assert scores(write, tied, "a c b")["prefs_num_prefs_poss"] == 2
    assert scores(write, tied, "a c b")["prefs_simp"] == 0.5
    assert scores(write, tied, "b a c")["prefs_simp"] == 1.0


def test_subgroups_are_closed_under_transitivity(write):
    chain = "q g s1 a 2\nq g s1 b 1\nq g s2 b 2\nq g s2 c 1\n"  # a > b, b > c, so a > c
    assert scores(write, chain, "a b c")["prefs_num_prefs_poss"] == 3
    assert scores(write, chain, "a c b")["prefs_num_prefs_ful"] == 2  # a > b and a > c; b > c fails


def test_groups_that_disagree(write):
    # g1: a > b, a > c; g2: b > a. Run a b c: g1 fulfils 2 of 2, g2 0 of 1
    two = "q g1 s a 1\nq g1 s b 0\nq g1 s c 0\nq g2 s b 1\nq g2 s a 0\n"
    got = scores(write, two, "a b c")
    assert got["prefs_simp"] == pytest.approx(2 / 3)
    assert got["prefs_avgjg"] == pytest.approx((1 + 0) / 2)
    assert got["prefs_pair"] == pytest.approx((1 / 2 + 1) / 2)  # pair (a,b): 1 of its 2 preferences; (a,c): 1 of 1


def test_rnonrel_evens_out_the_non_relevant_documents(write):
    # R = 2 relevant, N = 1 non-relevant: a > x fulfilled, b > x not, and each retrieved relevant document
    # fulfils R - N = 1 more preference of R - N more per relevant one: (1 + 2) / (2 + 2)
    assert scores(write, "q g s a 1\nq g s b 1\nq g s x 0\n", "a x b")["prefs_avgjg_Rnonrel"] == 0.75
    # R = 1, N = 3: only the first non-relevant document (x, by rank) is kept; trec_eval then counts every
    # document of the group against it, the non-relevant ones (x itself included) as failures: 1 of 4
    many = "q g s a 1\nq g s x 0\nq g s y 0\nq g s z 0\n"
    assert scores(write, many, "a x y z")["prefs_avgjg_Rnonrel"] == 0.25
    assert scores(write, many, "x a y z")["prefs_avgjg_Rnonrel"] == 0.0


def test_ties_in_the_run_go_to_the_lower_doc_id_and_depth_cuts(write):
    later = "q g s b 2\nq g s a 1\n"  # b > a, but on equal scores a ranks first (doc ids ascending)
    assert scores(write, later, "a:1.0 b:1.0")["prefs_simp"] == 0.0
    cut = scores(write, ONE, "x a b", depth=2)  # b is past the depth: a > b holds by implication
    assert cut["prefs_simp"] == 1.0 and cut["prefs_num_prefs_ful_ret"] == 0


def test_qrels_read_as_preferences(write):
    qrels = "q 0 a 2\nq 0 b 1\nq 0 c 0\n"  # a > b > c: three preferences
    assert scores(write, qrels, "c b a", from_qrels=True)["prefs_num_prefs_poss"] == 3
    assert scores(write, qrels, "a b c", from_qrels=True)["prefs_simp"] == 1.0
    assert scores(write, qrels, "b a c", from_qrels=True)["prefs_simp"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("prefs,message", [
    ("q g s a 2\nq g s b\n", "p.txt:2: expected 5 columns"),
    ("q g s a 2\nq g s b x\n", "p.txt:2: column 5 is 'x', expected a number"),
    ("q g s a 2\nq g s a 1\n", "p.txt:2: query 'q', group 'g': doc 'a' is twice in subgroup 's'"),
    ("q g s1 a 2\nq g s1 b 0\nq g s2 b 1\nq g s2 c 0\n", "p.txt:3: query 'q', group 'g': doc 'b' is non-relevant (0)"),
    ("q g s1 a 2\nq g s1 b 1\nq g s2 b 2\nq g s2 a 1\n", "p.txt: query 'q', group 'g' prefers"),
])
def test_bad_preferences_give_one_line(cli, write, prefs, message):
    result = cli("eval", write("p.txt", prefs), write("r.run", "q Q0 a 1 1 r\n"), "-R", "prefs")
    assert result.exit_code == 1 and message in result.stderr, result.stderr
    assert len(message_lines(result.stderr)) == 1 and "Traceback" not in result.stderr


def test_measures_and_judgments_must_match(cli, write):
    prefs, run = write("p.txt", ONE), write("r.run", "q Q0 a 1 1 r\n")
    result = cli("eval", prefs, run, "-R", "prefs", "-m", "P@5")
    assert result.exit_code == 2 and "the measures are the prefs_* ones" in result.stderr
    result = cli("eval", prefs, run, "-R", "prefs", "-m", "prefs_simp,P@5,nDCG@10")
    assert result.exit_code == 2 and "num_q and runid; P@5 is not one of them" in result.stderr, result.stderr  # the first one
    assert cli("eval", prefs, write("t.run", "q Q0 a 1 1 mytag\n"), "-R", "prefs", "-m", "runid", "-f", "trec").stdout == \
        f"{'runid':<22}\tall\tmytag\n"
    result = cli("eval", write("q.txt", "q 0 a 1\n"), run, "-m", "prefs_simp")
    assert result.exit_code == 2 and "give -R prefs or -R qrels_prefs" in result.stderr
    shown = cli("eval", prefs, run, "-R", "prefs", "-f", "trec").stdout.splitlines()
    assert [line.split()[0] for line in shown[:3]] == ["runid", "num_q", "prefs_num_prefs_poss"]  # all_prefs by default


def test_rnonrel_ret_keeps_only_the_retrieved_lowest_level_documents(write):
    # levels: a, b (1) > x, y, z (0) > v, w (-1); v and w are not retrieved. R = 2 retrieved relevant < N = 3
    # retrieved non-relevant, so the lowest level keeps its first 2 documents (v, w), of which none is retrieved:
    # what is left are the 6 preferences of a, b over x, y, z, and x ranks above both: 4 of 6
    levels = "q g s a 1\nq g s b 1\nq g s x 0\nq g s y 0\nq g s z 0\nq g s v -1\nq g s w -1\n"
    assert scores(write, levels, "x a b y z")["prefs_avgjg_Rnonrel_ret"] == pytest.approx(4 / 6)


def test_rnonrel_drops_the_non_relevant_documents_past_the_first_r_in_doc_id_order(write):
    # subgroups: a > x, a > y; y > w (w, at -1, is neither relevant nor not), so a > w too. R = 1, N = 2, nothing
    # but a retrieved: the unretrieved documents go by doc id (w, x, y), x is kept and y dropped with a > y and y > w,
    # leaving a > x and a > w, both fulfilled by implication
    prefs = "q g s1 a 1\nq g s1 x 0\nq g s1 y 0\nq g s2 y 0\nq g s2 w -1\n"
    assert scores(write, prefs, "a")["prefs_avgjg_Rnonrel"] == 1.0


def test_across_subgroups_a_negative_value_is_neither_relevant_nor_not(write):
    # a > x, x > w, so a > w; only x is non-relevant (0): R = N = 1 and the three preferences count as they are,
    # x > w failed. Were w non-relevant too (N = 2 > R), w would be dropped and a > x alone would count.
    prefs = "q g s1 a 1\nq g s1 x 0\nq g s2 x 0\nq g s2 w -1\n"
    assert scores(write, prefs, "a w x")["prefs_avgjg_Rnonrel"] == pytest.approx(2 / 3)


def test_across_subgroups_a_document_keeps_the_value_of_its_last_subgroup_by_name(write):
    # a is 1 in s1 and -1 in s2 (given first): by subgroup name, s2's -1 is its value, so the group has no relevant
    # document and x, its one non-relevant document, is dropped: 0/0, which scores 0 (were a relevant: 1 of 1)
    prefs = "q g s2 a -1\nq g s1 a 1\nq g s1 x 0\n"
    assert scores(write, prefs, "a x")["prefs_avgjg_Rnonrel"] == 0.0


def test_groups_without_preferences_in_scope_count_in_the_average(write):
    # g1: a > b, both retrieved and fulfilled; g2: c > d, neither retrieved. prefs_avgjg_ret averages over both groups
    got = scores(write, ONE + "q g2 s c 1\nq g2 s d 0\n", "a b")
    assert got["prefs_avgjg_ret"] == 0.5 and got["prefs_avgjg"] == 0.5 and got["prefs_avgjg_imp"] == 0.5


def test_a_group_of_undefined_rnonrel_makes_the_query_score_0(write):
    # g1 scores 1 (a > b fulfilled, R = N = 1); g2 has no relevant document and one non-relevant: 0/0, and as in
    # trec_eval the sum over groups is then undefined, so the query scores 0 rather than 1/2
    assert scores(write, "q g1 s a 1\nq g1 s b 0\nq g2 s c 0\n", "a b")["prefs_avgjg_Rnonrel"] == 0.0


def test_a_query_the_run_lacks_is_missing_and_a_document_twice_is_refused(write, cli):
    prefs = read_preferences(write("p.txt", ONE + "q2 g s a 1\nq2 g s b 0\n"), False)
    result = evaluate_preferences(prefs, read_run(write("r.run", "q Q0 a 1 2 r\n")), "prefs_simp")
    assert result.missing_queries == ["q2"] and result.aggregate("prefs_simp") == 0.5
    twice = cli("eval", write("p.txt", ONE), write("r.run", "q Q0 a 1 3 r\nq Q0 b 2 2 r\nq Q0 a 3 1 r\n"), "-R", "prefs")
    assert twice.exit_code == 1 and "r.run:3: duplicate document in run for query 'q' and doc 'a'" in twice.stderr, twice.stderr


def test_preferences_built_in_python_name_the_bad_row(write):
    run = read_run(write("r.run", "q Q0 a 1 1 r\n"))
    twice = Preferences(["q"] * 3, ["g"] * 3, ["s"] * 3, ["a", "b", "a"], np.array([2.0, 1.0, 0.0]))
    with pytest.raises(ValidationError, match=r"^query 'q', group 'g': doc 'a' is twice in subgroup 's' \(row 3\)$"):
        evaluate_preferences(twice, run, "prefs_simp")
    both_ways = Preferences(["q"] * 4, ["g"] * 4, ["s1", "s1", "s2", "s2"], ["a", "b", "b", "a"], np.array([2.0, 1.0, 2.0, 1.0]))
    with pytest.raises(ValidationError, match=r"^preferences: query 'q', group 'g' prefers '(a|b)' to '(a|b)' and"):
        evaluate_preferences(both_ways, run, "prefs_simp")
