"""--engine ray against --engine local on the bundled sample data, with a real local Ray instance
of two CPU workers and the real all-MiniLM-L6-v2: the same judgments and the same dense run,
byte for byte; clear one-line errors when Ray is missing or the cluster cannot be reached."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import message_lines, run
from semrel.encoding.engines import LOCAL_RAY_CONFIG

ray = pytest.importorskip("ray", reason="--engine ray needs the test extra (ray[data])")

DATA = Path(__file__).resolve().parents[2] / "data"


def run_cli(*args, code: int = 0):
    result = run(*args)
    assert result.exit_code == code, result.output
    return result


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The demo's corpus, golden set and a depth-10 bm25 pool, with one Ray instance of 2 CPUs for the module, set up
    as semrel sets up the instance it starts (its workers not niced: beside the suite's other tests they starved)."""
    folder = tmp_path_factory.mktemp("ray")
    run_cli("corpus", "chunk", DATA / "docs", "--size", 120, "--overlap", 20, "-o", folder / "corpus.jsonl")
    run_cli("golden", "import", DATA / "golden.csv", "--corpus", folder / "corpus.jsonl", "-o", folder / "golden.jsonl")
    run_cli("retrieve", "--corpus", folder / "corpus.jsonl", "--golden", folder / "golden.jsonl", "-k", 10, "-o", folder / "bm25.run")
    run_cli("pool", "--golden", folder / "golden.jsonl", folder / "bm25.run", "--depth", 10, "-o", folder / "pool.tsv")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR", _system_config=LOCAL_RAY_CONFIG)
    yield folder
    ray.shutdown()


def manifest_engine(path: Path) -> dict:
    return json.loads(Path(f"{path}.manifest.json").read_text())["params"]["engine"]


