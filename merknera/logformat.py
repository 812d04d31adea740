"""How the platform process logs: to stderr, each line stamped in UTC, as text or as one
JSON object a line (``log_format``), and which HTTP requests it logs (``log_access``).

A JSON line has the keys ``time`` (ISO 8601 in UTC with milliseconds and a ``Z``),
``level``, ``logger`` and ``message``; ``game_id`` and ``bot_id`` where the line is about
one (:mod:`merknera.logcontext`); ``exception`` with the traceback of a line that has one;
and whatever plain values the line was logged with (``extra``: the access log's
``remote_address``, ``first_request_line``, ``response_status`` ...).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import IO, Any

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from merknera import logfilter
from merknera.config import LogSettings
from merknera.guard.clients import CALLER
from merknera.logcontext import BOT_ID, GAME_ID

ACCESS_LOGGER = "merknera.access"
"""The logger of the access log (its lines are at INFO)."""



class AccessLogger(AbstractAccessLogger):
    """Writes one access log line a request: the client's address, the request line, the
    status, the body's size, the seconds taken, the referrer and the user agent, as
    aiohttp's ``'%a "%r" %s %b %Tf "%{Referer}i" "%{User-Agent}i"'`` would, with the same
    ``extra`` values (``remote_address``, ``first_request_line`` ...), but with the
    client's address as :meth:`merknera.guard.Guard.forwarded` found it: the client's
    behind a trusted proxy, not the proxy's.  Without aiohttp's ``%t``, a local time: the
    line's own time is in UTC."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse,
            time: float) -> None:
        caller = request.get(CALLER)
        address = (request.remote if caller is None else caller.address or caller.via) or "-"
        version = request.version
        line = f"{request.method} {request.path_qs} HTTP/{version.major}.{version.minor}"
        headers = {name: request.headers.get(name, "-") for name in ("Referer", "User-Agent")}
        taken = f"{time:06f}"
        # Written out, not formatted by logging: the repeat filter tells lines apart by
        # their message.
        self.logger.info(
            f'{address} "{line}" {response.status} {response.body_length} {taken} '
            f'"{headers["Referer"]}" "{headers["User-Agent"]}"',
            extra={"remote_address": address, "first_request_line": line,
                   "response_status": response.status, "response_size": response.body_length,
                   "request_time_frac": taken, "request_header": headers})

    @property
    def enabled(self) -> bool:
        """Whether the line would be written (the logger takes INFO)."""
        return self.logger.isEnabledFor(logging.INFO)

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_RECORD_FIELDS = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message", "asctime", "repeat_kind"}
"""Attributes every record has (and the ones formatting or the repeat filter add): what is
left on a record was given as ``extra``."""

_Plain = str | int | float | bool | None


class UtcFormatter(logging.Formatter):
    """Stamps each line in UTC, as ISO 8601 with milliseconds and a ``Z``
    (``2026-05-01T12:00:00.123Z``)."""

    converter = staticmethod(time.gmtime)
    default_time_format = "%Y-%m-%dT%H:%M:%S"
    default_msec_format = "%s.%03dZ"


class JsonFormatter(UtcFormatter):
    """One JSON object a line (see the module's description)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {"time": self.formatTime(record), "level": record.levelname,
                                 "logger": record.name, "message": record.getMessage()}
        for key, context in (("game_id", GAME_ID), ("bot_id", BOT_ID)):
            known = getattr(record, key, None)
            if known is None:
                known = context.get()
            if known is not None:
                entry[key] = known
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS and key not in entry and _plain(value):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str)


def _plain(value: object) -> bool:
    """Whether an extra value is written: a plain value, or a mapping of names to plain
    values (the access log's request headers)."""
    if isinstance(value, _Plain):
        return True
    return isinstance(value, dict) and all(
        isinstance(key, str) and isinstance(item, _Plain) for key, item in value.items())


def formatter(settings: LogSettings) -> logging.Formatter:
    """The formatter of the lines ``settings`` ask for."""
    return JsonFormatter() if settings.json else UtcFormatter(TEXT_FORMAT)


def configure(settings: LogSettings, stream: IO[str] | None = None) -> None:
    """Log to ``stream`` (stderr) at ``log_level``, in ``log_format``, with repeated lines
    held back (:mod:`merknera.logfilter`)."""
    handler = logging.StreamHandler(sys.stderr if stream is None else stream)
    handler.setFormatter(formatter(settings))
    logging.basicConfig(level=settings.level.upper(), handlers=[handler])
    logfilter.install()


def access_options(settings: LogSettings) -> dict[str, Any]:
    """Keyword arguments for an ``AppRunner``: its access log, when ``log_access`` is on."""
    if not settings.access:
        return {"access_log": None}
    return {"access_log": logging.getLogger(ACCESS_LOGGER), "access_log_class": AccessLogger}
