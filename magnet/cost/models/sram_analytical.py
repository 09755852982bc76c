"""``sram-analytical``: a CACTI-like analytical SRAM (bitlines ~ rows, wordlines ~ columns,
data I/O, H-tree, bank select), calibrated to the Horowitz fit at 32 KiB x 64 bits, 45 nm.
SRAM only: other classes go to the next model of the chain."""

from __future__ import annotations

import math

from magnet.cost.contract import Component, CostModel, SramComponent, typed_component
from magnet.cost.models.model_helpers import (
    BITS_PER_BYTE,
    access_width_bits,
    check_action,
    component_error,
    component_node,
    node_factors,
    positive_number,
)
from magnet.cost.tables import TableCostModel

#: Calibration point: Horowitz 45 nm fit (horowitz45.yaml) at 32 KiB, 64-bit access.
SRAM_CAL_BYTES = 32768
SRAM_CAL_WIDTH_BITS = 64
#: Share of the read energy at the calibration point (CACTI-like breakdown; assumption).
SRAM_ENERGY_SHARES = {"bitline": 0.45, "wordline": 0.15, "io": 0.15, "htree": 0.25}
#: Extra read energy per doubling of the bank count (bank decode and data mux; assumption),
#: as a share of the calibration read energy at 64 bits.
SRAM_BANK_SELECT_SHARE = 0.02
#: Share of the periphery area (30 % of a macro at the table's 0.7 array efficiency) that
#: scales with columns (sense amps, precharge, column mux), rows (decoders, wordline
#: drivers) and data bits (I/O latches and drivers); assumption.
SRAM_PERIPHERY_SHARES = {"columns": 0.6, "rows": 0.3, "io": 0.1}


def _organisation(bank_bits: float, width_bits: float) -> tuple[float, float]:
    """(rows, columns) of a bank: as square as the width allows (columns >= width)."""
    columns = max(width_bits, math.sqrt(bank_bits))
    return max(1.0, bank_bits / columns), columns


