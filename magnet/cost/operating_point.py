"""Operating points: the supply and clock of a design, tied by its node's speed.

A node (``tables/scaling.yaml``) has a supply range ``vmin_v .. vmax_v`` around its nominal
``vdd_v``, and its logic follows the alpha-power law (Sakurai & Newton 1990)::

    speed(V) = ((V - vt) ** alpha / V) / ((vdd - vt) ** alpha / vdd) / delay

(1 at 45 nm's nominal supply; ``delay`` is the node's gate delay at nominal relative to
45 nm). A design's critical path is one published point of the chip its template follows,
``ClockReference(technology_nm, voltage_v, clock_ghz)``, so its highest clock at node ``n``
and supply ``V`` is::

    fmax(n, V) = reference.clock_ghz x speed_n(V) / speed_ref(reference.voltage_v)

``resolve`` turns what a design gives into its operating point: a clock alone runs at the
lowest supply that meets it (never below ``vmin_v``), a supply alone at ``fmax`` of that
supply, both are checked against each other. A supply outside the node's range, or a clock
above ``fmax(vmax_v)``, is refused with ``DesignInfeasible`` (the CLI exits 2 on it; a search
records the design as infeasible).
"""

from __future__ import annotations

from dataclasses import dataclass

from magnet.cost.tables import ScalingFactors, node_factors
from magnet.errors import DesignInfeasible

#: Bisection stops when the supply is known to this many volts.
_VOLTAGE_TOLERANCE_V = 1e-6
#: A clock within this fraction above fmax meets it (the fitted constants of
#: ``scaling.yaml`` carry four digits, so a published point is met to about 1e-4).
CLOCK_TOLERANCE = 1e-3


@dataclass(frozen=True)
class ClockReference:
    """A published (node, supply, clock) of a chip: the critical path of a template."""

    technology_nm: float
    voltage_v: float
    clock_ghz: float
    source: str


@dataclass(frozen=True)
class OperatingPoint:
    """The supply and clock a design runs at, and what its node allows."""

    clock_ghz: float
    voltage_v: float
    fmax_ghz: float  # the highest clock at ``voltage_v``
    vmin_v: float
    vnom_v: float
    vmax_v: float

    def as_record(self) -> dict[str, float]:
        """The point as a plain record (what results store)."""
        return {
            "clock_ghz": self.clock_ghz,
            "voltage_v": self.voltage_v,
            "fmax_ghz": self.fmax_ghz,
            "vmin_v": self.vmin_v,
            "vnom_v": self.vnom_v,
            "vmax_v": self.vmax_v,
        }


def speed(node: ScalingFactors, voltage_v: float) -> float:
    """Logic speed at ``voltage_v`` relative to 45 nm at its nominal supply (0 at or below
    the threshold)."""
    if voltage_v <= node.vt_v:
        return 0.0
    law: float = (voltage_v - node.vt_v) ** node.alpha / voltage_v
    nominal: float = (node.vdd_v - node.vt_v) ** node.alpha / node.vdd_v
    return law / nominal / node.delay


def fmax_ghz(technology_nm: float, voltage_v: float, reference: ClockReference) -> float:
    """The highest clock of ``reference``'s critical path at this node and supply."""
    ref = node_factors(reference.technology_nm)
    return (
        reference.clock_ghz
        * speed(node_factors(technology_nm), voltage_v)
        / speed(ref, reference.voltage_v)
    )


def resolve(
    technology_nm: float,
    reference: ClockReference,
    *,
    clock_ghz: float | None = None,
    voltage_v: float | None = None,
) -> OperatingPoint:
    """The operating point of a design that gives a clock, a supply, or both (one at
    least)."""
    if clock_ghz is None and voltage_v is None:
        raise TypeError("resolve() needs clock_ghz, voltage_v or both")
    node = node_factors(technology_nm)
    if voltage_v is not None:
        _check_range(node, voltage_v)
        top = fmax_ghz(technology_nm, voltage_v, reference)
        if clock_ghz is not None and clock_ghz > top * (1 + CLOCK_TOLERANCE):
            raise DesignInfeasible(
                f"{clock_ghz:g} GHz is above fmax {top:.4g} GHz at voltage_v {voltage_v:g} V "
                f"({node.technology_nm:g} nm); give a lower clock, a higher voltage, or only "
                "one of the two",
                field="clock_ghz",
            )
        return _point(node, clock_ghz if clock_ghz is not None else top, voltage_v, top)
    assert clock_ghz is not None  # one of the two is given (checked above)
    highest = fmax_ghz(technology_nm, node.vmax_v, reference)
    if clock_ghz > highest * (1 + CLOCK_TOLERANCE):
        raise DesignInfeasible(
            f"{clock_ghz:g} GHz is above fmax {highest:.4g} GHz at the highest supply of "
            f"{node.technology_nm:g} nm ({node.vmax_v:g} V)",
            field="clock_ghz",
        )
    low, high = node.vmin_v, node.vmax_v
    if fmax_ghz(technology_nm, high, reference) < clock_ghz:
        low = high  # within the tolerance of fmax at the highest supply
    if fmax_ghz(technology_nm, low, reference) >= clock_ghz:
        high = low  # the lowest supply already meets the clock
    while high - low > _VOLTAGE_TOLERANCE_V:
        middle = (low + high) / 2
        if fmax_ghz(technology_nm, middle, reference) >= clock_ghz:
            high = middle
        else:
            low = middle
    return _point(node, clock_ghz, high, fmax_ghz(technology_nm, high, reference))


def _check_range(node: ScalingFactors, voltage_v: float) -> None:
    """Refuse a supply outside the node's range (as infeasible)."""
    if not node.vmin_v - 1e-9 <= voltage_v <= node.vmax_v + 1e-9:
        raise DesignInfeasible(
            f"{voltage_v:g} V is outside the supply range of {node.technology_nm:g} nm; "
            f"allowed: {node.vmin_v:.4g} to {node.vmax_v:.4g} V (nominal {node.vdd_v:.4g} V)",
            field="voltage_v",
        )


def _point(node: ScalingFactors, clock_ghz: float, voltage_v: float, top: float) -> OperatingPoint:
    """The operating point at ``clock_ghz`` and ``voltage_v`` (fmax ``top``) on ``node``."""
    return OperatingPoint(
        clock_ghz=clock_ghz,
        voltage_v=voltage_v,
        fmax_ghz=top,
        vmin_v=node.vmin_v,
        vnom_v=node.vdd_v,
        vmax_v=node.vmax_v,
    )
