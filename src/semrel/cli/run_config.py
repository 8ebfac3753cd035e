"""What a `semrel run` config asks for: its schema, defaults and checks, the settings that override it
(`--set section.key=value` over `SEMREL_<SECTION>_<KEY>` over the file over the defaults), and the steps
it plans, each the command line a user would type. Every value is checked, and no step may write over the
config's own files, before any step runs; a bad value names the file, section and key."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, NoReturn, Sequence

from ..errors import FormatError, SemrelError, UsageError
from ..formats.files import read_text, same_file
from ..formats.jsonl import check_nesting, too_deep
from ..formats.manifest import manifest_path
from ..judging import labels

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


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
    "report": {"enabled": (_BOOL, True), "title": (_STR, None), "reviewed": (_STR, None)},
    "engine": {"name": (_STR, "local"), "address": (_STR, None), "workers": (_INT, None)},
}
CHUNK_SIZE, CHUNK_OVERLAP = 120, 20  # for [corpus] docs when size/overlap are not set

_ENGINE = {"ENGINE": ("engine", "name"), "RAY_ADDRESS": ("engine", "address"), "RAY_WORKERS": ("engine", "workers")}
_CHUNKING = {key.upper(): ("corpus", key) for key in ("size", "overlap", "whole")}
OPTION_KEYS: dict[str, tuple[str, str]] = {
    **{f"SEMREL_CORPUS_CHUNK_{name}": key for name, key in _CHUNKING.items()},
    **{f"SEMREL_GOLDEN_IMPORT_{name}": key for name, key in _CHUNKING.items()},  # a golden file that holds the documents
    **{f"SEMREL_GOLDEN_IMPORT_{key.upper()}": ("golden", key) for key in (*GOLDEN_OPTIONS, "format", "qrels", "limit")},
    "SEMREL_GOLDEN_IMPORT_SAMPLE_SIZE": ("golden", "sample"), "SEMREL_GOLDEN_IMPORT_SAMPLE_SEED": ("golden", "seed"),
    "SEMREL_RETRIEVE_METHOD": ("retrieve", "methods"), "SEMREL_RETRIEVE_CACHE_DIR": ("judge", "cache"),
    **{f"SEMREL_RETRIEVE_BM25_{key.upper()}": ("bm25", key) for key in SCHEMA["bm25"]},
    "SEMREL_RETRIEVE_RERANK": ("lift", "rerank"), "SEMREL_RETRIEVE_RERANK_DEPTH": ("lift", "depth"),
    **{f"SEMREL_{command}_{name}": key for command in ("RETRIEVE", "JUDGE") for name, key in _ENGINE.items()},
    "SEMREL_JUDGE_CACHE_DIR": ("judge", "cache"),
    **{f"SEMREL_{command}_MEASURES": ("eval", "measures") for command in ("AGREE", "COMPARE", "LIFT", "REPORT")},
    "SEMREL_SENSITIVITY_MEASURES": ("sensitivity", "measure"), "SEMREL_SENSITIVITY_START": ("sensitivity", "from"),
    "SEMREL_SENSITIVITY_STOP": ("sensitivity", "to"), "SEMREL_SENSITIVITY_ON": ("label", "on"),
    "SEMREL_SENSITIVITY_AT": ("label", "threshold"), "SEMREL_SENSITIVITY_CALIBRATION": ("label", "calibration"),
    "SEMREL_REPORT_DEPTH": ("lift", "depth"),
}
"""The steps' options that plan() sets from a config key of another name (`judge --cache`, SEMREL_JUDGE_CACHE_DIR, is
[judge] cache): the key a warning names instead of such a variable, which the steps do not read (unread_variables)."""


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


IN_OUT = (("judge", "cache"),)
"""Keys whose relative path is a folder inside `out`, wherever the value came from (a cache kept with the run's outputs)."""


def config_path(folder: str, value: str) -> str:
    """A path of the config as `semrel run` takes it: relative to `folder`, `~/x` as a shell (or the model loader) takes it."""
    return os.path.normpath(os.path.join(folder, os.path.expanduser(value)))


def folders_in_out(environ: Mapping[str, str]) -> dict[str, str | None]:
    """The folder each IN_OUT variable set in `environ` names for a `semrel run` started in the current folder, as
    load_config resolves it: inside SEMREL_OUT (a path from the environment is relative to the current folder); None
    where it is relative and no SEMREL_OUT is set, so that only the config's `out` tells (`semrel doctor` checks the rest)."""
    out = environ.get(env_name("", "out"))
    found: dict[str, str | None] = {}
    for section, key in IN_OUT:
        value = environ.get(env_name(section, key))
        if value:  # an empty variable counts as unset
            known = out or os.path.isabs(os.path.expanduser(value))
            found[env_name(section, key)] = config_path(config_path(os.getcwd(), out) if out else "", value) if known else None
    return found


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
    if kind == _FLOAT and isinstance(value, str) and re.fullmatch(r"\s*[-+]?(\d+\.|\.\d+)\s*", text):
        return float(text)  # '.5' and '5.', which TOML has no number for and a shell user types as the commands take them
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


def unread_variables(environ: Mapping[str, str], steps: Sequence[Step]) -> str | None:
    """One warning naming each variable (set, not empty) of an option of a command the steps run that is no config key
    (SEMREL_EVAL_PLACES is `semrel eval --places`), with the key that sets the option instead (OPTION_KEYS), else that it
    applies to the command run alone: a step reads only its command line (what its settings hash holds), so `semrel run`
    ignored such a variable without a word."""
    from .base import command_variables

    keys = config_variables()
    found: dict[str, str] = {}
    for command in dict.fromkeys(step.command for step in steps):
        for name in command_variables(*command) - keys:
            if environ.get(name) and name not in found:
                section, key = OPTION_KEYS.get(name, (None, None))
                found[name] = (f"set {_key(section, key)} instead ({env_name(section, key)}, or --set {section}.{key}=VALUE)"
                               if section is not None and key is not None
                               else f"no config key sets it, it applies to `semrel {' '.join(command)}` run alone")
    if not found:
        return None
    return ("`semrel run` ignores these variables of its steps' commands (a step reads only the config): "
            + "; ".join(f"{name}: {found[name]}" for name in sorted(found)))


_HEADER = re.compile(r"\s*\[\s*([^\[\]]*?)\s*\]\s*(?:#.*)?")
_ASSIGNED = re.compile(r"\s*([\w\-.\"' ]+?)\s*=")


def line_of(text: str, section: str, key: str | None = None) -> int | None:
    """The line (from 1) of `key` in `[section]` of a TOML text, or of the `[section]` header where `key` is None, so
    that an error names where to look; None where the text does not tell it plainly (an inline table)."""
    current = ""
    for number, line in enumerate(text.split("\n"), 1):  # TOML's lines end at \n alone
        header = _HEADER.fullmatch(line)
        if header:
            current = ".".join(part.strip().strip("\"'") for part in header[1].split("."))
            if key is None and (current == section or current.startswith(f"{section}.")):
                return number
            continue
        assigned = _ASSIGNED.match(line)
        if key is not None and assigned:
            dotted = ".".join(part.strip().strip("\"'") for part in assigned[1].split("."))
            if (current, dotted) in ((section, key), ("", f"{section}.{key}")):  # `k = 5` under [retrieve], or `retrieve.k = 5`
                return number
    return None


def load_config(path: str, sets: Sequence[str] = (), environ: Mapping[str, str] | None = None
                ) -> dict[str, dict[str, Any]]:
    """The config with every default filled in and the SEMREL_* variables (of `environ`) and --set
    values applied over it; ConfigError (one line naming the key and where it came from) on any problem."""
    name = path  # as typed: `configs/a/semrel.toml`, not a `semrel.toml` of which there may be several
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
    def at(section: str, key: str | None = None) -> str:
        """The config's name with the line of `section`'s header, or of its `key`, where that line can be told."""
        line = line_of(text, section, key)
        return name if line is None else f"{name}:{line}"

    unknown_sections = [k for k in raw if isinstance(raw[k], dict) and k not in SCHEMA]
    if unknown_sections:
        raise ConfigError(f"{at(unknown_sections[0])}: {_unknown(unknown_sections[0], '')}")
    config: dict[str, dict[str, Any]] = {}
    # where each value came from: the prefix of its error messages, and the folder its paths are relative to
    origin: dict[tuple[str, str], tuple[str, str]] = {}
    base = os.path.dirname(path)
    for section, keys in SCHEMA.items():
        table = raw if section == "" else raw.get(section, {})
        if not isinstance(table, dict):
            raise ConfigError(f"{at('', section)}: [{section}] expected a table")
        config[section] = {}
        for key, (kind, default) in keys.items():
            where = f"{at(section, key) if key in table else name}: {_key(section, key)}"
            if key in table and not _check_type(kind, table[key]):
                raise ConfigError(f"{where}: expected {kind}")
            config[section][key] = table.get(key, default)
            origin[section, key] = (where, base)
        unknown = [k for k in table if k not in keys and not (section == "" and k in SCHEMA)]
        if unknown:
            raise ConfigError(f"{at(section, unknown[0])}: {_unknown(section, unknown[0])}")
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
            path = config_path(folder, value)
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
    resolve("report", "reviewed", "file")
    for section, key in IN_OUT:
        resolve(section, key, "folder", under=config[""]["out"])
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
    if config["report"]["reviewed"] is not None and not config["judge"]["enabled"]:
        raise ConfigError(f"{origin['report', 'reviewed'][0]}: corrects the derived labels by a review, and [judge] enabled = false "
                          "derives none; remove it, or set [judge] enabled = true")
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


SWITCHES = {"pool": ("pool", "judge"), "judge": ("judge",), "label": ("judge",), "sensitivity": ("sensitivity", "judge")}
"""The sections whose keys only steps that `enabled = false` in these sections turn off read (the pool is judged, the
sensitivity curve relabels judgments)."""


def idle_keys(config: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """A warning for each key set (to other than its default) in a section whose step is switched off, or that no planned
    step reads: `[label] threshold` beside `[judge] enabled = false` did nothing without a word. A warning, not an error:
    switching a step off for a while should not mean deleting its settings."""
    idle: list[tuple[str, Sequence[str], str | None]] = []  # (section, its keys, why they do nothing, or None)
    for section, switches in SWITCHES.items():
        off = next((switch for switch in switches if not config[switch]["enabled"]), None)
        idle.append((section, [name for name in SCHEMA[section] if name not in ("enabled", "cache")],  # cache: made a full path
                     None if off is None else f"[{off}] enabled = false"))
    methods, base = set(config["retrieve"]["methods"]), config["lift"]["base"]
    idle += [  # keys that no step the config plans reads: `[bm25] k1` beside methods = ["dense"] did nothing unsaid
        ("bm25", list(SCHEMA["bm25"]), None if methods & {"bm25", "hybrid"} else "no [retrieve] method is bm25 or hybrid"),
        ("retrieve", ["model"], None if methods - {"bm25"} or base is not None
         else "no [retrieve] method is dense or hybrid, and [lift] base is not set"),
        ("lift", ["rerank", "depth"], None if base is not None else "[lift] base is not set"),
        ("engine", ["address", "workers"], None if config["engine"]["name"] != "local" else "[engine] name = \"local\""),
        ("golden", ["seed"], None if config["golden"]["sample"] is not None else "[golden] sample is not set"),
    ]
    return [f"[{section}] {name} does nothing while {why}" for section, names, why in idle if why is not None
            for name in names if config[section][name] != SCHEMA[section][name][1]]


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
                layer, _ = choose_layer(judge_model, config["judge"]["layer"])
            except SemrelError as exc:
                refuse("judge", "layer", str(exc))
            if layer == choose_layer(judge_model, None)[0]:  # the model's own layer, said aloud: the same judge, not rerun
                config["judge"]["layer"] = None
    sweep = config["sensitivity"]
    if sweep["step"] is not None and not sweep["step"] > 0:
        refuse("sensitivity", "step", "give a number above 0")
    if sweep["from"] is not None and sweep["to"] is not None and not sweep["from"] < sweep["to"]:
        refuse("sensitivity", "from", f"give a number below [sensitivity] to ({sweep['to']:g})")
    swept = _swept(config["label"])
    if "--on" not in swept or swept[swept.index("--on") + 1] == PROBABILITY:  # the sweep is on p
        for key in ("from", "to"):
            try:
                check_range(PROBABILITY, [] if sweep[key] is None else [sweep[key]])
            except SemrelError:
                refuse("sensitivity", key, "give a number in 0..1: the sweep is on the judge's probability p "
                       "(set [label] on and threshold to sweep a raw score)")


def canonical(path: str) -> str:
    """A path as the settings hash and `.semrel-run.json` name it: absolute, its symlinks resolved, so the config named
    through a linked folder (`~/proj` -> `/data/proj`, macOS's /tmp -> /private/tmp) is the same files; it reran every
    step, and the run from the other name after it every step again."""
    return os.path.realpath(path)


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
        """The command line, its paths made canonical: the same config named from another folder, by its full path
        or through a linked folder, gives paths spelled otherwise but the same files (and reran every step). Only the
        paths: a value that looks like one (a model name `org/name`) or is a file's name here is no path."""
        paths = {*self.inputs, *self.outputs, *self.folders}
        args = [canonical(a) if a in paths else a for a in self.args]
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
    if judgments and s["enabled"] and runs:  # one run: its curve alone, and the check that the cut is on no cliff of it
        curves = o("sensitivity.csv")
        args = [judgments, *runs, "-m", s["measure"], "--curves", curves]
        for key in ("from", "to", "step"):
            if s[key] is not None:
                args += [f"--{key}", str(s[key])]
        args += _swept(lab)
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
        if config["report"]["reviewed"] and derived:  # the metrics corrected by the review; its grades make the page anew
            args += ["--reviewed", config["report"]["reviewed"]]
            inputs.append(config["report"]["reviewed"])
        steps.append(Step("report", ("report",), args + ["-o", report], inputs, [report], stdout=os.devnull))
    return steps


USER_FILES = (("golden", "file"), ("golden", "qrels"), ("corpus", "file"), ("corpus", "docs"), ("bm25", "stopwords"),
              ("label", "calibration"), ("retrieve", "model"), ("judge", "model"), ("retrieve", "runs"))  # the user's own files


def check_outputs_spare_inputs(config_path: str, config: dict[str, dict[str, Any]], steps: Sequence[Step]) -> None:
    """Refuse, before any step runs, a config whose steps would write over one of its own files (the
    config, the golden set and its qrels, the corpus, stopwords, a calibration), e.g. `out = "."`
    beside gold.qrels, or into the documents folder (whose next chunking would read the outputs).
    (Each step's command checks its own inputs too; this names the config key to change.) So is a cache the steps write
    into one of the user's folders: `[judge] cache = "../docs"` left its index and embeddings among the documents, which
    the next run chunked."""
    given = [("the config", config_path)] + [(f"[{section}] {key}", path) for section, key in USER_FILES
                                              for path in _listed(config[section][key])]
    for step in steps:
        for folder in step.folders:
            for key, path in given:
                if path is not None and os.path.isdir(path) and (same_file(folder, path) or within(folder, path)):
                    raise ConfigError(f"{os.path.basename(config_path)}: the {step.name} step would write its cache {folder} "
                                      f"into {key} {path}; semrel never writes over its inputs: set [judge] cache to a folder "
                                      "of its own (default: cache, inside out)")
        for output in step.outputs + [manifest_path(o) for o in step.outputs]:
            for key, path in given:
                inside = path is not None and os.path.isdir(path) and within(output, path)
                if path is not None and (same_file(output, path) or inside):
                    raise ConfigError(f"{os.path.basename(config_path)}: the {step.name} step would write {output} "
                                      f"{'into' if inside else 'over'} {key} {path}; semrel never writes over its inputs: "
                                      "set `out` to another folder")


def _listed(value: str | list[str] | None) -> list[str]:
    """The paths a key gives: its list, its one path, or none."""
    return value if isinstance(value, list) else [] if value is None else [value]


def within(path: str, folder: str) -> bool:
    return os.path.realpath(path).startswith(os.path.realpath(folder).rstrip(os.sep) + os.sep)


def _swept(lab: Mapping[str, Any]) -> list[str]:
    """`sensitivity`'s --on and --at (or --calibration) for the [label] keys: the sweep is on the score the labels cut,
    p where no --on follows."""
    args = []
    if lab["on"] is not None or lab["threshold"] is not None or lab["grades"] is not None:  # label's default R, not p
        args += ["--on", lab["on"] or labels.DEFAULT_COMPONENT]
    if lab["threshold"] is not None:
        args += ["--at", str(lab["threshold"])]
    elif lab["calibration"] is not None and lab["grades"] is None:  # the calibrated cut, on the judge's own score
        args += _calibrated_at(lab["calibration"])
    return args


def _calibrated_at(path: str) -> list[str]:
    """--on and --at for `sensitivity` from a calibration file: its (first) threshold on the judge's score; for a
    refit of every coefficient, the file itself (its p is recomputed from the features)."""
    from ..judging.labels import ProbabilityRule, read_calibration

    rule = read_calibration(path)  # load_config has read it
    if isinstance(rule, ProbabilityRule) and not rule.cuts_on_p:
        return ["--calibration", path]  # a refit of every coefficient: sweep its p, recomputed from the features
    return ["--on", rule.on, "--at", repr(float(rule.judge_thresholds[len(rule.judge_thresholds) // 2]))]
