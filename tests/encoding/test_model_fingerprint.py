"""A model is known by its files' bytes: a copy, a touch or a reinstall of the same weights is the same model
(the fingerprint took the weights' mtimes, so each missed the embedding cache and fill refused the judgments),
and other weights are another model. The weights are read once per version: later calls only stat them."""

from __future__ import annotations

import json
import os
import shutil

import pytest

import semrel.formats.files as files
from semrel.encoding.models import describe_model, load_tokenizer, resolve_model
from semrel.errors import SemrelError


def test_the_same_bytes_are_the_same_model_and_other_bytes_another(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "RACY_NS", 0)  # the copy is seconds old: take its stamp all the same
    original = describe_model(None)
    copy = shutil.copytree(resolve_model(None), tmp_path / "copy", copy_function=shutil.copyfile)  # new mtimes, as cp without -p
    weights = next(p for p in copy.iterdir() if p.suffix in (".safetensors", ".bin"))
    os.utime(weights, ns=(1, 1))
    assert describe_model(str(copy)).fingerprint == original.fingerprint
    assert describe_model(str(copy)).stamped_fingerprint != original.stamped_fingerprint  # what semrel recorded before
    reads: list[str] = []

    real = files.bytes_sha256
    monkeypatch.setattr(files, "bytes_sha256", lambda path: reads.append(str(path)) or real(path))
    assert describe_model(str(copy)).fingerprint == original.fingerprint and reads == []  # remembered by its stamp
    with open(weights, "r+b") as handle:  # one byte of the weights changed
        handle.seek(-1, os.SEEK_END)
        last = handle.read(1)
        handle.seek(-1, os.SEEK_END)
        handle.write(bytes([last[0] ^ 1]))
    assert describe_model(str(copy)).fingerprint != original.fingerprint and reads == [str(weights.resolve())]


def test_weights_changed_within_a_tick_of_the_clock_are_read_again(tmp_path, monkeypatch):
    """A file rewritten in the same tick of the file system's clock can keep its stamp: a stamp taken that soon
    after a change is not remembered, so the next call reads the weights again rather than trust it."""
    copy = shutil.copytree(resolve_model(None), tmp_path / "copy", copy_function=shutil.copyfile)
    reads: list[str] = []
    real = files.bytes_sha256
    monkeypatch.setattr(files, "bytes_sha256", lambda path: reads.append(str(path)) or real(path))
    describe_model(str(copy))
    describe_model(str(copy))
    assert len(reads) == 2 and len(set(reads)) == 1, reads
    monkeypatch.setattr(files, "RACY_NS", 0)
    describe_model(str(copy))
    describe_model(str(copy))
    assert len(reads) == 3, reads


def test_a_file_rewritten_with_its_size_and_mtime_kept_is_not_taken_by_its_stamp(tmp_path, monkeypatch):
    """`cp -p`, `rsync -t` or a tool restoring the mtime change the bytes and keep the size and mtime: only the inode (a
    file put in place) or the ctime (one rewritten in place) tells, and the memo gave the old bytes' sha256 for the new."""
    monkeypatch.setattr(files, "RACY_NS", 0)
    memo, target = files.StampMemo(tmp_path / "memo.json"), tmp_path / "weights.bin"
    target.write_bytes(b"old weights")
    for replace in (lambda data: (tmp_path / "new.bin").write_bytes(data) and os.replace(tmp_path / "new.bin", target),
                    target.write_bytes):
        known, taken = memo.recall(target)
        memo.remember(target, taken, {"sha256": "of the old bytes"})
        assert memo.recall(target)[0] == {**dict(zip(files.STAMP, taken)), "sha256": "of the old bytes"}
        before = os.stat(target)
        replace(b"new weights")  # as many bytes
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
        while os.stat(target).st_ctime_ns == before.st_ctime_ns:  # rewritten within a tick of the clock: until it moves on
            os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert (os.stat(target).st_size, os.stat(target).st_mtime_ns) == (before.st_size, before.st_mtime_ns)
        assert memo.recall(target)[0] is None


def test_weights_that_cannot_be_read_are_named_in_one_line(tmp_path):
    """A weights file that is a dangling link (a half-removed Hugging Face cache) is named, with what to do."""
    copy = shutil.copytree(resolve_model(None), tmp_path / "copy", copy_function=shutil.copyfile)
    weights = next(p for p in copy.iterdir() if p.suffix in (".safetensors", ".bin"))
    weights.unlink()
    weights.symlink_to(tmp_path / "gone" / weights.name)
    with pytest.raises(SemrelError, match=rf"{weights.name}: cannot read the model's weights; .*reinstall"):
        describe_model(str(copy))


def test_a_model_folder_without_its_vocabulary_is_refused(tmp_path):
    """transformers built a tokenizer of the 5 special tokens alone from a folder whose vocab.txt and tokenizer.json
    were not copied: every word became [UNK], and the judge scored every pair, exit 0, on nothing."""
    copy = shutil.copytree(resolve_model(None), tmp_path / "copy", ignore=shutil.ignore_patterns("vocab.txt", "tokenizer*"))
    with pytest.raises(SemrelError, match="its tokenizer knows 5 tokens where the model has 30,522: its vocabulary files"):
        load_tokenizer(str(copy))
    assert len(load_tokenizer(None)) == 30_522  # the whole folder loads as before


