"""How the report writes its numbers and dates: fixed significant digits, signed changes, money, UTC."""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone

__all__ = ["money", "number", "percent", "run_start", "signed"]


def number(value: float | None, digits: int = 3) -> str:
    """A number for the page: fixed significant digits, '—' when unknown."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}g}"


def run_start(started: str | None) -> str:
    """When a run started, for the header: ``2026-11-25 13:24 UTC`` from an ISO timestamp.

    >>> run_start("2026-11-25T13:24:00.896900Z"), run_start("2026-11-25T15:24:00+02:00")
    ('2026-11-25 13:24 UTC', '2026-11-25 13:24 UTC')
    >>> run_start("2026-11-25")
    '2026-11-25'
    >>> run_start("2026-11-25T13:24:00.123456789Z"), run_start("2026-11-25T13:24:00.5")
    ('2026-11-25 13:24 UTC', '2026-11-25 13:24')
    >>> run_start(None), run_start("last tuesday")
    ('—', 'last tuesday')

    Read as Python 3.11's ``datetime.fromisoformat`` reads it, on 3.10 too: ``Z`` for UTC, a second's
    fraction of any number of digits (kept to microseconds).
    """
    if not started:
        return "—"
    text = re.sub(r"[Zz]$", "+00:00", started)
    text = re.sub(r"\.(\d+)", lambda fraction: "." + fraction[1][:6].ljust(6, "0"), text, count=1)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return started
    if len(started) <= 10:
        return moment.date().isoformat()
    if moment.tzinfo is None:
        return moment.strftime("%Y-%m-%d %H:%M")
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def percent(value: float | None) -> str:
    """A share as a percentage, one decimal.

    >>> percent(0.4567), percent(None)
    ('45.7%', '—')
    """
    return "—" if value is None else f"{100 * value:.1f}%"


def money(value: float | None) -> str:
    """A cost in dollars: four decimals, whole dollars from $100.

    >>> money(0.01234), money(1234.5)
    ('$0.0123', '$1,234')
    """
    return "—" if value is None else f"${value:.4f}" if value < 100 else f"${value:,.0f}"


def signed(value: float, decimals: int = 2) -> str:
    """A change of pass rate: signed, fixed decimals, no sign on a zero, so float noise reads zero.

    >>> signed(-0.3), signed(0.05), signed(4.2e-18), signed(-0.0736, 3)
    ('-0.30', '+0.05', '0.00', '-0.074')
    """
    text = f"{value:+.{decimals}f}"
    return text[1:] if float(text) == 0 else text
