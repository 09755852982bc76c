"""Process-level performance settings for long batch evaluations.

The batch evaluator allocates and frees many arrays of a few hundred kilobytes per call.
glibc serves those with ``mmap`` and returns them to the system on ``free``, so every call
pays page faults again (measured: 22 ms -> 9 ms per 10,000 mappings). ``tune_allocator``
asks glibc to keep such memory for reuse.

It changes the whole process's allocator, so no library call makes it: an entry point opts
in, once, at its start (the ``magnet`` command, a search worker process, the benchmarks).
A program that uses magnet as a library calls it itself if it wants the speed; merely
importing magnet, or evaluating a mapping, changes nothing.

``paused_gc`` keeps Python's cyclic garbage collector out of a bulk read (a study of 100,000
trials), for the block's length only; ``freeze_heap`` keeps it off the objects an entry
point has made by its start (a search's Ray worker: Ray's modules and magnet's) for good.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import sys
import threading
from collections.abc import Iterator

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_KEEP_BYTES = 1 << 30
_done = False


def tune_allocator() -> bool:
    """Keep freed buffers of up to 1 GiB in the heap (glibc ``mallopt``; Linux only).

    A process-wide setting for entry points (see the module docstring), applied once per
    process; later calls return at once. Returns True if the setting is in effect, False
    where it cannot be applied (not Linux, no glibc); it never raises.
    """
    global _done
    if _done:
        return True
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
        mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
        ok: bool = mallopt(_M_MMAP_THRESHOLD, _KEEP_BYTES) == 1
        ok = mallopt(_M_TRIM_THRESHOLD, _KEEP_BYTES) == 1 and ok
    except (OSError, AttributeError):
        return False
    _done = ok
    return ok


#: (blocks in ``paused_gc`` now, whether the collector was on when the first began)
_paused = [0, False]
_paused_lock = threading.Lock()


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Python's cyclic garbage collector off while the block runs, back as it was when the
    last of the blocks running at once (a server's threads) ends.

    Reading a big study makes millions of small objects and frees almost none; the
    collector, run every few hundred allocations, walked the whole growing heap each time
    (at 100,000 trials: a journal replayed in 3.9 s with it, 2.5 s without). Reference
    counting still frees what the block drops."""
    with _paused_lock:
        if _paused[0] == 0:
            _paused[1] = gc.isenabled()
            gc.disable()
        _paused[0] += 1
    try:
        yield
    finally:
        with _paused_lock:
            _paused[0] -= 1
            if _paused[0] == 0 and _paused[1]:
                gc.enable()


_frozen = False


def freeze_heap() -> None:
    """Leave the objects alive now out of Python's cyclic garbage collector for good
    (``gc.freeze``, after a collection), once per process: every full collection walked
    them. For an entry point whose imports are done; later calls return at once. A Ray
    worker's heap holds Ray's modules: 40 ``quickstart`` designs in one took 4.99-5.07 s of
    design time before, 4.89 s after (4.90 s in the driver's process)."""
    global _frozen
    if _frozen:
        return
    _frozen = True
    gc.collect()
    gc.freeze()
