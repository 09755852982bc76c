"""A network: an ordered list of layers, each with a repeat count.

Layers with the same loop nest (``Layer.shape_key``) price identically; ``unique_layers``
groups them so that each shape is mapped and evaluated once, while reports still list
every layer.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from itertools import pairwise
from typing import Annotated

from pydantic import Field, ValidationError, model_validator

from magnet.arguments import Count, checked_call
from magnet.errors import MagnetError, validation_message
from magnet.strict import Public
from magnet.units import Whole
from magnet.workload.dims import MAX_EXTENT
from magnet.workload.layer import Layer, ShapeKey

#: Layers, each alone or with its repeat count (``Network.of``).
LayerList = Annotated[
    list[Layer | tuple[Layer, Count]], "a list of Layers or (Layer, repeat >= 1) pairs"
]


class NetworkLayer(Public):
    """A layer of a network and how many times it repeats back to back."""

    layer: Layer
    repeat: Whole = Field(1, ge=1, le=MAX_EXTENT)


class Network(Public):
    """An ordered list of layers (names unique within the network).

    ``producers``: for a layer, the layers whose outputs make its input (through operations
    magnet does not price: activations, pooling, residual adds), from a graph (an ONNX
    model, the zoo's CNNs); a layer not listed reads the network's input. None: the list
    order is the graph (``handoffs``).
    """

    name: str
    layers: tuple[NetworkLayer, ...]
    notes: tuple[str, ...] = ()  # e.g. what an ONNX import left out (pooling, activations)
    producers: dict[str, tuple[str, ...]] | None = None

    @model_validator(mode="after")
    def _unique_names(self) -> Network:
        names = [entry.layer.name for entry in self.layers]
        repeated = sorted(n for n, count in collections.Counter(names).items() if count > 1)
        if repeated:
            raise ValueError(f"layer names must be unique; repeated: {', '.join(repeated)}")
        if not self.layers:
            raise ValueError("a network needs at least one layer")
        if self.producers is not None:
            unknown = sorted({n for k, v in self.producers.items() for n in (k, *v)} - set(names))
            if unknown:
                raise ValueError(f"producers name unknown layers: {', '.join(unknown)}")
        return self

    def handoffs(self) -> list[tuple[bool, bool]]:
        """For each pair of consecutive entries (i, i + 1): (i + 1's input is i's output
        alone, and no other layer needs i's output).

        From ``producers`` when the network has a graph. Without one, the list order is the
        graph: an entry feeds the next one when the next one's input channels are its output
        channels (G*K = G*C, same batch); a side branch that does not (a ResNet projection
        shortcut) reads from DRAM. An entry repeated more than once stands for several layers
        whose relations the list does not say (the Q, K, V projections share one input):
        its activations are not handed on.
        """
        entries = self.layers
        out = []
        if self.producers is None:
            for a, b in pairwise(entries):
                x, y = a.layer, b.layer
                chained = a.repeat == 1 and b.repeat == 1 and x.N == y.N and x.G * x.K == y.G * y.C
                out.append((chained, chained))
            return out
        consumers: dict[str, set[str]] = {}
        for consumer, producers in self.producers.items():
            for producer in producers:
                consumers.setdefault(producer, set()).add(consumer)
        for a, b in pairwise(entries):
            first, then = a.layer.name, b.layer.name
            single = a.repeat == 1 and b.repeat == 1
            fed = single and tuple(self.producers.get(then, ())) == (first,)
            out.append((fed, fed and consumers.get(first, set()) == {then}))
        return out

    @classmethod
    @checked_call
    def of(cls, name: str, layers: LayerList) -> Network:
        """Build from layers or (layer, repeat) pairs; bad input raises ``MagnetError``
        naming the entry (``layers.2.repeat: Input should be ...``)."""
        entries = [
            {"layer": x[0], "repeat": x[1]} if isinstance(x, tuple) else {"layer": x}
            for x in layers
        ]
        try:
            return cls.model_validate({"name": name, "layers": entries})
        except ValidationError as exc:
            raise MagnetError(validation_message(exc, cls), source=f"network {name!r}") from None

    # iterating a network yields its entries, not pydantic's (field, value) pairs (public API)
    def __iter__(self) -> Iterator[NetworkLayer]:  # type: ignore[override]
        """The entries, in order."""
        return iter(self.layers)

    def __len__(self) -> int:
        """How many entries (not counting repeats: ``layer_count``)."""
        return len(self.layers)

    @property
    def layer_count(self) -> int:
        """Layers counting repeats."""
        return sum(entry.repeat for entry in self.layers)

    @property
    def batch(self) -> int:
        """Inputs (images, sequences) one run of the network takes: the N of its layers
        (the zoo's and ONNX's layers carry the batch in N); the largest when they differ."""
        return max(e.layer.N for e in self.layers)

    @property
    def macs(self) -> int:
        """MACs of the whole network, repeats included."""
        return sum(entry.layer.macs * entry.repeat for entry in self.layers)

    def unique_layers(self) -> list[tuple[Layer, int, list[str]]]:
        """(representative layer, total count, names of the layers it stands for), in order."""
        groups: dict[ShapeKey, tuple[Layer, int, list[str]]] = {}
        for entry in self.layers:
            key = entry.layer.shape_key()
            layer, count, names = groups.get(key, (entry.layer, 0, []))
            groups[key] = (layer, count + entry.repeat, [*names, entry.layer.name])
        return list(groups.values())
