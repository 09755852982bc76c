"""Real services the tests start and stop themselves: a Ray head, a PostgreSQL server.

Each is started in a temporary folder of its own, on a free port, bound to 127.0.0.1, and
stopped by the process ids it started (never ``ray stop``, which would end every Ray process
on the machine).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from magnet.search.workers import RAY_ENV, RAY_STARTED, _die_with_parent


def magnet_command(*args: str) -> list[str]:
    """The command line of ``magnet ARGS`` in a subprocess, with this interpreter."""
    return [sys.executable, "-m", "magnet.cli", *args]


def magnet_process(*args: str, cwd: Path | None = None) -> subprocess.Popen:
    """``magnet ARGS`` in a session of its own (in ``cwd``, default the repository), with
    SIGINT's default action: a shell without job control starts background jobs with SIGINT
    ignored, which a child inherits, and a Ctrl-C test would then test nothing."""
    return subprocess.Popen(
        magnet_command(*args),
        cwd=cwd or Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, seconds: float, host: str = "127.0.0.1") -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((host, port), 1):
            return True
        time.sleep(0.25)
    return False


def _stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, parent pid, session id, start time in clock ticks) of a process; None once it
    is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2 :].split()  # after "pid (name) "
    return fields[0], int(fields[1]), int(fields[3]), int(fields[19])


def _processes() -> dict[int, tuple[str, int, int, int]]:
    """``_stat`` of every process: the table the checks below select the test's own from."""
    out = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit() and (stat := _stat(int(proc.name))) is not None:
            out[int(proc.name)] = stat
    return out


def descendants(root: int) -> dict[int, int]:
    """The processes descending from ``root`` (started by any of its threads, and theirs):
    pid -> start time, which tells a process from a later one given the same pid."""
    table = _processes()
    children: dict[int, list[int]] = {}
    for pid, (_, parent, _, _) in table.items():
        children.setdefault(parent, []).append(pid)
    out: dict[int, int] = {}
    todo = [root]
    while todo:
        for kid in children.get(todo.pop(), []):
            if kid not in out:
                out[kid] = table[kid][3]
                todo.append(kid)
    return out


def ray_processes(temp_dir: str) -> list[int]:
    """Processes whose command line names ``temp_dir``: one Ray cluster's (each cluster a
    test starts has a temp dir of its own)."""
    return [pid for pid in _processes() if temp_dir in _cmd(pid)]


@dataclass
class DriverCluster:
    """The Ray cluster one ``magnet search`` process (``driver``) started, and only it: its
    ``ray start --head`` child, whose pid is the id of the session every process of the
    cluster is in (the GCS, the raylet, the workers, which rename themselves ``ray::...``),
    whose temp dir the cluster's processes name, and every process ever seen descending
    from the driver. A neighbour's Ray on the same machine is none of these."""

    driver: int
    head: int | None = None
    temp_dir: str | None = None
    seen: dict[int, int] = field(default_factory=dict)  # pid -> start time

    def watch(self) -> bool:
        """Note the driver's processes now (call it while the driver runs); True once its
        Ray head is known."""
        found = descendants(self.driver)
        self.seen.update(found)
        for pid in found if self.head is None else ():
            argv = _cmd(pid).split()
            stat = _stat(pid)
            if stat and stat[1] == self.driver and "ray.scripts.scripts" in argv:
                temp = [a.split("=", 1)[1] for a in argv if a.startswith("--temp-dir=")]
                self.head, self.temp_dir = pid, temp[0]
        return self.head is not None

    def left(self) -> list[int]:
        """Its processes still alive (zombies are dead: only not yet reaped)."""
        out = []
        for pid, (state, _, session, start) in _processes().items():
            if state == "Z":
                continue
            if (
                session == self.head
                or self.seen.get(pid) == start
                or (self.temp_dir is not None and self.temp_dir in _cmd(pid))
            ):
                out.append(pid)
        return out


#: Waits, as a driver of the cluster at argv[1], until it counts argv[2] cores (at most 120 s).
_CORES_PROBE = """
import sys, time, ray
ray.init(address=sys.argv[1], log_to_driver=False, configure_logging=False)
deadline = time.monotonic() + 120
while ray.cluster_resources().get("CPU", 0) < float(sys.argv[2]):
    assert time.monotonic() < deadline, ray.cluster_resources()
    time.sleep(0.2)
"""


