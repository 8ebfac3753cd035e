"""`semrel run CONFIG.toml`: the whole pipeline from one TOML file, each step skipped when up to date.

A step is up to date when every output exists and is the file its manifest describes (a crash
between the two writes leaves an old manifest), every input holds the bytes the last successful
run read (their sha256, in `<out>/.semrel-run.json`; of golden.jsonl, retrieval reads and hashes only
the queries: Step.parts), and the step's settings (the exact command
line it would run) hash to what that run recorded. Steps run the same click commands a user types
(in process, no subprocesses), so each output gets the command's own manifest and checks.

Settings: `--set section.key=value` over `SEMREL_<SECTION>_<KEY>` over the config file over the
defaults; they all end up in the steps' command lines, so a changed value reruns what it affects.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import shlex
import sys
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, NoReturn, Sequence

from ..errors import FormatError, SemrelError, UsageError
from ..formats.files import bytes_sha256, folder_digest, folder_files, lasting, not_plain, read_text, stamp
from ..formats.jsonl import check_nesting, too_deep
from ..formats.manifest import manifest_is_stale, manifest_path, read_manifest, read_params
from ..judging import labels

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

STATE_FILE = ".semrel-run.json"
LOCK_FILE = ".semrel-run.lock"
GOLDEN_OPTIONS = ("query_col", "answer_col", "chunk_ids_col", "id_col", "doc_qrels")  # [golden] keys passed on as they are
STEPS = ("chunk", "import", "qrels", "retrieve", "pool", "judge", "label", "eval", "agree", "compare", "sensitivity", "lift",
         "report")

# section -> key -> (type, default); None default = not passed on (the command's own default applies).
_STR, _INT, _FLOAT, _BOOL, _LIST = "a string", "an integer", "a number", "true or false", "a list of strings"
SCHEMA: dict[str, dict[str, tuple[str, Any]]] = {
    "": {"out": (_STR, "out")},
    "corpus": {"docs": (_STR, None), "size": (_INT, None), "overlap": (_INT, None), "file": (_STR, None), "whole": (_BOOL, False)},
    "golden": {"file": (_STR, None), "format": (_STR, "auto"), "sample": (_INT, None), "limit": (_INT, None), "seed": (_INT, 0),
               "qrels": (_STR, None), "query_col": (_STR, None), "answer_col": (_STR, None), "chunk_ids_col": (_STR, None),
               "id_col": (_STR, None), "doc_qrels": (_STR, None)},
    "retrieve": {"methods": (_LIST, ["bm25"]), "k": (_INT, 20), "model": (_STR, None), "runs": (_LIST, [])},
    "bm25": {"k1": (_FLOAT, None), "b": (_FLOAT, None), "method": (_STR, None), "stemmer": (_STR, None), "stopwords": (_STR, None)},
    "pool": {"depth": (_INT, 10), "enabled": (_BOOL, True)},
    "judge": {"enabled": (_BOOL, True), "model": (_STR, None), "layer": (_INT, None), "idf": (_BOOL, False),
              "rescale": (_STR, "none"), "cache": (_STR, "cache")},
    "label": {"threshold": (_FLOAT, None), "on": (_STR, None), "grades": (_STR, None), "graded": (_BOOL, False),
              "calibration": (_STR, None)},
    "eval": {"enabled": (_BOOL, True), "measures": (_LIST, [])},
    "agree": {"enabled": (_BOOL, True)},
    "compare": {"enabled": (_BOOL, True)},
    "sensitivity": {"enabled": (_BOOL, True), "measure": (_STR, "nDCG@10"), "from": (_FLOAT, None), "to": (_FLOAT, None),
                    "step": (_FLOAT, None)},
    "lift": {"base": (_STR, None), "rerank": (_STR, "dense"), "depth": (_INT, None)},
    "report": {"enabled": (_BOOL, True), "title": (_STR, None)},
    "engine": {"name": (_STR, "local"), "address": (_STR, None), "workers": (_INT, None)},
}
CHUNK_SIZE, CHUNK_OVERLAP = 120, 20  # for [corpus] docs when size/overlap are not set


class ConfigError(UsageError):
    """A config value that cannot work; names the file, section and key."""


def _check_type(kind: str, value: Any) -> bool:
    if kind == _STR:
        return isinstance(value, str)
    if kind == _INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == _FLOAT:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == _BOOL:
        return isinstance(value, bool)
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def env_name(section: str, key: str) -> str:
    """The environment variable of a config key: SEMREL_LABEL_THRESHOLD, SEMREL_OUT."""
    return "_".join(["SEMREL", *(part.upper() for part in (section, key) if part)])


def config_variables() -> set[str]:
    """The environment variable of every config key (what `semrel run` reads, and `semrel doctor` knows)."""
    return {env_name(section, key) for section, keys in SCHEMA.items() for key in keys}


def _key(section: str, key: str) -> str:
    return f"[{section}] {key}" if section else key


def _unknown(section: str, key: str) -> str | None:
    """Why `section`.`key` is no config key, in the same words for the file and --set; None when it is one."""
    if section not in SCHEMA:
        return f"[{section}]: unknown section (known: {', '.join(s for s in SCHEMA if s)})"
    if key not in SCHEMA[section]:
        return f"{_key(section, key)}: unknown key (known: {', '.join(SCHEMA[section])})"
    return None


def _override_value(text: str, kind: str) -> Any:
    """A value from the environment or --set: TOML (0.72, true, ["a", "b"]), but strings need no
    quotes and a list may be comma-separated, as a shell user would type them."""
    try:
        value = text if too_deep(text, toml=True) else tomllib.loads(f"v = {text}")["v"]
    except (ValueError, RecursionError):  # not TOML (a TOMLDecodeError), or a number of too many digits: taken as text
        value = text
    if kind == _STR and not isinstance(value, str):
        return text
    if kind == _LIST and isinstance(value, str):
        return [part for part in re.split(r"[\s,]+", value) if part]
    return value


def _overrides(environ: Mapping[str, str], sets: Sequence[str]) -> list[tuple[str, str, str, str]]:
    """(section, key, value text, source) of each config key that a SEMREL_* variable or --set gives, from the one
    that wins (the last --set, else the variable): a value overridden is neither read nor checked (a bad
    SEMREL_LABEL_THRESHOLD refused the --set label.threshold meant to replace it)."""
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for section, keys in SCHEMA.items():
        for key in keys:
            text = environ.get(env_name(section, key))
            if text:
                found[section, key] = (text, f"{env_name(section, key)}={text}")
    for item in sets:
        target, equals, text = item.partition("=")
        section, _, key = target.strip().rpartition(".")
        if not equals or not key:
            raise ConfigError(f"--set {item}: expected SECTION.KEY=VALUE with a config key, e.g. label.threshold=0.72 "
                              "(keys: docs/run.md)")
        unknown = _unknown(section, key)
        if unknown:
            raise ConfigError(f"--set {item}: {unknown}")
        found[section, key] = (text.strip(), f"--set {item}")
    return [(section, key, text, source) for (section, key), (text, source) in found.items()]


def ignored_variables(environ: Mapping[str, str]) -> list[str]:
    """A warning for each SEMREL_<SECTION>_<REST> variable (set, not empty) of a config section that is neither one of its
    keys nor an option of the command of that name (SEMREL_EVAL_PLACES is `semrel eval --places`, SEMREL_GOLDEN_IMPORT_FORMAT
    `semrel golden import --format`): a misspelt key (SEMREL_LABEL_TRESHOLD) was ignored without a word, where --set
    refuses it."""
    from .base import COMMANDS, command_variables

    keys = config_variables()
    options: dict[str, set[str]] = {}  # each command loaded only for a variable that is no key
    found = []
    for name in sorted(environ):
        section, _, rest = name.removeprefix("SEMREL_").lower().partition("_")
        if not name.startswith("SEMREL_") or not section or section not in SCHEMA or not rest or not environ[name] or name in keys:
            continue
        if section not in options:
            options[section] = command_variables(section)
        if name not in options[section]:
            nor = f", and no option of `semrel {section}` reads it" if section in COMMANDS else ""
            found.append(f"{name}: ignored by `semrel run`: [{section}] has no key {rest} (keys: {', '.join(SCHEMA[section])}){nor}")
    return found


def load_config(path: str, sets: Sequence[str] = (), environ: Mapping[str, str] | None = None
                ) -> dict[str, dict[str, Any]]:
    """The config with every default filled in and the SEMREL_* variables (of `environ`) and --set
    values applied over it; ConfigError (one line naming the key and where it came from) on any problem."""
    name = os.path.basename(path)
    if not os.path.exists(path):
        raise ConfigError(f"{path}: no such config file (write one with `semrel init`)")
    try:
        text = read_text(path)  # a regular file only, within the size limits
        check_nesting(text, path, toml=True)
        raw = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{name}: not valid TOML: {exc}") from None
    except ValueError:  # Python reads no integer of more digits
        raise ConfigError(f"{name}: holds a number of more than {sys.get_int_max_str_digits():,} digits, which no key takes") from None
    except FormatError as exc:  # not UTF-8, not a regular file, too large: a config problem like any other (exit 2)
        raise ConfigError(str(exc)) from None
    except RecursionError:
        raise ConfigError(f"{name}: nested too deeply to read") from None
    unknown_sections = [k for k in raw if isinstance(raw[k], dict) and k not in SCHEMA]
    if unknown_sections:
        raise ConfigError(f"{name}: {_unknown(unknown_sections[0], '')}")
    config: dict[str, dict[str, Any]] = {}
    # where each value came from: the prefix of its error messages, and the folder its paths are relative to
    origin: dict[tuple[str, str], tuple[str, str]] = {}
    base = os.path.dirname(path)
    for section, keys in SCHEMA.items():
        table = raw if section == "" else raw.get(section, {})
        if not isinstance(table, dict):
            raise ConfigError(f"{name}: [{section}] expected a table")
        config[section] = {}
        for key, (kind, default) in keys.items():
            where = f"{name}: {_key(section, key)}"
            if key in table and not _check_type(kind, table[key]):
                raise ConfigError(f"{where}: expected {kind}")
            config[section][key] = table.get(key, default)
            origin[section, key] = (where, base)
        unknown = [k for k in table if k not in keys and not (section == "" and k in SCHEMA)]
        if unknown:
            raise ConfigError(f"{name}: {_unknown(section, unknown[0])}")
    for section, key, text, source in _overrides(os.environ if environ is None else environ, sets):
        kind = SCHEMA[section][key][0]
        value = _override_value(text, kind)
        where = f"{source}: {_key(section, key)}"
        if not _check_type(kind, value):
            raise ConfigError(f"{where}: expected {kind}")
        config[section][key] = value
        origin[section, key] = (where, os.getcwd())  # paths typed in a shell are relative to it

    def resolve(section: str, key: str, must_exist: str | None = None, under: str | None = None) -> None:
        """The key's path (or each path of a list) made absolute from the folder its value came from, and checked."""
        value = config[section][key]
        if value is None:
            return
        where, folder = origin[section, key]
        folder = under or folder

        def full(value: str) -> str:
            if not value.strip():  # '' would be the current folder: `--set out=` would write beside whatever is there
                raise ConfigError(f"{where}: empty; give a path")
            path = os.path.normpath(os.path.join(folder, os.path.expanduser(value)))  # `~/x` as a shell, or the model loader, takes it
            if must_exist == "path" and not os.path.exists(path):
                raise ConfigError(f"{where}: no such folder or file '{value}'")
            if must_exist == "file" and not os.path.isfile(path):
                raise ConfigError(f"{where}: no such file '{value}'")
            if must_exist == "folder" and os.path.exists(path) and not os.path.isdir(path):  # made if missing
                raise ConfigError(f"{where}: '{value}' is a file; give a folder")
            return path

        config[section][key] = [full(v) for v in value] if isinstance(value, list) else full(value)

    resolve("", "out", "folder")
    resolve("corpus", "docs", "path")
    resolve("corpus", "file", "file")
    resolve("golden", "file", "path")  # a file, or a folder (BEIR, Cranfield)
    resolve("golden", "qrels", "file")
    resolve("label", "calibration", "file")
    resolve("retrieve", "runs", "file")
    resolve("judge", "cache", "folder", under=config[""]["out"])  # inside out, wherever the value came from
    from ..encoding.models import is_path  # here: `semrel run --help` stays quick
    from ..retrieval.retrieve import stopwords_file

    if stopwords_file(config["bm25"]["stopwords"]):
        resolve("bm25", "stopwords", "file")  # a file of words, not a list name
    for section in ("retrieve", "judge"):  # a model folder (relative to the config, as every path) or a Hugging Face name
        model = config[section]["model"]
        if model is not None and (is_path(model) or os.path.exists(os.path.join(origin[section, "model"][1], model))):
            resolve(section, "model", "path")
    if config["corpus"]["docs"] is not None and config["corpus"]["file"] is not None:
        raise ConfigError(f"{name}: [corpus] docs: give docs (a folder to chunk) or file (a corpus.jsonl), not both")
    if config["corpus"]["file"] is not None:
        for key in ("size", "overlap", "whole"):
            if config["corpus"][key] is not None and config["corpus"][key] is not False:
                raise ConfigError(f"{origin['corpus', key][0]}: does nothing with [corpus] file, a corpus already chunked; "
                                  "remove it")
    if config["golden"]["file"] is None:
        raise ConfigError(f"{name}: [golden] file: missing (the golden set: CSV, JSONL, SQuAD, BEIR...)")
    if config["golden"]["sample"] is not None and config["golden"]["limit"] is not None:
        raise ConfigError(f"{origin['golden', 'sample'][0]}: give [golden] sample or limit, not both")
    for key in ("sample", "limit"):
        if config["golden"][key] is not None and config["golden"][key] < 1:
            raise ConfigError(f"{origin['golden', key][0]}: give 1 or more queries")
    for key in ("size", "overlap"):
        if config["corpus"]["whole"] and config["corpus"][key] is not None:
            raise ConfigError(f"{origin['corpus', 'whole'][0]}: give [corpus] {key} or whole, not both")
    if not config["retrieve"]["methods"]:
        raise ConfigError(f"{origin['retrieve', 'methods'][0]}: give at least one method")
    if config["engine"]["name"] not in ("local", "ray"):
        raise ConfigError(f"{origin['engine', 'name'][0]}: expected local or ray")
    _check_values(config, origin)
    from ..formats.trec import run_name

    made = [*config["retrieve"]["methods"], *([f"{config['lift']['base']}+{config['lift']['rerank']}"] if config["lift"]["base"] else [])]
    names = [run_name(path) for path in config["retrieve"]["runs"]]
    taken = next((n for i, n in enumerate(names) if n in made or n in names[:i]), None)
    if taken is not None:
        whose = "a run the config makes" if taken in made else "another of them"
        raise ConfigError(f"{origin['retrieve', 'runs'][0]}: two runs would be named {taken!r} ({whose}): runs are told apart by "
                          "their file's name, so rename the file")
    lift = config["lift"]
    if lift["base"] is not None and lift["base"] not in config["retrieve"]["methods"]:
        raise ConfigError(f"{origin['lift', 'base'][0]}: {lift['base']!r} is not one of [retrieve] methods "
                          f"({', '.join(config['retrieve']['methods'])})")
    writes = {path: step.name for step in plan(config) for output in step.outputs for path in (output, manifest_path(output))}
    if config["judge"]["cache"] in writes:
        raise ConfigError(f"{origin['judge', 'cache'][0]}: the {writes[config['judge']['cache']]} step writes "
                          f"{config['judge']['cache']}; give the cache a folder of its own, e.g. cache")
    return config


