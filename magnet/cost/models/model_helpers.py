"""What the built-in cost models share: reading a component's attributes (a number > 0, the
access width, the node), checking an action, errors naming the model and the component, and
the built-in node factors."""

from __future__ import annotations

import functools
import math
from typing import Any

from magnet.cost.contract import ACTIONS, Component, CostModel, MacComponent, typed_component
from magnet.cost.tables import ScalingFactors, load_scaling_table, scaling_factors
from magnet.errors import MagnetError

BITS_PER_BYTE = 8
KIB_BITS = 8 * 1024


def component_error(
    model: CostModel, component: Component, message: str, field: str
) -> MagnetError:
    """Bad input naming the model, the component (and its class) and the field."""
    return MagnetError(
        message,
        source=f"cost model {model.name!r}, component {component.name!r} ({component.cls})",
        field=field,
    )


def positive_number(model: CostModel, component: Component, key: str, default: Any = None) -> float:
    """The component's ``key``, a finite number > 0 (else bad input naming it)."""
    value = component.get(key, default)
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value <= 0:
        raise component_error(model, component, f"{key} = {value!r}; expected a number > 0", key)
    return float(value)


def access_width_bits(model: CostModel, component: Component) -> float:
    """The bits one access moves: ``width_bits``, else ``word_bits``."""
    key = "width_bits" if component.get("width_bits") is not None else "word_bits"
    return positive_number(model, component, key)


def check_action(model: CostModel, component: Component, action: str) -> None:
    """``action`` is one of ``ACTIONS`` of the component's class, else bad input."""
    allowed = ACTIONS.get(component.cls)
    if allowed is None:
        raise component_error(
            model,
            component,
            f"unknown component class {component.cls!r}; allowed: {', '.join(ACTIONS)}",
            "class",
        )
    if action not in allowed:
        raise component_error(
            model,
            component,
            f"unknown action {action!r} for a {component.cls}; allowed: {', '.join(allowed)}",
            "action",
        )


def is_mac(component: Component) -> bool:
    """A MAC unit (of its typed class, or a plain ``Component`` of class ``mac``)."""
    return isinstance(typed_component(component), MacComponent)


@functools.cache
def node_factors(technology_nm: float) -> ScalingFactors:
    """The built-in node factors (``scaling.yaml``) from 45 nm to ``technology_nm``."""
    return scaling_factors(technology_nm, load_scaling_table())


def component_node(component: Component, default: float | None) -> float:
    """The component's ``technology_nm``, else ``default``, else 45 nm."""
    node = component.get("technology_nm")
    return float(node if node is not None else (45.0 if default is None else default))
