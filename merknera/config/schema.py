"""How a setting is defined once (its key, type, default, help and bounds) and how a raw
value from the file, the environment or the command line becomes its type."""

from __future__ import annotations

import ipaddress
import math
import types
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

ENV_PREFIX = "MERKNERA_"

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

T = TypeVar("T")


class ConfigError(ValueError):
    """A configuration value that cannot be used, named with its source."""


@dataclass(frozen=True)
class Bound:
    """The numbers a setting may take: at least ``least``, greater than ``above``, at most
    ``most`` (each only where given)."""

    least: float | None = None
    above: float | None = None
    most: float | None = None

    def holds(self, value: float) -> bool:
        """Whether ``value`` is within the bounds."""
        return ((self.least is None or value >= self.least)
                and (self.above is None or value > self.above)
                and (self.most is None or value <= self.most))

    def __str__(self) -> str:
        """What the bounds ask, as the error and ``--help`` say it: "must be at least 1"."""
        if self.least is not None and self.most is not None:
            return f"must be between {self.least:g} and {self.most:g}"
        if self.above is not None:
            return f"must be greater than {self.above:g}"
        if self.least == 0:
            return "must not be negative"
        if self.least is not None:
            return f"must be at least {self.least:g}"
        return f"must be at most {self.most:g}"


@dataclass(frozen=True)
class Setting:
    """What a setting's field says besides its type and default: the help shown for it,
    and the values it may take (``bound`` for a number, ``choices`` for a word, compared
    in upper case)."""

    text: str
    bound: Bound | None = None
    choices: tuple[str, ...] = ()
    metavar: str = ""

    def problem(self, value: object) -> str | None:
        """Why ``value`` is not allowed ("must be greater than 0"), or None."""
        if (self.bound is not None and isinstance(value, int | float)
                and not self.bound.holds(value)):
            return str(self.bound)
        if self.choices and str(value).upper() not in self.choices:
            return self.rule()
        return None

    def rule(self) -> str:
        """The values allowed, as an error and ``--help`` say it; empty when any is."""
        if self.bound is not None:
            return str(self.bound)
        if self.choices:
            return f"must be one of {', '.join(self.choices)}"
        return ""


SETTING_KEY = "merknera.setting"
"""The key of a setting's :class:`Setting` in its dataclass field's metadata."""


def setting(default: T, text: str, *, bound: Bound | None = None,
            choices: tuple[str, ...] = (), metavar: str = "") -> T:
    """A field of a settings group: its default, its help ``text`` and what it may take."""
    return field(default=default, metadata={
        SETTING_KEY: Setting(text, bound, choices, metavar)})


POSITIVE = Bound(above=0)
AT_LEAST_ONE = Bound(least=1)
NOT_NEGATIVE = Bound(least=0)
A_PORT = Bound(least=0, most=65535)


@dataclass(frozen=True)
class Settings:
    """A group of settings: a frozen dataclass whose fields are made by :func:`setting`."""

    KEY_PREFIX: ClassVar[str] = ""
    """What the keys of the group's settings start with, before the field's name."""


@dataclass(frozen=True)
class Key:
    """One setting as operators name it (``battlebot_port``: the file's key, the variable
    ``MERKNERA_BATTLEBOT_PORT``, the flag ``--battlebot-port``) and where a :class:`Config`
    holds it (``config.battlebot.port``)."""

    name: str
    group: str
    field: str
    kind: Any
    """The field's type: int, float, str, bool or tuple[str, ...]."""
    default: object
    setting: Setting

    @property
    def env(self) -> str:
        """The environment variable that sets it."""
        return ENV_PREFIX + self.name.upper()

    @property
    def flag(self) -> str:
        """The command-line flag that sets it (also taken with underscores)."""
        return "--" + self.name.replace("_", "-")


def coerce(key: Key, raw: object, source: str) -> object:
    """Turn a raw value (a TOML value, a string from env/argv, or a Python value) into the
    setting's type."""
    kind = key.kind
    try:
        if kind is int:
            if isinstance(raw, bool):
                raise ValueError("a boolean is not an integer")
            return int(raw) if isinstance(raw, int | str) else _bad(raw)
        if kind is float:
            if isinstance(raw, bool):
                raise ValueError("a boolean is not a number")
            if not isinstance(raw, int | float | str):
                return _bad(raw)
            number = float(raw)
            if not math.isfinite(number):
                raise ValueError("the number must be finite")
            return number
        if kind is str:
            return raw if isinstance(raw, str) else _bad(raw)
        if kind is bool:
            if isinstance(raw, bool):
                return raw
            if isinstance(raw, str) and raw.strip().lower() in _BOOLEANS:
                return _BOOLEANS[raw.strip().lower()]
            raise ValueError("expected true or false")
        if isinstance(kind, types.GenericAlias) and kind.__origin__ is tuple:
            if isinstance(raw, str):
                return tuple(part.strip() for part in raw.split(",") if part.strip())
            if isinstance(raw, list | tuple) and all(isinstance(item, str) for item in raw):
                return tuple(raw)
            return _bad(raw)
    except ValueError as exc:
        raise ConfigError(f"{key.name} from {source}: {raw!r} is not valid ({exc})") from None
    raise AssertionError(f"unhandled config type {kind} for {key.name}")


_BOOLEANS = {"true": True, "1": True, "yes": True, "on": True,
             "false": False, "0": False, "no": False, "off": False}


def _bad(raw: object) -> object:
    raise ValueError(f"unexpected {type(raw).__name__}")
