"""`semrel doctor` reports what the commands will use: a SEMREL_* variable that sets a model or a cache
is checked and shown (it reported the default model as found while `judge` failed on the variable's)."""

from __future__ import annotations

from pathlib import Path

from helpers import run
from semrel.cli.run_config import load_config


def test_doctor_checks_the_models_and_caches_the_environment_sets(tmp_path, monkeypatch):
    (tmp_path / "cache" / "x").mkdir(parents=True)
    (tmp_path / "cache" / "x" / "blob").write_bytes(b"\0" * 2**20)
    monkeypatch.setenv("SEMREL_JUDGE_MODEL", str(tmp_path / "no-model"))
    monkeypatch.setenv("SEMREL_RETRIEVE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SEMREL_LABEL_THRESHOLD", "0.6")
    result = run("doctor")
    assert result.exit_code == 1 and result.stderr == "semrel doctor: 1 problem: SEMREL_JUDGE_MODEL\n", result.output
    rows = {line.split()[0]: " ".join(line.split()[1:]) for line in result.stdout.splitlines()[2:]}
    assert rows["SEMREL_JUDGE_MODEL"] == f"MISSING: {tmp_path / 'no-model'}: no such model folder"
    assert rows["SEMREL_RETRIEVE_CACHE_DIR"] == f"{tmp_path / 'cache'} (1.0 MiB)"
    assert rows["SEMREL_LABEL_THRESHOLD"] == "0.6"
    assert rows["default"].startswith("model all-MiniLM-L6-v2: ") and "(6 layers, 512 tokens)" in rows["default"]


def test_doctor_says_when_the_browser_tests_lack_the_playwright_client(monkeypatch):
    """It showed chromium's path as if the browser tests could run, while they skip without Playwright."""
    import semrel.doctor as doctor

    real = doctor.metadata.version

    def version(name: str) -> str:
        if name == "playwright":
            raise doctor.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(doctor.shutil, "which", lambda name: "/usr/bin/chromium")
    monkeypatch.setattr(doctor.metadata, "version", version)
    found = dict(doctor.diagnose({}))
    assert found["browser for tests"] == "/usr/bin/chromium, but no Playwright client (browser tests skip; scripts/install-browser.sh)"


def test_doctor_reports_a_cache_it_cannot_read_and_goes_on(tmp_path, monkeypatch):
    """A cache folder the user may not read ended the report with an error (as root, tests cannot make one: _size fails)."""
    import semrel.doctor as doctor

    def unreadable(folder):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(doctor, "_size", unreadable)
    monkeypatch.setenv("SEMREL_JUDGE_CACHE_DIR", str(tmp_path))
    result = run("doctor")
    assert result.exit_code == 1, result.output
    rows = {line.split()[0]: " ".join(line.split()[1:]) for line in result.stdout.splitlines()[2:]}
    assert rows["SEMREL_JUDGE_CACHE_DIR"].startswith(f"UNREADABLE: {tmp_path} (Permission denied)")


def test_doctor_marks_the_variables_nothing_reads(monkeypatch):
    """A misspelt SEMREL_JUDGE_MODLE was listed like the variables commands read: nothing said the command would not see it."""
    unused = {"SEMREL_JUDGE_MODLE": "SEMREL_JUDGE_MODEL", "SEMREL_LABEL_FOO": None}
    read = ["SEMREL_GOLDEN_IMPORT_FORMAT", "SEMREL_REVIEW_SERVE_TOKEN", "SEMREL_MAX_GZIP_RATIO", "SEMREL_DATA", "SEMREL_OUT",
            "SEMREL_SENSITIVITY_FROM", "SEMREL_EVAL_PLACES"]  # an option at any depth, a limit, the tests', config keys
    for name in [*unused, *read]:
        monkeypatch.setenv(name, "3")
    result = run("doctor")
    assert result.exit_code == 1 and result.stderr == "semrel doctor: 2 problems: SEMREL_JUDGE_MODLE, SEMREL_LABEL_FOO\n", result.output
    rows = {line.split()[0]: " ".join(line.split()[1:]) for line in result.stdout.splitlines()[2:]}
    for name, close in unused.items():
        assert rows[name].startswith("UNUSED: nothing reads it" + (f" (did you mean {close}?)" if close else "") + ": an option "
                                     "needs SEMREL_<COMMAND>_<OPTION>"), rows[name]
    assert all(rows[name] == "3" for name in read if name != "SEMREL_REVIEW_SERVE_TOKEN"), rows


