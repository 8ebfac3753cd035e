"""The keys of a review, shared by the terminal and the web page so both decide alike."""

from __future__ import annotations

from .tasks import Labelling


def grade_keys(labelling: Labelling) -> dict[str, int]:
    """0..top always; y/n as well for binary labels."""
    keys = {str(g): g for g in range(labelling.max_grade + 1)}
    if labelling.max_grade == 1:
        keys.update({"y": 1, "n": 0})
    return keys


def note_keys(labelling: Labelling) -> tuple[str, ...]:
    """m always; n too where it is not a grade (graded labels)."""
    return ("m",) if labelling.max_grade == 1 else ("n", "m")
