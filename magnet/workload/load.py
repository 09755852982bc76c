"""Load a workload: a zoo name, an ONNX model or a YAML list of layers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from magnet.errors import MagnetError, validation_message
from magnet.files import read_yaml
from magnet.workload.layer import Layer, parse_layer
from magnet.workload.network import Network, NetworkLayer


class _LayerEntry(BaseModel):
    """One entry of a network YAML: the Layer fields (or ``shape: "K=..,C=.."``) + repeat."""

    model_config = ConfigDict(extra="forbid")

    name: str
    shape: str | None = None
    repeat: int = Field(1, ge=1)
    kind: str = "conv"
    N: int | None = None
    G: int | None = None
    K: int | None = None
    C: int | None = None
    P: int | None = None
    Q: int | None = None
    R: int | None = None
    S: int | None = None
    wstride: int | None = None
    hstride: int | None = None
    wdilation: int | None = None
    hdilation: int | None = None
    stride: int | None = None
    dilation: int | None = None

    @model_validator(mode="after")
    def _one_form(self) -> _LayerEntry:
        given = [k for k in Layer.model_fields if k not in ("name", "kind") and getattr(self, k)]
        if self.shape and given:
            raise ValueError(f"give 'shape' or the dimension fields, not both ({given})")
        return self

    def to_layer(self) -> Layer:
        if self.shape is not None:
            layer = parse_layer(self.shape, name=self.name)
            return layer.model_copy(update={"kind": self.kind})
        values: dict[str, Any] = {
            k: getattr(self, k)
            for k in Layer.model_fields
            if k not in ("name", "kind") and getattr(self, k) is not None
        }
        for both, (w, h) in (
            ("stride", ("wstride", "hstride")),
            ("dilation", ("wdilation", "hdilation")),
        ):
            if getattr(self, both) is not None:
                values.setdefault(w, getattr(self, both))
                values.setdefault(h, getattr(self, both))
        return Layer(name=self.name, kind=self.kind, **values)


class _NetworkFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = "network"
    layers: list[_LayerEntry]


def network_from_yaml(path: str | Path) -> Network:
    src = str(path)
    data = read_yaml(path)
    if not isinstance(data, dict) or "layers" not in data:
        raise MagnetError("expected 'name' and a 'layers' list", source=src)
    try:
        spec = _NetworkFile(**data)
        entries = [NetworkLayer(layer=e.to_layer(), repeat=e.repeat) for e in spec.layers]
        return Network(name=spec.name, layers=tuple(entries))
    except ValidationError as exc:
        raise MagnetError(validation_message(exc, _NetworkFile), source=src) from None
    except MagnetError as exc:
        raise MagnetError(str(exc), source=src) from None


def with_batch(network: Network, batch: int) -> Network:
    """The same network at another batch size (N of every layer)."""
    if batch < 1:
        raise MagnetError(f"batch must be >= 1, got {batch}", field="--batch")
    entries = tuple(
        NetworkLayer(layer=e.layer.model_copy(update={"N": batch}), repeat=e.repeat)
        for e in network.layers
    )
    return Network(name=network.name, layers=entries)


def load_workload(spec: str, batch: int | None = None) -> Network:
    """A zoo name (``resnet50``), an ``.onnx`` file or a network ``.yaml`` file."""
    from magnet.workload.zoo import ZOO, load_zoo

    if spec in ZOO:
        return load_zoo(spec, **({} if batch is None else {"batch": batch}))
    path = Path(spec)
    if path.suffix.lower() == ".onnx":
        from magnet.workload.onnx_import import load_onnx

        network, summary = load_onnx(path, batch=batch)
        return network.model_copy(update={"notes": (str(summary),)})
    if path.suffix.lower() in (".yaml", ".yml"):
        network = network_from_yaml(path)
        return network if batch is None else with_batch(network, batch)
    raise MagnetError(
        f"not a zoo network, .onnx or .yaml file; zoo: {', '.join(ZOO)}",
        source=spec,
        field="--workload",
    )
