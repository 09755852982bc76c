"""Read Timeloop's native input (``timeloop-input.yaml``, v0.4) into magnet objects.

Supported: the v0.4 architecture tree (storage components with ``depth``, ``width``,
``datawidth``, bandwidths, ``meshX``/``meshY``, instance ranges ``name[1..N]``), the problem
(conv-like shapes whose dimensions are among N, G, C, M/K, P, Q, R, S, with Wstride /
Hstride / Wdilation / Hdilation), the mapping (``temporal``, ``spatial`` with ``split``,
``datatype``/``bypass`` keep lists), the mapspace constraints, and the ERT/ART tables.

Semantics (Timeloop's, as documented with its reference runs): ERT energies are per access
of ``width`` bits; a word is ``datawidth`` bits; fills use ``write``, partial-sum updates
``update`` (or ``write``); storage leakage is ``leak`` per cycle per utilised instance (the
architecture is power-gated); the on-chip network is free (``TimeloopInput.design`` prices
with ``noc="none"``). Timeloop does not charge arithmetic leakage, clock energy or adds
outside its MACs, so neither does the ERT cost model here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import Field, ValidationError, model_validator

from magnet.arch.sparse import ComputeZeros, TensorSparsity
from magnet.arch.spec import (
    Arch,
    ComputeLevel,
    Fanout,
    PostProcessor,
    StorageLevel,
    SystolicPipeline,
)
from magnet.arguments import Name, checked_call, checked_methods
from magnet.cost import NocModel
from magnet.cost.contract import (
    AdderComponent,
    ClockGateComponent,
    Component,
    CostModel,
    DummyComponent,
    MacComponent,
    NocLinkComponent,
    OverheadComponent,
    OverheadKind,
    PowerGateComponent,
    Price,
    RouterComponent,
    price,
    typed_component,
)
from magnet.dataflow import Dataflow, Rule
from magnet.design import CostSpec, Design, build_design
from magnet.errors import MagnetError, clipped_repr, validation_message
from magnet.files import read_yaml
from magnet.mapping import LevelMapping, Mapping
from magnet.strict import Strict
from magnet.workload.dims import DIMS, MAX_EXTENT, parse_dim, parse_factors
from magnet.workload.layer import GemmView, Layer
from magnet.workload.sparsity import Densities

#: The versions of Timeloop's architecture format this reader implements.
VERSIONS = ("0.4",)
_NAME = re.compile(r"^(?P<base>[^\[]+)(\[(?P<lo>\d+)\.\.(?P<hi>\d+)\])?$")
_COMPUTE_HINTS = ("mac", "compute", "multiplier", "adder", "alu")
_STORAGE_CLASSES = {
    "dram": "dram",
    "sram": "sram",
    "smartbuffer_sram": "sram",
    "smartbuffer_metadata": "sram",
    "regfile": "regfile",
    "smartbuffer_rf": "regfile",
    "regfile_metadata": "regfile",
    "storage": "regfile",
    "register": "regfile",
    "aladdin_register": "regfile",
    "dummy_storage": "dummy",
}
_OPERAND_NAMES = {"weights": "weights", "inputs": "inputs", "outputs": "outputs"}


@checked_methods()
@dataclass
class TimeloopInput:
    """Everything read from one Timeloop input file."""

    layer: Layer
    arch: Arch
    mapping: Mapping | None
    cost_model: ErtCostModel | None  # None when the file has no ERT
    constraints: list[dict[str, Any]]
    source: str

    @property
    def dataflow(self) -> Dataflow:
        """The mapspace constraints as a magnet dataflow (no rules when there are none)."""
        return constraints_dataflow(self.constraints, self.arch, self.source)

    def design(
        self,
        cost_model: CostSpec = None,
        dataflow: str | Dataflow | None = None,
        noc: NocModel | None = None,
    ) -> Design:
        """The design Timeloop prices: its ERT (after ``cost_model``, when given), a free
        on-chip network (``noc``: None is ``"none"``; ``"wires"`` prices the floorplan's
        wires), the file's constraints (or ``dataflow``)."""
        extra = (
            []
            if cost_model is None
            else ([cost_model] if isinstance(cost_model, str | CostModel) else list(cost_model))
        )
        if self.cost_model is None and not extra:
            raise MagnetError(
                "has no ERT (energy reference table), so its energies are unknown; run it "
                "through Accelergy first, or price it with magnet's tables (--cost-model "
                "horowitz45)",
                source=self.source,
                field="ERT",
            )
        models = [*extra, *([self.cost_model] if self.cost_model is not None else [])]
        flow = self.dataflow if dataflow is None else dataflow
        return build_design(self.arch, flow, models, noc=noc or "none")


