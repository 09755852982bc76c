"""magnet: design-space exploration for DNN accelerators."""

__version__ = "0.1.0"
