"""Finding cost models by name: built-ins, registered classes, entry points and plug-in files.

A cost-model *spec* is one string, the same on the command line, in Python and in a worker
process (send the spec, not the model, to workers: every process loads it again):

``NAME``
    a registered name (``horowitz45``, ``eyeriss-normalized``, ... see
    ``available_cost_models()``) or the name of an entry point in the group
    ``magnet.cost_models`` of an installed distribution.
``NAME:ARGUMENT``
    a registered model that takes one argument, e.g. ``table:path/to/datasheet.yaml``.
``path/to/file.py:ClassName``
    a class in a Python file, imported by path (no package, no ``sys.path`` change). The
    class must subclass ``magnet.cost.contract.CostModel`` and implement its abstract methods.
``path/to/file.py``
    the same, when the file defines exactly one concrete ``CostModel`` subclass.

A chain is several specs, first first, as a list or one comma-separated string
(``"cost_models/sram_compiler.py:SramCompiler,eyeriss-normalized"``); the built-in table
of the architecture's node always comes last (see ``magnet.cost.price_arch``).

Constructors: a model is built with no arguments, except that ``NAME:ARGUMENT`` passes the
argument positionally, and a constructor with a ``technology_nm`` parameter receives the
node given to ``load_cost_model`` (the CLI passes the architecture's ``technology_nm``).

Every model ``load_cost_model`` returns is wrapped in ``_Guarded``: it keeps the model's
``name``, hands the model a copy of each component, and turns an exception raised inside the
model (or a ``sys.exit``, ...: ``magnet.registry.plugin_errors``), or a number it returns
that is not a cost (``magnet.cost.contract.cost_problem``), into one ``PluginError`` line naming
the model, the component and the action; a ``MagnetError`` it raises is its refusal of the
design (``DesignInfeasible``).
"""

from __future__ import annotations

import copy
import hashlib
import importlib.metadata
import importlib.util
import inspect
import os
import pickle
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any, TypedDict

import numpy as np

from magnet.arch.spec import Arch
from magnet.arguments import checked_call
from magnet.cost.contract import Component, CostModel, cost_problem
from magnet.errors import DesignInfeasible, MagnetError, PluginError
from magnet.files import path_kind
from magnet.registry import (
    BUILT_IN,
    REGISTERED,
    Plugin,
    Registry,
    digest,
    identity_of,
    is_builtin,
    plugin_errors,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "available_cost_models",
    "costs_table",
    "describe_costs",
    "load_chain",
    "load_cost_model",
    "register_cost_model",
    "unregister_cost_model",
]

#: Entry-point group that installed distributions use to offer cost models by name:
#: ``[project.entry-points."magnet.cost_models"] my-sram = "my_pkg.costs:MySram"``.
ENTRY_POINT_GROUP = "magnet.cost_models"

_ABSTRACT_ORDER = ("energy_pj", "leakage_mw", "area_um2")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


# ---- the registry ------------------------------------------------------------------------
def _adopt(name: str, cls: Any, origin: str) -> str:
    """A built-in model (``magnet.registry.Adopt``), checked as a registered one is."""
    _register(name, cls, None, origin=origin)
    return name


#: Cost models by name (``magnet.registry``): built-ins (``magnet.cost.models.BUILTIN``) and
#: names registered from Python; entry points are read lazily by ``load_cost_model``.
COST_MODELS = Registry("cost-model", "magnet.cost.models", _adopt)
_ENTRY_POINTS: dict[str, list[importlib.metadata.EntryPoint]] | None = None


def _first_line(text: str | None) -> str:
    return (text or "").strip().split("\n", 1)[0].strip()


