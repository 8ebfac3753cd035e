"""Parts of the HTML report checked on their own, without the CLI: the warning lines' wording, the share of
judged pairs at each threshold, which runs are named as retrieved with the judge's model, the warnings a
labels manifest recorded and what the agreement tables say."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from report_helpers import ignore, top_warnings, warning_boxes
from semrel.analysis.compare import Reversal
from semrel.evaluation.measures import parse_measures
from semrel.formats.judgments import JudgmentColumns
from semrel.formats.manifest import write_manifest
from semrel.records import Judgment
from semrel.report import html
from semrel.report.html import ReportInputs, build_report


def reversal(ahead: str, significant: tuple[str, ...]) -> Reversal:
    [measure] = parse_measures(["RR"])
    return Reversal(measure, ahead, "b", (0.75, 0.5), (0.25, 0.625), significant)


def test_the_reversal_warning_names_the_qrels_that_found_the_difference_and_counts_the_pairs_not_shown():
    """The side that found a reversal significant named the other qrels, or 'and 0 more' followed three pairs."""
    said = html._reversal_warning([reversal("a", ("ref",)), reversal("c", ("test",)), reversal("d", ("ref", "test"))],
                                  "derived labels", "gold chunks", 2)
    assert said.startswith("the derived labels and the gold chunks order runs oppositely where one of them finds the difference "
                           "significant: on RR the gold chunks rank a above b (0.75 against 0.50), the derived labels b above a "
                           "(0.62 against 0.25; significant on the gold chunks); on RR the gold chunks rank c above b")
    assert "(0.62 against 0.25; significant on the derived labels); on RR" in said
    assert "significant on both). A comparison on the derived labels may be reversed" in said and "more" not in said
    more = html._reversal_warning([reversal(run, ("ref",)) for run in "acdef"], "derived labels", "gold chunks", 2)
    assert "on RR the gold chunks rank d above b" in more and "rank e above" not in more
    assert "significant on the gold chunks); and 2 more. A comparison" in more


def test_the_share_at_or_above_a_threshold_counts_scores_equal_to_it():
    """A score equal to the label threshold is labelled relevant; the table counted only scores above it."""
    judged = [Judgment("q", f"c{i}", 0.5, r, 0.5) for i, r in enumerate((0.25, 0.5, 0.5, 0.75))]
    section = html._score_section(JudgmentColumns.of(judged), None, "R", [0.5, 0.75], "the label thresholds")
    assert section["table"]["header"] == ["threshold", "judged pairs: share at or above"]
    assert section["table"]["rows"] == [["0.500", "0.750"], ["0.750", "0.250"]]
    assert section["counts"] == {"judged pairs": 4}


def test_only_runs_that_retrieved_by_vectors_of_the_judges_model_are_named(tmp_path):
    """A BM25 run whose manifest happens to name the judge's model (the option was given and unused) was said to be
    retrieved with it."""
    def run(name: str, params: dict) -> str:
        path = tmp_path / name
        path.write_text("q Q0 c 1 1 x\n")
        Path(f"{path}.manifest.json").write_text(json.dumps({"params": params}))
        return str(path)

    model = "all-MiniLM-L6-v2"
    assert html._own_model(run("dense.run", {"method": "dense", "model": model}), model)
    assert html._own_model(run("reranked.run", {"method": "bm25", "rerank": "dense", "model": model}), model)
    assert not html._own_model(run("bm25.run", {"method": "bm25", "model": model}), model)
    assert not html._own_model(run("other.run", {"method": "dense", "model": "another"}), model)


def test_warnings_the_labels_manifest_recorded_are_shown_escaped_at_the_top(tmp_path):
    """Without judgments the report has only the warnings `semrel label` recorded to show: they were left off the page
    (and markup in them would have been markup)."""
    qrels, run = tmp_path / "derived.qrels", tmp_path / "a.run"
    qrels.write_text("q1 0 c1 1\nq2 0 c2 0\n")
    run.write_text("q1 Q0 c1 1 2 a\nq2 Q0 c2 1 2 a\n")
    recorded = ["only 50% of the 2 gold chunks are labelled <b>relevant</b>", "1 of 2 queries has no pair labelled relevant"]
    Path(f"{qrels}.manifest.json").write_text(json.dumps({"params": {"on": "F", "thresholds": [0.6], "warnings": recorded}}))
    heard: list[str] = []
    page, _ = build_report(ReportInputs(qrels=str(qrels), runs=[str(run)], measures=["RR"]), heard.append)
    shown = warning_boxes(page)
    assert shown[:2] == ["only 50% of the 2 gold chunks are labelled &lt;b&gt;relevant&lt;/b&gt;",
                     "1 of 2 queries has no pair labelled relevant"]
    assert heard == recorded and len(shown) == 2  # one run is tested against none: no word of paired tests on 2 queries


def test_each_warning_box_says_in_words_that_it_is_a_warning(tmp_path):
    """A warning box was told from a note by its colour alone: read aloud by a screen reader, or printed in black and
    white, nothing said it was a warning."""
    qrels, run = tmp_path / "derived.qrels", tmp_path / "a.run"
    qrels.write_text("q1 0 c1 1\n")
    run.write_text("q1 Q0 c1 1 2 a\n")
    Path(f"{qrels}.manifest.json").write_text(json.dumps({"params": {"on": "F", "thresholds": [0.6], "warnings": ["a", "b"]}}))
    page, _ = build_report(ReportInputs(qrels=str(qrels), runs=[str(run)], measures=["RR"]), lambda message: None)
    assert page.count('<p class="warning"><strong>Warning:</strong> ') == page.count('class="warning"') == 2


def test_a_cliff_is_named_on_the_score_the_curves_swept():
    """Curves swept over p (their manifest) were said to be cut on the score the plots draw, R here."""
    points = [html.SensitivityPoint(t, run, "RR", v if t <= 0.6 else v / 3)
              for t in (0.58, 0.59, 0.6, 0.61, 0.62) for run, v in (("bm25", 0.6), ("rr", 0.7))]
    [said] = html._cliffs(ReportInputs(sensitivity=points, sensitivity_on="p", sensitivity_at=0.6), "R", [])
    assert said.startswith("the curves' chosen threshold (sensitivity --at) 0.6 on p sits on a cliff of the sensitivity curve: "
                           "RR of run 'bm25' moves "
                           "from 0.600 to 0.200 between p 0.6 and 0.61")


def test_the_cliff_is_judged_at_the_pages_labels_where_they_are_on_the_swept_score():
    """Curves judged at --at 0.9 beside labels at 0.6 on the same score warned of 0.9, a threshold no label on the page
    came from; the labels' own threshold is the one the page draws and the one to judge."""
    points = [html.SensitivityPoint(t, run, "RR", v if t <= 0.6 else v / 3)
              for t in (0.58, 0.59, 0.6, 0.61, 0.62, 0.9, 0.91) for run, v in (("bm25", 0.6), ("rr", 0.7))]
    curves = ReportInputs(sensitivity=points, sensitivity_on="p", sensitivity_at=0.9)
    assert html._cliffs(curves, "p", []) == []  # no labels on the page: judged at the curves' 0.9, on flat ground
    [said] = html._cliffs(curves, "p", [0.6])
    assert said.startswith("the label threshold 0.6 on p sits on a cliff")
    assert html._cliffs(curves, "R", [0.6]) == []  # labels on another score than the curves swept: the curves' 0.9


