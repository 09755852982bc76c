"""Area from cited figures (magnet/cost/tables/area.yaml), derived by hand.

SRAM macros (area per bit = area / (capacity x 8), a power law in capacity between the two
nearest published macros, clamped at the ends):
  16 nm (a commercial 12 nm compiler, RecPipe's artifact): 4 KB 4,684 um^2 (0.142944 um^2/bit),
        32 KB 29,142 (0.111168), 256 KB 183,290 (0.087400);
  7 nm (ASAP7): 0.5 KB 249 (0.060791), 2 KB 691 (0.042175), 4 KB 1,244, 8 KB 2,360,
        10 KB 2,884 (0.035205).
Logic over the 45 nm table: arithmetic 0.3025 at 16 nm (RecPipe's synthesized PE), 0.09152
at 7 nm; flip-flops 0.2132 at 16 nm (its flops vs Nangate's DFF_X1), 0.06448 at 7 nm (ASAP7's
DFFHQNx1 vs DFF_X1). 65, 45 and 32 nm keep the 45 nm table x Stillmaker & Baas (0.346 um^2
cell / 0.7 array efficiency per SRAM bit). The controller: Rocket's 0.14 mm^2 at 40 nm, over
the logic factor at 40 nm (0.46 ** (ln(40/45) / ln(32/45)) = 0.764698) x the node's.
"""

from __future__ import annotations

import hashlib
import math
import re

import pytest
from click.testing import CliRunner

import magnet as mg
from magnet.arch.spec import CONTROLLERS, Arch, ComputeLevel, Fanout, StorageLevel
from magnet.cli import main
from magnet.cost.contract import OVERHEAD_KINDS, Component, CostModel, OverheadComponent
from magnet.cost.tables import TABLE_DIR, TableCostModel, builtin_cost_model
from magnet.errors import MagnetError
from magnet.report.design_page import area_rows

ALL = ("weights", "inputs", "outputs")
LOGIC_40NM = 0.46 ** (math.log(40 / 45) / math.log(32 / 45))  # 0.764698
ROCKET_16NM_UM2 = 140_000 / LOGIC_40NM * 0.3025  # 55,381 um^2


def sram(capacity_bytes: float, banks: int = 1) -> Component:
    return Component(
        "buf", "sram", {"capacity_bits": capacity_bytes * 8, "width_bits": 64, "banks": banks}
    )


def per_bit(area_um2: float, capacity_bytes: float) -> float:
    return area_um2 / (capacity_bytes * 8)


# ---- SRAM macros ---------------------------------------------------------------------------
def test_a_published_16nm_macro_is_its_published_area() -> None:
    m16 = builtin_cost_model(16)
    assert m16.area_um2(sram(4096)) == pytest.approx(4684)  # 7.0 Mb/mm^2
    assert m16.area_um2(sram(256 * 1024)) == pytest.approx(183_290)  # 11.4 Mb/mm^2
    # the old model (45 nm cell / 0.7 x 0.19) gave 4 KB 3,077 um^2: periphery was missing
    assert 4684 > 32768 * 0.346 / 0.7 * 0.19 * 1.5


def test_a_16nm_macro_between_two_points_follows_their_power_law() -> None:
    # 8 KiB: t = ln(8/4) / ln(32/4) = 1/3 between 4 KB and 32 KB:
    # 0.142944 x (0.111168 / 0.142944) ** (1/3) = 0.131453 um^2/bit, x 65,536 = 8,614.9 um^2
    expected = per_bit(4684, 4096) * (per_bit(29142, 32768) / per_bit(4684, 4096)) ** (1 / 3)
    assert expected * 65536 == pytest.approx(8614.9, abs=0.1)
    assert builtin_cost_model(16).area_um2(sram(8192)) == pytest.approx(expected * 65536)


