"""A secret in disguise: a server on 127.0.0.1 that echoes the API key URL-encoded, base64-encoded and
JSON-escaped never gets it into the store, the output files, the report, JUnit, the step summary or the
terminal."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
import yaml

from trialscore.runner.redact import REDACTED, redact, secret_forms

#: A key with every character that changes under the encodings: + / = and -.
KEY = "sk-Te+st/Key=0123456789abc+/=XYZ"


def disguises(header: str) -> dict[str, str]:
    """The Authorization header as careless servers echo it."""
    raw = header.encode()
    return {
        "url": urllib.parse.quote(header, safe=""),
        "url-lower": re.sub(
            r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), urllib.parse.quote(header, safe="")
        ),
        "form": urllib.parse.urlencode({"authorization": header}),
        "base64-value": base64.b64encode(raw).decode(),
        "base64-key": base64.b64encode(KEY.encode()).decode(),
        "base64-line": base64.b64encode(b"POST /v1 HTTP/1.1\r\nAuthorization: " + raw + b"\r\n").decode(),
        "base64url": base64.urlsafe_b64encode(b"x" + raw).decode().rstrip("="),
        "json": json.dumps({"auth": header}).replace("/", "\\/"),
    }


@pytest.mark.parametrize("shape", sorted(disguises(f"Bearer {KEY}")))
def test_redact_finds_the_key_in_every_disguise(shape: str) -> None:
    text = f"error: request rejected; echo={disguises(f'Bearer {KEY}')[shape]}; retry later"
    redacted = redact(text, [KEY], headers=False)
    assert REDACTED in redacted and redacted.startswith("error: request rejected; echo=")
    for form in secret_forms(KEY):
        assert form not in redacted
    assert redact("nothing secret here: sk-other", [KEY]) == "nothing secret here: sk-other"


def echo_disguised(handler, body: dict) -> None:
    """Reply by the prompt: an error (or an answer) that carries the request's key in disguise."""
    header = handler.headers["Authorization"]
    shapes = disguises(header)
    prompt = body["messages"][-1]["content"]
    if prompt == "answer":  # a 200 whose content (the target's output) echoes the key
        content = " ".join(f"{name}={text}" for name, text in shapes.items())
        data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]})
        status = 200
    else:  # an error body with one disguise first (the stored message is cut to 200 characters)
        data = f"denied {shapes[prompt]} for this request"
        status = 401 if prompt.startswith("url") else 500
    encoded = data.encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json" if status == 200 else "text/plain")
    handler.send_header("Content-Length", str(len(encoded)))
    handler.end_headers()
    handler.wfile.write(encoded)


@pytest.mark.slow
def test_a_key_echoed_in_disguise_is_never_stored_or_printed(tmp_path: Path, raw_server) -> None:
    raw_server.respond = echo_disguised
    prompts = [*sorted(disguises("x")), "answer"]
    document = {
        "name": "disguised",
        "targets": [
            {
                "name": "gpt",
                "type": "openai",
                "base_url": raw_server.url,
                "model": "m",
                "api_key_env": "DISGUISED_KEY",
            }
        ],
        "cases": [
            {"id": f"c-{prompt}", "input": prompt, "graders": [{"type": "contains", "value": "url"}]}
            for prompt in prompts
        ],
        "execution": {"trials": {"count": 2}, "retries": 0, "timeout_s": 20},
    }
    suite = tmp_path / "suite.yaml"
    suite.write_text(yaml.safe_dump(document, sort_keys=False))
    out, store = tmp_path / "out", tmp_path / "store.sqlite"
    argv = [sys.executable, "-m", "trialscore", "run", str(suite), "--store", str(store), "--out", str(out)]
    argv += ["--no-progress", "--report", str(out / "report.html"), "--junit", str(tmp_path / "junit.xml")]
    argv += ["--annotations", "github"]
    env = {**os.environ, "DISGUISED_KEY": KEY, "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    process = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert process.returncode == 0, process.stderr
    assert {request["authorization"] for request in raw_server.requests} == {f"Bearer {KEY}"}
    records = [json.loads(line) for line in (out / "trials.jsonl").read_text().splitlines()]
    assert len(records) == 2 * len(prompts)
    for record in records:
        text = record["error"] if record["verdict"] == "error" else record["output"]
        assert REDACTED in text, record
    texts = {"stdout": process.stdout, "stderr": process.stderr}
    for path in [*out.iterdir(), tmp_path / "junit.xml", tmp_path / "summary.md", *tmp_path.glob("store*")]:
        texts[path.name] = path.read_bytes().decode("latin-1")
    assert "report.html" in texts
    forms = secret_forms(KEY)
    for name, text in texts.items():
        for form in forms:
            assert form not in text, f"the key leaked into {name} as {form!r}"
        unescaped = text.replace("\\/", "/").replace("\\u002b", "+").replace("&#x2B;", "+")
        assert KEY not in unescaped and KEY[3:15] not in unescaped, f"the key leaked into {name}"
