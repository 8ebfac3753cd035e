"""Judgments to qrels: the label rules, in one place; no model is loaded.

Two rules, both "grade = number of thresholds a score reaches (score >= threshold)", so a pair
below every threshold is written as judged non-relevant (0) rather than left out, and Judged@k
stays meaningful:

* the probability rule (the default): thresholds on `p`, the probability of relevance the judge
  writes for every pair (`ProbabilityRule`). Binary: p >= CUT. Graded (0..3): the cuts GRADE_CUTS
  (CUT/2, CUT, CUT + (1 - CUT)/2). A calibration from `semrel calibrate` either moves every
  coefficient of the model (the default: p is recomputed from each pair's features) or maps p
  through sigmoid(slope * logit(p) + shift) first, which is the same as moving the thresholds on
  p, so the labels' manifest then records the thresholds on the judge's own p as well.
* the threshold rule: thresholds on one BERTScore component, P, R or F (`ThresholdRule`;
  `semrel label --threshold/--grades --on`), as before; judgments written without p (older
  semrel) are labelled with it, R >= 0.70, and so are the pairs the probability rule cannot score
  in a file that otherwise holds p (`ProbabilityRule.fallback`: a query with no null sample).

The probability model (docs/judge.md, "Label quality"; bench/labels.py re-fits and evaluates it)
is a logistic regression on label-free features the judge computes per pair (FEATURES):

    Ri        recall with each reference token weighted by its idf (below): R_idf
    relR_idf  (Ri - mean null Ri) / max(best pooled Ri - mean null Ri, 1e-3)   best pooled: the query's best judged pair
    R_idf_max Ri - max null Ri;   F_max  F - max null F;   P_max  P - max null P
    own_idf   idf-weighted share of the reference's tokens on which this chunk's best cosine is within
              0.02 of the best any judged chunk of the query reaches for that token (best reference)
    lenratio  ln(reference tokens / chunk tokens)
    lex       idf-weighted share of the reference's tokens whose token id occurs in the chunk (best reference)
    lexR_rel  (lex - mean null lex) / max(best pooled lex - mean null lex, LEX_FLOOR), held to [-1, 1]
    p = sigmoid(intercept + b . [relR_idf, R_idf_max, own_idf, F_max, P_max, lenratio, lexR_rel, P_max * lenratio])
    each feature first held to the range it took on the pairs the coefficients were fitted on

with "null" = the NULL_SAMPLE (25) corpus chunks with the smallest seeded hash of their id (seed 0),
minus the query's judged chunks, scored against the query's reference(s), and idf = bert_score's
log((N+1)/(df+1)) over the IDF_SAMPLE (1,000) chunks first in the same order (all of a smaller
corpus). Weighting the reference's tokens by idf lets a chunk that matches the answer's rare words
count for more than one that matches its "the" and "of": refitted leave-one-family-out it raised the
mean margin to the raw oracle (bench/labels.py, docs/judge.md has the figures). A sample, not the
whole corpus, keeps the cost bounded: in the research, idf from 200 or 1,000 chunks did as well as
idf from all of them. The plain features (relR, R_max, own) were the model before. lexR_rel is relR_idf's
normalisation on exact tokens: every other feature rests on the judge's vectors, which are the vectors of a
dense retriever on the same model, so labels without it leaned towards that retriever on held-out generated
sets (docs/judge.md, "The exact-token feature"). The null: the research
proposed 100; refitted at 10, 25 and 100 the model reaches the same worst margins and calibration, and 25
costs a quarter of the matching. The coefficients differ
with whether the query's gold chunks were judged (`with_gold`: the golden set lists gold for it,
so the judge adds its gold pairs): relR_idf and own_idf assume the pool's best chunk is relevant, which
gold pairs make likely and retrieval alone does not.

Where the numbers come from: all-MiniLM-L6-v2, layer 6, without `--idf`, 512-token windows (the shipped
judge settings), the 8 development sets of bench/labels.py (300 questions each, sampled with seed
0: COVID-QA at 150/300-word chunks, with a long reference and with multi-chunk answers; PubMedQA
with the long answer and with its first sentence; MS MARCO with its own passages and with BM25 over
all of them). WITH_GOLD was fitted on the 43,345 pooled pairs (BM25 top 20 + gold, MS MARCO: the
query's own passages) and WITHOUT_GOLD on the 42,507 retrieved pairs of the same sets (gold not
added), scikit-learn LogisticRegression(C=100), each set weighted equally. CUT maximises the mean
margin, over the 8 sets x 2 conditions, of kappa against gold minus the best kappa a threshold on
raw R reaches on that set. The worst margin, the criterion before, follows the hardest fitting
set's convention: refitted leave-one-family-out, the mean criterion's worst margin is -0.170
against -0.252 and its mean +0.045 against +0.020, for -0.082 against -0.075 in-sample
(docs/judge.md has every figure). One model per condition with one
shared cut was chosen over the research's single model fitted with gold (worst margins across both
conditions -0.254 in-sample / -0.316 LODO, at N = 100) and one model fitted on both conditions
(-0.121 / -0.276 at N = 100; -0.123 / -0.269 at N = 25).
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, TypedDict

import numpy as np

from ..errors import FormatError, UsageError, ValidationError, check_flags, check_kind, check_list, check_warn, tell
from ..evaluation.api import Qrels as PublicQrels  # what semrel.label returns: semrel.Qrels, with from_file
from ..formats.files import display_name, guarded, read_text
from ..formats.jsonl import loads
from ..formats.judgments import (  # noqa: F401  (COMPONENTS: re-exported)
    COMPONENTS,
    FEATURES,  # the model adds P_max * lenratio
    PROBABILITY,
    SCORES,
    WITH_GOLD_FLAG,
    JudgmentColumns,
    given_judgment_columns,
)
from ..formats.kinds import CALIBRATION, expecting
from ..formats.manifest import outputs_with_manifests, read_params, with_manifests, write_manifest
from ..formats.trec import write_qrels
from ..records import Judgment, Qrels, is_number
from ..terminal import agreeing, quantity

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack for keyword arguments is Python 3.12's

# ---------------------------------------------------------------- the threshold rule (on P, R or F)
DEFAULT_COMPONENT = "R"
DEFAULT_THRESHOLD = 0.70
DEFAULT_GRADES = (0.60, 0.70, 0.80)

# ---------------------------------------------------------------- the probability rule (on p)
NULL_SAMPLE = 25  # corpus chunks in the judge's null sample (seeded hash order, seed = the judge's --seed)
WITHOUT_P = ("judged with a null sample of 0 chunks, against a corpus with no chunk outside each query's pool, "  # why judgments can lack p
             "or by a semrel judge older than p")
GET_P = "judge again with a null sample (the default), against a corpus larger than the pool"  # what gives judgments p
IDF_SAMPLE = 1000  # corpus chunks the idf weights of relR_idf, R_idf_max and own_idf are counted on (the same order)
OWN_MARGIN = 0.02  # a token is the chunk's "own" when its best cosine is within this of the pool's best
LEX_FLOOR = 0.1  # lexR_rel's smallest denominator: a pool whose best chunk shares hardly more answer tokens than the null


@dataclass(frozen=True)
class Coefficients:
    """A logistic model on FEATURES and P_max * lenratio.

    `lower` and `upper`: each feature's range on the pairs it was fitted on. A feature beyond it is
    held at the edge, so p does not extrapolate a straight line into data unlike the development
    sets (a reference far longer than its chunks, say); refitted leave-one-family-out, holding
    gave every held-out set the same kappa or a higher one (docs/judge.md)."""

    intercept: float
    weights: tuple[float, ...]  # FEATURES, then the interaction P_max * lenratio
    lower: tuple[float, ...] | None = None
    upper: tuple[float, ...] | None = None

    def held(self, x: np.ndarray) -> np.ndarray:
        """x: (pairs, len(FEATURES)) in FEATURES order, held to the fitted range (NaN stays NaN)."""
        x = np.asarray(x, dtype=np.float64).reshape(-1, len(FEATURES))
        return x if self.lower is None or self.upper is None else np.clip(x, self.lower, self.upper)

    def outside(self, x: np.ndarray) -> np.ndarray:
        """(pairs, len(FEATURES)) booleans: where a feature lies beyond the fitted range."""
        x = np.asarray(x, dtype=np.float64).reshape(-1, len(FEATURES))
        if self.lower is None or self.upper is None:
            return np.zeros(x.shape, dtype=bool)
        return (x < np.asarray(self.lower)) | (x > np.asarray(self.upper))  # NaN (no null sample): neither

    def design(self, x: np.ndarray) -> np.ndarray:
        """(pairs, 1 + len(weights)): 1, the held features and P_max * lenratio, what the coefficients multiply."""
        x = self.held(x)
        return np.column_stack([np.ones(len(x)), x, x[:, FEATURES.index("P_max")] * x[:, FEATURES.index("lenratio")]])

    def logit(self, x: np.ndarray) -> np.ndarray:
        return self.design(x) @ np.asarray([self.intercept, *self.weights], dtype=np.float64)

    def plus(self, delta: Sequence[float]) -> Coefficients:
        """These coefficients moved by `delta` (intercept first), on the same range."""
        return Coefficients(self.intercept + delta[0], tuple(w + d for w, d in zip(self.weights, delta[1:], strict=True)),
                            self.lower, self.upper)

    def to_json(self) -> dict:
        out: dict = {"intercept": self.intercept, **dict(zip((*FEATURES, "P_max*lenratio"), self.weights))}
        if self.lower is not None and self.upper is not None:
            out["range"] = {f: [lo, hi] for f, lo, hi in zip(FEATURES, self.lower, self.upper)}
        return out


# Fitted with the query's gold pairs in the pool (the golden set lists gold chunks): 43,345 pairs; lower and upper: their range.
WITH_GOLD = Coefficients(-4.04456744487824, (-0.030768835152353034, -4.47299361908084, 3.5124049535016453, 1.8440271659544913,
                                              2.5413279778317093, 0.6991153552671466, 6.105241981823819, 1.6900731824030384),
    lower=(-108.13978210992298, -0.7238499708384277, 0.0, -0.4412813650387708, -0.4091626698976974, -6.927557906278317,
           -0.7857142857142854),
    upper=(1.0, 0.7794280080359298, 1.0, 0.7961266902161617, 0.8000354769358796, 3.784189633918261, 1.0))
# Fitted on retrieved pairs only (no gold chunks known for the query): 42,507 pairs; lower and upper: their range.
WITHOUT_GOLD = Coefficients(-5.053063580126359, (-0.03392130292032207, -4.273936144094034, 3.2377928092474155, 16.059873118658317,
                                                  -6.967071452280338, 0.355162039352054, 5.0964510518527595, 3.54921793232682),
    lower=(-108.13978210992298, -0.7781706940528471, 0.0, -0.6194653633079947, -0.5697265224494021, -6.927557906278317,
           -0.9227102247927342),
    upper=(1.0, 0.7794280080359298, 1.0, 0.7961266902161617, 0.8000354769358796, 3.367295829986474, 1.0))
CUT = 0.38  # binary label: p >= CUT


def grade_cuts(cut: float) -> tuple[float, float, float]:
    """Grades 1, 2, 3 start at cut/2, cut and cut + (1 - cut)/2: halfway to 0 and to 1 around the binary cut."""
    return (cut / 2, cut, cut + (1 - cut) / 2)


GRADE_CUTS = grade_cuts(CUT)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=np.float64)))  # no overflow warnings for large |z|


def logit(p: np.ndarray | float, eps: float = 1e-9) -> np.ndarray:
    q = np.clip(np.asarray(p, dtype=np.float64), eps, 1 - eps)
    return np.log(q) - np.log1p(-q)


Models = tuple[Coefficients, Coefficients]  # (with gold, without gold)


def _by_gold(features: np.ndarray, with_gold: np.ndarray | bool, of: Callable[[Coefficients, np.ndarray], np.ndarray],
             models: Models | None = None) -> np.ndarray:
    """of(WITH_GOLD, rows) where `with_gold` (per row or for all), of(WITHOUT_GOLD, rows) elsewhere."""
    x = np.asarray(features, dtype=np.float64).reshape(-1, len(FEATURES))
    gold = np.broadcast_to(np.asarray(with_gold, dtype=bool), (len(x),))
    with_model, without_model = models or (WITH_GOLD, WITHOUT_GOLD)
    a, b = of(with_model, x), of(without_model, x)
    return np.where(gold.reshape(-1, *[1] * (a.ndim - 1)), a, b)


def logits(features: np.ndarray, with_gold: np.ndarray | bool, refit: Sequence[float] | None = None,
           models: Models | None = None) -> np.ndarray:
    """logit(p) for rows of FEATURES; `with_gold` (per row or for all) picks WITH_GOLD or WITHOUT_GOLD; `refit`
    (from `semrel calibrate --fit features`) moves every coefficient of either."""
    return _by_gold(features, with_gold, lambda model, x: (model.plus(refit) if refit is not None else model).logit(x), models)


def probability(features: np.ndarray, with_gold: np.ndarray | bool, refit: Sequence[float] | None = None,
                models: Models | None = None) -> np.ndarray:
    """p for rows of FEATURES, as `logits`."""
    return sigmoid(logits(features, with_gold, refit, models))


def designs(features: np.ndarray, with_gold: np.ndarray | bool, models: Models | None = None) -> np.ndarray:
    """Each row's design (Coefficients.design) under its own model: what a refit's coefficients multiply."""
    return _by_gold(features, with_gold, lambda model, x: model.design(x), models)


def outside_range(features: np.ndarray, with_gold: np.ndarray | bool) -> np.ndarray:
    """(pairs, len(FEATURES)) booleans: where a feature lies beyond the range its model was fitted on."""
    return _by_gold(features, with_gold, lambda model, x: model.outside(x))


OUTSIDE_WARNING = 0.05  # warn when more pairs than this share lie beyond the fitted range (0.5% at most on the development pools)
_COPY = "chunks that copy the reference"
_OUTSIDE_CAUSE = {"relR_idf": "pools whose best chunk barely beats unrelated text", "own_idf": "", "R_idf_max": _COPY,
                  "F_max": _COPY, "P_max": _COPY,
                  "lenratio": "references far longer or shorter than the chunks",
                  "lexR_rel": "unrelated chunks that share more of the answer's words than the pool's chunks do, as templated "
                              "records"}


def beyond_range(outside: np.ndarray) -> dict[str, Any]:
    """What `outside_range` found, as the manifest records it: pairs with any feature beyond the range, and per feature."""
    outside = np.asarray(outside, dtype=bool).reshape(-1, len(FEATURES))
    return {"pairs": int(outside.any(axis=1).sum()), "of": len(outside), "by_feature": dict(zip(FEATURES, outside.sum(axis=0).tolist()))}


def beyond_range_note(found: Mapping[str, Any], what_to_do: str) -> str | None:
    """A warning when many pairs lie beyond the development sets' range (`beyond_range`'s record), else None."""
    if not found["of"] or found["pairs"] <= OUTSIDE_WARNING * found["of"]:
        return None
    feature = max(found["by_feature"], key=found["by_feature"].get)
    cause = f": {_OUTSIDE_CAUSE[feature]}" if _OUTSIDE_CAUSE[feature] else ""
    return (f"{found['pairs']:,} of {quantity(found['of'], 'pair')} ({found['pairs'] / found['of']:.0%}) "
            f"{agreeing(found['pairs'], 'lie')} beyond the development sets p was "
            f"fitted on (most often {feature}{cause}); p holds at the edge of that range there and is less sure; {what_to_do}")


def rule_defaults() -> dict:
    """The label rules' built-in settings: what labelling (and the sensitivity curve's mark) takes from
    semrel itself rather than from its options, so a pipeline can tell when an upgrade changed them."""
    return {"cut": CUT, "grade_cuts": list(GRADE_CUTS), "threshold": DEFAULT_THRESHOLD}


def model_params() -> dict:
    """The probability model, for manifests."""
    return {"features": [*FEATURES, "P_max*lenratio"], "with_gold": WITH_GOLD.to_json(), "without_gold": WITHOUT_GOLD.to_json(),
            "null_sample": NULL_SAMPLE, "idf_sample": IDF_SAMPLE, "own_margin": OWN_MARGIN,
            "fitted_on": "bench/labels.py development sets (8 x 300 questions, seed 0), all-MiniLM-L6-v2 layer 6, without --idf"}


# ---------------------------------------------------------------- thresholds


def parse_thresholds(text: str) -> tuple[float, ...]:
    """'0.4,0.5,0.6' -> (0.4, 0.5, 0.6), checked by check_thresholds."""
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise UsageError(f"grades={text!r}: give comma-separated numbers, e.g. 0.6,0.7,0.8") from None
    if not values:  # not silently the default rule
        raise UsageError(f"grades={text!r}: give at least one threshold, e.g. 0.6,0.7,0.8")
    return check_thresholds(values)


def check_thresholds(thresholds: Sequence[float]) -> tuple[float, ...]:
    """Thresholds as floats, refused unless finite and rising: a grade is the number reached, which needs them in order."""
    if not all(map(is_number, thresholds)):
        raise UsageError(f"thresholds {', '.join(map(repr, thresholds))}: give numbers")
    values = tuple(float(t) for t in thresholds)
    if not values:
        raise UsageError("give at least one threshold")
    if not all(math.isfinite(v) for v in values):
        raise UsageError(f"thresholds must be finite numbers, got {', '.join(map(str, values))}")
    if any(b <= a for a, b in zip(values, values[1:])):
        raise UsageError(f"thresholds must be strictly increasing, got {','.join(map(str, values))}")
    return values


def reached(scores: np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    """Number of thresholds each score reaches (0 .. len(thresholds))."""
    return np.searchsorted(np.asarray(thresholds, dtype=np.float64), scores, side="right")


Judged = Sequence[Judgment] | JudgmentColumns  # what the rules label: records (the API's), or a file's columns


def has_features(judgments: Judged) -> bool:
    """Whether every judgment carries the features its p came from (what a refit of every coefficient needs)."""
    return bool(len(judgments)) and bool(JudgmentColumns.of(judgments).featured.all())


def feature_rows(judgments: Judged) -> tuple[np.ndarray, np.ndarray]:
    """(pairs, len(FEATURES)) the features each judgment's p came from (NaN where it holds none), and its with_gold flag."""
    columns = JudgmentColumns.of(judgments)
    return columns.features, columns.with_gold


