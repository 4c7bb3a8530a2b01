"""What a panel of the report is: one module, one template include, registered in one place.

A panel is a section of the page.  Its module builds what the section shows from the
:class:`~trialscore.report.context.ReportContext` (``build``: its ``view`` for the template, and
optionally ``data`` embedded as JSON for its script); its template (``templates/panels/``)
renders the view, and its optional script (``templates/panels/``, plain JavaScript) runs in the
page's one script.  :data:`trialscore.report.panels.PANELS` lists the panels in page order: the
one place a panel is registered (see docs/report.md, "Adding a panel").

>>> from trialscore.report.context import ReportContext
>>> def build(context: ReportContext) -> Built | None:
...     return Built({"runs": len(context.runs)})
>>> Panel("runs", "Runs", "runs.html.j2", build).id
'runs'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trialscore.report.context import ReportContext

__all__ = ["Built", "Panel"]


@dataclass(frozen=True)
class Built:
    """What a panel built: ``view`` for its template (as ``view``), ``data`` for its script
    (``ts.data[panel id]`` in the page; None: nothing embedded)."""

    view: Any
    data: Any = None


@dataclass(frozen=True)
class Panel:
    """One section of the page.

    ``id``: the section's id (the page's anchor ``#id``) and its data's key; ``title``: its link in
    the page's navigation; ``template``: its include under ``templates/panels/``; ``build``: what it
    shows (None: the section is left out, with its link); ``script``: its JavaScript under
    ``templates/panels/`` (None: none), run once the page is loaded, with ``ts`` the page's helpers.
    """

    id: str
    title: str
    template: str
    build: Callable[[ReportContext], Built | None]
    script: str | None = None
