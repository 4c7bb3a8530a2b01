"""The ``json_schema`` grader: the output must be JSON that validates against a JSON Schema."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from trialscore.errors import EvaluationError
from trialscore.runner.graders.base import Grade, binary
from trialscore.runner.registry import GraderSite, GraderSpecBase, Name, Problem, register_grader
from trialscore.runner.targets.base import TrialRequest

__all__ = ["JsonSchemaGrader", "JsonSchemaGraderSpec", "checked_schema"]


class JsonSchemaGraderSpec(GraderSpecBase):
    """The output parses as JSON and validates against ``schema`` (inline) or ``schema_file``."""

    type: Literal["json_schema"]
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    schema_file: Name | None = None

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, schema: dict[str, Any] | None) -> dict[str, Any] | None:
        return checked_schema(schema)

    def problems(self, site: GraderSite) -> Iterator[Problem]:
        """Exactly one of ``schema`` and ``schema_file``; the file exists (relative to the suite)."""
        if (self.schema_ is None) == (self.schema_file is None):
            yield Problem(site.loc, "a json_schema grader needs exactly one of schema or schema_file")
        elif self.schema_file is not None:
            file = site.directory / self.schema_file
            if not file.is_file():
                yield Problem(
                    (*site.loc, "schema_file"),
                    f"file not found (relative to the suite); got {self.schema_file!r}",
                )
                return
            try:
                _load_schema(file)
            except EvaluationError as exc:
                yield Problem((*site.loc, "schema_file"), str(exc))


def checked_schema(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """``schema`` if it is a valid JSON Schema of its draft (or None), else a ValueError saying why.

    >>> checked_schema({"type": 12})
    Traceback (most recent call last):
    ...
    ValueError: not a valid JSON Schema (12 is not valid under any of the given schemas)
    """
    if schema is not None:
        import jsonschema

        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"not a valid JSON Schema ({exc.message})") from exc
    return schema


def _load_schema(file: Path) -> dict[str, Any]:
    """The JSON Schema in ``file``, checked against its draft's meta-schema."""
    import jsonschema

    try:
        schema = json.loads(file.read_text(encoding="utf-8"))
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except (OSError, ValueError) as exc:
        raise EvaluationError(f"cannot read JSON from {str(file)!r} ({exc})") from exc
    except jsonschema.SchemaError as exc:
        raise EvaluationError(f"{str(file)!r} is not a valid JSON Schema ({exc.message})") from exc
    if not isinstance(schema, dict):
        raise EvaluationError(f"{str(file)!r} is not a JSON Schema object; got {type(schema).__name__}")
    return schema


class JsonSchemaGrader:
    """Passes when the output parses as JSON and has no schema violation (score 1), else fails (score 0)."""

    def __init__(self, spec: JsonSchemaGraderSpec, directory: Path) -> None:
        import jsonschema

        self._spec = spec
        schema = spec.schema_
        if schema is None:
            try:
                schema = _load_schema(directory / str(spec.schema_file))
            except EvaluationError as exc:
                raise EvaluationError(f"json_schema grader: schema_file: {exc}") from exc
        self._validator = jsonschema.validators.validator_for(schema)(schema)

    async def __call__(self, output: str, request: TrialRequest) -> Grade:
        """Grade one output."""
        try:
            document = json.loads(output)
        except ValueError:
            return binary(self._spec.label, self._spec.weight, False)
        return binary(self._spec.label, self._spec.weight, self._validator.is_valid(document))


register_grader(JsonSchemaGraderSpec, lambda spec, context: JsonSchemaGrader(spec, context.directory))
