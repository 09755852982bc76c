"""Sizes written by people (``32KiB``, ``8 KB``, ``3072`` bytes: ``parse_bytes``) and sizes
printed for them (``human_bytes``, with ``exact_bytes`` beside it); the numbers people write
(``whole_number``, ``real_number``, ``exponent_number``, ``number_text``, ``digits_number``,
``check_seed``)."""

from __future__ import annotations

import decimal
import math
import re
from typing import Annotated

from pydantic import BeforeValidator

from magnet.errors import clipped_repr

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
#: A number written with an exponent: ``1e6``, ``1.0e6``, ``2.5E3``, ``1.5e-3`` (YAML 1.2's
#: form; YAML 1.1 wants a dot and a signed exponent, ``1.0e+6``).
EXPONENT = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+")
#: Largest power of ten a number written with an exponent may be read as a whole number at
#: (float's range): beyond it the number is infinite, which every field refuses.
_MAX_EXPONENT = 308
_SIZE = re.compile(
    r"^\s*([0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$"
)


def exponent_number(text: str) -> int | float:
    """The number ``text`` (written with an exponent, ``EXPONENT``) stands for: a whole number
    as an int (``1e6`` -> 1000000, ``2.5E3`` -> 2500), so that it fits wherever a count or a
    size does; a fraction as a float (``1.5e-3``); past float's range, infinity."""
    value = decimal.Decimal(text)
    if value.is_zero():
        return 0
    if value.adjusted() <= _MAX_EXPONENT and value == value.to_integral_value():
        return int(value)
    return float(value)


#: Most digits a whole number may have: those of 1e308, the largest whole number magnet
#: reads written with an exponent (float's range). A longer one is past every bound magnet
#: has (and Python converts no more than 4300 digits).
MAX_DIGITS = 309
_LARGEST = 10**MAX_DIGITS


def number_text(text: str) -> int | float | None:
    """The number a word of a command line or a spec string is (``--layer K=1e3``,
    ``gpt2-small:kv_len=1024``): an integer of ASCII digits (``16``, ``-3``; not ``1_000``
    nor ``１６``), or one written with an exponent (``exponent_number``: ``1e3`` is 1000,
    ``1.5e-3`` a fraction); None for any other text (``true``, ``2.5``: left to the caller to
    refuse or keep as text). An integer of more than ``MAX_DIGITS`` digits raises
    ``ValueError`` naming the bound."""
    if re.fullmatch(r"[-+]?[0-9]+", text):
        return digits_number(text)
    return exponent_number(text) if EXPONENT.fullmatch(text) else None


def digits_number(text: str, base: int = 10) -> int:
    """``int(text, base)`` for a whole number of at most ``MAX_DIGITS`` decimal digits
    (``ValueError`` naming the bound for a longer one, where Python's own error would be
    "Exceeds the limit (4300 digits) for integer string conversion")."""
    digits = len(text.lstrip("+-").lstrip("0"))
    if base == 10 and digits > MAX_DIGITS:  # before int(), which refuses 4300 digits
        raise _too_long(digits)
    return bounded_whole(int(text, base))


def bounded_whole(number: int) -> int:
    """``number``, unless it has more than ``MAX_DIGITS`` digits (``ValueError``)."""
    if abs(number) >= _LARGEST:
        raise _too_long(len(str(decimal.Decimal(abs(number)))))
    return number


def _too_long(digits: int) -> ValueError:
    return ValueError(
        f"magnet reads whole numbers of at most {MAX_DIGITS} digits (1e308), got one of "
        f"{digits:,} digits"
    )


def parse_bytes(value: int | float | str) -> int:
    """Return a size in bytes from an int or a string such as ``"32KiB"`` or ``"1.5e3 KB"``
    (a size is a whole number of bytes: ``"1.5e3"`` is 1500 bytes, ``"1.5e0"`` is refused).

    Raises ``ValueError`` naming the accepted units; callers add the file and field.
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a size, got {value!r}")
    if isinstance(value, int):
        return value  # exact, however large: callers bound it
    if isinstance(value, float):
        number, unit = value, ""
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
    """An integer written as one (``8``, not ``8.0``, ``"8"`` or ``true``; ``1e3`` in a YAML
    file is one: ``magnet.files``)."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"expected a whole number, got {clipped_repr(value)}")
    return bounded_whole(int(value))


#: A pydantic field of a whole number written as one (``true`` is not 1, ``8.0`` not 8).
Whole = Annotated[int, BeforeValidator(whole_number)]


def real_number(value: object) -> float:
    """A number written as one (``1.5`` or ``2``, not ``"1.5"`` or ``true``)."""
    import math
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"expected a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:  # an int beyond float's range
        number = math.inf
    if not math.isfinite(number):
        raise ValueError(f"expected a finite number, got {value!r}")
    return number


#: A pydantic field of a real number written as one (``true`` and ``"1.5"`` are not numbers).
Real = Annotated[float, BeforeValidator(real_number)]


#: Largest seed: numpy's legacy generators and Optuna's samplers take 0 .. 2**32 - 1.
MAX_SEED = 2**32 - 1


def check_seed(value: object) -> int:
    """A seed: a whole number in 0 .. ``MAX_SEED`` (``ValueError`` naming the bound)."""
    number = whole_number(value)
    if not 0 <= number <= MAX_SEED:
        raise ValueError(f"a seed is a whole number in 0..{MAX_SEED} (2**32 - 1), got {number}")
    return number
