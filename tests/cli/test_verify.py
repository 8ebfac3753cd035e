"""`semrel verify`: derived files written by real commands, checked against their manifests after their inputs,
the files themselves or the versions changed."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

from helpers import SHARED_DATA, assert_one_error, needs_shared, run, write
from semrel.formats import files, manifest
from semrel.formats.manifest import check_manifest, versions

RESULTS = SHARED_DATA / "trec_eval_test" / "results.test"
JUDGMENTS = [("q1", "a", 0.9, 0.8, 0.85), ("q1", "b", 0.2, 0.5, 0.29), ("q2", "a", 0.5, 0.65, 0.56)]


def sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.fixture
def labelled(tmp_path, monkeypatch):
    """q.txt from `semrel label j.jsonl -o q.txt` (hand-made judgments with the judge's settings in their manifest),
    run in tmp_path, where the manifest records relative paths."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "j.jsonl", "".join(json.dumps({"query_id": q, "chunk_id": c, "P": p, "R": r, "F": f, "source": "bm25"}) + "\n"
                                        for q, c, p, r, f in JUDGMENTS))
    write(tmp_path / "j.jsonl.manifest.json", json.dumps({"params": {"model": "all-MiniLM-L6-v2", "layer": 6}}))
    assert run("label", "j.jsonl", "-o", "q.txt", "--threshold", "0.6").exit_code == 0
    return tmp_path


def test_a_file_as_written_from_inputs_as_they_were_passes(labelled):
    result = run("verify", "q.txt")
    assert result.exit_code == 0, result.output
    assert result.stdout == "q.txt: as its manifest records\n"
    assert "1 file: 0 changed since written, 0 without a readable manifest, 1 as recorded" in result.stderr


def test_a_changed_input_is_named_with_both_sha256_and_the_command_to_make_it_again(labelled):
    before = sha("j.jsonl")
    with open("j.jsonl", "a") as handle:
        handle.write(json.dumps({"query_id": "q3", "chunk_id": "z", "P": 0.1, "R": 0.1, "F": 0.1, "source": "bm25"}) + "\n")
    result = run("verify", "q.txt")
    assert result.exit_code == 1, result.output
    found, again = result.stdout.splitlines()
    assert found == (f"q.txt: input changed: {labelled / 'j.jsonl'}: appended to since: its first 3 lines, those read, are as "
                     f"they were, 4 lines now (sha256 {before[:12]} then, sha256 {sha('j.jsonl')[:12]} now)")
    command = json.loads(open("q.txt.manifest.json").read())["command"]  # the command line, sys.argv (pytest's, here)
    assert again == f"q.txt: to make it again: cd {labelled} && {shlex.join(command)}"
    assert "1 file: 1 changed since written" in result.stderr


def test_an_input_edited_and_not_only_appended_to_is_said_to_have_changed(labelled):
    """An append is told apart (`semrel fill` appends to judgments.jsonl) only where the lines read are as they were."""
    before = sha("j.jsonl")
    lines = open("j.jsonl").read().splitlines(keepends=True)
    write(labelled / "j.jsonl", "".join([lines[0], lines[2], lines[1], lines[0].replace('"q1"', '"q4"')]))
    assert run("verify", "q.txt").stdout.splitlines()[0] == (f"q.txt: input changed: {labelled / 'j.jsonl'}: sha256 {before[:12]} "
                                                            f"then, sha256 {sha('j.jsonl')[:12]} now")


def test_a_missing_input_and_a_file_edited_since_it_was_written(labelled):
    os.remove("j.jsonl")
    written = sha("q.txt")
    with open("q.txt", "a") as handle:
        handle.write("q9 0 x 1\n")
    checked = check_manifest("q.txt")
    assert [(f.kind, f.message) for f in checked.findings] == [
        ("changed", f"changed since its manifest was written: sha256 {written[:12]}, 27 bytes then; "
                    f"sha256 {sha('q.txt')[:12]}, 36 bytes now"),
        ("input missing", f"input missing: {labelled / 'j.jsonl'}"),
    ]
    assert checked.changed and run("verify", "q.txt").exit_code == 1


