"""The settings as command-line flags, grouped, each with its help, default and bounds."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from merknera.config.schema import Key
from merknera.config.settings import GROUPS, KEYS, OVERRIDABLE

_METAVARS: Mapping[object, str] = {int: "N", float: "NUMBER", str: "TEXT"}


def shown(key: Key) -> str:
    """A setting's default as it would be written on the command line."""
    default = key.default
    if isinstance(default, bool):
        return str(default).lower()
    if isinstance(default, tuple):
        return ",".join(default) or "none"
    if default == "":
        return "empty"
    return str(default)


def flag_help(key: Key) -> str:
    """The ``--help`` text of a setting: its help, its default and the values it may
    take."""
    rule = key.setting.rule()
    return f"{key.setting.text} (default: {shown(key)}{'; ' + rule if rule else ''})"


def add_config_arguments(parser: argparse.ArgumentParser,
                         keys: Sequence[str] = OVERRIDABLE) -> None:
    """Add ``--<key>`` options (with dashes or underscores) to an argparse parser, in one
    argument group per settings group, each with its help, default and bounds."""
    parser.add_argument("--config", dest="config_path", default=None, metavar="PATH",
                        help="TOML configuration file (default: ./config.toml if present). "
                             "Each setting below is also read from the file as key = value "
                             "and from the environment as MERKNERA_<KEY>; the flags also "
                             "take underscores (--move_timeout).")
    for group, kind in GROUPS.items():
        members = [key for key in KEYS.values() if key.group == group and key.name in keys]
        if not members:
            continue
        arguments = parser.add_argument_group(group, (kind.__doc__ or "").replace("%", "%%"))
        for key in members:
            text = flag_help(key).replace("%", "%%")
            flags = {"dest": key.name, "default": None}
            if key.kind is bool:
                # `--ladder` alone means true; `--ladder false` is accepted too.
                options: dict[str, Any] = {**flags, "nargs": "?", "const": "true",
                                           "metavar": "true|false"}
            else:
                options = {**flags, "metavar": key.setting.metavar or _METAVARS.get(
                    key.kind, "A,B,...")}
            arguments.add_argument(key.flag, help=text, **options)
            if "_" in key.name:
                arguments.add_argument("--" + key.name, help=argparse.SUPPRESS, **options)
        if group == "rules":
            arguments.add_argument(
                "--games", action="append", default=None, metavar="MNEMONIC.KEY=VALUE",
                help="a rule of one game, e.g. TICTACTOE.move_timeout=5 (repeatable)")


def overrides_from_args(args: argparse.Namespace) -> dict[str, object]:
    """The ``--<key>`` values given on the command line."""
    found = {key: getattr(args, key, None) for key in OVERRIDABLE}
    found["games"] = getattr(args, "games", None)
    return found