#: The clock of architectures read from Timeloop (cycles are Timeloop's unit of time).
TIMELOOP_CLOCK_GHZ = 1.0


class ErtCostModel(CostModel):
    """Prices components from Timeloop's ERT (energy per action) and ART (area) tables."""

    name = "timeloop-ert"

    def __init__(
        self,
        energy: dict[str, dict[str, float]],
        area: dict[str, float],
        router_area_um2: float | None = None,
        overhead_area_um2: dict[str, float] | None = None,
    ):
        self.energy = energy
        self.area = area
        self.router_area_um2 = router_area_um2
        self.overhead_area_um2 = overhead_area_um2 or {}

    def supports(self, component: Component) -> bool:
        """The components the tables name, and the ones Timeloop has none for (NoC links,
        dummies, adders, routers, overheads)."""
        base = component.name.removesuffix(".noc")
        return (
            base in self.energy
            or base in self.area
            or isinstance(typed_component(component), _PRICED_HERE)
        )

    def energy_pj(self, component: Component, action: str) -> float:
        """The ERT's energy of ``action`` (an update without one is a write); NoC links,
        dummies and adders are free, as in Timeloop."""
        if isinstance(typed_component(component), _FREE):
            return 0.0
        table = self.energy.get(component.name, {})
        if action == "update" and "update" not in table:
            action = "write"
        return float(table.get(action, 0.0))

    def leakage_mw(self, component: Component) -> float:
        """The ERT's ``leak`` is energy per cycle; the architectures read here run at 1 GHz
        (``Arch.clock_ghz`` default: Timeloop counts cycles, not seconds), where 1 pJ per
        cycle is 1 mW, so static energy stays ``leak`` x cycles as in Timeloop."""
        if isinstance(typed_component(component), MacComponent):
            return 0.0  # Timeloop does not charge arithmetic leakage
        return float(self.energy.get(component.name, {}).get("leak", 0.0)) * TIMELOOP_CLOCK_GHZ

    def area_um2(self, component: Component) -> float | None:
        """The ART's area; routers and the chip's overheads (which Timeloop has no
        component for) from the ``magnet`` block of a file magnet wrote, else none."""
        typed = typed_component(component)
        if isinstance(typed, RouterComponent):
            return self.router_area_um2
        if isinstance(typed, OverheadComponent):
            kind = typed.kind
            return None if kind is None else self.overhead_area_um2.get(kind)
        value = self.area.get(component.name)
        return None if value is None else float(value)


#: What Timeloop charges no energy for: NoC links (its legacy network is free), dummies and
#: adds outside the MACs.
_FREE = (NocLinkComponent, DummyComponent, AdderComponent, PowerGateComponent)
#: What the ERT cost model prices although the tables do not name it.
_PRICED_HERE = (*_FREE, RouterComponent, OverheadComponent, ClockGateComponent)


