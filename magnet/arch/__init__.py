"""Hardware: the level tree (templates that build it live in ``magnet.templates``)."""

from magnet.arch.spec import Arch, ComputeLevel, StorageLevel

__all__ = ["Arch", "ComputeLevel", "StorageLevel"]