def test_a_file_without_a_manifest_fails_and_a_manifest_named_checks_its_file(labelled):
    write(labelled / "hand.qrels", "q1 0 a 1\n")
    result = run("verify", "hand.qrels", "q.txt.manifest.json", "q.txt")
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines() == ["hand.qrels: no manifest (hand.qrels.manifest.json): nothing records how it was made",
                                          "q.txt: as its manifest records"]  # checked once, though named twice
    assert "2 files: 0 changed since written, 1 without a readable manifest, 1 as recorded" in result.stderr
    write(labelled / "q.txt.manifest.json", "{not json")
    assert run("verify", "q.txt").stdout.startswith("q.txt: q.txt.manifest.json is no semrel manifest")


def test_a_manifest_edited_by_hand_into_other_shapes_is_reported_not_a_traceback(labelled):
    write(labelled / "q.txt.manifest.json", json.dumps({"command": ["semrel", 1], "versions": [1], "output_digest": {"bytes": "x"},
                                                        "fills": [{"inputs": [{"path": "gone", "sha256": "ab"}]}]}))
    result = run("verify", "q.txt")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"q.txt: changed since its manifest was written: no sha256, x bytes then; sha256 {sha('q.txt')[:12]}, 27 bytes now",
        f"q.txt: input missing: {labelled / 'gone'}", f"q.txt: to make it again: cd {labelled} && semrel 1"]


def test_versions_that_differ_from_those_installed_now_are_findings(labelled):
    record = json.loads(open("q.txt.manifest.json").read())
    record["versions"]["transformers"] = "0.0.1"
    record["versions"]["click"] = "0.0.1"  # reads options: makes no figure
    write(labelled / "q.txt.manifest.json", json.dumps(record))
    result = run("verify", "q.txt", "-f", "json")
    assert result.exit_code == 1
    [checked] = json.loads(result.stdout)
    assert checked["changed"] and [(f["kind"], f["message"]) for f in checked["findings"]] == [
        ("version", f"transformers 0.0.1 then, {versions()['transformers']} now")]


def test_an_input_that_became_a_fifo_is_changed_and_read_never(labelled):
    os.remove("j.jsonl")
    os.mkfifo("j.jsonl")  # opened, it would wait for a writer for ever
    [finding] = check_manifest("q.txt").findings
    assert finding.kind == "input changed" and finding.message.endswith("then, no sha256 now")


def test_a_gz_run_is_checked_by_its_compressed_bytes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = RESULTS.read_bytes()
    (tmp_path / "a.run.gz").write_bytes(gzip.compress(text, mtime=0))
    shutil.copy(SHARED_DATA / "trec_eval_test" / "results.trunc", tmp_path / "b.run")
    assert run("fuse", "a.run.gz", "b.run", "-o", "fused.run").exit_code == 0
    assert run("verify", "fused.run").exit_code == 0
    (tmp_path / "a.run.gz").write_bytes(gzip.compress(text, mtime=0, compresslevel=1))  # the same run, other bytes
    result = run("verify", "fused.run")
    assert result.exit_code == 1 and result.stdout.splitlines()[0].startswith(f"fused.run: input changed: {tmp_path / 'a.run.gz'}: ")


