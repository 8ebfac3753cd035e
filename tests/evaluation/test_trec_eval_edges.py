"""Small inputs on which semrel's `-f trec` output once differed from trec_eval's, found by scoring random qrels and runs
with both (a trec_eval 10.0 built from NIST's source): each expected text is what that trec_eval printed. Means that
land on a rounding boundary (0.00625, 0.37305) print trec_eval's last digit only where the sums are made in its order."""

from __future__ import annotations

import pytest

import semrel
from helpers import assert_one_error

JUDGMENT_GROUPS = ("".join(f"q1 1 d{i} 1\n" for i in range(7)) + "q1 2 d0 1\nq1 2 d1 1\n" + "".join(f"q1 0 d{i} 1\n" for i in range(6))
                   + "q2 0 x 1\nq3 0 x 1\nq4 0 x 1\n")
GROUPS_RUN = "".join(f"q1 Q0 d{i} {i + 1} {10 - i} r\n" for i in range(7)) + "q2 Q0 y 1 1 r\nq3 Q0 y 1 1 r\nq4 Q0 y 1 1 r\n"


@pytest.mark.parametrize("qrels,run,options,expected", [
    # groups 1, 2, 0 of q1 (7, 2 and 6 relevant of 200): 0.025 as trec_eval sums them, sorted by id, and the mean of the
    # four queries 0.00625 rounds down; summed in the file's order it came out a hair above (0.0063)
    (JUDGMENT_GROUPS, GROUPS_RUN, ["-R", "qrels_jg", "-m", "P_avgjg.200"],
     "P_avgjg_200           \tq1\t0.0250\nP_avgjg_200           \tq2\t0.0000\nP_avgjg_200           \tq3\t0.0000\n"
     "P_avgjg_200           \tq4\t0.0000\nP_avgjg_200           \tall\t0.0062\n"),
    # p^4 + 0.1 p for q1 (u unjudged at rank 2), with p^k multiplied out rank by rank and the unjudged summed one by one
    # as m_rbp_resid.c does: the mean 0.37305 rounds up (the closed form less the judged ones made it 0.3730)
    ("q1 0 a 1\nq1 0 c 1\nq1 0 d 1\nq2 0 a 1\n", "q1 Q0 a 1 4 r\nq1 Q0 u 2 3 r\nq1 Q0 c 3 2 r\nq1 Q0 d 4 1 r\nq2 Q0 a 1 1 r\n",
     ["-m", "rbp_resid"],
     "rbp_resid             \tq1\t0.7461\nrbp_resid             \tq2\t0.0000\nrbp_resid             \tall\t0.3731\n"),
    # a gain for documents outside the qrels and none for the ideal ranking: inf, printed as C's %6.4f pads it
    ("q2 0 a1 1\n", "q2 Q0 x 1 2 run\nq2 Q0 a1 2 1 run\n", ["-m", "G.-1=2"],
     "G_-1=2                \tq2\t   inf\nG_-1=2                \tall\t   inf\n"),
    # a cutoff far past the ranking: trec_eval prints the 3 documents there are; semrel made a grid k wide and ran out of memory
    ("q1 0 d1 1\nq1 0 d2 -1\nq1 0 d3 2\n", "q1 Q0 d1 1 1.0 r\nq1 Q0 d3 2 1.0 r\nq1 Q0 d2 3 1.0 r\n", ["-m", "relstring.100000000000"],
     "relstring_100000000000\tq1\t'2.1'\n"),
], ids=["group-order", "rbp_resid-powers", "inf-width", "relstring-past-the-ranking"])
def test_output_equals_trec_eval(cli, write, qrels, run, options, expected):
    result = cli("eval", write("q.qrels", qrels), write("r.run", run), "-q", *options, "-f", "trec")
    assert result.exit_code == 0, result.output
    assert result.stdout == expected


