"""Trials and counts tables in object storage: a real S3 server (moto's, in server mode) that the
test starts on 127.0.0.1, and the bytes it sends counted at the server."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
import pyarrow.parquet as pq
import pytest
from _scale import counts_data, trial_table, write_parquet

from tests.cli_runner import CliRunner
from trialscore.cli import app
from trialscore.errors import EvaluationError
from trialscore.results import read_counts
from trialscore.results.reduce import reduce_trials

runner = CliRunner()


class S3Server:
    """moto's S3 on 127.0.0.1: its WSGI app behind a server that counts the body bytes it sends."""

    def __init__(self) -> None:
        from moto.server import DomainDispatcherApplication, create_backend_app
        from werkzeug.serving import make_server

        logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
        app = DomainDispatcherApplication(create_backend_app)
        self.sent = 0
        self.lock = threading.Lock()

        def counting(environ: dict[str, Any], start_response: Any) -> Iterator[bytes]:
            for chunk in app(environ, start_response):
                with self.lock:
                    self.sent += len(chunk)
                yield chunk

        self.server = make_server("127.0.0.1", 0, counting, threaded=True)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.thread.join()


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[S3Server, dict[str, Path]]]:
    """A bucket with a hive layout of trial Parquet files (with outputs) and a JSON Lines file."""
    server = S3Server()
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": server.url,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    patch = pytest.MonkeyPatch()
    for name, value in env.items():
        patch.setenv(name, value)
    local = tmp_path_factory.mktemp("s3-local")
    fs = pafs.S3FileSystem(endpoint_override=server.url, allow_bucket_creation=True, region="us-east-1")
    fs.create_dir("bucket")
    files: dict[str, Path] = {}
    for index in (0, 1):
        path = write_parquet(
            trial_table(seed=10 + index, items=600, output_chars=500),
            local / f"run={index}" / "part-0.parquet",
        )
        files[f"run={index}"] = path
        with fs.open_output_stream(f"bucket/runs/run={index}/part-0.parquet") as out:
            out.write(path.read_bytes())
    jsonl = tmp_path_factory.mktemp("s3-logs") / "trials.jsonl"
    jsonl.write_text("\n".join(json.dumps(row) for row in trial_table(seed=3, items=10).to_pylist()) + "\n")
    with fs.open_output_stream("bucket/logs/trials.jsonl") as out:
        out.write(jsonl.read_bytes())
    files["jsonl"] = jsonl
    yield server, files
    patch.undo()
    server.close()


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_bucket_prefix_scores_as_the_same_files_on_disk(s3, tmp_path):
    _, files = s3
    local = tmp_path / "local"
    for name in ("run=0", "run=1"):
        target = local / name / "part-0.parquet"
        target.parent.mkdir(parents=True)
        target.write_bytes(files[name].read_bytes())
    args = ["--by", "run,target", "-f", "json"]
    remote = runner.invoke(app, ["score", "s3://bucket/runs/", *args])
    assert remote.exit_code == 0, remote.output
    on_disk = runner.invoke(app, ["score", str(local), *args])
    left, right = json.loads(remote.stdout), json.loads(on_disk.stdout)
    left["rows"].pop("sources"), right["rows"].pop("sources")
    assert left == right and len(left["groups"]) == 4
    glob = runner.invoke(app, ["score", "s3://bucket/runs/run=1/*.parquet", "-f", "json"])
    assert glob.exit_code == 0, glob.output
    assert json.loads(glob.stdout)["rows"]["rows_read"] == pq.read_metadata(files["run=1"]).num_rows


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_reduction_of_a_bucket_fetches_only_the_columns_it_needs(s3, tmp_path):
    server, files = s3
    size = files["run=0"].stat().st_size + files["run=1"].stat().st_size
    before = server.sent
    done = reduce_trials(["s3://bucket/runs/"], tmp_path / "remote.parquet", by=("run",))
    fetched = server.sent - before
    assert 0 < done.bytes_read <= fetched < 0.05 * size  # the outputs stay in the bucket
    local = reduce_trials([files["run=0"].parent.parent], tmp_path / "local.parquet", by=("run",))
    assert counts_data(tmp_path / "remote.parquet").equals(counts_data(tmp_path / "local.parquet"))
    assert done.rows_read == local.rows_read
    # the counts table itself read back from the bucket
    fs = pafs.S3FileSystem(endpoint_override=server.url, region="us-east-1")
    with fs.open_output_stream("bucket/counts/all.parquet") as out:
        out.write((tmp_path / "local.parquet").read_bytes())
    remote_counts = read_counts(["s3://bucket/counts/all.parquet"], by=["run"], group_targets=True)
    local_counts = read_counts([tmp_path / "local.parquet"], by=["run"], group_targets=True)
    assert remote_counts.to_dict()["groups"] == local_counts.to_dict()["groups"]


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_remote_file_of_another_format_is_copied_and_read_and_a_missing_one_is_named(s3):
    _, files = s3
    remote = read_counts(["s3://bucket/logs/trials.jsonl"], by=["target"])
    local = read_counts([files["jsonl"]], by=["target"])
    assert remote.to_dict()["groups"] == local.to_dict()["groups"]
    with pytest.raises(EvaluationError, match=r"s3://bucket/nothing/: no such file or prefix"):
        read_counts(["s3://bucket/nothing/"])
    result = runner.invoke(app, ["score", "s3://bucket/nothing.parquet"])
    assert result.exit_code == 2 and "s3://bucket/nothing.parquet: no such file or prefix" in result.output