def test_a_folder_input_is_checked_by_its_files_as_semrel_run_checks_it(tmp_path, monkeypatch):
    """Hidden files are no documents (semrel reads none), a new document is a change; a folder argument checks the derived
    files under it, those with a manifest."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "docs" / "a.md", "Bees forage within three kilometres of the hive.\n")
    assert run("corpus", "chunk", "docs", "-o", "out/corpus.jsonl").exit_code == 0
    write(tmp_path / "docs" / ".a.md.swp", "x")
    assert run("verify", "out").stdout == "out/corpus.jsonl: as its manifest records\n"
    write(tmp_path / "docs" / "b.md", "Drones do not sting.\n")
    result = run("verify", "out")
    assert result.exit_code == 1 and result.stdout.startswith(f"out/corpus.jsonl: input changed: {tmp_path / 'docs'}: more than the 1 file")
    os.remove(tmp_path / "docs" / "b.md")
    write(tmp_path / "docs" / "a.md", "Drones do not sting.\n")
    result = run("verify", "out")
    assert result.exit_code == 1 and result.stdout.startswith(f"out/corpus.jsonl: input changed: {tmp_path / 'docs'}: sha256 ")
    assert_one_error(run("verify", "docs"), "docs: no file with a manifest in it", code=2)


def test_a_folder_input_is_read_no_further_than_the_files_it_held(tmp_path, monkeypatch):
    """A crafted or corrupted manifest naming / (or ~) as an input had the whole disk hashed: a folder that holds more
    files than recorded differs, known at the first file past them; one recorded as a file is not read at all."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "docs" / "a.md", "Bees forage within three kilometres of the hive.\n")
    assert run("corpus", "chunk", "docs", "-o", "corpus.jsonl").exit_code == 0
    for i in range(5):
        write(tmp_path / "docs" / f"b{i}.md", "Drones do not sting.\n")
    record = json.loads(open("corpus.jsonl.manifest.json").read())
    record["inputs"].append({"path": str(tmp_path / "docs"), "sha256": "0" * 64, "lines": 1})
    write(tmp_path / "corpus.jsonl.manifest.json", json.dumps(record))
    hashed = []
    monkeypatch.setattr(files, "bytes_sha256", lambda path: hashed.append(os.path.basename(path)) or sha(path))
    assert [f.message for f in check_manifest("corpus.jsonl").findings] == [
        f"input changed: {tmp_path / 'docs'}: more than the 1 file it held then (read no further)",
        f"input changed: {tmp_path / 'docs'}: a folder now, a file then (sha256 000000000000)"]
    assert hashed == []  # counted, not read