class SramAnalytical(CostModel):
    """A CACTI-like SRAM: energy and area from capacity, access width and banks.

    A bank of ``B = capacity / banks`` bits read ``W`` bits at a time is an array of
    ``C = max(W, sqrt B)`` columns by ``R = B / C`` rows (column mux ``C / W``). Per read::

        E = E0 * [ 0.45 (W/W0)(R/R0)             bitlines: W sensed columns, length ~ rows
                 + 0.15 (C/C0)                   wordline: runs across every column
                 + 0.15 (W/W0)                   data I/O: sense amps out, drivers
                 + 0.25 (W/W0) sqrt(Ctot/Ctot0)  H-tree: W bits across the whole macro
                 + 0.02 (W/W0) log2(banks) ]     bank select

    with ``E0`` the Horowitz 45 nm fit at the calibration point (32 KiB, W0 = 64 bits, one
    bank: R0 = C0 = 512): e0 * 4 ** alpha = 10.1595 * 4 ** 0.4726 = 19.5617 pJ. Writes and
    updates cost a read (the table's write_over_read = 1). Energy rises with capacity and
    width; more banks at equal capacity shorten bitlines and wordlines (less energy) but add
    bank select and periphery (more area)::

        area = bits * 0.346 um^2 + banks * (a_col * C + a_row * R + a_io * W)

    with the periphery coefficients set so that at the calibration point the periphery is
    the table's 30 % (array efficiency 0.7), split 60 / 30 / 10 between columns, rows and
    data bits. Leakage = area x the table's leakage per um^2 of an SRAM macro at that
    point. Other nodes multiply by the built-in node factors (component's ``technology_nm``,
    else the constructor's, else 45 nm). Only ``sram`` components: others are declined.
    """

    name = "sram-analytical"

    def __init__(self, technology_nm: float | None = None) -> None:
        self.technology_nm = technology_nm
        table = TableCostModel(45.0)
        cal = self.calibration_component()
        self.e0_pj = table.energy_pj(cal, "read")
        self.write_over_read = table.table.sram.write_over_read.value
        area = table.area_um2(cal)
        assert area is not None
        bits = SRAM_CAL_BYTES * BITS_PER_BYTE
        self.cell_um2 = table.table.sram.bitcell_area_um2.value
        periphery = area - bits * self.cell_um2
        self.r0, self.c0 = _organisation(bits, SRAM_CAL_WIDTH_BITS)
        self.a_col = SRAM_PERIPHERY_SHARES["columns"] * periphery / self.c0
        self.a_row = SRAM_PERIPHERY_SHARES["rows"] * periphery / self.r0
        self.a_io = SRAM_PERIPHERY_SHARES["io"] * periphery / SRAM_CAL_WIDTH_BITS
        self.leak_per_um2 = table.leakage_mw(cal) / area

    @staticmethod
    def calibration_component(technology_nm: float = 45.0) -> SramComponent:
        """The SRAM the model is calibrated at: 32 KiB, 64-bit access, one bank."""
        return SramComponent(
            "sram-calibration",
            attributes={
                "capacity_bits": SRAM_CAL_BYTES * BITS_PER_BYTE,
                "width_bits": SRAM_CAL_WIDTH_BITS,
                "banks": 1,
                "technology_nm": technology_nm,
            },
        )

    def supports(self, component: Component) -> bool:
        """SRAM only; the rest goes to the next model."""
        return isinstance(typed_component(component), SramComponent)

    def _shape(self, component: Component) -> tuple[float, float, float, float, float]:
        """(capacity bits, banks, width bits, rows, columns) of one bank of an SRAM."""
        if not isinstance(typed_component(component), SramComponent):
            raise component_error(self, component, "sram-analytical prices only sram", "class")
        capacity = positive_number(self, component, "capacity_bits")
        banks = positive_number(self, component, "banks", 1)
        width = access_width_bits(self, component)
        rows, columns = _organisation(capacity / banks, width)
        return capacity, banks, width, rows, columns

    def read_pj_45nm(self, component: Component) -> float:
        """Energy of one read at 45 nm (pJ): the sum of the class docstring."""
        capacity, banks, width, rows, columns = self._shape(component)
        w = width / SRAM_CAL_WIDTH_BITS
        shares = SRAM_ENERGY_SHARES
        total = math.sqrt(capacity / (SRAM_CAL_BYTES * BITS_PER_BYTE))
        return self.e0_pj * (
            shares["bitline"] * w * rows / self.r0
            + shares["wordline"] * columns / self.c0
            + shares["io"] * w
            + shares["htree"] * w * total
            + SRAM_BANK_SELECT_SHARE * w * math.log2(banks)
        )

    def area_um2_45nm(self, component: Component) -> float:
        """Area of one instance at 45 nm (um^2): bit cells plus each bank's periphery."""
        capacity, banks, width, rows, columns = self._shape(component)
        periphery = self.a_col * columns + self.a_row * rows + self.a_io * width
        return capacity * self.cell_um2 + banks * periphery

    def energy_pj(self, component: Component, action: str) -> float:
        """A read, or a write / update (``write_over_read`` reads), at the node."""
        check_action(self, component, action)
        read = self.read_pj_45nm(component)
        energy = read if action == "read" else read * self.write_over_read
        return energy * node_factors(component_node(component, self.technology_nm)).dynamic_energy

    def leakage_mw(self, component: Component) -> float:
        """Area times the table's leakage per um^2 of an SRAM macro, at the node."""
        leak = self.area_um2_45nm(component) * self.leak_per_um2
        return leak * node_factors(component_node(component, self.technology_nm)).leakage

    def area_um2(self, component: Component) -> float | None:
        """Area at the node (um^2)."""
        return (
            self.area_um2_45nm(component)
            * node_factors(component_node(component, self.technology_nm)).area
        )

    def describe(self, component: Component) -> str:
        """The organisation of a bank: rows, columns, column mux, banks."""
        _, banks, width, rows, columns = self._shape(component)
        return f"{rows:.0f} rows x {columns:.0f} cols, mux {columns / width:.3g}, {banks:g} bank(s)"