def _check_values(config: dict[str, dict[str, Any]], origin: Mapping[tuple[str, str], tuple[str, str]]) -> None:
    """Values the steps' commands would refuse, refused before any step runs, naming the config key
    (a bad method or depth otherwise failed after the steps before it had run, naming a command option),
    each by the library's own check."""
    from ..analysis.sensitivity import check_range
    from ..encoding.models import ModelInfo, describe_model
    from ..evaluation.measures import parse_measures
    from ..formats.judgments import PROBABILITY, SCORES
    from ..golden.importers import BUILDS_CORPUS, CONTEXT_FORMATS, FORMATS, detect_format
    from ..golden.sources import DOC_QRELS
    from ..judging.judge import RESCALE_MODES, choose_layer
    from ..judging.labels import choose_rule, parse_thresholds, read_calibration
    from ..retrieval.retrieve import METHODS, RERANKERS, bm25_problem

    def refuse(section: str, key: str, what: str) -> NoReturn:
        raise ConfigError(f"{origin[section, key][0]}: {what}")

    fmt = config["golden"]["format"]
    if fmt not in FORMATS:
        refuse("golden", "format", f"choose one of {', '.join(FORMATS)}")
    if config["golden"]["doc_qrels"] not in (None, *DOC_QRELS):
        refuse("golden", "doc_qrels", f"choose one of {', '.join(DOC_QRELS)}")
    if config["corpus"]["docs"] is None and config["corpus"]["file"] is None:  # the golden file must hold the documents
        with contextlib.suppress(SemrelError):  # a format it cannot tell: the import step says why
            fmt = detect_format(config["golden"]["file"]) if fmt == "auto" else fmt
        if fmt not in (*BUILDS_CORPUS, *CONTEXT_FORMATS, "auto"):  # CONTEXT_FORMATS: their reference contexts become the corpus
            refuse("corpus", "docs", f"missing: a {fmt} golden set holds no documents; give [corpus] docs (a folder of "
                   "documents to chunk) or [corpus] file (a corpus.jsonl)")
    methods = config["retrieve"]["methods"]
    for method in methods:
        if method not in METHODS:
            refuse("retrieve", "methods", f"{method!r} is not a method (choose from {', '.join(METHODS)})")
    if len(set(methods)) < len(methods):
        refuse("retrieve", "methods", "a method is listed twice")
    for section, key in (("retrieve", "k"), ("pool", "depth"), ("corpus", "size"), ("lift", "depth"), ("engine", "workers")):
        if config[section][key] is not None and config[section][key] < 1:
            refuse(section, key, "give 1 or more")
    size, overlap = config["corpus"]["size"] or CHUNK_SIZE, config["corpus"]["overlap"]
    if overlap is not None and not 0 <= overlap < size:
        refuse("corpus", "overlap", f"give 0 or more, below the chunk size ({size})")
    problem = bm25_problem(config["bm25"])
    if problem:
        refuse("bm25", *problem)
    for section, key in (("eval", "measures"), ("sensitivity", "measure")):
        if config[section].get(key):
            try:
                parse_measures(config[section][key])
            except SemrelError as exc:
                refuse(section, key, str(exc))
    if config["judge"]["rescale"] not in RESCALE_MODES:
        refuse("judge", "rescale", f"choose one of {', '.join(RESCALE_MODES)}")
    if config["lift"]["rerank"] not in RERANKERS:
        refuse("lift", "rerank", f"choose one of {', '.join(RERANKERS)}")
    if config["label"]["on"] is not None and config["label"]["on"] not in SCORES:
        refuse("label", "on", f"choose one of {', '.join(SCORES)}")
    if config["label"]["threshold"] is not None and not math.isfinite(config["label"]["threshold"]):
        refuse("label", "threshold", "give a finite number")
    rule: dict[str, Any] = {}
    readers: dict[str, Callable[[Any], Any]] = {"grades": parse_thresholds, "calibration": read_calibration}
    for key in ("on", "threshold", "grades", "calibration", "graded"):  # the key named is the first one at odds with those before
        value = config["label"][key]
        if value is None or value is False:
            continue
        try:
            rule[key] = readers.get(key, lambda given: given)(value)
            choose_rule([], **rule)
        except SemrelError as exc:
            refuse("label", key, str(exc))

    def model(section: str) -> ModelInfo:
        """The model a step would load, described from its folder (a name must be downloaded) without loading it."""
        try:
            return describe_model(config[section]["model"])
        except SemrelError as exc:
            refuse(section, "model", str(exc))

    if set(methods) - {"bm25"} or config["lift"]["base"] is not None:  # dense vectors
        model("retrieve")
    if config["judge"]["enabled"]:
        judge_model = model("judge")
        if config["judge"]["layer"] is not None:
            try:
                choose_layer(judge_model, config["judge"]["layer"])
            except SemrelError as exc:
                refuse("judge", "layer", str(exc))
    sweep = config["sensitivity"]
    if sweep["step"] is not None and not sweep["step"] > 0:
        refuse("sensitivity", "step", "give a number above 0")
    if sweep["from"] is not None and sweep["to"] is not None and not sweep["from"] < sweep["to"]:
        refuse("sensitivity", "from", f"give a number below [sensitivity] to ({sweep['to']:g})")
    if not any(config["label"][key] is not None for key in ("on", "threshold", "grades", "calibration")):  # the sweep is on p
        for key in ("from", "to"):
            try:
                check_range(PROBABILITY, [] if sweep[key] is None else [sweep[key]])
            except SemrelError:
                refuse("sensitivity", key, "give a number in 0..1: the sweep is on the judge's probability p "
                       "(set [label] on and threshold to sweep a raw score)")


