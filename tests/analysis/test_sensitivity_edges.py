"""`semrel sensitivity` at its edges, found by mutation testing: the grid's ends, the sweep's defaults, the warning
that every threshold lies beyond the scores, and the cliff warning's window, share and tau boundaries."""

from __future__ import annotations

import numpy as np
import pytest

from semrel.analysis.sensitivity import (
    check_range,
    choose_sweep,
    cliff_warnings,
    legend,
    ranges_text,
    sensitivity,
    sensitivity_warnings,
    threshold_grid,
)
from semrel.analysis.significance import StatSettings
from semrel.judging import labels
from semrel.records import Judgment, Run

QUERIES = [f"q{i}" for i in range(6)]
GRID = [round(0.30 + k / 100, 2) for k in range(17)]  # 0.30 .. 0.46


def _judgments(p: float | None = None) -> list[Judgment]:
    """Per query: chunk a (R 0.57), b (0.83), z (0.30); with p on every pair but the last query's when `p` is given."""
    return [Judgment(q, f"{q}-{c}", 0.5, r, 0.5, "pool", p=p if p is not None and q != QUERIES[-1] else None)
            for q in QUERIES for c, r in (("a", 0.57), ("b", 0.83), ("z", 0.30))]


def _runs(count: int = 2) -> list[Run]:
    first = Run.from_columns(QUERIES, [f"{q}-a" for q in QUERIES], [1.0] * len(QUERIES), name="first")
    ids, docs = [q for q in QUERIES for _ in "zb"], [f"{q}-{c}" for q in QUERIES for c in "zb"]
    others = [Run.from_columns(ids, docs, [2.0, 1.0] * len(QUERIES), name=f"other{k}") for k in range(count - 1)]
    return [first, *others]


def test_a_grid_of_one_threshold_is_allowed():
    """start equal to stop is a grid of that one threshold, not 'start is above stop'."""
    assert threshold_grid(0.5, 0.5, 0.01) == [0.5]


def test_thresholds_of_zero_and_one_on_p_are_in_range():
    """0 and 1 are probabilities: a sweep on p may reach them; just past them is refused."""
    check_range("p", [0.0, 0.5, 1.0])
    with pytest.raises(Exception, match="must lie in 0..1"):
        check_range("p", [-0.01, 0.5])


def test_a_given_at_is_kept_with_a_refit_calibration():
    """With a `calibrate --fit features` rule, at= defaults to the refit's cut but one given is kept."""
    refit = labels.ProbabilityRule(cut=0.3, refit=(0.0,) * (len(labels.FEATURES) + 2), calibration={"fit": "features"})
    assert choose_sweep(_judgments(0.5), calibration=refit).at == 0.3
    assert choose_sweep(_judgments(0.5), calibration=refit, at=0.5).at == 0.5


def test_ranges_text_says_never_for_no_range():
    """The conclusions table says 'never' where a run never wins, not an empty cell."""
    assert ranges_text([]) == "never"
    assert ranges_text([(0.5, 0.5), (0.6, 0.8)]) == "0.5, 0.6-0.8"


@pytest.mark.parametrize("grid, beyond", [
    ([0.83, 0.9], False),  # 0.83 labels the top pairs relevant and the rest not: a real split
    ([0.84, 0.9], True),  # above every R: nothing is relevant at any threshold
    ([0.2, 0.3], True),  # at or below every R: everything is relevant at every threshold
    ([0.2, 0.31], False),
])
def test_every_threshold_beyond_the_scores_is_warned_about_from_its_edges(grid, beyond):
    """The warning that each threshold labels every pair alike: a threshold equal to the highest score still splits the
    pairs (score >= threshold), one equal to the lowest does not."""
    result = sensitivity(_judgments(), _runs(), ["RR"], grid, at=grid[0], on="R")
    assert any("lies beyond the judgments' R" in n for n in result.warnings) == beyond


