"""Load a workload: a zoo name, an ONNX model or a YAML list of layers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from magnet.arguments import Count, checked_call
from magnet.errors import MagnetError, validation_message
from magnet.files import read_yaml
from magnet.strict import Strict
from magnet.units import Whole, number_text, whole_number
from magnet.workload.dims import MAX_EXTENT
from magnet.workload.layer import Layer, parse_layer
from magnet.workload.network import Network, NetworkLayer
from magnet.workload.sparsity import DensityTable, parse_densities


class _LayerEntry(Layer):
    """One entry of a network YAML: a layer (its fields, or ``shape: "K=..,C=.."``), its repeat
    count, and ``stride`` / ``dilation`` as shorthands for both axes."""

    # pydantic's own constructor: errors stay pydantic errors, located in the file
    __init__ = BaseModel.__init__

    name: str
    shape: str | None = None
    repeat: Whole = Field(1, ge=1, le=MAX_EXTENT)
    stride: Whole | None = Field(None, ge=1, le=MAX_EXTENT)
    dilation: Whole | None = Field(None, ge=1, le=MAX_EXTENT)

    @model_validator(mode="before")
    @classmethod
    def _expand(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if data.get("shape") is not None:
            given = sorted(set(data) & (set(Layer.model_fields) - {"name", "kind"}))
            if given:
                raise ValueError(f"give 'shape' or the dimension fields, not both ({given})")
            try:
                parsed = parse_layer(str(data["shape"]))
            except MagnetError as exc:
                raise ValueError(f"shape: {exc.message}") from None
            data.update(parsed.model_dump(exclude={"name", "kind"}))
        for both, (w, h) in (
            ("stride", ("wstride", "hstride")),
            ("dilation", ("wdilation", "hdilation")),
        ):
            value = data.get(both)  # a bad one is refused once, as itself
            if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
                data.setdefault(w, value)
                data.setdefault(h, value)
        return data

    def to_layer(self) -> Layer:
        """The layer itself (without the entry's repeat count and shorthands)."""
        return Layer(**self.model_dump(exclude={"shape", "repeat", "stride", "dilation"}))


class NetworkFile(Strict):
    """A network YAML: its name and its layers, in order."""

    name: str = "network"
    layers: list[_LayerEntry]


def network_from_yaml(path: str | Path) -> Network:
    """A network from a YAML list of layers; errors name the file and the field."""
    src = str(path)
    data = read_yaml(path)
    if not isinstance(data, dict) or "layers" not in data:
        raise MagnetError("expected 'name' and a 'layers' list", source=src)
    try:
        spec = NetworkFile(**data)
        entries = [NetworkLayer(layer=e.to_layer(), repeat=e.repeat) for e in spec.layers]
        return Network.model_validate({"name": spec.name, "layers": tuple(entries)})
    except ValidationError as exc:
        raise MagnetError(validation_message(exc, NetworkFile), source=src) from None
    except MagnetError as exc:
        raise MagnetError(str(exc), source=src) from None


def with_batch(network: Network, batch: int) -> Network:
    """The same network at another batch size (N of every layer)."""
    try:
        batch = whole_number(batch)
    except ValueError as exc:
        raise MagnetError(str(exc), field="--batch") from None
    if not 1 <= batch <= MAX_EXTENT:
        raise MagnetError(f"batch must be in 1..{MAX_EXTENT}, got {batch}", field="--batch")
    entries = tuple(
        NetworkLayer(layer=e.layer.model_copy(update={"N": batch}), repeat=e.repeat)
        for e in network.layers
    )
    return network.model_copy(update={"layers": entries})


def parse_workload_spec(spec: str) -> tuple[str, dict[str, int | float | str]]:
    """``"gpt2-small:mode=decode,kv_len=1024"`` -> ("gpt2-small", {mode: decode, kv_len: 1024}).

    Values made of digits are integers, and ``1e3`` is 1000 (a number written with an
    exponent is a number); others are strings. A spec without ``:`` has no parameters.
    """
    name, sep, rest = spec.partition(":")
    params: dict[str, int | float | str] = {}
    if not sep:
        return spec, params
    for part in rest.split(","):
        key, eq, value = (x.strip() for x in part.partition("="))
        if not key or not eq or not value:
            raise MagnetError(
                f"{part!r} is not KEY=VALUE; write NAME:key=value,key=value "
                "(e.g. gpt2-small:mode=decode,kv_len=1024)",
                source=spec,
                field="--workload",
            )
        if key in params:
            raise MagnetError(f"{key} is given twice", source=spec, field="--workload")
        try:
            number = number_text(value)
        except ValueError as exc:  # thousands of digits
            raise MagnetError(f"{key}: {exc}", source=spec, field="--workload") from None
        params[key] = value if number is None else number
    return name.strip(), params


def check_skip_ops(spec: str, field: str = "--skip-unpriced-ops") -> None:
    """Bad input when skipping unpriced operators (``field``: the flag, or a search space's
    ``skip_unpriced_ops``) is asked of workload ``spec``, which is not an ``.onnx`` file."""
    if Path(spec).suffix.lower() != ".onnx":
        raise MagnetError(
            "skipping unpriced operators applies to an .onnx workload (a zoo network or a "
            "network YAML has only layers magnet prices)",
            source=spec,
            field=field,
        )


@checked_call
def load_workload(
    spec: str | Path,
    batch: Count | None = None,
    skip_ops: bool = False,
    densities: DensityTable | dict[str, Any] | str | Path | None = None,
    **params: object,
) -> Network:
    """A zoo name (``resnet50``, with parameters as ``gpt2-small:mode=decode,kv_len=1024`` or
    keyword arguments), an ``.onnx`` file or a network ``.yaml`` file. ``skip_ops``: an ONNX
    model's operators magnet does not price are left out (listed in ``Network.skipped``)
    instead of refused; only for an ``.onnx`` file. ``densities``: the layers' densities
    (``with_densities``)."""
    network = _load(str(spec), batch, skip_ops, **params)
    return network if densities is None else with_densities(network, densities)


def with_densities(
    network: Network, densities: DensityTable | dict[str, Any] | str | Path
) -> Network:
    """``network`` with its MAC layers' densities (``magnet.workload.sparsity``): a
    ``DensityTable`` (or its mapping), a YAML file of one, or ``weights=2:4,inputs=0.5``
    inline. A table naming a layer the network does not have is bad input (the names it has
    are listed)."""
    table = density_table(densities)
    source = _density_source(densities)
    names = [e.layer.name for e in network.layers if not e.layer.is_postprocess]
    unknown = sorted(set(table.layers) - set(names))
    if unknown:
        shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
        raise MagnetError(
            f"layers: {', '.join(unknown)} not a MAC layer of {network.name!r} (its MAC layers: "
            f"{shown})",
            source=source,
        )
    entries = []
    for e in network.layers:
        if e.layer.is_postprocess:
            entries.append(e)
            continue
        own = table.layers.get(e.layer.name)
        chosen = table.default
        if own is not None:
            chosen = chosen.model_copy(update={k: getattr(own, k) for k in own.model_fields_set})
        entries.append(
            e.model_copy(update={"layer": e.layer.model_copy(update={"densities": chosen})})
        )
    return network.model_copy(update={"layers": tuple(entries)})


#: Density tables magnet ships (``magnet/workload/densities/NAME.yaml``, each citing its source).
SHIPPED_DENSITIES = Path(__file__).resolve().parent / "densities"


def shipped_densities() -> list[str]:
    """The names of the density tables magnet ships."""
    return sorted(p.stem for p in SHIPPED_DENSITIES.glob("*.yaml"))


def density_table(densities: DensityTable | dict[str, Any] | str | Path) -> DensityTable:
    """A ``DensityTable`` from itself, its mapping, a YAML file, a table magnet ships (by
    name: ``shipped_densities``) or ``weights=2:4,...``; bad input names the file (or
    ``--densities``) and the field."""
    if isinstance(densities, DensityTable):
        return densities
    if isinstance(densities, str) and densities in shipped_densities():
        densities = SHIPPED_DENSITIES / f"{densities}.yaml"
    source = _density_source(densities)
    if isinstance(densities, str | Path) and source != "--densities":
        densities = read_yaml(densities)
    elif isinstance(densities, str):
        try:
            densities = parse_densities(densities)
        except ValueError as exc:
            shipped = ", ".join(shipped_densities())
            raise MagnetError(
                f"{exc}; or a table magnet ships: {shipped}", field="--densities"
            ) from None
    try:
        return DensityTable.model_validate(densities)
    except ValidationError as exc:
        raise MagnetError(validation_message(exc, DensityTable), source=source) from None


def _density_source(densities: object) -> str:
    """The file densities come from, else ``--densities``."""
    if isinstance(densities, Path) or (
        isinstance(densities, str) and Path(densities).suffix.lower() in (".yaml", ".yml")
    ):
        return str(densities)
    return "--densities"


def _load(spec: str, batch: Count | None, skip_ops: bool, **params: object) -> Network:
    """``load_workload`` but for the densities."""
    from magnet.workload.zoo import ZOO, load_zoo

    if skip_ops:
        check_skip_ops(spec)
    name, given = parse_workload_spec(spec) if spec not in ZOO else (spec, {})
    if name in ZOO:
        merged = {**given, **params}
        if batch is not None:
            if "batch" in merged and merged["batch"] != batch:
                raise MagnetError(
                    f"batch is given twice ({merged['batch']} and {batch})", field="--batch"
                )
            merged["batch"] = batch
        return load_zoo(name, **merged)
    if given or params:
        raise MagnetError(
            f"parameters are for zoo networks ({', '.join(ZOO)}); {name!r} is not one",
            source=spec,
            field="--workload",
        )
    path = Path(spec)
    if path.suffix.lower() == ".onnx":
        from magnet.workload.onnx_import import load_onnx

        network, summary = load_onnx(path, batch=batch, skip_ops=skip_ops)
        return network.model_copy(update={"notes": (str(summary),)})
    if path.suffix.lower() in (".yaml", ".yml"):
        network = network_from_yaml(path)
        return network if batch is None else with_batch(network, batch)
    raise MagnetError(
        f"not a zoo network, .onnx or .yaml file; zoo: {', '.join(ZOO)} (parameters as "
        "NAME:key=value,...)",
        source=spec,
        field="--workload",
    )