def test_a_macro_outside_the_points_is_clamped_to_the_nearest_density() -> None:
    m16 = builtin_cost_model(16)
    # Simba's 384 B accumulation buffer: below 4 KB, priced at 0.142944 um^2/bit = 439.1 um^2
    assert m16.area_um2(sram(384)) == pytest.approx(3072 * per_bit(4684, 4096))
    assert m16.area_um2(sram(384)) == pytest.approx(439.1, abs=0.1)
    # 1 MiB: above 256 KB, at 0.087400 um^2/bit = 733,160 um^2
    assert m16.area_um2(sram(1 << 20)) == pytest.approx(4 * 183_290)
    # magnet costs says so
    assert m16.describe(sram(384)) == (
        "bank 384 B below the 16 nm macros (4096-262144 B): at the nearest's density"
    )
    assert m16.describe(sram(8192)) is None


def test_a_banked_level_is_several_macros() -> None:
    m16 = builtin_cost_model(16)
    # 64 KiB in 4 banks: 4 macros of 16 KiB, t = ln(16/4) / ln(8) = 2/3 between 4 and 32 KB:
    # 0.142944 x (0.111168 / 0.142944) ** (2/3) = 0.120885 um^2/bit x 131,072 = 15,844.7 um^2
    small, large = per_bit(4684, 4096), per_bit(29142, 32768)
    bank = small * (large / small) ** (2 / 3) * 131072
    assert bank == pytest.approx(15844.7, abs=0.1)
    assert m16.area_um2(sram(65536, banks=4)) == pytest.approx(4 * bank)
    # one 64 KiB macro, t = 1/3 between 32 and 256 KB: 0.102602 um^2/bit = 53,793 um^2
    largest = per_bit(183_290, 262_144)
    one = large * (largest / large) ** (1 / 3) * 524288
    assert one == pytest.approx(53793.0, abs=0.1)
    assert m16.area_um2(sram(65536)) == pytest.approx(one)
    assert 4 * bank > one  # four macros have four peripheries


def test_a_7nm_macro_is_asap7s() -> None:
    m7 = builtin_cost_model(7)
    assert m7.area_um2(sram(4096)) == pytest.approx(1244)  # 512 x 64 bits
    # 1 KiB: t = 1/2 between 0.5 KB and 2 KB: sqrt(0.060791 x 0.042175) = 0.050635 um^2/bit,
    # x 8,192 = 414.8 um^2
    expected = math.sqrt(per_bit(249, 512) * per_bit(691, 2048)) * 8192
    assert expected == pytest.approx(414.8, abs=0.1)
    assert m7.area_um2(sram(1024)) == pytest.approx(expected)
    # 64 KiB: above 10 KB, at 0.035205 um^2/bit (28.4 Mb/mm^2; TSMC's N7 UHD macro: 29.2)
    assert m7.area_um2(sram(65536)) == pytest.approx(524288 * per_bit(2884, 10240))


def test_5nm_macros_are_7nms_by_the_bit_cells_ratio() -> None:
    # N5 HD cell 0.021 um^2 / N7 HD 0.027: 4 KB 1,244 x 0.7778 = 967.6 um^2
    assert builtin_cost_model(5).area_um2(sram(4096)) == pytest.approx(1244 * 0.021 / 0.027, 1e-4)


def test_a_node_between_table_nodes_is_log_linear_in_the_node() -> None:
    # 12 nm, 4 KiB: t = ln(12/7) / ln(16/7) = 0.6521 from 7 nm (1,244) to 16 nm (4,684)
    t = math.log(12 / 7) / math.log(16 / 7)
    assert builtin_cost_model(12).area_um2(sram(4096)) == pytest.approx(1244 * (4684 / 1244) ** t)
    # 22 nm lies between 16 nm's macros and 32 nm's scaled 45 nm cell (0.346 / 0.7 x 0.46)
    t = math.log(22 / 16) / math.log(32 / 16)
    old = 32768 * 0.346 / 0.7 * 0.46
    assert builtin_cost_model(22).area_um2(sram(4096)) == pytest.approx(4684 * (old / 4684) ** t)


@pytest.mark.parametrize(("node", "factor"), [(65, 1.5), (45, 1.0), (32, 0.46)])
def test_65_45_and_32nm_keep_the_scaled_45nm_table(node: float, factor: float) -> None:
    # no macro or library figure found at these nodes: Eyeriss at 65 nm is their check
    m = builtin_cost_model(node)
    assert m.area_um2(sram(8192)) == pytest.approx(65536 * 0.346 / 0.7 * factor)
    int8_mac = Component("mac", "mac", {"bits": 8, "accum_bits": 32})
    assert m.area_um2(int8_mac) == pytest.approx((282 + 137) * factor)