def has_probability(judgments: Judged) -> bool:
    """Whether the judge wrote p for these judgments: an older semrel wrote none; the pairs of a query with no null
    sample lack it, and take the probability rule's fallback."""
    return bool((~np.isnan(JudgmentColumns.of(judgments).p)).any())


def score_values(judgments: Judged, on: str) -> np.ndarray:
    """The `on` score (p, P, R or F) of each judgment; p missing is an error naming the fix."""
    if on not in SCORES:
        raise UsageError(f"on={on!r}: choose one of {', '.join(SCORES)}")
    columns = JudgmentColumns.of(judgments)
    if on == PROBABILITY:
        missing = int(np.isnan(columns.p).sum())
        if missing:
            raise ValidationError(f"{missing:,} of {quantity(len(columns), 'judgment')} {agreeing(missing, 'hold')} no probability p "
                                  f"({WITHOUT_P}): {GET_P}, or label on P, R or F")
    return columns.score(on)


# ---------------------------------------------------------------- the rules


@dataclass(frozen=True)
class ThresholdRule:
    """Grade = number of `thresholds` the score `on` (P, R, F, or p) reaches."""

    on: str = DEFAULT_COMPONENT
    thresholds: tuple[float, ...] = (DEFAULT_THRESHOLD,)
    name = "threshold"

    def __post_init__(self) -> None:
        if self.on not in SCORES:
            raise UsageError(f"on={self.on!r}: choose one of {', '.join(SCORES)}")
        object.__setattr__(self, "thresholds", check_thresholds(self.thresholds))
        if self.on == PROBABILITY and not all(0.0 <= t <= 1.0 for t in self.thresholds):  # else every pair, or none, reaches it
            raise UsageError(f"thresholds on p must lie between 0 and 1 (p is a probability), got "
                             f"{', '.join(f'{t:g}' for t in self.thresholds)}")

    @property
    def judge_thresholds(self) -> tuple[float, ...]:
        """The thresholds on the judgments' own score `on` (for review, reports, sensitivity)."""
        return self.thresholds

    def grades(self, judgments: Judged) -> np.ndarray:
        return reached(score_values(judgments, self.on), self.thresholds)

    def describe(self) -> str:
        return f"{self.on} >= {self.thresholds[0]:g}" if len(self.thresholds) == 1 else \
            f"{self.on} at grade cuts {', '.join(f'{t:g}' for t in self.thresholds)}"

    def params(self) -> dict:
        return {"rule": self.name, "on": self.on, "thresholds": list(self.thresholds),
                "labels": "graded" if len(self.thresholds) > 1 else "binary",
                "grade": "number of thresholds reached (score >= threshold)"}