def test_a_large_folder_input_beside_the_file_is_not_read_past_its_count(tmp_path, monkeypatch):
    """A manifest naming a tree the file is not in (~, say) with `"files": 10**9` had every file of it hashed, the count
    allowing them all: a folder of another count than recorded differs, and none of its files is read."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "docs" / "a.md", "Bees forage within three kilometres of the hive.\n")
    assert run("corpus", "chunk", "docs", "-o", "out/corpus.jsonl").exit_code == 0
    for i in range(3):
        write(tmp_path / "home" / "sub" / f"n{i}.txt", "notes\n")
    record = json.loads(open("out/corpus.jsonl.manifest.json").read())
    record["inputs"] = [{"path": str(tmp_path / "home"), "sha256": "0" * 64, "files": 10**9},
                        {"path": str(tmp_path / "docs"), "sha256": record["inputs"][0]["sha256"], "files": 2}]
    write(tmp_path / "out" / "corpus.jsonl.manifest.json", json.dumps(record))
    hashed = []
    monkeypatch.setattr(files, "bytes_sha256", lambda path: hashed.append(os.path.basename(path)) or sha(path))
    assert [f.message for f in check_manifest("out/corpus.jsonl").findings] == [
        f"input changed: {tmp_path / 'home'}: 3 files now, 1,000,000,000 files then (not read)",
        f"input changed: {tmp_path / 'docs'}: 1 file now, 2 files then (not read)"]
    assert hashed == []  # counted, not read


def test_a_folder_input_that_holds_the_file_is_not_read(tmp_path, monkeypatch):
    """A manifest naming / as an input (where the file lies, or where it lay when written) with `"files": 10**9` had the
    whole disk hashed, that many files allowed: a folder holding the file is not what was read, the file written into it
    after, and is not read at all."""
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "docs" / "a.md", "Bees forage within three kilometres of the hive.\n")
    assert run("corpus", "chunk", "docs", "-o", "out/corpus.jsonl").exit_code == 0
    record = json.loads(open("out/corpus.jsonl.manifest.json").read())
    record["inputs"] = [{"path": str(tmp_path), "sha256": "0" * 64, "files": 10**9}]
    write(tmp_path / "out" / "corpus.jsonl.manifest.json", json.dumps(record))
    hashed = []
    monkeypatch.setattr(files, "bytes_sha256", lambda path: hashed.append(os.path.basename(path)) or sha(path))
    assert [f.message for f in check_manifest("out/corpus.jsonl").findings] == [
        f"input changed: {tmp_path}: a folder that holds the file itself, written after it was read (not read)"]
    record.update(output=str(tmp_path / "gone" / "a" / "corpus.jsonl"), inputs=[{"path": str(tmp_path / "gone"), "sha256": "0" * 64,
                                                                               "files": 10**9}])
    write(tmp_path / "out" / "corpus.jsonl.manifest.json", json.dumps(record))  # moved: tmp_path/gone lies at tmp_path/out/..
    assert [f.message for f in check_manifest("out/corpus.jsonl").findings][1:] == [
        f"input changed: {tmp_path}: a folder that holds the file itself, written after it was read (not read)"]
    assert hashed == []


def test_a_cwd_that_is_no_folder_name_is_a_bad_manifest(labelled):
    """A hand-edited `"cwd": 5` was read as a folder named '5': the file 'written as 5/q.txt', its input 'missing: 5/j.jsonl'."""
    record = json.loads(open("q.txt.manifest.json").read())
    write(labelled / "q.txt.manifest.json", json.dumps({**record, "cwd": 5}))
    result = run("verify", "q.txt")
    assert (result.exit_code, result.stdout) == (1, "q.txt: q.txt.manifest.json: its cwd is 5, not a folder's name: nothing tells "
                                                    "where its relative paths were read\n")


@pytest.mark.slow
def test_paths_recorded_outside_ascii_are_found_under_an_ascii_locale(tmp_path, monkeypatch):
    """LC_ALL=C: a name written under a UTF-8 locale ('données/') is text Python cannot encode there, and verify said the
    input was missing and the file written elsewhere."""
    folder = tmp_path / "wörk"
    monkeypatch.chdir(folder.mkdir() or folder)
    write(folder / "données" / "a.md", "Bees forage within three kilometres of the hive.\n")
    assert run("corpus", "chunk", "données", "-o", "corpus.jsonl").exit_code == 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}
    done = subprocess.run([sys.executable, "-m", "semrel", "verify", "corpus.jsonl"], cwd=folder, env=env, capture_output=True)
    assert (done.returncode, done.stdout) == (0, b"corpus.jsonl: as its manifest records\n"), done.stderr
    refused = subprocess.run([sys.executable, "-m", "semrel", "verify", "données"], cwd=folder, env=env, capture_output=True)
    assert (refused.returncode, refused.stderr) == (2, "semrel: error: données: no file with a manifest in it (a folder's derived "
                                                       "files are those with one)\n".encode()), "the error line said 'donn??es'"


def test_inputs_that_moved_with_the_file_are_found_beside_it(labelled, tmp_path):
    os.mkdir(tmp_path / "moved")
    os.rename("j.jsonl", tmp_path / "moved" / "j.jsonl")
    for name in ("q.txt", "q.txt.manifest.json"):
        os.rename(name, tmp_path / "moved" / name)
    assert [(f.kind, f.message, f.counts) for f in check_manifest("moved/q.txt").findings] == [
        ("moved", f"written as {labelled / 'q.txt'}: its inputs are checked where that command read them", False),
        ("input moved", f"input moved: {labelled / 'j.jsonl'} is missing; it lies beside the file as it did, "
                        f"at {labelled / 'moved' / 'j.jsonl'}, with the same bytes", False),
    ]
    assert run("verify", "moved/q.txt").exit_code == 0  # a results folder moved whole differs in nothing
    with open(tmp_path / "moved" / "j.jsonl", "a") as extra:
        extra.write("\n")
    assert [(f.kind, f.counts) for f in check_manifest("moved/q.txt").findings][1] == ("input changed", True)
    assert run("verify", "moved/q.txt").exit_code == 1


@needs_shared("cranfield")
def test_an_imports_qrels_follow_the_golden_set_written_with_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run("golden", "import", SHARED_DATA / "cranfield", "-o", "golden.jsonl", "--corpus-out", "corpus.jsonl").exit_code == 0
    assert run("golden", "qrels", "golden.jsonl", "-o", "gold.qrels").exit_code == 0
    assert run("verify", ".").stdout.splitlines() == [f"{name}: as its manifest records" for name in
                                                       ("./corpus.jsonl", "./gold.qrels", "./golden.jsonl")]
    lines = (tmp_path / "golden.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "golden.jsonl").write_text("".join(lines[:-1]))  # a query dropped by hand
    result = run("verify", "gold.qrels", "golden.jsonl")
    assert result.exit_code == 1
    assert [line.split(":")[1].strip() for line in result.stdout.splitlines()] == [
        "input changed", "to make it again", "changed since its manifest was written", "to make it again"]


@pytest.mark.parametrize("key", ["output", "cwd"])
def test_a_nul_byte_in_the_recorded_output_or_cwd_is_told_not_a_traceback(labelled, key):
    record = json.loads(open("q.txt.manifest.json").read())
    record[key] += "\0x"
    write(labelled / "q.txt.manifest.json", json.dumps(record))
    result = run("verify", "q.txt")
    assert result.exit_code == 0, result.output  # for "cwd": the input is found beside the file, moved with it, the same bytes
    assert result.stdout.splitlines()[0].startswith("q.txt: written as ") and "\\x00x" in result.stdout.splitlines()[0]


def test_the_installed_versions_and_each_shared_input_are_read_once_for_all_files(labelled, monkeypatch):
    """Reading the versions took 10 ms a file (100 s for a folder of 10,000); each output of a run read the corpus again."""
    for name in ("q2.txt", "q3.txt"):
        assert run("label", "j.jsonl", "-o", name, "--threshold", "0.6").exit_code == 0
    hashed, looked_up = [], []
    monkeypatch.setattr(manifest, "content_sha256", lambda path: hashed.append(path) or sha(path))
    installed = manifest.metadata.version
    monkeypatch.setattr(manifest.metadata, "version", lambda name: looked_up.append(name) or installed(name))
    result = run("verify", "q.txt", "q2.txt", "q3.txt")
    assert result.stdout.splitlines() == [f"{name}: as its manifest records" for name in ("q.txt", "q2.txt", "q3.txt")]
    assert hashed == [str(labelled / "j.jsonl"), str(labelled / "j.jsonl.manifest.json")]
    assert looked_up == ["semrel", *manifest.LIBRARIES]


def test_the_counts_of_a_folder_of_thousands_are_written_alike(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for i in range(1000):
        write(tmp_path / f"{i}.txt", f"{i}\n")
        write(tmp_path / f"{i}.txt.manifest.json", json.dumps({"inputs": [], "output_digest": {"sha256": sha(f"{i}.txt")}}))
    result = run("verify", ".")
    assert result.exit_code == 0
    assert result.stderr.splitlines()[-1] == "1,000 files: 0 changed since written, 0 without a readable manifest, 1,000 as recorded"


def test_each_finding_and_the_command_to_paste_stay_on_one_line_whatever_the_manifest_holds(labelled):
    """A newline in a recorded cwd or argument made the line to paste run over several, and let a crafted path print a
    line that reads as another finding."""
    record = json.loads(open("q.txt.manifest.json").read())
    record["cwd"] = f"{labelled}\n; touch pwned #"
    record["command"] = ["semrel", "label", "it's\n", "-o", "q.txt"]
    record["inputs"] = [{**record["inputs"][0], "path": "gone\nq.txt: as its manifest records"}]
    write(labelled / "q.txt.manifest.json", json.dumps(record))
    result = run("verify", "q.txt")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-2:] == [
        f"q.txt: input missing: {labelled}\\n; touch pwned #/gone\\nq.txt: as its manifest records",
        f"q.txt: to make it again: cd $'{labelled}\\x0a; touch pwned #' && semrel label $'it\\'s\\x0a' -o q.txt"]


def test_a_model_whose_files_changed_or_that_is_gone_is_told(labelled):
    """A model is no input: judgments made with other weights under the same name looked as recorded. The fingerprint
    the manifest's params record (judge, golden split, dedup, pick) is compared with the model's files now."""
    from semrel.encoding.models import describe_model

    now = describe_model(None).fingerprint

    def verify_with(model: str, fingerprint: str):
        write(labelled / "j.jsonl.manifest.json", json.dumps({"inputs": [], "params": {"model": model, "model_fingerprint": fingerprint}}))
        return run("verify", "j.jsonl")

    same = verify_with("all-MiniLM-L6-v2", now)
    assert same.exit_code == 0 and "model" not in same.stdout, same.output
    changed = verify_with("all-MiniLM-L6-v2", "0" * 32)
    assert changed.exit_code == 1
    assert f"j.jsonl: model all-MiniLM-L6-v2: its files changed (fingerprint {'0' * 32} then, {now} now)" in changed.stdout.splitlines()
    gone = verify_with("no-such-model", now)
    assert gone.exit_code == 1 and f"j.jsonl: model no-such-model: not found now (fingerprint {now} then)" in gone.stdout.splitlines()


def test_grades_still_in_a_review_databases_write_ahead_log_are_a_change(tmp_path):
    """A review database holds its latest grades in DB-wal until SQLite copies them into DB: a page made before a
    reviewer's grades was said to be 'as its manifest records' while they sat in the log."""
    import sqlite3

    db = tmp_path / "r.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")  # the log is kept, as while a reviewer's process runs
    conn.execute("CREATE TABLE grades (pair TEXT, grade INTEGER)")
    conn.commit()
    output = write(tmp_path / "out.txt", "made from the grades\n")
    manifest.write_manifest(output, inputs=[db])
    assert run("verify", output).stdout == f"{output}: as its manifest records\n"
    before = db.read_bytes()
    conn.execute("INSERT INTO grades VALUES ('q1/c1', 1)")
    conn.commit()
    assert db.read_bytes() == before and (tmp_path / "r.sqlite-wal").stat().st_size > 0  # the grade is in the log alone
    result = run("verify", output)
    assert result.exit_code == 1 and f"input changed: {db}" in result.stdout, result.stdout
    conn.close()