def test_set_f_takes_trec_evals_beta(cli, write):
    """set_F.BETA was refused as an unknown measure; trec_eval names it by the text given (0.50, not 0.5)."""
    result = cli("eval", write("q.qrels", "q 0 a 1\nq 0 b 1\nq 0 c 0\n"), write("r.run", "q Q0 a 1 3 r\nq Q0 c 2 2 r\nq Q0 x 3 1 r\n"),
                 "-m", "set_F.0.50", "-m", "set_F.2", "-f", "trec")
    assert result.stdout == "set_F_0.50            \tall\t0.3750\nset_F_2               \tall\t0.4286\n", result.output
    assert_one_error(cli("eval", write("q.qrels", "q 0 a 1\n"), write("r.run", "q Q0 a 1 1 r\n"), "-m", "set_F.0.5,2"),
                     "measure 'set_F.0.5,2': set_F takes one beta, e.g. set_F.0.5", code=2)


def test_a_negative_relevance_level_is_refused(cli, write):
    """trec_eval takes -l -1 and then counts every unjudged document as relevant (it codes them -1 in the ranking): a
    negative grade marks a document unjudged, so no level below 0 means anything."""
    assert_one_error(cli("eval", write("q.qrels", "q 0 a 1\n"), write("r.run", "q Q0 a 1 1 r\n"), "-l", "-1"),
                     "Invalid value for '-l' / '--rel-level': -1 is not in the range x>=0.", code=2)


GRADED = ("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d9 1\nq3 0 d7 1\nq3 0 d6 3\nq3 0 d5 -1\nq4 0 d1 1\nq4 0 d2 2\nq5 0 d1 0\n"
          "q6 0 d1 1\n")
GRADED_RUN = ("q1 Q0 d5 1 9 r\nq1 Q0 d3 2 8 r\nq1 Q0 d2 3 7 r\nq1 Q0 d1 4 6 r\nq2 Q0 d9 1 5 r\nq3 Q0 d7 1 3 r\nq3 Q0 d5 2 2 r\n"
              "q3 Q0 d6 3 1 r\nq4 Q0 d2 1 1 r\nq4 Q0 d8 2 0 r\nq5 Q0 d1 1 1 r\nq5 Q0 d4 2 0 r\nq6 Q0 d9 1 1 r\n")


TREC_EVAL_10 = [
    # log((1 + S) / (1 + R - S)), S = AP x R: q2 and q3 find theirs first, q6 none; q5 has nothing relevant
    ("yaap", "yaap", "0.0000 0.6931 0.6931 0.0000 0.0000 -0.6931 0.1155"),
    ("dcg", "dcg", "1.6925 1.0000 2.5000 2.0000 0.0000 0.0000 1.1988"),
    ("ideal_dcg", "ideal_dcg", "2.6309 1.0000 3.6309 2.6309 0.0000 1.0000 1.8155"),
    ("dcg.1=3,2=9", "dcg_1=3,2=9", "6.9704 3.0000 4.5000 9.0000 0.0000 0.0000 3.9117"),
    ("dcg.-1=2", "dcg_-1=2", "3.6925 1.0000 2.5000 3.2619 1.2619 2.0000 2.2860"),  # a gain for documents outside the qrels
    ("ideal_dcg.2=5", "ideal_dcg_2=5", "5.6309 1.0000 3.6309 5.6309 0.0000 1.0000 2.8155"),
    ("rbp_resid.p=0.8", "rbp_resid_p=0.8", "0.6096 0.0000 0.6720 0.8000 0.8000 1.0000 0.6469"),
    ("rbp_resid.p=0.80,1=3", "rbp_resid_p=0.80,1=3", "0.6096 0.0000 0.6720 0.8000 0.8000 1.0000 0.6469"),  # 1=3 ignored
]


