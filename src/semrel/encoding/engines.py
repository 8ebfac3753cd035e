"""Where the encoder model runs: here (`local`) or on a Ray cluster (`ray`), with the same results.

Only the model step moves. The caller keeps reading, caching, matching and writing; it hands an
engine token id lists and gets back (indices, reduced states) per batch. The Ray engine cuts the
batches on the driver exactly as the local one does (length_batches) and sends each whole batch
as one row of a Ray Data dataset, so every batch is padded and computed as it is locally: on CPU
workers the vectors are bit-identical. Each worker (a Ray Data actor) loads the model once, on
its GPU when the cluster has GPUs. Results stream back as batches finish, in any order.
"""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass, field
from typing import Any, Iterator, Protocol, Sequence

import numpy as np

from ..errors import SemrelError, UsageError, first_line
from .encode import Reduce, batch_limits, length_batches, reduced_batches
from .models import check_precision, check_precision_name, load_encoder

ENGINES = ("local", "ray")
DEVICES = ("auto", "cpu", "cuda")
CONNECT_TIMEOUT_S = 10.0
MISSING_RAY = "engine='ray' needs Ray: pip install 'semrel[ray]'"
# For a Ray instance semrel starts itself. Ray starts its workers 15 nicer than itself, to yield to the driver; here
# the workers do all the work and the driver waits, so niced they yield to everything else instead: beside three busy
# processes on 2 cores, the demo's 479 pairs stood at 0 after 240 s, against 81 s at +0 and 38 s quiet (bench/ray_load.py).
LOCAL_RAY_CONFIG = {"worker_niceness": 0}


class Engine(Protocol):
    precision: str  # models.PRECISIONS: what the vectors are made at (caches key on it)

    def run(self, encoded: Sequence[Sequence[int]], model_name: str | None, layer: int | None, max_tokens: int,
            reduce: Reduce) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(indices into `encoded`, reduce(states, mask) of those rows) per length-sorted batch."""
        ...

    def params(self) -> dict[str, Any]:
        """The manifest's record of where the model ran."""
        ...


def as_engine(engine: Engine | str) -> Engine:
    """The Python API's engine= argument: a name, as the CLI's --engine, or what make_engine() made."""
    if isinstance(engine, str):
        return make_engine(engine)
    if not all(callable(getattr(engine, method, None)) for method in ("run", "params")):
        raise TypeError(f"engine: give a name ({', '.join(ENGINES)}) or semrel.encoding.engines.make_engine(...), "
                        f"not {type(engine).__name__}")
    return engine


def check_placement(device: str, precision: str) -> None:
    """Refuse a device or precision semrel does not know, before any model loads (LocalEngine and make_engine alike)."""
    _check_device(device)
    check_precision_name(precision)


def _check_device(device: str) -> None:
    if device not in DEVICES:
        raise UsageError(f"device={device!r}: choose one of {', '.join(DEVICES)}")


def resolve_device(device: str) -> str:
    """cpu or cuda: `auto` takes CUDA when torch sees a GPU; asking for cuda without one is an error."""
    _check_device(device)
    if device == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    if device == "cuda":
        raise UsageError("device='cuda': torch sees no CUDA device here (torch.cuda.is_available() is False); use auto or cpu")
    return "cpu"


class LocalEngine:
    """The model in this process, on `device` (auto: CUDA when there is one), at `precision` (models.PRECISIONS)."""

    def __init__(self, device: str = "auto", precision: str = "exact"):
        check_placement(device, precision)
        self.requested, self.precision = device, precision
        self._device: str | None = "cpu" if device == "cpu" else None  # auto is resolved when the model first runs
        if device == "cuda" or precision == "fp16":  # they need a GPU: said now, not after the corpus is read
            _ = self.device

    @property
    def device(self) -> str:
        if self._device is None:
            self._device = resolve_device(self.requested)
            check_precision(self.precision, self._device)
        return self._device

    def run(self, encoded, model_name, layer, max_tokens, reduce):
        yield from reduced_batches(encoded, model_name, layer, max_tokens, reduce, self.device, self.precision)

    def params(self) -> dict[str, Any]:
        return {"name": "local", "workers": 1, "device": self._device or f"{self.requested} (model not run)",
                "precision": self.precision}


LOCAL = LocalEngine()


