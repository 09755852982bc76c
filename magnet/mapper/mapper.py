"""What a mapper is: the search for the best mapping of one layer on one design.

Lifecycle (like an Optuna sampler): a mapper is built with its options, an ``Objective``, a
seed and a ``Budget``; ``map(layer, design)`` builds the constrained mapspace (``Space``),
then calls ``search(space, tracker, rng)``, the one method a mapper implements. ``search``
proposes batches of mappings and hands each to ``tracker.price``, which evaluates them,
keeps the best and stops the search (raises ``BudgetExhausted``) when the budget is spent.
``map`` returns a ``MapOutcome``: ``mapped`` (the search ran to its end), ``budget_exhausted``
(the budget ended it; the best mapping found so far, if any) or ``infeasible`` (no mapping
of this layer can run on this design, with the level, operand and excess that prevent it).

A design's mapspace is the union of its own and its ``alternatives``' (``Design``: the named
dataflows ``free`` includes, the design without a collector it may leave unused). ``map``
runs the whole search on each of them, with the same seed and budget, exactly as it would
run on that design alone, prices each one's best mapping on the design itself and keeps the
best: so ``free`` is never worse than a named dataflow, and a collector never costs more than
its own clock and static energy over the design without it.

Bad input (an unknown option, a malformed dataflow) raises ``MagnetError``; an infeasible
design never raises.

A user mapper subclasses ``Mapper`` and is registered with ``register_mapper`` or through
the entry-point group ``magnet.mappers``.
"""

from __future__ import annotations

import contextlib
import inspect
import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar

import numpy as np
import numpy.typing as npt
from annotated_types import Ge
from pydantic import BaseModel, BeforeValidator, Field, ValidationError

from magnet.arguments import check_fields, checked_call, checked_methods, require
from magnet.design import Design, searched_designs
from magnet.errors import DesignInfeasible, MagnetError, validation_message
from magnet.mapper.lockstep import clock, price
from magnet.mapper.mapspace import Space, alternative_name, lift
from magnet.mapping import Mapping, MappingBatch
from magnet.model.evaluate import (
    BatchResult,
    Result,
    evaluate_batch,
    layer_view,
    overflow_message,
)
from magnet.model.records import LayerRecord, MapperStats
from magnet.registry import Registry, plugin_errors
from magnet.strict import Public
from magnet.units import check_seed, real_number, whole_number
from magnet.workload.dims import Operand
from magnet.workload.layer import Layer

ENTRY_POINT_GROUP = "magnet.mappers"
#: A mapper's progress while it maps one layer: (mappings priced, mapspace size, seconds).
Progress = Callable[[int, float, float], None]
#: Scores of a batch (log of the objective, lower is better; inf: invalid): ``float[batch]``.
Scores = npt.NDArray[np.float64]


class Budget(Public):
    """How much a mapper may spend on one layer: mappings priced and / or seconds.

    None is no limit. A mapper checks the budget after every batch it prices, so it may
    overshoot ``evaluations`` by at most one batch. A design with alternatives (``Mapper.map``)
    gives each mapspace of the union the whole ``evaluations`` (so that its search is that of
    the design alone) and an equal share of the ``seconds``.
    """

    evaluations: Annotated[int, BeforeValidator(whole_number)] | None = Field(None, ge=1)
    seconds: Annotated[float, BeforeValidator(real_number)] | None = Field(None, gt=0)

    @property
    def unlimited(self) -> bool:
        """No limit on mappings nor on seconds."""
        return self.evaluations is None and self.seconds is None

    def describe(self) -> str:
        """The budget in words, e.g. ``3,000 mappings or 2 s``."""
        parts = []
        if self.evaluations is not None:
            parts.append(f"{self.evaluations:,} mappings")
        if self.seconds is not None:
            parts.append(f"{self.seconds:g} s")
        return " or ".join(parts) or "unlimited"


class BudgetExhausted(Exception):
    """Raised by ``Tracker.price`` to end a search whose budget is spent."""


