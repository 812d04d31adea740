"""Reading a :class:`~merknera.config.settings.Config` from the file, the environment and
the command line's overrides, and checking the rules between settings."""

from __future__ import annotations

import dataclasses
import importlib.resources
import ipaddress
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from merknera.config.schema import ENV_PREFIX, SETTING_KEY, ConfigError, coerce
from merknera.config.settings import GROUPS, KEYS, Config, GameRules
from merknera.hosts import parse_origin
from merknera.store.db import POSTGRESQL_URL

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
"""A URL (SQLite would make a folder of its scheme, ``mysql:``, and a file in it)."""


def _validate(config: Config) -> Config:
    """Check every setting against its own bounds, then the rules between settings and
    those that read a setting's text."""
    for key in KEYS.values():
        value = getattr(getattr(config, key.group), key.field)
        problem = key.setting.problem(value)
        if problem is not None:
            raise ConfigError(f"{key.name} = {value!r}: {problem}")
    for mnemonic, rules in config.games.items():
        for member in dataclasses.fields(GameRules):
            value = getattr(rules, member.name)
            problem = member.metadata[SETTING_KEY].problem(value)
            if problem is not None:
                raise ConfigError(f"games.{mnemonic}.{member.name} = {value!r}: {problem}")

    db = config.store.db
    if _URL.match(db) and not POSTGRESQL_URL.match(db):
        raise ConfigError(f"db = '{db.split('://')[0]}://...': a URL the store does "
                          "not speak: db is the path of a SQLite file (one node) or a "
                          "postgresql:// URL (any number of nodes)")
    if not db:
        raise ConfigError("db = '': must name a file")
    for prefix, files in (("", config.listeners), ("battlebot_", config.battlebot)):
        if bool(files.tls_cert) != bool(files.tls_key):
            raise ConfigError(f"{prefix}tls_cert = {files.tls_cert!r}: needs {prefix}tls_key, "
                              "and the key the certificate")
    liveness = config.liveness
    if liveness.offline_retry_max < liveness.offline_retry_min:
        raise ConfigError(f"offline_retry_max = {liveness.offline_retry_max!r}: must not be "
                          "less than offline_retry_min")
    public_url = config.listeners.public_url
    if public_url and not public_url.startswith(("http://", "https://")):
        raise ConfigError(f"public_url = {public_url!r}: must start with http:// or https://")
    for origin in config.kalaha.origins:
        if parse_origin(origin) is None:
            raise ConfigError(f"kalaha_origins: {origin!r} is not an origin (scheme://host"
                              "[:port] with the scheme http or https, and nothing after, "
                              "as a browser names a page's origin)")
    for name, networks in (("allowed_networks", config.calls.allowed_networks),
                           ("metrics_networks", config.metrics.networks),
                           ("trusted_proxies", config.listeners.trusted_proxies)):
        for net in networks:
            try:
                ipaddress.ip_network(net, strict=False)
            except ValueError as exc:
                raise ConfigError(f"{name}: {net!r} is not a network ({exc})") from None
    return config


def _build(values: Mapping[str, object], games: Mapping[str, GameRules]) -> Config:
    """The Config of every setting's value, by key."""
    fields: dict[str, dict[str, object]] = {group: {} for group in GROUPS}
    for key in KEYS.values():
        fields[key.group][key.field] = values[key.name]
    groups: dict[str, Any] = {group: GROUPS[group](**fields[group]) for group in GROUPS}
    return Config(**groups, games=games)


def _game_rules(table: object, base: Mapping[str, object],
                source: str) -> dict[str, GameRules]:
    if not isinstance(table, dict):
        raise ConfigError(f"[games] in {source} must be a table of tables")
    rules: dict[str, GameRules] = {}
    for mnemonic, values in table.items():
        if not isinstance(values, dict):
            raise ConfigError(f"[games.{mnemonic}] in {source} must be a table")
        unknown = set(values) - {f.name for f in dataclasses.fields(GameRules)}
        if unknown:
            raise ConfigError(f"[games.{mnemonic}] in {source}: unknown keys {sorted(unknown)}")
        # A rule the table leaves out is every game's.
        chosen: dict[str, Any] = {
            f.name: coerce(KEYS[f.name], values.get(f.name, base[f.name]), source)
            for f in dataclasses.fields(GameRules)}
        rules[mnemonic] = GameRules(**chosen)
    return rules


