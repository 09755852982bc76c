"""Mappers: the best mapping of a layer (or of every layer of a network) on a design.

from magnet.mapper import Budget, get_mapper, map_network
outcome = get_mapper("fast", objective="edp", budget=Budget(seconds=2)).map(layer, design)
outcome.status, outcome.result, outcome.reason
"""

from magnet.mapper.mapper import (
    Budget,
    MapOutcome,
    Mapper,
    Objective,
    Tracker,
    available_mappers,
    get_mapper,
    guarded_map,
    register_mapper,
    unregister_mapper,
)
from magnet.mapper.whole_network import NetworkOutcome, map_network

__all__ = [
    "Budget",
    "MapOutcome",
    "Mapper",
    "NetworkOutcome",
    "Objective",
    "Tracker",
    "available_mappers",
    "get_mapper",
    "guarded_map",
    "map_network",
    "register_mapper",
    "unregister_mapper",
]
