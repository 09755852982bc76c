"""Cost models: the contract (``CostModel``), built-in tables, and pricing an architecture."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from magnet.arch.spec import Arch
from magnet.cost.base import ACTIONS, Component, CostModel, checked

__all__ = [
    "ACTIONS",
    "ArchCosts",
    "Component",
    "CostModel",
    "arch_components",
    "price_arch",
]

DEFAULT_HOP_MM = 0.2  # assumption: neighbouring PEs / vector units 0.2 mm apart


@dataclass(frozen=True)
class ArchCosts:
    """Per-action energies of one architecture under one cost model (index 0 = innermost).

    Storage energies are per access (one block of ``access_bits``); ``hop_pj`` is per word per
    hop of the fan-out network below each level.
    """

    read_pj: np.ndarray
    write_pj: np.ndarray
    update_pj: np.ndarray
    leak_pj_per_cycle: np.ndarray
    hop_pj: np.ndarray
    mac_pj: float
    mac_leak_pj_per_cycle: float
    area_mm2: float | None
    model_name: str
    sources: dict[str, str] = field(default_factory=dict)  # component -> model that priced it


def arch_components(arch: Arch) -> tuple[list[Component], Component, list[Component | None]]:
    """The priced components of an architecture: storage (innermost first), MAC, networks."""
    storage = [
        Component(
            name=lvl.name,
            cls=lvl.component,
            attributes={
                "capacity_bits": lvl.capacity_bits,
                "width_bits": lvl.access_bits,
                "word_bits": lvl.word_bits,
                "banks": int(lvl.attributes.get("banks", 1)),
                "technology_nm": arch.technology_nm,
                **{k: v for k, v in lvl.attributes.items() if k != "banks"},
            },
        )
        for lvl in arch.inner_first
    ]
    mac = Component(
        name=arch.compute.name,
        cls="mac",
        attributes={
            "bits": 8,
            "accum_bits": 24,
            "datatype": "int",
            "technology_nm": arch.technology_nm,
            **arch.compute.attributes,
        },
    )
    networks: list[Component | None] = []
    for lvl, (fx, fy) in zip(arch.inner_first, arch.fanouts, strict=True):
        if fx * fy == 1:
            networks.append(None)
            continue
        networks.append(
            Component(
                name=f"{lvl.name}.network",
                cls="network",
                attributes={
                    "word_bits": lvl.word_bits,
                    "hop_mm": float(lvl.attributes.get("hop_mm", DEFAULT_HOP_MM)),
                    "technology_nm": arch.technology_nm,
                },
            )
        )
    return storage, mac, networks


def price_arch(
    arch: Arch, models: CostModel | list[CostModel] | ArchCosts | None = None
) -> ArchCosts:
    """Ask the chain of models (then the built-in table) for every component's costs.

    Costs already priced (an ``ArchCosts``) are returned as they are, so callers can pass
    either a model chain or the prices of an earlier call.
    """
    if isinstance(models, ArchCosts):
        return models
    chain: list[CostModel] = (
        [] if models is None else (list(models) if isinstance(models, list | tuple) else [models])
    )

    sources: dict[str, str] = {}

    def pick(comp: Component) -> CostModel:
        for model in chain:
            if model.supports(comp):
                sources[comp.name] = model.name
                return model
        from magnet.cost.tables import builtin_cost_model  # the table supports every class

        chain.append(builtin_cost_model(arch.technology_nm))
        return pick(comp)

    def energy(comp: Component, action: str) -> float:
        model = pick(comp)
        return checked(model.energy_pj(comp, action), model, comp, f"{action} energy")

    def leak(comp: Component) -> float:
        model = pick(comp)
        return checked(model.leakage_pj_per_cycle(comp), model, comp, "leakage")

    def area(comp: Component) -> float | None:
        model = pick(comp)
        value = model.area_um2(comp)
        return None if value is None else checked(value, model, comp, "area")

    storage, mac, networks = arch_components(arch)
    read = np.array([energy(c, "read") for c in storage])
    write = np.array([energy(c, "write") for c in storage])
    update = np.array([energy(c, "update") for c in storage])
    leaks = np.array([leak(c) for c in storage])
    hop = np.array([0.0 if n is None else energy(n, "transfer") for n in networks])

    areas = [(area(c), lvl.instances) for c, lvl in zip(storage, arch.inner_first, strict=True)]
    areas.append((area(mac), arch.compute.instances))
    known = [a * n for a, n in areas if a is not None]
    area_mm2 = sum(known) / 1e6 if known else None
    names = sorted(set(sources.values()), key=lambda n: [m.name for m in chain].index(n))
    return ArchCosts(
        read_pj=read,
        write_pj=write,
        update_pj=update,
        leak_pj_per_cycle=leaks,
        hop_pj=hop,
        mac_pj=energy(mac, "compute"),
        mac_leak_pj_per_cycle=leak(mac),
        area_mm2=area_mm2,
        model_name="+".join(names),
        sources=sources,
    )
