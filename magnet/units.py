"""Sizes written by people (``32KiB``, ``8 KB``, ``3072`` bytes: ``parse_bytes``) and sizes
printed for them (``human_bytes``, with ``exact_bytes`` beside it)."""

from __future__ import annotations

import math
import re

_UNITS_BYTES = {
    "": 1,
    "b": 1,
    "B": 1,
    "KB": 1000,
    "kB": 1000,
    "KiB": 1024,
    "MB": 1000**2,
    "MiB": 1024**2,
    "GB": 1000**3,
    "GiB": 1024**3,
}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_bytes(value: int | float | str) -> int:
    """Return a size in bytes from an int or a string such as ``"32KiB"``.

    Raises ``ValueError`` naming the accepted units; callers add the file and field.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a size, got {value!r}")
    if isinstance(value, int | float):
        number, unit = float(value), ""
    else:
        match = _SIZE.match(str(value))
        if not match or match.group(2) not in _UNITS_BYTES:
            allowed = ", ".join(u for u in _UNITS_BYTES if u not in ("", "b"))
            raise ValueError(
                f"{value!r} is not a size; write bytes or a number with one of: {allowed}"
            )
        number, unit = float(match.group(1)), match.group(2)
    size = number * _UNITS_BYTES[unit]
    if not math.isfinite(size):
        raise ValueError(f"{value!r} is not a finite size")
    if size != int(size):
        raise ValueError(f"{value!r} is not a whole number of bytes")
    return int(size)


def format_bytes(size_bytes: int) -> str:
    """Short human form: 32768 -> '32KiB'."""
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size_bytes >= scale and size_bytes % scale == 0:
            return f"{size_bytes // scale}{unit}"
    return f"{size_bytes}B"


_BINARY = ("B", "KiB", "MiB", "GiB", "TiB")


def _decimals(value: float, unit: str) -> int:
    """Decimals that show ``value`` to three significant digits (whole bytes: none)."""
    magnitude = abs(value)
    if magnitude == 0 or (unit == "B" and value == int(value)):
        return 0
    return max(0, 2 - math.floor(math.log10(magnitude)))


def human_bytes(size_bytes: float) -> str:
    """A size for people to read, in binary units with up to three significant digits:
    65536 -> ``"64 KiB"``, 1572864 -> ``"1.5 MiB"``, 1000 -> ``"1000 B"``. Rounded, so a page
    shows the exact count beside it (``exact_bytes``); ``format_bytes`` is the exact form
    a file takes back."""
    value = float(size_bytes)
    if not math.isfinite(value):
        return f"{value} B"
    unit = 0
    while unit < len(_BINARY) - 1 and round(abs(value), _decimals(value, _BINARY[unit])) >= 1024:
        value /= 1024
        unit += 1
    text = f"{value:.{_decimals(value, _BINARY[unit])}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return f"{text} {_BINARY[unit]}"


def exact_bytes(size_bytes: float) -> str:
    """The exact count: ``"65,536 bytes"`` (a fraction of a byte, an average, kept)."""
    value = float(size_bytes)
    if not math.isfinite(value):
        return f"{value} bytes"
    number = f"{int(value):,}" if value == int(value) else f"{value:,.3f}".rstrip("0")
    return f"{number} byte{'' if value == 1 else 's'}"


def whole_number(value: object) -> int:
    """An integer written as one (``8``, not ``8.0``, ``"8"`` or ``true``)."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"expected a whole number, got {value!r}")
    return int(value)


def real_number(value: object) -> float:
    """A number written as one (``1.5`` or ``2``, not ``"1.5"`` or ``true``)."""
    import math
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"expected a number, got {value!r}")
    if not math.isfinite(float(value)):
        raise ValueError(f"expected a finite number, got {value!r}")
    return float(value)
