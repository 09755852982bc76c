"""``eyeriss-normalized``: Eyeriss (Chen, Emer, Sze, ISCA 2016) relative energy per 16-bit
access, in units of one 16-bit integer MAC of the built-in table at the component's node."""

from __future__ import annotations

import functools
import math

from magnet.cost.contract import (
    COMPONENT_TYPES,
    Component,
    CostModel,
    DummyComponent,
    MacComponent,
    NocLinkComponent,
    SramComponent,
    typed_component,
)
from magnet.cost.models.model_helpers import (
    KIB_BITS,
    access_width_bits,
    check_action,
    component_error,
    component_node,
    positive_number,
)
from magnet.cost.tables import TableCostModel
from magnet.errors import MagnetError

#: Eyeriss ISCA 2016, energy per 16-bit access relative to one 16-bit MAC.
EYERISS_RELATIVE = {"mac": 1.0, "regfile": 1.0, "noc": 2.0, "sram": 6.0, "dram": 200.0}
#: SRAM up to this size is priced as a register file (Eyeriss's RF is 0.5 KB).
EYERISS_RF_MAX_BITS = KIB_BITS
#: The distance Eyeriss's "inter-PE network 2x" covers (low end of its 1-2 mm; the built-in
#: table's default hop). A hop of ``hop_mm`` costs 2x * hop_mm / 1 mm per 16-bit word.
EYERISS_NOC_MM = 1.0
#: The unit: a 16-bit integer MAC with a 16-bit accumulator (Eyeriss keeps 16-bit psums).
EYERISS_UNIT_MAC = {"bits": 16, "accum_bits": 16, "datatype": "int"}
#: ``EYERISS_RELATIVE`` by typed component class.
_EYERISS_RELATIVE_BY_TYPE = {COMPONENT_TYPES[cls]: x for cls, x in EYERISS_RELATIVE.items()}


class EyerissNormalized(CostModel):
    """Eyeriss normalised costs per 16-bit word, in units of the table's 16-bit MAC.

    energy = relative cost x (bits moved / 16) x unit, with

    - relative cost: MAC 1, regfile (and SRAM <= 1 KiB) 1, SRAM 6, DRAM 200, NoC 2;
    - bits moved: ``width_bits`` (else ``word_bits``) for storage, ``bits`` for a MAC,
      ``word_bits`` for a NoC word; a NoC hop is additionally scaled by
      ``hop_mm / 1 mm`` (Eyeriss's 2x is one word over its 1-2 mm array network; the
      evaluator charges per word per hop, so a word crossing 1 mm in total pays 2x);
    - unit: the built-in table's 16-bit int MAC (16-bit multiply + 16-bit add) at the
      component's ``technology_nm`` (else the constructor's, else 45 nm): 0.7874 + 0.05 =
      0.8374 pJ at 45 nm; or ``mac_pj`` if given.

    Reads, writes and updates cost the same; leakage is 0 and there is no area (None).
    """

    name = "eyeriss-normalized"

    def __init__(self, technology_nm: float | None = None, mac_pj: float | None = None) -> None:
        self.technology_nm = technology_nm
        self.mac_pj = mac_pj
        if mac_pj is not None and not (math.isfinite(mac_pj) and mac_pj > 0):
            raise MagnetError(f"mac_pj = {mac_pj!r}; expected a number > 0", source=self.name)

    def supports(self, component: Component) -> bool:
        """Eyeriss's table has MACs, storage and the array's NoC; adders, routers and
        overheads go to the next model."""
        return isinstance(typed_component(component), _EYERISS_CLASSES)

    def unit_pj(self, component: Component) -> float:
        """The energy of Eyeriss's unit, one 16-bit MAC (pJ), at the component's node."""
        if self.mac_pj is not None:
            return self.mac_pj
        return _table_mac16_pj(component_node(component, self.technology_nm))

    def relative(self, component: Component) -> float:
        """The Eyeriss multiple of one 16-bit MAC for one 16-bit word of ``component``."""
        typed = typed_component(component)
        if isinstance(typed, SramComponent):
            capacity = typed.get("capacity_bits")
            if capacity is not None and capacity <= EYERISS_RF_MAX_BITS:
                return EYERISS_RELATIVE["regfile"]
        return _EYERISS_RELATIVE_BY_TYPE.get(type(typed), 0.0)

    def _sixteenths(self, component: Component) -> float:
        """Bits moved by one action / 16 (and hop length / 1 mm for a NoC)."""
        if isinstance(component, MacComponent):
            return positive_number(self, component, "bits", 8) / 16
        if isinstance(component, NocLinkComponent):
            hop_mm = component.get("hop_mm", EYERISS_NOC_MM)
            if not (isinstance(hop_mm, int | float) and math.isfinite(hop_mm) and hop_mm >= 0):
                raise component_error(
                    self, component, f"hop_mm = {hop_mm!r}; expected >= 0", "hop_mm"
                )
            return positive_number(self, component, "word_bits") / 16 * hop_mm / EYERISS_NOC_MM
        return access_width_bits(self, component) / 16

    def energy_pj(self, component: Component, action: str) -> float:
        """relative cost x (bits moved / 16) x the unit (see the class docstring)."""
        check_action(self, component, action)
        typed = typed_component(component)
        if isinstance(typed, DummyComponent):
            return 0.0
        return self.relative(typed) * self._sixteenths(typed) * self.unit_pj(typed)

    def leakage_mw(self, component: Component) -> float:
        """Eyeriss's table has no leakage: 0."""
        return 0.0

    def area_um2(self, component: Component) -> float | None:
        """Eyeriss's table has no area: None."""
        return None

    def describe(self, component: Component) -> str:
        """How the energy is made up, for ``magnet costs``."""
        typed = typed_component(component)
        if isinstance(typed, DummyComponent):
            return "0"
        what = "16-bit word-mm" if isinstance(typed, NocLinkComponent) else "16-bit words"
        return (
            f"{self.relative(typed):g}x MAC x {self._sixteenths(typed):g} {what} x "
            f"{self.unit_pj(typed):.4g} pJ"
        )


#: What ``EyerissNormalized`` prices: the classes of ``EYERISS_RELATIVE`` and dummies.
_EYERISS_CLASSES = (*_EYERISS_RELATIVE_BY_TYPE, DummyComponent)


@functools.cache
def _table_mac16_pj(technology_nm: float) -> float:
    """Eyeriss's unit, the built-in table's 16-bit int MAC, at ``technology_nm`` (pJ)."""
    component = MacComponent("eyeriss-unit", attributes=dict(EYERISS_UNIT_MAC))
    return TableCostModel(technology_nm).energy_pj(component, "compute")
