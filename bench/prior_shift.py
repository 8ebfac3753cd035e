"""Prior shift by EM (Saerens, Latinne & Decaestecker 2002) on the user's own judgments, without labels:
would re-estimating a set's share of relevant pairs from its p, and moving p to that share, carry the
probability rule to a family it was not fitted on (PubMedQA, where many more pooled chunks are relevant)?

    python bench/prior_shift.py [--work out/bench-labels]

Reads the sets and judgments `bench/labels.py` leaves in WORK (run it first; `--no-tau` suffices) and
uses its refit and cut rule. Per set-condition: the share of gold pairs, the mean p, the share EM
estimates, and kappa with p as judged against p moved to that share (at the model's cut, and at a cut
chosen again on the fitting sets' moved p); the margins to the raw-R oracle, left out of the fit
(leave-one-family-out) and in-sample. The answer, 2026-12-02: no (docs/judge.md, "Tried and not shipped").
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import labels as bench  # bench/labels.py: python puts a script's folder first on sys.path


def em_prior(p: np.ndarray, fitted_share: float, rounds: int = 1000) -> tuple[float, np.ndarray]:
    """The share of relevant pairs that makes p consistent with itself (EM), and p moved to it."""
    share, moved = fitted_share, p
    for _ in range(rounds):
        up, down = share / fitted_share * p, (1 - share) / (1 - fitted_share) * (1 - p)
        moved = up / (up + down)
        new = float(np.clip(moved.mean(), 1e-4, 0.5))
        if abs(new - share) < 1e-7:
            break
        share = new
    return share, moved


def rows_for(data: dict, raw: dict, sets: list[str], left_out: str | None) -> list[tuple]:
    fitting = [n for n in sets if bench.FAMILY[n] != left_out]
    model = bench.refit([(data[n, "gold"], data[n, "nogold"]) for n in fitting], raw)
    fitted_share = {c: float(np.mean([data[n, c].y.mean() for n in fitting])) for c in bench.CONDITIONS}  # each set weighs alike
    moved = {(n, c): em_prior(model.p(data[n, c]), fitted_share[c]) for n in sets for c in bench.CONDITIONS}
    recut = bench.choose_cut([(moved[n, c][1], data[n, c].y, raw[n, c]) for n in fitting for c in bench.CONDITIONS])
    out = []
    for n in (n for n in sets if left_out is None or bench.FAMILY[n] == left_out):
        for c in bench.CONDITIONS:
            d, (share, p_moved) = data[n, c], moved[n, c]
            out.append((n, c, raw[n, c], d.y.mean(), model.p(d).mean(), share, bench.kappa(d.y, model.p(d) >= model.cut),
                        bench.kappa(d.y, p_moved >= model.cut), bench.kappa(d.y, p_moved >= recut)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=bench.ROOT / "out" / "bench-labels")
    args = parser.parse_args()
    sets = [s for s in bench.SETS if (args.work / "sets" / s).exists()]
    data = {(n, c): bench.SetData(n, args.work / "sets" / n, c, args.work / "cache", False) for n in sets for c in bench.CONDITIONS}
    raw = {key: bench.oracle(d.y, d.R) for key, d in data.items()}
    for title, left_out in (("left out of the fit (LODO)", sorted({bench.FAMILY[n] for n in sets})), ("in-sample", [None])):
        rows = [row for family in left_out for row in rows_for(data, raw, sets, family)]
        print(f"\n{title}\n| set | cond | raw oracle | gold share | mean p | EM share | kappa p | p moved | p moved, cut again |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r[0]} | {r[1]} | " + " | ".join(f"{v:.3f}" for v in r[2:]) + " |")
        for k, name in ((6, "p as judged"), (7, "p moved, model's cut"), (8, "p moved, cut again")):
            margins = [r[k] - r[2] for r in rows]
            print(f"margin to the raw oracle, {name}: worst {min(margins):+.3f}, mean {np.mean(margins):+.3f}")


if __name__ == "__main__":
    main()