@dataclass
class Step:
    """One command of a run, as a user would type it: what it reads and writes is all `up_to_date` needs to skip it,
    and `shell` prints it for --dry-run and the manifests."""

    name: str
    command: tuple[str, ...]
    args: list[str]
    inputs: list[str]
    outputs: list[str]
    stdout: str | None = None  # file that receives what the command prints
    placement: list[str] = field(default_factory=list)  # where the model runs: passed on, not hashed (same outputs)
    folders: list[str] = field(default_factory=list)  # paths passed on that are neither inputs nor outputs (the cache)
    # what the command takes from semrel itself, not from its arguments (p's model, the label cuts): hashed,
    # so that an upgrade which changes them reruns the step instead of leaving outputs made the old way
    builtin: Any = None
    # input -> the part of it the step reads (a name in PARTS): that part's digest stands for the file and its manifest,
    # so a change elsewhere in it reruns nothing (retrieval reads the golden set's queries, not pick's gold chunks)
    parts: dict[str, str] = field(default_factory=dict)

    def settings_hash(self) -> str:
        """The command line, its paths made absolute: the same config named from another folder, or by
        its full path, gives paths spelled otherwise but the same files (and reran every step). Only the
        paths: a value that looks like one (a model name `org/name`) or is a file's name here is no path."""
        paths = {*self.inputs, *self.outputs, *self.folders}
        args = [os.path.abspath(a) if a in paths else a for a in self.args]
        hashed = [self.command, args] + ([self.builtin] if self.builtin is not None else [])
        return hashlib.sha256(json.dumps(hashed, sort_keys=True).encode()).hexdigest()[:16]

    def shell(self, width: int = 100) -> str:
        """The command line a person would type for this step, wrapped at `width` with backslashes."""
        groups: list[str] = []
        for word in map(shlex.quote, ("semrel", *self.command, *self.args, *self.placement)):
            if groups and groups[-1].startswith("-") and " " not in groups[-1] and not word.startswith("-"):
                groups[-1] += f" {word}"  # keep an option with its value
            else:
                groups.append(word)
        if self.stdout and self.stdout != os.devnull:
            groups.append(f"> {shlex.quote(self.stdout)}")
        lines = [groups[0]]
        for group in groups[1:]:
            if len(lines[-1]) + len(group) + 3 > width:
                lines.append(f"    {group}")
            else:
                lines[-1] += f" {group}"
        return " \\\n".join(lines)


