"""`semrel run CONFIG.toml`: the whole pipeline from one TOML file, each step skipped when up to date.

A step is up to date when every output exists and is the file its manifest describes (a crash
between the two writes leaves an old manifest), every input holds the bytes the last successful
run read (their sha256, in `<out>/.semrel-run.json`; of golden.jsonl, retrieval reads and hashes only
the queries: Step.parts), and the step's settings (the exact command
line it would run) hash to what that run recorded. Steps run the same click commands a user types
(in process, no subprocesses), so each output gets the command's own manifest and checks.

Settings (run_config): `--set section.key=value` over `SEMREL_<SECTION>_<KEY>` over the config file over the
defaults; they all end up in the steps' command lines, so a changed value reruns what it affects.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import time
from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from ..errors import SemrelError, UsageError
from ..formats.files import bytes_sha256, changed_ns, content_sha256, folder_files, lasting, not_plain, stamp
from ..formats.manifest import manifest_is_stale, manifest_path, read_manifest, read_params
from ..terminal import agreeing, quantity
from .run_config import (
    GOLDEN_OPTIONS,
    Step,
    canonical,
    check_outputs_spare_inputs,
    idle_keys,
    ignored_variables,
    load_config,
    plan,
    unread_variables,
)

STATE_FILE = ".semrel-run.json"
LOCK_FILE = ".semrel-run.lock"


def _stamp(path: str) -> tuple[Any, int] | None:
    """What stands for the bytes of a file (files.stamp) or of a folder (a digest of its files' names and stamps),
    and when the file, or the folder's newest file, last changed (changed_ns); None when missing."""
    if not os.path.isdir(path):
        try:
            info = os.stat(path)
        except OSError:
            return None
        return stamp(info), changed_ns(info)
    listing, newest = hashlib.sha256(), 0
    for full in folder_files(path):  # the files content_sha256 reads
        name = os.path.relpath(full, path).encode("utf-8", "surrogateescape")
        try:
            info = os.stat(full)
        except OSError:  # a dangling link: its name alone, as content_sha256 reads none of it
            listing.update(name + b"\0")
            continue
        listing.update(name + f"\0{stamp(info)}\0".encode())
        newest = max(newest, changed_ns(info))
    return listing.hexdigest(), newest


def _queries(path: str) -> str | None:
    """sha256 of the golden set's query ids and texts, in order: what `semrel retrieve` reads of it (a sample is drawn
    from them too). One that cannot be read goes by its bytes: the step reruns and says what is wrong with it."""
    from ..formats.corpus import golden_queries_sha256

    return golden_queries_sha256(path) or content_sha256(path)


PARTS: dict[str, Callable[[str], str | None]] = {"queries": _queries}  # the parts of an input a step may read (Step.parts)


def _pair(value: Any) -> list[Any]:
    """A recorded [file's, manifest's] sha256 or stamp pair; [None, None] where the state holds none (older, or damaged)."""
    return value if isinstance(value, list) and len(value) == 2 else [None, None]


class Digests:
    """What the inputs hold: each file's sha256, read at most once per run (several steps read the corpus), and
    not at all when its stamp is the one recorded beside that sha256 by the last run (as git's index does)."""

    def __init__(self) -> None:
        self._read: dict[tuple[str, str, str], tuple[str | None, Any]] = {}

    def file(self, path: str, known_sha: Any, known_stamp: Any, part: str | None = None) -> tuple[str | None, Any]:
        """(sha256 of `path`, or of its `part`, and the stamp a later run may take it by, or None) as it is now:
        `known_sha` when its stamp is `known_stamp`, else read."""
        found = _stamp(path)
        if found is None:
            return None, None
        current, changed = found
        if known_stamp is not None and current == known_stamp:
            return known_sha, known_stamp
        key = (canonical(path), json.dumps(current), part or "")
        if key not in self._read:
            self._read[key] = (PARTS[part](path) if part else content_sha256(path), lasting(current, changed))
        return self._read[key]

    def of(self, step: Step, recorded: Mapping[str, Any] | None = None) -> dict[str, dict[str, list[Any]]]:
        """{"inputs": {path: [sha256 of the input, of its manifest]}, "stamps": {path: [their stamps]}}, reading
        only the files whose stamps differ from those in `recorded` (a step's entry in the state). Manifests
        count: steps read them too (the report shows the label rule), and a manifest records when it was
        made, so a derived input made again always counts as new. Of an input the step reads a part of
        (Step.parts), that part's digest counts, and its manifest does not."""
        shas, stamps = ((recorded or {}).get(key) for key in ("inputs", "stamps"))
        inputs, taken = {}, {}
        for path in step.inputs:
            key = canonical(path)
            part = step.parts.get(path)
            read = [self.file(*known) for known in zip((path,) if part else (path, manifest_path(path)),
                                                         _pair(shas.get(key) if isinstance(shas, dict) else None),
                                                         _pair(stamps.get(key) if isinstance(stamps, dict) else None),
                                                         (part, None))]
            read += [(None, None)] * (2 - len(read))
            inputs[key], taken[key] = [sha for sha, _ in read], [kept for _, kept in read]
        return {"inputs": inputs, "stamps": taken}


def up_to_date(step: Step, recorded: Mapping[str, Any], digests: Digests) -> bool:
    """Outputs all there, with current manifests, made by the same settings from inputs that hold the bytes
    the last run read: their sha256 decides, never an mtime (`mv`, `cp -p` or `tar x` of an older version
    changes the bytes and moves the mtime back)."""
    if recorded.get("settings") != step.settings_hash():
        return False
    if not all(map(os.path.exists, step.outputs)) or any(manifest_is_stale(p) for p in step.outputs):
        return False
    if step.stdout and step.stdout != os.devnull and not os.path.exists(manifest_path(step.stdout)):
        return False  # printed before semrel gave captured tables a manifest
    made = recorded.get("outputs")
    if isinstance(made, dict) and any(_replaced_by_run(p, _pair(made.get(canonical(p)))) for p in step.outputs):
        return False
    if isinstance(made, dict) and any(not _manifest_as_left(p, _pair(made.get(canonical(p)))) for p in step.outputs):
        return False  # a manifest deleted or edited by hand: semrel's record of the file, made again by the step
    return all(map(os.path.exists, step.inputs)) and digests.of(step, recorded)["inputs"] == recorded.get("inputs")


def _manifest_as_left(output: str, made: list[Any]) -> bool:
    """Whether the manifest of `output` is the one the step left (`made`: the sha256 of the output and of its manifest
    then; a state without them vouches for nothing): there, and holding those bytes, or another command's record since
    (a fill's rows: work that check_not_replacing_work keeps). A deleted one, or one still naming `semrel run` with other
    bytes (edited by hand), is not."""
    digest = bytes_sha256(manifest_path(output))  # a few KB, read on every run (inputs are taken by their stamps)
    if made[1] is None or digest == made[1]:
        return True
    return digest is not None and not _by_run(read_manifest(output, current=False) or {})


def _replaced_by_run(output: str, made: list[Any]) -> bool:
    """Whether another step or config of `semrel run` wrote `output` since this step made it (`made`: the sha256 of it
    and its manifest then; the first tells): a SQuAD import's corpus.jsonl over the chunk step's, in an `out` two configs share. Work of
    other commands (`semrel golden pick`'s picks) is kept: check_not_replacing_work. The manifest's digest of its
    file (current: up_to_date has checked it) tells, so that nothing is read again."""
    record = read_manifest(output, current=False) or {}
    digest = record.get("output_digest")
    return isinstance(digest, dict) and made[0] is not None and digest.get("sha256") != made[0] and _by_run(record)


def _by_run(record: Mapping[str, Any]) -> bool:
    """Whether a manifest names `semrel run` as the command that wrote its file (and no fill added rows since)."""
    fills, command = record.get("fills"), record.get("command")
    filled = isinstance(fills, list) and bool(fills) and isinstance(fills[-1], dict)
    return not filled and isinstance(command, list) and command[1:2] == ["run"]


def _invoke(step: Step) -> None:
    """Run the step's command in process; what it prints goes to step.stdout, which is derived too: it
    and its manifest (naming the step's command) are written as one unit. Every manifest the step writes records
    its command as "step" (the run's own command line leaves out what SEMREL_* variables set)."""
    from ..formats.files import atomic_writer
    from ..formats.manifest import outputs_with_manifests, recorded_step, write_manifest

    captured = step.stdout if step.stdout and step.stdout != os.devnull else None
    for path in step.outputs:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with recorded_step(["semrel", *step.command, *step.args, *step.placement]), \
            outputs_with_manifests([captured] if captured else []) as staged:
        with (atomic_writer(staged[captured]) if captured else open(os.devnull, "w", encoding="utf-8") if step.stdout
              else contextlib.nullcontext(None)) as handle:
            with contextlib.redirect_stdout(handle) if handle is not None else contextlib.nullcontext():
                _call(step)
        if captured:
            write_manifest(captured, inputs=step.inputs, params={"step": step.name, "command": step.shell(width=10**6)},
                           staged=staged)


def _call(step: Step) -> None:
    import click

    from .base import main

    command: Any = main
    for part in step.command:
        command = command.get_command(click.Context(command), part)
    try:
        # the root's context settings (click caches a command's help option with the names it first
        # saw), but not its environment prefix: a step reads only its command line, which is hashed
        settings = {k: v for k, v in main.context_settings.items() if k != "auto_envvar_prefix"}
        command.main(args=[*step.args, *step.placement], prog_name=f"semrel {' '.join(step.command)}", standalone_mode=False,
                     **settings)
    except click.exceptions.Abort:  # Ctrl-C in a step, which click (not standalone) turns into Abort
        raise KeyboardInterrupt from None
    except click.exceptions.Exit as exc:
        if exc.exit_code:
            raise SemrelError(f"{step.name}: exited with code {exc.exit_code}") from None
    except click.ClickException as exc:
        raise UsageError(f"{step.name}: {exc.format_message()}") from None
    except SemrelError as exc:
        if step.command == ("golden", "import"):  # the import command names its options, which a config gives as keys
            exc.args = (re.sub(f"--({'|'.join(k.replace('_', '-') for k in ('format', *GOLDEN_OPTIONS))})\\b",
                               lambda m: f"[golden] {m[1].replace('-', '_')}", str(exc)),)
        exc.args = (f"{step.name}: {exc}",)  # which step failed, whatever the error's kind (kept: its exit code)
        raise exc from None


def _read_state(out: str, part: str = "steps") -> dict[str, Any]:
    """The state's "steps": step -> {"settings": hash, "inputs": {path: sha256}, "seconds": wall time, "finished": UTC
    time} of its last successful run; or its "gold": the texts of the gold chunks and of the chunks the user's runs name,
    as of the last successful run (watched_texts)."""
    try:
        state = os.path.join(out, STATE_FILE)
        if not os.path.isfile(state):
            return {}
        with open(state, encoding="utf-8") as handle:
            found = json.load(handle).get(part, {})
        return {k: v for k, v in found.items() if isinstance(v, dict) or part != "steps"}
    except (OSError, ValueError, AttributeError, RecursionError):
        return {}


def _write_state(out: str, state: dict[str, dict[str, Any]], gold: Mapping[str, Any]) -> None:
    from ..formats.files import atomic_writer

    os.makedirs(out, exist_ok=True)
    with atomic_writer(os.path.join(out, STATE_FILE)) as handle:
        json.dump({"steps": state, "gold": gold}, handle, indent=2, sort_keys=True)
        handle.write("\n")


def watched_texts(golden: str, runs: Sequence[str], corpus: str, known: Mapping[str, Any], digests: Digests,
                  say: Callable[[str], None] = lambda line: None) -> tuple[dict[str, Any], list[str]]:
    """The texts of the gold chunks and of the chunks the user's own runs name, as the state keeps them ({"golden",
    "corpus": [sha256, stamp], "runs": {path: [sha256, stamp]}, "chunks": {chunk id: sha256 of its text}}), from
    `known` (the last successful run's), and a warning for each that names a chunk holding other text than then: chunk
    ids are positions (`<doc_id>#<n>`), so a paragraph inserted at the top of a document moves the later chunks' texts
    while the ids still resolve, and every score was silently against the wrong gold, or of a run made over the corpus
    as it was (a run file changed since is taken as made anew). The files are read only when one of them or the corpus
    changed; the corpus is then streamed for those chunks' texts alone (memory follows the golden set and the runs),
    after a line to `say` (a pass over a large corpus, after the step table, had no line)."""
    from ..formats.corpus import iter_corpus, read_golden
    from ..formats.trec import read_run, run_name

    given = known.get("runs")
    recorded_runs: Mapping[str, Any] = given if isinstance(given, dict) else {}
    files = {name: list(digests.file(path, *_pair(known.get(name)))) for name, path in (("golden", golden), ("corpus", corpus))}
    # kept by their canonical paths: the config named from another folder spells them otherwise, and its run went for one
    # made anew
    keys = {path: canonical(path) for path in runs}
    run_files = {path: list(digests.file(path, *_pair(recorded_runs.get(keys[path])))) for path in runs}
    kept = known.get("chunks")
    before: dict[str, Any] = kept if isinstance(kept, dict) else {}
    same = {name: files[name][0] is not None and files[name][0] == _pair(known.get(name))[0] for name in files}
    same_run = {path: run_files[path][0] is not None and run_files[path][0] == _pair(recorded_runs.get(keys[path]))[0]
                for path in runs}
    state = {**files, "runs": {keys[path]: found for path, found in run_files.items()}}
    if all(same.values()) and all(same_run.values()) and "chunks" in known:
        return {**known, **state}, []
    try:
        items = read_golden(golden)
        named = {path: set(read_run(path).doc_ids.to_pylist()) for path in runs}
    except (SemrelError, OSError):  # its step has said what is wrong with it
        return dict(known), []
    first: dict[str, str] = {}  # each gold chunk -> the first query it is gold for
    for item in items:
        if "answer_chunks" in item.meta:  # gold found anew by its answer at each import (doc_qrels answer-chunk): it moves along
            continue
        for chunk_id in item.gold_chunk_ids:
            first.setdefault(chunk_id, item.query_id)
    wanted = set(first).union(*named.values())
    if not wanted or same["corpus"] and wanted <= before.keys():  # nothing to watch (the corpus is not read), or no new text
        chunks = {chunk_id: before[chunk_id] for chunk_id in wanted}
    else:
        what = f"{len(wanted):,} gold and run chunks" if runs else quantity(len(wanted), "gold chunk")
        say(f"semrel run: reading {corpus} for the texts of {what}")
        chunks = {chunk.id: hashlib.sha256(chunk.text.encode("utf-8", "surrogatepass")).hexdigest()
                  for _, chunk in iter_corpus(corpus) if chunk.id in wanted}

    def moved(ids: Iterable[str]) -> list[str]:
        return [c for c in ids if c in before and c in chunks and before[c] != chunks[c]]

    warnings = []
    gold = moved(first)
    if gold:
        warnings.append(
            f"{quantity(len(gold), 'gold chunk')} of {golden} {agreeing(len(gold), 'hold')} other text than at the last run (e.g. "
            f"{gold[0]}, "
            f"gold for query {first[gold[0]]}): chunk ids are positions in their document, so an edited document, or another "
            "[corpus] size or overlap, moves text between them, and the scores are against the text now there; check the gold "
            "and fix the ids, or clear them and "
            f"pick again with `semrel golden pick --golden {shlex.quote(golden)} --corpus {shlex.quote(corpus)}`")
    for path in runs:
        stale = moved(sorted(named[path])) if same_run[path] else []
        if stale:
            warnings.append(
                f"run {run_name(path)!r} ({path}) names {quantity(len(stale), 'chunk')} holding other text than "
                f"at the last run (e.g. {stale[0]}): it was made over the corpus as it was, and is scored against the text now "
                "there; make it again over the current corpus")
    return {**state, "chunks": chunks}, warnings


def run_pipeline(config_path: str, sets: Sequence[str] = (), environ: Mapping[str, str] | None = None,
                 dry_run: bool = False, force: tuple[str, ...] = (), echo: Callable[[str], None] = print,
                 ) -> list[tuple[Step, str, float]]:
    """Run (or with dry_run, only decide) every step; returns (step, "ran"/"skipped"/"would run", seconds). A dry pass
    comes first, so that a step which would replace work `semrel run` did not make stops the run before any step runs."""
    from .base import warn

    for message in ignored_variables(os.environ if environ is None else environ):
        warn(message)
    config = load_config(config_path, sets, environ)
    for message in idle_keys(config):
        warn(message)
    steps = plan(config)
    if unread := unread_variables(os.environ if environ is None else environ, steps):
        warn(unread)
    check_outputs_spare_inputs(config_path, config, steps)
    planned = list(dict.fromkeys(step.name.split()[0] for step in steps))
    for name in force:
        if name not in planned:
            raise UsageError(f"--force {name}: no {name} step in this config (its steps: {', '.join(planned)})")
    out = config[""]["out"]
    digests = Digests()  # one for both passes: a file the dry pass read is not read again
    if dry_run:
        notes: list[str] = []  # said once the plan is not refused
        plan_made = check_not_replacing_work(_run_steps(steps, config, out, True, force, notes.append, digests), out, force)
        for note in notes:
            echo(note)
        return plan_made
    from ..formats.files import locked

    os.makedirs(out, exist_ok=True)
    for own in (LOCK_FILE, STATE_FILE):  # a FIFO would hang the lock; a folder fail the state's write after the first step
        path = os.path.join(out, own)
        if not_plain(path):
            raise UsageError(f"{path}: semrel run keeps its own {'lock' if own == LOCK_FILE else 'state'} there, and this is "
                             "no plain file: remove it (nothing was run)")
    with locked(os.path.join(out, LOCK_FILE), lambda: echo(f"semrel run: waiting for the other `semrel run` writing {out}")):
        check_not_replacing_work(_run_steps(steps, config, out, True, force, lambda line: None, digests), out, force)
        from .base import warnings_once

        with warnings_once():
            summary = _run_steps(steps, config, out, False, force, echo, digests)
        if left := unplanned_outputs(out, steps):
            warn(left)
    _calibration_hint(summary, config, config_path, echo)
    return summary


def unplanned_outputs(out: str, steps: Sequence[Step]) -> str | None:
    """What steps of an earlier config wrote that this one no longer runs (a step switched off, a method or [lift] base
    dropped): kept, as the step may come back, but nothing made now reads them, and `semrel verify` on `out` then
    found them made from inputs that had changed since, with no word from the run of why they were still there."""
    planned = {step.name for step in steps}
    current = {canonical(output) for step in steps for output in step.outputs}
    left = {name: [path for path in record.get("outputs") or {} if path not in current and os.path.isfile(path)]
            for name, record in _read_state(out).items() if name not in planned}
    files = [path for paths in left.values() for path in paths]
    if not files:
        return None
    shown = ", ".join(os.path.relpath(path) for path in files[:4]) + (f" and {len(files) - 4} more" if len(files) > 4 else "")
    steps_named = ", ".join(name for name, paths in left.items() if paths)
    return (f"{quantity(len(files), 'file')} in {out} {agreeing(len(files), 'come')} from steps this config no longer runs "
            f"({steps_named}): {shown}; nothing this run made reads them, and `semrel verify` checks them against inputs that "
            "may have changed since: remove them if you no longer need them")


def _calibration_hint(summary: list[tuple[Step, str, float]], config: dict[str, dict[str, Any]], config_path: str,
                      echo: Callable[[str], None]) -> None:
    """The label step's warnings say to label with `semrel label --calibration`; under `semrel run` the refit belongs in
    the config, where label and every step after it follow it (a derived.qrels relabelled by hand is work the next run
    refuses to replace)."""
    label = next((step for step, status, _ in summary if step.name == "label" and status == "ran"), None)
    if label is None or config["label"]["calibration"] is not None:
        return
    if any("semrel calibrate" in str(w) for w in (read_params(label.outputs[0]) or {}).get("warnings", [])):
        echo(f"semrel run: to label with the refit the warning names, set [label] calibration in {config_path} to the file "
             "`semrel calibrate -o` wrote (relative to the config), or pass --set label.calibration=FILE: label, the "
             "scores and the report follow it on the next run")


def _run_steps(steps: list[Step], config: dict[str, dict[str, Any]], out: str, dry_run: bool, force: tuple[str, ...],
               echo: Callable[[str], None], digests: Digests) -> list[tuple[Step, str, float]]:
    """The steps run or skipped in order, the state read (and kept) under run_pipeline's lock on `out`, so two runs over one
    folder take turns: the second finds the first one's outputs and skips what they made."""
    state = _read_state(out)
    gold_known = {} if dry_run else _read_state(out, "gold")
    summary: list[tuple[Step, str, float]] = []
    pending: set[str] = set()  # outputs a dry run would rewrite: whatever reads them would run too
    maybe: dict[str, list[str]] = {}  # an input a dry run would rewrite -> the steps that run only if the part they read changes
    maybe_made: set[str] = set()  # their outputs: rewritten only if those steps run (the rerank reads bm25's run)
    restamped = False
    while len(summary) < len(steps):
        step = steps[len(summary)]
        recorded = state.get(step.name, {})
        forced = step.name.split()[0] in force
        waiting = pending.intersection(step.inputs)
        if not forced and not waiting and up_to_date(step, recorded, digests):
            summary.append((step, "skipped", 0.0))
            read = digests.of(step, recorded)  # the stamps of inputs read again (a touch, a copy) kept, not to read them next time
            if not dry_run and read["inputs"] == recorded.get("inputs") and read["stamps"] != recorded.get("stamps"):
                state[step.name] = {**recorded, "stamps": read["stamps"]}
                restamped = True
        else:
            if dry_run:
                pending.update(step.outputs)
                summary.append((step, "would run", 0.0))
                parted = waiting - maybe_made  # the others hold what they hold now if their steps are skipped
                if not forced and parted and parted <= set(step.parts) and _up_to_date_but(step, parted, recorded, digests):
                    for path in parted:
                        maybe.setdefault(path, []).append(step.name)
                    maybe_made.update(step.outputs)
            else:
                echo(f"semrel run: {step.name}")
                read = digests.of(step, recorded)
                start = time.perf_counter()
                _invoke(step)
                seconds = time.perf_counter() - start
                state[step.name] = {"settings": step.settings_hash(), **read, "outputs": _made(step), "seconds": round(seconds, 3),
                                    "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
                _write_state(out, state, gold_known)
                restamped = False
                summary.append((step, "ran", seconds))
        gold = _has_gold(step, pending) if step.name == "qrels" else True
        if gold is None:
            echo(f"semrel run: {step.inputs[0]} would be made anew, so whether its gold chunks are scored against "
                 "(eval gold, agree, the report's gold column) is known only once it is: those steps are listed")
        elif not gold:
            rest = [s for s in plan(config, gold=False) if s.name not in {d.name for d, _, _ in summary}]
            echo("semrel run: the golden set has no gold chunks: nothing is scored against them (no eval gold, no agree, "
                 f"the report without the gold column){_picks_kept(step.inputs[0])}")
            steps = steps[: len(summary)] + rest
    for path, names in maybe.items():
        parts = ", ".join(dict.fromkeys(s.parts[path] for s in steps if s.name in names))
        echo(f"semrel run: {', '.join(names)} {agreeing(len(names), 'read')} only the {parts} of {path}, which would be made "
             f"anew: listed, but skipped if the new file's {parts} are the old ones")
    if not dry_run:
        from .base import warn

        corpus = config["corpus"]["file"] or os.path.join(out, "corpus.jsonl")
        gold_now, moved = watched_texts(os.path.join(out, "golden.jsonl"), config["retrieve"]["runs"], corpus, gold_known, digests,
                                        echo)
        for line in moved:
            warn(line)
        restamped = restamped or gold_now != gold_known
        gold_known = gold_now
    if restamped:
        _write_state(out, state, gold_known)
    return summary


def _up_to_date_but(step: Step, inputs: set[str], recorded: Mapping[str, Any], digests: Digests) -> bool:
    """Whether `step` is up to date but for `inputs`, which a dry run cannot know (a step before would make them anew)."""
    left = {canonical(path) for path in inputs}
    known = recorded.get("inputs")
    kept = {**recorded, "inputs": {k: v for k, v in known.items() if k not in left} if isinstance(known, dict) else known}
    # the inputs left out stay among the paths the settings hash makes absolute (a relative `out` had them hashed
    # as written, so the step never looked up to date and the note that it may be skipped was never said)
    return up_to_date(replace(step, inputs=[p for p in step.inputs if p not in inputs], folders=[*step.folders, *inputs]),
                      kept, digests)


def _picks_kept(golden: str) -> str:
    """Where `golden` has a `semrel golden pick` journal beside it, what becomes of its picks: a golden.jsonl made anew
    (--force import) holds none of them until pick opens it and replays its journal. Before, --force import ran every
    later step without the picks, and neither the refusal that suggested it nor the run said they were kept."""
    from ..golden.pick import journal_path

    journal = journal_path(golden)
    if not os.path.basename(golden) == "golden.jsonl" or not os.path.isfile(journal):
        return ""
    return (f"; the picks of `semrel golden pick` stay in {journal} and are not in a golden.jsonl made anew: "
            f"`semrel golden pick --golden {shlex.quote(golden)} --corpus CORPUS` replays them onto it, then run again")


def _has_gold(qrels: Step, pending: set[str]) -> bool | None:
    """Whether the golden set has gold chunks: the qrels step's output is empty when it has none. In a dry pass that
    would remake that output, the golden set tells (the old output may be another set's), unless it would be made
    anew too (None: not known before the import runs)."""
    (golden,), (gold_qrels,) = qrels.inputs, qrels.outputs
    if gold_qrels not in pending:
        return not (os.path.isfile(gold_qrels) and os.path.getsize(gold_qrels) == 0)
    if golden in pending or not os.path.isfile(golden):
        return None
    from ..formats.corpus import read_golden

    try:
        return any(item.gold_chunk_ids for item in read_golden(golden))
    except SemrelError:  # the qrels step will say what is wrong with it
        return None


def _made(step: Step) -> dict[str, list[str | None]]:
    """The sha256 of each output and of its manifest as the step left them: one that differs later holds work
    `semrel run` did not make (check_not_replacing_work)."""
    return {canonical(output): [content_sha256(output), content_sha256(manifest_path(output))] for output in step.outputs}


KEPT_AS = {"golden.jsonl": "[golden] file", "corpus.jsonl": "[corpus] file"}  # outputs a config key can take in their place
LABEL_HERE = "; to label with `semrel calibrate`'s file in this pipeline, set [label] calibration (--set label.calibration=FILE)"
"""The way for labels a `semrel label --calibration` by hand wrote over the run's: the label warnings advise that command."""


def check_not_replacing_work(planned: list[tuple[Step, str, float]], out: str, force: tuple[str, ...]
                             ) -> list[tuple[Step, str, float]]:
    """Refuse, before any step runs, a plan (a dry pass's) whose steps would replace work `semrel run` did not
    make: an output or manifest changed since the step left them (`semrel golden pick` writes its picks into
    golden.jsonl, `semrel fill` adds rows to judgments.jsonl, `semrel label` run by hand, a hand edit).
    --force STEP replaces it. Returns `planned`."""
    state = _read_state(out)
    for step, status, _ in planned:
        name = step.name.split()[0]
        made = state.get(step.name, {}).get("outputs")
        for output in step.outputs if status == "would run" and name not in force else ():
            work = _work_in(output, _pair(made.get(canonical(output)) if isinstance(made, dict) else None))
            if work:
                key = KEPT_AS.get(os.path.basename(output))
                keep = f"copy it out of {out} and give the copy as {key}" if key else "copy it elsewhere"
                raise UsageError(f"{step.name} would replace {output}, {work}: to keep it, {keep}; to replace it, "
                                 f"run again with --force {name}{_picks_kept(output)}{LABEL_HERE if name == 'label' else ''}")
    return planned


def _work_in(output: str, made: list[Any]) -> str | None:
    """What put work into `output` that `semrel run` did not make ("which `semrel golden pick ...` wrote", "which was
    changed after `semrel run ...` wrote it"); None when replacing it loses nothing: it is missing; it and its
    manifest are as the step left them (`made`: their sha256); or a run stopped before it recorded the step left
    them: a manifest naming `semrel run` (and no fill) that describes the file, or one beside the old file (a
    kill between the two renames). Nothing tells of other work in a file without a manifest that no run recorded
    (a table printed by a semrel that gave it none)."""
    if not os.path.exists(output):
        return None
    record = read_manifest(output, current=False)
    if record is None:
        return None if made[0] in (None, content_sha256(output)) else "which holds other bytes than `semrel run` wrote and no manifest"
    fills = record.get("fills")
    last = fills[-1] if isinstance(fills, list) and fills and isinstance(fills[-1], dict) else record
    command = last.get("command")
    writer = f"`{shlex.join(map(str, command))}`" if isinstance(command, list) else "another command"
    by_run = _by_run(record)
    if (content_sha256(manifest_path(output)) == made[1] or by_run) and (content_sha256(output) == made[0] or
                                                                  (by_run and read_manifest(output) is not None)):
        return None
    if read_manifest(output) is None:
        return f"which was changed after {writer} wrote it"
    return f"to which {writer} added rows" if last is not record else f"which {writer} wrote"
