"""Near-duplicate grouping, split targets and part assignment, and the files split and dedup write, pinned on
embeddings chosen by hand (the sentence model replaced), so each threshold, block boundary and rule is tested exactly."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from semrel.encoding import sentences
from semrel.errors import UsageError
from semrel.golden import neardup
from semrel.golden.curate import dedup_golden, import_golden_files, split_golden, split_plan
from semrel.golden.neardup import NearDuplicates, deduplicated, near_duplicate_groups, split_groups, split_targets
from semrel.records import GoldenItem


def unit(cosine: float, axis: int = 1) -> list[float]:
    """A unit vector whose cosine with [1, 0, 0] is `cosine`, the rest along `axis` (1 or 2)."""
    vector = [cosine, 0.0, 0.0]
    vector[axis] = math.sqrt(1 - cosine * cosine)
    return vector


@pytest.fixture
def embeddings(monkeypatch):
    """Replace the sentence model: `embeddings(vectors)` makes text i embed as vectors[i]."""

    def use(vectors):
        def fake(texts, model=None, advance=None, engine=None):
            assert len(texts) == len(vectors)
            return np.asarray(vectors, dtype=np.float32)

        monkeypatch.setattr(sentences, "sentence_embeddings", fake)

    return use


def one_hot(n: int) -> list[list[float]]:
    return np.eye(n).tolist()


def test_a_cosine_equal_to_the_threshold_joins_and_one_just_below_does_not(embeddings):
    """Documented as cosine >= threshold: a strict comparison (or a tolerance the wrong way) missed pairs at the threshold."""
    embeddings([[1.0, 0.0, 0.0], unit(0.95), unit(0.94, axis=2)])  # b and c: cosine 0.893
    found = near_duplicate_groups(["a", "b", "c"], 0.95)
    assert found.groups == [[0, 1], [2]]
    assert found.similarity(0, 1) == pytest.approx(0.95, abs=1e-6)
    assert near_duplicate_groups(["a", "b", "c"], 0.94).groups == [[0, 1, 2]]


def test_threshold_one_is_allowed_and_values_outside_zero_to_one_refused(embeddings):
    """threshold=1 (identical embeddings only) is in the documented range (0, 1]."""
    embeddings([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], unit(0.999)])
    assert near_duplicate_groups(["a", "b", "c"], 1.0).groups == [[0, 1], [2]]
    for bad in (0.0, 1.01, -0.5):
        with pytest.raises(UsageError, match=r"threshold= must be in \(0, 1\]"):
            near_duplicate_groups(["a", "b", "c"], bad)


def test_texts_equal_but_for_case_and_spacing_are_duplicates_whatever_their_embeddings(embeddings):
    """The rule's second half: equal after case and spacing are ignored joins even where the embeddings differ."""
    embeddings(one_hot(3))
    assert near_duplicate_groups(["Why  do bees sting?", "other", "why do BEES sting?"], 0.95).groups == [[0, 2], [1]]


def test_pairs_across_and_at_the_edges_of_blocks_are_found(embeddings, monkeypatch):
    """Embeddings are compared a block of rows at a time: a row at a block's end, or a pair in two blocks, was missable."""
    monkeypatch.setattr(neardup, "BLOCK", 2)
    vectors = one_hot(6)
    vectors[4] = vectors[1]  # row 1 (last of block 0) and row 4 (block 2)
    vectors[5] = vectors[3]  # row 3 (last of block 1) and row 5 (block 2)
    embeddings(vectors)
    assert near_duplicate_groups(list("abcdef"), 0.95).groups == [[0], [1, 4], [2], [3, 5]]


@pytest.mark.parametrize("block", [1, 3, 1024])
def test_groups_are_the_connected_components_of_the_similarity_graph_whatever_the_block(embeddings, monkeypatch, block):
    """Groups merge a block of pairs at a time (chains, and groups joined only by a later block): each must be the
    transitive closure a pair-by-pair union-find gives."""
    monkeypatch.setattr(neardup, "BLOCK", block)
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(60, 3))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    embeddings(vectors.tolist())
    texts = [f"q{i}" for i in range(55)] + ["Q1", " q2\t", "q3", "q54", "Q54 "]  # five equal earlier texts but for case and spacing
    similar = vectors @ vectors.T >= 0.95 - 1e-6
    parent = list(range(60))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for a, b in [*zip(*np.nonzero(similar)), (1, 55), (2, 56), (3, 57), (54, 58), (54, 59)]:
        parent[max(find(a), find(b))] = min(find(a), find(b))
    expected: dict[int, list[int]] = {}
    for i in range(60):
        expected.setdefault(find(i), []).append(i)
    groups = near_duplicate_groups(texts, 0.95).groups
    assert groups == sorted(expected.values())
    assert max(map(len, groups)) >= 5 and len(groups) >= 10  # chains of several texts and texts alone both occur


