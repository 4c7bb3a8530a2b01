"""Targets run for real: a program the test writes, Python callables, and an HTTP chat server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from pathlib import Path

import pytest

from trialscore.errors import EvaluationError
from trialscore.runner.retry import RetryPolicy, call_with_retries
from trialscore.runner.suite import (
    CaseSpec,
    CommandTargetSpec,
    OpenAITargetSpec,
    PriceTable,
    PythonTargetSpec,
)
from trialscore.runner.targets import (
    CommandTarget,
    OpenAITarget,
    PythonTarget,
    TargetError,
    TargetReply,
    TransientTargetError,
    TrialRequest,
)

CASE = CaseSpec(id="rev-1", input="hello world", expected="dlrow olleh", category="strings")
REQUEST = TrialRequest(CASE, trial=2, seed=1234, prompt=CASE.text)


def script(tmp_path: Path, body: str) -> tuple[str, ...]:
    path = tmp_path / "agent.py"
    path.write_text(textwrap.dedent(body))
    return (sys.executable, str(path))


def command_target(tmp_path: Path, body: str, **env: str) -> CommandTarget:
    spec = CommandTargetSpec(type="command", name="agent", argv=script(tmp_path, body), env=env)
    return CommandTarget(spec, tmp_path)


def test_command_target_gets_stdin_and_environment_and_plain_stdout(tmp_path: Path) -> None:
    target = command_target(
        tmp_path,
        """
        import os, sys
        text = sys.stdin.read()
        keys = ["TRIALSCORE_CASE_ID", "TRIALSCORE_TRIAL", "TRIALSCORE_SEED", "TRIALSCORE_CATEGORY", "EXTRA"]
        print(text[::-1] + "|" + "|".join(os.environ[k] for k in keys) + "|" + os.environ["TRIALSCORE_INPUT"])
        """,
        EXTRA="x1",
    )
    reply = asyncio.run(target(REQUEST))
    assert reply == TargetReply("dlrow olleh|rev-1|2|1234|strings|x1|hello world")


def test_command_target_json_reply_carries_cost_and_tokens(tmp_path: Path) -> None:
    target = command_target(
        tmp_path,
        """
        import json, sys
        tokens = {"input": 3, "output": 2}
        print(json.dumps({"output": sys.stdin.read().upper(), "cost_usd": 0.25, "tokens": tokens}))
        """,
    )
    reply = asyncio.run(target(REQUEST))
    assert (reply.output, reply.cost_usd, reply.tokens.input, reply.tokens.output) == (
        "HELLO WORLD",
        0.25,
        3,
        2,
    )


def test_command_target_case_data_is_never_interpolated_into_arguments(tmp_path: Path) -> None:
    target = command_target(tmp_path, "import sys; print(repr(sys.argv[1:]))")
    hostile = CaseSpec(id="x; rm -rf /", input="$(touch pwned) `id`", expected="")
    reply = asyncio.run(target(TrialRequest(hostile, 0, 1, hostile.text)))
    assert reply.output == "[]"
    assert not (tmp_path / "pwned").exists()


def test_command_exit_75_is_transient_and_other_status_is_an_error(tmp_path: Path) -> None:
    transient = command_target(tmp_path, "import sys; sys.stderr.write('busy'); sys.exit(75)")
    with pytest.raises(
        TransientTargetError, match=r"target 'agent': exit status 75 \(temporary failure\): busy"
    ):
        asyncio.run(transient(REQUEST))
    broken = command_target(tmp_path, "import sys; sys.stderr.write('boom'); sys.exit(3)")
    with pytest.raises(TargetError, match=r"target 'agent': exit status 3: boom") as info:
        asyncio.run(broken(REQUEST))
    assert not isinstance(info.value, TransientTargetError)


def test_command_missing_program_is_an_error(tmp_path: Path) -> None:
    spec = CommandTargetSpec(type="command", name="agent", argv=("/nonexistent/program",))
    with pytest.raises(TargetError, match=r"cannot start '/nonexistent/program'"):
        asyncio.run(CommandTarget(spec, tmp_path)(REQUEST))


@pytest.mark.timeout(60)  # the program sleeps 30 s: a kill that never comes fails as a timeout
def test_command_timeout_kills_the_process(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    target = command_target(
        tmp_path,
        f"""
        import os, time
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        time.sleep(30)
        """,
    )
    policy = RetryPolicy(timeout_s=0.5, retries=0, backoff_s=0.0)
    with pytest.raises(TargetError, match=r"no reply within timeout_s=0\.5 \(gave up after 1 attempt\)"):
        asyncio.run(call_with_retries(target, REQUEST, policy))  # the test's timeout mark catches a hang
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_python_target_sync_and_async_callables(tmp_path: Path) -> None:
    (tmp_path / "agents.py").write_text(
        textwrap.dedent(
            """
            import asyncio
            def sync_agent(case, seed):
                return {"output": case.text[::-1], "cost_usd": seed / 1e6}
            async def async_agent(case, seed):
                await asyncio.sleep(0)
                return f"{case.id}:{seed}"
            def bad_agent(case, seed):
                return 7
            """
        )
    )
    sync = PythonTarget(PythonTargetSpec(type="python", name="s", callable="agents.py:sync_agent"), tmp_path)
    reply = asyncio.run(sync(REQUEST))
    assert (reply.output, reply.cost_usd) == ("dlrow olleh", 0.001234)
    asynchronous = PythonTarget(
        PythonTargetSpec(type="python", name="a", callable="agents.py:async_agent"), tmp_path
    )
    assert asyncio.run(asynchronous(REQUEST)).output == "rev-1:1234"
    bad = PythonTarget(PythonTargetSpec(type="python", name="b", callable="agents.py:bad_agent"), tmp_path)
    policy = RetryPolicy(timeout_s=5, retries=3, backoff_s=0.0)
    with pytest.raises(
        TargetError, match=r"target 'b': a reply must be a string, a TargetReply or a mapping"
    ):
        asyncio.run(call_with_retries(bad, REQUEST, policy))


def test_python_target_reference_errors(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match=r"target 'p': 'math' has no attribute 'nope'"):
        PythonTarget(PythonTargetSpec(type="python", name="p", callable="math:nope"), tmp_path)
    with pytest.raises(EvaluationError, match=r"target 'p': cannot import module 'no_such_module_x'"):
        PythonTarget(PythonTargetSpec(type="python", name="p", callable="no_such_module_x:f"), tmp_path)
    with pytest.raises(EvaluationError, match=r"target 'p': Python file not found \(relative to the suite\)"):
        PythonTarget(PythonTargetSpec(type="python", name="p", callable="missing.py:f"), tmp_path)


class Flaky:
    """A target failing transiently a fixed number of times, then answering."""

    name = "flaky"

    def __init__(self, failures: int, error: Exception | None = None) -> None:
        self.failures = failures
        self.calls = 0
        self.error = error or TransientTargetError("HTTP 503")

    async def __call__(self, request: TrialRequest) -> TargetReply:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return TargetReply("ok")


def test_retries_transient_errors_then_succeeds() -> None:
    target = Flaky(failures=3)
    reply = asyncio.run(call_with_retries(target, REQUEST, RetryPolicy(5, retries=3, backoff_s=0.001)))
    assert reply.output == "ok" and target.calls == 4


def test_gives_up_after_retries_plus_one_attempts() -> None:
    target = Flaky(failures=10)
    with pytest.raises(TargetError, match=r"HTTP 503 \(gave up after 3 attempts\)"):
        asyncio.run(call_with_retries(target, REQUEST, RetryPolicy(5, retries=2, backoff_s=0.001)))
    assert target.calls == 3


def test_permanent_errors_are_not_retried() -> None:
    target = Flaky(failures=10, error=TargetError("HTTP 400"))
    with pytest.raises(TargetError, match=r"^HTTP 400$"):
        asyncio.run(call_with_retries(target, REQUEST, RetryPolicy(5, retries=5, backoff_s=0.001)))
    assert target.calls == 1
    crashing = Flaky(failures=10, error=KeyError("k"))
    with pytest.raises(TargetError, match=r"target 'flaky': raised KeyError: 'k'"):
        asyncio.run(call_with_retries(crashing, REQUEST, RetryPolicy(5, retries=5, backoff_s=0.001)))
    assert crashing.calls == 1


def openai_target(url: str, **fields: object) -> OpenAITarget:
    spec = OpenAITargetSpec(type="openai", name="gpt", base_url=url, model="mini", **fields)
    return OpenAITarget(spec, concurrency=4)


def test_openai_target_sends_the_request_and_prices_the_usage(chat_server, monkeypatch) -> None:
    monkeypatch.setenv("TS_TEST_KEY", "sk-test-123")
    target = openai_target(
        chat_server.url,
        api_key_env="TS_TEST_KEY",
        temperature=0.3,
        max_tokens=50,
        system="be brief",
        prices=PriceTable(input_per_mtok=2.0, output_per_mtok=10.0),
    )

    async def go() -> TargetReply:
        try:
            return await target(REQUEST)
        finally:
            await target.aclose()

    reply = asyncio.run(go())
    assert reply.output == "HELLO WORLD"
    assert (reply.tokens.input, reply.tokens.output) == (2, 2)
    assert reply.cost_usd == pytest.approx((2 * 2.0 + 2 * 10.0) / 1e6, rel=1e-12)
    sent = chat_server.requests[0]
    assert sent["headers"]["authorization"] == "Bearer sk-test-123"
    body = sent["body"]
    assert body["model"] == "mini" and body["seed"] == 1234 and body["temperature"] == 0.3
    assert body["max_tokens"] == 50
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hello world"},
    ]


def test_openai_target_without_price_table_has_unknown_cost(chat_server) -> None:
    target = openai_target(chat_server.url)
    reply = asyncio.run(target(REQUEST))
    assert reply.cost_usd is None and reply.tokens is not None
    assert "authorization" not in chat_server.requests[0]["headers"]


@pytest.mark.parametrize(("status", "transient"), [(429, True), (500, True), (400, False)])
def test_openai_status_codes(chat_server, status: int, transient: bool) -> None:
    chat_server.failures = [[status]]
    target = openai_target(chat_server.url)
    with pytest.raises(TargetError, match=rf"target 'gpt': HTTP {status}") as info:
        asyncio.run(target(REQUEST))
    assert isinstance(info.value, TransientTargetError) is transient
    if status == 429:
        assert info.value.retry_after == 0.0


def test_openai_retries_through_429_500_and_a_slow_reply(chat_server) -> None:
    chat_server.failures = [[429, 500, "slow"]]
    chat_server.slow_s = 3.0
    target = openai_target(chat_server.url)
    policy = RetryPolicy(timeout_s=1.0, retries=3, backoff_s=0.01)
    reply = asyncio.run(call_with_retries(target, REQUEST, policy))
    assert reply.output == "HELLO WORLD"
    assert chat_server.statuses[:2] == [429, 500]
    assert len(chat_server.requests) == 4


def test_openai_connection_refused_is_transient() -> None:
    target = openai_target("http://127.0.0.1:9/v1")
    with pytest.raises(TransientTargetError, match=r"target 'gpt': ConnectError"):
        asyncio.run(target(REQUEST))


def test_openai_missing_key_variable_is_named(monkeypatch) -> None:
    monkeypatch.delenv("TS_ABSENT_KEY", raising=False)
    with pytest.raises(
        EvaluationError, match=r"target 'gpt': api_key_env names 'TS_ABSENT_KEY', which is not set"
    ):
        openai_target("http://127.0.0.1:9/v1", api_key_env="TS_ABSENT_KEY")


def test_negative_retries_are_refused_by_the_policy_and_by_the_suite(tmp_path: Path) -> None:
    # The policy itself: no call is made with a negative retry count (it used to reach an unset error).
    with pytest.raises(EvaluationError, match=r"^retries must be an integer >= 0; got -1$"):
        RetryPolicy(timeout_s=5, retries=-1, backoff_s=0.0)
    # The suite: suite-level and case-level retries, each named with its line.
    from trialscore.runner.suite import load_suite

    path = tmp_path / "suite.yaml"
    path.write_text(
        "name: s\ntargets: [{name: t, type: command, argv: [cat]}]\n"
        "cases:\n  - {id: c, input: x, expected: x, graders: [{type: exact}], execution: {retries: -1}}\n"
        "execution:\n  retries: -2\n"
    )
    with pytest.raises(EvaluationError) as info:
        load_suite(path)
    message = str(info.value)
    assert (
        f"{path}:4: cases[0].execution.retries: Input should be greater than or equal to 0; got -1" in message
    )
    assert f"{path}:6: execution.retries: Input should be greater than or equal to 0; got -2" in message
