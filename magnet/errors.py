"""The one error type magnet raises for bad input.

Every message names where the problem is (file and field) and what is allowed, so that the
CLI can print it as is and exit non-zero, and Python callers can catch a ``ValueError``.
"""

from __future__ import annotations

import decimal
import re
from typing import Any, get_args

from pydantic import BaseModel

#: A number longer than a message shows whole (``clip_digits``).
_LONG_NUMBER = re.compile(r"[0-9]{41,}")
#: A run of characters longer than any file name, between spaces, quotes and separators.
_LONG_WORD = re.compile(r"""[^\s'";,]{257,}""")


def clip_digits(text: str) -> str:
    """``text`` with every number of more than 40 digits cut to its ends and its length
    (``9999999999...9999 (5000 digits)``): a message is one line a person reads, whatever
    was typed."""
    return _LONG_NUMBER.sub(lambda m: f"{m[0][:10]}...{m[0][-4:]} ({len(m[0])} digits)", text)


def clip_words(text: str) -> str:
    """``text`` with every run of more than 256 characters without a space cut to its ends
    and its length (``aaaa...aaaa (5000 characters)``): no file name is that long, and a
    message stays one line a person reads."""
    return _LONG_WORD.sub(lambda m: f"{m[0][:60]}...{m[0][-20:]} ({len(m[0])} characters)", text)


def clipped_repr(value: Any) -> str:
    """``repr(value)`` for a message, long numbers clipped (``clip_digits``); an int of any
    size (``repr`` of one of more than 4300 digits raises ``ValueError``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return clip_digits(str(decimal.Decimal(value)))
    return clip_digits(repr(value))


class MagnetError(ValueError):
    """Bad input: a file, a field, a value, and what would have been accepted. Numbers of
    more than 40 digits and words of more than 256 characters in any of them are shown
    clipped (``clip_digits``, ``clip_words``)."""

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None):
        message = clip_words(clip_digits(message))
        source, field = (None if t is None else clip_words(clip_digits(t)) for t in (source, field))
        self.message = message  # without the "source: field: " that str(error) starts with
        self.source = source
        self.field = field
        where = ": ".join(part for part in (source, field) if part)
        super().__init__(f"{where}: {message}" if where else message)


class MagnetNote(UserWarning):
    """Something a user should know that is neither an error nor a result (a journal that
    ends with a line that is not a record, which a reader skips): a warning from Python, one
    ``note:`` line on the command line."""


class InvalidMappingError(MagnetError):
    """A mapping that cannot run on the architecture (overflow, bad fan-out, bad factors)."""


class DesignInfeasible(MagnetError):
    """A well-formed design that cannot run what was asked of it (a dataflow that needs a
    collector the design does not have). A design search records it as an infeasible design;
    a single evaluation reports it like bad input."""


class PluginError(RuntimeError):
    """An exception raised inside user code (a cost model, mapper or template plug-in).

    Not bad input and not an infeasible design: a bug to fix in the plug-in. ``str(error)``
    is one line naming the plug-in and what it was asked; ``traceback`` is the plug-in's own
    traceback as text (it travels with the error to another process). A design search fails
    the trial and shows the traceback; the command line exits 1.
    """

    def __init__(self, message: str, traceback: str = ""):
        super().__init__(message, traceback)
        self.message = message
        self.traceback = traceback

    def __str__(self) -> str:
        return self.message


class SearchFailed(RuntimeError):
    """A search stopped for a reason that is not bad input: its evaluations kept failing (the
    trials keep the reasons), or the workers it needs could not start (a local Ray cluster
    that does not come up). The command line prints it on one line and exits 1."""


class PluginExit(Exception):
    """A ``BaseException`` that is not an ``Exception`` (``sys.exit``, a ``KeyboardInterrupt``
    or ``GeneratorExit``) raised by a plug-in's own code, not by a Ctrl-C: caught where it
    leaves the plug-in (``magnet.registry.plugin_code``) and carried as an ``Exception``, so
    that it is reported like the plug-in's other bugs (a ``PluginError``), never as the
    user's interrupt nor as a silent exit. ``original`` is the exception it raised."""

    def __init__(self, original: BaseException):
        super().__init__(str(original))
        self.original = original


def what_raised(exc: BaseException) -> str:
    """What a plug-in did, for a message: ``raised KeyError: 'x'``, ``raised SystemExit: it
    called sys.exit(3)``, ``raised KeyboardInterrupt itself (no Ctrl-C came)``."""
    original = exc.original if isinstance(exc, PluginExit) else exc
    name = type(original).__name__
    if isinstance(original, SystemExit):
        code = "" if original.code is None else repr(original.code)
        return f"raised {name}: it called sys.exit({code})"
    if isinstance(original, KeyboardInterrupt):
        return f"raised {name} itself (no Ctrl-C came)"
    text = str(original)
    return f"raised {name}: {text}" if text else f"raised {name}"


def user_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` as text, the frames inside magnet left out (what a plug-in's
    author needs to see); of the exception a ``PluginExit`` carries, for one."""
    import os
    import traceback

    if isinstance(exc, PluginExit):
        exc = exc.original
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frames = [
        f
        for f in traceback.extract_tb(exc.__traceback__)
        if not os.path.abspath(f.filename).startswith(package)
    ]
    lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines)


#: Most problems of one input a message lists (a file of 200,000 bad rows is one line).
MAX_PROBLEMS = 10


def validation_message(exc: Any, root: type[BaseModel]) -> str:
    """One part per pydantic error: ``location: problem (allowed fields / got value)``, the
    first ``MAX_PROBLEMS`` of them and how many more.

    For an unknown field, the allowed fields are those of the model at that location (found
    by walking ``root``'s field annotations along the error's location).
    """
    errors = exc.errors()
    parts = []
    for err in errors[:MAX_PROBLEMS]:
        loc = [str(x) for x in err["loc"]]
        where = ".".join(loc) or "(top)"
        if err["type"] == "extra_forbidden":
            model = _model_at(root, loc[:-1])
            allowed = ", ".join(model.model_fields) if model else "?"
            parts.append(f"{where}: unknown field; allowed: {allowed}")
            continue
        msg = err["msg"].removeprefix("Value error, ")
        value = err.get("input")
        quiet = isinstance(value, dict | list | tuple) or "got " in msg
        shown = "" if quiet else f" (got {clipped_repr(value)})"
        parts.append(f"{where}: {msg}{shown}" if loc else f"{msg}{shown}")  # (top): the model's
    if len(errors) > MAX_PROBLEMS:
        parts.append(f"and {len(errors) - MAX_PROBLEMS:,} more problems like these")
    return "; ".join(parts)


def _model_at(model: type[BaseModel] | None, loc: list[str]) -> type[BaseModel] | None:
    for key in loc:
        if model is None:
            return None
        if key.isdigit():
            continue
        field = model.model_fields.get(key)
        model = _inner_model(field.annotation) if field else None
    return model


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None