def test_doctor_marks_semrel_version_unused(monkeypatch):
    """--version is the one option no variable sets (SEMREL_VERSION=1 must not print the version instead of running)."""
    monkeypatch.setenv("SEMREL_VERSION", "1")
    result = run("doctor")
    assert result.exit_code == 1, result.output
    rows = {line.split()[0]: " ".join(line.split()[1:]) for line in result.stdout.splitlines()[2:]}
    assert rows["SEMREL_VERSION"].startswith("UNUSED: nothing reads it"), rows["SEMREL_VERSION"]


def test_doctor_hides_the_review_token(monkeypatch):
    """doctor's output is pasted into bug reports: the token that guards `review serve` was printed in clear."""
    monkeypatch.setenv("SEMREL_REVIEW_SERVE_TOKEN", "s3cret-value")
    result = run("doctor")
    assert result.exit_code == 0, result.output
    assert "s3cret" not in result.output
    assert "SEMREL_REVIEW_SERVE_TOKEN  set (hidden, 12 characters)" in result.stdout


def test_doctor_s_findings_of_caches_secrets_ray_and_unchecked_variables(tmp_path, monkeypatch):
    """What a mutation audit found untested: a cache folder not made yet is '(empty)', not '0.0 MiB'; a variable ending
    _CACHE (an option --cache) is checked as a cache too; folders count no bytes of their own; a password or a secret is
    hidden like a token when the variables are not checked against the ones semrel reads (Python's `diagnose(environ)`),
    which then shows every SEMREL_* value and no other variable; and a missing ray says how to install it."""
    import semrel.doctor as doctor

    for i in range(300):  # 300 empty folders: 1.2 MB of directory entries that hold no data
        (tmp_path / "cache" / f"d{i}").mkdir(parents=True)
    (tmp_path / "cache" / "d0" / "blob").write_bytes(b"\0" * 2**19)
    real = doctor.metadata.version

    def version(name: str) -> str:
        if name == "ray":
            raise doctor.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(doctor.metadata, "version", version)
    found = dict(doctor.diagnose({"SEMREL_JUDGE_CACHE": str(tmp_path / "cache"), "SEMREL_RETRIEVE_CACHE_DIR": str(tmp_path / "none"),
                                  "SEMREL_X_PASSWORD": "hunter2", "SEMREL_Y_SECRET": "abc", "SEMREL_ANYTHING": "7",
                                  "SEMRELFOO": "1"}))
    assert found["SEMREL_JUDGE_CACHE"] == f"{tmp_path / 'cache'} (0.5 MiB)"
    assert found["SEMREL_RETRIEVE_CACHE_DIR"] == f"{tmp_path / 'none'} (empty)"
    assert (found["SEMREL_X_PASSWORD"], found["SEMREL_Y_SECRET"]) == ("set (hidden, 7 characters)", "set (hidden, 3 characters)")
    assert found["SEMREL_ANYTHING"] == "7" and "SEMRELFOO" not in found
    assert found["ray (--engine ray)"] == "not installed (pip install 'semrel[ray]')"


def test_doctor_says_where_the_docs_that_messages_cite_are(tmp_path, monkeypatch):
    """Warnings cite docs/judge.md and the like; an installed wheel's user has no checkout, so doctor names the folder
    (share/semrel/docs), or says it is missing."""
    import semrel.doctor as doctor
    from semrel import resources

    assert (Path(dict(doctor.diagnose({}))["docs (cited as docs/*.md)"]) / "judge.md").is_file()
    monkeypatch.setattr(resources, "__file__", str(tmp_path / "lib" / "semrel" / "resources.py"))
    monkeypatch.setattr(resources.sysconfig, "get_path", lambda name: str(tmp_path))
    monkeypatch.setattr(resources.sys, "prefix", str(tmp_path))
    monkeypatch.setattr(resources.sys, "base_prefix", str(tmp_path))
    monkeypatch.setattr(resources.site, "getuserbase", lambda: str(tmp_path))
    assert dict(doctor.diagnose({}))["docs (cited as docs/*.md)"].startswith("MISSING: cannot find semrel's docs/ folder")
    (tmp_path / "share" / "semrel" / "docs").mkdir(parents=True)
    assert dict(doctor.diagnose({}))["docs (cited as docs/*.md)"] == str(tmp_path / "share" / "semrel" / "docs")