@dataclass(frozen=True)
class ProbabilityRule:
    """Grade = number of cuts the (calibrated) probability reaches: one cut (binary) or GRADE_CUTS-style three.

    The calibration maps the judge's p to sigmoid(slope * logit(p) + shift); slope > 0 keeps the
    order, so the labels equal thresholds on the judge's own p (`judge_thresholds`). A `refit`
    (`semrel calibrate --fit features`) instead moves every coefficient of the model, so the
    probability is recomputed from each pair's features and is no function of p alone.
    """

    graded: bool = False
    cut: float = CUT
    slope: float = 1.0
    shift: float = 0.0
    calibration: Mapping[str, Any] | None = None  # how slope and shift were fitted (from `semrel calibrate`)
    refit: tuple[float, ...] | None = None  # added to the intercept and weights of either model (Coefficients.plus)
    name = "probability"
    on = PROBABILITY

    def __post_init__(self) -> None:
        if not 0.0 < self.cut < 1.0:
            raise UsageError(f"the cut on p must be between 0 and 1, got {self.cut:g}")
        if not (math.isfinite(self.slope) and self.slope > 0 and math.isfinite(self.shift)):
            raise UsageError(f"calibration slope must be a positive number and shift finite, got {self.slope:g}, {self.shift:g}")
        if self.refit is not None and (len(self.refit) != len(FEATURES) + 2 or not all(math.isfinite(v) for v in self.refit)):
            raise UsageError(f"a refit moves the intercept and the {len(FEATURES) + 1} weights: give {len(FEATURES) + 2} finite numbers")

    @property
    def thresholds(self) -> tuple[float, ...]:
        """The cuts on the calibrated probability."""
        return grade_cuts(self.cut) if self.graded else (self.cut,)

    @property
    def cuts_on_p(self) -> bool:
        """Whether the labels are cuts on the judge's own p (all but a refit of every coefficient)."""
        return self.refit is None

    @property
    def judge_thresholds(self) -> tuple[float, ...]:
        """The same cuts moved to the judge's own p: p' >= c  <=>  p >= sigmoid((logit(c) - shift) / slope)."""
        if not self.cuts_on_p:
            raise UsageError("labels refitted on every coefficient (`semrel calibrate --fit features`) are not cuts on the "
                             "judge's p: label with the calibration file, or give the cuts on p yourself")
        if (self.slope, self.shift) == (1.0, 0.0):  # no mapping: the cuts as they are, not a float's round trip through logit
            return self.thresholds
        return tuple(float(sigmoid((logit(c) - self.shift) / self.slope)) for c in self.thresholds)

    def calibrated(self, p: np.ndarray) -> np.ndarray:
        return sigmoid(self.slope * logit(p) + self.shift) if (self.slope, self.shift) != (1.0, 0.0) else np.asarray(p, float)

    def scores(self, judgments: Judged) -> np.ndarray:
        """Each pair's calibrated probability: from p, or with a refit from its features."""
        if self.cuts_on_p:
            return self.calibrated(score_values(judgments, PROBABILITY))
        columns = JudgmentColumns.of(judgments)
        missing = int((~columns.featured).sum())
        if missing:
            raise ValidationError(f"{missing:,} of {quantity(len(columns), 'judgment')} {agreeing(missing, 'lack')} some of p's "
                                  f"features ({', '.join(FEATURES)}), which a refit of every coefficient needs: re-run `semrel judge`, "
                                  "which writes them beside p")
        return probability(columns.features, columns.with_gold, self.refit)

    @property
    def fallback(self) -> ThresholdRule:
        """The rule for the pairs this one cannot score (`unscored`): the one judgments of an older semrel get."""
        return ThresholdRule(DEFAULT_COMPONENT, DEFAULT_GRADES if self.graded else (DEFAULT_THRESHOLD,))

    def unscored(self, judgments: Judged) -> np.ndarray:
        """Which pairs lack what the rule scores: p, or for a refit the features. The judge writes neither for a
        query whose pool covers the whole corpus, as no chunk is left for its null sample."""
        columns = JudgmentColumns.of(judgments)
        return np.isnan(columns.p) if self.cuts_on_p else ~columns.featured

    def grades(self, judgments: Judged) -> np.ndarray:
        """The rule's grades, `fallback`'s for the pairs it cannot score; when it can score none, the scores' own
        error says what is missing (a calibration applied to no pair is a mistake, not R >= 0.70)."""
        columns = JudgmentColumns.of(judgments)
        missing = self.unscored(columns)
        if missing.all() or not missing.any():
            return self._scored_grades(columns)
        grades = np.empty(len(columns), dtype=np.int64)
        grades[missing] = self.fallback.grades(columns.where(missing))
        grades[~missing] = self._scored_grades(columns.where(~missing))
        return grades

    def _scored_grades(self, judgments: Judged) -> np.ndarray:
        if not self.cuts_on_p:
            return reached(self.scores(judgments), self.thresholds)
        return reached(score_values(judgments, PROBABILITY), self.judge_thresholds)

    def describe(self) -> str:
        what = f"p >= {self.cut:g}" if not self.graded else f"p at grade cuts {', '.join(f'{t:g}' for t in self.thresholds)}"
        if not self.cuts_on_p:
            return what + " (refitted: every coefficient)"
        return what + (f" (calibrated: slope {self.slope:.3g}, shift {self.shift:+.3g})" if self.is_calibrated else "")

    @property
    def is_calibrated(self) -> bool:
        return bool(self.calibration) or (self.slope, self.shift) != (1.0, 0.0) or not self.cuts_on_p

    def params(self) -> dict:
        refit = {"refit": list(self.refit)} if self.refit is not None else {}
        return {"rule": self.name, "on": PROBABILITY, "thresholds": [float(t) for t in self.judge_thresholds] if self.cuts_on_p else None,
                "cut": self.cut, "cuts": list(self.thresholds), "labels": "graded" if self.graded else "binary",
                "grade": "number of cuts the calibrated p reaches; thresholds: the same cuts on the judge's p"
                         + ("" if self.cuts_on_p else " (none: a refit of every coefficient recomputes p from the features)"),
                "calibration": {"slope": self.slope, "shift": self.shift, **(self.calibration or {}), **refit}
                if self.is_calibrated else None,
                "model": model_params()}