@pytest.mark.parametrize("damage", ["weights cut short", "config unlike the weights"])
def test_a_damaged_model_folder_is_one_error_not_a_traceback(tmp_path, damage):
    """safetensors' error on a weights file cut short, and transformers' ValueError or RuntimeError on a config.json
    unlike its weights, went up as tracebacks."""
    from semrel.encoding.models import load_encoder

    copy = shutil.copytree(resolve_model(None), tmp_path / "copy")
    if damage == "weights cut short":
        weights = copy / "model.safetensors"
        weights.write_bytes(weights.read_bytes()[:1000])
    else:
        config = json.loads((copy / "config.json").read_text())
        (copy / "config.json").write_text(json.dumps({**config, "hidden_size": 768}))
    with pytest.raises(SemrelError, match=f"could not load model '{copy}' .*; give a complete local model folder"):
        load_encoder(str(copy))


def test_model_names_and_folders_resolve_to_the_shipped_default_a_folder_or_a_clear_error(tmp_path, monkeypatch):
    """The default by any of its names; a folder given by path; what is neither, said so without a download."""
    from pathlib import Path

    default = resolve_model(None)
    assert resolve_model("") == resolve_model("all-MiniLM-L6-v2") == resolve_model("sentence-transformers/all-MiniLM-L6-v2") == default
    assert describe_model(None).name == "all-MiniLM-L6-v2" and describe_model(None).sentence_length == 256
    assert resolve_model("some-org/some-model") == "some-org/some-model"  # a hub name, looked up in the cache when used
    with pytest.raises(SemrelError, match="^model 'some-org/some-model' is neither a folder nor in the local Hugging Face cache"):
        describe_model("some-org/some-model")
    monkeypatch.setenv("HOME", str(tmp_path))
    for missing in ("~/m", "./m", "a/b/c"):
        with pytest.raises(SemrelError, match=f"^{missing}: no such model folder$"):
            resolve_model(missing)
    (tmp_path / "weights.txt").write_text("x")
    for not_a_model in (tmp_path, tmp_path / "weights.txt"):
        with pytest.raises(SemrelError, match=f"^{not_a_model}: not a model folder \\(no config.json\\)$"):
            resolve_model(str(not_a_model))
    model = tmp_path / "model"  # the default's files, its limits changed: the tokenizer's own, else the positions'
    model.mkdir()
    for path in Path(default).iterdir():
        if path.name not in ("tokenizer_config.json", "sentence_bert_config.json"):
            (model / path.name).symlink_to(path)
    tokenizer_config = json.loads((Path(default) / "tokenizer_config.json").read_text())
    for given, limit in ((128, 128), (int(1e30), 512)):  # 1e30: transformers' "no limit"
        (model / "tokenizer_config.json").write_text(json.dumps({**tokenizer_config, "model_max_length": given}))
        (model / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 1024}))
        info = describe_model(str(model))
        assert (info.max_length, info.sentence_length) == (limit, limit)


def test_the_fingerprint_covers_the_vocabulary_and_bin_weights(tmp_path):
    """vocab.txt and pytorch_model.bin are the model too: other bytes in either are another model."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"num_hidden_layers": 2}))
    seen = set()
    for vocab, weights in (("a\nb\n", b"1"), ("a\nc\n", b"1"), ("a\nc\n", b"22")):
        (model / "vocab.txt").write_text(vocab)
        (model / "pytorch_model.bin").write_bytes(weights)
        seen.add(describe_model(str(model)).fingerprint)
    assert len(seen) == 3
    with pytest.raises(SemrelError, match="^model 'a--b' is neither a folder nor in the local Hugging Face cache"):
        describe_model("a--b")


def test_a_model_folder_with_its_own_code_is_refused_and_the_code_never_runs(tmp_path, monkeypatch):
    """A model folder named in a shared config whose config.json maps the model to its own Python file: transformers,
    left to decide, asked on stdin whether to run it, and a 'y' there (a pipe, `yes |`) ran the folder's code."""
    from semrel.encoding.encode import truncated_ids
    from semrel.encoding.models import load_encoder

    copy = shutil.copytree(resolve_model(None), tmp_path / "custom")
    ran = tmp_path / "ran"
    (copy / "custom.py").write_text(f"open({str(ran)!r}, 'w').close()\n"
                                    "from transformers import BertConfig, BertModel, BertTokenizerFast\n"
                                    "class CustomConfig(BertConfig):\n    model_type = 'custom'\n"
                                    "class CustomModel(BertModel):\n    config_class = CustomConfig\n"
                                    "class CustomTokenizer(BertTokenizerFast):\n    pass\n")
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "model_type": "custom", "auto_map": {
        "AutoConfig": "custom.CustomConfig", "AutoModel": "custom.CustomModel", "AutoTokenizer": ["custom.CustomTokenizer", None]}}))
    monkeypatch.setattr("builtins.input", lambda *_: "y")  # whoever or whatever answers the question
    for load in (lambda folder: truncated_ids(["a"], folder), load_encoder):
        with pytest.raises(SemrelError, match=f"^could not load model '{copy}' \\(.*contains custom code"):
            load(str(copy))
    assert type(load_tokenizer(str(copy))).__name__ == "BertTokenizer"  # the class its tokenizer_config.json names, not its own
    assert not ran.exists()