@dataclass(frozen=True)
class Objective:
    """Minimise energy^energy x latency^latency."""

    energy: Annotated[float, Ge(0)] = 1.0
    latency: Annotated[float, Ge(0)] = 1.0
    name: str = "edp"

    def __post_init__(self) -> None:
        check_fields(self)
        if self.energy == self.latency == 0:
            raise MagnetError("an objective needs a positive weight", source="Objective")

    @classmethod
    def parse(cls, text: str | None) -> Objective:
        """``edp``, ``energy``, ``latency`` (``delay``), or weights ``energy=1,latency=2``;
        anything else is bad input naming ``--objective``."""
        text = "edp" if text is None else text.strip().lower()  # "" is not a default
        named = {
            "edp": (1.0, 1.0),
            "energy": (1.0, 0.0),
            "latency": (0.0, 1.0),
            "delay": (0.0, 1.0),
        }
        if text in named:
            return cls(*named[text], name=text)
        weights = {"energy": 0.0, "latency": 0.0}
        given: set[str] = set()
        for part in text.split(","):
            key, _, value = part.partition("=")
            key = {"delay": "latency"}.get(key.strip(), key.strip())
            try:
                if not value.isascii() or "_" in value:  # float() takes '１' and '1_0'
                    raise ValueError(value)
                weight = float(value)
            except ValueError:
                weight = math.nan
            if key not in weights or not (math.isfinite(weight) and weight >= 0):
                raise MagnetError(
                    f"cannot read objective {text!r}; allowed: edp, energy, latency, or "
                    "finite weights >= 0 like 'energy=1,latency=2'",
                    field="--objective",
                )
            if key in given:
                raise MagnetError(
                    f"{key} is given twice in {text!r}; give each weight once",
                    field="--objective",
                )
            given.add(key)
            weights[key] = weight
        if weights["energy"] == weights["latency"] == 0:
            raise MagnetError("an objective needs a positive weight", field="--objective")
        return cls(weights["energy"], weights["latency"], name=text)

    def score(self, result: BatchResult) -> Scores:
        """log of the objective (lower is better); invalid mappings score +inf."""
        s = np.zeros(result.energy_pj.shape)
        with np.errstate(divide="ignore"):  # a cost model pricing everything at 0: -inf
            for weight, value in (
                (self.energy, result.energy_pj),
                (self.latency, result.latency_cycles),
            ):
                if weight:  # a weight of 0 ignores the value, even log(0) (never 0 x -inf)
                    s = s + weight * np.log(value)
        scores: Scores = np.where(result.valid, s, np.inf)
        return scores


class Tracker:
    """Prices batches for a search: filters invalid mappings, keeps the best, enforces the
    budget and reports progress."""

    def __init__(
        self,
        space: Space,
        design: Design,
        objective: Objective,
        budget: Budget,
        progress: Progress | None = None,
        staying: bool = False,
    ):
        self.space, self.design, self.objective, self.budget = space, design, objective, budget
        #: score mappings with their weights staying on chip across batches (those that
        #: hold them: ``magnet.model.evaluate.holds_weights``)
        self.on_chip = (Operand.W,) if staying else ()
        self.progress = progress
        self.start = clock()
        self.evaluated = 0
        self.valid = 0
        self.best_score = np.inf
        self.best: tuple[MappingBatch, BatchResult] | None = None
        self.history: list[float] = []
        #: the last batch with an invalid mapping: the batch, which of its mappings fit the
        #: levels, whether any satisfied the dataflow's rules (not its results: a search's
        #: jobs in lock step would hold them all at once, ``magnet.mapper.lockstep``)
        self.last_invalid: tuple[MappingBatch, npt.NDArray[np.bool_], bool] | None = None
        #: the budget ended the search (also when a mapper caught ``BudgetExhausted``)
        self.exhausted = False
        #: mappings to start from (``magnet.mapper.warm``: the best of neighbouring designs,
        #: re-validated when priced); None: search afresh
        self.seeds: MappingBatch | None = None

    def room(self, wanted: int) -> int:
        """How many of ``wanted`` mappings the evaluation budget still allows (at least 1)."""
        if self.budget.evaluations is None:
            return wanted
        return max(1, min(wanted, self.budget.evaluations - self.evaluated))

    def price(self, batch: MappingBatch) -> Scores:
        """Scores of ``batch`` (inf where a rule or the capacity is violated); raises
        ``BudgetExhausted`` once the budget is spent (the batch counts)."""
        if batch.size == 0:
            return np.zeros(0)
        space = self.space
        result = price(space.layer, space.arch, batch, self.design.costs, self.on_chip)
        ruled = space.structure_ok(batch)
        ok = ruled & result.valid
        scores: Scores = np.where(ok, self.objective.score(result), np.inf)
        self.evaluated += batch.size
        self.valid += int(ok.sum())
        if not ok.all():
            self.last_invalid = (batch, result.valid, bool(ruled.any()))
        i = int(np.argmin(scores))
        if scores[i] < self.best_score:
            self.best_score = float(scores[i])
            self.best = (batch.take(np.array([i])), result.take(np.array([i])))
        self.history.append(self.best_score)
        elapsed = clock() - self.start
        if self.progress is not None:
            self.progress(self.evaluated, space.size(), elapsed)
        b = self.budget
        if (b.evaluations is not None and self.evaluated >= b.evaluations) or (
            b.seconds is not None and elapsed >= b.seconds
        ):
            self.exhausted = True
            raise BudgetExhausted
        return scores


