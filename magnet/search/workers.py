"""Where designs are evaluated: in the driver's process, or on Ray workers.

``InProcess`` runs one job at a time in the driver (``--workers 1``: no Ray at all, which
would cost 4-14 s and ~0.8 GB to start on a small machine). ``RayPool`` evaluates on Ray
workers: on a cluster of its own (a ``ray start --head --block`` child process bound to
127.0.0.1, which the kernel stops when the driver dies, even by SIGKILL, so no Ray process
outlives the search), or on an existing cluster (``--ray-address``), which it only connects
to. Ray is imported only here, only when used. Its start-up (the cluster, each worker's
imports) is paid once, before the first design, and measured (``startup_seconds``: the
driver reports it apart from the search's rate). Designs go to the workers in tasks of
``batch`` designs, ``TASKS_PER_WORKER`` tasks per worker in flight; a task hands each
design back as it finishes (a Ray streaming generator). The workers' warm stores trade what
they learn through a directory of the pool's (``DesignJob.exchange``,
``magnet.mapper.warm.Exchange``), removed when the pool closes.

An interrupted search never calls ``ray.cancel``: cancelling a task whose reply is arriving
races in Ray's core worker with that reply (the cancel fails the task while the reply is
about to complete it, and the reply then trips ``Check failed: it != submissible_tasks_.end()
Tried to complete task that was not pending``, aborting the driver: a RAY_CHECK failure on
stderr, exit 1 and, when it comes before the driver failed its trials, RUNNING trials left
behind; ray-project/ray PR 54527 describes the same race for retries). The pool forgets its
tasks instead, and ``close`` disconnects the driver (``ray.shutdown``): the raylet ends the
workers of a driver that left, and the cluster magnet started is stopped after that, its
stragglers by process group. Ctrl-C or SIGTERM while the pool closes is held until it is
closed.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any, Protocol

from magnet.errors import MagnetError, SearchFailed
from magnet.perf import freeze_heap, tune_allocator
from magnet.search.job import DesignJob, DesignResult, evaluate_design

#: Ray's environment for the clusters magnet starts (given to the ``ray start`` process, whose
#: raylet passes it to every worker; the driver's own environment is never changed): no
#: token authentication, every component bound to 127.0.0.1, no usage statistics.
RAY_ENV = {
    "RAY_AUTH_MODE": "disabled",
    "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    "RAY_USAGE_STATS_ENABLED": "0",
}
_PR_SET_PDEATHSIG = 1
#: How long the head of a local cluster gets to stop its processes after SIGTERM, and how
#: long what is left of its process group gets after that, before SIGKILL.
HEAD_STOP_SECONDS = 60
STRAGGLER_SECONDS = 5
#: Workers a local Ray cluster may have per core of this machine: more would only wait for a
#: core, each holding a worker's memory (a search wanting more gives ``--ray-address``).
WORKERS_PER_CORE = 4
#: Evaluations a search keeps in flight on a cluster it connects to (``--ray-address``): far
#: more than the cores of any cluster one driver keeps busy.
MAX_WORKERS = 10_000
#: Tasks a pool keeps in flight per worker: one running, the next queued on Ray, so a worker
#: starts its next designs the moment it finishes, not after the driver has told its result
#: and asked for more (20-50 ms per design here, 5-12 % of a ``quickstart`` design).
TASKS_PER_WORKER = 2
#: Designs per task: as many as take about ``TASK_SECONDS`` (measured as results arrive), at
#: most ``MAX_BATCH``. A Ray task's round trip costs 1.5 ms here (benchmarks/bench_workers.py):
#: under 1 % of a 0.2 s task, so a design that takes longer goes alone (its result is told
#: the moment it is ready either way: a task hands back each design as it finishes), and only
#: designs of a few ms (exact mapping reuse, bounds) are batched.
TASK_SECONDS = 0.2
MAX_BATCH = 16
RECENT = 8
#: How long a local Ray cluster may take to start (4-14 s here), and how often the wait for it
#: says that it is still starting.
START_SECONDS = 120
START_NOTE_SECONDS = 15
#: What ``ray start --head --block`` prints once its processes run (GCS, raylet) and its node
#: is registered: from then on a driver connects at once.
RAY_STARTED = b"Ray runtime started"
#: A line of a Ray process's log at level E (error) or C (fatal: the process ends), as
#: ``[time E pid tid] (raylet) file.cc:215: message``.
_RAY_LOG_LINE = re.compile(
    rb"^\[[^\]]* (?P<level>[EC]) \d+ \d+\] \((?P<who>[^)]*)\) (?P<text>.*)$", re.M
)


#: A failed trial's reason when its design ended the worker process evaluating it (Ray's
#: own message points to log files in the cluster's temporary directory, which magnet
#: removes when the search ends).
WORKER_DIED = (
    "the worker process evaluating this design died, twice (Ray ran it again once): code it "
    "runs ended the process (a plug-in calling os._exit, a crash in a compiled library, or "
    "the kernel's out-of-memory killer); the other designs are evaluated"
)


class WorkerDied(RuntimeError):
    """A design whose evaluation ended its worker process (``WORKER_DIED``)."""


#: What a pool hands back for a job: the design's result, or the exception it raised.
Outcome = DesignResult | BaseException


class Pool(Protocol):
    """Where the driver sends designs (``InProcess`` or ``RayPool``)."""

    @property
    def slots(self) -> int:
        """Jobs the driver keeps in flight."""

    #: Seconds the pool took to get ready (0 for one in the driver's process).
    startup_seconds: float

    def submit(self, job: DesignJob) -> None:
        """Start evaluating ``job``."""

    def results(self, timeout: float) -> Iterator[tuple[DesignJob, Outcome]]:
        """The jobs finished since the last call (waiting up to ``timeout`` seconds for one)."""

    def cancel_all(self) -> None:
        """Forget the jobs in flight (an interrupt: the driver fails their trials)."""

    def close(self) -> None:
        """Release the pool's processes (idempotent)."""


