"""The arguments of the Python API, checked at the door: ``checked_call``.

Every function of the public API (``magnet/__init__.py``) is wrapped with ``@checked_call``. Before
it runs, each argument is checked against its type hint, and a call it cannot take (an unknown
or a missing argument, a value of another type, ``True`` for a number, NaN or infinity, a
number out of its range, an empty name) raises one ``MagnetError`` naming the function, the
argument and what is allowed, e.g. ``map_layer(): layer: expected a Layer (magnet.parse_layer
makes one from 'K=64,C=64,...'), got str 'K=64,C=64'``, never an ``AttributeError`` or
``TypeError`` from somewhere inside. Values are checked, never converted: the function gets
exactly what it was given.

The hints it reads: classes (``isinstance``; ``int`` and ``float`` refuse ``bool``, ``float``
takes an ``int`` and refuses NaN and infinity), ``None``, unions, ``Literal``, ``Callable``,
``type[X]``, ``list`` / ``tuple`` / ``dict`` / ``Sequence`` / ``Iterable`` / ``Mapping`` (the
items of a list, tuple, set or dict are checked too, but for a ``MutableMapping`` and the
like: a place the function writes in, such as a cache), ``Any``, and ``Annotated[T, ...]`` with
``annotated_types`` bounds (``Ge``, ``Gt``, ``Le``, ``Lt``, ``MinLen``), as pydantic writes them,
and a plain string, which the message then gives as what is allowed: ``Name``, ``Count``,
``Seed`` and ``Seconds`` below.
"""

from __future__ import annotations

import collections.abc as abc
import functools
import inspect
import math
import numbers
import types
import typing
from collections.abc import Callable
from pathlib import PurePath
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt, MinLen

from magnet.errors import MagnetError, clipped_repr

#: A name or a spec written as text: a string with something in it.
Name = Annotated[str, MinLen(1)]
#: A count of things: a whole number >= 1.
Count = Annotated[int, Ge(1)]
#: A random seed: what numpy and Optuna take, 0 to 2**32 - 1.
Seed = Annotated[int, Ge(0), Le(2**32 - 1)]
#: A time in seconds: a finite number > 0.
Seconds = Annotated[float, Gt(0)]

#: How to make an object a function expects, for the classes people most often mistake.
MADE_BY = {
    "Layer": "magnet.parse_layer makes one from 'K=64,C=64,...'",
    "Network": "magnet.load_workload makes one",
    "Arch": "magnet.load_arch or magnet.templates.NAME(...) makes one",
    "Design": "magnet.design(arch, dataflow) makes one",
    "Budget": "magnet.Budget(evaluations=..., seconds=...)",
}

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)


def checked_call(func: F, label: str | None = None) -> F:
    """``func`` with its arguments checked against its type hints before it runs (see the
    module docstring); what it returns and raises is otherwise its own. Messages start with
    ``label`` (default: ``func``'s qualified name and ``()``)."""
    signature = inspect.signature(func)
    label = label or f"{func.__qualname__}()"
    hints: dict[str, Any] = {}  # resolved at the first call: forward references by then exist
    resolved: list[bool] = []

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not resolved:
            hints.update(_parameter_hints(func))
            resolved.append(True)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise MagnetError(f"{exc}; {_arguments(signature)}", source=label) from None
        for name, value in bound.arguments.items():
            kind = signature.parameters[name].kind
            if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                continue  # *args, **options: the function checks them (e.g. a mapper's options)
            require(value, hints.get(name, Any), source=label, field=name)
        return func(*args, **kwargs)

    wrapper.__magnet_checked__ = True  # type: ignore[attr-defined]
    return typing.cast(F, wrapper)


def checked_methods(init: bool = False) -> Callable[[C], C]:
    """A class decorator: every public method the class's body defines (its classmethods and
    staticmethods too; not its properties) made a ``checked_call``, so that a method reached
    from a result of the API (``outcome.mapping.loop_nest``, ``study.pareto_front``) checks
    what it is given as the API's functions do; with ``init``, the constructor of a dataclass a
    user builds too (``Design(...)``: a missing, unknown or wrong field names the class and
    the field)."""

    def decorate(cls: C) -> C:
        for name, attr in list(vars(cls).items()):
            if name.startswith("_") and not (name == "__init__" and init):
                continue
            made = f" ({MADE_BY[cls.__name__]})" if cls.__name__ in MADE_BY else ""
            label = cls.__name__ + made if name == "__init__" else f"{cls.__name__}.{name}()"
            if isinstance(attr, classmethod | staticmethod):
                if not getattr(attr.__func__, "__magnet_checked__", False):
                    setattr(cls, name, type(attr)(checked_call(attr.__func__, label)))
            elif inspect.isfunction(attr) and not getattr(attr, "__magnet_checked__", False):
                setattr(cls, name, checked_call(attr, label))
        return cls

    return decorate


