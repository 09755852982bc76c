"""The physical model of on-chip energy and area, derived by hand on small machines.

Built-in 45 nm tables (magnet/cost/tables/horowitz45.yaml): int8 multiply 0.2 pJ; adds
follow the power law through Horowitz's 16- and 32-bit rows, 0.05 and 0.1 pJ, which is
linear: add(w) = 0.05 x w / 16 pJ (add(17) = 0.053125, add(18) = 0.05625, add(24) = 0.075);
a register file of 64 entries x 8 bits costs 8 x 1.06 fJ + 64 x 29.47 fJ x 6 / 32 = 0.36212 pJ
per access; wires 0.121 pJ/bit-mm (Keckler 2011); DRAM 162.5 pJ per 8-bit word; a clocked
flip-flop 5.5 fJ per cycle and as much again in the clock tree (11 fJ per bit-cycle).
Architectures here give no supply (the node's nominal) and run at 1 GHz (1 cycle = 1 ns).
"""

from __future__ import annotations

import math

import pytest

import magnet as mg
from magnet.arch.spec import Arch, ComputeLevel, Fanout, StorageLevel
from magnet.cost.contract import OVERHEAD_KINDS
from magnet.mapping import LevelMapping, Mapping

ALL = ("weights", "inputs", "outputs")
RF64 = 8 * 0.00106 + 64 * 0.02947 * 6 / 32  # 0.36212 pJ per access
OVERHEADS = OVERHEAD_KINDS
CLOCK8 = 8 * 0.0055 * 2  # an 8-bit register's clock and its share of the tree, pJ per cycle
GATE = 0.0057 * 2  # a clock-gating cell (Nangate 45 nm) and the tree's trunk to it, pJ a cycle
WAKE = 0.001  # waking a power-gated domain, pJ per um^2 of it


def add(bits: int) -> float:
    return 0.05 * bits / 16


def add_area(bits: int) -> float:
    """Horowitz's 16- and 32-bit adds are 67 and 137 um^2: the power law between them."""
    return 67 * (137 / 67) ** math.log2(bits / 16)


def vector_unit() -> Arch:
    """A buffer feeding 4 lanes whose products are reduced in an adder tree (0.01 mm apart)."""
    return Arch(
        name="vu",
        levels=(
            StorageLevel(name="DRAM", component="dram", keeps=ALL),
            StorageLevel(
                name="Buf",
                component="regfile",
                capacity_bits=512,
                keeps=ALL,
                fanout=Fanout(reduction="adder_tree", dense=True, pitch_mm=0.01),
            ),
        ),
        compute=ComputeLevel(name="MAC", mesh_x=4, accum_bits=24),
    )