class _Worker:
    """One Ray Data actor: the model loaded once, then one whole length-sorted batch per call."""

    def __init__(self, model_name: str | None, layer: int | None, max_tokens: int, reduce: Reduce, device: str = "auto",
                 precision: str = "exact"):
        self.device = resolve_device(device)
        check_precision(precision, self.device)
        self.args = model_name, layer, max_tokens, reduce, precision
        load_encoder(model_name, self.device, layers=layer, precision=precision)  # once per actor, before its first batch

    def __call__(self, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        model_name, layer, max_tokens, reduce, precision = self.args
        out = []
        for windows in rows["windows"]:
            encoded = [w.tolist() for w in windows]
            # the batch is length-sorted and within the driver's limits: one batch, as it would be computed locally, even where
            # this worker resolved auto to the CPU under a driver that cut the batches for GPUs (CPU limits would split them)
            ((_, vectors),) = reduced_batches(encoded, model_name, layer, max_tokens, reduce, self.device, precision, whole=True)
            out.append(vectors)
        return {"batch": rows["batch"], "vectors": np.array(out + [None], dtype=object)[:-1],
                "device": np.array([self.device] * len(out))}  # for the manifest: the driver only guessed it from the cluster


def _reachable(address: str) -> None:
    """Fail fast, in bounded time, when nothing listens at host:port (Ray itself retries for minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # not host:port (e.g. `auto`): Ray resolves it and says so itself when it cannot
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise SemrelError(f"ray_address={address!r}: cannot reach a Ray cluster there ({exc.strerror or exc}); "
                          "start one (ray start --head) or fix the address") from None


@dataclass
class RayEngine:
    """The model on Ray Data actors: `workers` of them (default: the cluster's GPUs, else its CPUs).

    `address` None starts a local Ray instance; `auto` joins the running cluster; host:port or
    ray://host:port a given one (make_engine reads RAY_ADDRESS, Ray's own variable, when no
    address is given). A process already connected to Ray keeps its connection.
    """

    address: str | None = None
    workers: int | None = None
    device: str = "auto"  # on each worker: auto = its GPU when the cluster has GPUs
    precision: str = "exact"
    gpus: bool = field(default=False, init=False)
    used: set[str] = field(init=False)  # the devices the workers reported, for the manifest

    def __post_init__(self) -> None:
        self.used = {"cpu"} if self.device == "cpu" else set()  # as LocalEngine: cpu needs no resolving, auto needs the model run

    def connect(self) -> int:
        """Join (or start) Ray and settle the number of workers, which is returned."""
        import ray

        if not ray.is_initialized():
            if self.address:
                _reachable(self.address)
            try:
                ray.init(address=self.address or "local", log_to_driver=False, logging_level=logging.ERROR,
                         include_dashboard=None if self.address else False,  # None: Ray's default
                         _system_config=None if self.address else LOCAL_RAY_CONFIG)  # a cluster's own is its owner's
            except (ConnectionError, ValueError, RuntimeError) as exc:
                raise SemrelError(f"ray_address={self.address or '(local)'!r}: could not connect to Ray "
                                  f"({first_line(exc)})") from None
        resources = ray.cluster_resources()
        self.gpus = resources.get("GPU", 0) >= 1
        if self.workers is None:
            self.workers = max(1, int(resources.get("GPU", 0) if self.gpus else resources.get("CPU", 1)))
        return self.workers

    def run(self, encoded, model_name, layer, max_tokens, reduce):
        if not encoded:
            return
        workers = self.connect()
        device = self.worker_device()
        tokens, rows_per_batch = batch_limits(device, max_tokens)
        batches = length_batches([len(e) for e in encoded], max_tokens=tokens, max_batch=rows_per_batch)
        import ray.data

        logging.getLogger("ray.data").setLevel(logging.ERROR)
        context = ray.data.DataContext.get_current()
        context.enable_progress_bars = False  # semrel draws its own progress on stderr
        context.print_on_execution_start = False
        rows = [{"batch": k, "windows": [np.asarray(encoded[i], dtype=np.int64) for i in batch]} for k, batch in enumerate(batches)]
        dataset = ray.data.from_items(rows, override_num_blocks=len(rows)).map_batches(
            _Worker, fn_constructor_args=(model_name, layer, max_tokens, reduce, self.device, self.precision), batch_size=1,
            batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=min(workers, len(rows))),
            num_gpus=1 if device == "cuda" else None,  # None: not requested
            num_cpus=None if device == "cuda" else 1,
        )
        for row in dataset.iter_rows():
            self.used.add(str(row["device"]))
            yield batches[int(row["batch"])], row["vectors"]

    def worker_device(self) -> str:
        """Where the workers will compute, checked here once connected: a device or precision the cluster cannot
        give failed in every worker's constructor, a Ray traceback of hundreds of lines instead of one line."""
        if self.device == "cuda" and not self.gpus:
            raise UsageError("device='cuda': the Ray cluster has no GPU; use auto or cpu")
        device = "cuda" if self.gpus and self.device != "cpu" else "cpu"
        check_precision(self.precision, device)
        return device

    def params(self) -> dict[str, Any]:
        """As LocalEngine's, the device being the one the workers used; workers that differed (a node whose torch sees no
        GPU resolves auto to cpu) give each, said so."""
        used = ", ".join(sorted(self.used)) + (" (workers differed)" if len(self.used) > 1 else "")
        return {"name": "ray", "address": self.address or "local", "workers": self.workers, "gpus": self.gpus,
                "device": used or f"{self.device} (model not run)", "precision": self.precision}


def make_engine(name: str = "local", address: str | None = None, workers: int | None = None, device: str = "auto",
                precision: str = "exact") -> Engine:
    """The engine the options ask for; Ray is imported (not started) here so a missing install fails first."""
    if name not in ENGINES:
        raise UsageError(f"engine={name!r}: choose one of {', '.join(ENGINES)}")
    check_placement(device, precision)
    if precision == "int8" and device == "cuda" or precision == "fp16" and device == "cpu":
        check_precision(precision, device)
    if name == "local":
        if address is not None or workers is not None:
            raise UsageError("ray_address= and ray_workers= go with engine='ray'")
        return LOCAL if (device, precision) == ("auto", "exact") else LocalEngine(device, precision)
    if workers is not None and workers < 1:
        raise UsageError(f"ray_workers={workers!r}: give 1 or more")
    try:
        import ray  # noqa: F401
        import ray.data  # noqa: F401
    except ImportError:
        raise SemrelError(MISSING_RAY) from None
    return RayEngine(address or os.environ.get("RAY_ADDRESS") or None, workers, device, precision)
