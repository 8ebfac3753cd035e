"""`semrel report`: every section from data, the judge signature, escaping, resources and errors."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from report_helpers import HOSTILE, QUERIES, report_args, report_files, top_warnings, warning_boxes
from semrel import resources
from semrel.errors import FormatError, SemrelError
from semrel.report.html import read_sensitivity


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return report_files(tmp_path)


@pytest.mark.slow
def test_report_has_every_section_and_escapes_data(cli, files, tmp_path):
    output = tmp_path / "report.html"
    result = cli("report", *report_args(files), "-o", str(output))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == str(output)
    assert "semrel: report: evaluating and testing 2 runs" in result.stderr
    html = output.read_text(encoding="utf-8")
    for section in ("signature", "golden", "scores", "metrics", "lift", "sensitivity", "agreement"):
        assert f'<section id="{section}"' in html
    assert HOSTILE not in html and "<script" not in html and "<i>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count("<svg") == 3
    assert json.loads(Path(f"{output}.manifest.json").read_text())["params"]["measures"] == ["RR", "P@1"]


def signature_rows(html: str) -> dict[str, str]:
    signature = html[html.index('<section id="signature"'):html.index("</section>")]
    return dict(re.findall(r"<tr><th>([^<]+)</th><td>([^<]*)</td></tr>", signature))


@pytest.mark.slow
def test_signature_comes_from_the_manifests(cli, files, tmp_path):
    output = tmp_path / "r.html"
    result = cli("report", *report_args(files), "-o", str(output))
    html = output.read_text(encoding="utf-8")
    assert signature_rows(html) == {"model": "all-MiniLM-L6-v2", "layer": "4", "idf": "not recorded",
                                    "rescaling": "corpus (baseline: corpus)", "label rule": "F &gt;= 0.6"}
    assert not top_warnings(html) and "were made by" not in result.stderr
    assert json.loads(Path(f"{output}.manifest.json").read_text())["params"]["label_rule"] == "F >= 0.6"


def test_options_other_than_the_labels_rule_are_drawn_and_warned_about(cli, files, tmp_path):
    """--on/--threshold/--grades showed in the signature as the labels' rule, whatever rule the manifest records."""
    output = tmp_path / "r.html"
    result = cli("report", files["qrels"], files["base"], "--judgments", files["judgments"], "--on", "R", "--grades", "0.5,0.75",
                 "-o", str(output))
    assert result.exit_code == 0, result.stderr
    html = output.read_text(encoding="utf-8")
    rows = signature_rows(html)
    assert rows["label rule"] == "F &gt;= 0.6"
    assert rows["plots drawn at"] == "R at grade cuts 0.5, 0.75 (--on/--threshold/--grades)"
    message = (f"{files['qrels']}: its labels were made by F >= 0.6, as {files['qrels']}.manifest.json records, not by "
               "R at grade cuts 0.5, 0.75 (--on/--threshold/--grades)")
    assert message in result.stderr and [w for w in top_warnings(html) if w.startswith(message.replace(">", "&gt;"))]
    assert "dashed lines: the thresholds of --on/--threshold/--grades." in html
    params = json.loads(Path(f"{output}.manifest.json").read_text())["params"]
    assert (params["label_rule"], params["on"], params["thresholds"]) == ("F >= 0.6", "R", [0.5, 0.75])
    # the probability rule: the signature said R >= 0.7, as the options gave, and named the rule "probability"
    from semrel.formats.manifest import write_manifest
    from semrel.judging.labels import CUT, ProbabilityRule

    write_manifest(files["qrels"], params=ProbabilityRule().params())
    result = cli("report", files["qrels"], files["base"], "--on", "R", "--threshold", "0.7", "-o", str(output))
    rows = signature_rows(output.read_text(encoding="utf-8"))
    assert rows["label rule"] == f"p &gt;= {CUT:g}" and rows["plots drawn at"] == "R &gt;= 0.7 (--on/--threshold/--grades)"
    assert f"its labels were made by p >= {CUT:g}, as" in result.stderr
    # options that are the rule: nothing to warn about
    result = cli("report", files["qrels"], files["base"], "--threshold", f"{CUT}", "-m", "RR", "-o", str(output))
    assert result.exit_code == 0 and "were made by" not in result.stderr and not top_warnings(output.read_text(encoding="utf-8"))


