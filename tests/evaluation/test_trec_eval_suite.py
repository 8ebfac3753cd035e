"""trec_eval's own test suite, replayed: `semrel eval -f trec` with the options of each case of its
`make quicktest` must print the expected output file byte for byte.

The files are trec_eval's test/ folder (NIST), kept outside the repository in
../shared/data/trec_eval_test (SOURCE.md there lists the command line behind each out.* file);
they are read from there (or SEMREL_DATA) at test time, and the tests skip where the folder is absent.
"""

from __future__ import annotations

import difflib

import pytest

from helpers import SHARED_DATA

SUITE = SHARED_DATA / "trec_eval_test"

# (expected output, qrels, run, trec_eval's options), as in trec_eval's Makefile (quicktest)
CASES = [
    ("out.test", "qrels.test", "results.test", []),
    ("out.test", "qrels.test.with-comments", "results.test", []),
    ("out.comment.test", "qrels.comment.test", "results.comment.test", []),
    ("out.test.a", "qrels.test", "results.test", ["-m", "all_trec"]),
    ("out.test.aq", "qrels.test", "results.test", ["-m", "all_trec", "-q"]),
    ("out.test.aqc", "qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-c"]),
    ("out.test.aqcM", "qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-c", "-M100"]),
    ("out.test.aql", "qrels.rel_level", "results.test", ["-m", "all_trec", "-mrelstring.20", "-q", "-l2"]),
    ("out.test.meas_params", "qrels.test", "results.test",
     "-q -miprec_at_recall..10,.20,.25,.75,.50 -m P.5,7,3 -m recall.20,2000 -m Rprec_mult.5.0,0.2,0.35 -mutility.2,-1,0,0 "
     "-m 11pt_avg..25,.5,.75 -mndcg.1=3,2=9,4=4.5 -mndcg_cut.10,20,23.4 -msuccess.2,5,20".split()),
    ("out.test.aqZ", "qrels.test", "results.test", ["-q", "-m", "all_trec", "-Z", "zscores_file"]),
    ("out.test.qrels_jg", "qrels.123", "results.test", ["-m", "qrels_jg", "-q", "-R", "qrels_jg"]),
    ("out.test.prefs", "prefs.test", "prefs.results.test", ["-m", "all_prefs", "-q", "-R", "prefs"]),
    ("out.test.qrels_prefs", "qrels.test", "results.test", ["-m", "all_prefs", "-q", "-R", "qrels_prefs"]),
]

needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason=f"trec_eval's test files are not at {SUITE}")


def _options(options: list[str]) -> list[str]:
    """trec_eval's options as given to semrel: a file argument (-Z) is found in the suite's folder."""
    found = list(options)
    for i, option in enumerate(found[:-1]):
        if option == "-Z":
            found[i + 1] = str(SUITE / found[i + 1])
    return found


@needs_suite
@pytest.mark.parametrize("expected,qrels,run,options", CASES, ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_trec_eval_output_line_for_line(cli, expected, qrels, run, options):
    result = cli("eval", SUITE / qrels, SUITE / run, *_options(options), "-f", "trec")
    assert result.exit_code == 0, result.output
    wanted = (SUITE / expected).read_text()
    diff = list(difflib.unified_diff(wanted.splitlines(), result.stdout.splitlines(), "trec_eval", "semrel", lineterm="", n=0))
    assert result.stdout == wanted, "\n".join(diff[:40])


@needs_suite
def test_every_expected_output_is_replayed():
    assert {p.name for p in SUITE.glob("out.*")} == {c[0] for c in CASES}


@needs_suite
def test_truncated_run_lines_carry_text_after_the_sixth_field(cli):
    """results.trunc's lines end in free text ('STANDARD more junk at'): trec_eval reads six fields."""
    assert len((SUITE / "results.trunc").read_text().splitlines()[0].split()) > 6
    result = cli("eval", SUITE / "qrels.test", SUITE / "results.trunc", "-m", "num_ret,runid", "-f", "trec")
    assert result.stdout.splitlines() == [f"{'runid':<22}\tall\tSTANDARD", f"{'num_ret':<22}\tall\t584"]