Rule = ThresholdRule | ProbabilityRule


_REWRITE = "make the file again with the command that wrote it rather than editing it"
_MISSING = object()


def _shown(value: Any) -> str:
    text = "missing" if value is _MISSING else "null" if value is None else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _field(params: Mapping[str, Any], name: str, expected: str, valid: Callable[[Any], bool], where: str,
           default: Any = _MISSING, label: str | None = None) -> Any:
    """params[name], refused in one line naming the file and the field unless `valid`."""
    value = params.get(name, default)
    if value is _MISSING or not valid(value):
        raise ValidationError(f'{where}: "{label or name}" is {_shown(params.get(name, _MISSING))}, expected {expected}; {_REWRITE}')
    return value


def _numbers(value: Any) -> bool:
    return isinstance(value, list) and all(is_number(v) for v in value)


def _same(recorded: Any, derived: Any) -> bool:
    """Whether a recorded field agrees with the one derived from the rule; numbers rounded to two decimals (a file
    written by hand) do, as both readers use the derived ones."""
    if isinstance(derived, list):
        return _numbers(recorded) and len(recorded) == len(derived) and all(
            math.isclose(a, b, rel_tol=0, abs_tol=0.005) for a, b in zip(recorded, derived))
    return bool(recorded == derived)


def _probability_from_params(params: Mapping[str, Any], where: str) -> ProbabilityRule:
    cut = _field(params, "cut", "a number between 0 and 1", is_number, where)
    graded = _field(params, "labels", '"binary" or "graded"', lambda v: v in ("binary", "graded"), where) == "graded"
    calibration = dict(_field(params, "calibration", "an object or null", lambda v: v is None or isinstance(v, dict), where, None) or {})
    slope, shift = (_field(calibration, key, "a number", is_number, where, default, f"calibration.{key}")
                    for key, default in (("slope", 1.0), ("shift", 0.0)))
    refit = _field(calibration, "refit", "a list of numbers or null", lambda v: v is None or _numbers(v), where, None, "calibration.refit")
    if refit is not None:
        _require_this_model(params, where)
    for key in ("slope", "shift", "refit"):
        calibration.pop(key, None)
    return ProbabilityRule(graded=graded, cut=float(cut), slope=float(slope), shift=float(shift), calibration=calibration or None,
                           refit=tuple(float(v) for v in refit) if refit is not None else None)


