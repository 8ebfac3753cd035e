"""The report's plots, drawn with matplotlib as SVG text to inline in one HTML file.

Text is drawn as glyph outlines (no fonts needed to view it, and no run names left in the markup);
each <svg> is an image (role="img") whose aria-label says in words what it shows, for a screen reader; comments and
metadata are dropped and every element id is prefixed with the plot's name, so several SVGs can share one page without
their ids colliding.
"""

from __future__ import annotations

import io
import re
import warnings
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np
from markupsafe import escape
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


_MISSING_GLYPH = re.compile(r"Glyph (\d+) .*missing from font\(s\) (.+?)\.?$")


def svg(figure: Figure, name: str, alt: str, warn: Callable[[str], None] | None = None) -> str:
    """The figure as an <svg> element whose ids all start with `name`, an image described by `alt` (its text is drawn as
    outlines, which a screen reader cannot read). Characters the font lacks are drawn as empty boxes: `warn` hears of
    them in one line (matplotlib said each in a Python warning of two lines, naming its own source file)."""
    out = io.StringIO()
    with rc_context(_STYLE), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    missing: dict[str, str] = {}  # character -> the font that lacks it
    for w in caught:
        found = _MISSING_GLYPH.match(str(w.message))
        if found:
            missing.setdefault(chr(int(found.group(1))), found.group(2))
        else:  # any other as it would have been
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if missing and warn is not None:
        fonts = ", ".join(dict.fromkeys(missing.values()))
        warn(f"the {name} plot draws {', '.join(map(repr, missing))} as empty boxes: its font ({fonts}) lacks "
             f"{'it' if len(missing) == 1 else 'them'}, so a name holding {'it' if len(missing) == 1 else 'them'} may not be "
             "told from another there")
    text = _DROPPED.sub("", _PROLOG.sub("", out.getvalue(), count=1))
    text = text.replace("<svg ", f'<svg role="img" aria-label="{escape(alt)}" ', 1)
    return _ID.sub(lambda m: f"{m.group(1)}{name}-{m.group(2)}", text)


def _thresholds(thresholds: Sequence[float]) -> str:
    return f"; dashed: {', '.join(f'{t:g}' for t in thresholds)}" if thresholds else ""


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
        axes.set_xlabel(_score_name(component))
        axes.set_ylabel("density")
        axes.legend(frameon=False)
    return svg(figure, "scores", f"Distribution of the judge's {_score_name(component)} of the {' and '.join(groups)} pairs"
                                 + _thresholds(thresholds))


def _score_name(component: str) -> str:
    """P, R, F are BERTScore's; p (refitted or not) is the judge's probability, which 'BERTScore p' passed off as one
    of them and told from BERTScore's precision P by its case alone."""
    return f"BERTScore {component}" if component in ("P", "R", "F") else f"probability {component}"


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
    gained, lost = int((ordered > 0).sum()), int((ordered < 0).sum())
    return svg(figure, "lift", f"Each query's change in {measure}, sorted: {gained} gained, {lost} lost, "
                               f"{len(ordered) - gained - lost} unchanged")


# Okabe and Ito's colour-blind safe palette, then markers, so lines differ in more than hue
_PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def spread(values: Sequence[float], gap: float, low: float, high: float) -> list[float]:
    """Label heights near `values`, at least `gap` apart and inside [low, high] when there is room
    (in the order of the values): the direct labels at the lines' ends must not overlap."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    placed = [float(values[i]) for i in order]
    for k in range(1, len(placed)):
        placed[k] = max(placed[k], placed[k - 1] + gap)
    overflow = placed[-1] - high if placed else 0.0
    if overflow > 0:
        placed = [max(p - overflow, low + k * gap) for k, p in enumerate(placed)]
        for k in range(len(placed) - 2, -1, -1):
            placed[k] = min(placed[k], placed[k + 1] - gap)
    out = [0.0] * len(values)
    for k, i in enumerate(order):
        out[i] = placed[k]
    return out


def sensitivity_curves(curves: Mapping[str, Mapping[str, Sequence[tuple[float, float]]]],
                       chosen: Sequence[float], warn: Callable[[str], None] | None = None, named: str = "label threshold") -> str:
    """One full-width panel per measure: each run's value against the label threshold, labelled at its
    right end (no legend to match colours against), with the thresholds in use marked as `named` (a --threshold the labels
    were not made at is no label threshold); `warn` hears of the characters of the runs' and measures' names its font
    cannot draw (svg)."""
    measures = list(curves)
    runs = list(dict.fromkeys(run for m in measures for run in curves[m]))
    style = {run: (_PALETTE[i % len(_PALETTE)], _MARKERS[i % len(_MARKERS)]) for i, run in enumerate(runs)}
    longest = max((len(_label(run)) for run in runs), default=4)
    figure = _figure(9.5, 3.4 * len(measures))
    with rc_context({**_STYLE, "font.size": 10}):
        panels = np.atleast_1d(figure.subplots(len(measures), 1, squeeze=False).ravel())
        for axes, measure in zip(panels, measures):
            ends = []
            for run, points in curves[measure].items():
                xs, ys = zip(*sorted(points))
                color, marker = style[run]
                axes.plot(xs, ys, color=color, marker=marker, markersize=4, markevery=max(1, len(xs) // 10), linewidth=1.8)
                ends.append((run, xs[-1], ys[-1], color))
            values = [v for points in curves[measure].values() for _, v in points]
            low, high = min(values), max(values)
            pad = max((high - low) * 0.08, 0.01)
            axes.set_ylim(low - pad, high + pad)
            heights = spread([y for _, _, y, _ in ends], (high - low + 2 * pad) * 0.09, low - pad, high + pad)
            right = max(x for _, x, _, _ in ends)
            lefts = min(x for points in curves[measure].values() for x, _ in points)
            nudge = (right - lefts) * 0.025
            for (run, x, y, color), h in zip(ends, heights):
                axes.annotate(_label(run), (x, y), xytext=(right + nudge, h), textcoords="data", xycoords="data",
                              color=color, fontweight="bold", va="center", ha="left",
                              arrowprops={"arrowstyle": "-", "color": color, "linewidth": 0.6, "shrinkA": 0, "shrinkB": 2},
                              annotation_clip=False)
            for t in chosen:
                axes.axvline(t, color="#444444", linestyle="--", linewidth=1)
                axes.annotate(f"{named} {t:g}", (t, 1.0), xycoords=("data", "axes fraction"), xytext=(4, -4),
                              textcoords="offset points", va="top", fontsize=9, color="#444444")
            if right > lefts:  # one threshold: matplotlib's own margins (equal limits are a warning)
                axes.set_xlim(lefts, right + (right - lefts) * (0.04 + 0.013 * longest))
            axes.set_ylabel(_label(measure))
            axes.grid(axis="y", color="#e5e5e5", linewidth=0.8)
        panels[-1].set_xlabel("label threshold (judge score at or above which a pair is relevant)")
    return svg(figure, "sensitivity", f"{', '.join(measures)} of {len(runs)} runs against the label threshold" + _thresholds(chosen),
               warn)