def test_sweeping_r_gives_no_note_about_pairs_without_p():
    """On R every pair has its score; the note that pairs without p are labelled by R >= 0.7 instead belongs to p."""
    judged = _judgments(0.5)
    on_r = sensitivity(judged, _runs(), ["RR"], [0.5, 0.6], at=0.5, on="R")
    assert not any("hold no probability p" in n for n in on_r.warnings)
    on_p = sensitivity(judged, _runs(), ["RR"], [0.4, 0.6], at=0.4, on="p")
    assert any("3 of 18 pairs hold no probability p" in n for n in on_p.warnings)


def test_the_legend_counts_the_pairs_of_runs():
    """Three runs make three comparisons within each threshold and measure."""
    result = sensitivity(_judgments(), _runs(3), ["RR"], [0.5, 0.6], at=0.5, on="R")
    assert "across the pairs of runs (3)" in legend(result)


def _cliff(at: float, step_at: float, before: float = 0.5, after: float = 0.3, on: str = "p") -> list[str]:
    values = np.array([[[before if t < step_at else after], [0.1]] for t in GRID])  # run b stays last
    return cliff_warnings(GRID, ["a", "b"], ["nDCG@10"], values, at, on)


def test_the_cliff_window_includes_its_edge():
    """A step exactly 0.05 (the window on p) from the chosen threshold is within it."""
    assert len(_cliff(0.38, 0.43)) == 1
    assert _cliff(0.38, 0.44) == []


def test_the_cliff_window_depends_on_the_score():
    """On p the window is 0.05 either side; on R (P, F) 0.02: a step 0.04 away is a cliff on p only."""
    assert len(_cliff(0.38, 0.42, on="p")) == 1
    assert _cliff(0.38, 0.42, on="R") == []
    assert len(_cliff(0.38, 0.40, on="R")) == 1


def test_a_chosen_threshold_at_the_grids_end_is_still_checked():
    """at = the grid's last threshold lies on the grid: a step within the window below it is a cliff."""
    (message,) = _cliff(0.46, 0.43)
    assert "moves from 0.300 to 0.500 between p 0.46 and 0.41" in message


def test_a_move_of_exactly_the_change_share_is_no_cliff():
    """More than 20% is a cliff: 0.625 to 0.5 (exactly 20%) is not, to 0.49 is."""
    assert _cliff(0.38, 0.40, before=0.625, after=0.5) == []
    assert len(_cliff(0.38, 0.40, before=0.625, after=0.49)) == 1


def test_the_change_is_a_share_of_the_value_at_the_chosen_threshold():
    """0.40 at the chosen threshold rising to 0.49 is a move of 22.5% of 0.40 (a cliff), though only 18% of 0.49."""
    (message,) = _cliff(0.38, 0.40, before=0.40, after=0.49)
    assert "moves from 0.400 to 0.490" in message and "order changes" not in message


def test_the_value_at_the_chosen_threshold_is_the_nearest_grid_points():
    """at between two grid points (0.384) is read at the nearer one (0.38), not the next one up."""
    (message,) = _cliff(0.384, 0.39)
    assert "moves from 0.500 to 0.300 between p 0.38 and 0.39" in message


def _order(at_values: list[float], other_values: list[float]) -> list[str]:
    values = np.array([[[v] for v in (at_values if t <= 0.38 else other_values)] for t in GRID])
    return cliff_warnings(GRID, [f"r{k}" for k in range(len(at_values))], ["nDCG@10"], values, 0.38, "p")


def test_the_order_warning_starts_below_a_tau_of_one_half():
    """Small moves, but the runs' order changes: tau exactly 0.5 is no cliff; tau 0.4 is, and the message says so."""
    assert _order([0.50, 0.50, 0.50, 0.50, 0.51], [0.50, 0.51, 0.52, 0.53, 0.53]) == []  # tau-b 0.5
    (message,) = _order([0.50, 0.51, 0.52, 0.53, 0.54], [0.50, 0.51, 0.54, 0.53, 0.52])  # tau-b 0.4
    assert "the runs' order changes (tau 0.40)" in message