def _read_file(path: Path, values: dict[str, object]) -> object:
    """Read the settings of a TOML file into ``values``; returns its ``games`` table."""
    try:
        with path.open("rb") as handle:
            document = tomllib.load(handle)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    found: dict[str, object] = {}
    for name, raw in document.items():
        if name == "games":
            continue
        if name in KEYS:
            found[name] = raw
        elif name in GROUPS and isinstance(raw, dict):
            prefix = GROUPS[name].KEY_PREFIX
            for member, inner in raw.items():
                key = KEYS.get(prefix + member)
                if key is None or key.group != name:
                    raise ConfigError(f"{path}: unknown key {member!r} in [{name}]")
                if key.name in found:
                    raise ConfigError(f"{path}: {key.name} is set twice (as {key.name} and "
                                      f"in [{name}])")
                found[key.name] = inner
        else:
            raise ConfigError(f"{path}: unknown key {name!r}")
    for name, raw in found.items():
        values[name] = coerce(KEYS[name], raw, str(path))
    return document.get("games")


def sample() -> str:
    """The sample configuration shipped with the platform (``merknera config`` prints it):
    every key with its default and what it does, in TOML, to copy and edit."""
    return (importlib.resources.files("merknera") / "config.toml").read_text("utf-8")


def load_config(
    path: str | Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, object] | None = None,
) -> Config:
    """Build the Config from a TOML file, the environment and command-line overrides.

    :param path: the TOML file; ``None`` means ``MERKNERA_CONFIG`` or ``./config.toml`` if
        either exists, else defaults only.
    :param overrides: values from the command line, by key (``None`` values are ignored).
    :raises ConfigError: naming the key, the value and where it came from.
    """
    env = os.environ if environ is None else environ
    values: dict[str, object] = {key.name: key.default for key in KEYS.values()}
    games_table: object = None
    source_path: Path | None
    if path is not None:
        source_path = Path(path)
    elif env.get(ENV_PREFIX + "CONFIG"):
        source_path = Path(env[ENV_PREFIX + "CONFIG"])
    else:
        source_path = Path("config.toml") if Path("config.toml").is_file() else None
    if source_path is not None:
        games_table = _read_file(source_path, values)
    for key in KEYS.values():
        raw_env = env.get(key.env)
        if raw_env is not None:
            values[key.name] = coerce(key, raw_env, f"${key.env}")
    for name, raw in (overrides or {}).items():
        if raw is None or name == "games":
            continue
        if name not in KEYS:
            raise ConfigError(f"unknown configuration key {name!r}")
        values[name] = coerce(KEYS[name], raw, KEYS[name].flag)
    table: dict[str, Any] = {}
    if games_table is not None:
        if not isinstance(games_table, dict):
            raise ConfigError(f"[games] in {source_path} must be a table of tables")
        table = {name: dict(rules) if isinstance(rules, dict) else rules
                 for name, rules in games_table.items()}
    for source, assignments in ((f"${ENV_PREFIX}GAMES", env.get(ENV_PREFIX + "GAMES")),
                                ("--games", (overrides or {}).get("games"))):
        for mnemonic, name, raw in _game_assignments(assignments, source):
            rules = table.setdefault(mnemonic, {})
            if not isinstance(rules, dict):
                raise ConfigError(f"[games.{mnemonic}] must be a table")
            rules[name] = raw
    games = _game_rules(table, values, str(source_path or "the overrides")) if table else {}
    return _validate(_build(values, games))


def _game_assignments(raw: object, source: str) -> list[tuple[str, str, str]]:
    """``MNEMONIC.key=value`` assignments, comma-separated or as a list (per-game rules
    from the environment or the command line)."""
    if raw is None:
        return []
    items = raw.split(",") if isinstance(raw, str) else raw
    if not isinstance(items, list | tuple):
        raise ConfigError(f"{source}: expected MNEMONIC.key=value assignments")
    found = []
    for item in items:
        text = str(item).strip()
        if not text:
            continue
        target, equals, value = text.partition("=")
        mnemonic, dot, key = target.strip().partition(".")
        if not (equals and dot and mnemonic and key):
            raise ConfigError(f"{source}: {text!r} is not MNEMONIC.key=value "
                              "(e.g. TICTACTOE.move_timeout=5)")
        found.append((mnemonic, key.strip(), value.strip()))
    return found
