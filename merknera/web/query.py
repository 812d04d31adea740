"""Query parameters of the JSON API, each written once: the handler reads it through
:meth:`read`, and the OpenAPI document describes it through :meth:`parameter`, so that
the document refuses exactly what the handler refuses.

A value that is given must be usable, an empty one included (``?game=`` is no game): it is
refused with 400 and ``{"error": "<what was wrong>"}``, never read as the parameter left out.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from merknera.web.params import MAX_DIGITS

MAX_ID = 10**MAX_DIGITS - 1
"""The largest id or count a query may name (ids longer than this are no ids)."""

_INTEGER = re.compile(rf"-?[0-9]{{1,{MAX_DIGITS}}}")
"""What an integer looks like here: ASCII digits, at most one minus (``int`` would also
take ``+5``, `` 5``, ``5_000`` and other scripts' digits, which the document does not)."""


class BadQueryError(web.HTTPBadRequest):
    """A query parameter (or a request's body) with an unusable value."""

    def __init__(self, message: str) -> None:
        super().__init__(text=error_text(message), content_type="application/json")


def error_text(message: str) -> str:
    """The JSON API's error body, ``{"error": message}``, for every refusal of it.

    ASCII: a message may quote a value back that holds a lone surrogate (aiohttp decodes
    odd bytes of a path, query or header so), which UTF-8 cannot carry; JSON's escapes can.
    """
    return json.dumps({"error": message})


def _quoted(raw: str) -> str:
    return f'"{raw[:40]}"'


@dataclass(frozen=True)
class IntParam:
    """An integer between :attr:`low` and :attr:`high`."""

    name: str
    description: str
    low: int = 1
    high: int = MAX_ID
    default: int | None = None
    required: bool = False

    def read(self, request: web.Request) -> int | None:
        """The value, :attr:`default` when left out.

        :raises BadQueryError: for a value that is no integer in range, or a required one
            left out.
        """
        raw = request.query.get(self.name)
        if raw is None:
            if self.required:
                raise BadQueryError(f'"{self.name}" is required')
            return self.default
        if not _INTEGER.fullmatch(raw):
            raise BadQueryError(f'"{self.name}" must be an integer, got {_quoted(raw)}')
        value = int(raw)
        if not self.low <= value <= self.high:
            raise BadQueryError(
                f'"{self.name}" must be between {self.low} and {self.high}, got {value}')
        return value

    def parameter(self) -> dict[str, Any]:
        """The OpenAPI parameter object."""
        schema: dict[str, Any] = {"type": "integer", "minimum": self.low, "maximum": self.high}
        if self.default is not None:
            schema["default"] = self.default
        return _parameter(self.name, self.description, schema, self.required)


@dataclass(frozen=True)
class ChoiceParam:
    """One of a fixed set of strings."""

    name: str
    description: str
    choices: tuple[str, ...]
    default: str | None = None
    required: bool = False

    def read(self, request: web.Request) -> str | None:
        """The value, :attr:`default` when left out.

        :raises BadQueryError: for a value not among :attr:`choices`, or a required one left
            out.
        """
        raw = request.query.get(self.name)
        if raw is None:
            if self.required:
                raise BadQueryError(f'"{self.name}" is required, one of {self._listed()}')
            return self.default
        if raw not in self.choices:
            raise BadQueryError(
                f'"{self.name}" must be one of {self._listed()}, got {_quoted(raw)}')
        return raw

    def _listed(self) -> str:
        return ", ".join(self.choices)

    def parameter(self) -> dict[str, Any]:
        """The OpenAPI parameter object."""
        schema: dict[str, Any] = {"type": "string", "enum": list(self.choices)}
        if self.default is not None:
            schema["default"] = self.default
        return _parameter(self.name, self.description, schema, self.required)


def _parameter(name: str, description: str, schema: dict[str, Any],
               required: bool) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "description": description,
            "schema": schema}


FLAG = ("0", "1")
"""The values of a yes-or-no parameter."""