@checked_methods()
@dataclass
class MapOutcome:
    """What a mapper found for one layer on one design (see the module docstring)."""

    status: Literal["mapped", "infeasible", "budget_exhausted"]
    layer: Layer
    design: Design
    mapper: str
    objective: Objective
    result: Result | None = None
    reason: str | None = None
    mappings_evaluated: int = 0
    valid_mappings: int = 0
    seconds: float = 0.0
    mapspace_size: float = 0.0
    history: list[float] = field(default_factory=list)
    #: which alternative of the design the best mapping came from (None: the design's own
    #: mapspace), e.g. ``ws-local-os`` or ``os-local-ws without AccumulationCollector``
    searched_as: str | None = None
    #: the best mapping found that holds its weights (``Result.holds_weights``: they can
    #: stay on chip across batches, ``magnet.model.network_result``); the ``result`` itself when
    #: it does, else the best of a search with the weights held (``map_network``); None:
    #: none found
    holding: Result | None = None
    #: the best mapping found that keeps at most ``LEAN_SHARE`` of the weight home (None:
    #: the best does, or none found): a layer whose weights do not stay runs under it to
    #: leave the home to those that do (``magnet.mapper.whole_network.lean_design``)
    lean: Result | None = None

    @property
    def ok(self) -> bool:
        """A mapping was found (the search may have ended on its budget)."""
        return self.result is not None

    @property
    def mapping(self) -> Mapping | None:
        """The best mapping found (None: none)."""
        return None if self.result is None else self.result.mapping

    def for_layer(self, layer: Layer) -> MapOutcome:
        """This outcome reported for ``layer``, which the design maps as the same loop nest
        (same mapping and numbers, the layer's own name and shape)."""
        if layer is self.layer:
            return self
        result = None if self.result is None else replace(self.result, layer=layer)
        holding = None if self.holding is None else replace(self.holding, layer=layer)
        lean = None if self.lean is None else replace(self.lean, layer=layer)
        return replace(self, layer=layer, result=result, holding=holding, lean=lean)

    def stats(self) -> MapperStats:
        """The search's statistics, as the record keeps them."""
        return MapperStats(
            mapper=self.mapper,
            objective=self.objective.name,
            status="mapped" if self.status == "mapped" else "budget_exhausted",
            mappings_evaluated=self.mappings_evaluated,
            valid_mappings=self.valid_mappings,
            seconds=self.seconds,
            mapspace_size=self.mapspace_size,
            start="searched" if self.result is None else self.result.start,
        )

    def record(self) -> LayerRecord:
        """The best mapping's ``LayerRecord`` with the search statistics."""
        if self.result is None:
            raise MagnetError(f"{self.status}: {self.reason}", field=self.layer.name)
        return self.result.record(self.design.dataflow.name, self.stats())


#: A mapper's own options model (``Mapper.Options``).
OptionsT = TypeVar("OptionsT", bound=BaseModel)


