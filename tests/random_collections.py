"""Random qrels and runs for comparing semrel's measures with pytrec_eval and ir_measures (hypothesis).

Graded and negative grades, tied scores (0.0 and -0.0 among them), ids whose byte order differs from their
numeric order (d9 vs d10, d1 vs d10, 9 vs 10) or is no ASCII order (é, 日本: trec_eval's strcmp compares UTF-8
bytes), queries on one side only and empty runs: the cases where tools disagree. Scores are floats: pytrec_eval
keeps each score as a C float, so two doubles a float cannot tell apart would tie there and not in trec_eval 10.
"""

from __future__ import annotations

from hypothesis import strategies as st

QUERIES = [f"q{i}" for i in range(1, 7)]
DOCS = [*(f"d{i}" for i in range(1, 13)), "9", "10", "01", "é", "e", "日本"]
FLOAT_MAX = 3.4028234663852886e38  # the largest float, and 2^-149 the smallest above 0: both a float exactly
GRADES = st.sampled_from([-1, 0, 0, 1, 1, 2, 3])
SCORES = st.one_of(st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.0, FLOAT_MAX, -FLOAT_MAX, 2.0**-149]),
                   st.floats(-5, 5, allow_nan=False, width=32))


@st.composite
def collections(draw):
    """(qrels dict, run dict, relevance level)."""
    qrels = {}
    for q in draw(st.lists(st.sampled_from(QUERIES), min_size=1, max_size=5, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=8, unique=True))
        grades = {d: draw(GRADES) for d in docs}
        if max(grades.values()) < 0:  # pytrec_eval hangs on a query whose only grades are negative; keep one >= 0
            grades[docs[0]] = 0
        qrels[q] = grades
    run = {}
    for q in draw(st.lists(st.sampled_from(QUERIES), max_size=6, unique=True)):
        docs = draw(st.lists(st.sampled_from(DOCS), max_size=12, unique=True))
        run[q] = {d: float(draw(SCORES)) for d in docs}
    return qrels, run, draw(st.sampled_from([1, 1, 2, 3]))
