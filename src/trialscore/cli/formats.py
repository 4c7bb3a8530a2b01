"""``trialscore formats``: the input formats, how each is recognised and what it maps."""

from __future__ import annotations

from trialscore.cli._app import app
from trialscore.cli._options import JSON_VERSION, FormatOpt, OutputFormat
from trialscore.cli._render import Report, Section, render

__all__ = ["formats"]


@app.command()
def formats(output: FormatOpt = OutputFormat.table) -> None:
    """List the input formats score, compare, rank, plan and track read, in detection order.

    Each input is read by the first format that recognises its content; --from NAME overrides.

    Example: trialscore formats -f json
    """
    from trialscore.results.formats import list_formats

    infos = list_formats()
    payload = {"command": "formats", "version": JSON_VERSION, "formats": [info.to_dict() for info in infos]}
    rows = [[info.name, info.summary, info.maps, " ".join(info.suffixes)] for info in infos]
    section = Section(["name", "what", "maps", "suffixes"], rows, title="input formats (detection order)")
    render(Report(payload, [section], footer=["override detection with --from NAME"]), output)