class Mapper(ABC, Generic[OptionsT]):
    """Base class of every mapper (see the module docstring).

    Generic in its options model: ``class FastMapper(Mapper[FastOptions])`` types
    ``self.options``."""

    #: Name on the command line (``--mapper NAME``) and in records.
    name: ClassVar[str]
    #: The mapper's own options (a pydantic model); unknown options are refused.
    Options: type[OptionsT]

    def __init__(
        self,
        *,
        objective: str | Objective | None = None,
        seed: int = 0,
        budget: Budget | None = None,
        progress: Progress | None = None,
        **options: Any,
    ) -> None:
        require(objective, str | Objective | None, field="--objective")
        require(budget, Budget | None, field="budget")
        self.objective = (
            objective if isinstance(objective, Objective) else Objective.parse(objective)
        )
        try:
            self.seed = check_seed(seed)
        except ValueError as exc:
            raise MagnetError(str(exc), field="--seed") from None
        self.budget = budget or Budget()
        self.progress = progress
        try:
            self.options = self.Options(**options)
        except ValidationError as exc:
            raise MagnetError(
                validation_message(exc, self.Options), source=f"mapper {self.name}"
            ) from None

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        """The mapper's own options (the fields of its ``Options`` model), e.g. ``samples``:
        what a caller may pass it beside the objective, seed, budget and progress."""
        return tuple(cls.Options.model_fields)

    def map(
        self,
        layer: Layer,
        design: Design,
        *,
        staying: bool = False,
        seeds: Sequence[Mapping] = (),
    ) -> MapOutcome:
        """The best mapping of ``layer`` on ``design`` (never raises for infeasibility);
        ``staying``: the best as the mapping runs with its weights on chip across batches
        (where it holds them: ``Result.holds_weights``; its ``result`` is priced as
        alone); ``seeds``: mappings to start from (``magnet.mapper.warm``; a mapper may
        ignore them)."""
        start = clock()
        outcome = MapOutcome("infeasible", layer, design, self.name, self.objective)
        best_score = np.inf
        exhausted = False
        reasons: list[str] = []
        union = searched_designs(design)
        # each mapspace gets the whole evaluation budget (its search is then the search of
        # that design alone) and its share of the seconds (a layer takes at most its budget)
        b = self.budget
        budget = (
            b if b.seconds is None else b.model_copy(update={"seconds": b.seconds / len(union)})
        )
        for searched in union:
            progress = self._progress(outcome, start)
            run = self._search(layer, searched, budget, progress, staying, seeds)
            outcome.mappings_evaluated += run.evaluated
            outcome.valid_mappings += run.valid
            outcome.mapspace_size += run.size
            outcome.history += run.history
            exhausted |= run.exhausted
            if run.best is None:
                reasons.append(run.reason or "")
                continue
            batch, result = run.best
            view = layer_view(layer, design.arch)
            if searched.arch is not design.arch:  # its best mapping, priced on the design
                batch = lift(batch, searched.arch, design.arch)
            if searched.arch is not design.arch or staying:  # and as it runs alone
                result = price(view, design.arch, batch, design.costs)
            scored = result
            if staying:
                weights = (Operand.W,)
                scored = evaluate_batch(
                    view, design.arch, batch, design.costs, on_chip=weights, counts=result.counts
                )
            score = float(self.objective.score(scored)[0])
            if score < best_score:
                best_score = score
                outcome.result = Result(
                    layer,
                    design.arch,
                    batch.mapping(0, design.arch),
                    design.costs,
                    result,
                    batch.keep,
                )
                outcome.searched_as = alternative_name(searched, design)
        outcome.seconds = clock() - start
        if outcome.result is not None:
            outcome.status = "budget_exhausted" if exhausted else "mapped"
            if exhausted:
                outcome.reason = f"the budget ({self.budget.describe()}) ended the search"
        else:
            outcome.status = "budget_exhausted" if exhausted else "infeasible"
            outcome.reason = reasons[0]
        return outcome

    def _progress(self, outcome: MapOutcome, start: float) -> Progress | None:
        """``self.progress`` for one search of a union: counts and seconds of the whole."""
        if self.progress is None:
            return None
        report, before, size = self.progress, outcome.mappings_evaluated, outcome.mapspace_size

        def progress(evaluated: int, space_size: float, _elapsed: float) -> None:
            report(before + evaluated, size + space_size, clock() - start)

        return progress

    def _search(
        self,
        layer: Layer,
        design: Design,
        budget: Budget,
        progress: Progress | None,
        staying: bool = False,
        seeds: Sequence[Mapping] = (),
    ) -> _Run:
        """The search of ``design``'s own mapspace (not its alternatives'), from ``seeds``
        where they are its mappings."""
        try:
            space = Space(layer_view(layer, design.arch), design.arch, design.dataflow)
        except DesignInfeasible as exc:
            return _Run(reason=str(exc))
        self.prepare(space)
        tracker = Tracker(space, design, self.objective, budget, progress, staying)
        if seeds:
            from magnet.mapper.warm import seed_batch

            tracker.seeds = seed_batch(seeds, space)
        with contextlib.suppress(BudgetExhausted):
            self.search(space, tracker, np.random.default_rng(self.seed))
        exhausted = tracker.exhausted
        run = _Run(
            tracker.best,
            exhausted,
            tracker.evaluated,
            tracker.valid,
            space.size(),
            tracker.history,
        )
        if tracker.best is None:
            run.reason = _why_no_mapping(space, tracker)
            if exhausted:
                run.reason = (
                    f"no valid mapping within the budget ({self.budget.describe()}); " + run.reason
                )
        return run

    def prepare(self, space: Space) -> None:
        """Called once per layer before ``search`` (e.g. to refuse a space too large)."""

    @abstractmethod
    def search(self, space: Space, tracker: Tracker, rng: np.random.Generator) -> None:
        """Propose mappings of ``space`` and price them with ``tracker.price``."""