MODEL_KEYS = ("features", "with_gold", "without_gold")  # what p's coefficients are: a model recorded with other ones is another


def _other_model(recorded: Any) -> bool:
    """Whether a manifest's "model" records coefficients other than this semrel's (a semrel whose model was refitted since)."""
    shipped = json.loads(json.dumps(model_params()))
    return isinstance(recorded, dict) and any(recorded.get(k) != shipped[k] for k in MODEL_KEYS)


def _require_this_model(params: Mapping[str, Any], where: str) -> None:
    """A refit is a move of the coefficients the file records ("model"): added to other ones it would give labels
    unlike those `semrel calibrate` reported, so it is refused, and so is a refit whose "model" is gone (every writer of a
    refit records it: an edited file, whose moves could be of any semrel's coefficients)."""
    if not isinstance(params.get("model"), dict):
        raise ValidationError(f'{where}: "model" is {_shown(params.get("model", _MISSING))}, expected the coefficients the refit '
                              f"moves (an object, as `semrel calibrate -o` writes beside a refit); {_REWRITE}")
    if _other_model(params.get("model")):
        raise ValidationError(f'{where}: "model" records coefficients other than this semrel\'s probability model (a calibration '
                              "by another semrel version): its refit moves those, so here it would not give the labels it was "
                              "fitted to; run `semrel calibrate` again on the same reviewed pairs")


def _threshold_from_params(params: Mapping[str, Any], where: str) -> ThresholdRule:
    old = "rule" not in params  # manifests before the probability rule: {"on", "thresholds"}
    on = _field(params, "on", f"one of {', '.join(SCORES)}", lambda v: v in SCORES, where, DEFAULT_COMPONENT if old else _MISSING)
    thresholds = _field(params, "thresholds", "a list of numbers", _numbers, where)
    return ThresholdRule(on, tuple(float(t) for t in thresholds))


def rule_from_params(params: Mapping[str, Any], where: str = "manifest") -> Rule:
    """The rule a labels manifest or a calibration file records: what `label`, the review queue and `semrel eval`
    filling holes all read. A field of the wrong type or value is refused in one line naming the file and the
    field, never read as a default, and so is one that disagrees with the fields it follows from (an edited
    "thresholds", which `label` would ignore and the review queue would not). Old manifests ({"on", "thresholds"})
    give a ThresholdRule."""
    name = params.get("rule", _MISSING)
    if name is _MISSING and "thresholds" not in params:
        raise ValidationError(f"{where}: no label rule recorded (expected \"rule\" with its parameters, or \"on\" and \"thresholds\")")
    if name not in (_MISSING, ThresholdRule.name, ProbabilityRule.name):
        raise ValidationError(f'{where}: "rule" is {_shown(name)}, expected "{ProbabilityRule.name}" or "{ThresholdRule.name}"; {_REWRITE}')
    try:
        rule: Rule = (_probability_from_params(params, where) if name == ProbabilityRule.name
                      else _threshold_from_params(params, where))
    except UsageError as exc:  # a value the rule refuses (a cut of 0, thresholds out of order): the file's, not an option's
        raise ValidationError(f"{where}: {exc}; {_REWRITE}") from None
    derived: dict[str, Any] = ({"on": PROBABILITY, "cuts": list(rule.thresholds),
                                "thresholds": list(rule.judge_thresholds) if rule.cuts_on_p else None}
                               if isinstance(rule, ProbabilityRule) else {"labels": "graded" if len(rule.thresholds) > 1 else "binary"})
    for key, value in derived.items():
        if key in params and not _same(params[key], value):
            raise ValidationError(f'{where}: "{key}" is {_shown(params[key])}, but the rule\'s other fields give {_shown(value)} '
                                  f"(it follows from them: an edit of it alone would not apply); {_REWRITE}")
    return rule


def recorded_rule(params: Mapping[str, Any] | None, where: str = "manifest") -> Rule | None:
    """The rule that made a qrels file's labels, from the params of its manifest as `semrel label` writes them
    (read by rule_from_params: a broken field is refused); None where they are no labels manifest's: qrels of the
    gold chunks or from elsewhere, or no current manifest (read_params: none, or one of an earlier version of the file)."""
    return rule_from_params(params, where) if params is not None and "thresholds" in params else None


def fitted_pairs(agreement: Mapping[str, Any]) -> int | None:
    """How many reviewed pairs the rule of an agreement's tested labels (`semrel agree`'s "test" file) was fitted to
    (`semrel calibrate`'s refit of p), from their manifest; None for a rule fitted to none, or no labels file. An
    agreement over pairs that include them counts them in-sample."""
    labels = agreement.get("test")
    calibration = ((read_params(labels) if isinstance(labels, str) else None) or {}).get("calibration")
    pairs = calibration.get("pairs") if isinstance(calibration, Mapping) else None
    return pairs if isinstance(pairs, int) and not isinstance(pairs, bool) else None


IN_SAMPLE = ("where they are among the pairs compared, the figure counts them in-sample "
             "(`semrel calibrate ... --test QRELS` gives it on the others)")


def apply_rule(judgments: Judged, rule: Rule) -> Qrels:
    """Qrels with one row per judged pair, graded by `rule`."""
    columns = JudgmentColumns.of(judgments)
    return Qrels.from_columns(columns.query_ids, columns.chunk_ids, rule.grades(columns))


def relabel(judgments: Judged, params: Mapping[str, Any]) -> Qrels:
    """Qrels for `judgments` by the rule recorded in a labels manifest's params (one call for hole filling)."""
    return apply_rule(judgments, rule_from_params(params))