def _parameter_hints(func: Callable[..., Any]) -> dict[str, Any]:
    """``func``'s parameters' type hints, evaluated (its return type is left alone: it may
    name a type imported only for the type checker); a hint that names such a type, which does
    not exist when the program runs, allows anything."""
    annotations = {k: v for k, v in func.__annotations__.items() if k != "return"}
    hints: dict[str, Any] = {}
    for name, annotation in annotations.items():
        holder = types.SimpleNamespace(__annotations__={name: annotation})
        try:
            hints |= typing.get_type_hints(holder, globalns=func.__globals__, include_extras=True)
        except NameError:
            hints[name] = Any
    return hints


def require(value: Any, hint: Any, *, source: str | None = None, field: str) -> None:
    """``MagnetError`` unless ``value`` is one of the values ``hint`` allows: the one check
    behind ``checked_call`` and ``check_fields``, for the few places that check a value alone."""
    if not fits(value, hint):
        raise MagnetError(
            f"expected {describe(hint)}, got {shown(value)}", source=source, field=field
        )


def check_fields(obj: Any) -> None:
    """The fields of a dataclass ``obj`` against their hints, as ``checked_call`` checks a call's
    arguments (call it from ``__post_init__``)."""
    hints = typing.get_type_hints(type(obj), include_extras=True)
    for name in obj.__dataclass_fields__:
        require(getattr(obj, name), hints[name], source=type(obj).__name__, field=name)


def _arguments(signature: inspect.Signature) -> str:
    """The arguments a function takes, for a call that named others or too many."""
    names = [
        name
        for name, p in signature.parameters.items()
        if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        and name not in ("self", "cls")
    ]
    return f"its arguments: {', '.join(names)}" if names else "it takes no arguments"


def fits(value: Any, hint: Any) -> bool:
    """Whether ``value`` is one of the values ``hint`` allows."""
    if hint is Any or hint is object or isinstance(hint, TypeVar):
        return True
    if hint is None or hint is type(None):
        return value is None
    origin, args = get_origin(hint), get_args(hint)
    if origin is Annotated:
        return fits(value, args[0]) and all(_within(value, bound) for bound in args[1:])
    if origin in (typing.Union, types.UnionType):
        return any(fits(value, arg) for arg in args)
    if origin is Literal:
        return any(type(value) is type(a) and value == a for a in args)
    if hint is float:
        return _number(value, numbers.Real) and math.isfinite(value)
    if hint is int:
        return _number(value, numbers.Integral)
    if hint is bool:
        return isinstance(value, bool)
    if origin is type:
        wanted = get_origin(args[0]) or args[0]
        return isinstance(value, type) and (wanted is Any or issubclass(value, wanted))
    if origin is abc.Callable or hint is abc.Callable:
        return callable(value)
    if origin is None:
        return isinstance(value, hint)
    if not isinstance(value, origin):  # a generic: list[X], dict[K, V], Iterable[X], Template[X]
        return False
    return _items_fit(value, origin, args)


def _number(value: Any, kind: type) -> bool:
    return isinstance(value, kind) and not isinstance(value, bool)


#: Containers a function fills (``MutableMapping[K, V]``: a cache): places to write in, not
#: values it reads, so their items are not checked (a search's mapping cache holds 20,000).
_PLACES = (abc.MutableMapping, abc.MutableSequence, abc.MutableSet)


def _items_fit(value: Any, origin: Any, args: tuple[Any, ...]) -> bool:
    """The items of a container ``value`` (a list, tuple, set or dict: never an iterator,
    which checking would consume) against the generic's arguments; not those of a place to
    write (``_PLACES``)."""
    if not args or origin in _PLACES:
        return True
    if isinstance(value, dict) and len(args) == 2:
        return all(fits(k, args[0]) and fits(v, args[1]) for k, v in value.items())
    if not isinstance(value, list | tuple | set | frozenset):
        return True
    if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        return len(value) == len(args) and all(map(fits, value, args))
    return all(fits(item, args[0]) for item in value)


