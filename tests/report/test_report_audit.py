"""Mutation audit of the HTML report (semrel.report, templates/report.html.j2, `semrel report`): what the page says
that the other report tests left unpinned. Each test writes real inputs, writes the real page (to disk, or as
build_report's text) and reads it with html.parser or exact fragments."""

from __future__ import annotations

import contextlib
import json
import re
import warnings
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markupsafe import escape

from report_helpers import HOSTILE, ignore, report_files, top_warnings
from review_helpers import reviewed_by_two
from semrel.errors import FormatError, UsageError
from semrel.formats.judgments import JudgmentColumns
from semrel.judging import labels
from semrel.judging.labels import CUT, ProbabilityRule, ThresholdRule
from semrel.records import GoldenItem, Judgment
from semrel.report import html, plots
from semrel.report.html import ReportInputs, SensitivityPoint, build_report, read_sensitivity


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return report_files(tmp_path)


class Page(HTMLParser):
    """The page as parsed: every start tag's name, the text of <title> and <h1>, and the tables of each section as
    rows of cell texts (character references resolved)."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: dict[str, str] = {}
        self.tables: dict[str, list[list[list[str]]]] = {}
        self.section = ""
        self.at: str | None = None
        self.cell: list[str] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "section":
            self.section = dict(attrs).get("id") or ""
        elif tag == "table":
            self.tables.setdefault(self.section, []).append([])
        elif tag == "tr":
            self.tables[self.section][-1].append([])
        elif tag in ("td", "th"):
            self.cell = []
        elif tag in ("title", "h1", "pre"):
            self.at = tag
            self.text[tag] = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.tables[self.section][-1][-1].append("".join(self.cell))
            self.cell = None
        elif tag == self.at:
            self.at = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)
        if self.at:
            self.text[self.at] += data


def write_page(cli, tmp_path: Path, *args: str) -> str:
    output = tmp_path / "audit.html"
    result = cli("report", *args, "-o", str(output))
    assert result.exit_code == 0, result.stderr
    return output.read_text(encoding="utf-8")


def section(page: str, name: str) -> str:
    start = page.index(f'<section id="{name}"')
    return page[start:page.index("</section>", start)]


def put(folder: Path, name: str, text: str) -> str:
    (folder / name).write_text(text, encoding="utf-8")
    return str(folder / name)


# --- escaping -----------------------------------------------------------------------------------------------------

def test_the_title_is_text_in_the_head_and_the_heading(cli, files, tmp_path):
    """Both <title> and <h1> carry --title; markup in it must stay text in each (the other tests looked at one)."""
    page = write_page(cli, tmp_path, "--golden", files["golden"], "--title", "My <b>title</b> & more")
    parsed = Page(page)
    assert parsed.text["title"] == parsed.text["h1"] == "My <b>title</b> & more"
    assert "b" not in parsed.tags and page.count("My &lt;b&gt;title&lt;/b&gt; &amp; more") == 2


def test_all_judge_settings_are_shown_as_escaped_json(cli, files, tmp_path):
    """The judgments' manifest, whole, under the signature: text as JSON, markup in it as text."""
    page = write_page(cli, tmp_path, files["qrels"], files["base"], "--judgments", files["judgments"], "-m", "RR")
    parsed = Page(page)
    assert "<details><summary>All judge settings</summary><pre>" in section(page, "signature")
    assert json.loads(parsed.text["pre"]) == json.loads(Path(f"{files['judgments']}.manifest.json").read_text())["params"]
    assert "script" not in parsed.tags
    # no judge recorded anywhere: no settings to show
    assert "All judge settings" not in write_page(cli, tmp_path, files["qrels"], files["base"], "-m", "RR")


def test_run_names_on_the_judges_own_model_are_all_named_and_escaped(cli, files, tmp_path):
    """Every run on the judge's model is named, hybrid runs included, and a run's name stays text."""
    for run, method in ((files["base"], "hybrid"), (files["reranked"], "dense")):
        Path(f"{run}.manifest.json").write_text(json.dumps({"params": {"method": method, "model": "all-MiniLM-L6-v2"}}))
    page = write_page(cli, tmp_path, files["qrels"], files["base"], files["reranked"], "--judgments", files["judgments"],
                      "-m", "RR", "--permutations", "200")
    [note] = re.findall(r'<p class="muted own-model">([^<]*)</p>', page)
    assert note.startswith("bm25, &lt;i&gt;rr retrieved with the judge&#39;s own model (all-MiniLM-L6-v2)")


# --- the signature and how qrels are named ------------------------------------------------------------------------

def test_the_label_rule_counts_the_pairs_its_fallback_labelled():
    """The probability rule's pairs without p (or without features, for a refit) name the fallback that labelled them;
    none counted, none named."""
    rule = ProbabilityRule()
    assert html._label_rule_text("d.qrels", rule, {"fallback": {"pairs": 3}}) == f"p >= {CUT:g}; 3 pairs without p: R >= 0.7"
    assert html._label_rule_text("d.qrels", rule, {"fallback": {"pairs": 1}}) == f"p >= {CUT:g}; 1 pair without p: R >= 0.7"
    assert html._label_rule_text("d.qrels", rule, {"fallback": {"pairs": 0}}) == f"p >= {CUT:g}"
    refit = ProbabilityRule(cut=0.6, calibration={"fit": "features"}, refit=(0.5, -1.0, 0, 0, 0, 0, 0, 0, 0))
    assert html._label_rule_text("d.qrels", refit, {"fallback": {"pairs": 2}}).endswith("; 2 pairs without features: R >= 0.7")


def test_qrels_are_named_gold_by_their_manifest_or_as_a_golden_set_and_else_by_their_file(tmp_path):
    """A golden set given as qrels (.jsonl or .jsonl.gz) or qrels from `golden qrels` are the gold chunks, whose rule
    is none; other qrels go by their file's name."""
    gz = put(tmp_path, "golden.jsonl.gz", "")
    assert (html.describe_qrels(gz).key, html.describe_qrels(gz).label) == ("gold", "gold chunks")
    made = put(tmp_path, "made.qrels", "q 0 c 1\n")
    Path(f"{made}.manifest.json").write_text(json.dumps({"params": {"from": "golden set"}}))
    assert html.describe_qrels(made) == html.QrelsKind("gold", "gold chunks", "made.qrels: the golden set's gold chunks")
    assert html._label_rule_text(made, None, None) == f"none: {made} holds the golden set's gold chunks"
    plain = put(tmp_path, "mine.qrels", "q 0 c 1\n")
    assert html.describe_qrels(plain) == html.QrelsKind("qrels", "mine.qrels", "mine.qrels: qrels")


