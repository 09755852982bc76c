"""Process-level performance settings for long batch evaluations.

The batch evaluator allocates and frees many arrays of a few hundred kilobytes per call.
glibc serves those with ``mmap`` and returns them to the system on ``free``, so every call
pays page faults again (measured: 22 ms -> 9 ms per 10,000 mappings). ``tune_allocator``
asks glibc to keep such memory for reuse. The batch evaluator calls it (once per process),
so every process that evaluates, a search worker included, runs at the same speed; merely
importing magnet changes nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_KEEP_BYTES = 1 << 30
_done = False


def tune_allocator() -> bool:
    """Keep freed buffers in the heap (glibc only). Returns True if the setting was applied."""
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
        ok = libc.mallopt(_M_MMAP_THRESHOLD, _KEEP_BYTES) == 1
        ok = libc.mallopt(_M_TRIM_THRESHOLD, _KEEP_BYTES) == 1 and ok
    except (OSError, AttributeError):
        return False
    _done = ok
    return ok
