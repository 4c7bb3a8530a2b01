"""The frozen Pydantic base of trialscore's JSON records, whose bad input raises :class:`EvaluationError`.

A :class:`RecordModel` is frozen (immutable and hashable), closed (unknown fields
are rejected) and takes finite floats only.  Its constructor turns Pydantic's
``ValidationError`` into an :class:`~trialscore.errors.EvaluationError` with one
part per bad field, naming the model, the field, the rule and the value:

>>> from pydantic import Field
>>> class Point(RecordModel):
...     model_config = record_config("A point of the unit interval.")
...     x: float = Field(ge=0.0, le=1.0)
>>> Point(x=0.25).to_dict()
{'x': 0.25}
>>> Point(x=2.0)
Traceback (most recent call last):
...
trialscore.errors.EvaluationError: Point field 'x': Input should be less than or equal to 1; got 2.0

A record nested in another is validated by its own constructor, so its message is
kept whole under the outer field (``TrialRecord field 'tokens': TokenUsage field
'input': ...``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from trialscore._validate import describe
from trialscore.errors import EvaluationError

__all__ = ["RecordModel", "describe", "record_config", "validation_message"]


def record_config(description: str) -> ConfigDict:
    """Frozen, closed, finite-floats config with the JSON-schema description (not the docstring).

    >>> record_config("A record.")["frozen"]
    True
    """
    return ConfigDict(
        frozen=True, extra="forbid", allow_inf_nan=False, json_schema_extra={"description": description}
    )


def validation_message(exc: ValidationError, model: str) -> str:
    """One part per Pydantic error: ``model field 'x': rule; got value``, joined by ``"; "``.

    A missing field has no value to show; the message of a nested record (an
    :class:`EvaluationError` raised by its constructor) already names its value.
    """
    parts = []
    for error in exc.errors(include_url=False):
        location = ".".join(str(part) for part in error["loc"])
        message = error["msg"]
        if message.startswith("Value error, "):
            message = message[len("Value error, ") :]
        nested = isinstance(error.get("ctx", {}).get("error"), EvaluationError)
        if location and (error["type"] == "missing" or nested):
            parts.append(f"{model} field {location!r}: {message}")
        elif location:
            parts.append(f"{model} field {location!r}: {message}; got {describe(error['input'])}")
        else:
            parts.append(f"{model}: {message}")
    return "; ".join(parts)


class RecordModel(BaseModel):
    """Frozen, closed Pydantic model whose bad input raises :class:`EvaluationError`.

    Build records with the constructor: it raises :class:`EvaluationError`.
    (Pydantic's own ``model_validate`` still works but raises a
    ``pydantic.ValidationError``.)
    """

    model_config = record_config("A trialscore record.")

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise EvaluationError(validation_message(exc, type(self).__name__)) from exc

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (datetimes as ISO 8601 strings)."""
        return self.model_dump(mode="json")