def test_a_review_database_whose_log_sqlite_folded_into_it_is_unchanged(tmp_path):
    """Exported while a reviewer had it open (its grades in DB-wal), the database was recorded by its bytes and its log's;
    when the reviewer's process closed, SQLite copied the log into the file and removed it: other bytes, the same grades,
    and verify said 'input changed'. A grade added since is still a change."""
    import sqlite3

    db = tmp_path / "r.sqlite"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")  # the log is kept, as while a reviewer's process runs
    conn.execute("CREATE TABLE grades (pair TEXT, grade INTEGER)")
    conn.execute("INSERT INTO grades VALUES ('q1/c1', 1)")
    conn.commit()
    output = write(tmp_path / "out.txt", "made from the grades\n")
    manifest.write_manifest(output, inputs=[db])
    before = db.read_bytes()
    conn.close()  # the last connection: SQLite folds the log into the file and removes it
    assert db.read_bytes() != before and not (tmp_path / "r.sqlite-wal").exists()
    assert run("verify", output).stdout == f"{output}: as its manifest records\n"
    with sqlite3.connect(db) as again:
        again.execute("INSERT INTO grades VALUES ('q1/c2', 0)")
    again.close()
    result = run("verify", output)
    assert result.exit_code == 1 and f"input changed: {db}" in result.stdout, result.stdout


@pytest.mark.parametrize("edit, said", [
    ({"inputs": None}, "it records no inputs: nothing tells what the file was made from; make the file again"),
    ({"inputs": [5, None]}, "an input is 5, not a path and its sha256: nothing tells what the file was made from; make the file again"),
    ({"output_digest": [1]}, "its output_digest is [1], not a sha256 and size: nothing tells whether the file changed since; "
                             "make the file again"),
])
def test_a_manifest_with_its_inputs_or_digest_edited_away_is_no_record(labelled, edit, said):
    """Each passed as recorded, exit 0: no inputs to check, inputs read as ones that were no file, a digest read as an
    older semrel's absent one."""
    record = json.loads(open("q.txt.manifest.json").read())
    record.update(edit)
    write(labelled / "q.txt.manifest.json", json.dumps({k: v for k, v in record.items() if v is not None}))
    result = run("verify", "q.txt")
    assert (result.exit_code, result.stdout) == (1, f"q.txt: q.txt.manifest.json: {said}\n")
    assert "1 file: 0 changed since written, 1 without a readable manifest, 0 as recorded" in result.stderr