def test_without_a_labels_manifest_the_rule_is_unknown(cli, files, tmp_path):
    """No manifest beside QRELS: the signature said component R (a default), and the label warnings named R >= 0.7."""
    Path(f"{files['qrels']}.manifest.json").unlink()
    Path(files["qrels"]).write_text("".join(f"{q} 0 c{i} 0\n" for i, q in enumerate(QUERIES)))  # gold chunks left out
    output = tmp_path / "r.html"
    result = cli("report", files["qrels"], files["base"], "--judgments", files["judgments"], "--golden", files["golden"],
                 "-o", str(output))
    assert result.exit_code == 0, result.stderr
    html = output.read_text(encoding="utf-8")
    rows = signature_rows(html)
    assert rows["label rule"] == f"not recorded: {files['qrels']} has no manifest from `semrel label`"
    assert "component" not in rows and "plots drawn at" not in rows
    assert "by their unrecorded rule" in result.stderr and "R >= 0.7" not in result.stderr
    assert "dashed lines: none drawn" in html
    assert json.loads(Path(f"{output}.manifest.json").read_text())["params"]["label_rule"] is None
    # options draw what they say; there is no recorded rule for them to disagree with
    result = cli("report", files["qrels"], files["base"], "--on", "R", "--threshold", "0.7", "-o", str(output))
    assert signature_rows(output.read_text(encoding="utf-8"))["plots drawn at"] == "R &gt;= 0.7 (--on/--threshold/--grades)"
    assert "were made by" not in result.stderr


@pytest.mark.slow
def test_numbers_in_the_report(cli, files, tmp_path):
    output = tmp_path / "r.html"
    cli("report", *report_args(files), "--on", "R", "--grades", "0.55,0.725", "-o", str(output))
    html = output.read_text(encoding="utf-8")
    # gold scores on R are 0.70..0.77 and the others 0.40..0.54: all gold reach 0.55, five of eight 0.725
    assert re.search(r'<td class="num">0.550</td><td class="num">1.000</td><td class="num">0.000</td>', html)
    assert re.search(r'<td class="num">0.725</td><td class="num">0.625</td><td class="num">0.000</td>', html)
    # RR: base 0.5 everywhere; reranked 1 on seven of eight -> 0.9375, beating the base run (a): exact p = 2/128
    assert "0.9375<sup>a</sup>" in html
    assert "gold: 8 pairs; not gold: 8 pairs" in html


def test_report_of_the_golden_set_alone(cli, files, tmp_path):
    output = tmp_path / "g.html"
    result = cli("report", "--golden", files["golden"], "-o", str(output))
    assert result.exit_code == 0
    html = output.read_text(encoding="utf-8")
    assert '<section id="golden"' in html and '<section id="metrics"' not in html and "<svg" not in html
    assert "<th>label rule</th><td>no qrels given</td>" in html


