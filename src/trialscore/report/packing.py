"""The page's texts packed: compact JSON, deflated and in base64, unpacked by the browser itself."""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

__all__ = ["pack", "unpack"]


def pack(data: Any) -> str:
    """``data`` as compact JSON, deflated (zlib, level 1) and in base64: the page's texts, which repeat
    (a case's outputs are often alike), in a fraction of their size.  The page unpacks them with the
    browser's own ``DecompressionStream("deflate")`` (no script library); the same data gives the
    same text.

    >>> unpack(pack(["The answer is 42."] * 3))
    ['The answer is 42.', 'The answer is 42.', 'The answer is 42.']
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return base64.b64encode(zlib.compress(text.encode("utf-8"), 1)).decode("ascii")


def unpack(text: str) -> Any:
    """The data :func:`pack` packed (what the page's script does)."""
    return json.loads(zlib.decompress(base64.b64decode(text)).decode("utf-8"))
