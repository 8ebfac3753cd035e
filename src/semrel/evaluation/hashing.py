"""64-bit fingerprints of Arrow strings, computed with numpy over the raw buffers.

Ten million ids fingerprint in one vector pass per 8 bytes of the longest id, far cheaper
than a hash table of the strings. Fingerprints only ever propose equality: callers confirm it
on the strings themselves, so a collision can cost time but never change a result.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..errors import SemrelError

_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(31)
_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)  # keep the first n bytes


def _mix(values: np.ndarray) -> np.ndarray:
    """A cheap bijective scramble of 64-bit values (multiply, xor-shift)."""
    values = values * _MULTIPLIER
    return values ^ (values >> _SHIFT)


def _words(array: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(start offsets, lengths, a uint64 view that reads 8 bytes from any byte offset)."""
    offset_type = np.int64 if pa.types.is_large_string(array.type) else np.int32
    _, offsets, data = array.buffers()
    offsets = np.frombuffer(offsets, dtype=offset_type)[array.offset : array.offset + len(array) + 1].astype(np.int64)
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    padded = np.zeros(len(raw) + 8, dtype=np.uint8)
    padded[: len(raw)] = raw
    words = np.ndarray(shape=(len(raw) + 1,), dtype="<u8", buffer=padded, strides=(1,))
    return offsets[:-1], np.diff(offsets), words


def fingerprints(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A uint64 per string; equal strings always get equal fingerprints."""
    if isinstance(array, pa.ChunkedArray):
        parts = [fingerprints(chunk) for chunk in array.chunks]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
    starts, lengths, words = _words(array)
    with np.errstate(over="ignore"):
        result = _mix(lengths.astype(np.uint64) ^ (words[starts] & _MASKS[np.minimum(lengths, 8)]))
        longest = int(lengths.max()) if len(lengths) else 0
        for at in range(8, longest, 8):  # ids longer than 8 bytes: one more pass per 8 bytes
            rows = np.flatnonzero(lengths > at)
            word = words[starts[rows] + at] & _MASKS[np.minimum(lengths[rows] - at, 8)]
            result[rows] = _mix(result[rows] ^ word)
    return result


def pair_fingerprints(group_codes: np.ndarray, prints: np.ndarray) -> np.ndarray:
    """One uint64 per (group, string): the group's code in the top 24 bits, 40 bits of the string's
    fingerprint below. Equal pairs always get equal values, and pairs of one group sort together,
    so lookups of rows grouped by query stay in cache."""
    if len(group_codes) and int(group_codes.max()) >= 1 << 24:
        raise SemrelError("more than 16,777,216 queries in one file: split it")
    codes = group_codes.view(np.uint64) if group_codes.dtype == np.int64 else group_codes.astype(np.uint64)
    return (codes << np.uint64(40)) | (prints >> np.uint64(24))


_ROUND_MULTIPLIERS = [np.uint64(m) for m in (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93)]


def _slots(keys: np.ndarray, round_: int, bits: int) -> np.ndarray:
    """Fibonacci hashing: the top `bits` bits of the key times a per-round odd constant."""
    multiplier = _ROUND_MULTIPLIERS[round_ % len(_ROUND_MULTIPLIERS)] + np.uint64(2 * (round_ // len(_ROUND_MULTIPLIERS)))
    with np.errstate(over="ignore"):
        return ((keys * multiplier) >> np.uint64(64 - bits)).view(np.int64)  # below 2**bits: a view, no copy


def _bits(count: int, spare: int) -> int:
    return max(4, int(np.ceil(np.log2(max(count, 1) * spare))))


class KeyTable:
    """Exact lookup of 64-bit keys, vectorised: each key goes to one slot of a table; keys that lose
    their slot to another key go to the next, smaller table (a key equal to the one holding its slot
    is a repeat and is left out). A probe looks in each table until its slot is empty or holds it.

    Ten million probes into a million keys cost a few gathers instead of a binary search each."""

    def __init__(self, keys: np.ndarray, spare: int = 4):
        self.keys = keys
        self.tables: list[tuple[int, np.ndarray]] = []
        pending = np.arange(len(keys), dtype=np.int64)
        index = np.int32 if len(keys) < 2**31 else np.int64
        while len(pending):
            bits = _bits(len(pending), spare)
            table = np.full(1 << bits, -1, dtype=index)
            slots = _slots(keys[pending], len(self.tables), bits)
            table[slots] = pending
            winners = table[slots]
            lost = np.flatnonzero(winners != pending)
            self.tables.append((bits, table))
            pending = pending[lost[keys[winners[lost]] != keys[pending[lost]]]]

    def find(self, probes: np.ndarray) -> np.ndarray:
        """Per probe: the index of the key equal to it, or -1."""
        found = np.full(len(probes), -1, dtype=np.int64)
        todo: np.ndarray | None = None  # probes still looking (None: all of them)
        for round_, (bits, table) in enumerate(self.tables):
            keys = probes if todo is None else probes[todo]
            held = table[_slots(keys, round_, bits)].astype(np.int64)
            occupied = np.flatnonzero(held >= 0)
            same = self.keys[held[occupied]] == keys[occupied]
            at = occupied[same] if todo is None else todo[occupied[same]]
            found[at] = held[occupied[same]]
            todo = occupied[~same] if todo is None else todo[occupied[~same]]
            if not len(todo):
                break
        return found