def plan(config: dict[str, dict[str, Any]], gold: bool = True) -> list[Step]:
    """The steps the config asks for, in order, with their exact arguments. `gold` False: the golden
    set has no gold chunks, so nothing is scored against them (eval gold, agree, the report's gold column)."""
    out = config[""]["out"]

    def o(name: str) -> str:
        return os.path.join(out, name)

    steps: list[Step] = []
    c, g, r, j, lab = config["corpus"], config["golden"], config["retrieve"], config["judge"], config["label"]
    golden, gold_qrels = o("golden.jsonl"), o("gold.qrels")
    import_args = [g["file"]] + (["--format", g["format"]] if g["format"] != "auto" else [])
    import_inputs = [g["file"]]
    if g["qrels"] is not None:
        import_args += ["--qrels", g["qrels"]]
        import_inputs.append(g["qrels"])
    import_args += [a for key in GOLDEN_OPTIONS if g[key] is not None for a in (f"--{key.replace('_', '-')}", g[key])]
    if g["sample"] is not None:
        import_args += ["--sample", str(g["sample"]), "--sample-seed", str(g["seed"])]
    elif g["limit"] is not None:
        import_args += ["--limit", str(g["limit"])]
    corpus = c["file"] or o("corpus.jsonl")
    if c["docs"] is not None:
        if c["whole"]:
            chunking = ["--whole"]
        else:
            size = CHUNK_SIZE if c["size"] is None else c["size"]
            overlap = CHUNK_OVERLAP if c["overlap"] is None else c["overlap"]
            chunking = ["--size", str(size), "--overlap", str(overlap)]
        steps.append(Step("chunk", ("corpus", "chunk"), [c["docs"], *chunking, "-o", corpus], [c["docs"]], [corpus]))
    if c["docs"] is None and c["file"] is None:  # SQuAD, PubMedQA, MS MARCO, Cranfield: the golden file holds the documents
        chunking = [a for key in ("size", "overlap") if c[key] is not None for a in (f"--{key}", str(c[key]))]
        chunking += ["--whole"] if c["whole"] else []
        steps.append(Step("import", ("golden", "import"), [*import_args, *chunking, "--corpus-out", corpus, "-o", golden],
                          import_inputs, [golden, corpus]))
    else:
        steps.append(Step("import", ("golden", "import"), [*import_args, "--corpus", corpus, "-o", golden],
                          [*import_inputs, corpus], [golden]))
    steps.append(Step("qrels", ("golden", "qrels"), [golden, "-o", gold_qrels], [golden], [gold_qrels]))
    from ..encoding.sentences import RECIPE  # here: `semrel run --help` stays quick
    from ..retrieval.retrieve import stopwords_file

    def on_disk(path: str | None) -> list[str]:
        """A stopwords file or model folder the config names, as an input of the steps that read it; nothing for a
        list or model name (a name that is a folder here is that folder, as the model loader takes it)."""
        return [path] if path is not None and os.path.exists(path) else []

    words = on_disk(config["bm25"]["stopwords"]) if stopwords_file(config["bm25"]["stopwords"]) else []
    runs = []
    vectors = ["--cache", j["cache"]]  # dense chunk vectors kept beside the judge's embeddings
    e = config["engine"]
    placement = [] if e["name"] == "local" else ["--engine", "ray", *(["--ray-address", e["address"]] if e["address"] else []),
                                                 *(["--ray-workers", str(e["workers"])] if e["workers"] else [])]
    bm25 = [a for key, value in config["bm25"].items() if value is not None for a in (f"--bm25-{key}", str(value))]
    for method in r["methods"]:
        run = o(f"runs/{method}.run")
        args = ["--corpus", corpus, "--golden", golden, "--method", method, "-k", str(r["k"])]
        if method != "dense":
            args += bm25
        if method != "bm25":
            args += vectors + (["--model", r["model"]] if r["model"] else [])
        else:  # bm25's index on disk goes beside the dense vectors
            args[4:4] = vectors
        args += ["-o", run]
        inputs = [corpus, golden, *(words if method != "dense" else []), *(on_disk(r["model"]) if method != "bm25" else [])]
        steps.append(Step(f"retrieve {method}", ("retrieve",), args, inputs, [run], placement=placement if method != "bm25" else [],
                          folders=[j["cache"]], builtin=None if method == "bm25" else RECIPE, parts={golden: "queries"}))
        runs.append(run)
    lift = config["lift"]
    base = reranked = None
    if lift["base"] is not None:
        base = o(f"runs/{lift['base']}.run")
        reranked = o(f"runs/{lift['base']}+{lift['rerank']}.run")
        args = ["--corpus", corpus, "--golden", golden, "--run", base, "--rerank", lift["rerank"], "-k", str(r["k"]), *vectors]
        args += ["--rerank-depth", str(lift["depth"] if lift["depth"] is not None else r["k"])]  # default: all of base's chunks
        if r["model"]:
            args += ["--model", r["model"]]
        steps.append(Step(f"retrieve {lift['base']}+{lift['rerank']}", ("retrieve",), args + ["-o", reranked],
                          [corpus, golden, base, *on_disk(r["model"])], [reranked], placement=placement, folders=[j["cache"]],
                          builtin=RECIPE, parts={golden: "queries"}))
        runs.append(reranked)
    runs += r["runs"]  # the user's own runs: pooled, judged and scored beside those the config makes
    checked = ["--corpus", corpus] if r["runs"] else []  # their chunk ids against the corpus (a misspelt id counts as not relevant)
    judgments = derived = pool = None
    if j["enabled"]:
        judge_inputs = [corpus, golden, *on_disk(j["model"])]
        judge_args = ["--corpus", corpus, "--golden", golden]
        if config["pool"]["enabled"]:
            pool = o("pool.tsv")
            steps.append(Step("pool", ("pool",), [*runs, "--golden", golden, "--depth", str(config["pool"]["depth"]), *checked,
                                                   "-o", pool],
                              [golden, *runs, *checked[1:]], [pool]))
            judge_inputs.append(pool)
            judge_args += ["--pool", pool]
        judgments = o("judgments.jsonl")
        judge_args += (["--rescale", j["rescale"]] if j["rescale"] != "none" else []) + (["--idf"] if j["idf"] else [])
        judge_args += ["--cache", j["cache"], "-o", judgments]
        if j["model"]:
            judge_args += ["--model", j["model"]]
        if j["layer"] is not None:
            judge_args += ["--layer", str(j["layer"])]
        steps.append(Step("judge", ("judge",), judge_args, judge_inputs, [judgments], placement=placement, folders=[j["cache"]],
                          builtin=labels.model_params()))
        derived = o("derived.qrels")
        label_args = [judgments, "-o", derived]
        for key in ("on", "threshold", "grades", "calibration"):
            if lab[key] is not None:
                label_args += [f"--{key}", str(lab[key])]
        label_args += ["--graded"] if lab["graded"] else []
        label_inputs = [judgments] + ([lab["calibration"]] if lab["calibration"] else [])
        steps.append(Step("label", ("label",), label_args, label_inputs, [derived], builtin=labels.rule_defaults()))
    if not gold and derived is None:  # eval, compare, lift and the report failed on the empty gold qrels
        raise UsageError("the golden set has no gold chunks and [judge] enabled = false: there are no qrels to score the runs "
                         "on; set [judge] enabled = true to derive them with BERTScore, or give the queries gold chunk ids")
    qrels = derived or gold_qrels
    measures = [a for m in config["eval"]["measures"] for a in ("-m", m)]  # every table of metrics: eval, agree, compare, lift, report
    if config["eval"]["enabled"]:
        for name, q in (("derived", derived), ("gold", gold_qrels if gold else None)):
            if q is None:
                continue
            text = o(f"eval.{name}.txt")
            steps.append(Step(f"eval {name}", ("eval",), [q, *runs, *measures, *checked], [q, *runs, *checked[1:]], [text],
                              stdout=text))
    agreement = None
    if derived and gold and config["agree"]["enabled"]:
        agreement = o("agreement.json")
        ranked = runs if len(runs) > 1 else []  # one run has no ranking to agree on: the labels' agreement only
        steps.append(Step("agree", ("agree",), [gold_qrels, derived, *ranked, *(measures if ranked else []), "--unlisted-as-zero",
                                                "-f", "json"],
                          [gold_qrels, derived, *ranked], [agreement], stdout=agreement))
    if config["compare"]["enabled"] and len(runs) > 1:
        text = o("compare.txt")
        steps.append(Step("compare", ("compare",), [qrels, *runs, *measures, *checked], [qrels, *runs, *checked[1:]], [text],
                          stdout=text))
    curves = None
    s = config["sensitivity"]
    if judgments and s["enabled"] and len(runs) > 1:
        curves = o("sensitivity.csv")
        args = [judgments, *runs, "-m", s["measure"], "--curves", curves]
        for key in ("from", "to", "step"):
            if s[key] is not None:
                args += [f"--{key}", str(s[key])]
        thresholds = lab["threshold"] is not None or lab["grades"] is not None
        if lab["on"] is not None or thresholds:  # the score label's thresholds are on (label's default R), not p
            args += ["--on", lab["on"] or labels.DEFAULT_COMPONENT]
        if lab["threshold"] is not None:
            args += ["--at", str(lab["threshold"])]
        elif lab["calibration"] is not None and lab["grades"] is None:  # the calibrated cut, on the judge's own score
            args += _calibrated_at(lab["calibration"])
        text = o("sensitivity.txt")
        read = [judgments, *runs, *([lab["calibration"]] if "--calibration" in args else [])]
        steps.append(Step("sensitivity", ("sensitivity",), args, read, [curves, text], stdout=text, builtin=labels.rule_defaults()))
    lift_args = []
    if base and reranked:
        lift_args = ["--base", base, "--reranked", reranked] + (["--depth", str(lift["depth"])] if lift["depth"] else [])
        text = o("lift.txt")
        steps.append(Step("lift", ("lift",), [qrels, *lift_args, *measures], [qrels, base, reranked], [text], stdout=text))
    if config["report"]["enabled"]:
        report = o("report.html")
        args = [qrels, *runs, "--golden", golden, "--corpus", corpus, *lift_args, *measures]
        inputs = [qrels, *runs, golden, corpus]
        if derived and gold:  # the metrics of both qrels, side by side
            args += ["--gold-qrels", gold_qrels]
            inputs.append(gold_qrels)
        for option, path in (("--judgments", judgments), ("--sensitivity", curves), ("--agreement", agreement)):
            if path:
                args += [option, path]
                inputs.append(path)
        if config["report"]["title"]:
            args += ["--title", config["report"]["title"]]
        steps.append(Step("report", ("report",), args + ["-o", report], inputs, [report], stdout=os.devnull))
    return steps


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