def test_a_kappa_that_cannot_be_computed_is_shown_as_not_available():
    """kappa is NaN where one side gives every pair one grade: the table said 'nan' rather than n/a."""
    agreement = {"labels": {"n": 4, "percent_agreement": 75.0, "kappa": float("nan"), "kappa_low": float("nan"),
                            "kappa_high": None, "labels": [0, 1], "confusion": [[3, 1], [0, 0]]}}
    section = html._agreement_section(agreement, None, ignore)
    assert dict(section["summary"])["Cohen's kappa"] == "n/a (95% bootstrap interval n/a to n/a)"
    assert dict(section["summary"])["agreement"] == "75.0%"
    assert dict(section["summary"])["pairs compared"] == "4"
    unlisted = html._agreement_section({**agreement, "unlisted_as_zero": True}, None, ignore)  # as `agree --unlisted-as-zero` says
    assert dict(unlisted["summary"])["pairs compared"] == "4 (a pair one side does not list counts as grade 0)"


def test_the_agreement_of_labels_fitted_to_reviewed_pairs_says_it_may_count_them(tmp_path):
    """After `semrel calibrate`, the page's kappa over every judged pair counted the reviewed pairs the labels were fitted to,
    and said nothing: 0.739 to 0.763 on PubMedQA where the pairs not reviewed stayed at 0.816. Said then in the agreement
    section alone, it was missed by a reader of the warnings at the top."""
    derived = tmp_path / "derived.qrels"
    derived.write_text("q1 0 c1 1\n")
    write_manifest(derived, params={"rule": "probability", "calibration": {"slope": 1.0, "shift": 0.0, "fit": "features", "pairs": 100}})
    agreement = {"labels": {"n": 4, "kappa": 0.5, "labels": [0, 1], "confusion": [[2, 0], [1, 1]]}, "test": str(derived)}
    in_sample = ("100 reviewed pairs: where they are among the pairs compared, the figure counts them in-sample (`semrel calibrate ... "
                 "--test QRELS` gives it on the others)")
    heard: list[str] = []
    page, _ = build_report(ReportInputs(agreement=agreement), heard.append)
    said = f"the agreement of the test (derived.qrels) with the reference qrels may be optimistic, as the labels were fitted to {in_sample}"
    assert heard == [said] and top_warnings(page) == [said]
    assert dict(html._agreement_section(agreement, None, ignore)["summary"])["labels fitted to"] == in_sample
    write_manifest(derived, params={"rule": "probability", "calibration": None})  # the shipped p: fitted to none of these
    page, _ = build_report(ReportInputs(agreement=agreement), heard.append)
    assert "labels fitted to" not in page and not top_warnings(page) and len(heard) == 1


