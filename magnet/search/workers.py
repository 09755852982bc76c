"""Where designs are evaluated: in the driver's process, or on Ray workers.

``InProcess`` runs one job at a time in the driver (``--workers 1``: no Ray at all, which
would cost 4-14 s and ~0.8 GB to start on a small machine). ``RayPool`` keeps up to ``W``
jobs in flight on Ray workers: on a cluster of its own (a ``ray start --head --block`` child
process bound to 127.0.0.1, which the kernel stops when the driver dies, even by SIGKILL,
so no Ray process outlives the search), or on an existing cluster (``--ray-address``), which
it only connects to. Ray is imported only here, only when used.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

from magnet.errors import MagnetError
from magnet.search.evaluate import DesignJob, DesignResult, evaluate_design

#: Ray's environment for the clusters magnet starts: no token authentication, every
#: component bound to 127.0.0.1, no usage statistics.
RAY_ENV = {
    "RAY_AUTH_MODE": "disabled",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
}
_PR_SET_PDEATHSIG = 1


class InProcess:
    """Evaluates each job when it is submitted."""

    slots = 1

    def __init__(self) -> None:
        self._done: list[tuple[DesignJob, DesignResult | BaseException]] = []

    def submit(self, job: DesignJob) -> None:
        try:
            self._done.append((job, evaluate_design(job)))
        except Exception as exc:  # a refused input or a bug: the trial fails, the search goes on
            self._done.append((job, exc))

    def results(self, timeout: float) -> Iterator[tuple[DesignJob, DesignResult | BaseException]]:
        done, self._done = self._done, []
        yield from done

    def cancel_all(self) -> None:
        pass

    def close(self) -> None:
        pass


def _die_with_parent() -> None:
    """In the ``ray start`` child: get SIGTERM when the driver dies (Linux)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _reachable(address: str, timeout: float = 3.0) -> bool:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


class RayPool:
    """Up to ``workers`` jobs in flight on Ray (see the module docstring)."""

    def __init__(self, workers: int, address: str | None = None, log: Any = None):
        self.slots = workers
        self.address = address
        self.head: subprocess.Popen | None = None
        self.temp_dir: str | None = None
        self.in_flight: dict[Any, DesignJob] = {}
        os.environ.update(RAY_ENV)  # before ray is imported
        import ray

        self.ray = ray
        if address is None:
            self._start_cluster(workers, log)
        elif not _reachable(address):
            raise MagnetError(
                "no Ray cluster answers at this address (give HOST:PORT of a running head)",
                source=address,
                field="--ray-address",
            )
        try:
            ray.init(
                address=self.address,
                log_to_driver=False,
                configure_logging=False,
                include_dashboard=False,
            )
        except Exception:
            self.close()
            raise
        self.remote = ray.remote(max_retries=1)(evaluate_design)

    def _start_cluster(self, workers: int, log: Any) -> None:
        port = _free_port()
        self.temp_dir = tempfile.mkdtemp(prefix="mgr", dir="/tmp")  # short: socket paths
        cmd = [
            sys.executable,
            "-m",
            "ray.scripts.scripts",
            "start",
            "--head",
            "--block",
            f"--port={port}",
            f"--temp-dir={self.temp_dir}",
            f"--num-cpus={workers}",
            "--node-ip-address=127.0.0.1",
            "--include-dashboard=false",
            "--disable-usage-stats",
        ]
        env = {**os.environ, **RAY_ENV}
        if log is not None:
            log(f"starting a local Ray cluster ({workers} workers)")
        self.head = subprocess.Popen(
            cmd,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        self.address = f"127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while not _reachable(self.address, timeout=1.0):
            if self.head.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise MagnetError("the local Ray cluster did not start", field="--workers")
            time.sleep(0.25)

    def submit(self, job: DesignJob) -> None:
        self.in_flight[self.remote.remote(job)] = job

    def results(self, timeout: float) -> Iterator[tuple[DesignJob, DesignResult | BaseException]]:
        if not self.in_flight:
            return
        ready, _ = self.ray.wait(list(self.in_flight), num_returns=1, timeout=timeout)
        for ref in ready:
            job = self.in_flight.pop(ref)
            try:
                yield job, self.ray.get(ref)
            except Exception as exc:
                cause = getattr(exc, "cause", None)
                yield job, cause if isinstance(cause, BaseException) else exc

    def cancel_all(self) -> None:
        for ref in self.in_flight:
            with contextlib.suppress(Exception):  # already finished or gone
                self.ray.cancel(ref, force=True)
        self.in_flight.clear()

    def close(self) -> None:
        try:
            if self.ray.is_initialized():
                self.ray.shutdown()
        finally:
            if self.head is not None:
                if self.head.poll() is None:
                    self.head.send_signal(signal.SIGTERM)
                    try:
                        self.head.wait(timeout=60)
                    except subprocess.TimeoutExpired:
                        self.head.kill()
                        self.head.wait()
                self.head = None
            if self.temp_dir is not None:
                shutil.rmtree(self.temp_dir, ignore_errors=True)
                self.temp_dir = None


def make_pool(workers: int, address: str | None, log: Any = None) -> InProcess | RayPool:
    if workers < 1:
        raise MagnetError(f"--workers must be >= 1, got {workers}", field="--workers")
    if workers == 1 and address is None:
        return InProcess()
    return RayPool(workers, address, log)