def _check_class(cls: Any, where: str) -> type[CostModel]:
    """``cls`` is a concrete CostModel subclass, else one clear MagnetError."""
    if not inspect.isclass(cls):
        raise MagnetError(
            f"{where} is a {type(cls).__name__}, not a class; give a subclass of "
            "magnet.cost.contract.CostModel"
        )
    label = where if cls.__name__ in where else f"{where} ({cls.__name__})"
    if not issubclass(cls, CostModel):
        raise MagnetError(
            f"{label} is not a CostModel subclass; write "
            f"'class {cls.__name__}(magnet.cost.contract.CostModel)' and implement "
            f"{', '.join(_ABSTRACT_ORDER)}"
        )
    if hasattr(cls, "leakage_pj_per_cycle"):
        raise MagnetError(
            f"{label} implements leakage_pj_per_cycle, which cost contract v2 replaced by "
            "leakage_mw(component): the leakage power of one instance in milliwatts (a value "
            "per cycle at 1 GHz is the same number); rename the method"
        )
    missing = sorted(
        getattr(cls, "__abstractmethods__", ()),
        key=lambda m: (_ABSTRACT_ORDER.index(m) if m in _ABSTRACT_ORDER else 99, m),
    )
    if missing:
        raise MagnetError(f"{label} does not implement {', '.join(missing)}")
    return cls


@checked_call
def register_cost_model(name: str, cls: type[CostModel], *, description: str | None = None) -> None:
    """Make ``cls`` loadable as ``name`` (``--cost-model NAME``).

    ``cls`` must be a concrete ``CostModel`` subclass; it is built with no arguments (or
    with ``technology_nm=`` if its constructor takes it, or with the argument of
    ``NAME:ARGUMENT`` specs). Registering a name again (a notebook cell run again) replaces
    the earlier class; built-in names cannot be taken. A design search sends the class to
    its worker processes with each job.
    """
    _register(name, cls, description, origin=REGISTERED)


def _register(name: str, cls: type[CostModel], description: str | None, *, origin: str) -> None:
    if not isinstance(name, str) or not _NAME_RE.match(name) or name.endswith(".py"):
        raise MagnetError(
            f"cost-model name {name!r} is not allowed; use letters, digits and . _ + - "
            "(no ':' or ',', which separate specs, and no '.py' ending)"
        )
    _check_class(cls, f"cost model {name!r}")
    COST_MODELS.add(name, cls, origin=origin, description=description or _first_line(cls.__doc__))


def unregister_cost_model(name: str) -> None:
    """Remove a name added with ``register_cost_model`` (built-ins cannot be removed)."""
    COST_MODELS.remove(name)


def _entry_points(refresh: bool = False) -> dict[str, list[importlib.metadata.EntryPoint]]:
    """Entry points of the group ``magnet.cost_models``, read once (lazily) per process."""
    global _ENTRY_POINTS
    if _ENTRY_POINTS is None or refresh:
        found: dict[str, list[importlib.metadata.EntryPoint]] = {}
        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            found.setdefault(ep.name, [])
            if all(ep.value != other.value for other in found[ep.name]):
                found[ep.name].append(ep)
        _ENTRY_POINTS = found
    return _ENTRY_POINTS


def available_cost_models(refresh: bool = False) -> dict[str, str]:
    """Every name ``load_cost_model`` accepts, with a one-line description.

    ``refresh=True`` reads the installed entry points again (after a ``pip install``).
    """
    out = {name: entry.description for name, entry in COST_MODELS.entries().items()}
    for name, eps in _entry_points(refresh).items():
        if name not in out:
            dist = eps[0].dist
            out[name] = f"entry point {eps[0].value}" + (
                f" (distribution {dist.name})" if dist is not None else ""
            )
    return out


def _allowed() -> str:
    names = ", ".join(available_cost_models())
    return f"allowed: {names}; or FILE.py:CLASS, or table:FILE.yaml"


# ---- plug-in files -----------------------------------------------------------------------
def _module_name(path: Path) -> str:
    """A module name unique to the file's path, the same in every process."""
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:12]
    stem = re.sub(r"\W", "_", path.stem)
    return f"magnet_cost_plugin_{digest}_{stem}"


