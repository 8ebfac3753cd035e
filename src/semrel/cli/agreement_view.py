"""Rendering agreement figures (kappa with its interval, confusion matrices) as text."""

from __future__ import annotations

from ..analysis.agreement import Agreement
from ..formats.tables import Cell, Table, render


def agreement_row(first: str, second: str, a: Agreement) -> list[Cell]:
    return [first, second, a.n, a.percent, a.kappa, a.low, a.high, a.weights]


AGREEMENT_HEADER = ["first", "second", "pairs", "agree %", "kappa", "low 95%", "high 95%", "weights"]


def confusion_text(title: str, a: Agreement, rows: str, columns: str) -> str:
    """A confusion matrix with its labels (rows: the first labelling, columns: the second)."""
    table = Table([f"{rows} \\ {columns}"] + [str(label) for label in a.labels],
                  [[str(label), *counts] for label, counts in zip(a.labels, a.confusion)])
    return (f"{title}\n" if title else "") + render(table, "table")