USER_FILES = (("golden", "file"), ("golden", "qrels"), ("corpus", "file"), ("corpus", "docs"), ("bm25", "stopwords"),
              ("label", "calibration"), ("retrieve", "model"), ("judge", "model"), ("retrieve", "runs"))  # the user's own files


def check_outputs_spare_inputs(config_path: str, config: dict[str, dict[str, Any]], steps: Sequence[Step]) -> None:
    """Refuse, before any step runs, a config whose steps would write over one of its own files (the
    config, the golden set and its qrels, the corpus, stopwords, a calibration), e.g. `out = "."`
    beside gold.qrels, or into the documents folder (whose next chunking would read the outputs).
    (Each step's command checks its own inputs too; this names the config key to change.)"""
    given = [("the config", config_path)] + [(f"[{section}] {key}", path) for section, key in USER_FILES
                                              for path in _listed(config[section][key])]
    for step in steps:
        for output in step.outputs + [f"{o}.manifest.json" for o in step.outputs]:
            for key, path in given:
                inside = path is not None and os.path.isdir(path) and _within(output, path)
                if path is not None and (_same_file(output, path) or inside):
                    raise ConfigError(f"{os.path.basename(config_path)}: the {step.name} step would write {output} "
                                      f"{'into' if inside else 'over'} {key} {path}; semrel never writes over its inputs: "
                                      "set `out` to another folder")