def semrel_process(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    """A real `semrel` process: its stdout is the file descriptor, where Ray's own logs would land."""
    return subprocess.run([sys.executable, "-m", "semrel.cli", *map(str, args)], capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_ray_judgments_equal_the_local_ones(sample):
    """The Ray run is a separate `semrel judge` process joining this module's cluster (--ray-address auto)."""
    inputs = ["--corpus", sample / "corpus.jsonl", "--golden", sample / "golden.jsonl", "--pool", sample / "pool.tsv"]
    started = time.perf_counter()
    local = run_cli("judge", *inputs, "--cache", sample / "cache-local", "-o", sample / "local.jsonl")
    local_s = time.perf_counter() - started
    remote = semrel_process("judge", *inputs, "--cache", sample / "cache-ray", "--engine", "ray", "--ray-address", "auto",
                            "--ray-workers", 2, "--device", "auto", "-o", sample / "ray.jsonl")
    print(f"judge on the sample: local {local_s:.1f} s, ray {time.perf_counter() - started - local_s:.1f} s", file=sys.stderr)
    assert remote.returncode == 0 and remote.stdout == "", remote.stderr  # nothing of Ray's on stdout
    ours, theirs = (sample / "local.jsonl").read_bytes(), (sample / "ray.jsonl").read_bytes()
    assert ours == theirs  # same pairs, same order, same floats to the last bit
    rows = [json.loads(line) for line in ours.splitlines()]
    assert len(rows) > 100 and len({r["F"] for r in rows}) > 50  # real, varied scores, not a constant
    for stderr in (local.stderr, remote.stderr):
        texts = int(stderr.split(" texts encoded")[0].rsplit(" ", 1)[1])
        assert texts > 30 and ", 0 from cache" in stderr  # both engines really encoded every text
    assert manifest_engine(sample / "local.jsonl") == {"name": "local", "workers": 1, "device": "cpu", "precision": "exact"}
    # the device the workers used, as the local engine records it (it recorded `auto`, the one asked for)
    assert manifest_engine(sample / "ray.jsonl") == {"name": "ray", "address": "auto", "workers": 2, "gpus": False, "device": "cpu",
                                                     "precision": "exact"}


@pytest.mark.slow
def test_dense_runs_are_identical_on_both_engines(sample):
    inputs = ["--corpus", sample / "corpus.jsonl", "--golden", sample / "golden.jsonl", "--method", "dense", "-k", 20,
              "--no-cache"]  # both engines encode every chunk (the vector store would hand the second run the first's)
    run_cli("retrieve", *inputs, "-o", sample / "dense-local.run")
    run_cli("retrieve", *inputs, "--engine", "ray", "-o", sample / "dense-ray.run")
    local, remote = (sample / "dense-local.run").read_text(), (sample / "dense-ray.run").read_text()
    assert local == remote.replace("dense-ray", "dense-local")  # the run name is the file's; the rest is equal
    assert len(local.splitlines()) == 18 * 20
    assert manifest_engine(sample / "dense-ray.run")["workers"] == 2


def test_missing_ray_is_one_line_naming_the_extra(sample, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if it were not installed
    result = run_cli("retrieve", "--corpus", sample / "corpus.jsonl", "--golden", sample / "golden.jsonl", "--method", "dense",
                     "--engine", "ray", "-o", sample / "never.run", code=1)
    assert result.stderr.strip().splitlines() == ["semrel: error: --engine ray needs Ray: pip install 'semrel[ray]'"]
    assert not (sample / "never.run").exists()


@pytest.mark.parametrize(("options", "message"), [
    (["--ray-workers", 2], "--ray-address and --ray-workers go with --engine ray"),
    (["--engine", "ray", "--ray-workers", 0], "--ray-workers 0: give 1 or more"),
])
def test_bad_ray_options_are_a_usage_error(sample, options, message):
    result = run_cli("retrieve", "--corpus", sample / "corpus.jsonl", "--golden", sample / "golden.jsonl", "--method", "dense",
                     *options, "-o", sample / "never.run", code=2)
    assert result.stderr.strip().splitlines() == [f"semrel: error: {message}"]


@pytest.mark.slow
def test_the_ray_instance_semrel_starts_runs_its_workers_at_full_priority():
    """Ray adds 15 to its workers' niceness; semrel's workers do all the work, and niced they starved beside busy processes.
    A separate process, as this one is already connected to the module's instance."""
    probe = ("import os, ray; from semrel.encoding.engines import RayEngine; RayEngine(workers=1).connect(); "
             "print(ray.get(ray.remote(num_cpus=0)(lambda: os.nice(0)).remote()))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout == f"{os.nice(0)}\n", done.stderr  # this process's own (Ray's: 15 more)


@pytest.mark.slow
@pytest.mark.parametrize("address", ["ray://127.0.0.1:1", "127.0.0.1:1"])
def test_unreachable_cluster_is_one_line_within_seconds(sample, address):
    """A real `semrel judge` process (not this one, which is already connected to Ray)."""
    started = time.perf_counter()
    done = semrel_process("judge", "--corpus", sample / "corpus.jsonl", "--golden", sample / "golden.jsonl", "--no-cache",
                          "--engine", "ray", "--ray-address", address, "-o", sample / "never.jsonl", timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    lines = message_lines(done.stderr)
    assert len(lines) == 1 and lines[0].startswith(f"semrel: error: --ray-address {address}: cannot reach a Ray cluster there"), done.stderr
    assert time.perf_counter() - started < 40
    assert not (sample / "never.jsonl").exists()


@pytest.mark.parametrize(("gpus", "device", "precision", "message"), [
    (False, "cuda", "exact", "device='cuda': the Ray cluster has no GPU; use auto or cpu"),
    (False, "auto", "fp16", "precision='fp16' runs on a GPU only"),
    (True, "auto", "int8", "precision='int8' is torch's dynamic quantization, which runs on CPU only"),
])
def test_a_device_or_precision_the_cluster_cannot_give_is_one_error_before_any_worker_starts(monkeypatch, gpus, device, precision,
                                                                                             message):
    """It failed in every worker's constructor: a Ray traceback of some 260 lines on stderr, exit 1."""
    import ray.data

    from semrel.encoding.encode import normalised_tokens
    from semrel.encoding.engines import RayEngine
    from semrel.errors import UsageError

    def connect(self):  # a cluster of CPUs (gpus=False) or of GPUs, without starting Ray
        self.gpus = gpus
        return 1

    monkeypatch.setattr(RayEngine, "connect", connect)
    monkeypatch.setattr(ray.data, "from_items", lambda *args, **kwargs: pytest.fail("Ray workers were started"))
    with pytest.raises(UsageError, match=message):
        next(RayEngine(device=device, precision=precision).run([[101, 1037, 102]], None, None, 4096, normalised_tokens))


def test_workers_that_resolved_auto_differently_are_each_recorded(monkeypatch):
    """A node whose torch sees no GPU takes auto to cpu beside the GPU nodes: the manifest names both, and says they differed."""
    import ray.data

    from semrel.encoding.encode import normalised_tokens
    from semrel.encoding.engines import RayEngine

    class Workers:  # what the Ray Data job streams back: each row with the device its worker resolved
        def map_batches(self, *args, **kwargs):
            return self

        def iter_rows(self):
            return iter([{"batch": 0, "vectors": None, "device": device} for device in ("cuda", "cpu", "cuda")])

    def connect(self):  # a cluster of GPUs, without starting Ray
        self.gpus, self.workers = True, 3
        return 3

    monkeypatch.setattr(RayEngine, "connect", connect)
    monkeypatch.setattr(ray.data, "from_items", lambda *args, **kwargs: Workers())
    engine = RayEngine()
    assert engine.params()["device"] == "auto (model not run)"  # as LocalEngine's: auto is resolved only by running the model
    assert RayEngine(device="cpu").params()["device"] == "cpu"
    list(engine.run([[101, 1037, 102]], None, None, 4096, normalised_tokens))
    assert engine.params() == {"name": "ray", "address": "local", "workers": 3, "gpus": True, "device": "cpu, cuda (workers differed)",
                               "precision": "exact"}


def test_the_workers_default_to_the_clusters_gpus_else_its_cpus_and_at_least_one(monkeypatch):
    from semrel.encoding.engines import RayEngine

    monkeypatch.setattr(ray, "is_initialized", lambda: True)  # connected already: nothing is started
    for resources, gpus, workers in (({"CPU": 3.0}, False, 3), ({"CPU": 8.0, "GPU": 1.0}, True, 1), ({"CPU": 0.5}, False, 1)):
        monkeypatch.setattr(ray, "cluster_resources", lambda resources=resources: resources)
        engine = RayEngine()
        assert engine.connect() == workers and (engine.gpus, engine.workers) == (gpus, workers)
    given = RayEngine(workers=5)
    assert given.connect() == 5 and given.gpus is False  # asked for: kept


def test_each_batch_is_one_row_for_a_pool_of_actors_no_larger_than_the_batches(monkeypatch):
    """The batches cut on the driver, one Ray Data row each, to as many actors as there are batches at most (each loads
    the model), with a GPU each on a GPU cluster; results are matched back to their batch whatever order they come in."""
    import ray.data

    from semrel.encoding.encode import normalised_tokens
    from semrel.encoding.engines import RayEngine

    job: dict = {}

    class Workers:
        def map_batches(self, fn, **kwargs):
            job.update(kwargs, fn=fn)
            return self

        def iter_rows(self):  # the last batch finished first
            return iter([{"batch": row["batch"], "vectors": f"batch {row['batch']}", "device": "cpu"} for row in reversed(job["rows"])])

    def from_items(rows, **kwargs):
        job.update(kwargs, rows=rows)
        return Workers()

    def connect(self):
        self.workers = 4
        return 4

    monkeypatch.setattr(RayEngine, "connect", connect)
    monkeypatch.setattr(ray.data, "from_items", from_items)
    engine = RayEngine(device="cpu", precision="int8")
    done = list(engine.run([[101, 7, 102], [101, 7, 8, 9, 102]], "/models/mini", 4, 8, normalised_tokens))
    assert [(batch.tolist(), vectors) for batch, vectors in done] == [([0], "batch 1"), ([1], "batch 0")]
    rows = [(row["batch"], [w.tolist() for w in row["windows"]]) for row in job["rows"]]
    assert rows == [(0, [[101, 7, 8, 9, 102]]), (1, [[101, 7, 102]])]
    assert job["override_num_blocks"] == 2 and job["batch_size"] == 1 and (job["num_cpus"], job["num_gpus"]) == (1, None)
    assert job["fn_constructor_args"] == ("/models/mini", 4, 8, normalised_tokens, "cpu", "int8")
    assert (job["compute"].min_size, job["compute"].max_size) == (2, 2)  # 2 batches: 2 of the 4 workers
    context = ray.data.DataContext.get_current()
    assert not context.enable_progress_bars and not context.print_on_execution_start  # semrel's own progress only, on stderr

    def gpu_cluster(self):
        self.gpus, self.workers = True, 4
        return 4

    monkeypatch.setattr(RayEngine, "connect", gpu_cluster)
    list(RayEngine().run([[101, 7, 102], [101, 7, 8, 9, 102]], None, None, 8, normalised_tokens))
    assert (job["num_cpus"], job["num_gpus"]) == (None, 1)
    assert [len(row["windows"]) for row in job["rows"]] == [2]  # a GPU's batches are bigger: one batch, one worker
    assert (job["compute"].min_size, job["compute"].max_size) == (1, 1)
    list(RayEngine(device="cpu").run([[101, 7, 102], [101, 7, 8, 9, 102]], None, None, 8, normalised_tokens))
    assert (job["num_cpus"], job["num_gpus"]) == (1, None) and len(job["rows"]) == 2  # asked for the CPU on a GPU cluster


def test_nothing_to_encode_starts_no_ray(monkeypatch):
    from semrel.encoding.encode import normalised_tokens
    from semrel.encoding.engines import RayEngine

    monkeypatch.setattr(RayEngine, "connect", lambda self: pytest.fail("Ray was joined for nothing"))
    assert list(RayEngine().run([], None, None, 4096, normalised_tokens)) == []


def test_a_listening_cluster_is_reachable_at_every_form_of_its_address():
    """An IPv6 address is written in brackets ([::1]:6379), which the connection must not take as part of the host."""
    from semrel.encoding.engines import _reachable
    from semrel.errors import SemrelError

    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        for address in (f"127.0.0.1:{port}", f"ray://127.0.0.1:{port}", "auto", "localhost"):
            _reachable(address)
    with pytest.raises(SemrelError, match=rf"ray_address='127.0.0.1:{port}': cannot reach a Ray cluster there"):
        _reachable(f"127.0.0.1:{port}")  # closed now
    if not socket.has_ipv6:
        return
    with socket.create_server(("::1", 0), family=socket.AF_INET6) as server:
        port = server.getsockname()[1]
        for address in (f"[::1]:{port}", f"ray://[::1]:{port}"):
            _reachable(address)


def test_semrel_starts_its_own_ray_instance_unless_given_an_address_and_says_why_it_could_not_connect(monkeypatch):
    """No address: a new local instance (address 'local', not Ray's None, which joins whatever cluster it finds), without
    a dashboard, its workers not niced; an address: Ray's defaults, the cluster's own settings."""
    from semrel.encoding.engines import RayEngine
    from semrel.errors import SemrelError

    calls: list = []
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda **kwargs: calls.append(kwargs))
    monkeypatch.setattr(ray, "cluster_resources", lambda: {"CPU": 2.0})
    assert RayEngine().connect() == 2 and RayEngine(address="auto").connect() == 2
    assert [(c["address"], c["include_dashboard"], c["_system_config"]) for c in calls] == [("local", False, LOCAL_RAY_CONFIG),
                                                                                          ("auto", None, None)]

    def refused(**kwargs):
        raise ConnectionError("Could not find any running Ray instance.\nPlease specify the one to connect to.")

    monkeypatch.setattr(ray, "init", refused)
    with pytest.raises(SemrelError, match=r"^ray_address='auto': could not connect to Ray \(Could not find any running Ray instance.\)$"):
        RayEngine(address="auto").connect()


def test_the_ray_address_comes_from_the_option_else_ray_address_else_a_local_instance(monkeypatch):
    from semrel.encoding.engines import make_engine

    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert make_engine("ray").params()["address"] == "10.0.0.1:6379"
    assert make_engine("ray", address="auto").params()["address"] == "auto"
    monkeypatch.setenv("RAY_ADDRESS", "")
    assert make_engine("ray").params()["address"] == "local"


def test_a_worker_refuses_a_precision_its_device_cannot_run_before_loading_the_model(monkeypatch):
    from semrel.encoding import engines
    from semrel.errors import UsageError

    monkeypatch.setattr(engines, "load_encoder", lambda *args, **kwargs: pytest.fail("the model was loaded"))
    with pytest.raises(UsageError, match="precision='fp16' runs on a GPU only"):
        engines._Worker(None, None, 4096, None, device="cpu", precision="fp16")


@pytest.mark.slow
def test_a_worker_on_the_cpu_computes_a_batch_cut_for_gpus_as_one():
    """A worker whose torch sees no GPU resolves auto to the CPU, beside GPU workers: the driver cut the batches for GPUs
    (up to 1024 rows), and the CPU's limit of 128 split the batch in the worker, which failed (too many values to unpack)."""
    import numpy as np

    from semrel.encoding.encode import mean_pooled
    from semrel.encoding.engines import LocalEngine, _Worker

    windows = [[101] + [1037 + i % 50] * (5 + i % 7) + [102] for i in range(200)]
    windows.sort(key=len, reverse=True)  # as the driver sends a batch: longest first
    worker = _Worker(None, None, 16384, mean_pooled, device="cpu")
    out = worker({"batch": np.array([3]), "windows": [[np.asarray(w) for w in windows]]})
    assert out["batch"].tolist() == [3] and out["device"].tolist() == ["cpu"]
    local = np.zeros((200, 384), dtype=np.float32)
    for batch, vectors in LocalEngine("cpu").run(windows, None, None, 16384, mean_pooled):
        local[batch] = vectors
    assert out["vectors"][0].shape == (200, 384)
    assert np.allclose(out["vectors"][0], local, atol=1e-5)  # each row its own window's vector, in the order sent
