"""The ``openai`` target: any OpenAI-compatible chat-completions endpoint, over httpx.

One ``POST {base_url}/chat/completions`` per call, with the case text as the user
message (after ``system``, if given), the suite's ``model``, ``temperature`` and
``max_tokens``, and the attempt's ``seed`` (the trial's seed on the first attempt, a seed of
its own on each retry); the headers ``X-Trialscore-Seed`` (the trial's seed) and
``X-Trialscore-Attempt`` (0, 1, ...) name the trial and attempt.  The API key is read once from the
environment variable ``api_key_env`` names, sent as a bearer token, and never
written anywhere: every message and output text is passed through
:func:`~trialscore.runner.redact.redact` first (a server that echoes the request
headers in an error body does not leak it).  HTTP 429 and 5xx and transport failures (connection refused or
reset, read timeouts) are transient; any other 4xx errors the trial.

Tool calls: the ``tool_calls`` of the reply's message (``function.name`` and
``function.arguments``, a JSON string parsed into an object) are the trial's tool calls, in
order (:mod:`trialscore.results.trajectory`); a reply without them records none (an empty
list), and one whose tool calls are malformed errors the trial.

Cost: ``usage.prompt_tokens * input_per_mtok / 1e6 + usage.completion_tokens *
output_per_mtok / 1e6`` from the suite's price table; with no price table (or no
usage in the reply) the cost is unknown (None).
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Iterator
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from trialscore.errors import EvaluationError
from trialscore.results.trajectory import TokenUsage, ToolCall
from trialscore.runner.redact import redact
from trialscore.runner.registry import Loc, Name, NonNegative, Problem, Spec, TargetSpecBase, register_target
from trialscore.runner.targets.base import TargetError, TargetReply, TransientTargetError, TrialRequest

if TYPE_CHECKING:
    import ssl

    import httpx  # loaded with the first target that calls an endpoint: a run without one never loads it

__all__ = [
    "MAX_BODY_BYTES",
    "OpenAITarget",
    "OpenAITargetSpec",
    "PriceTable",
    "api_key_problem",
    "cost_of",
    "retry_after_seconds",
]


class PriceTable(Spec):
    """US dollars per million prompt (input) and completion (output) tokens."""

    input_per_mtok: NonNegative
    output_per_mtok: NonNegative


class OpenAITargetSpec(TargetSpecBase):
    """An OpenAI-compatible chat-completions endpoint; the key is read from ``api_key_env``."""

    type: Literal["openai"]
    base_url: Name
    model: Name
    temperature: Annotated[float, Field(ge=0.0, le=2.0)] | None = None
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    system: str | None = None
    api_key_env: Name | None = None
    prices: PriceTable | None = None

    def environment_problems(self, loc: Loc, directory: Path) -> Iterator[Problem]:
        """The variable ``api_key_env`` names must be set (and not empty)."""
        problem = api_key_problem(self.api_key_env)
        if problem is not None:
            yield Problem((*loc, "api_key_env"), problem)


def api_key_problem(variable: str | None) -> str | None:
    """Why the API key variable cannot be used (unset or empty), or None when it can (or none is named).

    >>> api_key_problem("TRIALSCORE_SURELY_UNSET_KEY")
    "names 'TRIALSCORE_SURELY_UNSET_KEY', which is not set in the environment"
    """
    if variable is None or os.environ.get(variable, ""):
        return None
    state = "empty" if variable in os.environ else "not set"
    return f"names {variable!r}, which is {state} in the environment"


#: The most of a reply body that is read (an endless body errors the trial instead of growing memory).
MAX_BODY_BYTES = 8 * 2**20
#: The most of an error body that is read: its message keeps 200 characters of it.
MAX_ERROR_BODY_BYTES = 64 * 2**10


def cost_of(tokens: TokenUsage | None, prices: PriceTable | None) -> float | None:
    """USD cost of ``tokens`` at ``prices`` (per million tokens); None when either is unknown.

    >>> cost_of(TokenUsage(input=1000, output=500), PriceTable(input_per_mtok=2.0, output_per_mtok=8.0))
    0.006
    >>> cost_of(TokenUsage(input=1000, output=500), None) is None
    True
    """
    if tokens is None or prices is None:
        return None
    return (tokens.input * prices.input_per_mtok + tokens.output * prices.output_per_mtok) / 1e6


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait: delay-seconds or an HTTP date (RFC 9110 10.2.3).

    None when there is no usable value; a date in the past is 0.

    >>> retry_after_seconds("7"), retry_after_seconds("soon")
    (7.0, None)
    >>> now = datetime(2015, 10, 21, 7, 28, tzinfo=timezone.utc)
    >>> retry_after_seconds("Wed, 21 Oct 2015 07:28:30 GMT", now)
    30.0
    >>> retry_after_seconds("Wed, 21 Oct 2015 07:27:00 GMT", now)  # in the past
    0.0
    """
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # RFC 9110 dates are GMT
            when = when.replace(tzinfo=timezone.utc)
        seconds = (when - (now or datetime.now(timezone.utc))).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _retry_after(response: httpx.Response) -> float | None:
    return retry_after_seconds(response.headers.get("retry-after"))


#: What httpx's (and Python's) default SSL context reads from the environment.
_SSL_ENVIRONMENT = ("SSL_CERT_FILE", "SSL_CERT_DIR", "SSLKEYLOGFILE")