def test_agreement_ranks_share_ties_and_flips_name_the_run_each_qrels_puts_first():
    """Tied runs were given different ranks, or a flipped pair was written with its runs the wrong way round."""
    agreement = {"labels": {"n": 4, "kappa": 0.5, "labels": [0, 1], "confusion": [[2, 0], [1, 1]]},
                 "rankings": [{"measure": "RR", "tau": 0.33, "ref": {"c": 0.25, "a": 0.5, "b": 0.5},
                               "test": {"c": 0.75, "a": 0.5, "b": 0.25}, "swapped": [["c", "a"], ["c", "b"]]}]}
    [ranking] = html._agreement_section(agreement, None, ignore)["rankings"]
    assert [(r["run"], r["ref_rank"], r["test_rank"]) for r in ranking["runs"]] == [("a", 1, 2), ("b", 1, 3), ("c", 3, 1)]
    assert ranking["flips"] == ["reference qrels rank a above c; test qrels rank c above a",
                                "reference qrels rank b above c; test qrels rank c above b",
                                "test qrels rank a above b; reference qrels tie them"]


def test_a_difference_the_derived_labels_erase_is_said_not_passed_over_as_no_change():
    """PubMedQA's Success@10: gold put dense (0.98) above bm25 (0.94), the derived labels tied them (0.94 each), and the
    page said 'No pair of runs changes order'."""
    agreement = {"labels": {"n": 4, "kappa": 0.5, "labels": [0, 1], "confusion": [[2, 0], [1, 1]]},
                 "rankings": [{"measure": "Success@10", "tau": float("nan"), "ref": {"bm25": 0.94, "dense": 0.98},
                               "test": {"bm25": 0.94, "dense": 0.94}, "swapped": []}]}
    [ranking] = html._agreement_section(agreement, None, ignore)["rankings"]
    assert ranking["flips"] == ["reference qrels rank dense above bm25; test qrels tie them"]


def test_thresholds_of_the_labels_rule_are_not_drawn_on_another_score():
    """--on R over labels cut on F drew F's thresholds on the R histogram, as if R had been cut there."""
    rule = html.ThresholdRule("F", (0.6,))
    assert html._drawn(ReportInputs(on="R"), rule) == ("R", [])
    assert html._drawn(ReportInputs(), rule) == ("F", [0.6])


def test_a_labels_manifest_that_no_longer_describes_the_qrels_is_said_to_be_stale(tmp_path):
    """Qrels edited after `semrel label` wrote them were said to have no manifest at all."""
    qrels = tmp_path / "derived.qrels"
    qrels.write_text("q1 0 c1 1\n")
    Path(f"{qrels}.manifest.json").write_text(json.dumps({"params": {"on": "F", "thresholds": [0.6]},
                                                          "output_digest": {"bytes": 999}}))
    assert html._label_rule_text(str(qrels), None, None) == f"not recorded: {qrels} changed since its manifest was written"