def test_the_ranking_puts_equals_between_equal_neighbours():
    """'=' joins a run to the one before it where their values are equal, not only to the best run."""
    result = sensitivity(_judgments(), _runs(3), ["RR"], [0.5], at=0.5, on="R")
    assert result.ranking(np.array([0.9, 0.5, 0.5])) == "first > other0 = other1"
    assert result.ranking(np.array([0.2, 0.5, 0.5])) == "other0 = other1 > first"


@pytest.mark.parametrize("grid, at, taus", [([0.565, 0.7], 0.572, [-1.0, 1.0]), ([0.3, 0.5], 0.6, [None, -1.0])])
def test_a_chosen_threshold_off_the_grid_is_evaluated_at_itself(grid, at, taus):
    """At R >= 0.572 (or 0.6) chunk a (0.57) is not relevant, b (0.83) is: first (a) scores 0 and other0 (z, b) 0.5,
    and other0 wins on all six queries (exact p 2/64), not the nearest grid point's or the grid's last values."""
    result = sensitivity(_judgments(), _runs(), ["RR"], grid, at=at, on="R")
    assert result.reference.tolist() == [[0.0], [0.5]]
    assert result.conclusions[0].at == "other0"
    # tau with the order at `at` (first behind): -1 where first leads, 1 where it trails, nan (None) where both tie
    assert [None if np.isnan(tau) else tau for tau in result.taus[:, 0].tolist()] == taus


def test_pairs_the_fallback_labels_0_stay_0_at_a_threshold_of_0():
    """The last query's pairs have no p: R >= 0.7 labels them (a: 0, b: 1). A cut of p at 0 labels every other pair
    relevant, but not those: first (a) scores 1 on five queries and 0 on the last, other0 (z, b) 1 and 0.5."""
    result = sensitivity(_judgments(0.5), _runs(), ["RR"], [0.0, 0.6], at=0.6, on="p")
    assert result.values[0, :, 0].tolist() == pytest.approx([5 / 6, 5.5 / 6])


def test_a_cliff_is_warned_about_beside_the_other_notes():
    """p is 0.5 on every pair with one: a cut at 0.5 labels them all relevant, one at 0.51 none, so at=0.5 is on a cliff;
    the note on the pairs without p (labelled by R) does not hide it."""
    result = sensitivity(_judgments(0.5), _runs(), ["RR"], [0.45, 0.5, 0.51, 0.55], at=0.5, on="p")
    notes = sensitivity_warnings(result)
    assert any("hold no probability p" in n for n in notes) and any("sits on a cliff" in n for n in notes)


def test_runs_tied_at_every_threshold_are_no_cliff():
    """Flat curves on which the runs tie: tau is undefined (nan) everywhere, which is no change of order."""
    values = np.full((5, 2, 1), 0.5)
    assert cliff_warnings([0.4, 0.45, 0.5, 0.55, 0.6], ["a", "b"], ["RR"], values, 0.5, "p") == []


def test_runs_compared_on_few_queries_are_warned_about():
    """compare and lift warn of paired tests over fewer than 5 queries; the sweep tests the same differences, and on 2
    queries a constant difference (t's p of 0) called the first run significantly better at every threshold unsaid."""
    two = [j for j in _judgments() if j.query_id in QUERIES[:2]]
    result = sensitivity(two, _runs(), ["RR"], [0.5, 0.6], at=0.5, on="R", settings=StatSettings(test="t"))
    assert (result.conclusions[0].first_wins, result.conclusions[0].second_wins) == ([(0.5, 0.5)], [(0.6, 0.6)])
    assert any("compared on 2 queries: paired tests of so few differences mean little" in n for n in result.warnings)
    assert not any("so few differences" in n for n in sensitivity(_judgments(), _runs(), ["RR"], [0.5], at=0.5, on="R").warnings)
    assert not any("so few differences" in n for n in sensitivity(two, _runs(1), ["RR"], [0.5], at=0.5, on="R").warnings)
