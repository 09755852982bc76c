"""Hardware: the level tree (templates that build it live in ``magnet.templates``)."""

from magnet.arch.spec import Arch, ComputeLevel, Fanout, StorageLevel, SystolicPipeline

__all__ = ["Arch", "ComputeLevel", "Fanout", "StorageLevel", "SystolicPipeline"]