def test_the_sensitivity_caption_gives_the_swept_range_low_to_high():
    """The caption's range of thresholds ran high to low, or counted the rows rather than the thresholds swept."""
    points = [html.SensitivityPoint(t, run, "RR", 0.5) for t in (0.7, 0.5, 0.6) for run in ("a", "b")]
    section = html._sensitivity_section(points, [0.6], lambda message: None)
    assert (section["range"], section["thresholds"], section["points"]) == ("0.5 to 0.7", 3, 6)


def test_the_sensitivity_caption_says_graded_labels_lie_on_no_binary_curve():
    """With graded labels the page marked three grade cuts on curves of binary labels and said nothing, so nDCG at 0.38
    (the binary labels') was read as the graded nDCG the metric tables show beside it."""
    points = [html.SensitivityPoint(t, run, "nDCG@10", 0.4 + t / 2) for t in (0.1, 0.4, 0.7) for run in ("a", "b")]
    assert html._sensitivity_section(points, [0.19, 0.38, 0.69], lambda message: None)["graded"]
    assert not html._sensitivity_section(points, [0.38], lambda message: None)["graded"]
    template = (Path(__file__).parents[2] / "templates" / "report.html.j2").read_text()
    assert "{% if s.sensitivity.graded %} Each curve labels a pair relevant or not at one threshold" in template


def test_a_tau_is_said_to_be_a_tie_only_where_both_qrels_tie_every_run():
    """Runs tied under the reference qrels alone were said to tie under both, hiding that the test qrels order them."""
    agreement = {"labels": {"n": 4, "kappa": 0.5, "labels": [0, 1], "confusion": [[2, 0], [1, 1]]},
                 "rankings": [{"measure": "RR", "tau": None, "ref": {"a": 0.5, "b": 0.5}, "test": {"a": 0.75, "b": 0.25}}]}
    [ranking] = html._agreement_section(agreement, None, ignore)["rankings"]
    assert ranking["tau"] == "n/a (under the reference qrels every run has the same value, so none ranks above another)"


def test_a_tau_of_fewer_than_two_runs_says_why_it_is_not_available():
    """The tau of one run (or of runs only one of which has a value under both qrels) was a bare 'n/a'."""
    agreement = {"labels": {"n": 4, "kappa": 0.5, "labels": [0, 1], "confusion": [[2, 0], [1, 1]]},
                 "rankings": [{"measure": "RR", "tau": None, "ref": {"a": 0.5, "b": None}, "test": {"a": 0.75, "b": 0.25}}]}
    [ranking] = html._agreement_section(agreement, None, ignore)["rankings"]
    assert ranking["tau"] == "n/a (only 1 run has a value under both, where an order needs two)"


def test_scores_of_old_judgments_without_p_are_drawn_on_r(tmp_path):
    """--on p over judgments written before semrel computed p drew their missing p (None) and failed."""
    judgments = tmp_path / "judgments.jsonl"
    judgments.write_text("".join(json.dumps({"query_id": "q", "chunk_id": f"c{i}", "P": 0.5, "R": r, "F": 0.5}) + "\n"
                                 for i, r in enumerate((0.25, 0.75))))
    page, _ = build_report(ReportInputs(judgments=str(judgments), on="p"), lambda message: None)
    assert "none drawn (no label thresholds on this score)" in page


def cliff_points() -> list[html.SensitivityPoint]:
    """Curves flat to 0.6 that drop to a third above it: 0.6 sits on a cliff."""
    return [html.SensitivityPoint(t, run, "RR", v if t <= 0.6 else v / 3)
            for t in (0.58, 0.59, 0.6, 0.61, 0.62) for run, v in (("bm25", 0.6), ("rr", 0.7))]


def test_a_cliff_is_judged_at_the_one_label_threshold_alone():
    """Without the curves' own threshold, a single label threshold is the one judged; of several (grades) none is,
    not the last of them."""
    inputs = ReportInputs(sensitivity=cliff_points())
    [said] = html._cliffs(inputs, "R", [0.6])
    assert said.startswith("the label threshold 0.6 on R sits on a cliff of the sensitivity curve")
    assert html._cliffs(inputs, "R", [0.5, 0.6]) == []


