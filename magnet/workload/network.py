"""A network: an ordered list of layers, each with a repeat count.

Layers with the same loop nest (``Layer.shape_key``) price identically; ``unique_layers``
groups them so that each shape is mapped and evaluated once, while reports still list
every layer.
"""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict, Field, model_validator

from magnet.workload.layer import Layer


class NetworkLayer(BaseModel):
    """A layer of a network and how many times it repeats back to back."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    layer: Layer
    repeat: int = Field(1, ge=1)


class Network(BaseModel):
    """An ordered list of layers (names unique within the network)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    layers: tuple[NetworkLayer, ...]
    notes: tuple[str, ...] = ()  # e.g. what an ONNX import left out (pooling, activations)

    @model_validator(mode="after")
    def _unique_names(self) -> Network:
        names = [entry.layer.name for entry in self.layers]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"layer names must be unique; repeated: {', '.join(repeated)}")
        if not self.layers:
            raise ValueError("a network needs at least one layer")
        return self

    @classmethod
    def of(cls, name: str, layers: list[Layer | tuple[Layer, int]]) -> Network:
        """Build from layers or (layer, repeat) pairs."""
        entries = [
            NetworkLayer(layer=item[0], repeat=item[1])
            if isinstance(item, tuple)
            else NetworkLayer(layer=item)
            for item in layers
        ]
        return cls(name=name, layers=tuple(entries))

    def __iter__(self) -> Iterator[NetworkLayer]:  # type: ignore[override]
        return iter(self.layers)

    def __len__(self) -> int:
        return len(self.layers)

    @property
    def layer_count(self) -> int:
        """Layers counting repeats."""
        return sum(entry.repeat for entry in self.layers)

    @property
    def macs(self) -> int:
        return sum(entry.layer.macs * entry.repeat for entry in self.layers)

    def unique_layers(self) -> list[tuple[Layer, int, list[str]]]:
        """(representative layer, total count, names of the layers it stands for), in order."""
        groups: dict[tuple, tuple[Layer, int, list[str]]] = {}
        for entry in self.layers:
            key = entry.layer.shape_key()
            layer, count, names = groups.get(key, (entry.layer, 0, []))
            groups[key] = (layer, count + entry.repeat, [*names, entry.layer.name])
        return list(groups.values())