def test_a_vector_mac_reduces_its_lanes_in_an_adder_tree() -> None:
    # C=4 over the 4 lanes, P=2 in time: 8 MACs, 2 vector operations.
    layer = mg.Layer(C=4, P=2)
    m = Mapping(levels=(LevelMapping(target="Buf", temporal={"P": 2}, spatial_x={"C": 4}),))
    r = mg.evaluate(layer, vector_unit(), m)
    # math: 8 MACs x (0.2 + add(24)) = 2.2; each vector operation merges 4 products (16 bits)
    # in 2 adds of 17 bits and 1 of 18 bits, replacing 3 of the 4 accumulations:
    # 2 x (2 x 0.053125 + 0.05625 - 3 x 0.075) = -0.125. Total 2.075 pJ.
    tree = 2 * (2 * add(17) + add(18) - 3 * add(24))
    assert r.energy_pj_by_category["math"] == pytest.approx(8 * (0.2 + add(24)) + tree)
    # the partial sums never cross the network: the words below the buffer are the 8 weights
    # and 8 inputs (one per lane per step), each over sqrt(4) / 2 = 1 pitch of 0.01 mm:
    # (8 + 8) x 8 bits x 0.121 x 0.01 = 0.15488 pJ
    assert r.energy_pj_by_category["noc"] == pytest.approx(16 * 8 * 0.121 * 0.01)
    # the buffer updates 2 reduced outputs (not 8 partial sums): reads 8 W + 8 I, fills 4 W +
    # 8 I, 2 updates = 30 accesses x 0.36212
    assert r.accesses["Buf"]["outputs"] == {"reads": 0.0, "fills": 0.0, "updates": 2.0}
    assert r.energy_pj_by_category["memory"] == pytest.approx(30 * RF64)
    # clock, 2 cycles, fine-gated (the default): the buffer's 8-bit port register loads on
    # both cycles (14 writes, at most one charge a cycle), each MAC's 8-bit input register on
    # both (8 MACs), and the 5 registers' gating cells tick every cycle (GATE each)
    assert r.latency_cycles == 2
    assert r.energy_pj_by_category["clock"] == pytest.approx(2 * 5 * (CLOCK8 + GATE))
    # without gating the 5 registers clock both cycles, and no cells
    ungated = vector_unit().model_copy(update={"clock_gating": "none"})
    assert mg.evaluate(layer, ungated, m).energy_pj_by_category["clock"] == pytest.approx(
        2 * 5 * CLOCK8
    )
    # control: a 6-bit address (64 entries of 8 bits) per buffer access, and a 32-bit one per
    # DRAM access (4 W + 8 I reads, 2 O updates)
    add6 = 0.03 * (0.05 / 0.03) ** math.log2(6 / 8)  # Horowitz's 8- and 16-bit adds
    assert r.energy_pj_by_category["control"] == pytest.approx(30 * add6 + 14 * add(32))
    assert r.energy_pj_by_category["dram"] == pytest.approx((4 + 8 + 2) * 162.5)


def array(pitch_mm: float = 0.5) -> Arch:
    """A buffer feeding 4 x 4 PEs (one register file each) over a tree, pitch_mm apart."""
    return Arch(
        name="array",
        levels=(
            StorageLevel(name="DRAM", component="dram", keeps=ALL),
            StorageLevel(
                name="GLB",
                capacity_bits=8 * 8192,
                keeps=ALL,
                fanout=Fanout(pitch_mm=pitch_mm),
            ),
            StorageLevel(
                name="PE", component="regfile", capacity_bits=64, keeps=ALL, mesh_x=4, mesh_y=4
            ),
        ),
        compute=ComputeLevel(name="MAC", mesh_x=4, mesh_y=4, accum_bits=24),
    )


def test_wires_price_a_multicast_as_one_tree() -> None:
    # K=16 over the 4 x 4 PEs: each PE its own weight and output, one input for all.
    # The PEs sit in a 4 x 4 grid, the buffer in the middle: a child is on average
    # sqrt(16) / 2 = 2 pitches away; a tree reaching m of them is 2 + (m - 1) pitches long.
    layer = mg.Layer(K=16)
    m = Mapping(levels=(LevelMapping(target="GLB", spatial_x={"K": 4}, spatial_y={"K": 4}),))
    r = mg.evaluate(layer, array(), m)
    weights = 16 * 8 * 0.121 * (2 * 0.5)  # 16 unicasts of 1 mm: 15.488
    inputs = 1 * 8 * 0.121 * ((2 + 15) * 0.5)  # one 8.5 mm tree: 8.228 (16 unicasts: 15.488)
    outputs = 16 * 24 * 0.121 * (2 * 0.5)  # 16 partial sums of 24 bits, 1 mm each: 46.464
    assert r.energy_pj_by_category["noc"] == pytest.approx(weights + inputs + outputs)
    # Timeloop parity: no network energy at all
    none = mg.evaluate(layer, mg.design(array(), noc="none"), m)
    assert none.energy_pj_by_category["noc"] == 0
    assert none.energy_pj == pytest.approx(r.energy_pj - (weights + inputs + outputs))


