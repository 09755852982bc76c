"""Search spaces: what a design search varies, what it optimises and what it must respect.

A space is a YAML file (the built-in ones, in ``search_spaces/``, are also known by name:
``magnet spaces``)::

    name: quickstart
    template: simba
    params:                                  # a template parameter: a value, or a range
      vector_width: {choices: [8, 16]}
      vector_units: {pow2: [4, 32]}          # 4, 8, 16, 32
      accum_collector: {int: [0, 16], step: 4}
      weight_buffer: {pow2: [8KiB, 128KiB]}  # sizes in bytes or with units
      clock_ghz: {float: [0.5, 2.0], log: true}
      pe_rows: 4                             # fixed
      shape:                                 # a name of its own: one of named groups of
        groups:                              # template parameters, set together
          wide: {pe_cols: 8, global_buffer: 128KiB}
          narrow: {pe_cols: 2, global_buffer: 32KiB}
    dataflow: {choices: [os-local-ws, ws-local-os]}
    constraints:                             # between parameters, checked before evaluating
      - weight_buffer >= weight_collector * vector_width * vector_units
    objectives: [energy_pj, latency_cycles, {metric: tops_per_mm2, goal: max}]
    limits:                                  # on results: a design outside them is infeasible
      - {metric: area_mm2, max: 5.0}
    workloads:
      - resnet50                             # or {workload: bert-base, batch: 1, weight: 0.5,
                                             #     pipeline: true} (across a package's chiplets)
    mapper: {name: fast, objective: edp, budget: {evaluations: 3000}, options: {samples: 1000}}
    cost_model: null                         # a cost-model spec, as --cost-model
    noc: wires                               # the on-chip network: wires, or none

Every field is checked against the template (parameter names, dataflows), the metrics of a
result and the workloads; an error names the file, the field and what is allowed.
"""

from __future__ import annotations

