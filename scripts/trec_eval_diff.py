"""Score random small qrels (or preference files) and runs with trec_eval and with `semrel eval -f trec`, and report
every output line that differs: a regression check of semrel's trec_eval semantics beyond trec_eval's own test suite.

    python scripts/trec_eval_diff.py --trec-eval /path/to/trec_eval [--cases 2000] [--seed 0] [--out FOLDER]

trec_eval is not shipped: build it from NIST's source (github.com/usnistgov/trec_eval, `make`). The cases keep away
from the trec_eval defects docs/eval.md lists ("Where trec_eval's output comes from a defect of its code"): no measure
named twice, every qrels query in the run, no query whose grades are all negative, no fractional gains, no -l below 0,
preference values 0 to 3, dcg and ideal_dcg never beside ndcg with gains (they share its parameters). Lines of
iprec_at_recall and 11pt_avg (trec_eval 9 and 10 round recall points differently) and of rbp (trec_eval reads
uninitialised bounds) are left out, as are a measure's lines where trec_eval prints nan.
semrel refuses some cases on purpose (a run sharing no document with the qrels): they are counted. Each differing or
refused case is written to --out with both outputs; the exit code is 1 when any line differs.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner

from semrel.cli import main as semrel

QUERIES = ["q1", "q2", "q3", "10", "9"]
DOCS = ["a", "b", "c", "d", "e", "f", "g", "B", "Z", "a1", "a10", "a2", "d.2", "d_3", "0", "00"]
UNJUDGED = ["u1", "u2", "u3"]
MEASURES = ["P.1,3,7", "ndcg_cut.3,7", "ndcg.1=3,2=9", "success.1,2,5", "recall.3,8", "Rprec_mult.0.5,2.0", "utility.2,-1,0,0",
            "relstring.5", "unj.3", "map_cut.2,5", "relative_P.2,4", "G.1=2,2=5", "binG", "ndcg_rel", "Rndcg", "infAP",
            "gm_bpref", "gm_map", "bpref", "num_nonrel_judged_ret", "set_map", "set_F.0.5", "set_P", "set_recall", "map",
            "Rprec", "recip_rank", "num_ret", "num_rel", "num_rel_ret", "rbp_resid", "rbp_resid.p=0.8", "yaap", "dcg", "ideal_dcg"]
SHARED_GAINS = ("dcg", "ideal_dcg")  # trec_eval gives these and ndcg one parameter record: beside ndcg.1=3,2=9 it frees it twice
LEFT_OUT = ("iprec_at_recall", "11pt_avg", "rbp ", "rbp_")
RELATIONS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")


def make_case(rng: random.Random, relation: str) -> tuple[str, str, list[str]]:
    """(judgments, run, options) of one random case."""
    judged, run = [], []
    for query in rng.sample(QUERIES, rng.randint(1, 4)):
        docs = rng.sample(DOCS, rng.randint(2, 10))
        low = 0 if "prefs" in relation else -1
        grades = {doc: rng.randint(low, 3) for doc in docs}
        grades[docs[0]] = max(grades[docs[0]], 0)  # not all negative
        for group in range(rng.randint(1, 3) if relation != "qrels" else 1):
            for subgroup in range(rng.randint(1, 2) if relation == "prefs" else 1):
                chosen = docs if group == subgroup == 0 else rng.sample(docs, rng.randint(2, len(docs)))
                judged += [f"{query} {group} s{subgroup} {doc} {grades[doc]}" if relation == "prefs"
                           else f"{query} {group} {doc} {grades[doc]}" for doc in chosen]
        returned = [doc for doc in docs if rng.random() < 0.6] + [doc for doc in UNJUDGED if rng.random() < 0.3]
        tied = rng.random() < 0.4
        for rank, doc in enumerate(returned or [docs[0]], start=1):
            score = rng.choice([1, 2, 3]) if tied else round(rng.uniform(-5, 10), rng.randint(0, 6))
            run.append(f"{query} Q0 {doc} {rank} {score} run")
    rng.shuffle(judged)
    rng.shuffle(run)
    options = ["-q", "-R", relation] + (["-n"] if rng.random() < 0.1 else [])
    if "prefs" in relation:
        options += ["-m", "all_prefs"]
    elif relation == "qrels_jg":
        options += ["-m", "qrels_jg"]
    else:
        chosen = rng.sample(MEASURES, rng.randint(1, 5))
        if "ndcg.1=3,2=9" in chosen:
            chosen = [m for m in chosen if m not in SHARED_GAINS]
        options += ["-m", "all_trec"] if rng.random() < 0.4 else [x for m in chosen for x in ("-m", m)]
        if rng.random() < 0.3:
            options += ["-l", str(rng.choice([0, 2, 3]))]
        if rng.random() < 0.2:
            options += ["-N", str(rng.randint(0, 40))]
    if rng.random() < 0.2:
        options.append("-J")
    if rng.random() < 0.2:
        options += ["-M", str(rng.randint(1, 8))]
    return "\n".join(judged) + "\n", "\n".join(run) + "\n", options


def kept(text: str, reference: str) -> list[str]:
    """The lines compared: not those left out, nor those of a measure trec_eval prints nan for (Rndcg's 0/0; semrel
    prints 0 there, and the mean moves with it)."""
    nan = tuple(line.split("\t")[0] for line in reference.splitlines() if line.endswith("nan"))
    return [line for line in text.splitlines() if not line.startswith(LEFT_OUT + nan)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trec-eval", required=True, help="a trec_eval binary built from NIST's source")
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="trec_eval_diff", help="where differing cases are written")
    args = parser.parse_args()
    if shutil.which(args.trec_eval) is None:  # one line, not a traceback from the first case
        parser.error(f"--trec-eval {args.trec_eval}: not an executable program (build trec_eval from NIST's source)")
    rng, runner = random.Random(args.seed), CliRunner()
    counts = {"equal": 0, "differ": 0, "trec_eval refused": 0, "semrel refused": 0}
    with tempfile.TemporaryDirectory() as scratch:
        judgments, run = Path(scratch) / "judgments", Path(scratch) / "run"
        for number in range(args.cases):
            if number and number % 500 == 0:
                print(f"{number} cases: {counts}", file=sys.stderr)
            text, ranking, options = make_case(rng, RELATIONS[number % len(RELATIONS)])
            judgments.write_text(text)
            run.write_text(ranking)
            reference = subprocess.run([args.trec_eval, *options, str(judgments), str(run)], capture_output=True, text=True)
            if reference.returncode:
                counts["trec_eval refused"] += 1
                continue
            ours = runner.invoke(semrel, ["eval", str(judgments), str(run), *options, "-f", "trec"])
            if ours.exit_code:
                outcome = "semrel refused"
            elif kept(reference.stdout, reference.stdout) == kept(ours.stdout, reference.stdout):
                outcome = "equal"
            else:
                outcome = "differ"
            counts[outcome] += 1
            if outcome != "equal":
                case = Path(args.out) / f"{outcome.split()[-1]}{number}"
                case.mkdir(parents=True, exist_ok=True)
                for name, content in (("judgments", text), ("run", ranking), ("options", " ".join(options) + "\n"),
                                      ("trec_eval.txt", reference.stdout), ("semrel.txt", ours.output)):
                    (case / name).write_text(content)
    print(", ".join(f"{count} {what}" for what, count in counts.items()) + f" (of {args.cases} cases, seed {args.seed})")
    return 1 if counts["differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