def _import_file(path: Path, spec: str) -> ModuleType:
    """Import ``path`` as a module (cached per path while the file is unchanged). A file
    that is not Python is bad input; an exception its code raises is the plug-in's bug."""
    stat = path.stat()
    stamp = (stat.st_mtime_ns, stat.st_size)
    name = _module_name(path)
    module = sys.modules.get(name)
    if module is not None and getattr(module, "__magnet_plugin_stamp__", None) == stamp:
        return module
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None:
        raise MagnetError(f"cannot import {path} as Python (spec {spec!r})")
    try:
        code = compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:  # ValueError: a null byte
        where = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
        raise MagnetError(
            f"importing the plug-in file failed{where}: {type(exc).__name__}: {exc}",
            source=str(path),
        ) from None
    module = importlib.util.module_from_spec(module_spec)
    module.__magnet_plugin_stamp__ = stamp  # type: ignore[attr-defined]
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        with plugin_errors("cost model", module, "being imported", label=f"plug-in file {path}"):
            exec(code, module.__dict__)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _classes_in(module: ModuleType) -> list[str]:
    """Public concrete CostModel subclasses defined in ``module`` itself."""
    return [
        name
        for name, obj in vars(module).items()
        if inspect.isclass(obj)
        and not name.startswith("_")
        and issubclass(obj, CostModel)
        and obj.__module__ == module.__name__
        and not inspect.isabstract(obj)
    ]


def _split_file_spec(spec: str) -> tuple[str, str | None] | None:
    """``file.py:Class`` -> (file, Class); ``file.py`` -> (file, None); else None."""
    if spec.endswith(".py"):
        return spec, None
    head, sep, tail = spec.rpartition(":")
    if sep and head.endswith(".py") and tail:
        return head, tail
    return None


def _file_class(file_text: str, class_name: str | None, spec: str) -> tuple[type, str]:
    path = Path(file_text).expanduser()
    kind = path_kind(path)
    if kind != "file":
        what = {None: "not found", "directory": "is a folder"}.get(kind, f"is a {kind}, not a file")
        raise MagnetError(
            f"plug-in file {what} (cost-model spec {spec!r}, resolved to "
            f"{os.path.realpath(path)}); give FILE.py:CLASS with an existing file, or a name: "
            + ", ".join(available_cost_models()),
            source=file_text,
        )
    path = path.resolve()
    module = _import_file(path, spec)
    candidates = _classes_in(module)
    if class_name is None:
        if len(candidates) != 1:
            found = ", ".join(candidates) or "none"
            raise MagnetError(
                f"give the class as {file_text}:CLASS; CostModel subclasses in the file: {found}",
                source=str(path),
            )
        class_name = candidates[0]
    if not hasattr(module, class_name):
        found = ", ".join(candidates) or "none"
        raise MagnetError(
            f"has no class {class_name!r}; CostModel subclasses in the file: {found}",
            source=str(path),
        )
    cls = getattr(module, class_name)
    _check_class(cls, f"class {class_name} in {path}")
    return cls, f"{path}:{class_name}"