def choose_rule(judgments: Judged, on: str | None = None, threshold: float | None = None,
                grades: Sequence[float] | None = None, graded: bool = False, calibration: Rule | None = None,
                warn: Callable[[str], None] | None = None) -> Rule:
    """The rule the options ask for: --threshold/--grades (on --on, default R): the threshold rule;
    --calibration: the calibrated rule; else the probability rule, or R >= 0.70 for judgments without p."""
    if threshold is not None and grades is not None:
        raise UsageError("give either threshold= (binary labels) or grades= (graded), not both")
    if calibration is not None and (threshold is not None or grades is not None):
        raise UsageError("calibration= sets the rule: give it without threshold= or grades=")
    check_kind("on", on, (str,), f"one of {', '.join(SCORES)}")
    check_kind("threshold", threshold, (numbers.Real,), "a number")
    grades = check_list("grades", grades, (numbers.Real,), "increasing thresholds as a list, e.g. [0.6, 0.7, 0.8]", "numbers")
    if threshold is not None or grades is not None:
        if graded:
            raise UsageError("graded= grades by p: give it without threshold= or grades= (which set thresholds on on=)")
        return ThresholdRule(on or DEFAULT_COMPONENT, (threshold,) if threshold is not None else tuple(grades or ()))
    if calibration is not None:
        if isinstance(calibration, ProbabilityRule):
            calibration = replace(calibration, graded=graded or calibration.graded)
        elif graded:
            raise UsageError("graded= grades by p; this calibration holds thresholds on a component")
        if on is not None and calibration.on != on:
            raise UsageError(f"on={on!r} does not match the calibration, which is on {calibration.on}")
        rule = calibration
    elif on not in (None, PROBABILITY):
        return ThresholdRule(on, (DEFAULT_THRESHOLD,) if not graded else DEFAULT_GRADES)
    else:
        rule = ProbabilityRule(graded=graded)
        if on is None and len(judgments) and rule.unscored(judgments).all():  # on='p' asks for p: its absence is an error
            if warn:
                warn(f"the judgments hold no probability p ({WITHOUT_P}): labelled with the threshold rule "
                     f"{rule.fallback.describe()}; {GET_P}, for the probability rule")
            return rule.fallback
    return rule


def _judge_notes(rule: Rule | None, source: str | os.PathLike | None, judge: Mapping[str, Any] | None,
                 calibrated: bool) -> list[str]:
    """What the judgments' manifest (`judge`: its params) says of labels by p, which `label` and the report repeat where the
    judge said it: p from a semrel whose probability model has been refitted since (a cut on it was chosen for another p;
    a refit of every coefficient recomputes p by this model), p of settings other than those it was fitted under, and, under
    any rule, what it said of the reference answers (too short, or the question itself)."""
    recorded = (judge or {}).get("answer_warnings")
    notes = [str(m) for m in recorded] if isinstance(recorded, list) else []
    if not source or not isinstance(rule, ProbabilityRule):
        return notes
    probability = (judge or {}).get("probability") or {}
    if rule.cuts_on_p and _other_model(probability.get("model")):
        notes.append(f"{display_name(source)}: its p comes from another semrel's probability model, and the cut {rule.describe()} "
                     "was chosen for this one's p: re-run `semrel judge` (its embedding cache makes that quick) to label the "
                     "pairs as this semrel would")
    fitted, used = probability.get("fitted_settings"), probability.get("settings")
    if not calibrated and not rule.is_calibrated and isinstance(fitted, dict) and isinstance(used, dict) and fitted != used:
        notes.append(f"{display_name(source)} was judged with {_settings(used)}, and p's coefficients were fitted with "
                     f"{_settings(fitted)} (they held with three other settings, docs/judge.md 'Another judge model'): check the "
                     "labels on your data, review about 100 pairs and refit with `semrel calibrate`")
    return notes


def _settings(settings: Mapping[str, Any]) -> str:
    return (f"{settings.get('model')}, layer {settings.get('layer')}, {'with' if settings.get('idf') else 'without'} --idf, "
            f"{settings.get('window')}-token windows")


def fallback_note(rule: ProbabilityRule, judgments: Judged) -> str | None:
    """The warning when some pairs, not all, lack what `rule` scores, and get its fallback instead; else None."""
    missing = int(rule.unscored(judgments).sum())
    if not missing or missing == len(judgments):
        return None
    lacking = "no probability p" if rule.cuts_on_p else "no features, which the refit recomputes p from"
    return (f"{missing:,} of {quantity(len(judgments), 'pair')} {agreeing(missing, 'hold')} {lacking}: labelled by "
            f"{rule.fallback.describe()} instead, the other "
            f"{len(judgments) - missing:,} by {rule.describe()}. The judge writes no p for a query whose pool covers the whole "
            "corpus (no chunk is left for its null sample): judge against a larger corpus, or re-run `semrel judge` where lines "
            "lost p, to label every pair by p")


# ---------------------------------------------------------------- warnings

GOLD_SHARE_WARNING = 0.80  # warn when fewer gold chunks than this share are labelled relevant
GOLD_SHARE_MOVED = 0.3  # below it, likely gold ids of another chunking: far under the hardest case measured, 52-58% for
# queries of three or more gold chunks on the generated sets (docs/judge.md)
NO_RELEVANT_WARNING = 0.10  # warn when more queries than this share have no relevant label