def _listed(value: str | list[str] | None) -> list[str]:
    """The paths a key gives: its list, its one path, or none."""
    return value if isinstance(value, list) else [] if value is None else [value]


def _within(path: str, folder: str) -> bool:
    return os.path.realpath(path).startswith(os.path.realpath(folder).rstrip(os.sep) + os.sep)


def _calibrated_at(path: str) -> list[str]:
    """--on and --at for `sensitivity` from a calibration file: its (first) threshold on the judge's score; for a
    refit of every coefficient, the file itself (its p is recomputed from the features)."""
    from ..judging.labels import ProbabilityRule, read_calibration

    rule = read_calibration(path)  # load_config has read it
    if isinstance(rule, ProbabilityRule) and not rule.cuts_on_p:
        return ["--calibration", path]  # a refit of every coefficient: sweep its p, recomputed from the features
    return ["--on", rule.on, "--at", repr(float(rule.judge_thresholds[len(rule.judge_thresholds) // 2]))]


def _stamp(path: str) -> tuple[Any, int] | None:
    """What stands for the bytes of a file (files.stamp) or of a folder (a digest of its files' names and stamps),
    and when the file, or the folder's newest file, last changed (ctime, ns); None when missing."""
    if not os.path.isdir(path):
        try:
            info = os.stat(path)
        except OSError:
            return None
        return stamp(info), info.st_ctime_ns
    listing, newest = hashlib.sha256(), 0
    for full in folder_files(path):  # the files _digest reads
        name = os.path.relpath(full, path).encode("utf-8", "surrogateescape")
        try:
            info = os.stat(full)
        except OSError:  # a dangling link: its name alone, as _digest reads none of it
            listing.update(name + b"\0")
            continue
        listing.update(name + f"\0{stamp(info)}\0".encode())
        newest = max(newest, info.st_ctime_ns)
    return listing.hexdigest(), newest


def _digest(path: str) -> str | None:
    """sha256 of a file's bytes, or of a folder's files and their names under it (as its manifests record
    it: files.folder_digest); None when missing."""
    return folder_digest(path)["sha256"] if os.path.isdir(path) else bytes_sha256(path)


def _queries(path: str) -> str | None:
    """sha256 of the golden set's query ids and texts, in order: what `semrel retrieve` reads of it (a sample is drawn
    from them too). One that cannot be read goes by its bytes: the step reruns and says what is wrong with it."""
    from ..formats.corpus import read_golden

    try:
        items = read_golden(path)
    except (SemrelError, OSError):
        return _digest(path)
    digest = hashlib.sha256()
    for item in items:
        digest.update(json.dumps([item.query_id, item.query], ensure_ascii=False).encode() + b"\n")
    return f"queries:{digest.hexdigest()}"


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
        key = (os.path.abspath(path), json.dumps(current), part or "")
        if key not in self._read:
            self._read[key] = (PARTS[part](path) if part else _digest(path), lasting(current, changed))
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
            key = os.path.abspath(path)
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
    if isinstance(made, dict) and any(_replaced_by_run(p, _pair(made.get(os.path.abspath(p)))) for p in step.outputs):
        return False
    if isinstance(made, dict) and any(not _manifest_as_left(p, _pair(made.get(os.path.abspath(p)))) for p in step.outputs):
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
    and its manifest (naming the step's command) are written as one unit."""
    from ..formats.files import atomic_writer
    from ..formats.manifest import outputs_with_manifests, write_manifest

    captured = step.stdout if step.stdout and step.stdout != os.devnull else None
    for path in step.outputs:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with outputs_with_manifests([captured] if captured else []) as staged:
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
        if type(exc) in (SemrelError, UsageError):
            raise type(exc)(f"{step.name}: {exc}") from None
        raise


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
    run_files = {path: list(digests.file(path, *_pair(recorded_runs.get(path)))) for path in runs}
    kept = known.get("chunks")
    before: dict[str, Any] = kept if isinstance(kept, dict) else {}
    same = {name: files[name][0] is not None and files[name][0] == _pair(known.get(name))[0] for name in files}
    same_run = {path: run_files[path][0] is not None and run_files[path][0] == _pair(recorded_runs.get(path))[0] for path in runs}
    state = {**files, "runs": run_files}
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
        what = "gold and run chunks" if runs else f"gold chunk{'s' if len(wanted) > 1 else ''}"
        say(f"semrel run: reading {corpus} for the texts of {len(wanted):,} {what}")
        chunks = {chunk.id: hashlib.sha256(chunk.text.encode("utf-8", "surrogatepass")).hexdigest()
                  for _, chunk in iter_corpus(corpus) if chunk.id in wanted}

    def moved(ids: Iterable[str]) -> list[str]:
        return [c for c in ids if c in before and c in chunks and before[c] != chunks[c]]

    warnings = []
    gold = moved(first)
    if gold:
        some = "s" if len(gold) > 1 else ""
        warnings.append(
            f"{len(gold):,} gold chunk{some} of {golden} hold{'' if some else 's'} other text than at the last run (e.g. {gold[0]}, "
            f"gold for query {first[gold[0]]}): chunk ids are positions in their document, so an edited document moves text "
            f"between them, and the scores are against the text now there; check the gold and fix the ids, or clear them and "
            f"pick again with `semrel golden pick --golden {golden} --corpus {corpus}`")
    for path in runs:
        stale = moved(sorted(named[path])) if same_run[path] else []
        if stale:
            warnings.append(
                f"run {run_name(path)!r} ({path}) names {len(stale):,} chunk{'s' if len(stale) > 1 else ''} holding other text than "
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
    steps = plan(config)
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
    _calibration_hint(summary, config, config_path, echo)
    return summary


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
                if not forced and waiting and waiting <= set(step.parts) and _up_to_date_but(step, waiting, recorded, digests):
                    for path in waiting:
                        maybe.setdefault(path, []).append(step.name)
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
        echo(f"semrel run: {', '.join(names)} read{'s' if len(names) == 1 else ''} only the {parts} of {path}, which would be made "
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
    left = {os.path.abspath(path) for path in inputs}
    known = recorded.get("inputs")
    kept = {**recorded, "inputs": {k: v for k, v in known.items() if k not in left} if isinstance(known, dict) else known}
    return up_to_date(replace(step, inputs=[p for p in step.inputs if p not in inputs]), kept, digests)


def _picks_kept(golden: str) -> str:
    """Where `golden` has a `semrel golden pick` journal beside it, what becomes of its picks: a golden.jsonl made anew
    (--force import) holds none of them until pick opens it and replays its journal. Before, --force import ran every
    later step without the picks, and neither the refusal that suggested it nor the run said they were kept."""
    from ..golden.pick import journal_path

    journal = journal_path(golden)
    if not os.path.basename(golden) == "golden.jsonl" or not os.path.isfile(journal):
        return ""
    return (f"; the picks of `semrel golden pick` stay in {journal} and are not in a golden.jsonl made anew: "
            f"`semrel golden pick --golden {golden} --corpus CORPUS` replays them onto it, then run again")


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
    return {os.path.abspath(output): [_digest(output), _digest(manifest_path(output))] for output in step.outputs}


KEPT_AS = {"golden.jsonl": "[golden] file", "corpus.jsonl": "[corpus] file"}  # outputs a config key can take in their place


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
            work = _work_in(output, _pair(made.get(os.path.abspath(output)) if isinstance(made, dict) else None))
            if work:
                key = KEPT_AS.get(os.path.basename(output))
                keep = f"copy it out of {out} and give the copy as {key}" if key else "copy it elsewhere"
                raise UsageError(f"{step.name} would replace {output}, {work}: to keep it, {keep}; to replace it, "
                                 f"run again with --force {name}{_picks_kept(output)}")
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
        return None if made[0] in (None, _digest(output)) else "which holds other bytes than `semrel run` wrote and no manifest"
    fills = record.get("fills")
    last = fills[-1] if isinstance(fills, list) and fills and isinstance(fills[-1], dict) else record
    command = last.get("command")
    writer = f"`{shlex.join(map(str, command))}`" if isinstance(command, list) else "another command"
    by_run = _by_run(record)
    if (_digest(manifest_path(output)) == made[1] or by_run) and (_digest(output) == made[0] or
                                                                  (by_run and read_manifest(output) is not None)):
        return None
    if read_manifest(output) is None:
        return f"which was changed after {writer} wrote it"
    return f"to which {writer} added rows" if last is not record else f"which {writer} wrote"


STARTER_TOP = """\
# semrel run config: `semrel run {name}` runs every step below; a step whose inputs and settings
# are unchanged since it last ran is skipped. Paths are relative to this file.
# Any key can be overridden: SEMREL_LABEL_THRESHOLD=0.72, or `--set label.threshold=0.72` (wins).
# Reference: docs/run.md.
# Written by `semrel init` for {golden} ({what}).

out = "{out}"                  # folder for every output (corpus.jsonl, runs/, judgments.jsonl, report.html...)
"""

STARTER_REST = """
[retrieve]
methods = ["bm25", "dense"]    # any of bm25, dense, hybrid (dense and hybrid encode with MiniLM)
k = 20                         # chunks per query in each run

[bm25]
# k1 = 1.5                     # term saturation; Terrier uses 1.2
# b = 0.75                     # length normalisation
# stemmer = "english"          # Snowball English; "porter", "none", or another PyStemmer algorithm
# stopwords = "en"             # "none", a list name (de, fr, ...) or a file of one word per line

[pool]
depth = 10                     # top chunks of each run the judge scores

[judge]
enabled = {judge}{judge_note}
# model = "all-MiniLM-L6-v2"   # encoder (local folder or name)
# layer = 6
idf = false
rescale = "none"               # none, baseline or corpus
cache = "cache"                # embedding cache, inside out

[label]
# default: relevant when the judge's probability p >= {cut} (docs/judge.md, "Label quality")
# graded = false               # true: grades 0-3 from p
# calibration = "cal.json"     # `semrel calibrate JUDGMENTS REVIEWED -o cal.json`: p refitted on reviewed pairs
# threshold = 0.70             # instead: a threshold on one BERTScore component (on), binary
# on = "R"                     # P, R or F (or p)
# grades = "0.6,0.7,0.8"       # instead: graded labels by thresholds on `on`

[eval]
# eval's default set with recall at the runs' depth (R@100 of 20 chunks a query would be recall at 20); [] = the default
measures = ["nDCG@10", "AP", "RR", "R@20", "P@10", "Success@10"]

[agree]
enabled = true                 # judge labels against the golden set's labels -> agreement.json

[compare]
enabled = true                 # significance of the differences between runs (two or more methods)

[sensitivity]
enabled = true
measure = "nDCG@10"            # how the ranking of runs moves with the label threshold

[lift]
# base = "bm25"                # reranking lift: this run's top chunks reranked by `rerank`
# rerank = "dense"
# depth = 10                   # how many of them are reranked [default: all]

[report]
enabled = true                 # report.html

[engine]
name = "local"                 # where the model runs for judge and dense retrieval: local or ray
# address = "auto"             # ray: an existing cluster (auto, host:port, ray://host:port) [default: start one here]
# workers = 4                  # ray: model workers [default: the cluster's GPUs, else its CPUs]
"""

LONG_CONTEXT = 200  # words: SQuAD contexts longer than this (at the median) are chunked (MiniLM reads 256 tokens)
# words: the largest chunk init suggests for a testset of reference contexts (rag_dataset, ragas, DeepEval). A chunk at the
# contexts' median split half of them, a context then covering two or more chunks, a few words of its tail one of them
# (a gold chunk that barely holds it).
CONTEXT_CHUNK_MAX = 200


def starter_config(output: str, golden: str, docs: str | None = None, out: str = "out", qrels: str | None = None,
                   sample: int | None = None, fmt: str = "auto") -> tuple[str, list[str]]:
    """A commented config that fits `golden` (its format `fmt`, or read from the file: SQuAD, LlamaIndex, ragas, DeepEval, BEIR,
    PubMedQA, MS MARCO QnA, Cranfield, CSV/JSONL, TREC topics), with paths relative to the config's folder, and
    notes for the user (what was found, what is missing)."""
    from ..golden.importers import CONTEXT_FORMATS, FORMAT_NAMES, ONE_CHUNK_EACH
    from ..golden.inspect import document_column, summarise_source

    base = os.path.dirname(os.path.abspath(output))

    def rel(path: str) -> str:
        """`path` relative to the config, as a TOML string (a quote or backslash in a name must not end it); absolute
        where the two share no folder but the root ("../../../data/x" would break when the config moves)."""
        full = os.path.abspath(path)
        shared = os.path.commonpath([full, base])
        text = (full if shared == os.path.dirname(shared) else os.path.relpath(full, base)).replace(os.sep, "/")
        return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")  # JSON's escapes are TOML's, bar DEL

    found = summarise_source(golden, fmt)
    fmt, notes = found.format, []
    what = f"{FORMAT_NAMES.get(fmt, fmt)}, {found.queries:,} queries, {found.with_answers:,} with a reference answer"
    corpus: list[str] = []
    folder: str | None = None  # the documents folder to chunk, for formats that do not hold their documents
    golden_lines = [f'file = {rel(golden)}', f'format = "{fmt}"']
    if qrels:
        golden_lines.append(f'qrels = {rel(qrels)}  # the document qrels of the topics')
    elif fmt == "trec":
        raise UsageError(f"{golden}: TREC topics need their qrels: give --qrels QRELS")
    golden_lines.append(f"sample = {sample}                   # queries drawn at random with the seed below; remove for all"
                        if sample else "# sample = 100                 # work on 100 queries drawn at random (or: limit = 100)")
    golden_lines.append("seed = 0")
    if sample and sample >= found.queries:
        notes.append(f"--sample {sample}: the file has {found.queries:,} queries; all of them are used")
    if docs and (found.holds_documents or fmt == "beir"):  # said, not dropped without a word
        notes.append(f"--docs {docs}: not used: {FORMAT_NAMES[fmt]} holds its documents")
    median = found.median_context
    if fmt in CONTEXT_FORMATS and not (docs or found.docs_folder):
        corpus += ["# No docs: none were found beside the file, so the import step writes its reference contexts as",
                   "# corpus.jsonl, a chunk each: retrieval then searches the contexts alone. To search the documents",
                   "# they were cut from, set docs to their folder (and size, words per chunk)."]
        notes.append("no documents beside the file: the corpus is its reference contexts, a chunk each (give --docs to chunk "
                     "the documents instead)")
    elif found.holds_documents:
        corpus.append(f"# No docs: {FORMAT_NAMES[fmt]} holds its documents; the import step writes corpus.jsonl from it.")
        if fmt == "squad" and median is not None and median > LONG_CONTEXT:
            corpus += [f"# The contexts are long (median {median:,} words): each is cut into chunks, and the chunk",
                       "# holding the answer is gold.",
                       "size = 150                     # words per chunk", "overlap = 0"]
            notes.append(f"contexts are long (median {median:,} words): chunked into 150-word chunks")
        elif fmt == "squad":
            corpus += [f"# Each context is one chunk (median {median or 0:,} words); set a size to cut them.",
                       "# size = 150"]
        elif fmt in ONE_CHUNK_EACH:
            collection, item = ONE_CHUNK_EACH[fmt]
            corpus.append(f"# (each {collection} {item} is one chunk: size does not apply)")
        else:
            corpus.append("# size = 120                   # one chunk per document unless set")
    elif fmt == "beir":
        corpus += [f'file = {rel(found.corpus_file or "")}   # the BEIR corpus as it is: one chunk per document, '
                   "ids as the qrels name them"]
    else:
        folder = docs or found.docs_folder or "docs"
        if os.path.isdir(folder) and (_same_file(folder, base) or _within(base, folder)):  # every `out` beside the config is in it
            raise UsageError(f"--docs {folder}: the documents folder holds the config's folder, so the outputs would be written "
                             "among the documents (and chunked at the next run): move the documents into a folder of their own "
                             "(e.g. docs/), or write the config outside them with -o")
        if not os.path.exists(folder):
            notes.append(f"{folder}: no such folder yet: put the documents there or edit [corpus] docs")
        corpus += ["# The documents to chunk: a folder or a file (.txt, .md, .pdf, .html, .docx, TREC SGML).",
                   f'docs = {rel(folder)}']
        if fmt in CONTEXT_FORMATS:
            longest = found.long_context
            size = min(CONTEXT_CHUNK_MAX, max(20, math.ceil((longest or 200) / 10) * 10))
            corpus += [f"# Chunks as long as most reference contexts (9 in 10 have {longest or 0:,} words or fewer; median "
                       f"{median or 0:,}): a", "# context then falls in one chunk, or two where it straddles a boundary "
                       "(every chunk it covers is gold).", f"size = {size}                     # words per chunk", "overlap = 0"]
        elif fmt == "trec":
            corpus.append("whole = true                   # one chunk per document, named by its DOCNO as the qrels are")
        else:
            corpus += ["size = 120                     # words per chunk: the gold chunk ids must come from these settings",
                       "overlap = 20                   # words shared by neighbouring chunks"]
    judge, judge_note = "true", "                 # BERTScore judge of each pooled (query, chunk) pair"
    if not found.with_answers:
        judge = "false"
        judge_note = ("                # off: the queries have no reference answers, which the BERTScore judge\n"
                      "                               # needs; the runs are scored on the gold qrels only")
        notes.append("no reference answers: the judge is off; the runs are scored on the gold qrels")
    if fmt == "trec" and found.with_answers == 0:
        golden_lines.append('# answer_col = "desc"         # a topic field as the reference answer, for the judge to score '
                            "chunks against")
    found_column = document_column(golden, fmt, folder) if folder and os.path.exists(folder) and not found.with_gold else None
    if found_column:
        column, unnamed = found_column
        golden_lines += [f"chunk_ids_col = {json.dumps(column, ensure_ascii=False)}".ljust(30) + " # names each answer's document",
                         'doc_qrels = "answer-chunk"     # gold: the chunk of that document holding the answer']
        notes.append(f"column {column!r} names each answer's document: the chunk holding the answer is gold "
                     '([golden] doc_qrels = "answer-chunk")')
        if unnamed:  # the import would stop on them: said now, where the column was read against the folder anyway
            line, value = unnamed[0]
            notes.append(f"{len(unnamed)} value{'s' if len(unnamed) > 1 else ''} of {column!r} name{'' if len(unnamed) > 1 else 's'} "
                         f"no document of {folder} (first: {value!r}, line {line}): fix {'them' if len(unnamed) > 1 else 'it'}, "
                         "or the import stops on it")
    given = [golden, qrels, found.corpus_file if fmt == "beir" else None, folder]
    chosen, n = out, 1
    while any(p and (_within(p, os.path.join(base, chosen)) or _same_file(p, os.path.join(base, chosen))) for p in given):
        # `run` would refuse to write over them, or into the documents folder
        n += 1
        chosen = f"{out}-{n}"
    if chosen != out:
        notes.append(f'out = "{chosen}": {out}/ holds files of yours, which the pipeline\'s outputs could overwrite')
    text = (STARTER_TOP.format(name=os.path.basename(output), golden=rel(golden), what=what, out=chosen)
            + "\n[corpus]\n" + "\n".join(corpus) + "\n\n[golden]\n" + "\n".join(golden_lines) + "\n"
            + STARTER_REST.format(judge=judge, judge_note=judge_note, cut=labels.CUT))
    return text, [what, *notes]
