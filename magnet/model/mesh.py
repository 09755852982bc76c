"""Where a package's DRAM enters its mesh of chiplets, and what the trip costs.

The parent of a chip-to-chip fan-out (a package's DRAM) reaches the mesh of chiplets over
links attached to some of them, the *ports* (``Fanout.ports``; by default one on each
chiplet of the row y = 0, the package's edge, as in Stream's ``simba`` example: six DRAM
links, one per column). A word from the parent crosses the port's link (one hop) and then
one link per step between neighbouring chiplets (Manhattan distance) to the chiplet that
needs it; every chiplet is served by its nearest port.

A layer partitioned over ``gx`` x ``gy`` chiplets (the mapping's spatial factors at the
parent) is placed where its chiplets are nearest their ports (the least mean trip; on a
mesh with ports on one edge, against that edge). A word that ``dx`` x ``dy`` chiplets need
(a multicast: the chiplets that differ only in dimensions the operand does not depend on)
goes to a group of chiplets taken as a contiguous ``dx`` x ``dy`` rectangle of the block
(the multicast dimensions innermost on each axis: the placement that keeps a multicast
short). Its words travel the shorter of two trees: from each port serving some of the
group, to the nearest member it serves and then one link per further member it serves; or
from one port (the least loaded of the nearest member's), to that member and then one link
per further member (each an upper bound on the shortest tree, exact along a row or a
column). Partial sums of a group are reduced on the way back along the same tree.

Bandwidth (Stream's fluid sharing within a phase, here a layer): every link carries at most
``link_gb_per_s`` each way; all of a port's words cross its link, so the busiest port link
carries the distinct words of every group with a member it serves, and a layer needs at
least those bits over the link's bandwidth (``magnet.model.evaluate._link_cycles``). A
link further in carries a part of one port's words, so a port's link is the busiest.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from magnet.arch.spec import Arch

#: Named places where DRAM's links attach to a ``width`` x ``height`` mesh (``dram_at``).
PLACES = ("edge", "corner", "centre")


def named_ports(place: str, width: int, height: int) -> tuple[tuple[int, int], ...]:
    """The chiplets (x, y) that DRAM's links attach to at a named ``place``: ``edge``, one
    per chiplet of the row y = 0 (a link per column, Stream's ``simba`` example); ``corner``,
    the chiplet (0, 0); ``centre``, the chiplet at the middle (rounded down)."""
    if place == "edge":
        return tuple((x, 0) for x in range(width))
    if place == "corner":
        return ((0, 0),)
    if place == "centre":
        return (((width - 1) // 2, (height - 1) // 2),)
    raise ValueError(f"unknown place {place!r}; allowed: {', '.join(PLACES)}")


@dataclass(frozen=True)
class Reach:
    """What one distinct word of an operand costs on the mesh (``Mesh.reach``)."""

    hops: float  # links it crosses: its multicast tree (or its trip, for one chiplet)
    busiest: float  # share of the operand's distinct words crossing the busiest port link


@dataclass(frozen=True)
class Trip:
    """How far a block's chiplets are from their ports (``Mesh.trip``), in hops."""

    mean_hops: float
    max_hops: float


@dataclass(frozen=True)
class Mesh:
    """A ``width`` x ``height`` mesh of chiplets whose parent's links attach at ``ports``."""

    width: int
    height: int
    ports: tuple[tuple[int, int], ...]

    def trip(self, gx: int, gy: int) -> Trip:
        """The trips to the chiplets of a ``gx`` x ``gy`` block, placed nearest its ports."""
        dist, _ = _placed(self, gx, gy)
        return Trip(float(dist.mean()), float(dist.max()))

    def reach(self, gx: int, gy: int, dx: int, dy: int) -> Reach:
        """A word that each ``dx`` x ``dy`` group of a ``gx`` x ``gy`` block needs."""
        return _reach(self, gx, gy, dx, dy)

    def routes(self, gx: int, gy: int, *groups: int) -> tuple[float, ...]:
        """For a ``gx`` x ``gy`` block and the weights', inputs' and outputs' groups
        (``groups``: dx, dy of each): the three operands' ``Reach.hops``, their
        ``Reach.busiest``, a word for one chiplet's hops and busiest share, and the block's
        mean and longest trips (``magnet.model.evaluate.Routes``)."""
        return _routes(self, gx, gy, groups)


@lru_cache(maxsize=4096)
def _placed(mesh: Mesh, gx: int, gy: int) -> tuple[np.ndarray, np.ndarray]:
    """[gy, gx] hops from each chiplet of the block to its nearest port, and that port's
    index, at the placement with the least mean trip (the first such, scanning rows)."""
    if not (1 <= gx <= mesh.width and 1 <= gy <= mesh.height):
        raise ValueError(f"a {mesh.width}x{mesh.height} mesh has no {gx}x{gy} block")
    ports = np.array(mesh.ports, dtype=np.int64)  # [port, (x, y)]
    ys, xs = np.mgrid[0:gy, 0:gx]
    best: tuple[np.ndarray, np.ndarray] | None = None
    for oy in range(mesh.height - gy + 1):
        for ox in range(mesh.width - gx + 1):
            x, y = xs + ox, ys + oy
            to_port = 1 + np.abs(x[..., None] - ports[:, 0]) + np.abs(y[..., None] - ports[:, 1])
            nearest = to_port.argmin(axis=-1)
            dist = to_port.min(axis=-1)
            if best is None or dist.sum() < best[0].sum():
                best = (dist, nearest)
    assert best is not None
    return best


@lru_cache(maxsize=16384)
def _routes(mesh: Mesh, gx: int, gy: int, groups: tuple[int, ...]) -> tuple[float, ...]:
    reach = [mesh.reach(gx, gy, groups[2 * k], groups[2 * k + 1]) for k in range(3)]
    one, trip = mesh.reach(gx, gy, 1, 1), mesh.trip(gx, gy)
    return (
        *(r.hops for r in reach),
        *(r.busiest for r in reach),
        one.hops,
        one.busiest,
        trip.mean_hops,
        trip.max_hops,
    )


@lru_cache(maxsize=16384)
def _reach(mesh: Mesh, gx: int, gy: int, dx: int, dy: int) -> Reach:
    dist, nearest = _placed(mesh, gx, gy)
    dx, dy = max(1, min(dx, gx)), max(1, min(dy, gy))
    groups = 0
    tree = 0.0
    load = np.zeros(len(mesh.ports))  # groups whose words cross each port's link
    for y0 in range(0, gy, dy):
        for x0 in range(0, gx, dx):
            d = dist[y0 : y0 + dy, x0 : x0 + dx].ravel()
            p = nearest[y0 : y0 + dy, x0 : x0 + dx].ravel()
            groups += 1
            ports = np.unique(p)
            # each port to the members it serves, or one port to the whole group
            split = sum(d[p == port].min() + (p == port).sum() - 1 for port in ports)
            whole = d.min() + d.size - 1
            if split <= whole:
                tree += split
                load[ports] += 1
            else:  # through the least loaded of the nearest members' ports
                tree += whole
                first = np.unique(p[d == d.min()])
                load[first[np.argmin(load[first])]] += 1
    return Reach(hops=tree / groups, busiest=float(load.max()) / groups)


def mesh_below(arch: Arch, li: int) -> Mesh:
    """The mesh of children below level ``li`` (innermost first) of ``arch``, a
    chip-to-chip fan-out, with its ports (``Fanout.ports``; none given: the edge)."""
    fx, fy = arch.fanouts[li]
    ports = arch.inner_first[li].fanout.ports or named_ports("edge", fx, fy)
    return Mesh(fx, fy, tuple(ports))