def test_source_date_epoch_makes_two_reports_of_the_same_inputs_the_same_bytes(cli, files, tmp_path, monkeypatch):
    """'Made by semrel ... on <now>' was the one line two reports of the same inputs differed by; SOURCE_DATE_EPOCH
    (the reproducible-builds convention) dates them both."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    first, second = tmp_path / "a.html", tmp_path / "b.html"
    for output in (first, second):
        assert cli("report", "--golden", files["golden"], "-o", str(output)).exit_code == 0
    assert first.read_bytes() == second.read_bytes() and "on 2023-11-14 22:13 UTC." in first.read_text(encoding="utf-8")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    result = cli("report", "--golden", files["golden"], "-o", str(tmp_path / "c.html"))
    assert result.exit_code == 2 and result.stderr == ("semrel: error: SOURCE_DATE_EPOCH='yesterday': give the report's date as "
                                                       "whole seconds since 1970-01-01 UTC, or unset it\n")
    assert not (tmp_path / "c.html").exists()

def test_qrels_alone_are_told_to_need_runs(cli, files):
    """'nothing to report: give QRELS and runs' read as if QRELS had not been given."""
    result = cli("report", files["qrels"], "-o", "r.html")
    assert result.exit_code == 2
    assert "nothing to report: " + str(files["qrels"]) + " is QRELS, which scores runs: give runs after it, or --golden" in result.stderr


def test_report_to_stdout_is_the_page_alone(cli, files):
    result = cli("report", "--golden", files["golden"], "-o", "-")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.rstrip().endswith("</html>")  # not followed by the output's name, '-'


@pytest.mark.parametrize("args, message", [
    ((), "nothing to report"),
    (("--base", "bm25.run"), "--base and --reranked go together"),
    (("--threshold", "0.5", "--grades", "0.4,0.6"), "not both"),
    (("--grades", "low,high", "--golden", "golden.jsonl"), "comma-separated numbers"),
    (("--grades", "", "--golden", "golden.jsonl"), "give at least one threshold"),  # as `label`: not read as no option
    (("--grades", "0.6,0.4", "--golden", "golden.jsonl"), "strictly increasing"),
])
def test_usage_errors(cli, files, tmp_path, args, message):
    args = [str(tmp_path / a) if a.endswith((".run", ".jsonl")) else a for a in args]
    result = cli("report", files["qrels"], *args, "-o", str(tmp_path / "x.html"))
    assert result.exit_code == 2 and message in result.stderr
    assert not (tmp_path / "x.html").exists()


@pytest.mark.parametrize("args, message", [
    (("--depth", "5"), "--depth is the lift's reorder depth: give --base and --reranked too"),
    (("--top", "3"), "--top lists the queries the lift gains and loses: give --base and --reranked too"),
    (("--baseline", "bm25"), "--baseline chooses the pairs of runs compared: give two runs or more"),
    (("--all-pairs",), "--all-pairs chooses the pairs of runs compared: give two runs or more"),
    (("--permutations", "500"), "--permutations sets the paired tests between runs (two or more) or of --reranked against --base; "
                                "this report tests none"),
])
def test_options_for_sections_the_report_will_not_have_are_refused(cli, files, tmp_path, args, message):
    """Each was ignored in silence: no lift without --base and --reranked, nothing compared with one run."""
    result = cli("report", files["qrels"], files["base"], *args, "-o", str(tmp_path / "x.html"))
    assert result.exit_code == 2 and result.stderr == f"semrel: error: {message}\n"
    assert not (tmp_path / "x.html").exists()


def test_inputs_that_need_another_are_refused_before_anything_is_read(cli, files, tmp_path):
    """--corpus alone (its stats sit beside the golden set's; it checks runs' ids) and runs without qrels (from Python:
    the command's first argument is QRELS) are refused, naming what to add."""
    from semrel.errors import UsageError
    from semrel.report.html import ReportInputs, build_report

    result = cli("report", files["qrels"], "--corpus", files["corpus"], "-o", str(tmp_path / "x.html"))
    assert result.exit_code == 2 and "--corpus gives its stats beside the golden set's, and checks the runs' chunk ids: give " \
        "--golden or runs" in result.stderr and not (tmp_path / "x.html").exists()
    with pytest.raises(UsageError, match="^runs need qrels: give QRELS first$"):
        build_report(ReportInputs(runs=[files["base"]]), warn=print)


def test_a_run_of_chunk_ids_the_corpus_does_not_list_is_warned_of_at_the_top(cli, files, tmp_path):
    """A run with misspelt chunk ids scored 0 on the report's page without a word; with --corpus (and no golden set,
    which it had needed) the page says so at the top, once though the runs are scored on two qrels."""
    misspelt = tmp_path / "mine.run"
    misspelt.write_text(Path(files["base"]).read_text().replace(" c0 ", " C-0 ").replace(" c1 ", " C-1 "))
    output = tmp_path / "r.html"
    result = cli("report", files["qrels"], files["base"], str(misspelt), "--gold-qrels", files["gold"], "--corpus",
                 files["corpus"], "-o", str(output))
    assert result.exit_code == 0, result.stderr
    said = [w for w in top_warnings(output.read_text(encoding="utf-8")) if "does not list" in w]
    assert said == ["2 of the 16 rows of run &#39;mine&#39; (12%) name chunks the corpus does not list (e.g. &#39;C-0&#39;, "
                    "&#39;C-1&#39;): they count as not relevant; check that the run and the corpus match "
                    "(&#39;c0&#39; of the corpus is spelt &#39;C-0&#39; in the run)"]
    assert result.stderr.count("does not list") == 1


def test_the_corpus_is_read_once_for_its_stats_and_the_runs_chunk_ids(cli, files, tmp_path, monkeypatch):
    """With --golden, --corpus and runs the report read the corpus twice, for the golden set's stats and again for the
    check of the runs' chunk ids (27.5 s for 1,000,000 chunks; 18.6 s in one pass); one pass now serves both, and
    a corpus from stdin, which could not be read again, gets the check too."""
    from semrel.formats import corpus as corpus_module

    reads: list[str] = []
    real = corpus_module.read_jsonl

    def counted(path, *args, **kwargs):
        if str(path) in (files["corpus"], "-"):
            reads.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(corpus_module, "read_jsonl", counted)
    misspelt = tmp_path / "mine.run"
    misspelt.write_text(Path(files["base"]).read_text().replace(" c0 ", " C-0 ").replace(" c1 ", " C-1 "))
    for corpus, given in ((files["corpus"], None), ("-", Path(files["corpus"]).read_text())):
        reads.clear()
        output = tmp_path / "once.html"
        result = cli("report", files["qrels"], files["base"], str(misspelt), "--gold-qrels", files["gold"], "--golden",
                     files["golden"], "--corpus", corpus, "-o", str(output), input=given)
        assert result.exit_code == 0, result.stderr
        assert reads == [corpus]
        assert result.stderr.count("2 of the 16 rows of run 'mine' (12%) name chunks the corpus does not list") == 1
        assert '<section id="golden"' in output.read_text(encoding="utf-8")


def test_sensitivity_rows_from_jsonl_and_errors(write):
    points = read_sensitivity(write("s.jsonl", '{"threshold": 0.5, "run": "a", "measure": "RR", "value": 0.25}\n'))
    assert [(p.threshold, p.run, p.measure, p.value) for p in points] == [(0.5, "a", "RR", 0.25)]
    with pytest.raises(FormatError, match=r"t.csv:3: threshold and value must be numbers"):
        read_sensitivity(write("t.csv", "threshold,run,measure,value\n0.5,a,RR,0.2\nhigh,a,RR,0.3\n"))
    with pytest.raises(FormatError, match=r"u.csv:1: expected a header"):
        read_sensitivity(write("u.csv", "0.5,a,RR,0.2\n"))


def test_templates_found_in_checkout_and_installed_prefix(tmp_path, monkeypatch):
    assert (resources.template_dir() / "report.html.j2").is_file()
    installed = tmp_path / "prefix" / "share" / "semrel" / "templates"
    installed.mkdir(parents=True)
    monkeypatch.setattr(resources, "__file__", str(tmp_path / "site-packages" / "semrel" / "resources.py"))
    monkeypatch.setattr(resources.sysconfig, "get_path", lambda name: str(tmp_path / "prefix"))
    monkeypatch.setattr(resources.sys, "prefix", str(tmp_path / "nowhere"))
    monkeypatch.setattr(resources.sys, "base_prefix", str(tmp_path / "nowhere"))
    monkeypatch.setattr(resources.site, "getuserbase", lambda: str(tmp_path / "nowhere"))
    assert resources.template_dir() == installed
    installed.rmdir()
    with pytest.raises(SemrelError, match="cannot find semrel's templates/ folder"):
        resources.template_dir()


def test_metrics_name_their_qrels_and_show_derived_and_gold_side_by_side(cli, files, tmp_path):
    output = tmp_path / "r.html"
    assert cli("report", *report_args(files), "-o", str(output)).exit_code == 0
    html = output.read_text(encoding="utf-8")
    metrics = html[html.index('<section id="metrics"'):html.index("</section>", html.index('<section id="metrics"'))]
    assert "<strong>derived labels</strong>" in metrics and "labels derived from F &gt;= 0.6 on the judged pool" in metrics
    assert "<strong>gold chunks</strong>" in metrics and "the golden set&#39;s gold chunks" in metrics
    assert re.search(r'<th colspan="2" class="group">RR</th>', metrics)
    cells = re.findall(r'<td class="num (derived|gold)">([^<]*)', metrics)
    # RR of the reranked run: 0.9375 on the derived labels, 0.8125 on the gold chunks (x5 and x6 come second, c7 too)
    assert cells[4:6] == [("derived", "0.9375"), ("gold", "0.8125")]
    assert metrics.count("<details><summary>Paired tests on the") == 2
    # one qrels: the table says which
    assert cli("report", files["qrels"], files["base"], "-m", "RR", "-o", str(output)).exit_code == 0
    assert "Scored on <strong>derived labels</strong>" in output.read_text(encoding="utf-8")


def test_a_run_from_stdin_is_scored_on_both_qrels(cli, files, tmp_path):
    """With --gold-qrels each run is scored twice; one from stdin found nothing the second time and was refused."""
    args = ["--gold-qrels", files["gold"], "-m", "RR,P@1"]
    by_file, by_stdin = tmp_path / "file.html", tmp_path / "stdin.html"
    assert cli("report", files["qrels"], files["reranked"], *args, "-o", str(by_file)).exit_code == 0
    result = cli("report", files["qrels"], "-", *args, "-o", str(by_stdin), input=Path(files["reranked"]).read_text())
    assert result.exit_code == 0, result.stderr

    def cells(path: Path) -> list[tuple[str, str]]:
        return re.findall(r'<td class="num (derived|gold)">([^<]*)', path.read_text(encoding="utf-8"))

    assert cells(by_stdin) == cells(by_file) == [("derived", "0.9375"), ("gold", "0.8125"), ("derived", "0.8750"), ("gold", "0.6250")]
    read = json.loads(Path(f"{by_stdin}.manifest.json").read_text())["inputs"]
    digest = next(i for i in read if i["path"] == "-")
    assert digest["sha256"] == hashlib.sha256(Path(files["reranked"]).read_bytes()).hexdigest()


def test_qrels_from_stdin_serve_every_section(cli, files, tmp_path):
    """The metrics, the lift and the label warnings each read QRELS: from stdin, the second found it empty."""
    output = tmp_path / "r.html"
    result = cli("report", "-", files["base"], files["reranked"], "--judgments", files["judgments"], "--golden", files["golden"],
                 "--base", files["base"], "--reranked", files["reranked"], "-m", "RR", "--permutations", "200",
                 "--bootstrap", "200", "-o", str(output), input=Path(files["qrels"]).read_text())
    assert result.exit_code == 0, result.stderr
    html = output.read_text(encoding="utf-8")
    assert '<section id="metrics"' in html and '<section id="lift"' in html and "0.9375<sup>a</sup>" in html
    assert signature_rows(html)["label rule"] == "not recorded: &lt;stdin&gt; has no manifest from `semrel label`"


def test_agreement_is_shown_as_labelled_tables(cli, files, tmp_path):
    output = tmp_path / "r.html"
    assert cli("report", *report_args(files), "-o", str(output)).exit_code == 0
    html = output.read_text(encoding="utf-8")
    section = html[html.index('<section id="agreement"'):]
    assert "<h2>Agreement of the derived labels with the gold chunks</h2>" in section
    assert "0.200 (95% bootstrap interval -0.350 to 0.700)" in section and "60.0%" in section
    assert "gold chunks &darr;<br>derived labels &rarr;" in section
    assert re.search(r"<th>gold chunks: 1 \(relevant\)</th><td class=\"num\">2</td><td class=\"num diagonal\">6</td>", section)
    assert "RR: Kendall's tau -1.000" in section
    assert "gold chunks rank bm25 above &lt;i&gt;rr; derived labels rank &lt;i&gt;rr above bm25" in section
    assert "rankings.1" not in section and "[[0, 2]" not in section  # no flattened JSON dump


def test_a_ranking_every_run_ties_under_both_qrels_is_said_to_tie(cli, files, tmp_path):
    """Both qrels give every run one value: they agree, and tau was a bare 'n/a', as where they cannot be compared."""
    record = json.loads(Path(files["agreement"]).read_text())
    record["rankings"] += [{"measure": "P@1", "tau": None, "ref": {"bm25": 1.0, "<i>rr": 1.0}, "test": {"bm25": 1.0, "<i>rr": 1.0},
                            "swapped": []}]
    Path(files["agreement"]).write_text(json.dumps(record))
    output = tmp_path / "r.html"
    assert cli("report", *report_args(files), "-o", str(output)).exit_code == 0
    html = output.read_text(encoding="utf-8")
    assert "P@1: Kendall's tau n/a (every run ties under both)" in html and "RR: Kendall's tau -1.000" in html


def test_a_tau_agree_cannot_compute_is_said_why_in_agrees_words(cli, write, tmp_path):
    """The page showed a bare 'n/a' where `semrel agree` said why the tau is undefined: one qrels ties every run."""
    zeros, one = write("zeros.qrels", "q1 0 d1 0\nq1 0 d2 0\n"), write("one.qrels", "q1 0 d1 1\nq1 0 d2 0\n")
    runs = write("a.run", "q1 Q0 d1 1 2 a\n"), write("b.run", "q1 Q0 d2 1 2 b\n")
    agreed = cli("agree", zeros, one, *runs, "-m", "P@1", "-f", "json")
    why = "every run has the same value, so none ranks above another"
    assert agreed.exit_code == 0 and f"for P@1: under {zeros} {why}" in agreed.stderr
    output = tmp_path / "r.html"
    assert cli("report", "--agreement", write("agreement.json", agreed.stdout), "-o", str(output)).exit_code == 0
    assert f"P@1: Kendall's tau n/a (under the reference (zeros.qrels) {why})" in output.read_text(encoding="utf-8")


def test_free_form_agreement_figures_still_show(cli, files, tmp_path, write):
    free = write("free.json", json.dumps({"kappa": 0.61234, HOSTILE: {"linear": 0.7}}))
    output = tmp_path / "r.html"
    assert cli("report", files["qrels"], files["base"], "--agreement", free, "-o", str(output)).exit_code == 0
    html = output.read_text(encoding="utf-8")
    assert "Agreement figures" in html and 'kappa</th><td class="num">0.6123' in html and HOSTILE not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;.linear" in html
def test_labels_that_look_wrong_are_warned_about_at_the_top(cli, files, tmp_path):
    """Qrels from a deliberately bad rule (nothing relevant) and a default on a cliff of the curves."""
    Path(files["qrels"]).write_text("".join(f"{q} 0 c{i} 0\n" for i, q in enumerate(QUERIES)))
    Path(files["sensitivity"]).write_text("threshold\trun\tmeasure\tvalue\n" + "".join(
        f"{t}\t{run}\tRR\t{v if t <= 0.6 else v / 3}\n" for t in (0.58, 0.59, 0.6, 0.61, 0.62) for run, v in (("bm25", 0.6), ("rr", 0.7))))
    output = tmp_path / "r.html"
    result = cli("report", files["qrels"], "--golden", files["golden"], "--judgments", files["judgments"],
                 "--sensitivity", files["sensitivity"], "-o", str(output))
    assert result.exit_code == 0, result.stderr
    html = output.read_text(encoding="utf-8")
    top = html[: html.index('<section id="golden"')]  # right under the signature, before any section
    warnings = warning_boxes(top)
    assert any("only 0% of the 8 gold chunks are labelled relevant" in w for w in warnings)
    assert any("8 of 8 queries have no pair labelled relevant" in w for w in warnings)
    assert any("sits on a cliff of the sensitivity curve: RR of run &#39;bm25&#39; moves from 0.600 to 0.200" in w for w in warnings)
    assert all("semrel calibrate" in w for w in warnings) and result.stderr.count("warning") >= 3


def test_runs_the_derived_labels_order_against_the_gold_chunks_are_warned_about(cli, tmp_path):
    """Run a puts each query's gold chunk g first, run b the chunk x that the derived labels call relevant: the two
    qrels find opposite differences, both significant, and the top of the report (and stderr) says so."""
    def put(name: str, lines: list[str]) -> str:
        (tmp_path / name).write_text("".join(f"{line}\n" for line in lines))
        return str(tmp_path / name)

    derived, gold = (put(name, [f"q{i} 0 {c}{i} 1" for i in range(10)]) for name, c in (("derived.qrels", "x"), ("gold.qrels", "g")))
    a = put("a.run", [line for i in range(10) for line in (f"q{i} Q0 g{i} 1 2 a", f"q{i} Q0 x{i} 2 1 a")])
    b = put("b.run", [line for i in range(10) for line in (f"q{i} Q0 x{i} 1 2 b", f"q{i} Q0 g{i} 2 1 b")])
    output = tmp_path / "r.html"
    result = cli("report", derived, a, b, "--gold-qrels", gold, "-m", "RR,P@2", "--permutations", "1000", "-o", str(output))
    assert result.exit_code == 0, result.stderr
    said = ("the derived labels and the gold chunks order runs oppositely where one of them finds the difference significant: "
            "on RR the gold chunks rank a above b (1.0000 against 0.5000), the derived labels b above a (1.0000 against 0.5000; "
            "significant on both). A comparison on the derived labels may be reversed")
    assert [w[:len(said)] for w in top_warnings(output.read_text(encoding="utf-8"))] == [said]  # P@2: a tie, no warning
    assert result.stderr.count(said) == 1 and "semrel calibrate" in result.stderr
    # the same qrels twice: nothing reversed, nothing said
    assert not top_warnings(cli_report(cli, tmp_path, gold, a, b))


def test_runs_on_the_judges_own_model_are_named_under_the_metrics(cli, files, tmp_path):
    """Labels from the model a dense run retrieved with can favour that run: the metrics say which runs did, from the
    runs' manifests and the judge's; a run on another model, or without a manifest, is not named."""
    for run, params in ((files["base"], {"method": "hybrid", "model": "all-MiniLM-L6-v2"}),
                        (files["reranked"], {"method": "dense", "model": "another-model"})):
        Path(f"{run}.manifest.json").write_text(json.dumps({"params": params}), encoding="utf-8")
    output = tmp_path / "r.html"
    assert cli("report", files["qrels"], files["base"], files["reranked"], "--judgments", files["judgments"], "-m", "RR",
               "-o", str(output)).exit_code == 0
    note = re.findall(r'<p class="muted own-model">([^<]*)</p>', output.read_text(encoding="utf-8"))
    assert note == ["bm25 retrieved with the judge&#39;s own model (all-MiniLM-L6-v2): labels it derives can favour such runs "
                    "over lexical ones (docs/judge.md, &#39;Generated answers&#39;); judge with another model where that "
                    "comparison matters (p held its kappa with all-mpnet-base-v2: docs/judge.md, &#39;Another judge model&#39;)."]
    Path(f"{files['base']}.manifest.json").unlink()
    assert cli("report", files["qrels"], files["base"], files["reranked"], "--judgments", files["judgments"], "-m", "RR",
               "-o", str(output)).exit_code == 0
    assert "own-model" not in output.read_text(encoding="utf-8")


def test_runs_compared_on_few_queries_are_warned_about_at_the_top_once(cli, tmp_path, recwarn):
    """The warning `semrel compare` gives (paired tests of fewer than 5 differences mean little) left the report as a
    Python warning, with a line of semrel's source, once per qrels, and not on the page."""
    def put(name: str, lines: list[str]) -> str:
        (tmp_path / name).write_text("".join(f"{line}\n" for line in lines))
        return str(tmp_path / name)

    derived, gold = (put(name, [f"q{i} 0 {c}{i} 1" for i in range(3)]) for name, c in (("derived.qrels", "x"), ("gold.qrels", "g")))
    a = put("a.run", [line for i in range(3) for line in (f"q{i} Q0 g{i} 1 2 a", f"q{i} Q0 x{i} 2 1 a")])
    b = put("b.run", [f"q{i} Q0 {c}{i} 1 2 b" for i, c in enumerate("xxg")])
    output = tmp_path / "r.html"
    result = cli("report", derived, a, b, "--gold-qrels", gold, "-m", "RR", "--permutations", "200", "-o", str(output))
    assert result.exit_code == 0, result.stderr
    said = "the runs are compared on 3 queries: paired tests of so few differences mean little"
    assert [w[:len(said)] for w in top_warnings(output.read_text(encoding="utf-8"))] == [said]
    assert result.stderr.count(f"semrel: warning: {said}") == 1 and not [w for w in recwarn if said in str(w.message)]
    # one run is tested against none: the warning of paired tests stood at the top of a report that holds none
    alone = cli("report", derived, a, "--gold-qrels", gold, "-m", "RR", "-o", str(output))
    assert alone.exit_code == 0, alone.stderr
    assert "paired tests" not in alone.stderr and not top_warnings(output.read_text(encoding="utf-8"))


def test_a_lift_on_few_queries_is_warned_about_at_the_top_once(cli, tmp_path):
    """lift gives compare's words for its paired tests over fewer than 5 queries: the lift section alone said nothing,
    and with the metric table too the page says it once."""
    (tmp_path / "q.qrels").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(3)))
    (tmp_path / "a.run").write_text("".join(f"q{i} Q0 x{i} 1 2 a\nq{i} Q0 d{i} 2 1 a\n" for i in range(3)))
    (tmp_path / "b.run").write_text("".join(f"q{i} Q0 d{i} 1 2 b\nq{i} Q0 x{i} 2 1 b\n" for i in range(3)))
    qrels, a, b, output = str(tmp_path / "q.qrels"), str(tmp_path / "a.run"), str(tmp_path / "b.run"), tmp_path / "r.html"
    said = "the runs are compared on 3 queries: paired tests of so few differences mean little"
    for runs in ([], [a, b]):
        result = cli("report", qrels, *runs, "--base", a, "--reranked", b, "-m", "RR", "--permutations", "200",
                     "-o", str(output))
        assert result.exit_code == 0, result.stderr
        assert [w[:len(said)] for w in top_warnings(output.read_text(encoding="utf-8"))] == [said]
        assert result.stderr.count(said) == 1