def test_doctor_says_why_a_cache_cannot_be_used(tmp_path, monkeypatch):
    """A cache folder under a regular file, and an embeddings.sqlite of garbage, were shown as `(empty)` and `(0.0 MiB)`
    while the judge stopped on each."""
    (tmp_path / "file").write_text("x")
    (tmp_path / "damaged").mkdir()
    (tmp_path / "damaged" / "embeddings.sqlite").write_bytes(b"garbage!")
    monkeypatch.setenv("SEMREL_JUDGE_CACHE_DIR", str(tmp_path / "file" / "sub"))
    monkeypatch.setenv("SEMREL_RETRIEVE_CACHE_DIR", str(tmp_path / "damaged"))
    monkeypatch.setenv("SEMREL_GOLDEN_PICK_CACHE_DIR", str(tmp_path / "new" / "one"))
    result = run("doctor")
    assert result.exit_code == 1 and result.stderr == ("semrel doctor: 2 problems: SEMREL_JUDGE_CACHE_DIR, "
                                                       "SEMREL_RETRIEVE_CACHE_DIR\n"), result.output
    rows = {line.split()[0]: " ".join(line.split()[1:]) for line in result.stdout.splitlines()[2:]}
    assert rows["SEMREL_JUDGE_CACHE_DIR"] == (f"UNUSABLE: {tmp_path / 'file' / 'sub'} ({tmp_path / 'file'} is not a folder): semrel "
                                              "cannot keep embeddings there; give another with --cache")
    assert rows["SEMREL_RETRIEVE_CACHE_DIR"] == (f"DAMAGED: {tmp_path / 'damaged' / 'embeddings.sqlite'} is no SQLite database: "
                                                 "commands using this cache stop on it; delete it (it holds only embeddings, "
                                                 "computed again) or give another folder with --cache")
    assert rows["SEMREL_GOLDEN_PICK_CACHE_DIR"] == f"{tmp_path / 'new' / 'one'} (empty)"  # made when first used: nothing wrong
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged", "file"]


def test_doctor_writes_nothing_into_the_cache_it_reports(tmp_path, monkeypatch):
    """It hashed the default model's weights for a fingerprint it does not show, and kept that sha256 in the user cache
    folder, making it: then it reported the folder it had just made."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    result = run("doctor")
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: " ".join(line.split()[1:]) for line in result.stdout.splitlines()[2:]}
    assert rows["embedding"] == f"cache {tmp_path / 'semrel'} (empty)"
    assert list(tmp_path.iterdir()) == []


def test_doctor_checks_a_relative_judge_cache_inside_semrel_runs_out_folder(tmp_path, monkeypatch):
    """SEMREL_JUDGE_CACHE is `semrel run`'s [judge] cache, which run keeps inside its out folder; doctor checked a relative
    one against the current folder (a file named cache there was UNUSABLE, exit 1, for a run whose cache was fine)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cache").write_text("not the run's cache")
    (tmp_path / "out2" / "cache" / "x").mkdir(parents=True)
    (tmp_path / "out2" / "cache" / "x" / "blob").write_bytes(b"\0" * 2**20)
    monkeypatch.setenv("SEMREL_JUDGE_CACHE", "cache")
    monkeypatch.delenv("SEMREL_OUT", raising=False)
    result = run("doctor")
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: " ".join(line.split()[1:]) for line in result.stdout.splitlines()[2:]}
    assert rows["SEMREL_JUDGE_CACHE"] == ("cache: `semrel run` keeps it inside its out folder (the config's `out`; SEMREL_OUT is "
                                          "not set), which only the config tells: not checked")
    monkeypatch.setenv("SEMREL_OUT", "out2")  # as run takes it: relative to the current folder, the cache inside it
    result = run("doctor")
    rows = {line.split()[0]: " ".join(line.split()[1:]) for line in result.stdout.splitlines()[2:]}
    assert result.exit_code == 0 and rows["SEMREL_JUDGE_CACHE"] == f"{tmp_path / 'out2' / 'cache'} (1.0 MiB)", result.output
    (tmp_path / "golden.csv").write_text("query,answer\nq,a\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "semrel.toml").write_text('[golden]\nfile = "golden.csv"\n[corpus]\ndocs = "docs"\n')
    assert load_config("semrel.toml")["judge"]["cache"] == str(tmp_path / "out2" / "cache")  # the folder run uses
    (tmp_path / "out2" / "cache" / "embeddings.sqlite").write_bytes(b"garbage!")
    result = run("doctor")
    assert result.exit_code == 1 and result.stderr == "semrel doctor: 1 problem: SEMREL_JUDGE_CACHE\n", result.output