@pytest.mark.parametrize("measure,label,values", TREC_EVAL_10, ids=[case[0] for case in TREC_EVAL_10])
def test_trec_eval_10_measures(cli, write, measure, label, values):
    """yaap, dcg and ideal_dcg and rbp_resid's p (trec_eval 10's, once refused as unknown) print what trec_eval -c -q prints."""
    result = cli("eval", write("q.qrels", GRADED), write("r.run", GRADED_RUN), "-q", "-m", measure, "-f", "trec")
    assert result.exit_code == 0, result.output
    expected = zip(["q1", "q2", "q3", "q4", "q5", "q6", "all"], values.split())
    assert result.stdout == "".join(f"{label:<22}\t{q}\t{v}\n" for q, v in expected)


def test_all_trec_leaves_out_what_trec_eval_leaves_out(cli, write):
    """trec_eval's all_trec names neither yaap nor dcg nor ideal_dcg."""
    result = cli("eval", write("q.qrels", GRADED), write("r.run", GRADED_RUN), "-m", "all_trec", "-f", "trec")
    names = {line.split()[0] for line in result.stdout.splitlines()}
    assert {"ndcg", "rbp_resid", "unj_5"} <= names and not names & {"yaap", "dcg", "ideal_dcg"}


def test_no_summary_prints_what_trec_eval_n_prints(cli, write):
    """-n (trec_eval -q -n): each query's lines only; num_q and gm_map, which have none, vanish. It implies -q, and is
    refused with -f trec over several runs, whose per-query lines would not say which run they are."""
    qrels, run = write("q.qrels", GRADED), write("r.run", GRADED_RUN)
    result = cli("eval", qrels, run, "-n", "-m", "map,num_q,gm_map,relstring.3", "-f", "trec")
    assert result.stdout == "".join(f"map                   \t{q}\t{ap}\nrelstring_3           \t{q}\t'{rel}'\n" for q, ap, rel in [
        ("q1", "0.5000", "-20"), ("q2", "1.0000", "1"), ("q3", "0.8333", "1.3"), ("q4", "0.5000", "2-"), ("q5", "0.0000", "0-"),
        ("q6", "0.0000", "-")]), result.output
    table = cli("eval", qrels, run, "-n", "-m", "AP", "-f", "csv").stdout.splitlines()
    assert table[0] == "query,measure,r" and len(table) == 7 and not any(line.startswith("all,") for line in table)
    assert_one_error(cli("eval", qrels, run, run, "-n", "-f", "trec"),
                     "-n with -f trec prints lines that do not name their run: give one run, or another --format", code=2)


def test_the_all_row_adds_the_queries_one_after_another_as_trec_eval_does(cli, write):
    """16 queries whose P_20 (c/20 each) average to 0.54375 between two printed decimals: numpy's pairwise sum made it
    0.54374999..., printed 0.5437; trec_eval adds each query's value to the total in turn (te_acc_meas: value += q_value)
    and divides by the number of queries, 0.54375000...01, printed 0.5438 (found by a fuzz against pytrec_eval's per-query
    values; no trec_eval binary here, so the reference is its arithmetic)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    counts = [2, 14, 16, 3, 5, 16, 12, 11, 15, 0, 15, 1, 9, 19, 18, 18]
    qrels = {f"q{i + 1:02d}": {f"d{k}": 1 for k in range(c)} or {"d0": 0} for i, c in enumerate(counts)}
    run = {q: {f"d{k}": float(20 - k) for k in range(20)} for q in qrels}
    text = "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    ranking = "".join(f"{q} Q0 {d} {k + 1} {s:g} t\n" for q, docs in run.items() for k, (d, s) in enumerate(docs.items()))
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"P_20"}).evaluate(run)
    total = 0.0
    for q in sorted(per_query):  # trec_eval's order: the run's queries by id
        total += per_query[q]["P_20"]
    assert total / 16 == 0.5437500000000001 and sum(counts) / 20 / 16 == 0.54375
    result = cli("eval", write("q.qrels", text), write("r.run", ranking), "-m", "P.20", "-f", "trec")
    assert result.stdout == "P_20                  \tall\t0.5438\n", result.output
    assert semrel.evaluate(qrels, run, ["P@20"])["P@20"] == total / 16
