"""Where a package's DRAM enters its mesh, by hand (magnet.model.mesh)."""

from __future__ import annotations

import pytest

from magnet.model.mesh import Mesh, named_ports


def _mesh(place: str, width: int = 6, height: int = 6) -> Mesh:
    return Mesh(width, height, named_ports(place, width, height))


def _trip(mesh: Mesh, gx: int, gy: int) -> tuple[float, float]:
    trip = mesh.trip(gx, gy)
    return trip.mean_hops, trip.max_hops


def test_named_places() -> None:
    assert named_ports("edge", 3, 2) == ((0, 0), (1, 0), (2, 0))
    assert named_ports("corner", 3, 2) == ((0, 0),)
    assert named_ports("centre", 6, 6) == ((2, 2),)  # the middle, rounded down
    with pytest.raises(ValueError, match="allowed: edge, corner, centre"):
        named_ports("middle", 2, 2)


def test_trips_from_the_edge_a_corner_and_the_centre() -> None:
    # 6 x 6 from the edge: row y is y + 1 hops away (the port's link, then y steps): mean
    # 1 + 2.5, longest 6. From the corner (0, 0): 1 + x + y, mean 1 + 2.5 + 2.5 = 6,
    # longest 11. From (2, 2): 1 + |x - 2| + |y - 2|; per axis the distances 2, 1, 0, 1, 2,
    # 3 average 1.5: mean 1 + 3 = 4, longest 1 + 3 + 3 = 7
    assert _trip(_mesh("edge"), 6, 6) == pytest.approx((3.5, 6.0))
    assert _trip(_mesh("corner"), 6, 6) == pytest.approx((6.0, 11.0))
    assert _trip(_mesh("centre"), 6, 6) == pytest.approx((4.0, 7.0))


def test_a_small_block_sits_nearest_the_ports() -> None:
    # 2 x 2 chiplets of a 6 x 6 mesh: against the edge (rows 0-1: 1, 1, 2, 2 hops), in the
    # corner, around the centre (the port's chiplet and three neighbours: 1, 2, 2, 3)
    assert _trip(_mesh("edge"), 2, 2) == pytest.approx((1.5, 2.0))
    assert _trip(_mesh("corner"), 2, 2) == pytest.approx((2.0, 3.0))
    assert _trip(_mesh("centre"), 2, 2) == pytest.approx((2.0, 3.0))
    with pytest.raises(ValueError, match="no 7x1 block"):
        _mesh("edge").trip(7, 1)


def test_a_multicast_takes_the_shorter_tree_and_loads_the_ports() -> None:
    edge = _mesh("edge", 4, 4)
    # a word for all 16 chiplets: up each column from its port, 4 x (1 + 3) = 16 links,
    # through all four ports (each carries every such word)
    whole = edge.reach(4, 4, 4, 4)
    assert (whole.hops, whole.busiest) == (16, 1.0)
    # a word for each row: row 0 from its four ports (4 links); row y > 0 from one port,
    # y + 1 + 3 links, fewer than 4 (y + 1) from all four: (4 + 5 + 6 + 7) / 4 = 5.5; the
    # single-port rows go through the least loaded ports: two of the four carry 2 of the 4
    # rows' words, the busiest share 1/2
    rows = edge.reach(4, 4, 4, 1)
    assert (rows.hops, rows.busiest) == (5.5, 0.5)
    # a word for each column: up its own port, 1 + 3 links; a port carries a quarter
    columns = edge.reach(4, 4, 1, 4)
    assert (columns.hops, columns.busiest) == (4.0, 0.25)
    # a word for one chiplet: the mean trip, (1 + 2 + 3 + 4) / 4; a port serves 4 of 16
    one = edge.reach(4, 4, 1, 1)
    assert (one.hops, one.busiest) == (2.5, 0.25)
    # one port at the corner carries everything
    assert _mesh("corner", 4, 4).reach(4, 4, 1, 1).busiest == 1.0


def test_ports_of_ones_own() -> None:
    # DRAM at both ends of a row of 4: chiplets 1 and 2 hops from the nearer end, 1.5 mean
    mesh = Mesh(4, 1, ((0, 0), (3, 0)))
    assert _trip(mesh, 4, 1) == pytest.approx((1.5, 2.0))
    # each port serves two chiplets: half of the unicast words cross either port's link
    assert mesh.reach(4, 1, 1, 1).busiest == 0.5
    # a word for all four: 1 + 1 from each end (4 links), not 1 + 3 from one
    assert mesh.reach(4, 1, 4, 1).hops == 4.0