def label_warnings(judgments: Judged, grades: Sequence[int] | np.ndarray, rule: Rule | None, judgments_path: str | None = None,
                   gold_pairs: set[tuple[str, str]] | None = None, calibrated: bool = False,
                   judge: Mapping[str, Any] | None = None) -> list[str]:
    """Signs that the labels look wrong, each with what to do: pairs labelled by the fallback, gold chunks left
    non-relevant (the pairs the judge marked source `gold`, or `gold_pairs`), queries with no relevant pair, a
    golden set without gold chunks, pairs unlike those p was fitted on, and what the judgments' manifest (`judge`, its
    params) says of p. `calibrated`: the rule came from `semrel calibrate` (a refitted p is seen as such anyway), so the
    advice is not to calibrate again. `rule` None: the grades' rule is not recorded (qrels without a labels manifest),
    and none is named in its place. `label` and the report both call it, so the page says what `label` said."""
    notes: list[str] = []
    if not len(judgments):
        return notes
    judgments = JudgmentColumns.of(judgments)
    fallback = fallback_note(rule, judgments) if isinstance(rule, ProbabilityRule) else None
    notes += [fallback] if fallback else []
    named = rule.describe() if rule is not None else "their unrecorded rule"
    judged = judgments_path or "JUDGMENTS"
    if calibrated or isinstance(rule, ProbabilityRule) and rule.is_calibrated:
        review = ("the rule is already fitted to reviewed pairs: review more of them (the most uncertain first, `semrel review "
                  "start`) and refit on all with `semrel calibrate`, or check whether the gold chunks mark relevance as your "
                  "reviewers do")
    else:
        review = (f"review about 100 pairs (`semrel review start`, docs/review.md), export them (`semrel review export --db DB "
                  f"--labels LABELS --only-reviewed -o REVIEWED`), then refit on them with `semrel calibrate {judged} REVIEWED -o "
                  f"cal.json`, label with `semrel label {judged} --calibration cal.json -o QRELS` (in `semrel run`: --set "
                  "label.calibration=cal.json) and keep the reviewed grades in them with `semrel review export --db DB --labels "
                  "QRELS -o FINAL`")
    grades = np.asarray(grades)
    gold = judgments.among(gold_pairs) if gold_pairs is not None else judgments.sourced("gold")
    if gold.any():
        share = float((grades[gold] > 0).mean())
        if share < GOLD_SHARE_WARNING:
            split = _by_gold_count(judgments, gold, grades)
            # so few under p that the ids may name other text: gold chosen on another chunking (--size, --overlap) exists in
            # this corpus too, where it names other words, and no review mends that. A threshold of one's own is the likelier
            # cause under a threshold rule (R >= 0.70 labelled 27-59% of the gold of the held-out testsets: docs/judge.md)
            moved = ("; so few that the gold ids may name other text than they were chosen for: made with another chunking "
                     "(--size, --overlap) than this corpus's, they exist here too but point elsewhere: check that a few gold "
                     "chunks hold their answer, and import the golden set against this corpus") \
                if share < GOLD_SHARE_MOVED and isinstance(rule, ProbabilityRule) else ""
            notes.append(f"only {_percent_below(share, GOLD_SHARE_WARNING)} of the {int(gold.sum())} gold chunks are labelled "
                         f"relevant by {named} "
                         f"(expected {GOLD_SHARE_WARNING:.0%} or more where the rule fits the data{split}): the labels likely "
                         f"miss relevant chunks; {review}{moved}")
    relevant: dict[str, bool] = {}
    for query_id, g in zip(judgments.query_ids, grades.tolist()):
        relevant[query_id] = relevant.get(query_id, False) or g > 0
    empty = [q for q, r in relevant.items() if not r]
    if empty and len(empty) > NO_RELEVANT_WARNING * len(relevant):
        # a query whose gold chunk was judged has the answer in its pool: its pool cannot be what misses it
        listed = {q for q, g in zip(judgments.query_ids, gold.tolist()) if g}
        held = sum(q in listed for q in empty)
        # the judge's features say which queries the golden set lists no gold chunk for: nothing tells where their answer is
        unlisted = {q for q, told, has in zip(judgments.query_ids, judgments.has_features.tolist(), judgments.with_gold.tolist())
                    if told and not has}
        none_listed = sum(q in unlisted and q not in listed for q in empty)
        rest = len(empty) - held - none_listed
        lists_none = f"{agreeing(none_listed, 'list')} no gold chunk in the golden set"
        other = (f"; of the other {rest + none_listed}, {none_listed} {lists_none} and {rest} may have pools that miss the answer"
                 if rest and none_listed else f"; the other {none_listed} {lists_none}" if none_listed
                 else f"; the other {rest} may have pools that miss the answer" if rest else "")
        cause = (f"either their pools miss the answer or {named} is too strict for this data"
                 + (f"; {none_listed} of them {lists_none}" if none_listed else "")
                 if not held else
                 f"{held:,} of them {agreeing(held, 'have')} a gold chunk judged and labelled not relevant, so the answer is in "
                 f"{'its' if held == 1 else 'their'} pool{'' if held == 1 else 's'} and {named} misses it (too strict for this "
                 "data, or reference answers that do not say what the gold chunks say: too short to match, as 'Yes', or written "
                 f"for other text){other}")
        notes.append(f"{len(empty):,} of {quantity(len(relevant), 'query')} {agreeing(len(empty), 'have')} no pair labelled relevant "
                     f"(e.g. {empty[0]!r}): {cause}; {review}")
    uncalibrated = isinstance(rule, ProbabilityRule) and not rule.is_calibrated  # a refit on reviewed pairs answers the next two
    told = judgments.has_features  # the rows whose features say whether the query's gold chunks were judged
    if uncalibrated and told.any() and not judgments.with_gold[told].any() and not gold.any():
        notes.append("the golden set lists no gold chunks: p assumes each query's best judged chunk is relevant, which "
                     f"retrieval alone does not ensure (kappa fell to 0.87 where 0.94 was possible on a development set); {review}")
    featured = judgments.featured
    if uncalibrated and featured.any():
        beyond = beyond_range(outside_range(judgments.features[featured], judgments.with_gold[featured]))
        note = beyond_range_note(beyond, review)
        notes += [note] if note else []
    return notes + _judge_notes(rule, judgments_path, judge, calibrated)


def _percent_below(share: float, bound: float) -> str:
    """`share` as a percentage that reads below `bound`, with a decimal or more where whole percents round up to it: 313 of
    392 gold chunks (79.8%) had read 'only 80% ... (expected 80% or more)'."""
    for digits in range(4):
        text = f"{share:.{digits}%}"
        if float(text[:-1]) < bound * 100:
            return text
    return text


def _by_gold_count(judgments: JudgmentColumns, gold: np.ndarray, grades: np.ndarray) -> str:
    """Where queries listing one gold chunk fare clearly better than those listing several, the two shares: an answer
    drawn from several chunks leaves each further from the pool's best (on six generated-answer testsets p labelled
    94% of lone gold chunks relevant, 52-68% of the others; docs/judge.md)."""
    listed: dict[str, int] = {}
    for q, g in zip(judgments.query_ids, gold.tolist()):
        listed[q] = listed.get(q, 0) + g
    several = np.array([listed[q] > 1 for q in judgments.query_ids], dtype=bool)
    lone, many = grades[gold & ~several] > 0, grades[gold & several] > 0
    if not lone.size or not many.size or lone.mean() - many.mean() < 0.1:
        return ""
    return (f"; {lone.mean():.0%} where a query lists one gold chunk, {many.mean():.0%} where it lists several: answers "
            "drawn from several chunks match each less well")


# ---------------------------------------------------------------- the command's library side


@dataclass(frozen=True)
class Labelled:
    qrels: Qrels
    rule: Rule
    warnings: list[str]

    @property
    def grade_counts(self) -> np.ndarray:
        """Pairs per grade, 0 to the rule's top (what the manifest records and `label` prints)."""
        return np.bincount(self.qrels.relevance, minlength=len(self.rule.thresholds) + 1)


class LabelOptions(TypedDict, total=False):
    """How `label` chooses its rule (see `label`)."""

    on: str | None
    threshold: float | None
    grades: Sequence[float] | None
    graded: bool
    calibration: str | os.PathLike | Rule | None


def _fallback_params(rule: Rule, judgments: Judged) -> dict | None:
    """For the manifest: how many pairs the probability rule could not score, and the rule they got instead."""
    if not isinstance(rule, ProbabilityRule):
        return None
    missing = int(rule.unscored(judgments).sum())
    return {"pairs": missing, "lacking": "p" if rule.cuts_on_p else "features", **rule.fallback.params()} if missing else None


