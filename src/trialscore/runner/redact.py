"""Keeping secrets out of every text the runner stores or prints.

A server may echo the request, headers included, in an error body; a program may print its
environment.  :func:`redact` replaces each known secret (the API keys the run read) and the value
of anything that looks like a credential header (``Authorization``, ``Proxy-Authorization``,
``api-key``, ``x-api-key``, a ``Bearer`` token) with ``[REDACTED]``.  Redact a text *before*
cutting it short: a cut key no longer matches the literal.

A secret is found in its common disguises too (:func:`secret_forms`): URL-encoded (``%2B``,
``+`` for a space, either case of hex), JSON-escaped (``\\/``), and base64 (standard and URL-safe
alphabets) at any alignment, so the key is found inside the base64 of ``Bearer KEY``, of the
header value, or of a whole echoed request.  For base64 the part of the encoding that depends on
the key alone is replaced: the one or two characters at each end that mix with neighbouring bytes
stay, which tell nothing of the key.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import urllib.parse
from collections.abc import Iterable

__all__ = ["REDACTED", "redact", "secret_forms"]

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


#: The shortest base64 core that is replaced (a shorter one could match unrelated text).
_MIN_CORE = 8


def _percent_cases(text: str) -> set[str]:
    """``text`` with its ``%XX`` escapes in upper and in lower case."""
    return {text, re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), text)}


def _base64_cores(secret: bytes) -> set[str]:
    """The base64 characters that encode ``secret`` alone, at each of the three byte alignments.

    Encoding ``pad + secret`` with ``len(pad)`` = 0, 1, 2: characters fully inside the secret's
    bytes are the same whatever comes before and after it, so they are cut from both ends where
    they mix with neighbouring bytes.
    """
    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + secret)
        start = -(-offset * 4 // 3) if offset else 0  # characters that carry pad bits
        whole = (offset + len(secret)) // 3 * 4  # characters of complete 3-byte groups
        core = encoded[start:whole].decode()
        if offset:
            core = core[1:] if (offset * 8) % 6 else core  # the first character mixes pad and secret
        if len(core) >= _MIN_CORE:
            cores.add(core)
    return cores


@functools.lru_cache(maxsize=64)
def secret_forms(secret: str) -> tuple[str, ...]:
    """Every form of ``secret`` :func:`redact` replaces, longest first.

    >>> forms = secret_forms("sk-a+b/c=d0123456789")
    >>> "sk-a%2Bb%2Fc%3Dd0123456789" in forms, "sk-a%2bb%2fc%3dd0123456789" in forms
    (True, True)
    >>> import base64
    >>> encoded = base64.b64encode(b"Authorization: Bearer sk-a+b/c=d0123456789").decode()
    >>> any(form in encoded for form in forms)
    True
    """
    forms = {secret}
    for quoted in (urllib.parse.quote(secret, safe=""), urllib.parse.quote_plus(secret, safe="")):
        forms |= _percent_cases(quoted)
    forms.add(json.dumps(secret)[1:-1])
    forms.add(json.dumps(secret)[1:-1].replace("/", "\\/"))
    for core in _base64_cores(secret.encode()):
        forms.add(core)
        forms.add(core.replace("+", "-").replace("/", "_"))  # the URL-safe alphabet
    return tuple(sorted((form for form in forms if form), key=len, reverse=True))


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
            for form in secret_forms(secret):
                text = text.replace(form, REDACTED)
    if not headers:
        return text
    text = _HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(3) or ''}{REDACTED}", text)
    return _BEARER.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