# ---- logic -----------------------------------------------------------------------------------
def test_logic_at_16_and_7nm_is_the_synthesized_and_library_figures() -> None:
    int8_mac = Component("mac", "mac", {"bits": 8, "accum_bits": 32})
    regfile = Component("rf", "regfile", {"capacity_bits": 64, "width_bits": 8})
    gate = Component("gate", "clock_gate", {})
    m16, m7 = builtin_cost_model(16), builtin_cost_model(7)
    # 16 nm: 419 um^2 x 0.3025 = 126.75; 64 bits x 6 um^2 x 0.2132 = 81.87; 3.99 x 0.2132
    assert m16.area_um2(int8_mac) == pytest.approx(419 * 0.3025)
    assert m16.area_um2(regfile) == pytest.approx(64 * 6.0 * 0.2132)
    assert m16.area_um2(gate) == pytest.approx(3.99 * 0.2132)
    # 7 nm: 419 x 0.09152 = 38.35; a register-file bit 6 x 0.06448 = 0.387 um^2
    assert m7.area_um2(int8_mac) == pytest.approx(419 * 0.09152)
    assert m7.area_um2(regfile) == pytest.approx(64 * 6.0 * 0.06448)
    # ASAP7's own clock gate, ICGx1, is 0.2624 um^2: the scaled Nangate cell within 2 %
    assert m7.area_um2(gate) == pytest.approx(0.2624, rel=0.02)


def test_energies_and_leakage_do_not_change_with_the_area_model() -> None:
    # leakage stays the 45 nm area x density x the leakage factor (this item is area only)
    m16 = builtin_cost_model(16)
    int8_mac = Component("mac", "mac", {"bits": 8, "accum_bits": 32})
    assert m16.leakage_mw(int8_mac) == pytest.approx(419 * 2e-6 * 0.3358)
    assert m16.energy_pj(sram(8192), "read") == pytest.approx(10.1595 * 0.32, rel=1e-4)


# ---- the parts beyond MACs and SRAM --------------------------------------------------------
def test_the_controller_is_rocket_scaled_by_the_logic_factor() -> None:
    assert builtin_cost_model(16).controller_um2 == pytest.approx(ROCKET_16NM_UM2)
    # 7 nm: 140,000 / 0.764698 x 0.09152 = 16,756 um^2; 45 nm: 183,078 um^2
    assert builtin_cost_model(7).controller_um2 == pytest.approx(140_000 / LOGIC_40NM * 0.09152)
    assert builtin_cost_model(45).controller_um2 == pytest.approx(140_000 / LOGIC_40NM)
    assert builtin_cost_model(40).controller_um2 == pytest.approx(140_000)


def test_which_templates_have_a_controller() -> None:
    assert CONTROLLERS == ("none", "risc-v")
    # Simba's chiplet sequences its PEs from a RISC-V core; Eyeriss and the systolic array
    # (TPU-like) have none; a package has one per chiplet
    assert mg.load_arch("simba-chip").controllers == 1
    assert mg.load_arch("eyeriss-chip").controllers == 0
    assert mg.load_arch("systolic-128").controllers == 0
    package = mg.templates.get_template("package").build({"chiplets_x": 2, "chiplets_y": 2})
    assert package.controllers == 4
    costs = mg.design(package).costs
    assert costs.area_mm2_by_component["controller"] == pytest.approx(4 * ROCKET_16NM_UM2 / 1e6)
    # no PLL, die-to-die PHY or pads: none found [NF], left out
    assert not {"pll", "die_to_die", "io"} & set(costs.area_mm2_by_component)
    none = mg.templates.simba(controller="none")
    assert "controller" not in mg.design(none).costs.area_mm2_by_component


def small_design(controller: str = "risc-v") -> Arch:
    """A 4 KiB buffer feeding 4 int8 MACs (24-bit sums) at 16 nm."""
    return Arch(
        name="small",
        levels=(
            StorageLevel(name="DRAM", component="dram", keeps=ALL),
            StorageLevel(name="Buf", capacity_bits=4096 * 8, keeps=ALL, fanout=Fanout()),
        ),
        compute=ComputeLevel(name="MAC", mesh_x=4, accum_bits=24),
        technology_nm=16,
        controller=controller,
    )


