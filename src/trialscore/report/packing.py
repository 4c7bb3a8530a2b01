"""The page's texts packed: compact JSON, deflated and in base64, unpacked by the browser itself."""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

__all__ = ["pack", "unpack"]

#: The bytes JSON escapes in a text (with ``ensure_ascii=False``): the quote, the backslash, controls.
_ESCAPED = b'"\\' + bytes(range(32))


def _json(data: Any) -> bytes:
    """Compact JSON of ``data`` in UTF-8.  A list of texts none of which JSON escapes (as the page's texts
    mostly are) is joined as it is: the same bytes, without the encoder's pass over every character.

    >>> _json(["a", "b é"]), _json(['say "hi"', "x"]), _json([]), _json(["a", ["b", 9]])
    (b'["a","b \\xc3\\xa9"]', b'["say \\\\"hi\\\\"","x"]', b'[]', b'["a",["b",9]]')
    """
    if isinstance(data, list) and data and all(isinstance(item, str) for item in data):
        body = '","'.join(data).encode("utf-8")
        if len(body) - len(body.translate(None, _ESCAPED)) == 2 * (len(data) - 1):  # the joins' quotes only
            return b'["' + body + b'"]'
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def pack(data: Any) -> str:
    """``data`` as compact JSON, deflated (zlib, level 1) and in base64: the page's texts, which repeat
    (a case's outputs are often alike), in a fraction of their size.  The page unpacks them with the
    browser's own ``DecompressionStream("deflate")`` (no script library); the same data gives the
    same text.

    >>> unpack(pack(["The answer is 42."] * 3))
    ['The answer is 42.', 'The answer is 42.', 'The answer is 42.']
    """
    return base64.b64encode(zlib.compress(_json(data), 1)).decode("ascii")


def unpack(text: str) -> Any:
    """The data :func:`pack` packed (what the page's script does)."""
    return json.loads(zlib.decompress(base64.b64decode(text)).decode("utf-8"))