import ast
import builtins
import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import (
    AfterValidator,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from magnet.cost import NocModel
from magnet.errors import MagnetError, validation_message
from magnet.files import no_such_name, path_kind, read_yaml, shipped
from magnet.mapper import Budget
from magnet.strict import Strict
from magnet.units import Real, Whole, parse_bytes, real_number
from magnet.workload.dims import MAX_EXTENT
from magnet.workload.sparsity import DensityTable

if TYPE_CHECKING:
    from magnet.templates.template import Template

#: Metrics of a network result a search can optimise or limit (``NetworkRecord`` fields;
#: ``edp`` is energy x latency in pJ x cycles).
METRICS: dict[str, str] = {
    "energy_pj": "energy per inference (pJ)",
    "latency_cycles": "cycles per inference",
    "latency_s": "seconds per inference",
    "area_mm2": "chip area (mm^2)",
    "edp": "energy x latency (pJ x cycles)",
    "tops_per_w": "TOPS per watt",
    "tops_per_mm2": "TOPS per mm^2",
    "tops": "TOPS",
    "power_w": "average power (W)",
    "utilization": "MAC utilisation (0..1)",
    "energy_pj_per_mac": "energy per MAC (pJ)",
    "dram_bytes": "bytes to and from DRAM per inference",
    "images_per_s": "inputs (images, sequences) per second: the batch / latency_s",
    "nop_bytes": "bytes over a package's chip-to-chip links per inference",
}
#: Each metric's natural goal (what "better" means) when an objective gives no goal.
NATURAL_GOAL = {
    **dict.fromkeys(METRICS, "min"),
    "tops_per_w": "max",
    "tops_per_mm2": "max",
    "tops": "max",
    "utilization": "max",
    "images_per_s": "max",
}


#: The kinds of range, as a space writes them.
KINDS = ("choices", "int", "pow2", "float", "groups")


class ParamRange(Strict):
    """One parameter's range: exactly one of ``choices``, ``int``, ``pow2``, ``float``, or
    ``groups`` (named groups of template parameters, one chosen per design: a parameter of
    its own name, whose values are the groups' names)."""

    choices: list[Any] | None = Field(None, min_length=1)
    int: tuple[Any, Any] | None = None
    step: Any = None
    pow2: tuple[Any, Any] | None = None
    float: tuple[Any, Any] | None = None
    log: bool = False
    groups: dict[Any, Any] | None = Field(None, min_length=1)

    @model_validator(mode="after")
    def _one_kind(self) -> ParamRange:
        kinds = [k for k in KINDS if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(
                "give exactly one of choices: [...], int: [lo, hi] (step: n), "
                "pow2: [lo, hi], float: [lo, hi] (log: true), groups: {NAME: {param: value}}"
            )
        if self.step is not None and self.int is None:
            raise ValueError("step applies to int: [lo, hi]")
        if self.log and self.float is None:
            raise ValueError("log applies to float: [lo, hi]")
        return self

    @property
    def kind(self) -> str:
        """``choices``, ``int``, ``pow2``, ``float`` or ``groups``: the one given."""
        return next(k for k in KINDS if getattr(self, k) is not None)

    def values(self) -> Sequence[Any] | None:
        """Every value of a discrete range (None for a float range; the groups' names for
        ``groups``). An ``int`` range is a ``range``, never listed in memory: it may hold
        billions of values."""
        if self.groups is not None:
            return list(self.members())
        if self.choices is not None:
            out = [_number_or_size(v) for v in self.choices]
            twice = _repeated(out)
            if twice:
                raise ValueError(f"a choice is listed twice: {', '.join(twice)}")
            return out
        if self.int is not None:
            lo, hi = (_whole(v) for v in self.int)
            step = 1 if self.step is None else _whole(self.step)
            if step < 1:
                raise ValueError(f"step must be >= 1, got {step}")
            if lo > hi:
                raise ValueError(f"the range is empty: {lo} > {hi}")
            return range(lo, hi + 1, step)  # not a list: a long range is never held whole
        if self.pow2 is not None:
            lo, hi = (_whole(v) for v in self.pow2)
            if lo < 1 or lo > hi:
                raise ValueError(f"the range is empty or not positive: [{lo}, {hi}]")
            for end, written in zip((lo, hi), self.pow2, strict=True):
                if end & (end - 1):
                    below, above = 1 << (end.bit_length() - 1), 1 << end.bit_length()
                    raise ValueError(
                        f"{_shown(written, end)} is not a power of two (the nearest are "
                        f"{_shown(written, below)} and {_shown(written, above)}); give powers "
                        "of two as the ends, or int: [lo, hi] (step: n) or choices: [...] for "
                        "other values"
                    )
            return [1 << e for e in range(lo.bit_length() - 1, hi.bit_length())]
        return None

    def members(self) -> dict[str, dict[str, Any]]:
        """A ``groups`` range's groups by name, each its template parameters (sizes read);
        ``ValueError`` on a name that is not text, a group that is not a mapping of single
        values, or groups that do not all set the same parameters."""
        if self.groups is None:
            raise ValueError(f"a {self.kind} range has no groups")
        out: dict[str, dict[str, Any]] = {}
        for label, group in self.groups.items():
            if not isinstance(label, str) or not label.strip():
                raise ValueError(f"a group's name must be text (quote it: '{label}')")
            if not isinstance(group, dict) or not group:
                raise ValueError(
                    f"group {label!r}: give its template parameters as a mapping of single "
                    "values, e.g. {chiplets_x: 2, pe_rows: 4}"
                )
            ranged = sorted(k for k, v in group.items() if isinstance(v, dict | list))
            if ranged:
                raise ValueError(
                    f"group {label!r}: {', '.join(map(str, ranged))} must be single values "
                    "(a group fixes its parameters; a range goes in params)"
                )
            out[label] = {k: _number_or_size(v) for k, v in group.items()}
        first, *_ = out.values()
        for label, group in out.items():
            if set(group) != set(first):
                differ = sorted(map(str, set(group) ^ set(first)))
                raise ValueError(
                    f"every group sets the same parameters; group {label!r} differs from the "
                    f"first in: {', '.join(differ)}"
                )
        return out

    def sets(self) -> list[str]:
        """The template parameters a ``groups`` range sets (every group sets the same)."""
        return list(next(iter(self.members().values())))

    def listed(self) -> Sequence[Any]:
        """Every value of a discrete range (``values``); a float range has no list of values
        (``ValueError``: use ``bounds``)."""
        values = self.values()
        if values is None:
            raise ValueError("a float range has no list of values; its bounds are [lo, hi]")
        return values

    def first(self) -> Any:
        """The range's first value (a float range: its lower end)."""
        return self.bounds()[0] if self.kind == "float" else self.listed()[0]

    def bounds(self) -> tuple[builtins.float, builtins.float]:
        """The ends of a float range, checked (``lo <= hi``, ``lo > 0`` on a log scale)."""
        if self.float is None:
            raise ValueError(f"a {self.kind} range has no bounds; its values are listed")
        lo, hi = (real_number(v) for v in self.float)
        if lo > hi:
            raise ValueError(f"the range is empty: {lo} > {hi}")
        if self.log and lo <= 0:
            raise ValueError(f"a log range needs lo > 0, got {lo}")
        return lo, hi


#: Largest magnitude of an ``int`` or ``pow2`` range's ends: 2^53, the largest whole number
#: Optuna, which keeps a trial's parameters as 64-bit floats, holds exactly.
MAX_WHOLE = 2**53


def _whole(value: Any) -> int:
    number = _number_or_size(value)
    if isinstance(number, bool) or not isinstance(number, int):
        raise ValueError(f"expected a whole number or a size, got {value!r}")
    if abs(number) > MAX_WHOLE:
        raise ValueError(
            f"{value!r} is out of bounds: a range's ends lie within -{MAX_WHOLE}..{MAX_WHOLE} "
            "(2^53: Optuna keeps parameters as 64-bit floats)"
        )
    return number


def _shown(written: Any, number: int) -> str:
    """``number`` as the user wrote its neighbour: a size with units (``16KiB``) when
    ``written`` is one, else the number."""
    if isinstance(written, str) and number >= 1024 and not number % 1024:
        units = ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
        i = 0
        while number % 1024 == 0 and number >= 1024 and i < len(units):
            number //= 1024
            i += 1
        return f"{number}{units[i - 1]}"
    return str(number)


def _repeated(values: list[Any]) -> list[str]:
    """The values listed more than once (equal as Python compares them: ``1``, ``1.0``),
    each shown once; linear in the number of values."""
    first: dict[Any, Any] = {}
    twice: dict[str, None] = {}
    for value in values:
        key = _key(value)
        if key in first:
            twice |= {repr(first[key]): None, repr(value): None}
        else:
            first[key] = value
    return sorted(twice)


def _key(value: Any) -> Any:
    """A hashable stand-in for ``value``, equal for equal values (a list or a mapping, which
    YAML allows as a choice, by its contents)."""
    if isinstance(value, list | tuple):
        return ("list", tuple(_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", frozenset((_key(k), _key(v)) for k, v in value.items()))
    try:
        hash(value)
    except TypeError:
        return ("repr", repr(value))
    return value


def _number_or_size(value: Any) -> Any:
    """``"32KiB"`` -> 32768; numbers, booleans and other strings as they are."""
    if isinstance(value, str):
        try:
            return parse_bytes(value)
        except ValueError:
            return value
    return value


#: Optuna's name of an objective's direction.
Direction = Literal["minimize", "maximize"]


class SearchObjective(Strict):
    """One metric to optimise (``METRICS``) and its goal (default: the metric's natural one)."""

    metric: str
    goal: Literal["min", "max"] | None = None

    @property
    def direction(self) -> Direction:
        """``minimize`` or ``maximize``, as Optuna names it."""
        goal = self.goal or NATURAL_GOAL[self.metric]
        return "minimize" if goal == "min" else "maximize"


#: Longest study or space name (a study name is part of lock-file names and database rows).
MAX_NAME_CHARS = 256


def check_study_name(name: str) -> str:
    """A study name: 1 to 256 printable characters (no newline or other control
    characters, which would corrupt listings and logs)."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError("a study name must be a non-empty string")
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"a study name has at most {MAX_NAME_CHARS} characters, got {len(name)}")
    if not name.isprintable():
        raise ValueError(f"a study name must be printable (no newline or tab), got {name!r}")
    return name


class Limit(Strict):
    """A bound on a metric of a result (``max:`` or ``min:``): a design outside it is
    infeasible."""

    metric: str
    max: Real | None = None
    min: Real | None = None

    @model_validator(mode="after")
    def _one_bound(self) -> Limit:
        if (self.max is None) == (self.min is None):
            raise ValueError("give max: or min: (one of them)")
        return self

    @property
    def key(self) -> str:
        """The limit as Optuna's constraint is named, e.g. ``area_mm2<=5``."""
        if self.max is not None:
            return f"{self.metric}<={self.max:g}"
        return f"{self.metric}>={self.min:g}"

    def violation(self, value: float) -> float:
        """<= 0 when respected; else the relative distance to the bound."""
        if self.max is not None:
            return (value - self.max) / max(abs(self.max), 1e-30)
        assert self.min is not None  # _one_bound: one of max and min is given
        return (self.min - value) / max(abs(self.min), 1e-30)


class WorkloadSpec(Strict):
    """A workload of a space (a zoo name, ONNX or YAML file), its batch and its weight in the
    metrics (weighted means over the workloads). ``pipeline``: on a design of several
    chiplets, its layers run as a pipeline across groups of them (``magnet.mapper.planner``;
    ``images_per_s`` is then the pipeline's rate); on one chip, layer after layer. ``fuse``:
    as ``pipeline``, the stages also fused depth-first, the plan best for the mapper's
    objective taken (``magnet.mapper.planner.map_pipeline``). ``skip_unpriced_ops``: an
    ONNX model's operators magnet does not price are left out (each record lists them)
    instead of refused. ``densities``: the layers' densities (a ``DensityTable``: ``{weights:
    "2:4", inputs: 0.4}`` for every MAC layer, or ``default`` and named ``layers``), so that
    a study asks which design is best at a density."""

    workload: str
    batch: Whole | None = Field(None, ge=1, le=MAX_EXTENT)  # a layer's N
    weight: Real = Field(1.0, gt=0)
    pipeline: bool = False
    fuse: bool = False
    skip_unpriced_ops: bool = False  # an ONNX model's operators magnet does not price
    densities: DensityTable | None = None

    @property
    def densities_json(self) -> str | None:
        """The densities as JSON (None: as the workload has them), a key of a cache."""
        return None if self.densities is None else self.densities.model_dump_json()


class MapperSpec(Strict):
    """The mapper every layer of every design is mapped with, its objective, budget and
    options, and whether a design's searches start from earlier designs' best mappings
    (``reuse``)."""

    name: str = "fast"
    objective: str = "edp"
    budget: Budget = Budget()
    options: dict[str, Any] = Field(default_factory=dict)
    #: start each design's searches from the best mappings of the designs evaluated before
    #: it (``magnet.mapper.warm``); false: every design searched afresh
    reuse: bool = True

    @field_validator("options")
    @classmethod
    def _finite(cls, options: dict[str, Any]) -> dict[str, Any]:
        # checked here, as the mapper's own model would: the space travels as JSON, where
        # NaN and infinity become null (the mapper would then say "got None")
        for key, value in options.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"{key}: expected a finite number, got {value}")
        return options


class SearchSpace(Strict):
    """A validated search space (see the module docstring)."""

    renamed: ClassVar[Mapping[str, str]] = {"network": "noc"}

    name: Annotated[str, AfterValidator(check_study_name)]
    description: str = ""
    template: str
    params: dict[str, Any] = Field(default_factory=dict)
    dataflow: Any = "free"
    constraints: list[str] = Field(default_factory=list)
    objectives: list[SearchObjective] = Field(min_length=1)
    limits: list[Limit] = Field(default_factory=list)
    workloads: list[WorkloadSpec] = Field(min_length=1)
    mapper: MapperSpec = MapperSpec()
    cost_model: str | None = None
    noc: NocModel = "wires"
    trials: Whole = Field(100, ge=1)
    sampler: Literal["nsga2", "nsga3", "tpe", "random", "grid"] = "nsga2"
    #: a design whose bounds the front already dominates is recorded ``dominated``, not
    #: mapped (``magnet.search.bounds``); false: every design mapped
    bounds: bool = True

    @field_validator(
        "objectives", mode="before", json_schema_input_type=list[SearchObjective | str] | str
    )
    @classmethod
    def _objectives(cls, value: Any) -> Any:
        if isinstance(value, str):  # one metric, not its letters
            value = [value]
        return [{"metric": v} if isinstance(v, str) else v for v in (value or [])]

    @field_validator(
        "workloads", mode="before", json_schema_input_type=list[WorkloadSpec | str] | str
    )
    @classmethod
    def _workloads(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [value]
        return [{"workload": v} if isinstance(v, str) else v for v in (value or [])]

    _source: str = PrivateAttr("space")
    _ranges: tuple[dict[str, Any], dict[str, ParamRange]] | None = PrivateAttr(None)
    _checked: bool = PrivateAttr(False)  # by ``_check``: see ``checked``

    @property
    def source(self) -> str:
        """The file the space was read from (what error messages name)."""
        return self._source

    # ---- derived views ---------------------------------------------------------------
    def ranges(self) -> dict[str, ParamRange]:
        """The parameters that vary (read once: a copy with other ``params`` reads its own)."""
        if self._ranges is None or self._ranges[0] is not self.params:
            ranges = {k: ParamRange(**v) for k, v in self.params.items() if isinstance(v, dict)}
            self._ranges = (self.params, ranges)
        return dict(self._ranges[1])

    def fixed(self) -> dict[str, Any]:
        """The parameters given one value."""
        return {k: _number_or_size(v) for k, v in self.params.items() if not isinstance(v, dict)}

    def grouped(self) -> dict[str, str]:
        """Each template parameter a ``groups`` range sets -> the name of that range."""
        return {
            param: name
            for name, r in self.ranges().items()
            if r.kind == "groups"
            for param in r.sets()
        }

    def design(self, chosen: dict[str, Any]) -> dict[str, Any]:
        """A design's template parameters from the values ``chosen`` for its ranges (a
        trial's parameters): the fixed ones, then each chosen value, a group's name replaced
        by the group's parameters (the dataflow, not a template parameter, left out)."""
        ranges = self.ranges()
        out = self.fixed()
        for name, value in chosen.items():
            r = ranges.get(name)
            if r is not None and r.kind == "groups":
                out |= r.members()[value]
            elif name != "dataflow":
                out[name] = value
        return out

    def dataflows(self) -> list[str]:
        """The dataflows the search chooses from (one, or the ``choices``)."""
        if isinstance(self.dataflow, str):
            return [self.dataflow]
        return list(self.dataflow["choices"])

    def size(self) -> builtins.float:
        """How many distinct designs the space holds: the product of its ranges' and its
        dataflows' counts (infinite with a float range)."""
        ranges = self.ranges().values()
        if any(r.kind == "float" for r in ranges):
            return math.inf
        return math.prod(len(r.listed()) for r in ranges) * len(self.dataflows())

    def directions(self) -> list[Direction]:
        """Optuna's direction of each objective."""
        return [o.direction for o in self.objectives]


def _check(space: SearchSpace, source: str) -> None:
    """Cross-field checks: names against the template, metrics, workloads, expressions (in
    this order: the first problem found is the one reported)."""
    from magnet.templates import get_template

    template = get_template(space.template, source=source)
    allowed = list(template.Params.model_fields)
    ranges = _checked_ranges(space, allowed, template.name, source)
    _check_values(space, template, ranges, source)
    _check_dataflows(space, list(template.dataflows), template.name, source)
    _check_metrics(space, source)
    _check_constraints(space, set(allowed), ranges, source)
    _check_mapper(space, source)
    _check_workloads(space, source)
    _check_chiplets(space, template, ranges, source)
    check_sampler(space, source, "sampler")


#: Most designs the grid sampler may hold: Optuna's ``GridSampler`` lists every design of
#: its grid in memory (about 300 MB and 0.1 s per trial at this size; a search of a million
#: designs already takes weeks).
MAX_GRID_DESIGNS = 1_000_000


def check_sampler(space: SearchSpace, source: str | None, field: str) -> None:
    """The grid sampler needs a grid it can list: discrete ranges only, and at most
    ``MAX_GRID_DESIGNS`` designs (``field`` names where the sampler was chosen)."""
    if space.sampler != "grid":
        return
    ranges = space.ranges()
    if any(r.kind == "float" for r in ranges.values()):
        raise MagnetError(
            "the grid sampler needs discrete parameters (choices, int, pow2), not float ranges",
            source=source,
            field=field,
        )
    size = space.size()
    if size > MAX_GRID_DESIGNS:
        counts = [f"{name} {len(r.listed()):,}" for name, r in ranges.items()]
        counts += [f"dataflow {len(space.dataflows())}"] if len(space.dataflows()) > 1 else []
        raise MagnetError(
            f"the grid holds {size:,} designs ({' x '.join(counts)}), more than the "
            f"{MAX_GRID_DESIGNS:,} the grid sampler can list in memory; use another sampler "
            "(nsga2, nsga3, tpe, random: they draw designs without listing them) or give "
            "fewer values",
            source=source,
            field=field,
        )


def _check_chiplets(
    space: SearchSpace, template: Template[Any], ranges: dict[str, list[Any]], source: str
) -> None:
    """A pipelined workload and the ``nop_bytes`` metric need designs of several chiplets:
    on a space whose designs are all one chip (a chip template, a package of 1 x 1) a
    pipeline is never run and ``nop_bytes`` is 0 for every design, so both are refused."""
    pipeline = "pipeline: true runs the layers across a package's chiplets"
    fuse = "fuse: true runs the layers across a package's chiplets"
    nop = "nop_bytes counts the bytes over a package's chip-to-chip links (0 on one chip)"
    needs = [(f"workloads.{i}", pipeline) for i, w in enumerate(space.workloads) if w.pipeline]
    needs += [(f"workloads.{i}", fuse) for i, w in enumerate(space.workloads) if w.fuse]
    named = {"objectives": [o.metric for o in space.objectives]}
    named["limits"] = [x.metric for x in space.limits]
    for field, metrics in named.items():
        needs += [(f"{field}.{i}", nop) for i, m in enumerate(metrics) if m == "nop_bytes"]
    if not needs or _several_chiplets(space, template, ranges):
        return
    field, what = needs[0]
    raise MagnetError(
        f"{what}, but every design of this space is a single chip (template {template.name}); "
        "use a template of packages (package, with chiplets_x or chiplets_y above 1), or "
        "leave it out",
        source=source,
        field=field,
    )


def _several_chiplets(
    space: SearchSpace, template: Template[Any], ranges: dict[str, list[Any]]
) -> bool:
    """Whether some design of ``space`` has several chiplets, looking at the first design,
    the last, and each checked value of each range (the others at their first)."""
    firsts = {n: v[0] for n, v in ranges.items()}
    lasts = {n: v[-1] for n, v in ranges.items()}
    each = (firsts | {n: v} for n, values in ranges.items() for v in values)
    for chosen in itertools.chain([firsts, lasts], each):
        try:
            arch = template.build(space.design(chosen))
        except MagnetError:  # a combination the template refuses: another design may do
            continue
        if arch.chiplets > 1:
            return True
    return False


def _checked_ranges(
    space: SearchSpace, allowed: list[str], template: str, source: str
) -> dict[str, list[Any]]:
    """Every parameter is one of the template's (a ``groups`` range: a name of its own, its
    groups' parameters the template's); each range's values to check (a float range: its
    ends; a groups range: its groups' names), by parameter."""
    ranges: dict[str, list[Any]] = {}
    for name, spec in space.params.items():
        is_groups = _is_groups(spec)
        if name not in allowed and not is_groups:
            raise MagnetError(
                f"unknown parameter of the {template} template; allowed: {', '.join(allowed)} "
                "(or a name of your own for groups: {NAME: {param: value}})",
                source=source,
                field=f"params.{name}",
            )
        if isinstance(spec, dict):
            try:
                ranges[name] = _checked_values(ParamRange(**spec))
            except (ValidationError, ValueError) as exc:
                message = (
                    validation_message(exc, ParamRange)
                    if isinstance(exc, ValidationError)
                    else str(exc)
                )
                raise MagnetError(message, source=source, field=f"params.{name}") from None
    for name, spec in space.params.items():
        if _is_groups(spec):  # every range read: the groups checked against the others
            _check_groups(space, name, ParamRange(**spec), allowed, template, source)
    return ranges


def _check_groups(
    space: SearchSpace, name: str, r: ParamRange, allowed: list[str], template: str, source: str
) -> None:
    """A groups range: its own name is no template parameter nor ``dataflow``; its groups
    set the template's parameters, none that another entry of ``params`` sets too."""
    field = f"params.{name}"
    if name in allowed or name == "dataflow":
        raise MagnetError(
            f"a groups range takes a name of its own, not the {template} template's "
            f"parameter or dataflow {name!r} (e.g. split: {{groups: ...}})",
            source=source,
            field=field,
        )
    others = {
        param: other
        for other, spec in space.params.items()
        if other != name
        for param in (ParamRange(**spec).sets() if _is_groups(spec) else [other])
    }
    for label, group in r.members().items():
        for param in group:
            if param not in allowed:
                raise MagnetError(
                    f"unknown parameter {param!r} of the {template} template; allowed: "
                    f"{', '.join(allowed)}",
                    source=source,
                    field=f"{field}.groups.{label}",
                )
            if param in others:
                raise MagnetError(
                    f"{param!r} is set by this group and by params.{others[param]}: give it "
                    "in one place",
                    source=source,
                    field=f"{field}.groups.{label}",
                )


def _is_groups(spec: Any) -> bool:
    """Whether a ``params`` entry is a groups range."""
    return isinstance(spec, dict) and "groups" in spec


def _check_values(
    space: SearchSpace, template: Template[Any], ranges: dict[str, list[Any]], source: str
) -> None:
    """Every value the space can give, each checked by the template's own model (with the
    other ranges at their first value; the fixed parameters alone first)."""
    firsts = {name: values[0] for name, values in ranges.items()}
    cases: list[tuple[str | None, list[Any]]] = [(None, [None]), *ranges.items()]
    for name, values in cases:
        for value in values:
            trial = space.design(firsts | ({} if name is None else {name: value}))
            try:
                template.params(trial)
            except MagnetError as exc:
                where = "params" if name is None else f"params.{name}"
                what = "group" if name is not None and _is_groups(space.params[name]) else "value"
                shown = "" if name is None else f"the {what} {value!r}: "
                raise MagnetError(f"{shown}{exc.message}", source=source, field=where) from None


def _check_dataflows(space: SearchSpace, allowed: list[str], template: str, source: str) -> None:
    """One dataflow name or ``{choices: [...]}``, each a dataflow of the template, once."""
    given = space.dataflow
    if not (isinstance(given, str) or (isinstance(given, dict) and set(given) == {"choices"})):
        raise MagnetError(
            "give one dataflow name or {choices: [...]}", source=source, field="dataflow"
        )
    flows = space.dataflows()
    if not flows or len(set(flows)) != len(flows):
        raise MagnetError(
            "give at least one dataflow, each once; allowed: " + ", ".join(allowed),
            source=source,
            field="dataflow",
        )
    for flow in flows:
        if flow not in allowed:
            raise MagnetError(
                f"unknown dataflow {flow!r} of the {template} template; allowed: "
                f"{', '.join(allowed)}",
                source=source,
                field="dataflow",
            )


def _check_metrics(space: SearchSpace, source: str) -> None:
    """Objectives and limits name metrics of a result; no objective twice."""
    named = [
        *(("objectives", "unknown metric", i, o.metric) for i, o in enumerate(space.objectives)),
        *(("limits", "a limit on unknown metric", i, x.metric) for i, x in enumerate(space.limits)),
    ]
    for field, what, i, metric in named:
        if metric not in METRICS:
            raise MagnetError(
                f"{what} {metric!r}; allowed: {', '.join(METRICS)}",
                source=source,
                field=f"{field}.{i}",
            )
    names = [o.metric for o in space.objectives]
    if len(set(names)) != len(names):
        raise MagnetError("an objective is listed twice", source=source, field="objectives")
    _check_limits(space.limits, source)


#: The values a metric can take, where they are narrower than [0, inf): none is negative.
METRIC_TOP = {"utilization": 1.0}


def _check_limits(limits: list[Limit], source: str) -> None:
    """No limit twice, none that no design can meet (below 0; utilisation above 1), and no
    two on one metric that leave no value between them."""
    twice = _repeated([x.key for x in limits])
    if twice:
        raise MagnetError(
            f"a limit is listed twice: {', '.join(twice)}", source=source, field="limits"
        )
    for i, x in enumerate(limits):
        top = METRIC_TOP.get(x.metric, math.inf)
        if (x.max is not None and x.max < 0) or (x.min is not None and x.min > top):
            shown = "above 1" if x.min is not None else "negative"
            raise MagnetError(
                f"no design can meet {x.key}: {x.metric} is never {shown}",
                source=source,
                field=f"limits.{i}",
            )
    floors: dict[str, tuple[float, int]] = {}  # by metric: the highest min, and its limit
    tops: dict[str, tuple[float, int]] = {}  # the lowest max
    for i, x in enumerate(limits):
        if x.min is not None and x.min > floors.get(x.metric, (-math.inf, i))[0]:
            floors[x.metric] = (x.min, i)
        if x.max is not None and x.max < tops.get(x.metric, (math.inf, i))[0]:
            tops[x.metric] = (x.max, i)
    for metric, (low, i) in floors.items():
        high, j = tops.get(metric, (math.inf, i))
        if low > high:
            raise MagnetError(
                f"{limits[i].key} and {limits[j].key} (limits.{j}) leave no value of {metric}: "
                "no design can meet both",
                source=source,
                field=f"limits.{i}",
            )


def _check_mapper(space: SearchSpace, source: str) -> None:
    """The space's mapper is a registered one."""
    from magnet.mapper import available_mappers

    if space.mapper.name not in available_mappers():
        raise MagnetError(
            f"unknown mapper {space.mapper.name!r}; allowed: {', '.join(available_mappers())}",
            source=source,
            field="mapper.name",
        )


def _check_workloads(space: SearchSpace, source: str) -> None:
    """Every workload loads, and none is listed twice (the same network at the same batch,
    however written, pipelined or not alike: its weight says how much it counts)."""
    from magnet.workload.loader import check_skip_ops, load_workload
    from magnet.workload.network import Network

    loaded: list[tuple[Network, bool, bool]] = []
    for i, w in enumerate(space.workloads):
        try:
            if w.skip_unpriced_ops:
                check_skip_ops(w.workload, "skip_unpriced_ops")
            network = load_workload(
                w.workload, w.batch, skip_ops=w.skip_unpriced_ops, densities=w.densities
            )
        except MagnetError as exc:
            raise MagnetError(str(exc), source=source, field=f"workloads.{i}") from None
        if (network, w.pipeline, w.fuse) in loaded:
            again = loaded.index((network, w.pipeline, w.fuse))
            raise MagnetError(
                f"{w.workload!r} is workloads.{again} again (the same network at the same "
                "batch, pipelined and fused alike); list each workload once, "
                "with a weight to make it count more",
                source=source,
                field=f"workloads.{i}",
            )
        loaded.append((network, w.pipeline, w.fuse))


#: Functions a derived constraint may call.
FUNCTIONS = {"min": min, "max": max}


#: Most values of one range checked one by one against the template (a longer integer
#: range is checked at its ends, then an even sample of this many values).
MAX_VALUES_CHECKED = 10_000
#: Most assignments of its parameters a derived constraint is evaluated at before the search
#: (more: an even sample of that many, seeded).
MAX_CONSTRAINT_CHECKS = 20_000


def _checked_values(r: ParamRange) -> list[Any]:
    """The values of a range to check: all of a discrete one (an even sample of a very long
    one), both ends of a float one."""
    if r.kind == "float":
        return list(r.bounds())
    values = r.listed()
    last = len(values) - 1
    if last >= MAX_VALUES_CHECKED:  # the ends first (named if refused), then an even sample
        picks = [i * last // (MAX_VALUES_CHECKED - 1) for i in range(1, MAX_VALUES_CHECKED - 1)]
        return [values[0], values[last], *(values[i] for i in picks)]
    return list(values)


def _check_constraints(
    space: SearchSpace, known: set[str], ranges: dict[str, list[Any]], source: str
) -> None:
    """At most ``MAX_CONSTRAINTS`` derived constraints, none twice, each a comparison of
    known parameters that can be evaluated (``_check_constraint``)."""
    if len(space.constraints) > MAX_CONSTRAINTS:
        raise MagnetError(
            f"a space has at most {MAX_CONSTRAINTS} constraints, got {len(space.constraints)}",
            source=source,
            field="constraints",
        )
    twice = _repeated([" ".join(text.split()) for text in space.constraints])
    if twice:
        raise MagnetError(
            f"a constraint is listed twice: {', '.join(twice)}", source=source, field="constraints"
        )
    for i, text in enumerate(space.constraints):
        used = _expression_names(text, known, source, f"constraints.{i}")
        _check_constraint(space, text, used, ranges, source, f"constraints.{i}")


def _check_constraint(
    space: SearchSpace,
    text: str,
    used: set[str],
    ranges: dict[str, list[Any]],
    source: str,
    field: str,
) -> None:
    """Evaluate a derived constraint at every assignment of the ranges it names (an even
    sample when there are too many): one that cannot be evaluated (a division by zero, a
    number too large) is bad input, found before the search; so is one that every design
    breaks (known when every assignment was evaluated: no float range, not sampled)."""
    import random

    owner = {n: n for n in ranges} | space.grouped()  # a grouped parameter: its groups range
    names = sorted({owner[n] for n in used if n in owner})
    lists = [ranges[n] for n in names]
    count = math.prod(len(v) for v in lists)
    whole = space.ranges()  # each range's every value, where ``ranges`` may hold a sample
    listed = [whole[n].kind != "float" and len(ranges[n]) == len(whole[n].listed()) for n in names]
    every = count <= MAX_CONSTRAINT_CHECKS and all(listed)
    if count <= MAX_CONSTRAINT_CHECKS:
        assignments: Any = itertools.product(*lists)
    else:
        rng = random.Random(0)
        assignments = ([rng.choice(v) for v in lists] for _ in range(MAX_CONSTRAINT_CHECKS))
    firsts = {n: v[0] for n, v in ranges.items()}
    evaluator = _evaluator(space.template, {})
    defaults, parsed = dict(evaluator.names), evaluator.parse(text)
    errors = _expression_errors()
    held = False
    for values in assignments:
        chosen = dict(zip(names, values, strict=True))
        evaluator.names = defaults | space.design(firsts | chosen)
        try:
            held = bool(evaluator.eval(text, previously_parsed=parsed)) or held
        except errors as exc:
            shown = ", ".join(f"{n}={v!r}" for n, v in chosen.items()) or "the fixed parameters"
            raise MagnetError(
                f"{text!r} cannot be evaluated at {shown}: {type(exc).__name__}: {exc}",
                source=source,
                field=field,
            ) from None
    if every and not held:
        raise MagnetError(
            f"{text!r} is broken by every design of the space ({count:,} checked): no design "
            "would be evaluated",
            source=source,
            field=field,
        )


#: Most derived constraints a space may have: each is evaluated at up to
#: ``MAX_CONSTRAINT_CHECKS`` designs before the search.
MAX_CONSTRAINTS = 100
#: Longest derived constraint (characters), and its deepest nesting of operations: a
#: constraint relates a few parameters; past these it is no expression a person wrote (and
#: the evaluator, which recurses, would run out of stack).
MAX_CONSTRAINT_CHARS = 1000
MAX_CONSTRAINT_DEPTH = 50
#: What a derived constraint is, as an error says it.
CONSTRAINT_FORM = (
    "a constraint is a comparison of parameters, e.g. weight_buffer >= 256 * vector_units "
    "(==, !=, <, <=, >, >=, in; joined by and, or, not; with +, -, *, /, //, %, **, min, max)"
)


def _expression_names(text: str, known: set[str], source: str, field: str) -> set[str]:
    """The parameter names a derived constraint uses; refused: one too long or nested too
    deeply, a syntax error, what a constraint does not have (an attribute, an index, a call
    of anything but ``min`` and ``max``), an expression that is not a comparison
    (``weight_buffer + 4`` is never false), an unknown name, one that names no parameter."""

    def refuse(problem: str) -> MagnetError:
        return MagnetError(problem, source=source, field=field)

    if len(text) > MAX_CONSTRAINT_CHARS:
        raise refuse(f"a constraint has at most {MAX_CONSTRAINT_CHARS} characters, got {len(text)}")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise refuse(f"not an expression: {exc.msg}") from None
    if _depth(tree) > MAX_CONSTRAINT_DEPTH:
        raise refuse(
            f"{text[:60]!r}... nests operations more than {MAX_CONSTRAINT_DEPTH} deep; "
            f"{CONSTRAINT_FORM}"
        )
    nodes = list(ast.walk(tree))
    odd = next((n for n in nodes if not _allowed(n)), None)
    if odd is not None:
        what = _NOT_ALLOWED.get(type(odd), type(odd).__name__)
        raise refuse(f"{text!r} has {what}, which a constraint may not; {CONSTRAINT_FORM}")
    if not _is_comparison(tree.body):
        raise refuse(f"{text!r} is not a comparison, so it cannot be broken; {CONSTRAINT_FORM}")
    names = {n.id for n in nodes if isinstance(n, ast.Name)} - set(FUNCTIONS)
    unknown = sorted(names - known)
    if unknown:
        raise refuse(
            f"unknown name(s) {', '.join(unknown)} in {text!r}; use the template's parameters "
            f"and {', '.join(FUNCTIONS)}"
        )
    if not names:
        raise refuse(
            f"{text!r} names no parameter: it is the same for every design; {CONSTRAINT_FORM}"
        )
    return names


#: The parts of Python's expressions a constraint may have.
_ALLOWED = (
    ast.Expression, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.Name,
    ast.Constant, ast.List, ast.Tuple, ast.expr_context, ast.boolop, ast.operator,
    ast.unaryop, ast.cmpop,
)  # fmt: skip
#: Those it may not, as an error names them (others by their ``ast`` name).
_NOT_ALLOWED = {
    ast.Attribute: "an attribute (x.y)",
    ast.Subscript: "an index (x[i])",
    ast.IfExp: "a conditional (x if c else y)",
    ast.Call: "a call of a function other than min and max",
    ast.NamedExpr: "an assignment (:=)",
    ast.keyword: "a keyword argument",
}


def _allowed(node: ast.AST) -> bool:
    """Whether a node of a constraint's ``ast`` is one a constraint may have."""
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
    return isinstance(node, _ALLOWED)


def _depth(tree: ast.AST) -> int:
    """How deep the nodes of an ``ast`` tree nest (without recursing)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack += [(child, depth + 1) for child in ast.iter_child_nodes(node)]
    return deepest


def _is_comparison(node: ast.AST) -> bool:
    """Whether an expression's ``ast`` node is a comparison, or comparisons joined by
    ``and``, ``or`` and ``not``."""
    if isinstance(node, ast.BoolOp):
        return all(_is_comparison(v) for v in node.values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return _is_comparison(node.operand)
    return isinstance(node, ast.Compare)


def _expression_errors() -> tuple[type[Exception], ...]:
    """What evaluating a constraint raises when the expression is at fault at some design:
    arithmetic (a division by zero, a number too large), operands of the wrong types, and
    ``simpleeval``'s own errors for what it refuses to evaluate. Anything else (a missing
    module, a bug) is not the user's constraint's fault, and is not reported as such."""
    from simpleeval import InvalidExpression

    return (ArithmeticError, TypeError, ValueError, InvalidExpression)


def _evaluator(template: str, params: dict[str, Any]) -> Any:
    """A safe evaluator (``simpleeval``) of expressions over a design's parameters (the
    template's defaults for those not given)."""
    from simpleeval import EvalWithCompoundTypes

    from magnet.templates import get_template

    fields = get_template(template).Params.model_fields
    names = {name: _number_or_size(f.default) for name, f in fields.items()} | dict(params)
    return EvalWithCompoundTypes(names=names, functions=FUNCTIONS)


def constraint_violations(space: SearchSpace, params: dict[str, Any]) -> list[str]:
    """The derived constraints ``params`` break (``simpleeval`` evaluates them safely); a
    parameter the space does not set takes the template's default. ``_check`` evaluated
    each at the assignments of its ranges it could (an even sample of long ranges, a float
    range's ends): one that cannot be evaluated at a design it did not reach is broken there,
    with the reason."""
    evaluator = _evaluator(space.template, params)
    errors = _expression_errors()
    broken = []
    for text in space.constraints:
        try:
            holds = evaluator.eval(text)
        except errors as exc:  # at a design the check before the search did not reach
            broken.append(f"{text} (cannot be evaluated: {type(exc).__name__}: {exc})")
            continue
        if not holds:
            broken.append(text)
    return broken


def builtin_spaces() -> dict[str, Path]:
    """The search spaces that ship with magnet (``search_spaces/*.yaml``; ``magnet spaces``,
    ``magnet search NAME``) by name (``quickstart``, ``magnet``, ...)."""
    return {p.stem: p for p in sorted(shipped("search_spaces").glob("*.yaml"))}


def space_path(spec: str | Path) -> Path:
    """The file of a search space given as a path or, when no such file exists, as the name
    of a built-in space (a file always wins); a miss names the built-in spaces."""
    if not str(spec).strip():
        raise MagnetError(
            f"empty: give a space file or a built-in space ({', '.join(builtin_spaces())})",
            source=repr(str(spec)),
        )
    path = Path(spec)
    kind = None if no_such_name(path) else path_kind(path)
    if kind == "file":
        return path
    builtin = builtin_spaces().get(path.stem if path.suffix == ".yaml" else str(spec))
    if builtin is not None and path.parent == Path("."):
        return builtin
    if kind is not None:  # a folder, a device, a broken link: read_yaml says what it is
        return path
    raise MagnetError(
        f"file not found, and not a built-in space; built-in spaces: "
        f"{', '.join(builtin_spaces())} (magnet spaces lists them)",
        source=str(spec),
    )


def load_space(path: str | Path) -> SearchSpace:
    """A search space from YAML (a path, or the name of a built-in space), checked (see the
    module docstring). A relative workload path is looked for next to the space file first,
    then in the working directory."""
    path = space_path(path)
    source = str(path)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise MagnetError(
            "expected a mapping (name, template, params, objectives, ...)", source=source
        )
    data.setdefault("name", path.stem)
    if isinstance(data.get("workloads"), list):
        data["workloads"] = [_next_to(path, w) for w in data["workloads"]]
    return space_from_data(data, source)


def _next_to(space: Path, workload: Any) -> Any:
    """``workload`` (a spec or a mapping with ``workload``) with a relative file path that
    exists next to ``space`` made absolute."""
    spec = workload.get("workload") if isinstance(workload, dict) else workload
    if not isinstance(spec, str) or Path(spec).is_absolute():
        return workload
    beside = space.resolve().parent / spec
    if path_kind(beside) != "file":
        return workload
    return {**workload, "workload": str(beside)} if isinstance(workload, dict) else str(beside)


def upgraded(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a space as a study stored it) with renamed fields under their current
    names."""
    out = dict(data)
    for old, new in SearchSpace.renamed.items():
        if old in out and new not in out:
            out[new] = out.pop(old)
    return out


def as_stored_now(stored: dict[str, Any]) -> dict[str, Any]:
    """A space as an earlier magnet stored it with its study (``trials`` left out), as this
    one would store it: renamed fields under their names and fields added since at their
    defaults, so that the study resumes. A space this version cannot read is left as it
    was (a resume then names the differences)."""
    data = upgraded(stored)
    try:
        now = SearchSpace(**data).model_dump(mode="json")
    except (ValidationError, TypeError):
        return data
    now.pop("trials")
    return now


def space_from_data(data: dict[str, Any], source: str = "space") -> SearchSpace:
    """A search space from a dict (the same checks as ``load_space``); a field under its
    0.2 name is refused, naming the new one (``SearchSpace.renamed``)."""
    try:
        space = SearchSpace(**data)
    except ValidationError as exc:
        raise MagnetError(validation_message(exc, SearchSpace), source=source) from None
    space._source = source
    return checked(space)


def checked(space: SearchSpace) -> SearchSpace:
    """``space`` after the checks ``load_space`` makes (once: a space read by ``load_space``
    or ``space_from_data`` has had them; one made as ``SearchSpace(...)`` has not)."""
    if not space._checked:
        _check(space, space.source)
        space._checked = True
    return space