def test_the_total_of_a_small_design() -> None:
    area = mg.design(small_design()).costs.area_mm2_by_component
    um2 = {k: v * 1e6 for k, v in area.items()}
    # the 4 KB macro: 4,684 um^2
    assert um2["Buf"] == pytest.approx(4684)
    # 4 MACs: 8-bit multiply 282 + 24-bit add 67 x (137/67) ** log2(1.5) = 101.81 um^2,
    # x 0.3025 = 116.10 um^2 each
    mac = (282 + 67 * (137 / 67) ** math.log2(1.5)) * 0.3025
    assert um2["MAC"] == pytest.approx(4 * mac)
    # a clock-gating cell per MAC input register (clock_gating: fine): 4 x 3.99 x 0.2132
    assert um2["clock_gates"] == pytest.approx(4 * 3.99 * 0.2132)
    assert um2["controller"] == pytest.approx(ROCKET_16NM_UM2)
    logic = 4 * mac + 4 * 3.99 * 0.2132  # 467.8 um^2
    blocks = 4684 + ROCKET_16NM_UM2  # macros and the controller: a 10 % halo
    assert um2["clock_tree"] == pytest.approx(0.05 * logic)
    assert um2["white_space"] == pytest.approx(1.05 * logic * (1 / 0.7 - 1) + 0.1 * blocks)
    # control is 2 % of the finished die: (blocks x 1.1 + logic x 1.05 / 0.7) / 0.98
    total = (1.1 * blocks + 1.05 * logic / 0.7) / 0.98
    assert um2["control"] == pytest.approx(0.02 * total)
    assert sum(um2.values()) == pytest.approx(total)
    assert total == pytest.approx(68_136, abs=1)
    assert list(area) == ["Buf", "MAC", "clock_gates", *[k for k in OVERHEAD_KINDS if k in area]]


def test_a_plug_in_may_price_what_the_tables_leave_out() -> None:
    class Phys(CostModel):
        """Prices the die-to-die PHYs (1,000 um^2 a chiplet) and the PLL (500 um^2)."""

        name = "phys"

        def supports(self, component: Component) -> bool:
            return isinstance(component, OverheadComponent) and component.kind in (
                "pll",
                "die_to_die",
            )

        def energy_pj(self, component: Component, action: str) -> float:
            return 0.0

        def leakage_mw(self, component: Component) -> float:
            return 0.0

        def area_um2(self, component: Component) -> float | None:
            assert isinstance(component, OverheadComponent)
            each = 1000.0 if component.kind == "die_to_die" else 500.0
            return each * (component.chiplets or 1)

    package = mg.templates.get_template("package").build({"chiplets_x": 2, "chiplets_y": 2})
    area = mg.design(package, cost_model=[Phys()]).costs.area_um2_by_component
    assert area["die_to_die"] == pytest.approx(4000) and area["pll"] == pytest.approx(2000)


def test_the_design_page_names_what_is_left_out() -> None:
    package = mg.templates.get_template("package").build({"chiplets_x": 2, "chiplets_y": 2})
    for arch, d2d in ((mg.load_arch("simba-chip"), False), (package, True)):
        parts = mg.design(arch).costs.area_mm2_by_component  # a record of only its areas
        record = mg.NetworkRecord.model_construct(
            area_mm2_by_component=parts, energy_pj_by_level={}
        )
        rows = {r["name"]: r for r in area_rows(record, arch)}
        assert rows["controller"]["area_mm2"] == pytest.approx(arch.controllers * 0.05538, 1e-3)
        left_out = {"pll", "io", "die_to_die"} if d2d else {"pll", "io"}
        assert {k for k, r in rows.items() if "[NF]" in r["note"]} == left_out
        assert all(rows[k]["area_mm2"] is None for k in left_out)