@dataclass
class _Run:
    """One mapspace's search: its best (mapping, result) on its own design, and its counts."""

    best: tuple[MappingBatch, BatchResult] | None = None
    exhausted: bool = False
    evaluated: int = 0
    valid: int = 0
    size: float = 0.0
    history: list[float] = field(default_factory=list)
    reason: str | None = None


def _why_no_mapping(space: Space, tracker: Tracker) -> str:
    """Why a search found no valid mapping: the dataflow's rules, or the last overflow."""
    name = space.dataflow.name
    if tracker.last_invalid is not None:
        batch, fits, ruled = tracker.last_invalid
        if not ruled:
            return (
                f"no mapping satisfies dataflow {name!r} here (its stationarity and loop "
                "rules conflict with the level capacities)"
            )
        i = int(np.flatnonzero(~fits)[0]) if (~fits).any() else 0
        example = batch.take(np.array([i]))
        counts = evaluate_batch(
            space.layer, space.arch, example, tracker.design.costs, on_chip=tracker.on_chip
        ).counts
        return f"no valid mapping found under dataflow {name!r}; for example " + overflow_message(
            space.layer, space.arch, example, counts, 0
        )
    return f"no valid mapping found under dataflow {name!r}"


# ---- the registry --------------------------------------------------------------------------
def _adopt(name: str, cls: Any, origin: str) -> str:
    """A built-in mapper or an installed one (``magnet.registry.Adopt``): a ``Mapper``
    subclass, registered by its own ``name``."""
    checked = _checked(cls)
    MAPPERS.add(checked.name, checked, origin=origin)
    return checked.name


#: Mappers by name (``magnet.registry``): the built-ins (``magnet.mapper.mappers.BUILTIN``),
#: then those installed distributions offer, and names registered from Python.
MAPPERS = Registry("mapper", "magnet.mapper.mappers", _adopt, entry_points=ENTRY_POINT_GROUP)


def _checked(cls: Any) -> type[Mapper[Any]]:
    """``cls``, a ``Mapper`` subclass, else bad input."""
    if not (isinstance(cls, type) and issubclass(cls, Mapper)):
        raise MagnetError(f"{cls!r} is not a magnet.mapper.Mapper subclass")
    if not isinstance(getattr(cls, "name", None), str) or not cls.name:
        raise MagnetError(f"mapper {cls.__qualname__}: its 'name' must be a non-empty string")
    return cls


@checked_call
def register_mapper(cls: type[Mapper[Any]]) -> type[Mapper[Any]]:
    """Make a ``Mapper`` subclass available by its ``name`` (``--mapper NAME``); a name
    registered before from Python is replaced (a notebook cell run again)."""
    MAPPERS.add(_checked(cls).name, cls)
    return cls


def unregister_mapper(name: str) -> None:
    """Remove a mapper registered from Python (the built-ins stay)."""
    MAPPERS.remove(name)


def available_mappers() -> dict[str, type[Mapper[Any]]]:
    """Every registered mapper class by name."""
    return {name: entry.obj for name, entry in MAPPERS.entries().items()}


@checked_call
def get_mapper(name: str | Mapper[Any], **kwargs: Any) -> Mapper[Any]:
    """A mapper by name, built with ``kwargs`` (objective, seed, budget, options); a
    ``Mapper`` instance is returned as it is."""
    if isinstance(name, Mapper):
        return name
    known = available_mappers()
    if not isinstance(name, str) or name not in known:
        raise MagnetError(f"unknown mapper {name!r}; allowed: {', '.join(known)}", field="--mapper")
    cls = known[name]
    with plugin_errors("mapper", cls, "being built"):
        return cls(**kwargs)


def guarded_map(
    mapper: Mapper[Any],
    layer: Layer,
    design: Design,
    *,
    staying: bool = False,
    why: str = "",
    seeds: Sequence[Mapping] = (),
) -> MapOutcome:
    """``mapper.map(layer, design)`` as magnet calls it (``staying``, ``seeds``:
    ``Mapper.map``'s): an exception raised in a plug-in mapper's code is a ``PluginError``
    naming the mapper and the layer (``magnet.registry.plugin_errors``; ``why``: which
    search of it, when not the layer's own), never an infeasible layer or bad input."""
    doing = f"mapping layer {layer.name!r} on {design.name!r}{why}"
    # a plug-in mapper may override ``map`` as it was before ``staying`` and ``seeds``: it
    # scores as alone, and searches afresh
    known = inspect.signature(mapper.map).parameters
    extra: dict[str, Any] = {}
    if staying and "staying" in known:
        extra["staying"] = True
    if seeds and "seeds" in known:
        extra["seeds"] = seeds
    with plugin_errors("mapper", mapper, doing):
        return mapper.map(layer, design, **extra)
