"""The report's SVG plots on their own: data drawn as text stays plain text, one plot's ids cannot collide with
another's on the page, nothing but the <svg> element is inlined, and the curves' end labels do not overlap."""

from __future__ import annotations

import html
import re
import warnings

import pytest

from semrel.report import plots


def test_labels_from_data_are_not_read_as_math():
    """A run or measure name with `$` started matplotlib's math mode: an unknown command in it failed the whole report."""
    curves = {r"RR $\notacommand$": {r"run $\oops$": [(0.5, 0.4), (0.6, 0.3)], "bm25": [(0.5, 0.2), (0.6, 0.25)]}}
    assert plots.sensitivity_curves(curves, [0.5]).startswith("<svg")
    assert plots.change_bars([0.5, -0.25, 0.0], r"cost $\notacommand$").startswith("<svg")


def test_an_svg_is_the_element_alone_with_every_id_and_reference_under_its_name():
    """Two plots on one page shared ids such as clip paths (one drew with the other's), or brought an XML prolog,
    comments and metadata into the HTML."""
    text = plots.score_histogram({"gold": [0.7, 0.8, 0.9], "not gold": [0.4, 0.5]}, [0.6], "F")
    assert text.startswith("<svg") and "<?xml" not in text and "<!--" not in text and "<metadata" not in text
    ids = re.findall(r'\bid="([^"]+)"', text)
    refs = re.findall(r'(?:href="#|url\(#)([^")]+)', text)
    assert ids and refs and all(i.startswith("scores-") for i in ids + refs)
    assert set(refs) <= set(ids)


@pytest.mark.parametrize("values, gap, expected", [
    ([0.5, 0.5, 0.5], 0.1, [0.5, 0.6, 0.7]),  # spread upwards when there is room
    ([0.95, 0.95], 0.1, [0.9, 1.0]),  # pushed down to stay inside the axes
    ([0.97, 0.0, 0.96, 0.95], 0.1, [1.0, 0.0, 0.9, 0.8]),  # in the order of the values, returned in theirs
    ([], 0.1, []),
])
def test_end_labels_are_spread_apart_inside_the_axes(values, gap, expected):
    """Labels at the lines' ends were drawn on top of each other, or above the top of the axes."""
    assert plots.spread(values, gap, 0.0, 1.0) == pytest.approx(expected)


def test_each_threshold_is_drawn_as_one_dashed_line():
    """The label thresholds were left off the score histograms or the sensitivity curves."""
    groups = {"gold": [0.7, 0.8, 0.9], "not gold": [0.4, 0.5]}
    curves = {"RR": {"a": [(0.5, 0.4), (0.6, 0.3)], "b": [(0.5, 0.2), (0.6, 0.25)]}}
    assert [plots.score_histogram(groups, t, "F").count("stroke-dasharray") for t in ([], [0.6], [0.6, 0.75])] == [0, 1, 2]
    assert [plots.sensitivity_curves(curves, t).count("stroke-dasharray") for t in ([], [0.55], [0.55, 0.6])] == [0, 1, 2]


def test_no_text_from_data_is_left_in_the_markup():
    """Text drawn as <text> elements needs the viewer's fonts and carries the data's text into the page."""
    text = plots.sensitivity_curves({"RR": {"run-named-xyzzy": [(0.5, 0.4), (0.6, 0.3)]}}, [0.5])
    assert "xyzzy" not in text and "<text" not in text


def test_curve_points_are_drawn_in_threshold_order_whatever_order_they_were_read_in():
    """Rows of a sensitivity file out of order drew a zigzag, with the run's label at the last row read, not the right end."""
    points = [(0.5, 0.4), (0.6, 0.3), (0.7, 0.35), (0.8, 0.1)]
    assert plots.sensitivity_curves({"RR": {"a": points[::-1]}}, []) == plots.sensitivity_curves({"RR": {"a": points}}, [])


def test_gains_are_green_and_losses_red():
    """The lift bars had gains and losses in each other's colour."""
    text = plots.change_bars([0.5, 0.25, -0.25, 0.0], "RR")
    assert (text.count("fill: #1b7837"), text.count("fill: #b2182b"), text.count("fill: #999999")) == (2, 1, 1)


def test_scores_that_are_all_equal_are_still_drawn():
    """Judge scores of one value gave the histogram bins of no width: a density of 0/0, drawn as nothing."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's "invalid value" where the bins have no width
        assert plots.score_histogram({"judged pairs": [0.5, 0.5, 0.5]}, [0.5], "R").startswith("<svg")


def test_each_plot_is_an_image_with_a_description():
    """The plots' text is drawn as outlines and the <svg> had no role or label: a screen reader found three unnamed
    graphics, the report's images without alt text."""
    scores = plots.score_histogram({"gold": [0.7, 0.8, 0.9], "not gold": [0.4, 0.5]}, [0.38], "p")
    lift = plots.change_bars([0.5, -0.25, 0.0, 0.1], "nDCG@10")
    curves = plots.sensitivity_curves({"RR": {"a": [(0.5, 0.4), (0.6, 0.3)], "b&<c": [(0.5, 0.2), (0.6, 0.25)]}}, [0.55])
    labels = [re.match(r'<svg role="img" aria-label="([^"]*)"', text) for text in (scores, lift, curves)]
    assert [html.unescape(m.group(1)) if m else None for m in labels] == [
        "Distribution of the judge's probability p of the gold and not gold pairs; dashed: 0.38",
        "Each query's change in nDCG@10, sorted: 2 gained, 1 lost, 1 unchanged",
        "RR of 2 runs against the label threshold; dashed: 0.55"]