def test_a_cutoff_past_every_runs_depth_is_warned_about_at_the_top_once(cli, tmp_path):
    """R@100 over runs of 20 is recall at 20: `eval`, `compare` and `lift` said so, the report's metric table (`semrel run`'s
    R@100 of its 20-chunk runs, before init wrote R@20) did not."""
    (tmp_path / "q.qrels").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(3)))
    (tmp_path / "a.run").write_text("".join(f"q{i} Q0 d{i} 1 2 a\nq{i} Q0 x{i} 2 1 a\n" for i in range(3)))
    qrels, run, output = str(tmp_path / "q.qrels"), str(tmp_path / "a.run"), tmp_path / "r.html"
    result = cli("report", qrels, run, "--gold-qrels", qrels, "-m", "RR,P@5", "-o", str(output))
    assert result.exit_code == 0, result.stderr
    said = ("P@5: no run ranks more than 2 documents for a query, so it counts the top 2 (as trec_eval does); retrieve deeper "
            "(-k), unless the runs hold all their retriever found (BM25 ranks only the chunks sharing a word with the query), or "
            "ask for a cutoff of 2 or less")
    assert top_warnings(output.read_text(encoding="utf-8")) == [said]
    assert result.stderr.count(f"semrel: warning: {said}") == 1


def cli_report(cli, folder: Path, qrels: str, *runs: str) -> str:
    output = folder / "same.html"
    assert cli("report", qrels, *runs, "--gold-qrels", qrels, "-m", "RR", "-o", str(output)).exit_code == 0
    return output.read_text(encoding="utf-8")