def test_a_cliff_at_a_threshold_given_to_report_is_not_called_the_label_threshold(tmp_path):
    """`report --threshold 0.6` over labels made at 0.5 (their manifest) called 0.6 "the label threshold"; at the labels'
    own 0.5 given again it still is."""
    qrels, run = tmp_path / "derived.qrels", tmp_path / "a.run"
    qrels.write_text("q1 0 c1 1\nq2 0 c2 0\n")
    run.write_text("q1 Q0 c1 1 2 a\nq2 Q0 c2 1 2 a\n")
    Path(f"{qrels}.manifest.json").write_text(json.dumps({"params": {"on": "R", "thresholds": [0.5]}}))
    points = [html.SensitivityPoint(t, r, "RR", v if t <= 0.6 else v / 3)
              for t in (0.5, 0.55, 0.58, 0.59, 0.6, 0.61, 0.62) for r, v in (("bm25", 0.6), ("rr", 0.7))]
    inputs = ReportInputs(qrels=str(qrels), runs=[str(run)], measures=["RR"], sensitivity=points, sensitivity_on="R")
    heard: list[str] = []
    build_report(replace(inputs, thresholds=(0.6,)), heard.append)
    [said] = [m for m in heard if "sits on a cliff" in m]
    assert said.startswith("the threshold given (--threshold) 0.6 on R sits on a cliff of the sensitivity curve: RR of run 'bm25'")
    assert html._cliffs(inputs, "R", [0.6], labels=True)[0].startswith("the label threshold 0.6 on R sits on a cliff")


def test_curves_with_holes_are_not_judged_for_cliffs():
    """A run missing a threshold's value, far from the cut, leaves curves with a hole: no cliff is judged on them."""
    points = [*cliff_points(), html.SensitivityPoint(0.9, "bm25", "RR", 0.2)]  # rr has no value at 0.9
    assert html._cliffs(ReportInputs(sensitivity=points[:-1], sensitivity_at=0.6), "R", [])  # whole, a cliff
    assert html._cliffs(ReportInputs(sensitivity=points, sensitivity_at=0.6), "R", []) == []


def test_the_share_at_or_above_is_counted_apart_for_gold_and_other_judged_pairs():
    """With a golden set the judged pairs split into its gold chunks and the rest, each with its own share."""
    from semrel.records import GoldenItem

    judged = [Judgment("q", f"c{i}", 0.5, r, 0.5) for i, r in enumerate((0.8, 0.6, 0.3, 0.2, 0.7))]
    golden = [GoldenItem("q", "what?", ("it",), ("c0", "c1"))]
    section = html._score_section(JudgmentColumns.of(judged), golden, "R", [0.5], "the label thresholds")
    assert section["table"]["header"] == ["threshold", "gold: share at or above", "not gold: share at or above"]
    assert section["table"]["rows"] == [["0.500", "1.000", "0.333"]]
    assert section["counts"] == {"gold": 2, "not gold": 3}


def test_the_confusion_totals_are_per_column_and_kappa_names_its_weights():
    """The bottom row sums each column (the test qrels' grades), not each row; weighted kappa says its weights."""
    agreement = {"labels": {"n": 4, "kappa": 0.5, "weights": "linear", "labels": [0, 1], "confusion": [[2, 0], [1, 1]]}}
    section = html._agreement_section(agreement, None, ignore)
    assert (section["confusion"]["totals"], section["confusion"]["n"]) == ([3, 1], 4)
    assert [row["total"] for row in section["confusion"]["rows"]] == [2, 2]
    assert "Cohen's kappa (linear weights)" in dict(section["summary"])


def test_the_report_lists_as_many_gained_and_lost_queries_as_lift_does(tmp_path, cli):
    """`lift --top` defaulted to 5 and `report --top` to 10: the report listed more queries than lift.txt beside it."""
    qrels, base, reranked = tmp_path / "q.qrels", tmp_path / "base.run", tmp_path / "reranked.run"
    queries = [f"q{i:02d}" for i in range(12)]
    qrels.write_text("".join(f"{q} 0 hit 1\n" for q in queries))
    base.write_text("".join(f"{q} Q0 miss 1 2 b\n{q} Q0 hit 2 1 b\n" for q in queries))  # every query gains under the rerank
    reranked.write_text("".join(f"{q} Q0 hit 1 2 r\n{q} Q0 miss 2 1 r\n" for q in queries))
    page, _ = build_report(ReportInputs(qrels=str(qrels), runs=[str(base), str(reranked)], measures=["RR"], base=str(base),
                                        reranked=str(reranked)), lambda message: None)
    listed = json.loads(cli("lift", qrels, "--base", base, "--reranked", reranked, "-m", "RR", "-f", "json").stdout)
    assert page.count("<td>gained</td>") == len(listed["gained"]) == 5
