"""``trialscore schema``: the JSON schema of a trial record."""

from __future__ import annotations

from trialscore.cli._app import app
from trialscore.cli._render import print_json

__all__ = ["schema"]


@app.command()
def schema() -> None:
    """Print the JSON schema of a trial record (one line of a trial-record JSONL file).

    Example: trialscore schema > trial-record.schema.json
    """
    from trialscore.results.records import TrialRecord

    print_json(TrialRecord.model_json_schema())