def test_a_refit_of_every_coefficient_marks_the_sensitivity_curves_at_its_cut(cli, files, tmp_path):
    """Labels from `calibrate --fit features` are cuts on p recomputed from the features, the p `sensitivity
    --calibration` sweeps: the report marks its curves there and warns of a cliff at that cut."""
    from semrel.formats.manifest import write_manifest
    from semrel.judging.labels import ProbabilityRule

    rule = ProbabilityRule(cut=0.6, calibration={"fit": "features"}, refit=(0.5, -1.0, 0, 0, 0, 0, 0, 0, 0))
    write_manifest(files["qrels"], params=rule.params())
    Path(files["sensitivity"]).write_text("threshold\trun\tmeasure\tvalue\n" + "".join(
        f"{t}\t{run}\tRR\t{v if t <= 0.6 else v / 3}\n" for t in (0.58, 0.59, 0.6, 0.61, 0.62) for run, v in (("bm25", 0.6), ("rr", 0.7))))
    output = tmp_path / "r.html"
    result = cli("report", files["qrels"], "--sensitivity", files["sensitivity"], "-o", str(output))
    assert result.exit_code == 0, result.stderr
    html = output.read_text(encoding="utf-8")
    assert "sits on a cliff of the sensitivity curve: RR of run &#39;bm25&#39; moves from 0.600 to 0.200" in html
    # with the judgments (features beside p), the score section shows that recomputed p, cut where the labels are
    from semrel.judging import labels

    rows = [json.loads(line) for line in Path(files["judgments"]).read_text().splitlines()]
    x = {(r["query_id"], r["chunk_id"]): [-0.4 + 0.2 * int(r["chunk_id"][1:]) if r["chunk_id"].startswith("c") else -0.5,
                                          0.1, 0.5, 0.1, 0.1, -1.0, 0.5] for r in rows}
    Path(files["judgments"]).write_text("".join(json.dumps({**r, "p": 0.5, "features": {
        **dict(zip(labels.FEATURES, x[r["query_id"], r["chunk_id"]])), "with_gold": 1.0}}) + "\n" for r in rows))
    q = {k: float(labels.probability(v, True, rule.refit)[0]) for k, v in x.items()}
    result = cli("report", files["qrels"], "--judgments", files["judgments"], "--golden", files["golden"], "-o", str(output))
    assert result.exit_code == 0, result.stderr
    scores = output.read_text(encoding="utf-8").split('<section id="scores"')[1].split("</section>")[0]
    gold_share = np.mean([q[k] >= 0.6 for k in q if k[1].startswith("c")])
    assert 0 < gold_share < 1 and f'<td class="num">0.600</td><td class="num">{gold_share:.3f}</td>' in scores


