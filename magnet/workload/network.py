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
from magnet.workload.dims import MAX_EXTENT, Operand
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
    """An ordered list of layers (names unique within the network), in the order they run.

    ``producers``: for a layer, the layers whose outputs make its input, from a graph (an
    ONNX model, the zoo's networks), followed through operations that only move or reshape
    data (and, on request, ONNX operators left out: ``skipped``); a layer not listed reads
    the network's input. A layer with two activation inputs (an ``eltwise`` ``add`` or
    ``mul``) lists one producer per input; any other layer listing several reads one input
    put together from them (a concatenation). None: the list order is the graph
    (``handoffs``). ``skipped``: ONNX operators the import left out, by op type, when asked
    to (``load_onnx(skip_ops=True)``).
    """

    name: str
    layers: tuple[NetworkLayer, ...]
    notes: tuple[str, ...] = ()  # e.g. what an ONNX import left out
    producers: dict[str, tuple[str, ...]] | None = None
    skipped: dict[str, int] = Field(default_factory=dict)

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
        producers, consumers = self.edges()
        out = []
        for i, (a, b) in enumerate(pairwise(self.layers)):
            fed = a.repeat == 1 and b.repeat == 1 and producers[i + 1] == (i,)
            out.append((fed, fed and consumers[i] == (i + 1,)))
        return out

    def edges(self) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
        """(producers, consumers) of every entry, as indices into ``layers``: the entries
        whose outputs make its input(s), and those that read its output.

        From ``producers`` when the network has a graph. Without one, the list order is the
        graph: an entry feeds the next one when the next one's input channels are its output
        channels (``Layer.in_channels``, same batch) and neither repeats; a side branch that
        does not (a ResNet projection shortcut) reads from DRAM, and so does the second input
        of an ``eltwise`` ``add`` or ``mul``.
        """
        entries = self.layers
        producers: list[tuple[int, ...]] = [() for _ in entries]
        if self.producers is None:
            for i, (a, b) in enumerate(pairwise(entries)):
                x, y = a.layer, b.layer
                single = a.repeat == 1 and b.repeat == 1
                if single and x.N == y.N and x.out_channels == y.in_channels:
                    producers[i + 1] = (i,)
        else:
            index = {e.layer.name: i for i, e in enumerate(entries)}
            for i, e in enumerate(entries):
                producers[i] = tuple(index[p] for p in self.producers.get(e.layer.name, ()))
        consumers: list[list[int]] = [[] for _ in entries]
        for i, made_of in enumerate(producers):
            for p in dict.fromkeys(made_of):
                consumers[p].append(i)
        return producers, [tuple(c) for c in consumers]

    def without_postprocess(self) -> Network:
        """The network's MAC layers only (post-processing layers left out; a layer fed
        through them is fed by what fed them)."""
        kept = [e for e in self.layers if not e.layer.is_postprocess]
        if not kept:
            raise MagnetError(f"network {self.name!r} has no MAC layer", field="layers")
        if self.producers is None:
            return self.model_copy(update={"layers": tuple(kept)})
        post = {e.layer.name for e in self.layers if e.layer.is_postprocess}

        def sources(name: str) -> tuple[str, ...]:
            found: list[str] = []
            for p in self.producers.get(name, ()) if self.producers else ():
                found += list(sources(p)) if p in post else [p]
            return tuple(dict.fromkeys(found))

        graph = {e.layer.name: sources(e.layer.name) for e in kept}
        return self.model_copy(update={"layers": tuple(kept), "producers": graph})

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
        """MACs of the whole network, repeats included (post-processing layers have none)."""
        return sum(entry.layer.macs * entry.repeat for entry in self.layers)

    @property
    def weight_words(self) -> int:
        """Weights of the MAC layers, repeats included (a post-processing layer's constants,
        a bias or a scale, are the unit's)."""
        return sum(
            e.layer.operand_size(Operand.W) * e.repeat
            for e in self.layers
            if not e.layer.is_postprocess
        )

    def unique_layers(self, mapped: bool = False) -> list[tuple[Layer, int, list[str]]]:
        """(representative layer, total count, names of the layers it stands for), in order;
        ``mapped``: the MAC layers only (those a mapper maps)."""
        groups: dict[ShapeKey, tuple[Layer, int, list[str]]] = {}
        for entry in self.layers:
            if mapped and entry.layer.is_postprocess:
                continue
            key = entry.layer.shape_key()
            layer, count, names = groups.get(key, (entry.layer, 0, []))
            groups[key] = (layer, count + entry.repeat, [*names, entry.layer.name])
        return list(groups.values())