def outcome_of(job: DesignJob) -> Outcome:
    """``evaluate_design(job)``, or the exception it raised: a refused input or a bug fails
    the trial (the driver tells it so), never the search or the other designs of a batch."""
    try:
        return evaluate_design(job)
    except Exception as exc:
        return exc


def evaluate_batch(jobs: list[DesignJob]) -> Iterator[tuple[int, Outcome]]:
    """On a Ray worker: evaluate ``jobs`` in turn, handing each outcome back as soon as it is
    ready (a Ray streaming generator task), with the job's trial number. The process is
    settled first (``settle_worker``: once per process, then free)."""
    settle_worker()
    for job in jobs:
        yield job.number, outcome_of(job)


#: The modules an evaluation imports on first use (``warm_worker``): the built-in mappers
#: (their registry loads them by name) and their sampler, the pipeline planner, the workload
#: loader and its zoo, numpy's random generators.
FIRST_USE = (
    "magnet.mapper.mappers",
    "magnet.mapper.planner",
    "magnet.workload.loader",
    "magnet.workload.zoo",
    "numpy.random",
)


def warm_worker() -> None:
    """On a Ray worker, at the pool's start: what every evaluation needs first, paid before
    the first design: this module, and with it the evaluator, imported; the modules an
    evaluation imports on first use (``FIRST_USE``); the process settled (``settle_worker``).
    A fresh process's first ``quickstart`` design took 0.42-0.44 s with them imported in it,
    0.35-0.42 s after them (their imports 0.03 s); a search on one worker has them from its
    preflight."""
    for name in FIRST_USE:
        importlib.import_module(name)
    settle_worker()


def settle_worker() -> None:
    """A Ray worker process set for the evaluator, once (``magnet.perf``): the allocator
    tuned, and the objects alive at its start left out of the cyclic collector
    (``freeze_heap``): 100 designs of ``magnet`` on 2 workers took 9.88-10.02 s against
    10.21-10.44 s (three runs each; benchmarks/HISTORY.md)."""
    tune_allocator()
    freeze_heap()