def test_the_manifest_records_every_option_that_changes_the_page(cli, files, tmp_path):
    """It recorded the test, correction and seed: not alpha, the draws, --rel-level, lift's depth and top."""
    output = tmp_path / "report.html"
    result = cli("report", files["qrels"], files["base"], files["reranked"], "-o", output, "--alpha", "0.01", "--rel-level", "2")
    assert result.exit_code == 0, result.stderr
    params = json.loads(Path(f"{output}.manifest.json").read_text())["params"]
    assert params["alpha"] == 0.01 and params["rel_level"] == 2 and params["permutations"] == 10_000
    assert {"bootstrap", "depth", "top", "on", "thresholds", "baseline"} <= set(params)


def test_the_manifest_records_the_values_of_the_options_and_every_file_read(cli, files, tmp_path):
    """Each option that changes the page is recorded with its value (a key present as null was taken for recorded), and
    the inputs list the curves and agreement figures read besides the ones the page's sections name."""
    output = tmp_path / "report.html"
    result = cli("report", files["qrels"], files["base"], files["reranked"], "-m", "RR", "--permutations", "200",
                 "--bootstrap", "200", "--all-pairs", "--title", "My <b>title</b>", "--places", "2", "--base", files["base"],
                 "--reranked", files["reranked"], "--depth", "5", "--top", "3", "--judgments", files["judgments"],
                 "--sensitivity", files["sensitivity"], "--agreement", files["agreement"], "-o", output)
    assert result.exit_code == 0, result.stderr
    manifest = json.loads(Path(f"{output}.manifest.json").read_text())
    params = manifest["params"]
    assert (params["all_pairs"], params["title"], params["places"], params["depth"], params["top"]) == (True, "My <b>title</b>", 2, 5, 3)
    assert (params["measures"], params["permutations"], params["bootstrap"]) == (["RR"], 200, 200)
    read = {files[k] for k in ("qrels", "base", "reranked", "judgments", "sensitivity", "agreement")}
    assert {i["path"] for i in manifest["inputs"]} == read | {f"{files[k]}.manifest.json" for k in ("qrels", "judgments")}
    assert "My &lt;b&gt;title&lt;/b&gt;" in output.read_text(encoding="utf-8")
