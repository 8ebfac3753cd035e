"""Adversarial collections scored beside pytrec_eval (or by hand where it lacks the measure): what they found."""

from __future__ import annotations

import warnings

import pytest

from semrel.errors import FormatError, UsageError
from semrel.evaluation.groups import evaluate_groups
from semrel.evaluation.measures import parse_measures
from semrel.evaluation.metrics import evaluate
from semrel.evaluation.zscores import read_zscores
from semrel.formats.trec import read_judgment_groups
from semrel.records import Qrels, Run


def test_rbp_of_a_query_with_no_grade_of_0_or_more_warns_of_nothing():
    """Its gain bounds are inf and -inf: rbp divided by their width (NaN) where it then kept the unscaled gain, and numpy's
    'invalid value encountered in divide' RuntimeWarning reached `semrel eval`'s stderr (a traceback under -W error)."""
    qrels = Qrels.from_dict({"neg": {"a": -1, "b": -2}, "q": {"a": 3, "b": 1}})
    run = Run.from_dict({"neg": {"a": 1.0, "x": 2.0}, "q": {"a": 2.0, "b": 1.0}})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (result,) = evaluate(qrels, run, parse_measures(["rbp"]))
    # trec_eval scales grades 0..3 into [0, 1]: a gains 1, b 1/3; p = 0.9
    assert result.per_query("rbp") == pytest.approx({"neg": 0.0, "q": 0.1 * (1 + 0.9 / 3)}, abs=1e-12)


def test_ir_measures_numret_with_rel_points_to_numrelret():
    """ir_measures' NumRelRet is NumRet(rel=1) (it prints it so); semrel's refusal of NumRet(rel=2) said '-l 2 with the
    measure named without rel=', i.e. NumRet, which counts every document retrieved (4 here, where ir_measures says 1)."""
    import ir_measures

    qrels = {"q": {"a": 2, "b": 1, "c": 0, "d": 1}}
    run = {"q": {"c": 5.0, "a": 4.0, "x": 3.0, "b": 2.0}}
    with pytest.raises(UsageError, match=r"NumRet\(rel=2\) counts the relevant documents retrieved: -m NumRelRet -l 2"):
        parse_measures(["NumRet(rel=2)"])
    expected = ir_measures.calc_aggregate([ir_measures.parse_measure("NumRet(rel=2)")], qrels, run)
    (result,) = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), parse_measures(["NumRelRet"]), rel_level=2)
    assert result.per_query("NumRelRet") == {"q": 1} and list(expected.values()) == [1.0]


def test_a_zscores_file_giving_one_query_and_measure_twice_is_refused(tmp_path):
    """`q P_5 0.1 0.2` then `q P_5 0.1 0.3`: semrel took the last line, unsaid (ZP_5 0.3333, where the first gives 0.5000);
    trec_eval takes whichever its sort leaves first."""
    path = tmp_path / "z.txt"
    path.write_text("q P_5 0.1 0.2\nq P_10 0 1\nq P_5 0.1 0.3\n")
    with pytest.raises(FormatError, match=r"z.txt:3: a second line for query 'q' and measure 'P_5' \(the first is line 1\)"):
        read_zscores(path)


def test_a_document_one_group_judges_twice_is_named_by_its_line(tmp_path):
    """-R qrels_jg: the error named no file and 'row 2' of the group's own judgments (the file's line 6 here), and its hint
    suggested `semrel eval -R qrels_jg`, the command given. The same document judged by two groups stays valid."""
    path = tmp_path / "jg.txt"
    path.write_text("# groups\nq g1 a 1\nq g2 a 0\n\nq g2 b 1\nq g1 a 0\n")
    with pytest.raises(FormatError, match=r"/jg.txt:6: duplicate judgment within one group for query 'q' and doc 'a' \(each document "
                                          r"may appear once per query\)$"):
        read_judgment_groups(path)
    path.write_text("q g1 a 1\nq g2 a 0\nq g2 b 1\n")
    result = evaluate_groups(read_judgment_groups(path), Run.from_dict({"q": {"a": 2.0, "b": 1.0}}), parse_measures(["map_avgjg"]))
    assert result.per_query("map_avgjg") == {"q": 0.75}  # g1: a at rank 1 (AP 1); g2: b at rank 2 (AP 0.5)