class InProcess:
    """Evaluates each submitted job in ``results``, in the caller's process: where the
    driver waits for a Ray pool's, and the one place it lets an interrupt be raised the
    moment it comes. It leaves the process as it is (the allocator is tuned by the command
    line, not here)."""

    slots = 1
    startup_seconds = 0.0

    def __init__(self) -> None:
        self._queued: list[DesignJob] = []

    def submit(self, job: DesignJob) -> None:
        """Queue ``job``: it is evaluated when the driver asks for ``results``."""
        self._queued.append(job)

    def results(self, timeout: float) -> Iterator[tuple[DesignJob, Outcome]]:
        """Evaluate the queued jobs, one by one (``timeout`` does not apply: nothing runs
        in the background)."""
        queued, self._queued = self._queued, []
        for job in queued:
            yield job, outcome_of(job)

    def cancel_all(self) -> None:
        """Forget the queued jobs (an interrupt: the driver fails their trials)."""
        self._queued.clear()

    def close(self) -> None:
        """Nothing to release."""


def _die_with_parent() -> None:
    """In the ``ray start`` child: get SIGTERM when the driver dies (Linux)."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def _free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _reachable(address: str, timeout: float = 3.0) -> bool:
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


#: What an HTTP/2 client sends first (RFC 9113 3.4: the preface, then a SETTINGS frame).
_HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])


def _speaks_grpc(address: str, timeout: float = 3.0) -> bool:
    """Whether the server at ``address`` answers an HTTP/2 client as a gRPC server (a Ray
    head's GCS) does: with a SETTINGS frame (type 4). A web server, ssh or a silent port do
    not, and ``ray.init`` would wait minutes on them."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout) as s:
            s.settimeout(timeout)
            s.sendall(_HTTP2_HELLO)
            head = b""
            while len(head) < 9:
                chunk = s.recv(9 - len(head))
                if not chunk:
                    return False
                head += chunk
    except (OSError, ValueError):
        return False
    return head[3] == 4


def cores() -> int:
    """The cores this process may run on (its CPU affinity: a container's share)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def check_workers(workers: int, address: str | None) -> None:
    """Refuse, before any work, more workers than a search can use: on a local cluster more
    than ``WORKERS_PER_CORE`` per core of this machine, on a cluster it connects to more than
    ``MAX_WORKERS``."""
    if address is None and workers > (most := WORKERS_PER_CORE * cores()):
        raise MagnetError(
            f"at most {most} on a local Ray cluster ({WORKERS_PER_CORE} per core of this "
            f"machine, which has {cores()}), got {workers}; give --ray-address HOST:PORT of a "
            "Ray cluster for more",
            field="--workers",
        )
    if workers > MAX_WORKERS:
        raise MagnetError(
            f"at most {MAX_WORKERS:,} evaluations in flight on a Ray cluster, got {workers}",
            field="--workers",
        )


def check_address(address: str) -> None:
    """Refuse, before any work, a ``--ray-address`` where no Ray head answers: not
    HOST:PORT, nothing listening there, or a server that is not one (when Ray's TLS is off,
    its default: a Ray head is then a plain gRPC server)."""
    port = address.rpartition(":")[2]
    where = {"source": address or None, "field": "--ray-address"}
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise MagnetError("give HOST:PORT of a running Ray head (its GCS port)", **where)
    tls = os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true")
    if not (_reachable(address) if tls else _speaks_grpc(address)):
        raise MagnetError(
            "no Ray cluster answers at this address (give HOST:PORT of a running head)", **where
        )


def _group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid`` (Linux: /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # gone meanwhile
            continue
        fields = text[text.rfind(")") + 2 :].split()  # after "pid (name) "
        if fields[0] != "Z" and int(fields[2]) == pgid:
            out.append(int(stat.parent.name))
    return out


def _end_group(pgid: int) -> None:
    """End what is left of process group ``pgid`` (a stopped head's cluster): SIGTERM, then
    SIGKILL after ``STRAGGLER_SECONDS``. Its leader is dead and reaped, and Linux gives no
    new process a pid that is still a live group's id, so the group is the cluster's."""
    if not Path("/proc/self/stat").exists():  # no /proc: signal the group blind
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
        return
    if not _group_members(pgid):
        return
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + STRAGGLER_SECONDS
    while _group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _group_members(pgid):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)


@contextlib.contextmanager
def _signals_held(reraise: bool) -> Iterator[None]:
    """Hold SIGINT and SIGTERM while Ray is shut down (a second Ctrl-C in ``ray.shutdown``
    would leave it half done). Afterwards a held signal goes to the handler it was meant
    for, unless ``reraise`` is False (an interrupt being handled already)."""
    held: list[int] = []
    saved: dict[signal.Signals, Callable[[int, FrameType | None], Any] | int | None] = {}

    def hold(signum: int, frame: FrameType | None) -> None:
        held.append(signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is None:  # a handler not set from Python: left alone
            continue
        try:
            saved[signum] = signal.signal(signum, hold)
        except ValueError:  # not the main thread: signals are not ours to handle
            break
    try:
        yield
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)
        if reraise and held:
            signal.raise_signal(held[0])


@contextlib.contextmanager
def ray_environment() -> Iterator[None]:
    """``RAY_ENV`` in this process's environment for the block only, then the environment as
    it was (a value the caller had is put back, one it lacked removed).

    The driver's side of Ray takes these settings from the environment alone, and only at
    two moments: its loopback switch (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``: without it a
    driver turns ``127.0.0.1`` into the host's address, where a cluster bound to 127.0.0.1
    does not listen) when ``ray`` is imported, its authentication mode when ``ray.init``
    connects. The cluster's own processes get ``RAY_ENV`` through ``Popen(env=...)``."""
    saved = {key: os.environ.get(key) for key in RAY_ENV}
    os.environ.update(RAY_ENV)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


class RayPool:
    """Designs evaluated on ``workers`` Ray workers (see the module docstring)."""

    def __init__(
        self, workers: int, address: str | None = None, log: Callable[[str], None] | None = None
    ):
        started = time.monotonic()
        self.workers = workers
        self.address = address
        self.head: subprocess.Popen[bytes] | None = None
        self.temp_dir: str | None = None
        #: Ray's generator of each task in flight -> its jobs not yet handed back, in order
        self.tasks: dict[Any, list[DesignJob]] = {}
        self.pending: list[DesignJob] = []  # submitted, waiting to fill a batch
        #: designs a task of several died on: each is sent again alone before it is blamed
        self.suspects: list[DesignJob] = []
        self.batch = 1
        self.tasks_sent = 0
        self.recent: deque[float] = deque(maxlen=RECENT)  # the last designs' seconds
        self.interrupted = False
        self.exchange: tuple[str, int] | None = None
        with ray_environment():  # Ray reads its loopback switch when it is imported
            import ray

        self.ray = ray
        if address is None:
            self._start_cluster(workers, log)
        else:
            check_address(address)
        try:
            with ray_environment():  # and its authentication mode when it connects
                ray.init(
                    address=self.address,
                    log_to_driver=False,
                    configure_logging=False,
                    include_dashboard=False,
                )
        except Exception as exc:  # a cluster that answered, and then did not take a driver
            self.close()
            raise SearchFailed(
                f"cannot connect to the Ray cluster at {self.address}: {type(exc).__name__}: "
                f"{(str(exc).splitlines() or [''])[0]}"
            ) from None
        except BaseException:
            self.close()
            raise
        self.remote = ray.remote(max_retries=1)(evaluate_batch)
        #: where the workers' warm stores trade their outcomes (``WarmStore.share``; on this
        #: machine: a worker of another one keeps its own), and how many workers there are;
        #: in the temporary directory of the cluster the pool started, if it started one
        stores = tempfile.mkdtemp(prefix="magnet-stores-", dir=self.temp_dir)
        self.exchange = (stores, workers)
        self._warm(log)
        #: Seconds from the pool's creation until every worker is ready (the cluster started
        #: or reached, each worker's imports done): a search's start-up, reported apart
        self.startup_seconds = time.monotonic() - started

    @property
    def slots(self) -> int:
        """Designs the driver keeps in flight: ``TASKS_PER_WORKER`` batches per worker."""
        return self.workers * TASKS_PER_WORKER * self.batch

    def _warm(self, log: Callable[[str], None] | None) -> None:
        """Run ``warm_worker`` on as many workers as will evaluate at once (this pool's, at
        most the cluster's cores), so that the first designs do not pay their imports. An
        existing cluster busy with other work is not waited for beyond ``START_SECONDS``."""
        resources: dict[str, float] = self.ray.cluster_resources()  # type: ignore[no-untyped-call]
        cores = int(resources.get("CPU", 1))
        warm = self.ray.remote(warm_worker)
        refs = [warm.remote() for _ in range(max(1, min(self.workers, cores)))]
        ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=START_SECONDS)
        if len(ready) < len(refs) and log is not None:
            log(f"{len(refs) - len(ready)} Ray workers not ready after {START_SECONDS} s")

    def _start_cluster(self, workers: int, log: Callable[[str], None] | None) -> None:
        """Start ``ray start --head`` as a child (``RAY_ENV`` in its environment only, its
        output in a file of its temp dir) and wait until it runs (``_wait_for_head``)."""
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
        say = log or (lambda line: None)
        say(f"starting a local Ray cluster ({workers} workers) ...")
        output = Path(self.temp_dir) / "head.out"
        with open(output, "wb") as out:
            self.head = subprocess.Popen(
                cmd,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        self.address = f"127.0.0.1:{port}"
        try:
            _wait_for_head(self.head, output, say)
        except BaseException:
            # a head still starting ignores SIGTERM until its own start-up times out (30 s):
            # it has nothing to save, so it is killed, and ``close`` ends the rest of its group
            self.head.kill()
            self.head.wait()
            self.close()
            raise

    def submit(self, job: DesignJob) -> None:
        """Queue ``job`` for a Ray worker: sent with the others the driver submits before it
        asks for ``results`` (``_send``)."""
        self.pending.append(replace(job, exchange=self.exchange))

    def _send(self) -> None:
        """Send the queued jobs as tasks of ``batch`` designs; a smaller batch only when a
        worker would otherwise run out of queued work. Suspects first, each alone."""
        while self.suspects:
            job = self.suspects.pop(0)
            self.tasks[self.remote.remote([job])] = [job]
            self.tasks_sent += 1
        while self.pending and (
            len(self.pending) >= self.batch or len(self.tasks) < self.workers * TASKS_PER_WORKER
        ):
            jobs, self.pending = self.pending[: self.batch], self.pending[self.batch :]
            self.tasks[self.remote.remote(jobs)] = jobs
            self.tasks_sent += 1

    def results(self, timeout: float) -> Iterator[tuple[DesignJob, Outcome]]:
        """The designs Ray finished (waiting up to ``timeout`` seconds for one). A task that
        failed as a whole (its worker died: a plug-in ended the process) fails the design it
        was evaluating with Ray's error (or the cause it names) when that design was its last;
        otherwise the design is sent again alone (a process that dies loses the reply it was
        sending, so the design that killed it may be the next one), and the designs after it
        are sent again."""
        self._send()
        if not self.tasks:
            return
        ready, _ = self.ray.wait(list(self.tasks), num_returns=1, timeout=timeout)
        for task in ready:
            jobs = self.tasks.pop(task)
            assert isinstance(task, self.ray.ObjectRefGenerator)
            try:
                ref = next(task)
            except StopIteration:  # every design of it handed back
                continue
            job, rest = jobs[0], jobs[1:]  # a task evaluates its designs in turn
            try:
                number, outcome = self.ray.get(ref)
            except Exception as exc:
                self.pending[:0] = rest
                if rest:
                    self.suspects.append(job)
                    continue
                cause = getattr(exc, "cause", None)
                if isinstance(cause, BaseException):
                    yield job, cause
                elif isinstance(exc, self.ray.exceptions.WorkerCrashedError):
                    yield job, WorkerDied(WORKER_DIED)
                else:
                    yield job, exc
                continue
            assert number == job.number
            self.tasks[task] = rest  # it hands back the rest (and then stops)
            self._learn(outcome)
            yield job, outcome
        self._send()

    def _learn(self, outcome: Outcome) -> None:
        """Size the batches from the mean time of the last ``RECENT`` designs on a worker
        (``TASK_SECONDS``; a worker's first design, which pays for its first imports, soon
        out of the count)."""
        if not isinstance(outcome, DesignResult) or outcome.seconds <= 0:
            return
        self.recent.append(outcome.seconds)
        mean = sum(self.recent) / len(self.recent)
        self.batch = max(1, min(MAX_BATCH, int(TASK_SECONDS / mean)))

    def cancel_all(self) -> None:
        """Forget the jobs in flight (their trials are failed by the driver). No
        ``ray.cancel`` (see the module docstring): ``close`` ends their workers."""
        self.interrupted = True
        self.tasks.clear()
        self.pending.clear()
        self.suspects.clear()

    def close(self) -> None:
        """Disconnect from Ray, then stop the cluster this pool started (if any): the head
        first (it stops the raylet, which ends its workers, then the rest), then whatever of
        its process group is left. Idempotent."""
        with _signals_held(reraise=not self.interrupted):
            try:
                if self.ray.is_initialized():
                    self.ray.shutdown()
            finally:
                self._stop_cluster()

    def _stop_cluster(self) -> None:
        """Stop the head this pool started and what is left of its process group."""
        if self.head is not None:
            head, self.head = self.head, None
            if head.poll() is None:
                head.send_signal(signal.SIGTERM)
                try:
                    head.wait(timeout=HEAD_STOP_SECONDS)
                except subprocess.TimeoutExpired:
                    head.kill()
                    head.wait()
            # ``ray start`` leads its own session and process group (start_new_session),
            # which every process of the cluster joins; the id stays theirs while one lives
            _end_group(head.pid)
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
            self.temp_dir = None
        if self.exchange is not None:
            shutil.rmtree(self.exchange[0], ignore_errors=True)
            self.exchange = None


def _wait_for_head(head: subprocess.Popen[bytes], output: Path, say: Callable[[str], None]) -> None:
    """Wait until the ``ray start`` process ``head`` (printing to ``output``) says that its
    cluster runs, saying every ``START_NOTE_SECONDS`` that it is still starting. A cluster that
    fails (the head exits, or one of its processes logs a fatal error: a raylet that cannot map
    its object store under a memory limit) is ``SearchFailed`` naming the cause at once, not
    after Ray's own wait of a minute; so is one still not running after ``START_SECONDS``."""
    logs = output.parent / "session_latest" / "logs"
    start = noted = time.monotonic()
    instead = "; search with --workers 1 (no Ray), or on a running cluster with --ray-address"
    while RAY_STARTED not in output.read_bytes():
        if head.poll() is not None or _ray_error(logs, fatal=True):
            cause = _ray_error(logs) or _last_words(output) or f"exit status {head.poll()}"
            raise SearchFailed(f"the local Ray cluster did not start: {cause}{instead}")
        now = time.monotonic()
        if now - start > START_SECONDS:
            raise SearchFailed(
                f"the local Ray cluster did not start within {START_SECONDS} s{instead}"
            )
        if now - noted >= START_NOTE_SECONDS:
            noted = now
            say(f"still starting the local Ray cluster ({now - start:.0f} s)")
        time.sleep(0.25)


def _ray_error(logs: Path, fatal: bool = False) -> str:
    """The first error line (with ``fatal``: fatal) of the raylet's or the GCS's output or
    error file in ``logs``, as ``raylet: file.cc:215: message``; empty when there is none."""
    for name in ("raylet.out", "raylet.err", "gcs_server.out", "gcs_server.err"):
        try:
            text = (logs / name).read_bytes()
        except OSError:
            continue
        for m in _RAY_LOG_LINE.finditer(text):
            if m["level"] == b"C" or not fatal:
                return f"{m['who'].decode(errors='replace')}: {m['text'].decode(errors='replace')}"
    return ""


def _last_words(output: Path) -> str:
    """The last line of a process's output that is not a traceback's frame (its error)."""
    lines = [line.strip() for line in output.read_text(errors="replace").splitlines()]
    said = [line for line in lines if line and not line.startswith(("File ", "^", "Traceback"))]
    return said[-1] if said else ""


def make_pool(
    workers: int, address: str | None, log: Callable[[str], None] | None = None
) -> InProcess | RayPool:
    """In this process for one worker and no cluster address, else on Ray."""
    if workers < 1:
        raise MagnetError(f"--workers must be >= 1, got {workers}", field="--workers")
    if workers == 1 and address is None:
        return InProcess()
    return RayPool(workers, address, log)