def test_qrels_of_unknown_origin_beside_gold_qrels_are_the_derived_labels(cli, tmp_path):
    """Two qrels files without manifests: the first is the derived labels, the second the gold chunks, each with its
    own count of queries, and each legend says which qrels it is of."""
    derived = put(tmp_path, "mine.qrels", "".join(f"q{i} 0 c{i} 1\n" for i in range(6)))
    gold = put(tmp_path, "other.qrels", "".join(f"q{i} 0 c{i} 1\n" for i in range(5)))
    a = put(tmp_path, "a.run", "".join(f"q{i} Q0 c{i} 1 2 a\n" for i in range(6)))
    b = put(tmp_path, "b.run", "".join(f"q{i} Q0 x{i} 1 2 b\nq{i} Q0 c{i} 2 1 b\n" for i in range(6)))
    page = write_page(cli, tmp_path, derived, a, b, "--gold-qrels", gold, "-m", "RR", "--permutations", "200")
    metrics = section(page, "metrics")
    assert ("Scored on <strong>derived labels</strong> (mine.qrels: qrels; 6 queries) and on <strong>gold chunks</strong> "
            "(other.qrels: qrels; 5 queries).") in metrics
    assert '<th class="qrels derived">derived</th><th class="qrels gold">gold</th>' in metrics
    assert re.findall(r'<p class="muted">(derived|gold): Marks: ', metrics) == ["derived", "gold"]
    single = section(write_page(cli, tmp_path, derived, a, b, "-m", "RR", "--permutations", "200"), "metrics")
    assert "Scored on <strong>mine.qrels</strong> (mine.qrels: qrels; 6 queries)." in single
    assert '<p class="muted">Marks: ' in single


def test_one_run_gets_no_significance_legend_nor_empty_tests(cli, tmp_path):
    """One run is tested against nothing: the page said its marks were 'tested against the baseline' and held two empty
    tables of paired tests (MS MARCO's bm25 alone)."""
    qrels = put(tmp_path, "q.qrels", "".join(f"q{i} 0 c{i} 1\n" for i in range(4)))
    a = put(tmp_path, "a.run", "".join(f"q{i} Q0 c{i} 1 2 a\n" for i in range(4)))
    metrics = section(write_page(cli, tmp_path, qrels, a, "--gold-qrels", qrels, "-m", "RR"), "metrics")
    assert "Marks:" not in metrics and "Paired tests" not in metrics and "<td>a</td><td>a</td>" in metrics


def test_the_manifest_lists_the_gold_qrels_among_the_files_read(cli, files, tmp_path):
    output = tmp_path / "r.html"
    assert cli("report", files["qrels"], files["base"], "--gold-qrels", files["gold"], "-m", "RR", "-o", str(output)).exit_code == 0
    read = {i["path"] for i in json.loads(Path(f"{output}.manifest.json").read_text())["inputs"]}
    assert read == {files["qrels"], files["base"], files["gold"], f"{files['qrels']}.manifest.json", f"{files['gold']}.manifest.json"}


def test_a_corpus_from_stdin_checks_the_runs_once_though_they_are_scored_on_two_qrels(cli, files, tmp_path):
    """Without --golden the corpus is read where the runs are checked: once, with the first qrels; a second read of
    stdin would find it empty and call every chunk unlisted."""
    output = tmp_path / "r.html"
    result = cli("report", files["qrels"], files["base"], "--gold-qrels", files["gold"], "--corpus", "-", "-m", "RR",
                 "-o", str(output), input=Path(files["corpus"]).read_text())
    assert result.exit_code == 0, result.stderr
    assert "does not list" not in result.stderr and not top_warnings(output.read_text(encoding="utf-8"))


# --- options other than the labels' rule ---------------------------------------------------------------------------

def test_options_are_the_labels_rule_only_with_every_threshold_alike():
    """--grades that begin with the rule's threshold, or share one of its cuts, are not the rule; the refit's p is
    said to be other than the judge's own p, which the plots show."""
    qrels = "d.qrels"
    rule = ThresholdRule("F", (0.6,))
    assert html._options_differ(ReportInputs(qrels=qrels, thresholds=(0.6,)), rule, "F", [0.6]) is None
    said = html._options_differ(ReportInputs(qrels=qrels, thresholds=(0.6, 0.7)), rule, "F", [0.6, 0.7])
    assert said and "not by F at grade cuts 0.6, 0.7 (--on/--threshold/--grades)" in said
    graded = ThresholdRule("F", (0.5, 0.7))
    assert html._options_differ(ReportInputs(qrels=qrels, thresholds=(0.5, 0.8)), graded, "F", [0.5, 0.8])
    refit = ProbabilityRule(cut=0.6, calibration={"fit": "features"}, refit=(0.5, -1.0, 0, 0, 0, 0, 0, 0, 0))
    said = html._options_differ(ReportInputs(qrels=qrels, on="p", thresholds=(0.6,)), refit, "p", [0.6])
    assert said and "not by p >= 0.6 on the judge's own p (--on/--threshold/--grades)" in said
    said = html._options_differ(ReportInputs(qrels=qrels, on="R", thresholds=(0.7,)), rule, "R", [0.7])
    assert said and "not by R >= 0.7 (--on/--threshold/--grades)" in said


# --- judge scores --------------------------------------------------------------------------------------------------

def test_a_group_with_no_judged_pair_has_no_share_rather_than_zero():
    """Judgments of no gold chunk: the gold column is blank (no pairs to count), not a share of 0.000."""
    judged = JudgmentColumns.of([Judgment("q", f"x{i}", 0.5, r, 0.5) for i, r in enumerate((0.25, 0.75))])
    section_ = html._score_section(judged, [GoldenItem("q", "what?", ("it",), ("c0",))], "R", [0.5], "the label thresholds")
    assert section_["table"]["rows"] == [["0.500", "", "0.500"]] and section_["counts"] == {"gold": 0, "not gold": 2}