@functools.cache
def _ssl_context(environment: tuple[str | None, ...]) -> ssl.SSLContext:
    """httpx's default SSL context where the variables of :data:`_SSL_ENVIRONMENT` are
    ``environment``, made once per process and shared by every target's client: the same trust, its CA
    bundle loaded once (about 40 ms each time), not by each target of each run."""
    import httpx

    return httpx.create_ssl_context()


class OpenAITarget:
    """Chat completions from an OpenAI-compatible server (see the module docstring)."""

    def __init__(self, spec: OpenAITargetSpec, concurrency: int) -> None:
        self.name = spec.name
        self._spec = spec
        self._where = f"target {spec.name!r}"
        headers = {}
        self.secrets: tuple[str, ...] = ()
        if spec.api_key_env is not None:
            problem = api_key_problem(spec.api_key_env)
            if problem is not None:
                raise EvaluationError(f"{self._where}: api_key_env {problem}")
            key = os.environ[spec.api_key_env]
            headers["Authorization"] = f"Bearer {key}"
            self.secrets = (key,)
        import httpx

        self._client = httpx.AsyncClient(
            base_url=spec.base_url,
            headers=headers,
            verify=_ssl_context(tuple(os.environ.get(name) for name in _SSL_ENVIRONMENT)),
            timeout=httpx.Timeout(None),
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        )

    def _body(self, request: TrialRequest) -> dict[str, Any]:
        spec = self._spec
        messages = [{"role": "system", "content": spec.system}] if spec.system is not None else []
        messages.append({"role": "user", "content": request.prompt})
        body: dict[str, Any] = {"model": spec.model, "messages": messages, "seed": request.attempt_seed}
        if spec.temperature is not None:
            body["temperature"] = spec.temperature
        if spec.max_tokens is not None:
            body["max_tokens"] = spec.max_tokens
        return body

    def _text(self, text: str, limit: int = 200) -> str:
        """A body or message fit to store: secrets redacted (before the cut), then cut to ``limit``."""
        return redact(text, self.secrets)[:limit]

    async def _post(self, request: TrialRequest) -> tuple[httpx.Response, bytes]:
        """POST the request; the status, headers and at most :data:`MAX_BODY_BYTES` of the body.

        The body is streamed and reading stops at the cap: an endless or huge body
        cannot grow memory.  A success whose body passes the cap errors the trial;
        an error body is only cut (its first bytes are all the message keeps).
        """
        import httpx

        try:
            headers = {"X-Trialscore-Seed": str(request.seed), "X-Trialscore-Attempt": str(request.attempt)}
            async with self._client.stream(
                "POST", "chat/completions", json=self._body(request), headers=headers
            ) as response:
                limit = MAX_BODY_BYTES if response.status_code < 400 else MAX_ERROR_BODY_BYTES
                chunks, size = [], 0
                async for chunk in response.aiter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > limit:
                        if response.status_code < 400:
                            raise TargetError(
                                f"{self._where}: HTTP {response.status_code}: the response body is over "
                                f"{MAX_BODY_BYTES // 2**20} MiB; stopped reading it"
                            )
                        break
                return response, b"".join(chunks)[:limit]
        except httpx.TransportError as exc:
            raise TransientTargetError(
                f"{self._where}: {type(exc).__name__}: {self._text(str(exc), 1000)}"
            ) from exc

    async def __call__(self, request: TrialRequest) -> TargetReply:
        """One chat completion for one trial."""
        response, body = await self._post(request)
        text = body.decode(response.encoding or "utf-8", errors="replace")
        status = response.status_code
        if status == 429 or status >= 500:
            raise TransientTargetError(
                f"{self._where}: HTTP {status}: {self._text(text)}", retry_after=_retry_after(response)
            )
        if status >= 400:
            raise TargetError(f"{self._where}: HTTP {status}: {self._text(text)}")
        try:
            data = json.loads(body)
            message = data["choices"][0]["message"]
            output = message["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise TargetError(f"{self._where}: not a chat completion: {self._text(text)!r}") from exc
        calls = self._tool_calls(message.get("tool_calls") or [])
        usage = data.get("usage") or {}
        tokens = None
        if "prompt_tokens" in usage and "completion_tokens" in usage:
            tokens = TokenUsage(input=int(usage["prompt_tokens"]), output=int(usage["completion_tokens"]))
        text = output if isinstance(output, str) else "" if output is None else str(output)
        text = redact(text, self.secrets, headers=False)
        return TargetReply(text, cost_of(tokens, self._spec.prices), tokens, calls)

    def _tool_calls(self, calls: object) -> tuple[ToolCall, ...]:
        """The reply's tool calls (``[{id, type, function: {name, arguments}}]``) in order."""
        if not isinstance(calls, list):
            raise TargetError(
                f"{self._where}: message.tool_calls must be a list; got {self._text(str(calls))!r}"
            )
        made = []
        for index, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            try:
                if not isinstance(function, dict):
                    raise EvaluationError("a tool call needs a 'function' object")
                named: dict[str, Any] = {"name": function.get("name"), "arguments": function.get("arguments")}
                made.append(ToolCall(**named))
            except EvaluationError as exc:
                raise TargetError(
                    f"{self._where}: message.tool_calls[{index}]: {self._text(str(exc))}"
                ) from exc
        return tuple(made)

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.aclose()


register_target(OpenAITargetSpec, lambda spec, directory, concurrency: OpenAITarget(spec, concurrency))