def _wait_for_cores(address: str, cores: int, env: dict[str, str]) -> None:
    """Until the Ray cluster at ``address`` counts ``cores`` cores: every node joined, so
    that a search's first tasks can be placed on any of them."""
    probe = [sys.executable, "-c", _CORES_PROBE, address, str(cores)]
    done = subprocess.run(probe, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]


@contextlib.contextmanager
def ray_head(cpus: int = 2, nodes: int = 1) -> Iterator[str]:
    """A Ray head on 127.0.0.1 (``ray start --head --block``, a child of this process that
    gets SIGTERM and stops its cluster when this process dies, even if it crashes before its
    clean-up: a pytest worker that dies must not leave a cluster behind); yields its
    address, stops only it.

    With ``nodes`` > 1, a cluster of that many nodes on this machine, ``cpus`` each: the
    head on 127.0.0.2, the others on 127.0.0.3, ... (each ``ray start --address``; Ray
    refuses a second node while its loopback switch, ``RAY_ENV``, is on, and then turns
    127.0.0.1 into the host's address, so the nodes take other loopback addresses)."""
    port = free_port()
    temp = tempfile.mkdtemp(prefix="mgt", dir="/tmp")
    env = {**os.environ, **RAY_ENV}
    ip = "127.0.0.1"
    if nodes > 1:
        env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "1"
        ip = "127.0.0.2"
    start = [sys.executable, "-m", "ray.scripts.scripts", "start", "--block"]
    start += [f"--num-cpus={cpus}", "--disable-usage-stats"]
    head_args = [
        "--head",
        f"--port={port}",
        f"--temp-dir={temp}",
        f"--node-ip-address={ip}",
        "--include-dashboard=false",
    ]
    more = [
        [f"--address={ip}:{port}", f"--node-ip-address=127.0.0.{3 + i}"] for i in range(nodes - 1)
    ]
    if nodes > 1:  # every node's object store small: several share this machine's memory
        start.append("--object-store-memory=200000000")
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for i, args in enumerate([head_args, *more]):
            said = Path(temp) / f"node{i}.out"  # ``ray start`` says when its node has joined
            with open(said, "wb") as out:
                procs.append(
                    subprocess.Popen(
                        start + args,
                        env=env,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                        preexec_fn=_die_with_parent,
                    )
                )
            deadline = time.monotonic() + 180
            while RAY_STARTED not in said.read_bytes():
                assert procs[-1].poll() is None and time.monotonic() < deadline, said.read_text()
                time.sleep(0.25)
        assert wait_port(port, 180, host=ip)
        if nodes > 1:  # a node that said it started may not yet count in the cluster's cores
            _wait_for_cores(f"{ip}:{port}", nodes * cpus, env)
        yield f"{ip}:{port}"
    finally:
        for proc in reversed(procs):
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=60)
        stop_ray(temp)
        shutil.rmtree(temp, ignore_errors=True)


def stop_ray(temp: str) -> None:
    """Stop the cluster whose processes name ``temp``: the raylet first (it reaps its
    workers), then the GCS, then the rest; SIGKILL what is left after a few seconds."""
    pids = ray_processes(temp)
    family = set(pids)
    for pid in pids:
        family |= set(descendants(pid))

    def named(word: str) -> list[int]:
        return [p for p in pids if word in _cmd(p)]

    for group in (named("raylet"), named("gcs_server"), sorted(family)):
        for pid in group:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        time.sleep(0.5)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(p) for p in family):
        time.sleep(0.25)
    for pid in family:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _cmd(pid: int) -> str:
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def postgres_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return found[-1].parent if found else None


@contextlib.contextmanager
def postgres() -> Iterator[str]:
    """A PostgreSQL server in a temporary folder on 127.0.0.1; yields its URL. As root it runs
    as the ``postgres`` user (the server refuses root)."""
    bindir = postgres_bin()
    assert bindir is not None, "PostgreSQL's binaries are missing (apt-get install postgresql)"
    folder = tempfile.mkdtemp(prefix="magnet-pg-")
    data = Path(folder) / "data"
    port = free_port()
    run_as: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
        os.chmod(folder, 0o700)
        run_as = ["runuser", "-u", "postgres", "--"]
    subprocess.run(
        [
            *run_as,
            str(bindir / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=120,
    )
    opts = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1"
    subprocess.run(
        [
            *run_as,
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            opts,
            "-w",
            "-l",
            str(Path(folder) / "log"),
            "start",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=120,
    )
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*run_as, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
        )
        shutil.rmtree(folder, ignore_errors=True)