def test_the_pairs_of_each_group_are_counted_in_one_sentence(cli, files, tmp_path):
    page = write_page(cli, tmp_path, files["qrels"], "--judgments", files["judgments"], "--golden", files["golden"])
    assert "Distribution of the judge's scores (gold: 8 pairs; not gold: 8 pairs); dashed lines: the label thresholds." in page


# --- golden set ----------------------------------------------------------------------------------------------------

def test_the_golden_set_shows_counts_whole_and_lengths_to_one_place(cli, files, tmp_path):
    page = write_page(cli, tmp_path, "--golden", files["golden"], "--corpus", files["corpus"])
    counts, lengths = Page(page).tables["golden"]
    assert counts[0] == ["count", "value"] and ["corpus chunks", "16"] in counts and ["queries", "8"] in counts
    assert lengths[0] == ["length", "count", "min", "p25", "median", "mean", "p75", "max"]
    assert ["query words", "8", "3.0", "3.0", "3.0", "3.0", "3.0", "3.0"] in lengths
    assert ["chunks per document", "16", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0"] in lengths


def test_a_column_of_numbers_with_blanks_is_still_a_column_of_numbers(tmp_path):
    """A golden set without reference answers has no answer lengths: the blanks must not take the class that aligns
    numbers from the column's other cells."""
    golden = put(tmp_path, "g.jsonl", "".join(json.dumps({"query_id": f"q{i}", "query": "what is it", "gold_chunk_ids": [f"c{i}"]})
                                              + "\n" for i in range(2)))
    page, _ = build_report(ReportInputs(golden=golden), lambda message: None)
    assert ('<tr><td>query words</td><td class="num">2</td>' + '<td class="num">3.0</td>' * 6 + "</tr>") in page
    assert ('<tr><td>answer words</td><td class="num">0</td>' + '<td class="num"></td>' * 6 + "</tr>") in page


def test_notes_on_the_golden_set_are_shown_under_its_counts(monkeypatch, files, tmp_path):
    """golden_stats' notes (gold found by word pairs alone) are on the page, as text."""
    real = html.golden_stats
    monkeypatch.setattr(html, "golden_stats", lambda *a: {**real(*a), "notes": [f"a note {HOSTILE}"]})
    page, _ = build_report(ReportInputs(golden=files["golden"]), lambda message: None)
    assert '<p class="muted">a note &lt;script&gt;alert(1)&lt;/script&gt;</p>' in section(page, "golden")


# --- the lift --------------------------------------------------------------------------------------------------------

def test_the_lift_names_reranked_over_base_on_its_queries_to_the_places_asked(cli, files, tmp_path):
    page = write_page(cli, tmp_path, files["qrels"], files["base"], "--base", files["base"], "--reranked", files["reranked"],
                      "-m", "RR", "--places", "2", "--top", "2", "--permutations", "200", "--bootstrap", "200")
    lift = section(page, "lift")
    reranked = files["reranked"].replace("<", "&lt;").replace(">", "&gt;")
    assert f"<p>{reranked} over {files['base']}, on 8 queries.</p>" in lift
    *_, changes = Page(page).tables["lift"]
    assert changes == [["", "query", "base RR", "reranked RR", "change"], ["gained", HOSTILE, "0.50", "1.00", "0.50"],
                       ["gained", "q2", "0.50", "1.00", "0.50"]]


def test_the_lifts_warnings_are_at_the_top(cli, files, tmp_path):
    """A reranked run missing a query, and one that is not a reordering within --depth: both said at the top."""
    short = put(tmp_path, "short.run", "".join(line for line in Path(files["reranked"]).read_text().splitlines(keepends=True)
                                               if not line.startswith("q8 ")))
    page = write_page(cli, tmp_path, files["qrels"], "--base", files["base"], "--reranked", short, "-m", "RR",
                      "--permutations", "200", "--bootstrap", "200")
    assert "1 of 8 queries has no results in the reranked run; they score 0" in top_warnings(page)
    page = write_page(cli, tmp_path, files["qrels"], "--base", files["base"], "--reranked", files["reranked"], "--depth", "1",
                      "-m", "RR", "--permutations", "200", "--bootstrap", "200")
    assert [w for w in top_warnings(page) if "are not among the base run&#39;s top 1 for their query" in w]


def test_a_query_id_over_forty_characters_may_wrap(cli, tmp_path):
    """Text cells longer than 40 characters get class long (CSS lets them wrap); shorter ones and numbers do not."""
    long_id = "q" * 41
    qrels = put(tmp_path, "q.qrels", f"{long_id} 0 a 1\nq2 0 a 1\n")
    base = put(tmp_path, "base.run", f"{long_id} Q0 b 1 2 s\n{long_id} Q0 a 2 1 s\nq2 Q0 a 1 2 s\n")
    reranked = put(tmp_path, "rr.run", f"{long_id} Q0 a 1 2 s\n{long_id} Q0 b 2 1 s\nq2 Q0 a 1 2 s\n")
    page = write_page(cli, tmp_path, qrels, "--base", base, "--reranked", reranked, "-m", "RR", "--permutations", "200",
                      "--bootstrap", "200")
    assert f'<td class="long">{long_id}</td>' in page and '<td class="long">q2' not in page


# --- sensitivity ---------------------------------------------------------------------------------------------------

def test_the_sensitivity_range_is_given_as_the_thresholds_are_written(cli, tmp_path):
    """The count is of thresholds: 0.05 to 0.95 by 0.01 read '(91 steps)', which are 90."""
    curves = put(tmp_path, "s.csv", "threshold,run,measure,value\n" + "".join(
        f"{t},a,RR,0.5\n" for t in (0.725, 0.55, 0.6)))
    page = write_page(cli, tmp_path, "--sensitivity", curves)
    assert "thresholds from 0.55 to 0.725 (3 thresholds)" in section(page, "sensitivity")


def test_the_curves_manifest_names_the_score_and_threshold_judged_for_cliffs(cli, tmp_path):
    """`semrel sensitivity --curves` records the score it swept and the threshold it chose: without qrels the cliff
    warning rests on them alone."""
    curves = put(tmp_path, "s.csv", "threshold,run,measure,value\n" + "".join(
        f"{t},{run},RR,{v if t <= 0.6 else v / 3}\n" for t in (0.58, 0.59, 0.6, 0.61, 0.62) for run, v in (("bm25", 0.6), ("rr", 0.7))))
    Path(f"{curves}.manifest.json").write_text(json.dumps({"params": {"on": "p", "at": 0.6}}))
    [said] = top_warnings(write_page(cli, tmp_path, "--sensitivity", curves))
    assert said.startswith("the curves&#39; chosen threshold (sensitivity --at) 0.6 on p sits on a cliff of the sensitivity curve: "
                           "RR of run &#39;bm25&#39; "
                           "moves from 0.600 to 0.200 between p 0.6 and 0.61")


def test_verify_tells_an_edit_of_a_manifest_the_page_read(cli, tmp_path):
    """The curves' manifest sets the threshold judged for cliffs: edited, it changes the page, so the report's manifest
    lists it among the inputs and `semrel verify` tells it (it said 'as its manifest records')."""
    curves = put(tmp_path, "s.csv", "threshold,run,measure,value\n" + "".join(f"{t},a,RR,{0.6 if t <= 0.6 else 0.2}\n"
                                                                                for t in (0.58, 0.59, 0.6, 0.61)))
    manifest = Path(f"{curves}.manifest.json")
    manifest.write_text(json.dumps({"params": {"on": "p", "at": 0.6}}))
    write_page(cli, tmp_path, "--sensitivity", curves)
    page = str(tmp_path / "audit.html")
    assert cli("verify", page).stdout == f"{page}: as its manifest records\n"
    manifest.write_text(json.dumps({"params": {"on": "p", "at": 0.58}}))
    result = cli("verify", page)
    assert result.exit_code == 1 and f"{page}: input changed: {manifest}: " in result.stdout


def test_a_tab_in_a_csv_row_does_not_make_the_file_tab_separated(write):
    points = read_sensitivity(write("s.csv", "threshold,run,measure,value\n0.5,a\tb,RR,0.25\n"))
    assert [(p.threshold, p.run, p.measure, p.value) for p in points] == [(0.5, "a\tb", "RR", 0.25)]


def test_a_sensitivity_file_of_a_header_alone_is_refused(write):
    with pytest.raises(FormatError, match="no rows, or a threshold or value that is not a finite number"):
        read_sensitivity(write("s.csv", "threshold,run,measure,value\n"))


# --- agreement -----------------------------------------------------------------------------------------------------

def agreement_page(agreement: dict) -> str:
    return build_report(ReportInputs(agreement=agreement), lambda message: None)[0]


def test_agreement_counts_are_grouped_by_thousands_and_grades_named():
    agreement = {"labels": {"n": 12345, "percent_agreement": 97.5, "kappa": 0.5, "weights": "none", "labels": [0, 1],
                            "confusion": [[11000, 300], [45, 1000]]}}
    page = agreement_page(agreement)
    tables = Page(page).tables["agreement"]
    assert tables[0] == [["pairs compared", "12,345"], ["agreement", "97.5%"],
                         ["Cohen's kappa", "0.500 (95% bootstrap interval n/a to n/a)"]]
    assert tables[1][2:] == [["reference qrels: 0 (not relevant)", "11,000", "300", "11,300"],
                             ["reference qrels: 1 (relevant)", "45", "1,000", "1,045"],
                             ["total", "11,045", "1,300", "12,345"]]
    assert tables[1][1] == ["0 (not relevant)", "1 (relevant)"]


def test_agreement_ranks_runs_best_first_with_values_to_four_places_and_marks_the_ranks_that_move():
    agreement = {"labels": {"n": 4, "kappa": 0.5, "labels": [0, 1], "confusion": [[2, 0], [1, 1]]},
                 "rankings": [{"measure": "RR", "tau": 0.0, "ref": {"a": 0.25, "b": 0.5, "c": 0.125},
                               "test": {"a": 0.5, "b": 0.25, "c": 0.125}, "swapped": [["a", "b"]]},
                              {"measure": "P@1", "tau": 1.0, "ref": {"a": 0.5, "b": 0.25}, "test": {"a": 0.75, "b": 0.5},
                               "swapped": []}]}
    page = agreement_page(agreement)
    rr, p1 = Page(page).tables["agreement"][2:]
    assert rr == [["run", "reference qrels", "rank", "test qrels", "rank"], ["b", "0.5000", "1", "0.2500", "2"],
                  ["a", "0.2500", "2", "0.5000", "1"], ["c", "0.1250", "3", "0.1250", "3"]]
    assert '<td class="num flip">2</td></tr>' in page and '<td class="num flip">1</td></tr>' in page
    assert page.count("flip\">") == 2  # c keeps its rank
    assert "<caption>P@1: Kendall's tau 1.000</caption>" in page
    assert page.count('<p class="muted">No pair of runs changes order or ties.</p>') == 1
    assert "<li>reference qrels rank b above a; test qrels rank a above b</li>" in page


def test_the_reference_is_the_gold_chunks_only_where_it_is_the_gold_qrels(tmp_path):
    """--gold-qrels names the agreement's reference the gold chunks only when it is that file."""
    plain, gold = put(tmp_path, "ref.qrels", "q 0 c 1\n"), put(tmp_path, "gold.qrels", "q 0 c 1\n")
    agreement = {"ref": plain, "labels": {"n": 1, "kappa": 0.5, "labels": [0, 1], "confusion": [[0, 0], [0, 1]]}}
    assert html._agreement_section(agreement, gold, ignore)["ref"] == "reference (ref.qrels)"
    assert html._agreement_section({**agreement, "ref": gold}, gold, ignore)["ref"] == "gold chunks"


def test_weighted_kappa_names_its_weights_and_unweighted_kappa_does_not():
    labels = {"n": 4, "kappa": 0.5, "labels": [0, 1, 2], "confusion": [[2, 0, 0], [1, 1, 0], [0, 0, 0]]}
    for weights, key in (("none", "Cohen's kappa"), ("quadratic", "Cohen's kappa (quadratic weights)")):
        summary = dict(html._agreement_section({"labels": {**labels, "weights": weights}}, None, ignore)["summary"])
        assert summary[key] == "0.500 (95% bootstrap interval n/a to n/a)"


@pytest.mark.parametrize("labels, message", [
    ({"confusion": [[1, -1], [0, 2]]}, "labels.confusion must be a square table of counts"),
    ({"confusion": [[1, 0], [0, 2]], "labels": [0, 1, 2]}, "labels.labels must list the 2 grades of labels.confusion"),
    ({"confusion": [[1, 0], [0, 2]], "kappa_low": "low"}, "labels.kappa_low must be a number"),
    ({"confusion": [[1, 0], [0, 2]], "kappa_high": "high"}, "labels.kappa_high must be a number"),
])
def test_agreement_that_is_not_semrel_agrees_is_refused(write, labels, message):
    with pytest.raises(FormatError, match=re.escape(message)):
        html.read_agreement(write("a.json", json.dumps({"labels": labels})))


@pytest.mark.parametrize("rankings, message", [
    ("RR", "rankings must be a list, one object a measure"),
    ([{"ref": {"a": 1, "b": "high"}, "test": {"a": 2, "b": 1}}], "rankings.1 must hold ref and test objects"),
    ([{"ref": {"a": 1, "b": 2}, "test": [1, 2]}], "rankings.1 must hold ref and test objects"),
    ([{"ref": {"a": 1, "b": 2}, "test": {"a": 2, "b": 1}, "swapped": [["a"]]}], "rankings.1.swapped must list pairs of runs"),
    ([{"ref": {"a": 1, "b": 2}, "test": {"a": 2, "b": 1}, "swapped": "ab"}], "rankings.1.swapped must list pairs of runs"),
    ([{"ref": {"a": 1, "b": 2}, "test": {"a": 2, "b": 1}, "swapped": [["a", "c"]]}], "rankings.1.swapped must list pairs of runs"),
])
def test_agreement_rankings_not_shaped_as_agree_writes_them_are_refused_in_one_line(cli, write, rankings, message):
    """A swapped pair of one run, a string for the pairs or a value that is text ended in a traceback, after the runs were scored."""
    labels = {"n": 4, "labels": [0, 1], "confusion": [[2, 0], [1, 1]]}
    path = write("a.json", json.dumps({"labels": labels, "rankings": rankings}))
    result = cli("report", "--agreement", path, "-o", str(Path(path).with_suffix(".html")))
    assert result.exit_code == 1 and result.stderr.startswith(f"semrel: error: {path}: {message}")
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_review_stats_show_as_reviewer_and_agreement_tables(cli, tmp_path):
    """`review stats -f json` given to --agreement was flattened into rows such as 'agreement.2.confusion' and '[[1, 0], [1, 1]]'."""
    _, db, _, _ = reviewed_by_two(tmp_path)
    stats = tmp_path / "stats.json"
    stats.write_text(cli("review", "stats", "--db", db, "-f", "json").stdout)
    tables = Page(write_page(cli, tmp_path, "--agreement", str(stats))).tables["agreement"]
    assert tables[0] == [["pairs in the queue", "12"], ["pairs reviewed", "4"]]
    assert [row[:5] for row in tables[1]] == [["reviewer", "graded", "skipped", "flags", "stale"],
                                              ["alice", "4", "0", "0", "0"], ["bob", "3", "0", "0", "0"]]
    assert tables[1][1][5:] == ["n/a", "n/a"]  # graded through the library: no seconds timed
    assert [row[:5] for row in tables[2]] == [["first", "second", "pairs", "agreement", "Cohen's kappa"],
                                              ["alice", "bob", "3", "66.7%", "0.400"],
                                              ["alice", "judge", "4", "50.0%", "0.200"], ["bob", "judge", "3", "33.3%", "-0.500"]]
    assert tables[2][3][5:] == ["-0.800 to 0.000", "none"]  # as `review stats` prints them


def test_an_empty_agreement_object_is_an_empty_table_not_nothing_to_report():
    page = agreement_page({})
    assert "<h2>Agreement figures</h2>" in section(page, "agreement")


# --- plots ---------------------------------------------------------------------------------------------------------

def test_the_lift_bars_are_drawn_sorted_whatever_order_the_queries_come_in():
    assert plots.change_bars([0.5, -0.25, 0.0, 0.25], "RR") == plots.change_bars([-0.25, 0.0, 0.25, 0.5], "RR")


# --- bugs the audit found, fixed --------------------------------------------------------------------------------------

def test_a_run_without_a_value_on_the_reference_is_ranked_last_as_not_available():
    agreement = {"labels": {"n": 4, "kappa": 0.5, "labels": [0, 1], "confusion": [[2, 0], [1, 1]]},
                 "rankings": [{"measure": "RR", "tau": None, "ref": {"a": None, "b": 0.5}, "test": {"a": 0.5, "b": 0.25}, "swapped": []}]}
    [ranking] = html._agreement_section(agreement, None, ignore)["rankings"]
    assert [(r["run"], r["ref"], r["ref_rank"]) for r in ranking["runs"]] == [("b", "0.5000", 1), ("a", "n/a", "n/a")]


def test_run_names_the_plots_font_cannot_draw_are_one_warning_not_python_warnings(cli, write):
    """A run named in Chinese in the curves printed four lines of matplotlib's UserWarning, naming plots.py, and the page said
    nothing of the boxes its curves were labelled with."""
    rows = "".join(f"{t},{run},RR,{v}\n" for t in (0.5, 0.6) for run, v in (("检索", 0.4), ("bm25", 0.5)))
    curves = write("curves.csv", "threshold,run,measure,value\n" + rows)
    result = cli("report", "--sensitivity", curves, "-o", str(Path(curves).with_suffix(".html")))
    assert result.exit_code == 0, result.stderr
    said = ("the sensitivity plot draws '检', '索' as empty boxes: its font (DejaVu Sans) lacks them, so a name holding them may "
            "not be told from another there")
    assert "UserWarning" not in result.stderr and result.stderr.count("semrel: warning:") == 1
    assert f"semrel: warning: {said}" in result.stderr
    assert top_warnings(Path(curves).with_suffix(".html").read_text(encoding="utf-8")) == [str(escape(said))]


def test_curves_of_one_threshold_are_drawn_without_a_python_warning():
    points = [SensitivityPoint(0.5, run, "RR", v) for run, v in (("a", 0.25), ("b", 0.5))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        page, _ = build_report(ReportInputs(sensitivity=points), lambda message: None)
    assert "thresholds from 0.5 to 0.5" in page


def test_one_query_is_said_in_the_singular(cli, tmp_path):
    qrels = put(tmp_path, "one.qrels", "q1 0 c1 1\n")
    a = put(tmp_path, "a.run", "q1 Q0 c2 1 2 a\nq1 Q0 c1 2 1 a\n")
    b = put(tmp_path, "b.run", "q1 Q0 c1 1 2 b\nq1 Q0 c2 2 1 b\n")
    page = write_page(cli, tmp_path, qrels, a, b, "--base", a, "--reranked", b, "-m", "RR", "--permutations", "200",
                      "--bootstrap", "200")
    assert "(one.qrels: qrels; 1 query)" in section(page, "metrics") and ", on 1 query.</p>" in section(page, "lift")


def test_one_threshold_swept_is_said_in_the_singular():
    points = [SensitivityPoint(0.5, "a", "RR", 0.25), SensitivityPoint(0.5, "b", "RR", 0.5)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warning of the test above
        page, _ = build_report(ReportInputs(sensitivity=points), lambda message: None)
    assert "(1 threshold);" in page


def test_usage_error_for_unknown_on_names_the_scores():
    with pytest.raises(UsageError, match="--on 'Q': choose one of"):
        build_report(ReportInputs(qrels="x.qrels", on="Q"), lambda message: None)


def _with_p(query: str, pairs: tuple[tuple[str, float], ...]) -> list[dict]:
    """Judgment rows of `query` with p and in-range features, one per (chunk id, p)."""
    features = {"relR_idf": 0.5, "R_idf_max": 0.0, "own_idf": 0.5, "F_max": 0.0, "P_max": 0.0, "lenratio": 0.0, "lexR_rel": 0.5,
                "with_gold": 1.0}
    return [{"query_id": query, "chunk_id": c, "P": 0.5, "R": 0.5, "F": 0.5, "source": "bm25", "p": p, "features": features}
            for c, p in pairs]


def _label_note_on_top(cli, tmp_path: Path, rows: list[dict], run: str, said: str, params: dict | None = None) -> None:
    """`label` of `rows` (their manifest's `params` given) says `said`, and the page has it at the top both from the labels'
    manifest and from the judgments given with --judgments, where it recomputes the label warnings."""
    judgments = put(tmp_path, "judgments.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    if params is not None:
        (tmp_path / "judgments.jsonl.manifest.json").write_text(json.dumps({"params": params}))
    qrels = str(tmp_path / "labels.qrels")
    labelled = cli("label", judgments, "-o", qrels)
    assert labelled.exit_code == 0 and said in labelled.stderr, labelled.stderr
    for given in ([], ["--judgments", judgments]):
        page = write_page(cli, tmp_path, qrels, put(tmp_path, "bm25.run", run), *given)
        escaped = said.replace(">", "&gt;").replace("'", "&#39;")
        assert [w for w in top_warnings(page) if escaped in w], (given, top_warnings(page))


def test_the_fallback_note_stays_at_the_top_when_the_judgments_are_given(cli, tmp_path):
    """Pairs without p (a query whose pool covered the corpus) are labelled on R, and `label` says so; given --judgments
    the page recomputed the label warnings and lost that line, which it showed without them."""
    rows = _with_p("q1", (("a", 0.9), ("b", 0.1)))
    rows += [{"query_id": "q2", "chunk_id": c, "P": r, "R": r, "F": r, "source": "bm25"} for c, r in (("c", 0.8), ("d", 0.3))]
    _label_note_on_top(cli, tmp_path, rows, "q1 Q0 a 1 2 bm25\nq1 Q0 b 2 1 bm25\nq2 Q0 c 1 2 bm25\nq2 Q0 d 2 1 bm25\n",
                       "2 of 4 pairs hold no probability p: labelled by R >= 0.7 instead")


def test_the_note_on_p_from_another_model_stays_at_the_top_when_the_judgments_are_given(cli, tmp_path):
    """Judgments whose manifest records another semrel's probability model: `label` says their p is another model's; given
    --judgments the page recomputed the label warnings and lost that line."""
    older = {**labels.model_params(), "with_gold": {**labels.WITH_GOLD.to_json(), "intercept": -3.97}}
    _label_note_on_top(cli, tmp_path, _with_p("q1", (("a", 0.9), ("b", 0.1))), "q1 Q0 a 1 2 bm25\nq1 Q0 b 2 1 bm25\n",
                       "its p comes from another semrel's probability model", {"probability": {"model": older}})


def test_labels_of_a_threshold_calibration_are_not_sent_to_calibrate_again(cli, tmp_path):
    """`label --calibration` of a `calibrate --on R` file says the rule is already fitted to reviewed pairs; the report,
    reading a manifest that did not record the calibration, advised reviewing 100 pairs and calibrating."""
    rs = [0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.9]
    rows = [{"query_id": f"q{i}", "chunk_id": "c", "P": r, "R": r, "F": r, "source": "gold"} for i, r in enumerate(rs)]
    judgments = put(tmp_path, "judgments.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    reviewed = put(tmp_path, "reviewed.qrels", "".join(f"q{i} 0 c {int(r >= 0.6)}\n" for i, r in enumerate(rs)))
    assert cli("calibrate", judgments, reviewed, "--on", "R", "-o", str(tmp_path / "cal.json")).exit_code == 0
    labelled = cli("label", judgments, "--calibration", str(tmp_path / "cal.json"), "-o", str(tmp_path / "labels.qrels"))
    fitted = "the rule is already fitted to reviewed pairs"
    assert labelled.exit_code == 0 and fitted in labelled.stderr, labelled.stderr  # 3 of 10 gold chunks are relevant
    run = put(tmp_path, "bm25.run", "".join(f"q{i} Q0 c 1 1 bm25\n" for i in range(len(rs))))
    for given in ([], ["--judgments", judgments]):
        warned = top_warnings(write_page(cli, tmp_path, str(tmp_path / "labels.qrels"), run, *given))
        assert [w for w in warned if fitted in w] and not [w for w in warned if "review about 100 pairs" in w], (given, warned)


# --- metrics corrected by a review ----------------------------------------------------------------------------------

def _review_flipping(tmp_path: Path, order: str, decisions: int) -> tuple[dict, str, str]:
    """A review whose reviewer gives the other grade than the judge's on the first `decisions` pairs of the queue."""
    from review_helpers import R_SCORES, queued_db
    from semrel.review.engine import QueueSettings, Session

    conn, pool = queued_db(tmp_path, QueueSettings(order=order, seed=1))
    session = Session(conn, "alice")
    for _ in range(decisions):
        task = session.next_task()
        session.grade(task, 1 - task.proposed)
    conn.close()
    return pool, str(tmp_path / "r.sqlite"), put(tmp_path, "sys.run", "".join(f"{q} Q0 {c} 1 {r} sys\n" for (q, c), r in R_SCORES.items()))


@pytest.mark.parametrize("order,decisions", [("random", 6), ("query-sample", 8)])
def test_the_report_shows_the_metrics_corrected_by_the_review_as_estimate_gives_them(cli, tmp_path, order, decisions):
    """The page showed the derived labels' metrics alone, however much of them a review had found wrong."""
    pool, db, run = _review_flipping(tmp_path, order, decisions)
    estimated = cli("estimate", pool["labels"], run, "--reviewed", db, "-m", "AP,P@4", "--confidence", "0.9", "-f", "json")
    assert estimated.exit_code == 0, estimated.output
    page = write_page(cli, tmp_path, pool["labels"], run, "--reviewed", db, "-m", "AP,P@4", "--alpha", "0.1")
    cells = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", section(page, "estimates"))[1:]]
    expected = [[e["run"], e["measure"], *(f"{e[k]:.4f}" for k in ("derived", "corrected", "low", "high")), str(e["sampled"]),
                 *([str(e["sampled_queries"])] if order == "query-sample" else []), str(e["changed"]), str(e["pool"])]
                for e in json.loads(estimated.stdout)]
    assert cells == expected and expected[0][3] != expected[0][2]  # corrected, not the derived value again
    assert ("of queries reviewed whole" in section(page, "estimates")) == (order == "query-sample")
    assert "90% intervals" in section(page, "estimates")
    said = [line.removeprefix("semrel: warning: ") for line in estimated.stderr.splitlines()]
    assert all(str(escape(line)) in top_warnings(page) for line in said), (said, top_warnings(page))
    assert bool(said) == (order == "random")  # 6 of 6 sampled pairs changed: AP's first-order correction is warned of
    made = json.loads((tmp_path / "audit.html.manifest.json").read_text())
    assert db in [i["path"] for i in made["inputs"]]


def test_reviewed_needs_runs_given_as_files(cli, tmp_path):
    pool, db, run = _review_flipping(tmp_path, "random", 2)
    for args, message in (([pool["labels"]], "--reviewed corrects the runs' metrics on QRELS by the review: give QRELS and runs"),
                          ([pool["labels"], "-"], "--reviewed reads the runs a second time: give them as files, not '-'")):
        result = cli("report", *args, "--reviewed", db, "-o", str(tmp_path / "never.html"), input=Path(run).read_text())
        assert result.exit_code == 2 and result.stderr.strip() == f"semrel: error: {message}", result.stderr
    assert cli("report", pool["labels"], run, "--reviewed", db, "--alpha", "0.1", "-o", str(tmp_path / "one.html")).exit_code == 0
    wide = cli("report", pool["labels"], run, "--reviewed", db, "--alpha", "0.9", "-o", str(tmp_path / "never.html"))
    assert wide.exit_code == 2 and wide.stderr.strip() == ("semrel: error: --alpha 0.9 with --reviewed gives 10% intervals: give an "
                                                           "--alpha from 0.001 to 0.5 (0.05: 95%)"), wide.stderr


def test_the_corrected_metrics_table_scrolls_in_one_wrapper(cli, tmp_path):
    """The table macro wraps its table in <div class="wide"> already; the section wrapped it in a second one."""
    pool, db, run = _review_flipping(tmp_path, "random", 2)
    page = write_page(cli, tmp_path, pool["labels"], run, "--reviewed", db, "-m", "P@4")
    assert section(page, "estimates").count('class="wide"') == 1


@pytest.mark.parametrize("kind", ["text", "other tables", "no sample yet"])
def test_a_review_database_that_gives_no_sample_is_refused_before_the_runs_are_scored(cli, tmp_path, kind):
    """The database was read last, after the runs' evaluation and paired tests (minutes on a large set): what is wrong
    with it is said before any section's work, as a missing input is."""
    pool, db, run = _review_flipping(tmp_path, "random", 0)
    if kind == "text":
        db = put(tmp_path, "notes.sqlite", "not a database\n")
    elif kind == "other tables":
        import sqlite3

        db = str(tmp_path / "other.sqlite")
        with contextlib.closing(sqlite3.connect(db)) as conn:
            conn.execute("CREATE TABLE x (a)")
            conn.commit()
    result = cli("report", pool["labels"], run, "--reviewed", db, "-o", str(tmp_path / "never.html"))
    assert result.exit_code != 0 and [line for line in result.stderr.splitlines() if line.startswith("semrel: ")] == [
        line for line in result.stderr.splitlines() if line.startswith("semrel: error: ")], result.stderr


def test_a_measure_estimate_refuses_is_left_out_of_the_corrected_metrics_and_refused_alone_before_the_runs_are_scored(cli, tmp_path):
    """gm_map (a geometric mean) was refused by the estimates section, after the runs' evaluation and tests; beside other
    measures it refused the whole page, which can show it in the metric table."""
    pool, db, run = _review_flipping(tmp_path, "random", 2)
    result = cli("report", pool["labels"], run, "--reviewed", db, "-m", "gm_map", "-o", str(tmp_path / "never.html"))
    assert result.exit_code == 2 and result.stderr.strip() == (
        "semrel: error: estimate corrects means and sums, and gm_map is a geometric mean: estimate AP (or bpref) instead")
    page = write_page(cli, tmp_path, pool["labels"], run, "--reviewed", db, "-m", "AP,gm_map")
    assert "gm_map" in section(page, "metrics") and "gm_map" not in section(page, "estimates") and "AP" in section(page, "estimates")
    assert ("gm_map: left out of the metrics corrected by the review, which corrects means and sums, and it is a geometric mean "
            "(AP and bpref are corrected)") in top_warnings(page)


def test_the_reviewers_conflicts_are_settled_as_adjudicate_says_as_in_estimate(cli, tmp_path):
    """The report settled conflicting reviewers by majority alone; estimate and review export take --adjudicate."""
    from review_helpers import R_SCORES, queued_db
    from semrel.review.engine import QueueSettings, Session

    conn, pool = queued_db(tmp_path, QueueSettings(order="random", seed=1, overlap=4))  # the first 4 pairs go to both
    alice, bob = Session(conn, "alice"), Session(conn, "bob")
    for _ in range(4):  # alice gives the judge's other grade, bob the judge's own
        task = alice.next_task()
        alice.grade(task, 1 - task.proposed)
        task = bob.next_task()
        bob.grade(task, task.proposed)
    conn.close()
    db = str(tmp_path / "r.sqlite")
    run = put(tmp_path, "sys.run", "".join(f"{q} Q0 {c} 1 {r} sys\n" for (q, c), r in R_SCORES.items()))
    found = []
    for rule in ("alice", "bob"):
        estimated = cli("estimate", pool["labels"], run, "--reviewed", db, "-m", "AP", "--adjudicate", rule, "-f", "csv")
        page = write_page(cli, tmp_path, pool["labels"], run, "--reviewed", db, "-m", "AP", "--adjudicate", rule)
        corrected = re.findall(r"<td[^>]*>([^<]*)</td>", section(page, "estimates"))[3]
        assert corrected == estimated.stdout.splitlines()[1].split(",")[3], (rule, estimated.stdout)
        found.append(corrected)
    assert found[0] != found[1]  # the rules settle the sample otherwise
    strict = cli("report", pool["labels"], run, "--reviewed", db, "--adjudicate", "strict", "-o", str(tmp_path / "never.html"))
    assert strict.exit_code == 1 and len(strict.stderr.strip().splitlines()) == 1 and "conflict" in strict.stderr, strict.stderr
    alone = cli("report", pool["labels"], run, "--adjudicate", "bob", "-o", str(tmp_path / "never.html"))
    assert alone.exit_code == 2 and "--adjudicate settles the reviewers' grades of --reviewed: give --reviewed DB" in alone.stderr


def test_a_sample_of_one_pair_is_refused_before_the_runs_are_scored(cli, tmp_path):
    """It was refused by the estimates section, after the runs' evaluation and tests."""
    pool, db, run = _review_flipping(tmp_path, "random", 1)
    result = cli("report", pool["labels"], run, "--reviewed", db, "-o", str(tmp_path / "never.html"))
    assert result.exit_code == 1 and "evaluating" not in result.stderr, result.stderr
    assert result.stderr.strip().endswith("the review's random sample holds 1 reviewed pair(s) of the qrels' queries: a corrected "
                                          "estimate and its interval need at least 2; review more pairs (`semrel review start`)")


def test_judgments_that_cannot_be_those_of_the_qrels_are_refused_in_one_line(cli, files, tmp_path):
    """An empty judgments file drew an empty plot (matplotlib's warning on stderr, exit 0); judgments of other queries
    warned that the label rule missed every gold chunk and told to review and refit, the labels being fine."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps({**json.loads(line), "query_id": "zz"}) + "\n"
                             for line in Path(files["judgments"]).read_text(encoding="utf-8").splitlines()), encoding="utf-8")
    for judgments, said in ((empty, f"{empty}: no judgments (the file is empty); judge a pool first (`semrel judge`)"),
                            (other, f"{other} shares no query id with {files['qrels']}: the judgments have 'zz', the qrels have "
                                    f"{HOSTILE!r}, 'q2', 'q3'; give the judgments its labels were made from")):
        result = cli("report", files["qrels"], files["base"], "--judgments", str(judgments), "-o", str(tmp_path / "x.html"))
        assert result.exit_code == 1 and result.stderr.endswith(f"semrel: error: {said}\n"), result.stderr
        assert not (tmp_path / "x.html").exists()


def test_judgments_of_some_of_the_qrels_queries_are_warned_of_at_the_top(cli, files, tmp_path):
    """Judgments that share some queries with the qrels were read in silence: the label warnings counted a judged query the
    qrels lack as one with no relevant pair, and the score plots were of other queries than the metrics."""
    rows = [json.loads(line) for line in Path(files["judgments"]).read_text(encoding="utf-8").splitlines()]  # two rows a query
    qrels = files["qrels"]
    advice = (f". The metrics are of the qrels' queries, the judge-score plots and label warnings of the judged ones, a judged pair "
              f"the qrels lack counting as not relevant; give the judgments {qrels}'s labels were made from (where the qrels were "
              "filtered to fewer queries, filter the judgments alike)")
    for kept, added, said in (
            (8, ["q9", "q10"], f"4 of the 8 queries in {qrels} have no judgment ('q5', 'q6', 'q7'); 2 of the 6 judged queries are "
                               f"not in {qrels} ('q9', 'q10')"),
            (14, [], f"1 of the 8 queries in {qrels} has no judgment ('q8')")):
        judgments = tmp_path / "some.jsonl"
        judgments.write_text("".join(json.dumps(row) + "\n" for row in rows[:kept] + [{**rows[0], "query_id": q} for q in added]),
                             encoding="utf-8")
        output = tmp_path / "r.html"
        result = cli("report", qrels, files["base"], "--judgments", str(judgments), "-o", str(output))
        message = f"{judgments} and {qrels} hold different queries: {said}{advice}"
        assert result.exit_code == 0 and f"semrel: warning: {message}\n" in result.stderr, result.stderr
        assert str(escape(message)) in top_warnings(output.read_text(encoding="utf-8"))


def test_a_threshold_given_is_not_marked_as_the_label_threshold_on_the_curves(files, monkeypatch):
    """--threshold 0.5 beside labels made at F >= 0.6: the page warned that 0.5 made no label, and its curves marked 0.5
    'label threshold 0.5'."""
    drawn: dict[str, list[str]] = {}
    real = plots.svg

    def keep(figure, name, alt, warn=None):
        drawn[name] = [text.get_text() for axes in figure.axes for text in axes.texts]
        return real(figure, name, alt, warn)

    monkeypatch.setattr(plots, "svg", keep)
    for thresholds, said in (((), "label threshold 0.6"), ((0.5,), "threshold given 0.5")):
        build_report(ReportInputs(qrels=files["qrels"], sensitivity=read_sensitivity(files["sensitivity"]), thresholds=thresholds),
                     warn=lambda message: None)
        assert said in drawn["sensitivity"]
