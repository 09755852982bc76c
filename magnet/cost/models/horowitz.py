"""``horowitz45``: the built-in table (``TableCostModel``) at 45 nm, or at the node it is
given; ``horowitz45-65nm`` ... ``horowitz45-5nm``: the same table scaled to that node,
whatever node the architecture states."""

from __future__ import annotations

from dataclasses import replace

from magnet.cost.contract import Component
from magnet.cost.tables import TableCostModel


class Horowitz45(TableCostModel):
    """The built-in Horowitz table at 45 nm, or at ``technology_nm`` when given."""

    def __init__(self, technology_nm: float | None = None) -> None:
        super().__init__(45.0 if technology_nm is None else technology_nm)


class _HorowitzAtNode(TableCostModel):
    """The built-in table at a fixed node, whatever node the component states."""

    node: float = 45.0

    def __init__(self) -> None:
        super().__init__(self.node)
        self.name = f"horowitz45-{self.node:g}nm"

    @staticmethod
    def _here(component: Component) -> Component:
        """``component`` without its node (of the same class), so the table's node prices it."""
        attributes = {k: v for k, v in component.attributes.items() if k != "technology_nm"}
        return replace(component, attributes=attributes)

    def energy_pj(self, component: Component, action: str) -> float:
        """The table's energy at this model's node."""
        return super().energy_pj(self._here(component), action)

    def leakage_mw(self, component: Component) -> float:
        """The table's leakage at this model's node."""
        return super().leakage_mw(self._here(component))

    def area_um2(self, component: Component) -> float | None:
        """The table's area at this model's node."""
        return super().area_um2(self._here(component))

    def clock_pj_per_cycle(self, component: Component) -> float:
        """The table's clock energy at this model's node."""
        return super().clock_pj_per_cycle(self._here(component))


def _at_node(node: float) -> type[_HorowitzAtNode]:
    cls = type(
        f"Horowitz45At{node:g}nm",
        (_HorowitzAtNode,),
        {
            "node": float(node),
            "__doc__": f"The built-in Horowitz table scaled to {node:g} nm (the arch's node "
            "is overridden).",
            "__module__": __name__,
        },
    )
    globals()[cls.__name__] = cls
    return cls


#: The table at each node by its registered name (``horowitz45-7nm``), in the order listed.
AT_NODES: dict[str, type[_HorowitzAtNode]] = {
    f"horowitz45-{node_nm}nm": _at_node(node_nm) for node_nm in (65, 32, 16, 7, 5)
}
