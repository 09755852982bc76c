"""Cost models: the contract (``magnet.cost.base``), built-in tables and models, plug-ins
(``magnet.cost.registry``) and pricing an architecture (``magnet.cost.pricing``)."""

from magnet.cost.base import ACTIONS, Component, CostModel
from magnet.cost.pricing import (
    NOC_MODELS,
    ArchCosts,
    NocModel,
    address_bits,
    arch_components,
    price_arch,
)

__all__ = [
    "ACTIONS",
    "NOC_MODELS",
    "ArchCosts",
    "Component",
    "CostModel",
    "NocModel",
    "address_bits",
    "arch_components",
    "price_arch",
]