# ---- loading -----------------------------------------------------------------------------
def _construct(
    cls: type[CostModel], argument: str | None, technology_nm: float | None, what: str
) -> CostModel:
    """``cls`` built as magnet builds a cost model (see the module docstring): a
    constructor that does not take those arguments is bad input, one that raises is the
    plug-in's bug (``PluginError``)."""
    kwargs: dict[str, Any] = {}
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        signature = None
    if technology_nm is not None and "technology_nm" in getattr(signature, "parameters", {}):
        kwargs["technology_nm"] = technology_nm
    args = () if argument is None else (argument,)
    if signature is not None:
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:
            given = ", ".join([*map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
            raise MagnetError(
                f"its constructor {cls.__name__}({', '.join(signature.parameters)}) cannot be "
                f"called as magnet builds the model, {cls.__name__}({given}): {exc}; take no "
                "argument (or technology_nm, or the argument of NAME:ARGUMENT specs)",
                source=what,
            ) from None
    with plugin_errors("cost model", cls, "being built", label=what):
        model = cls(*args, **kwargs)
    _check_name(model, what, user_named=not is_builtin(cls) or argument is not None)
    return model


def _check_name(model: CostModel, what: str, *, user_named: bool) -> None:
    """A model's ``name`` is one line of text, and (when a user chose it) not the name of a
    built-in model: reports tell components' models apart by name."""
    with plugin_errors("cost model", model, "reading its name", label=what):
        name = getattr(model, "name", None)
    if not isinstance(name, str) or not name.strip() or not name.isprintable():
        raise MagnetError(
            f"its 'name' must be a non-empty string of printable characters, got {name!r}",
            source=what,
        )
    builtin = _builtin_named(name) if user_named else None
    if builtin is not None:
        raise MagnetError(
            f"its name {name!r} is the name of the built-in cost model {builtin.name!r} "
            f"({builtin.identity.split('@')[0]}); choose another name",
            source=what,
        )


def _builtin_named(name: str) -> Plugin | None:
    """The built-in cost model whose name ``name`` is: a registered built-in, or the built-in
    table at a node (``horowitz45-scaled-16nm``); None: no built-in's."""
    for key, entry in COST_MODELS.entries().items():
        if entry.origin == BUILT_IN and (name == key or name.startswith(f"{key}-scaled-")):
            return entry
    return None


@checked_call
def load_cost_model(spec: str | CostModel, technology_nm: float | None = None) -> CostModel:
    """The cost model ``spec`` names (see the module docstring), wrapped in ``_Guarded``.

    ``technology_nm`` goes to constructors that take it (``horowitz45`` then prices that
    node). The returned model's ``spec`` attribute is the spec with the file path made
    absolute: send it to worker processes, which call ``load_cost_model`` on it again
    (pickling the returned model does exactly that). A ``CostModel`` instance is accepted
    too and wrapped as it is (it then pickles as an object, not as a spec).
    """
    if isinstance(spec, CostModel):
        if isinstance(spec, _Guarded):
            return spec
        what = f"cost model {type(spec).__name__}"
        _check_name(spec, what, user_named=not is_builtin(spec))
        return _Guarded(spec, type(spec).__name__, identity=_instance_identity(spec))
    if not isinstance(spec, str) or not spec.strip():
        raise MagnetError(f"empty cost-model spec {spec!r}; {_allowed()}", field="--cost-model")
    spec = spec.strip()
    file_spec = _split_file_spec(spec)
    if file_spec is not None:
        return _load_file_model(*file_spec, spec, technology_nm)
    return _load_named_model(spec, technology_nm)


def _load_file_model(
    file_text: str, class_name: str | None, spec: str, technology_nm: float | None
) -> _Guarded:
    """``FILE.py[:CLASS]``: the class imported from the file, identified by the file's
    path, class and a hash of the file."""
    cls, canonical = _file_class(file_text, class_name, spec)
    model = _construct(cls, None, technology_nm, f"cost model {canonical}")
    source = Path(canonical.rpartition(":")[0]).read_bytes()
    identity = f"{canonical}@{digest(source)}"
    return _Guarded(model, canonical, technology_nm, reloadable=True, identity=identity)


def _load_named_model(spec: str, technology_nm: float | None) -> _Guarded:
    """``NAME[:ARGUMENT]``: a registered model or an entry point, identified by its spec,
    its class and (for a file argument such as a datasheet) a hash of the file."""
    name, sep, argument = spec.partition(":")
    entry, cls, what = _named_class(name, spec)
    wants = getattr(cls, "spec_argument", None)  # e.g. "FILE.yaml" for table:FILE.yaml
    if sep and not wants:
        raise MagnetError(
            f"cost model {name!r} takes no argument (got {argument!r} after ':')",
            field="--cost-model",
        )
    if wants and not (sep and argument):
        raise MagnetError(
            f"cost model {name!r} needs an argument: write {name}:{wants}",
            field="--cost-model",
        )
    model = _construct(cls, argument if sep else None, technology_nm, what)
    identity = entry.identity if entry is not None else identity_of(cls)
    if sep and getattr(cls, "spec_argument_is_path", False):
        argument = str(Path(argument).expanduser().resolve())  # the same file in any worker
        identity += f"+{digest(Path(argument).read_bytes())}"  # and the file's content
    canonical = f"{name}:{argument}" if sep else name
    return _Guarded(
        model, canonical, technology_nm, reloadable=True, identity=f"{canonical}={identity}"
    )


def _named_class(name: str, spec: str) -> tuple[Plugin | None, type[CostModel], str]:
    """The registry entry (None for an entry point), the class and how errors name it, of
    the cost model called ``name``; a name offered twice, or by nothing, is refused."""
    entry = COST_MODELS.get(name)
    eps = _entry_points().get(name, [])
    if entry is not None and eps:
        raise MagnetError(
            f"cost-model name {name!r} is both {entry.origin} ({entry.identity.split('@')[0]}) "
            f"and an entry point ({eps[0].value}); names must be "
            "unique: rename the entry point"
        )
    if len(eps) > 1:
        raise MagnetError(
            f"cost-model name {name!r} is offered by several entry points "
            f"({', '.join(ep.value for ep in eps)}); names must be unique"
        )
    if entry is not None:
        return entry, entry.obj, f"cost model {name!r}"
    if eps:
        ep = eps[0]
        what = f"entry point {name!r} ({ep.value})"
        with plugin_errors("cost model", ep, "being imported", label=what):
            loaded = ep.load()
        return None, _check_class(loaded, what), what
    if re.search(r"[/\\]|\.\w+$", name):
        raise MagnetError(
            f"unknown cost model {spec!r}: it looks like a file, but a plug-in must be "
            f"given as FILE.py:CLASS and a datasheet as table:FILE.yaml; {_allowed()}",
            field="--cost-model",
        )
    raise MagnetError(f"unknown cost model {name!r}; {_allowed()}", field="--cost-model")


def _instance_identity(model: CostModel) -> str:
    """A model object's identity: its class's, and its state when that pickles."""
    try:
        state = digest(pickle.dumps(model))
    except Exception:  # an unpicklable model: this object only
        state = f"object {id(model):x}"
    return f"{identity_of(model)}#{state}"


@checked_call
def load_chain(
    specs: str | CostModel | Iterable[str | CostModel] | None, technology_nm: float | None = None
) -> list[CostModel]:
    """Load every spec (a list, one comma-separated string, or a model), first model first.

    ``None`` or ``""`` gives ``[]`` (the built-in table alone). Two models of the same name
    in one chain are refused: reports tell components' models apart by name.
    """
    if specs is None:
        return []
    items = [specs] if isinstance(specs, str | CostModel) else list(specs)
    parts: list[str] = []
    for item in items:
        if isinstance(item, CostModel):
            parts.append(item)  # type: ignore[arg-type]
            continue
        pieces = [piece.strip() for piece in str(item).split(",")]
        if len(pieces) > 1 and not all(pieces):
            raise MagnetError(
                f"empty entry in the cost-model list {item!r}; separate specs with single commas",
                field="--cost-model",
            )
        parts.extend(piece for piece in pieces if piece)
    chain = [load_cost_model(part, technology_nm) for part in parts]
    names = [model.name for model in chain]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise MagnetError(
            f"the chain has two cost models named {', '.join(map(repr, twice))}; "
            "each model may appear once",
            field="--cost-model",
        )
    return chain


# ---- the guard ---------------------------------------------------------------------------
class _Guarded(CostModel):
    """A loaded model: same ``name`` and answers, but clear errors and checked numbers."""

    def __init__(
        self,
        inner: CostModel,
        spec: str,
        technology_nm: float | None = None,
        *,
        reloadable: bool = False,
        identity: str | None = None,
    ) -> None:
        self.inner = inner
        self.spec = spec
        #: What the model is, for caches: its spec, class and a hash of its source (see
        #: ``magnet.registry``); two models of one ``name`` never share it.
        self.identity = identity or _instance_identity(inner)
        self.technology_nm_given = technology_nm
        self.reloadable = reloadable
        self.name = inner.name

    def __repr__(self) -> str:
        return f"<cost model {self.name!r} from {self.spec!r}>"

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (e.g. sent to a worker process) as its spec: the worker loads it again,
        # so plug-in classes from files need not be importable there.
        if self.reloadable:
            return load_cost_model, (self.spec, self.technology_nm_given)
        return _Guarded, (self.inner, self.spec, self.technology_nm_given)

    def __getattr__(self, attr: str) -> Any:
        # Called only for attributes the guard lacks: the inner model's extras (tables...).
        if attr == "inner":
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    @property
    def _label(self) -> str:
        return f"cost model {self.name!r} ({self.spec})"

    def _call(self, method: str, component: Component, *args: Any, what: str) -> Any:
        """Ask the model, with a copy of ``component`` (a model that changes it changes
        nothing of magnet's); a ``MagnetError`` it raises is its refusal of this design (an
        infeasible design, named), any other exception (or ``sys.exit``...) a bug in it
        (``PluginError``)."""
        doing = f"pricing the {what} of component {component.name!r} ({component.cls})"
        try:
            with plugin_errors("cost model", self.inner, doing, label=self._label, hint=_HINT):
                return getattr(self.inner, method)(copy.deepcopy(component), *args)
        except MagnetError as exc:
            if isinstance(exc, DesignInfeasible) and component.name in str(exc):
                raise
            context = "" if component.name in str(exc) else f" (while {doing})"
            raise DesignInfeasible(
                f"{exc}{context}", source=f"cost model {self.name!r} ({self.spec})"
            ) from exc

    def _wrong(
        self, method: str, value: Any, component: Component, what: str, why: str
    ) -> PluginError:
        """A value the model returned that is not what magnet asked: the plug-in's bug,
        named with where its method is (the traceback it does not have)."""
        shown = repr(value) if len(repr(value)) <= 80 else f"{repr(value)[:77]}..."
        return PluginError(
            f"{self._label} returned {shown} for the {what} of component {component.name!r} "
            f"({component.cls}): {why}{_HINT}",
            f"{method} returned {shown}:\n{_where(getattr(type(self.inner), method, None))}",
        )

    def _number(self, method: str, component: Component, *args: Any, what: str) -> float:
        """The model's answer, checked (``cost_problem``)."""
        value = self._call(method, component, *args, what=what)
        why = cost_problem(value)
        if why is not None:
            raise self._wrong(method, value, component, what, why)
        return float(value)

    def supports(self, component: Component) -> bool:
        """The model's answer, True or False."""
        answer = self._call("supports", component, what="supports() answer")
        if not isinstance(answer, bool | np.bool_):
            why = "supports() answers True or False"
            raise self._wrong("supports", answer, component, "supports() answer", why)
        return bool(answer)

    def energy_pj(self, component: Component, action: str) -> float:
        """The model's energy, checked."""
        return self._number("energy_pj", component, action, what=f"{action!r} energy")

    def leakage_mw(self, component: Component) -> float:
        """The model's leakage, checked."""
        return self._number("leakage_mw", component, what="leakage")

    def area_um2(self, component: Component) -> float | None:
        """The model's area (None: it has none), checked."""
        value = self._call("area_um2", component, what="area")
        why = None if value is None else cost_problem(value)
        if why is not None:
            raise self._wrong("area_um2", value, component, "area", f"{why} (or None: no area)")
        return None if value is None else float(value)

    def clock_pj_per_cycle(self, component: Component) -> float:
        """The model's clock energy, checked."""
        return self._number("clock_pj_per_cycle", component, what="clock energy")

    def describe(self, component: Component) -> str | None:
        """The model's note on the component, None when it has no ``describe``."""
        if getattr(self.inner, "describe", None) is None:
            return None
        note = self._call("describe", component, what="description")
        if note is not None and not isinstance(note, str):
            why = "describe() returns a string or None"
            raise self._wrong("describe", note, component, "description", why)
        return note


_HINT = "; fix the model or decline the component in supports()"


def _where(func: Any) -> str:
    """Where ``func`` is defined, as a traceback line ("" when Python cannot tell)."""
    try:
        line = inspect.getsourcelines(func)[1]
        return f'  File "{inspect.getsourcefile(func)}", line {line}, in {func.__qualname__}\n'
    except (OSError, TypeError):
        return ""


# ---- describing an architecture's costs --------------------------------------------------
#: What ``describe_costs`` says of one component (see there). ``class`` is a Python keyword,
#: hence the functional form.
CostRow = TypedDict(
    "CostRow",
    {
        "component": str,
        "class": str,  # the component class (``Component.cls``)
        "role": str,  # storage, compute, interconnect or postprocess
        "instances": int | None,  # None for an interconnect (priced per word and hop)
        "model": str,
        "energy_pj": dict[str, float],  # action -> pJ
        "leakage_mw": float,
        "area_um2": float | None,
        "attributes": dict[str, Any],
        "note": str | None,
    },
)


def describe_costs(arch: Arch, models: CostModel | list[CostModel] | None = None) -> list[CostRow]:
    """For every priced component of ``arch``: the model that priced it and its numbers.

    Same chain as ``price_arch`` (first model whose ``supports`` is True, the built-in table of
    ``arch.technology_nm`` last). One dict per component, storage innermost first, then the MAC,
    then the interconnects (NoC and NoP links), then the parts of the post-processing unit (its
    lanes' multiply-add units and adders, a comparator priced as one more adder, its table and its
    buffer): ``component``, ``class``, ``role`` (storage / compute / interconnect / postprocess),
    ``instances``, ``model``, ``energy_pj`` (action -> pJ), ``leakage_mw``,
    ``area_um2`` (None if the model has no area), ``attributes`` and ``note`` (the model's
    ``describe(component)`` if it has one, e.g. "interpolated" / "extrapolated").
    Energies and leakage are at the node's nominal supply (``price_arch`` scales them to
    the architecture's).
    """
    from magnet.cost.pricing import CostChain, arch_components, postprocess_parts

    chain = CostChain(arch, models)
    parts = arch_components(arch)
    rows: list[tuple[Component, str, int | None]] = [
        (comp, "storage", lvl.instances)
        for comp, lvl in zip(parts.storage, arch.inner_first, strict=True)
    ]
    rows.append((parts.mac, "compute", arch.compute.instances))
    rows.extend((link, "interconnect", None) for link in parts.interconnects if link is not None)
    if arch.postprocess is not None:
        units, lanes = arch.postprocess_instances, arch.postprocess.lanes
        mac, adder, table, buffer = postprocess_parts(arch)
        rows += [(mac, "postprocess", units * lanes), (adder, "postprocess", 2 * units * lanes)]
        rows += [(comp, "postprocess", units) for comp in (table, buffer) if comp is not None]

    out: list[CostRow] = []
    for comp, role, instances in rows:
        model = chain.pick(comp)
        energies = {action: chain.energy(comp, action) for action in comp.actions}
        leakage = chain.leak(comp)
        area = chain.area(comp)
        note = getattr(model, "describe", None)
        out.append(
            {
                "component": comp.name,
                "class": comp.cls,
                "role": role,
                "instances": instances,
                "model": model.name,
                "energy_pj": energies,
                "leakage_mw": leakage,
                "area_um2": area,
                "attributes": dict(comp.attributes),
                "note": None if note is None else note(comp),
            }
        )
    return out


def costs_table(rows: list[CostRow]) -> str:
    """``describe_costs`` rows as a plain-text table (for a ``magnet costs`` command)."""

    def num(value: float | None) -> str:
        if value is None:
            return "-"
        return "0" if value == 0 else f"{value:.4g}"

    header = ("component", "class", "model", "energy pJ per action", "leak mW", "area um2")
    lines = [header]
    for row in rows:
        energy = ", ".join(f"{a} {num(v)}" for a, v in row["energy_pj"].items())
        if len(set(row["energy_pj"].values())) == 1 and len(row["energy_pj"]) > 1:
            energy = f"{'/'.join(row['energy_pj'])} {num(next(iter(row['energy_pj'].values())))}"
        model = row["model"] + (f" ({row['note']})" if row.get("note") else "")
        lines.append(
            (
                row["component"],
                row["class"],
                model,
                energy,
                num(row["leakage_mw"]),
                num(row["area_um2"]),
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)) for line in lines
    ]
    text.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(t.rstrip() for t in text)