def _within(value: Any, bound: Any) -> bool:
    if isinstance(bound, Ge):
        return bool(value >= bound.ge)
    if isinstance(bound, Gt):
        return bool(value > bound.gt)
    if isinstance(bound, Le):
        return bool(value <= bound.le)
    if isinstance(bound, Lt):
        return bool(value < bound.lt)
    if isinstance(bound, MinLen):
        return len(value) >= bound.min_length
    return True


def describe(hint: Any) -> str:
    """What ``hint`` allows, in words: ``a whole number >= 1``, ``an Arch or a Design``."""
    if hint is Any or hint is object or isinstance(hint, TypeVar):
        return "anything"
    if hint is None or hint is type(None):
        return "None"
    origin, args = get_origin(hint), get_args(hint)
    if origin is Annotated:
        said = [meta for meta in args[1:] if isinstance(meta, str)]
        if said:
            return said[0]
        bounds = " and ".join(filter(None, map(_bound_text, args[1:])))
        return f"{describe(args[0])} {bounds}" if bounds else describe(args[0])
    if origin in (typing.Union, types.UnionType):
        parts = [describe(arg) for arg in args]
        return ", ".join(parts[:-1]) + f" or {parts[-1]}"
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args) if len(args) > 1 else repr(args[0])
    if origin is type:
        return f"a subclass of {_class_name(get_origin(args[0]) or args[0])}"
    if origin is abc.Callable or hint is abc.Callable:
        return "a function"
    words = {int: "a whole number", float: "a finite number", bool: "True or False"}
    if hint in words:
        return words[hint]
    if origin is None:
        return _a(hint)
    return _generic(origin, args)


def _generic(origin: Any, args: tuple[Any, ...]) -> str:
    if origin in (dict, abc.Mapping, abc.MutableMapping):
        if not args or args == (Any, Any):
            return "a dict"
        if args[1] is Any:
            return f"a dict with {_plural(describe(args[0]))} as keys"
        return f"a dict of {_plural(describe(args[1]))}"
    if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        return f"a tuple of {len(args)} ({', '.join(describe(a) for a in args)})"
    if origin in (list, tuple, abc.Sequence, abc.Iterable, set, frozenset):
        return f"a list of {_plural(describe(args[0]))}" if args else "a list"
    return _a(origin)


def _a(cls: type) -> str:
    if issubclass(cls, str):
        return "a string"
    if issubclass(cls, PurePath):
        return "a path"
    name = _class_name(cls)
    article = "an" if name[0].lower() in "aeiou" else "a"
    made_by = MADE_BY.get(name)
    return f"{article} {name}" + (f" ({made_by})" if made_by else "")


def _class_name(cls: Any) -> str:
    return str(getattr(cls, "__name__", cls))


def _plural(text: str) -> str:
    """``a string or a CostModel`` -> ``strings or CostModels`` (for ``a list of ...``)."""
    parts = []
    for part in text.split(" or "):
        part = part.removeprefix("a ").removeprefix("an ")
        head, _, tail = part.partition(" (")
        parts.append(head + "s" + (f" ({tail}" if tail else ""))
    return " or ".join(parts)


def _bound_text(bound: Any) -> str | None:
    if isinstance(bound, Ge):
        return f">= {bound.ge:,}"
    if isinstance(bound, Gt):
        return f"> {bound.gt:,}"
    if isinstance(bound, Le):
        return f"<= {bound.le:,}"
    if isinstance(bound, Lt):
        return f"< {bound.lt:,}"
    if isinstance(bound, MinLen):
        return "that is not empty" if bound.min_length == 1 else f"of length >= {bound.min_length}"
    return None


def shown(value: Any, limit: int = 60) -> str:
    """A value as a message shows it: ``None``, ``-1``, ``str 'K=64'``, ``a Design``."""
    if value is None or isinstance(value, bool | int | float):
        return clipped_repr(value)  # an int of thousands of digits too
    if isinstance(value, str | list | tuple | dict | set):
        text = repr(value)
        text = text if len(text) <= limit else text[:limit] + "..."
        return f"{type(value).__name__} {text}"
    if isinstance(value, type):
        return f"class {value.__name__}"
    return _a(type(value)).partition(" (")[0]