def test_split_targets_round_ratios_and_default_to_80_20():
    """Targets are ratio x total rounded (not truncated), a last ratio left out is the rest (however small), 0.8 the default."""
    assert split_targets(9, [0.75], None) == [7, 2]  # 6.75 rounds to 7
    assert split_targets(7, [0.5], None) == [4, 3]  # round(3.5) is 4
    assert split_targets(10000, [0.5, 0.4995], None) == [5000, 4995, 5]  # 0.0005 left: a third part
    assert split_targets(10, None, None) == [8, 2]
    assert split_targets(10, [0.7, 0.2, 0.1], None) == [7, 2, 1]  # they sum to 0.9999999999999999: no empty fourth part
    assert split_plan(10) == ([8, 2], ["train", "test"])
    with pytest.raises(UsageError, match="positive"):
        split_targets(10, [0.0, 0.5], None)


def test_split_plan_names_one_size_and_its_rest_part1_and_rest():
    """One --sizes value and the rest make two parts: part1 and rest (not train and test), even when one query is left."""
    assert split_plan(6, sizes=[2]) == ([2, 4], ["part1", "rest"])
    assert split_plan(6, sizes=[5]) == ([5, 1], ["part1", "rest"])


@pytest.mark.parametrize("seed", range(12))
def test_each_group_goes_to_the_first_part_with_room_so_sizes_are_met(seed):
    """Whatever the shuffle, the group of 3 only fits the second part and the singles fill the first: exact sizes,
    indices in file order. Filling the last part with room first left the group nowhere to fit."""
    assert split_groups([[0, 1, 2], [3], [4]], [2, 3], seed, list("abcde")) == [[3, 4], [0, 1, 2]]


@pytest.mark.parametrize("seed", range(6))
def test_a_group_that_fits_no_part_goes_to_the_part_with_most_room(seed):
    """The group of 4 fits neither part (rooms 2 and 3): it goes to the second, whose target it overshoots least."""
    assert split_groups([[0, 1, 2, 3], [4]], [2, 3], seed, list("abcde")) == [[4], [0, 1, 2, 3]]


def test_merging_duplicates_that_bring_nothing_leaves_the_kept_answers_as_they_were():
    """Only answers brought by the others replace the kept query's empty one: with none brought, it stays."""
    keep = GoldenItem("k", "x", ("",), ("a",), {"no_answer": True})
    [merged] = deduplicated([keep, GoldenItem("r", "x", ("",), ("a",))], NearDuplicates([[0, 1]], np.zeros((2, 1))))
    assert merged.reference_answers == ("",) and merged.gold_chunk_ids == ("a",)
    assert merged.meta == {"no_answer": True, "duplicates_removed": ["r"]}


def test_a_kept_query_without_an_answer_loses_its_no_answer_mark_with_the_answer_a_duplicate_brings():
    """MS MARCO marks a query without an answer no_answer: merged with a duplicate's answer, it kept the mark beside the
    answer, which said the query had none."""
    keep = GoldenItem("k", "x", (), ("a",), {"no_answer": True, "query_type": "numeric"})
    [merged] = deduplicated([keep, GoldenItem("r", "x", ("100 C",), ("b",))], NearDuplicates([[0, 1]], np.zeros((2, 1))))
    assert merged.reference_answers == ("100 C",) and merged.gold_chunk_ids == ("a", "b")
    assert merged.meta == {"query_type": "numeric", "duplicates_removed": ["r"]}


def test_a_removed_duplicates_other_fields_are_kept_by_its_id():
    """Its meta besides grades (COVID-QA's doc_id, answer_spans) and a user's own top-level keys were dropped with it;
    an earlier dedup's record of them is carried on."""
    keep = GoldenItem("k", "x", ("a",), ("c",), {"doc_id": 1, "grades": {"c": 2}}, {"source": "wiki"})
    first = GoldenItem("r1", "x", ("a",), ("c",), {"doc_id": 2, "answer_spans": [[0, 4]], "grades": {"c": 1}})
    second = GoldenItem("r2", "x", ("a",), (), {"duplicates_removed": ["old"],
                                                "duplicates_removed_fields": {"old": {"meta": {"doc_id": 9}}}}, {"source": "faq"})
    bare = GoldenItem("r3", "x", ("a",), ("c",))
    [merged] = deduplicated([keep, first, second, bare], NearDuplicates([[0, 1, 2, 3]], np.zeros((4, 1))))
    assert merged.meta == {"doc_id": 1, "grades": {"c": 2}, "duplicates_removed": ["r1", "r2", "r3", "old"],
                           "duplicates_removed_fields": {"old": {"meta": {"doc_id": 9}},
                                                         "r1": {"meta": {"doc_id": 2, "answer_spans": [[0, 4]]}},
                                                         "r2": {"extra": {"source": "faq"}}}}
    assert merged.extra == {"source": "wiki"}


