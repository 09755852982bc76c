"""Hardware: the level tree and the parametric templates that build it."""

from magnet.arch.spec import Arch, ComputeLevel, StorageLevel

__all__ = ["Arch", "ComputeLevel", "StorageLevel"]
