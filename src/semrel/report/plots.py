"""The report's plots, drawn with matplotlib as SVG text to inline in one HTML file.

Text is drawn as glyph outlines (no fonts needed to view it, and no text from data left in
the markup); comments and metadata are dropped and every element id is prefixed with the plot's name, so
several SVGs can share one page without their ids colliding.
"""

from __future__ import annotations

import io
import re
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np
from matplotlib import rc_context
from matplotlib.figure import Figure

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

_STYLE: dict[RcKeyType, Any] = {"svg.fonttype": "path", "svg.hashsalt": "semrel", "font.size": 9, "axes.spines.top": False,
          "axes.spines.right": False}
_DROPPED = re.compile(r"<!--.*?-->|<metadata>.*?</metadata>", re.DOTALL)
_PROLOG = re.compile(r"^.*?(?=<svg)", re.DOTALL)
_ID = re.compile(r'(\bid="|xlink:href="#|href="#|url\(#)([^")]+)')


def _label(text: str) -> str:
    """Data as plain text: `$` would otherwise start matplotlib's math mode."""
    return str(text).replace("$", r"\$")


def svg(figure: Figure, name: str) -> str:
    """The figure as an <svg> element whose ids all start with `name`."""
    out = io.StringIO()
    with rc_context(_STYLE):
        figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    text = _DROPPED.sub("", _PROLOG.sub("", out.getvalue(), count=1))
    return _ID.sub(lambda m: f"{m.group(1)}{name}-{m.group(2)}", text)


def _figure(width: float, height: float) -> Figure:
    with rc_context(_STYLE):
        return Figure(figsize=(width, height), layout="constrained")


def score_histogram(groups: Mapping[str, Sequence[float]], thresholds: Sequence[float], component: str) -> str:
    """Distributions of judge scores per group (gold, non-gold), with the label thresholds drawn."""
    figure = _figure(6.5, 3.0)
    with rc_context(_STYLE):
        axes = figure.subplots()
        values = [np.asarray(v, dtype=np.float64) for v in groups.values() if len(v)]
        everything = np.concatenate(values) if values else np.zeros(1)
        low, high = float(everything.min()), float(everything.max())
        bins = np.linspace(low, high if high > low else low + 1, 41).tolist()  # hist's stubs take a sequence, not an array
        for (name, scores), color in zip(groups.items(), ("#1b7837", "#762a83", "#2166ac")):
            if len(scores):
                axes.hist(scores, bins=bins, density=True, histtype="stepfilled", alpha=0.35, color=color,
                          label=f"{_label(name)} ({len(scores)})")
        for t in thresholds:
            axes.axvline(t, color="#b2182b", linestyle="--", linewidth=1.2)
            axes.annotate(f"{t:g}", (t, 1), xycoords=("data", "axes fraction"), xytext=(2, -10),
                          textcoords="offset points", color="#b2182b")
        axes.set_xlabel(f"BERTScore {component}")
        axes.set_ylabel("density")
        axes.legend(frameon=False)
    return svg(figure, "scores")


def change_bars(changes: Sequence[float], measure: str) -> str:
    """Each query's change in `measure` from base to reranked, sorted: gains right of losses."""
    figure = _figure(6.5, 2.6)
    with rc_context(_STYLE):
        axes = figure.subplots()
        ordered = np.sort(np.asarray(changes, dtype=np.float64))
        colors = np.where(ordered > 0, "#1b7837", np.where(ordered < 0, "#b2182b", "#999999"))
        axes.bar(np.arange(len(ordered)), ordered, width=1.0, color=colors)
        axes.axhline(0, color="black", linewidth=0.6)
        axes.set_xlabel(f"queries, sorted by change ({len(ordered)})")
        axes.set_ylabel(f"change in {_label(measure)}")
        axes.set_xticks([])
    return svg(figure, "lift")


def sensitivity_curves(curves: Mapping[str, Mapping[str, Sequence[tuple[float, float]]]],
                       chosen: Sequence[float]) -> str:
    """One panel per measure: each run's value against the label threshold, the chosen one marked."""
    measures = list(curves)
    columns = min(3, len(measures))
    rows = -(-len(measures) // columns)
    figure = _figure(3.2 * columns, 2.6 * rows)
    with rc_context(_STYLE):
        panels = np.atleast_1d(figure.subplots(rows, columns, squeeze=False).ravel())
        for axes, measure in zip(panels, measures):
            for run, points in curves[measure].items():
                xs, ys = zip(*sorted(points))
                axes.plot(xs, ys, marker=".", markersize=3, linewidth=1.2, label=_label(run))
            for t in chosen:
                axes.axvline(t, color="#b2182b", linestyle="--", linewidth=1)
            axes.set_title(_label(measure))
            axes.set_xlabel("threshold")
        for axes in panels[len(measures):]:
            axes.set_visible(False)
        panels[0].legend(frameon=False, fontsize=8)
    return svg(figure, "sensitivity")