@guarded
def label_with_rule(judgments: str | os.PathLike | Iterable[Judgment], output: str | os.PathLike | None = None,
                    **options: Unpack[LabelOptions]) -> Labelled:
    """`label` returning the rule used and the warnings too (see `label`)."""
    unknown = sorted(set(options) - set(LabelOptions.__annotations__))
    if unknown:  # as Python refuses a keyword a signature lacks: a misspelt option must not fall back to the default rule
        raise TypeError(f"label() got an unexpected keyword argument {unknown[0]!r}")
    check_flags(graded=options.get("graded", False))
    rows, source = given_judgment_columns(judgments, empty_ok=False)  # empty qrels would score every run 0
    notes: list[str] = []
    calibration = options.get("calibration")
    check_kind("output", output, (str, os.PathLike), "a file path")  # an int was taken as a file descriptor
    check_kind("calibration", calibration, (str, os.PathLike, ThresholdRule, ProbabilityRule),
               "the file `semrel calibrate -o` wrote, or a rule")
    loaded = read_calibration(calibration, source) if isinstance(calibration, (str, os.PathLike)) else calibration
    rule = choose_rule(rows, options.get("on"), options.get("threshold"), options.get("grades"), options.get("graded", False),
                       loaded, notes.append)
    try:
        qrels = apply_rule(rows, rule)
    except ValidationError as exc:  # what the pairs lack (p, features): said of the file that lacks it
        raise ValidationError(f"{display_name(source)}: {exc}") if source else exc from None
    judge = read_params(source) if source else None
    notes += label_warnings(rows, qrels.relevance, rule, source, calibrated=loaded is not None, judge=judge)
    labelled = Labelled(qrels, rule, notes)
    if output is not None:
        with outputs_with_manifests([output]) as staged:
            write_qrels(qrels, staged[output])
            # the judgments' manifest too: its judge settings are recorded below and choose warnings
            write_manifest(output, inputs=[*with_manifests([source] if source else []),
                                           *([calibration] if isinstance(calibration, (str, os.PathLike)) else [])],
                           rows=len(qrels), staged=staged, params={
                               **rule.params(), "calibrated": loaded is not None, "fallback": _fallback_params(rule, rows),
                               "grade_counts": {str(g): int(n) for g, n in enumerate(labelled.grade_counts)},
                               "warnings": notes, "judge": judge}, holds="qrels")
    return labelled


def label(judgments: str | os.PathLike | Iterable[Judgment], output: str | os.PathLike | None = None, *,
          warn: Callable[[str], None] | None = None, **options: Unpack[LabelOptions]) -> PublicQrels:
    """semrel.Qrels from judgments (the Python side of `semrel label`).

    Default: the probability rule, binary (p >= CUT), or graded 0..3 with `graded=True`; pairs
    without p (older semrel, or a query with no null sample) get R >= 0.70 instead. `threshold=`
    (binary) or `grades=` (increasing thresholds) on `on=` (P, R, F or p; default R) give the
    threshold rule. `calibration=`: a file written by `semrel calibrate -o` (or a rule). With
    `output`, the qrels are written atomically with a manifest recording the rule and its
    parameters, the pairs labelled by its fallback, the warnings and the judge's settings. `warn`
    receives each warning (labels that look wrong, the fallback for pairs without p); without
    it they are Python warnings, so none is lost.
    """
    check_warn(warn)
    result = label_with_rule(judgments, output, **options)
    tell(result.warnings, warn)
    q = result.qrels
    return PublicQrels(q.query_ids, q.doc_ids, q.relevance, q.source)


def read_calibration(path: str | os.PathLike, judgments: str | os.PathLike | None = None) -> Rule:
    """The rule in a file written by `semrel calibrate -o` ({"rule": "probability", "cut", "calibration": {slope,
    shift or refit}, ...}, or {"rule": "threshold", "on": "R", "thresholds": [...]}): the one reader of it, for
    `label`, `run`, `sensitivity` and the review queue alike. With `judgments`, refused when they were judged
    otherwise than those it was fitted on ("judged_with")."""
    with expecting(path, CALIBRATION, any_line=True):
        try:
            data = loads(read_text(path), path)
        except FormatError as exc:
            raise FormatError(exc.path, exc.message, exc.line, exc.hint or "give the JSON file `semrel calibrate -o` wrote") from None
        if not isinstance(data, dict):
            raise FormatError(display_name(path), "expected a JSON object, as `semrel calibrate -o` writes")
        rule = rule_from_params(data, display_name(path))
    fitted = _field(data, "judged_with", "an object or null", lambda v: v is None or isinstance(v, dict), display_name(path), None)
    if fitted and judgments is not None:
        _require_judged_alike(fitted, judged_with(judgments), rule, display_name(path), display_name(judgments))
    return rule


JUDGE_SETTINGS = ("layer", "idf", "rescale")  # beside the model, what P, R and F depend on; p, all but rescale (docs/judge.md)


def judged_with(judgments: str | os.PathLike) -> dict[str, Any] | None:
    """The judge settings of a judgments file (its manifest's), which `semrel calibrate -o` records, with "p_model", a
    digest of the coefficients their p came from, where the judge recorded them; None without a manifest."""
    params = read_params(judgments)
    if not params:
        return None
    settings = {key: params.get(key) for key in ("model", "model_fingerprint", *JUDGE_SETTINGS)}
    model = (params.get("probability") or {}).get("model") if isinstance(params.get("probability"), dict) else None
    if isinstance(model, dict):
        canonical = json.dumps({key: model.get(key) for key in MODEL_KEYS}, sort_keys=True)
        settings["p_model"] = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    return settings


def _require_judged_alike(fitted: Mapping[str, Any], judged: Mapping[str, Any] | None, rule: Rule, where: str, judgments: str) -> None:
    """A calibration is fitted to one judge's scores: applied to another model's (a config's [judge] model changed since,
    say) it gave labels nobody had checked. A model is the same by name or by its files' fingerprint."""
    if not judged:
        return
    settings = JUDGE_SETTINGS if isinstance(rule, ThresholdRule) else tuple(k for k in JUDGE_SETTINGS if k != "rescale")
    model = any(fitted.get(key) is not None and fitted.get(key) == judged.get(key) for key in ("model", "model_fingerprint"))
    if model and all(fitted.get(key) == judged.get(key) for key in settings if None not in (fitted.get(key), judged.get(key))):
        other_p = isinstance(rule, ProbabilityRule) and rule.cuts_on_p and None not in (fitted.get("p_model"), judged.get("p_model")) \
            and fitted.get("p_model") != judged.get("p_model")
        if other_p:  # a slope, shift and cut fitted to one model's p, applied to another's (re-judged by a newer semrel)
            raise ValidationError(f"{where} was fitted on the p of another probability model than the p of {judgments} (judged "
                                  "since by a semrel whose model was refitted): its cut and calibration are that p's; run "
                                  "`semrel calibrate` again on these judgments and the same reviewed pairs")
        return  # a setting an older manifest lacks is no difference

    def shown(values: Mapping[str, Any]) -> str:
        return f"{values.get('model')} (" + ", ".join(f"{key} {values.get(key)}" for key in settings) + ")"

    raise ValidationError(f"{where} was fitted on judgments of {shown(fitted)}, but {judgments} are of {shown(judged)}: its labels "
                          "do not carry over to other scores; review pairs of these judgments and run `semrel calibrate` on them")
