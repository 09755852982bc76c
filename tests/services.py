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
from pathlib import Path

from magnet.search.workers import RAY_ENV


def magnet_command(*args: str) -> list[str]:
    """The command line of ``magnet ARGS`` in a subprocess, with this interpreter."""
    return [sys.executable, "-m", "magnet.cli", *args]


def magnet_process(*args: str) -> subprocess.Popen:
    """``magnet ARGS`` in a session of its own, with SIGINT's default action: a shell without
    job control starts background jobs with SIGINT ignored, which a child inherits, and a
    Ctrl-C test would then test nothing."""
    return subprocess.Popen(
        magnet_command(*args),
        cwd=Path(__file__).resolve().parents[1],
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


def wait_port(port: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return True
        time.sleep(0.25)
    return False


def _command_lines() -> Iterator[tuple[int, str]]:
    """(pid, command line) of every process this user can see."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        yield int(proc.name), cmd


RAY_WORDS = (
    "raylet",
    "gcs_server",
    "ray::",
    "ray.scripts.scripts",
    "ray/dashboard",
    "ray/_private",
)


def ray_like_pids() -> set[int]:
    """Processes that look like Ray's (for checking that nothing is left behind)."""
    return {pid for pid, cmd in _command_lines() if any(k in cmd for k in RAY_WORDS)}


def ray_processes(temp_dir: str) -> list[int]:
    """Processes whose command line mentions ``temp_dir``: one Ray cluster's."""
    return [pid for pid, cmd in _command_lines() if temp_dir in cmd]


@contextlib.contextmanager
def ray_head(cpus: int = 2) -> Iterator[str]:
    """A Ray head on 127.0.0.1 (``ray start --head``); yields its address, stops only it."""
    port = free_port()
    temp = tempfile.mkdtemp(prefix="mgt", dir="/tmp")
    env = {**os.environ, **RAY_ENV}
    cmd = [
        sys.executable,
        "-m",
        "ray.scripts.scripts",
        "start",
        "--head",
        f"--port={port}",
        f"--temp-dir={temp}",
        f"--num-cpus={cpus}",
        "--node-ip-address=127.0.0.1",
        "--include-dashboard=false",
        "--disable-usage-stats",
    ]
    subprocess.run(
        cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=180
    )
    try:
        assert wait_port(port, 60)
        yield f"127.0.0.1:{port}"
    finally:
        stop_ray(temp)
        shutil.rmtree(temp, ignore_errors=True)


def stop_ray(temp: str) -> None:
    """Stop the cluster whose processes name ``temp``: the raylet first (it reaps its
    workers), then the GCS, then the rest; SIGKILL what is left after a few seconds."""
    pids = ray_processes(temp)
    family = set(pids)
    for pid in pids:
        family |= _descendants(pid)

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
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def _descendants(pid: int) -> set[int]:
    out: set[int] = set()
    children = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        kids = [int(x) for x in children.read_text().split()]
    except OSError:
        return out
    for kid in kids:
        out.add(kid)
        out |= _descendants(kid)
    return out


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