@checked_call
def load_timeloop(path: Name | Path) -> TimeloopInput:
    """Parse a ``timeloop-input.yaml``; errors name the file and the offending field."""
    src = str(path)
    data = read_yaml(path)
    try:
        return _parse(data, src)
    except MagnetError:
        raise
    except (ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
        # a shape we do not expect anywhere in the file: still one clear line, no traceback
        kind = type(exc).__name__
        raise MagnetError(f"malformed Timeloop input ({kind}: {exc})", source=src) from None


def _parse(data: Any, src: str) -> TimeloopInput:
    if not isinstance(data, dict):
        raise MagnetError("expected a mapping with architecture, problem, mapping", source=src)
    for key in ("architecture", "problem"):
        if key not in data:
            raise MagnetError(f"missing '{key}' (a Timeloop input needs it)", source=src, field=key)
    components = _flatten(data["architecture"], src)
    layer = _problem(data["problem"], src)
    keeps = _keeps(data.get("mapping") or [], src)
    extra = _extensions(data.get("magnet"), src)
    if extra.densities is not None:
        layer = layer.model_copy(update={"densities": extra.densities})
    if extra.im2col_input_words is not None:  # the GEMM view of a layer (magnet's systolic)
        layer = GemmView(**layer.model_dump(), input_tensor_words=extra.im2col_input_words)
    tree_name = str((data["architecture"].get("subtree") or [{}])[0].get("name", "timeloop"))
    arch = _arch(components, keeps, src, extra.design.get("name") or tree_name, extra)
    mapping = _mapping(data["mapping"], arch, src) if data.get("mapping") else None
    try:
        cost = _ert(data.get("ERT"), data.get("ART"), extra)
    except MagnetError as exc:
        raise MagnetError(str(exc), source=src) from None
    constraints = list((data.get("architecture_constraints") or {}).get("targets") or [])
    constraints += list((data.get("mapspace_constraints") or {}).get("targets") or [])
    return TimeloopInput(layer, arch, mapping, cost, constraints, src)


# ---- architecture ---------------------------------------------------------------------


def _flatten(node: Any, src: str) -> list[dict[str, Any]]:
    """The v0.4 tree as a flat list of components, outermost first, with attributes merged."""
    if not isinstance(node, dict) or "subtree" not in node:
        raise MagnetError("expected a v0.4 tree with 'subtree'", source=src, field="architecture")
    version = node.get("version")
    if version is not None and str(version) not in VERSIONS:
        raise MagnetError(
            f"version {clipped_repr(version)}: magnet reads Timeloop's architecture format "
            f"of version {', '.join(map(repr, VERSIONS))} only; convert the file to it",
            source=src,
            field="architecture.version",
        )
    out: list[dict[str, Any]] = []

    def walk(tree: dict[str, Any], inherited: dict[str, Any]) -> None:
        attrs = {**inherited, **(tree.get("attributes") or {})}
        for comp in tree.get("local") or []:
            if not isinstance(comp, dict) or "name" not in comp:
                raise MagnetError(
                    f"component without a name: {comp!r}", source=src, field="architecture.local"
                )
            merged = {**attrs, **(comp.get("attributes") or {})}
            out.append(
                {
                    "name": comp["name"],
                    "class": str(comp.get("class", "")),
                    "subclass": comp.get("subclass"),
                    "attributes": merged,
                }
            )
        for sub in tree.get("subtree") or []:
            walk(sub, attrs)

    for sub in node["subtree"]:
        walk(sub, {})
    if not out:
        raise MagnetError("the architecture has no components", source=src, field="architecture")
    return out


def _instances(name: str, src: str) -> tuple[str, int]:
    match = _NAME.match(name.strip())
    if not match:
        raise MagnetError(f"cannot read component name {name!r}", source=src, field="architecture")
    base = match.group("base")
    if match.group("lo") is None:
        return base, 1
    return base, int(match.group("hi")) - int(match.group("lo")) + 1


def _is_compute(comp: dict[str, Any]) -> bool:
    cls = comp["class"].lower()
    return any(h in cls for h in _COMPUTE_HINTS) and cls not in _STORAGE_CLASSES


#: Attributes that are sizes or rates: 0 is no component (and no bandwidth no access).
_SIZES = (
    "width",
    "datawidth",
    "word_bits",
    "meshX",
    "meshY",
    "n_banks",
    "read_bandwidth",
    "write_bandwidth",
    "shared_bandwidth",
    "multiplier_width",
    "adder_width",
)
#: Attributes that are counts: whole numbers.
_COUNTS = ("depth", "meshX", "meshY", "n_banks")


def _number(attrs: dict[str, Any], key: str, src: str, where: str) -> float | None:
    """The attribute ``key`` (None when absent, empty or ``-``): a finite number, >= 0 (> 0
    for a size, ``_SIZES``; whole for a count, ``_COUNTS``)."""
    value = attrs.get(key)
    if value is None or (isinstance(value, str) and value.strip() in ("", "-")):
        return None
    try:
        if isinstance(value, bool):
            raise ValueError(value)
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise MagnetError(
            f"{key} must be a number, got {clipped_repr(value)}", source=src, field=where
        ) from None
    least = "> 0" if key in _SIZES else ">= 0"
    if not math.isfinite(number) or number < 0 or (key in _SIZES and number == 0):
        raise MagnetError(
            f"{key} must be a finite number {least}, got {number:g}", source=src, field=where
        )
    if key in _COUNTS and number != int(number):
        raise MagnetError(f"{key} must be a whole number, got {number:g}", source=src, field=where)
    return number


class MagnetExtensions(Strict):
    """The top-level ``magnet`` block of a file magnet wrote
    (``magnet.interop.timeloop_writer``): what counts, cycles and area depend on and Timeloop
    has no attribute for. Timeloop ignores it; ``load_timeloop`` honours it. Version 2
    (magnet 0.3) names a fan-out's ``topology`` and its ``reduction: interconnect``, which
    version 1 called ``network``; a version-1 block is read under the new names."""

    version: Literal[1, 2] = 2
    operand_bits: dict[str, dict[str, int]] = Field(default_factory=dict)
    capacity_bits: dict[str, int] = Field(default_factory=dict)
    shared_bandwidth: dict[str, float] = Field(default_factory=dict)
    streaming: list[str] = Field(default_factory=list)
    fanout: dict[str, Fanout] = Field(default_factory=dict)
    pipeline: SystolicPipeline | None = None
    densities: Densities | None = None
    sparse: dict[str, dict[str, TensorSparsity]] = Field(default_factory=dict)
    zeros: ComputeZeros = ComputeZeros()
    sparse_capacity: Literal["expected", "worst"] = "expected"
    postprocess: PostProcessor | None = None
    postprocess_area_um2: dict[str, Annotated[Price, Field(ge=0)]] = Field(default_factory=dict)
    router_area_um2: Price | None = Field(None, ge=0)
    overhead_area_um2: dict[OverheadKind, Annotated[Price, Field(ge=0)]] = Field(
        default_factory=dict
    )
    im2col_input_words: int | None = Field(None, ge=1)
    # what built the design: for the person reading the file, not read back
    design: dict[str, Any] = Field(default_factory=dict)
    layer: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_version_1(cls, data: Any) -> Any:
        if not (isinstance(data, dict) and data.get("version") == 1):
            return data
        fanouts = data.get("fanout")
        if isinstance(fanouts, dict):
            fanouts = {
                name: _fanout_v2(fanout) if isinstance(fanout, dict) else fanout
                for name, fanout in fanouts.items()
            }
        return {**data, "version": 2, "fanout": fanouts or {}}


def _fanout_v2(fanout: dict[str, Any]) -> dict[str, Any]:
    """A fan-out of a version-1 block under version 2's names (``Fanout.renamed``; the
    reduction ``network`` is ``interconnect``)."""
    out = {Fanout.renamed.get(key, key): v for key, v in fanout.items()}
    if out.get("reduction") == "network":
        out["reduction"] = "interconnect"
    return out


def _extensions(block: Any, src: str) -> MagnetExtensions:
    try:
        return MagnetExtensions.model_validate(block or {})
    except ValidationError as exc:
        message = validation_message(exc, MagnetExtensions)
        raise MagnetError(message, source=src, field="magnet") from None


def _arch(
    components: list[dict[str, Any]],
    keeps: dict[str, tuple[str, ...]],
    src: str,
    name: str,
    extra: MagnetExtensions,
) -> Arch:
    """The architecture of the flattened tree: its storage components (outermost first)
    and the compute unit, which must come last."""
    if not _is_compute(components[-1]):
        raise MagnetError(
            f"the innermost component {components[-1]['name']!r} (class "
            f"{components[-1]['class']!r}) is not a compute unit (a class like intmac)",
            source=src,
            field="architecture",
        )
    _check_extension_levels(extra, {_instances(c["name"], src)[0] for c in components[:-1]}, src)
    levels = []
    technology = None
    for comp in components[:-1]:
        level, tech = _storage_level(comp, keeps, src, extra)
        levels.append(level)
        technology = technology or tech
    compute = _compute_level(components[-1], src).model_copy(update={"zeros": extra.zeros})
    return _validated(
        Arch,
        src,
        "architecture",
        name=name,
        levels=tuple(levels),
        compute=compute,
        technology_nm=technology or 45.0,
        clock_ghz=TIMELOOP_CLOCK_GHZ,
        power_gating="idle-units",  # Timeloop charges leakage of the instances in use
        pipeline=extra.pipeline,
        postprocess=extra.postprocess,
        sparse_capacity=extra.sparse_capacity,
    )


def _check_extension_levels(extra: MagnetExtensions, names: set[str], src: str) -> None:
    """The ``magnet`` block names only levels the architecture has."""
    keys = ("operand_bits", "capacity_bits", "shared_bandwidth", "streaming", "fanout", "sparse")
    for key in keys:
        unknown = sorted(set(getattr(extra, key)) - names)
        if unknown:
            raise MagnetError(
                f"names levels the architecture does not have: {', '.join(unknown)}; "
                f"levels: {', '.join(sorted(names))}",
                source=src,
                field=f"magnet.{key}",
            )


def _storage_level(
    comp: dict[str, Any], keeps: dict[str, tuple[str, ...]], src: str, extra: MagnetExtensions
) -> tuple[StorageLevel, float | None]:
    """One storage component as a level (with what the ``magnet`` block adds), and the
    technology node it states (None when it states none)."""
    base, count = _instances(comp["name"], src)
    where = f"architecture.{base}"
    attrs = comp["attributes"]
    cls_key = comp["class"].lower()
    if cls_key not in _STORAGE_CLASSES:
        raise MagnetError(
            f"unknown storage class {comp['class']!r}; "
            f"known: {', '.join(sorted(_STORAGE_CLASSES))}",
            source=src,
            field=where,
        )
    cls = _STORAGE_CLASSES[cls_key]
    word_bits = _number(attrs, "datawidth", src, where) or _number(attrs, "word_bits", src, where)
    width = _number(attrs, "width", src, where) or word_bits or 8
    word_bits = word_bits or width
    depth = _number(attrs, "depth", src, where)
    mesh_x, mesh_y = _mesh(attrs, count, src, where)
    capacity = None if cls in ("dram", "dummy") or depth is None else int(depth * width)
    level = _validated(
        StorageLevel,
        src,
        where,
        name=base,
        component=cls,
        capacity_bits=extra.capacity_bits.get(base, capacity),
        word_bits=int(word_bits),
        block_words=max(1, int(width // word_bits)),
        read_bandwidth=_number(attrs, "read_bandwidth", src, where) or None,
        write_bandwidth=_number(attrs, "write_bandwidth", src, where) or None,
        shared_bandwidth=extra.shared_bandwidth.get(base)
        or _number(attrs, "shared_bandwidth", src, where)
        or None,
        keeps=keeps.get(base, ("weights", "inputs", "outputs")),
        mesh_x=mesh_x,
        mesh_y=mesh_y,
        operand_bits=extra.operand_bits.get(base, {}),
        streaming=base in extra.streaming,
        fanout=extra.fanout.get(base, Fanout()),
        sparse=extra.sparse.get(base, {}),
        attributes={
            "banks": int(_number(attrs, "n_banks", src, where) or 1),
            "timeloop_class": comp["class"],
        },
    )
    return level, _technology(attrs.get("technology"))


def _compute_level(mac: dict[str, Any], src: str) -> ComputeLevel:
    """The compute unit: ``multiplier_width`` (else ``width``, else 8) bits per operand and
    an ``adder_width`` accumulator (else twice the operand, at least the operand)."""
    base, count = _instances(mac["name"], src)
    attrs = mac["attributes"]
    where = f"architecture.{base}"
    mesh_x, mesh_y = _mesh(attrs, count, src, where)
    given = _number(attrs, "multiplier_width", src, where) or _number(attrs, "width", src, where)
    bits = int(given or 8)
    adder = int(_number(attrs, "adder_width", src, where) or 2 * bits)
    return _validated(
        ComputeLevel,
        src,
        where,
        name=base,
        mesh_x=mesh_x,
        mesh_y=mesh_y,
        weight_bits=bits,
        activation_bits=bits,
        accum_bits=max(bits, adder),
    )


_Model = TypeVar("_Model", StorageLevel, ComputeLevel, Arch)


def _validated(model: type[_Model], src: str, where: str, **fields: Any) -> _Model:
    """``model(**fields)``; what it refuses (a size beyond its bound) is one line naming the
    file and the component (``where``)."""
    try:
        return model(**fields)
    except ValidationError as exc:
        raise MagnetError(validation_message(exc, model), source=src, field=where) from None


def _mesh(attrs: dict[str, Any], count: int, src: str, where: str) -> tuple[int, int]:
    """meshX x meshY of a component, checked against its instance count ``name[1..N]``."""
    mesh_x = int(_number(attrs, "meshX", src, where) or 1)
    mesh_y = int(_number(attrs, "meshY", src, where) or max(1, count // mesh_x))
    if mesh_x * mesh_y != count:
        raise MagnetError(
            f"{count} instances but meshX x meshY = {mesh_x} x {mesh_y}", source=src, field=where
        )
    return mesh_x, mesh_y


def _technology(value: Any) -> float | None:
    if value is None:
        return None
    match = re.match(r"^\s*([0-9.]+)\s*nm\s*$", str(value))
    return float(match.group(1)) if match else None


# ---- problem ---------------------------------------------------------------------------


def _problem(problem: Any, src: str) -> Layer:
    if not isinstance(problem, dict) or "instance" not in problem:
        raise MagnetError("expected 'shape' and 'instance'", source=src, field="problem")
    instance = problem["instance"]
    if not isinstance(instance, dict):
        raise MagnetError(
            f"expected dimension: size pairs, got {instance!r}",
            source=src,
            field="problem.instance",
        )
    shape = problem.get("shape") or {}
    coeffs = {"Wstride": 1, "Hstride": 1, "Wdilation": 1, "Hdilation": 1}
    for c in shape.get("coefficients") or []:
        if c.get("name") in coeffs and c.get("default") is not None:
            where = f"problem.shape.coefficients.{c['name']}.default"
            coeffs[c["name"]] = _extent(c["default"], src, where)
    values: dict[str, int] = {}
    for key, value in instance.items():
        if key in ("densities", "H", "W", "Hpad", "Wpad"):
            continue  # input sizes and padding follow from P, Q, R, S and the strides
        where = f"problem.instance.{key}"
        if key in coeffs:
            coeffs[key] = _extent(value, src, where)
            continue
        try:
            dim = parse_dim(key)
        except ValueError as exc:
            raise MagnetError(str(exc), source=src, field=where) from None
        values[dim.name] = _extent(value, src, where)
    _check_projections(shape, src)
    try:
        return _layer(shape, values, coeffs)
    except MagnetError as exc:  # a layer its kind cannot be: the model's own message
        raise MagnetError(exc.message, source=src, field="problem.instance") from None


def _extent(value: Any, src: str, where: str) -> int:
    """A dimension's size, stride or dilation: a whole number in 1..``MAX_EXTENT``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_EXTENT:
        raise MagnetError(
            f"must be a whole number in 1..{MAX_EXTENT:,} (2**31 - 1), got {clipped_repr(value)}",
            source=src,
            field=where,
        )
    return value


def _layer(shape: dict[str, Any], values: dict[str, Any], coeffs: dict[str, int]) -> Layer:
    return Layer(
        name=str(shape.get("name", "timeloop-problem")),
        **values,
        wstride=coeffs["Wstride"],
        hstride=coeffs["Hstride"],
        wdilation=coeffs["Wdilation"],
        hdilation=coeffs["Hdilation"],
    )


_EXPECTED: dict[str, set[tuple[str, ...]]] = {
    "weights": {("G",), ("K",), ("C",), ("R",), ("S",)},
    "inputs": {("N",), ("G",), ("C",), ("P", "R"), ("Q", "S")},
    "outputs": {("N",), ("G",), ("K",), ("P",), ("Q",)},
}


def _check_projections(shape: dict[str, Any], src: str) -> None:
    """Each data space must index the dimensions magnet's conv loop nest gives it."""
    for ds in shape.get("data_spaces") or []:
        name = str(ds.get("name", "")).lower()
        role = "outputs" if ds.get("read_write") else _OPERAND_NAMES.get(name)
        if role is None:
            role = (
                "inputs" if any(len(rank) > 1 for rank in ds.get("projection", [])) else "weights"
            )
        ranks: set[tuple[str, ...]] = set()
        for rank in ds.get("projection") or []:
            dims = tuple(
                sorted((parse_dim(term[0]).name for term in rank), key=lambda d: "PQRS".find(d))
            )
            ranks.add(dims)
        if not ranks <= _EXPECTED[role]:
            raise MagnetError(
                f"data space {ds.get('name')!r} is projected as {sorted(ranks)}; magnet supports "
                f"conv-like {role} indexed by {sorted(_EXPECTED[role])}",
                source=src,
                field="problem.shape.data_spaces",
            )


# ---- mapping ---------------------------------------------------------------------------


def _factors(text: Any, src: str, where: str) -> dict[str, int]:
    try:
        return parse_factors(text if isinstance(text, dict) else str(text))
    except ValueError as exc:
        raise MagnetError(str(exc), source=src, field=where) from None


def _keeps(directives: list[dict[str, Any]], src: str) -> dict[str, tuple[str, ...]]:
    keeps: dict[str, tuple[str, ...]] = {}
    for i, d in enumerate(directives):
        if not isinstance(d, dict):
            raise MagnetError(f"entry {i} is not a mapping", source=src, field="mapping")
        if d.get("type") in ("datatype", "bypass"):
            target = _instances(str(d.get("target", "")), src)[0]
            current = set(keeps.get(target, ("weights", "inputs", "outputs")))
            for op in d.get("keep") or []:
                current.add(_operand(op, src))
            for op in d.get("bypass") or []:
                current.discard(_operand(op, src))
            keeps[target] = tuple(o for o in ("weights", "inputs", "outputs") if o in current)
    return keeps


def _operand(name: str, src: str) -> str:
    key = str(name).lower()
    if key not in _OPERAND_NAMES:
        raise MagnetError(
            f"unknown data space {name!r}; allowed: Weights, Inputs, Outputs",
            source=src,
            field="mapping",
        )
    return _OPERAND_NAMES[key]


def _mapping(directives: list[dict[str, Any]], arch: Arch, src: str) -> Mapping:
    names = [lvl.name for lvl in arch.levels]
    per_level: dict[str, dict[str, Any]] = {n: {} for n in names}
    for i, d in enumerate(directives):
        kind = d.get("type")
        if kind in ("datatype", "bypass"):
            continue
        target = _instances(str(d.get("target", "")), src)[0]
        where = f"mapping[{i}]"
        if target not in per_level:
            raise MagnetError(
                f"unknown target {target!r}; levels: {', '.join(names)}", source=src, field=where
            )
        factors = _factors(d.get("factors", ""), src, where)
        try:
            perm = [parse_dim(c).name for c in str(d.get("permutation", "")) if c.strip()]
        except ValueError as exc:
            raise MagnetError(f"permutation: {exc}", source=src, field=where) from None
        ordered_inner_first = [*perm, *[x for x in DIMS if x not in perm]]
        if kind == "temporal":
            # Timeloop permutations list the innermost loop first; magnet lists outermost first.
            per_level[target]["temporal"] = {
                dim: factors[dim] for dim in reversed(ordered_inner_first) if dim in factors
            }
        elif kind == "spatial":
            li = arch.level_index(target)
            fx, fy = arch.fanouts[li]
            split = d.get("split")
            if split is None:
                split = len(ordered_inner_first) if fx > 1 or fy == 1 else 0
            sx: dict[str, int] = {}
            sy: dict[str, int] = {}
            for pos, dim in enumerate(ordered_inner_first):
                if dim in factors:
                    (sx if pos < int(split) else sy)[dim] = factors[dim]
            per_level[target]["spatial_x"] = sx
            per_level[target]["spatial_y"] = sy
        else:
            raise MagnetError(
                f"unknown mapping type {kind!r}; allowed: temporal, spatial, datatype, bypass",
                source=src,
                field=where,
            )
    levels = tuple(LevelMapping(target=n, **per_level[n]) for n in names if per_level[n])
    return Mapping(levels=levels)


def _ert(ert: Any, art: Any, extra: MagnetExtensions) -> ErtCostModel | None:
    if not (ert or {}).get("tables"):
        return None
    energy: dict[str, dict[str, float]] = {}
    for table in (ert or {}).get("tables") or []:
        base = _leaf_name(table["name"])
        energy[base] = {}
        for action in table.get("actions") or []:
            field = f"ERT.{base}.{action.get('name')}"
            energy[base][str(action["name"])] = _price(action.get("energy"), "energy (pJ)", field)
    area: dict[str, float] = {}
    for table in (art or {}).get("tables") or []:
        base = _leaf_name(table["name"])
        area[base] = _price(table.get("area"), "area (um^2)", f"ART.{base}")
    overheads = {str(kind): um2 for kind, um2 in extra.overhead_area_um2.items()}
    area.update(extra.postprocess_area_um2)  # the unit's parts, by their full names
    return ErtCostModel(energy, area, extra.router_area_um2, overheads)


def _price(value: Any, what: str, field: str) -> float:
    """A number of the ERT or ART (``cost.base.price``: finite, >= 0, at most ``MAX_COST``),
    checked as the file is read: bad input naming the field, not a cost model's failure."""
    try:
        number = price(value)
    except ValueError as exc:
        raise MagnetError(f"{what}: {exc}", field=field) from None
    if number < 0:
        raise MagnetError(f"{what}: expected a number >= 0, got {number:g}", field=field)
    return number


def _leaf_name(full: Any) -> str:
    """``system.PE.ifmap_spad[1..168]`` -> ``ifmap_spad``."""
    return re.sub(r"\[[0-9.]*\]$", "", str(full)).split(".")[-1]


def load_constraints(path: str | Path, arch: Arch) -> Dataflow:
    """The ``architecture_constraints`` / ``mapspace_constraints`` of a Timeloop file."""
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise MagnetError("expected a Timeloop input", source=str(path))
    targets = list((data.get("architecture_constraints") or {}).get("targets") or [])
    targets += list((data.get("mapspace_constraints") or {}).get("targets") or [])
    return constraints_dataflow(targets, arch, str(path))


def constraints_dataflow(targets: list[dict[str, Any]], arch: Arch, src: str) -> Dataflow:
    """Timeloop mapspace constraints as a magnet dataflow.

    ``temporal``: fixed factors and the permutation (innermost first; a partial one fixes the
    innermost loops, the rest are free outside). ``spatial``: factors fixed to 1 forbid a dim
    on the fan-out, the others go to X or Y by ``split`` (positions before it are X). Keep /
    bypass lists set what a level keeps.
    """
    names = [lvl.name for lvl in arch.levels]
    rules: dict[str, dict[str, Any]] = {}
    for i, target in enumerate(targets):
        where = f"constraints[{i}]"
        if not isinstance(target, dict):
            raise MagnetError("each constraint must be a mapping", source=src, field=where)
        level = _instances(str(target.get("target", "")), src)[0]
        if level not in names:
            raise MagnetError(
                f"unknown target {level!r}; levels: {', '.join(names)}", source=src, field=where
            )
        rule = rules.setdefault(level, {"level": level})
        kind = target.get("type")
        factors = _factors(target.get("factors", ""), src, where)
        try:
            perm = [parse_dim(c).name for c in str(target.get("permutation", "")) if c.strip()]
        except ValueError as exc:
            raise MagnetError(f"permutation: {exc}", source=src, field=where) from None
        if kind == "temporal":
            rule["factors"] = factors
            if perm:
                rule["order"] = perm
        elif kind == "spatial":
            free = [d for d in (perm or list(DIMS)) if factors.get(d, 0) != 1]
            free += [d for d in DIMS if d not in perm and factors.get(d, 0) != 1 and perm]
            split = int(target.get("split", len(DIMS)))
            order = perm + [d for d in DIMS if d not in perm]
            rule["spatial_x"] = [d for d in free if order.index(d) < split]
            rule["spatial_y"] = [d for d in free if order.index(d) >= split]
            rule["spatial_factors"] = {d: f for d, f in factors.items() if f > 1}
        elif kind in ("bypass", "datatype"):
            current = set(arch.levels[names.index(level)].keeps)
            current |= {_operand(op, src) for op in target.get("keep") or []}
            current -= {_operand(op, src) for op in target.get("bypass") or []}
            rule["keep"] = sorted(current)
        else:
            raise MagnetError(
                f"unknown constraint type {kind!r}; allowed: temporal, spatial, bypass, datatype",
                source=src,
                field=where,
            )
    try:
        return Dataflow(
            name="timeloop-constraints",
            description=f"constraints of {src}",
            rules=tuple(Rule(**r) for r in rules.values()),
        )
    except ValidationError as exc:
        raise MagnetError(validation_message(exc, Dataflow), source=src) from None
