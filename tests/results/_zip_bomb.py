"""Zip archives whose one large member is a block repeated many times, deflated without deflating it all.

zlib compresses the block once between two full flushes, so its compressed form depends on nothing
before it and decodes on its own: the member's data is that form repeated, and its CRC-32 is the
block's combined as zlib's ``crc32_combine`` does.  A GiB member then takes milliseconds to make
and inflates to exactly what it declares (:func:`zip_with` writes the archive: local headers, the
central directory and its end record, as ``zipfile`` reads them).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

__all__ = ["Member", "repeated_member", "small_member", "zip_with"]

#: (name, deflated data, CRC-32, inflated size) of one member.
Member = tuple[str, bytes, int, int]

_POLYNOMIAL = 0xEDB88320  # CRC-32's, bit-reflected (zlib's)


def _multiply(a: int, b: int) -> int:
    """``a * b`` modulo CRC-32's polynomial, both bit-reflected (zlib's ``multmodp``)."""
    product, bit = 0, 1 << 31
    while bit:
        if a & bit:
            product ^= b
        b = (b >> 1) ^ _POLYNOMIAL if b & 1 else b >> 1
        bit >>= 1
    return product


def _crc_combine(first: int, second: int, length: int) -> int:
    """The CRC-32 of ``A + B`` from ``crc32(A)``, ``crc32(B)`` and ``len(B)`` (zlib's ``crc32_combine``).

    >>> _crc_combine(zlib.crc32(b"head"), zlib.crc32(b"and tail"), 8) == zlib.crc32(b"headand tail")
    True
    """
    power = 1 << 30  # x, as x**0 is 1 << 31
    for _ in range(3):
        power = _multiply(power, power)  # x**8: one byte
    shift = 1 << 31
    while length:
        if length & 1:
            shift = _multiply(power, shift)
        power = _multiply(power, power)
        length >>= 1
    return _multiply(shift, first) ^ second


def repeated_member(name: str, head: bytes, block: bytes, count: int, tail: bytes) -> Member:
    """The member ``name`` holding ``head + block * count + tail``, deflated (level 1) with ``block``
    compressed once.

    >>> name, data, crc, size = repeated_member("m", b"<", b"ab" * 1000, 5, b">")
    >>> zlib.decompress(data, -15) == b"<" + b"ab" * 5000 + b">" and size == 10002
    True
    >>> crc == zlib.crc32(b"<" + b"ab" * 5000 + b">")
    True
    """
    compressor = zlib.compressobj(1, zlib.DEFLATED, -15)
    start = compressor.compress(head) + compressor.flush(zlib.Z_FULL_FLUSH)
    middle = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    end = compressor.compress(tail) + compressor.flush()
    crc, block_crc = zlib.crc32(head), zlib.crc32(block)
    for _ in range(count):
        crc = _crc_combine(crc, block_crc, len(block))
    crc = _crc_combine(crc, zlib.crc32(tail), len(tail))
    return name, start + middle * count + end, crc, len(head) + len(block) * count + len(tail)


def small_member(name: str, data: bytes) -> Member:
    """The member ``name`` holding ``data``, deflated (level 1)."""
    compressor = zlib.compressobj(1, zlib.DEFLATED, -15)
    return name, compressor.compress(data) + compressor.flush(), zlib.crc32(data), len(data)


def zip_with(path: Path, members: list[Member]) -> Path:
    """Write the zip archive ``path`` of ``members`` (deflated, in order; sizes under 4 GiB)."""
    directory, offset = b"", 0
    with path.open("wb") as out:
        for name, data, crc, size in members:
            encoded = name.encode()
            # version 2.0, no flags, deflated, 1980-01-01 00:00, CRC, sizes, name, no extra field
            fields = struct.pack("<HHHHHIIIHH", 20, 0, 8, 0, 0x21, crc, len(data), size, len(encoded), 0)
            out.write(b"PK\x03\x04" + fields + encoded)
            out.write(data)
            # made by 2.0 on Unix; no comment, disk 0, no attributes; where the local header is
            after = struct.pack("<HHHII", 0, 0, 0, 0, offset)
            directory += b"PK\x01\x02" + struct.pack("<H", 0x0314) + fields + after + encoded
            offset += 30 + len(encoded) + len(data)
        out.write(directory)
        end = struct.pack("<HHHHIIH", 0, 0, len(members), len(members), len(directory), offset, 0)
        out.write(b"PK\x05\x06" + end)
    return path