def test_a_spatial_reduction_merges_partial_sums_on_the_way_up() -> None:
    # C=16 over the 16 PEs: the 16 partial sums of one output merge into one word, with 15
    # adds of 24 bits (0.075 pJ each) and a reduction tree of 2 + 15 = 17 pitches.
    layer = mg.Layer(C=16)
    m = Mapping(levels=(LevelMapping(target="GLB", spatial_x={"C": 4}, spatial_y={"C": 4}),))
    r = mg.evaluate(layer, array(), m)
    weights = inputs = 16 * 8 * 0.121 * (2 * 0.5)
    outputs = 1 * 24 * 0.121 * ((2 + 15) * 0.5)
    adds = 15 * add(24)
    assert r.accesses["GLB"]["outputs"]["updates"] == 1
    assert r.energy_pj_by_category["noc"] == pytest.approx(weights + inputs + outputs + adds)


def test_an_idle_array_leaks_and_clocks_by_its_gating() -> None:
    # K=4 on 4 of the 16 PEs, 1 cycle (1 ns at 1 GHz). Every powered PE leaks (64 bits x
    # 1.2e-5 mW) and clocks its port register and MAC input register (CLOCK8 each) for the
    # cycle; the global buffer leaks 8 KiB x 1e-6 mW per bit.
    layer = mg.Layer(K=4)
    m = Mapping(levels=(LevelMapping(target="GLB", spatial_x={"K": 4}),))
    mac_area = 282 + add_area(24)  # multiply + add
    mac_leak = mac_area * 2e-6  # x 2e-6 mW/um^2, x 1 ns
    glb_leak = 8 * 8192 * 1e-6
    ungated = array().model_copy(update={"clock_gating": "none"})
    r = mg.evaluate(layer, ungated, m)
    assert r.latency_cycles == 1
    assert r.energy_pj_by_category["clock"] == pytest.approx(16 * (CLOCK8 + CLOCK8))
    leak = 16 * 64 * 1.2e-5 + 16 * mac_leak + glb_leak
    assert r.energy_pj_by_category["static"] == pytest.approx(leak, rel=1e-6)
    # idle units gated: only the 4 PEs in use leak and clock; each is woken (its register
    # file's 64 x 6 um^2 and its MAC's area at WAKE); the global buffer, one instance, is on
    idle = array().model_copy(update={"power_gating": "idle-units", "clock_gating": "idle-units"})
    g = mg.evaluate(layer, idle, m)
    assert g.energy_pj_by_category["clock"] == pytest.approx(4 * (CLOCK8 + CLOCK8))
    wakes = 4 * (64 * 6.0 + mac_area) * WAKE
    assert g.energy_pj_by_category["static"] == pytest.approx(
        4 * 64 * 1.2e-5 + 4 * mac_leak + glb_leak + wakes, rel=1e-6
    )
    # fine (the default): the 4 PEs in use load their port register (1 fill of the weight)
    # and their MAC's input register (1 MAC) once, and their 8 gating cells tick the cycle
    fine = mg.evaluate(layer, array(), m)
    assert fine.energy_pj_by_category["clock"] == pytest.approx(4 * (CLOCK8 + CLOCK8 + 2 * GATE))