def test_a_removed_duplicates_blank_answer_is_not_merged_into_the_kept_one():
    """A blank answer ("no answer given") brings nothing: merged, it became a second, empty reference answer."""
    notes: list[str] = []
    [merged] = deduplicated([GoldenItem("k", "x", ("A.",), ("a",)), GoldenItem("r", "x", ("", "B."), ("a",))],
                            NearDuplicates([[0, 1]], np.zeros((2, 1))), notes)
    assert merged.reference_answers == ("A.", "B.")
    assert notes == ["query 'r', removed as a near-duplicate of 'k', had reference answers 'B.' that 'k' lacked: merged into 'k'"]


def items(*queries: str) -> list[GoldenItem]:
    return [GoldenItem(f"q{n}", q, ("An answer.",), (f"d#{n}",)) for n, q in enumerate(queries, 1)]


def test_split_manifests_record_the_targets_and_each_parts_rows(embeddings, tmp_path):
    """Each part's manifest holds every target and that part's own row count."""
    embeddings(one_hot(5))
    parts = split_golden(items(*"abcde"), None, tmp_path, ratio=[0.6], seed=3, threshold=0.9)
    assert [len(p) for p in parts.values()] == [3, 2]
    for name, rows in (("train", 3), ("test", 2)):
        written = json.loads((tmp_path / f"{name}.jsonl.manifest.json").read_text())
        assert written["rows"] == rows and len((tmp_path / f"{name}.jsonl").read_text().splitlines()) == rows
        assert written["params"]["targets"] == [3, 2] and written["params"]["threshold"] == 0.9


def test_split_warns_of_a_part_left_empty_by_one_large_group(embeddings):
    """Three near-duplicates cannot be split 2/1: they go together and `test` gets none, which must be said."""
    embeddings([[1.0, 0.0, 0.0]] * 3)
    heard: list[str] = []
    parts = split_golden(items("a", "b", "c"), None, None, ratio=[0.6], threshold=0.95, warn=heard.append)
    assert {name: [i.query_id for i in part] for name, part in parts.items()} == {"train": ["q1", "q2", "q3"], "test": []}
    assert heard == ["test got no query of the 3 (targets 2, 1): give larger ratios or sizes"]


def test_dedup_manifests_record_the_threshold_and_the_report_rows(embeddings, tmp_path):
    """The report's manifest counts its groups (not the kept queries); both manifests hold the threshold used."""
    embeddings([[1.0, 0.0, 0.0], unit(0.9), [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    report, output = tmp_path / "groups.jsonl", tmp_path / "dedup.jsonl"
    result = dedup_golden(items("a", "b", "c", "d"), None, report, output, threshold=0.85)
    assert [i.query_id for i in result.kept] == ["q1", "q3", "q4"]
    assert json.loads((tmp_path / "groups.jsonl.manifest.json").read_text())["rows"] == 1
    for path in (report, output):
        assert json.loads(path.with_name(path.name + ".manifest.json").read_text())["params"]["threshold"] == 0.85
    assert json.loads((tmp_path / "dedup.jsonl.manifest.json").read_text())["rows"] == 3


def test_an_imports_qrels_manifest_counts_judgments_not_queries(tmp_path):
    """golden import --qrels-out: the qrels file has one line per gold chunk (5 here), its manifest must say 5, not 2."""
    source = tmp_path / "g.jsonl"
    source.write_text("".join(json.dumps({"query_id": q, "query": f"{q}?", "reference_answer": "x", "gold_chunk_ids": gold}) + "\n"
                              for q, gold in (("q1", ["a#0", "a#1"]), ("q2", ["b#0", "b#1", "b#2"]))))
    import_golden_files(str(source), tmp_path / "out.jsonl", qrels_out=tmp_path / "gold.qrels")
    assert len((tmp_path / "gold.qrels").read_text().splitlines()) == 5
    assert json.loads((tmp_path / "gold.qrels.manifest.json").read_text())["rows"] == 5
    assert json.loads((tmp_path / "out.jsonl.manifest.json").read_text())["rows"] == 2
