"""Keeping secrets out of every text the runner stores or prints.

A server may echo the request, headers included, in an error body; a program may print its
environment.  :func:`redact` replaces each known secret (the API keys the run read) and the value
of anything that looks like a credential header (``Authorization``, ``Proxy-Authorization``,
``api-key``, ``x-api-key``, a ``Bearer`` token) with ``[REDACTED]``.  Redact a text *before*
cutting it short: a cut key no longer matches the literal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["REDACTED", "redact"]

#: What a secret is replaced with.
REDACTED = "[REDACTED]"

_HEADER = re.compile(
    r"""(?ix)
    \b((?:proxy-)?authorization|x-api-key|api[-_]key)   # the header (or field) name
    (["']?\s*[:=]\s*["']?)                              # its separator, JSON, dict or header style
    ((?:bearer|basic|token)\s+)?                        # an auth scheme, kept
    (?!\[REDACTED\])(?!(?:bearer|basic|token)\s)[^\s"',;&}\]]+  # the value
    """
)
_BEARER = re.compile(r"(?i)\b(bearer\s+)(?!\[REDACTED\])[A-Za-z0-9._~+/=-]{8,}")


def redact(text: str, secrets: Iterable[str] = (), headers: bool = True) -> str:
    """``text`` with every secret and credential-header value replaced by ``[REDACTED]``.

    ``headers=False`` replaces only the secrets themselves: for a target's output, which a
    grader judges (code that mentions ``api_key = ...`` must reach the grader unchanged).

    >>> redact("HTTP 400: {'Authorization': 'Bearer sk-abc123456'} used sk-abc123456", ["sk-abc123456"])
    "HTTP 400: {'Authorization': 'Bearer [REDACTED]'} used [REDACTED]"
    >>> redact('{"api-key": "k-0987654321", "x": 1}')
    '{"api-key": "[REDACTED]", "x": 1}'
    """
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    if not headers:
        return text
    text = _HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3) or ''}{REDACTED}", text)
    return _BEARER.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
