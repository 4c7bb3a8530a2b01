"""Two seeded, simulated booking agents that reply with trajectories: the careful one and the cheap one.

The bundled agents suite (``trialscore/data/agents_suite.yaml``,
:func:`trialscore.examples.agents_suite_path`) asks each agent to book a trip: a case's input is
``{city, nights, price, email}``, and the right procedure is four tool calls, in order::

    get_weather(city)  ->  book(city, nights)  ->  pay(amount=price)  ->  send_confirmation(to=email)

:func:`careful` follows it at about $0.02 a trial, now and then checking the weather twice (an
extra call); :func:`cheap` costs about $0.008 a trial but sometimes forgets the confirmation (a
missing call) or pays a wrong amount.  Both answer right ("Booked ...") about 95% of the time.  So
their answers are alike while their procedures are not: the process flakes where the answer does
not, and the cheap agent is no more expensive but may be worse at the procedure.

Each trial's behaviour comes from ``random.Random`` seeded with the agent's name and the trial's seed
(the two agents draw apart on the same trial): :func:`attempt` gives
it (the calls, the answer, the cost and what went wrong), so a run is reproducible and a test can
tell what each trial did.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from trialscore.runner.suite import CaseSpec

__all__ = ["AGENTS", "Attempt", "attempt", "careful", "cheap"]

#: Per agent: its mean cost of a trial (USD), and the chances of an extra call, a missing call, a wrong
#: amount paid and a wrong answer.
AGENTS: dict[str, dict[str, float]] = {
    "careful": {"cost": 0.02, "extra": 0.10, "missing": 0.0, "wrong": 0.0, "misanswer": 0.05},
    "cheap": {"cost": 0.008, "extra": 0.10, "missing": 0.35, "wrong": 0.10, "misanswer": 0.05},
}


@dataclass(frozen=True)
class Attempt:
    """What one trial of an agent did: its calls, its answer, its cost, and what went wrong."""

    calls: list[dict[str, Any]]
    output: str
    cost_usd: float
    extra: bool
    missing: bool
    wrong: bool
    answered: bool

    @property
    def right_procedure(self) -> bool:
        """Whether the calls were exactly the four expected, in order (the process grader's pass)."""
        return not (self.extra or self.missing or self.wrong)


def attempt(agent: str, trip: dict[str, Any], seed: int) -> Attempt:
    """The trial of ``agent`` (``"careful"`` or ``"cheap"``) on a trip, drawn from ``seed``.

    >>> trip = {"city": "Paris", "nights": 2, "price": 240.0, "email": "ada@example.com"}
    >>> done = attempt("careful", trip, 1)
    >>> [call["name"] for call in done.calls], done.output
    (['get_weather', 'book', 'pay', 'send_confirmation'], 'Booked 2 nights in Paris.')
    """
    odds = AGENTS[agent]
    rng = random.Random(f"{agent}:{seed}")  # each agent draws its own (a str seed is the same in every run)
    extra, missing = rng.random() < odds["extra"], rng.random() < odds["missing"]
    wrong, answered = rng.random() < odds["wrong"], rng.random() >= odds["misanswer"]
    city, nights = trip["city"], trip["nights"]
    calls: list[dict[str, Any]] = [{"name": "get_weather", "arguments": {"city": city}, "result": "sunny"}]
    if extra:
        calls.append({"name": "get_weather", "arguments": {"city": city}, "result": "sunny"})
    calls.append({"name": "book", "arguments": {"city": city, "nights": nights, "room": "double"}})
    amount = trip["price"] + (25.0 if wrong else 0.004)  # within the grader's tolerance of 0.01, or not
    calls.append({"name": "pay", "arguments": {"amount": round(amount, 3), "currency": "EUR"}})
    if not missing:
        calls.append({"name": "send_confirmation", "arguments": {"to": trip["email"]}})
    output = f"Booked {nights} nights in {city}." if answered else "Sorry, I could not complete the booking."
    cost = odds["cost"] * math.exp(rng.gauss(0.0, 0.5) - 0.125)  # log-normal, mean odds["cost"]
    return Attempt(calls, output, cost, extra, missing, wrong, answered)


def _reply(agent: str, case: CaseSpec, seed: int) -> dict[str, Any]:
    if not isinstance(case.input, dict):
        raise TypeError(f"case {case.id}: the booking agents read a trip object as input")
    done = attempt(agent, case.input, seed)
    tokens = {"input": 400 * len(done.calls), "output": 60}
    return {
        "output": done.output,
        "tool_calls": done.calls,
        "steps": len(done.calls) + 1,
        "tokens": tokens,
        "cost_usd": done.cost_usd,
    }


def careful(case: CaseSpec, seed: int) -> dict[str, Any]:
    """The careful agent's trajectory for a case (module docstring)."""
    return _reply("careful", case, seed)


def cheap(case: CaseSpec, seed: int) -> dict[str, Any]:
    """The cheap agent's trajectory for a case (module docstring)."""
    return _reply("cheap", case, seed)
