"""Shared fixtures of the runner tests: a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class ChatServer:
    """A chat-completions server with scripted failures, decided per trial seed (so not by scheduling).

    ``failures[seed % len(failures)]`` lists what the attempts of a request with that seed get
    before a success: ``429``, ``500`` or ``"slow"`` (sleep ``slow_s`` then answer).
    ``answer(prompt, seed)`` gives the completion text.
    """

    answer: Callable[[str, int], str] = lambda prompt, seed: prompt.upper()
    #: ``tool_calls(prompt, seed)``: the ``[{name, arguments}]`` the reply calls (None: no tool calls).
    tool_calls: Callable[[str, int], list[dict[str, Any]] | None] = lambda prompt, seed: None
    failures: list[list[Any]] = field(default_factory=lambda: [[]])
    slow_s: float = 1.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    attempts: dict[tuple[int, str], int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def handle(
        self, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        prompt = body["messages"][-1]["content"]
        seed = int(headers.get("x-trialscore-seed", body.get("seed", 0)))  # the trial's seed
        with self.lock:
            self.requests.append({"body": body, "headers": headers})
            key = (seed, prompt)
            attempt = self.attempts.get(key, 0)
            self.attempts[key] = attempt + 1
        plan = self.failures[seed % len(self.failures)]
        action = plan[attempt] if attempt < len(plan) else "ok"
        if action == 429:
            return 429, {"error": {"message": "rate limited"}}, {"Retry-After": "0"}
        if action == 500:
            return 500, {"error": {"message": "internal"}}, {}
        if action == 400:
            return 400, {"error": {"message": "bad request"}}, {}
        if action == "slow":
            time.sleep(self.slow_s)
        content = self.answer(prompt, seed)
        usage = {"prompt_tokens": len(prompt.split()), "completion_tokens": len(content.split())}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        message: dict[str, Any] = {"role": "assistant", "content": content}
        calls = self.tool_calls(prompt, seed)
        if calls is not None:  # as OpenAI sends them: no content, arguments as a JSON string
            message["content"] = None
            message["tool_calls"] = [
                {"id": f"call_{i}", "type": "function",
                 "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}
                for i, call in enumerate(calls)
            ]  # fmt: skip
        finish = "stop" if calls is None else "tool_calls"
        reply = {
            "id": f"chatcmpl-{seed}",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage,
        }
        return 200, reply, {}


def _handler(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length))
            if self.path.rstrip("/") != "/v1/chat/completions":
                status, reply, extra = 404, {"error": {"message": f"no route {self.path}"}}, {}
            else:
                status, reply, extra = server.handle(body, {k.lower(): v for k, v in self.headers.items()})
            with server.lock:
                server.statuses.append(status)
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up on a slow reply (its timeout): expected in the retry tests

        def log_message(self, format: str, *args: object) -> None:
            """Quiet."""

    return Handler


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    """A running ChatServer on 127.0.0.1 (a free port); configure its fields in the test."""
    state = ChatServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@dataclass
class RawServer:
    """An HTTP server on 127.0.0.1 whose every POST is answered by ``respond(handler, body)``.

    ``respond`` writes the whole reply itself (status, headers, body), so a test can send what a
    hostile or broken server sends: echoed request headers, an endless body, odd headers.
    """

    respond: Callable[[BaseHTTPRequestHandler, dict[str, Any]], None] = lambda handler, body: None
    url: str = ""
    requests: list[dict[str, str]] = field(default_factory=list)


def _raw_handler(server: RawServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length))
            server.requests.append({k.lower(): v for k, v in self.headers.items()})
            try:
                server.respond(self, body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped reading: what the cap tests expect

        def log_message(self, format: str, *args: object) -> None:
            """Quiet."""

    return Handler


@pytest.fixture
def raw_server() -> Iterator[RawServer]:
    """A running RawServer on 127.0.0.1 (a free port); set its ``respond`` in the test."""
    state = RawServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _raw_handler(state))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)
