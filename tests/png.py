"""A small reader of the PNG files the experiments and reports write (8-bit RGB or RGBA, not
interlaced), so that tests can count what was drawn without an imaging library."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np


def read_png(path: str | Path | bytes) -> np.ndarray:
    """The pixels of ``path`` (or of a PNG's bytes): uint8[height, width, channels]."""
    data = path if isinstance(path, bytes) else Path(path).read_bytes()
    name = "the data" if isinstance(path, bytes) else path
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{name} is not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert header is not None
    width, height, depth, color, _, _, interlace = header
    channels = {2: 3, 6: 4}.get(color)
    assert depth == 8 and channels and not interlace, f"unsupported PNG: {header}"
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(height, 1 + width * channels)
    out = np.zeros((height, width * channels), dtype=np.int32)
    prior = np.zeros(width * channels, dtype=np.int32)
    for y in range(height):
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        if kind == 0:
            row = line
        elif kind == 2:  # up
            row = (line + prior) & 255
        else:  # sub, average, paeth: each byte depends on the one to its left
            row = np.zeros_like(line)
            for x in range(line.size):
                left = row[x - channels] if x >= channels else 0
                up, corner = prior[x], (prior[x - channels] if x >= channels else 0)
                if kind == 1:
                    pred = left
                elif kind == 3:
                    pred = (left + up) // 2
                else:
                    p = left + up - corner
                    pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                    pred = left if pa <= pb and pa <= pc else (up if pb <= pc else corner)
                row[x] = (line[x] + pred) & 255
        out[y], prior = row, row
    return out.reshape(height, width, channels).astype(np.uint8)