def test_macs_that_share_an_input_register_clock_one() -> None:
    # K=16 over the 16 PEs, 1 cycle: every PE takes the same input. With 4 MACs on each input
    # register (as a vector MAC's lanes share theirs with the PE's other vector units), the
    # MACs have 16 / 4 = 4 input registers, not 16.
    layer = mg.Layer(K=16)
    m = Mapping(levels=(LevelMapping(target="GLB", spatial_x={"K": 4}, spatial_y={"K": 4}),))
    arch = array()
    shared = arch.model_copy(
        update={"compute": arch.compute.model_copy(update={"macs_per_input_register": 4})}
    )
    # none: the 16 PEs' port registers and the 4 input registers clock the cycle
    ungated = shared.model_copy(update={"clock_gating": "none"})
    r = mg.evaluate(layer, ungated, m)
    assert r.energy_pj_by_category["clock"] == pytest.approx((16 + 4) * CLOCK8)
    # fine: each PE loads its weight (16 loads), the 16 MACs' one input each (16 / 4 = 4
    # loads of the shared registers), and the 16 + 4 gating cells tick the cycle
    fine = mg.evaluate(layer, shared, m)
    assert fine.energy_pj_by_category["clock"] == pytest.approx((16 + 4) * (CLOCK8 + GATE))
    # the gating cells in the area: 16 + 4 of Nangate's 3.99 um^2 (and 32 unshared)
    assert mg.design(shared).costs.gate_area_um2 == pytest.approx(3.99)
    by = mg.design(shared).costs.area_um2_by_component
    alone = mg.design(array()).costs.area_um2_by_component
    assert alone["clock_gates"] - by["clock_gates"] == pytest.approx(12 * 3.99)
    # Simba's vector units share the lanes' registers (the input buffer multicasts to them)
    assert mg.templates.simba(vector_units=8).compute.macs_per_input_register == 8
    assert mg.templates.systolic().compute.macs_per_input_register == 1
    with pytest.raises(ValueError, match="macs_per_input_register 3 does not divide"):
        ComputeLevel(name="MAC", mesh_x=4, mesh_y=4, macs_per_input_register=3)


def test_leakage_is_power_so_a_slower_clock_leaks_longer() -> None:
    # The same cycle at 0.5 GHz lasts 2 ns: twice the static energy, the same clock energy.
    layer = mg.Layer(K=4)
    m = Mapping(levels=(LevelMapping(target="GLB", spatial_x={"K": 4}),))
    fast = mg.evaluate(layer, array(), m).energy_pj_by_category
    slow_arch = array().model_copy(update={"clock_ghz": 0.5})
    slow = mg.evaluate(layer, slow_arch, m).energy_pj_by_category
    assert slow["static"] == pytest.approx(2 * fast["static"], rel=1e-12)
    assert slow["clock"] == fast["clock"]


def test_simba_chip_area_has_the_parts_a_chip_has() -> None:
    costs = mg.design(mg.load_arch("simba-chip")).costs
    area = costs.area_mm2_by_component
    # 1024 MACs: 8-bit multiply 282 um^2 + 24-bit add 67 x (137/67) ** log2(24/16) = 101.8,
    # x 0.3025 at 16 nm (area.yaml: RecPipe's synthesized 12 nm PE over the 45 nm table's
    # same arithmetic) = 116.1 um^2 each
    mac = (282 + add_area(24)) * 0.3025
    assert area["MAC"] == pytest.approx(1024 * mac / 1e6, rel=1e-4)
    # 16 mesh routers of the PE-to-PE network: Celerity's 1881 um^2 at 16 nm
    assert area["routers"] == pytest.approx(16 * 1881 / 1e6, rel=1e-3)
    # its RISC-V controller: Rocket's 0.14 mm^2 at 40 nm over the logic factor there
    # (0.46 ** (ln(40/45) / ln(32/45)) = 0.7647) x 0.3025 = 0.05539 mm^2
    assert area["controller"] == pytest.approx(0.14 / 0.7647 * 0.3025, rel=1e-4)
    # what a chip has beyond its components, each from its own basis (horowitz45.yaml):
    # logic = MACs + register files + routers + gating cells; clock tree 5 % of it; white
    # space for a 70 % placement density of the logic and a 10 % halo around the SRAM macros
    # and the controller; control 2 % of the die (TPU v1); no PLL, pads or PHYs (none found)
    sram = sum(
        area[lvl.name] for lvl in mg.load_arch("simba-chip").levels if lvl.component == "sram"
    )
    logic = sum(v for k, v in area.items() if k not in OVERHEADS) - sram
    assert area["clock_tree"] == pytest.approx(0.05 * logic, rel=1e-9)
    halo = 0.1 * (sram + area["controller"])
    assert area["white_space"] == pytest.approx(1.05 * logic * (1 / 0.7 - 1) + halo)
    rest = sum(v for k, v in area.items() if k != "control")
    assert area["control"] == pytest.approx(rest * 0.02 / 0.98, rel=1e-9)
    assert not {"uncore", "pll", "die_to_die", "io"} & set(area)