def test_a_written_timeloop_file_keeps_the_controller(tmp_path) -> None:
    from magnet.interop import load_timeloop, write_timeloop

    arch = mg.templates.simba(vector_width=4, vector_units=2, pe_rows=1, pe_cols=2)
    result = mg.evaluate(mg.Layer(K=4, C=8, P=2), arch, dataflow="os-local-ws")
    back = load_timeloop(write_timeloop(result, tmp_path))
    again = mg.evaluate(back.layer, back.design(), back.mapping)
    controller = result.costs.area_um2_by_component["controller"]
    assert again.costs.area_um2_by_component["controller"] == pytest.approx(controller)
    assert again.area_mm2 == pytest.approx(result.area_mm2, rel=1e-9)


# ---- bad input -------------------------------------------------------------------------------
def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("value", ["arm", "RISC-V", "true", "1", "null", "[risc-v]"])
@pytest.mark.parametrize("kind", ["template", "tree"])
def test_an_unknown_controller_is_one_line_naming_the_allowed(tmp_path, value, kind) -> None:
    path = tmp_path / "a.yaml"
    if kind == "template":
        path.write_text(f"template: simba\ncontroller: {value}\n")
    else:
        path.write_text(
            "levels:\n  - {name: DRAM, component: dram, keeps: [weights, inputs, outputs]}\n"
            f"compute: {{name: MAC}}\ncontroller: {value}\n"
        )
    before = sha(path)
    out = CliRunner().invoke(main, ["map", "--arch", str(path), "--layer", "K=16,C=16"])
    assert out.exit_code == 2 and out.stdout == "" and "Traceback" not in out.stderr
    (line,) = out.stderr.splitlines()
    assert re.search(r"a\.yaml.*controller.*'none' or 'risc-v'", line), line
    assert sha(path) == before


def test_an_unknown_controller_from_python_is_a_magnet_error() -> None:
    with pytest.raises(MagnetError, match=r"controller.*'none' or 'risc-v'"):
        mg.templates.simba(controller="arm")


def area_table(tmp_path, old: str, new: str):
    text = (TABLE_DIR / "area.yaml").read_text()
    assert old in text
    path = tmp_path / "area.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        # a node the scaling table does not have
        ("\n  5:\n", "\n  6:\n", r"area\.yaml.*nodes.*6 nm are not nodes.*allowed: 5, 7, 16"),
        # a number without its provenance
        (
            '    source: "the same README: TSMC 40GPLUS"\n',
            "",
            r"area\.yaml.*controller\.technology_nm.*exactly one of",
        ),
        # two macros of one capacity
        ("capacity_bytes: 32768", "capacity_bytes: 4096", r"sram_macros\.points.*listed twice"),
        # a macro of no area
        ("area_um2: 29142", "area_um2: 0", r"area_um2.*greater than 0"),
        # a misspelt key
        (
            "logic_over_45nm:\n      value: 0.3025",
            "logic_over_45:\n      value: 0.3025",
            r"nodes\.16\.logic_over_45nm: Field required; also nodes\.16\.logic_over_45: Extra",
        ),
        # an area factor of zero or below, or not a number
        ("value: 0.2132", "value: 0", r"register_over_45nm\.value must be > 0"),
        ("value: 0.2132", "value: .nan", r"register_over_45nm\.value.*finite number"),
        # no macros at a node
        (
            "      points:\n        - capacity_bytes: 4096",
            "      points: []\n      old:\n        - capacity_bytes: 4096",
            r"nodes\.16\.sram_macros\.points: List should have at least 1 item",
        ),
        # the controller's node outside the tables
        ("  technology_nm:\n    value: 40", "  technology_nm:\n    value: 90", r"90 nm is outside"),
        ("  technology_nm:\n    value: 40", "  technology_nm:\n    value: 0", r"0 nm is outside"),
    ],
)
def test_a_broken_area_table_is_one_clear_message(tmp_path, old, new, message) -> None:
    path = area_table(tmp_path, old, new)
    before = sha(path)
    with pytest.raises(MagnetError, match=message):
        TableCostModel(16, area_path=path)
    assert sha(path) == before


@pytest.mark.parametrize("count", [-1, 1.5, "2", True])
def test_a_bad_controller_count_names_the_field(count) -> None:
    component = OverheadComponent(
        "controller", attributes={"kind": "controller", "controllers": count}
    )
    with pytest.raises(MagnetError, match=r"controllers"):
        builtin_cost_model(16).area_um2(component)
