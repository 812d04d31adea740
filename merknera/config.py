"""Configuration: ``config.toml``, then the environment, then the command line -> one Config.

Every key of :class:`Config` can be set in three places, later ones winning:

1. the TOML file (``--config PATH``, ``MERKNERA_CONFIG``, or ``./config.toml`` if present);
2. the environment, as ``MERKNERA_<KEY>`` (``MERKNERA_MOVE_TIMEOUT=2.5``);
3. the command line, as ``--<key>`` (``--move-timeout 2.5`` or ``--move_timeout 2.5``).

Per-game rules (the keys of :class:`GameRules`) are set in TOML tables
``[games.<MNEMONIC>]``, in the environment as ``MERKNERA_GAMES="TICTACTOE.move_timeout=5,..."``
and on the command line as ``--games TICTACTOE.move_timeout=5`` (repeatable).
"""

from __future__ import annotations

import dataclasses
import ipaddress
import math
import os
import re
import tomllib
import types
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_type_hints

from merknera.hosts import host_port
from merknera.store.db import POSTGRESQL_URL

ENV_PREFIX = "MERKNERA_"

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class ConfigError(ValueError):
    """A configuration value that cannot be used, named with its source."""


@dataclass(frozen=True)
class GameRules:
    """Rules of play that an operator may set per game."""

    move_timeout: float
    """Seconds a bot has to answer NextMove before it forfeits."""
    max_strikes: int
    """Faulty replies (malformed, illegal, error) that forfeit a game; the last one does."""
    rest_call_timeout: float = 1.0
    """Seconds a bot that speaks the game's own REST API (``protocol: "squelch-rest"``)
    has for each call, its moves included (the Squelchbot arena spec allows 1 s)."""


@dataclass(frozen=True)
class Config:
    """Everything the platform can be told.  Immutable; build it with :func:`load_config`."""

    host: str = "127.0.0.1"
    """Address the HTTP server listens on."""
    port: int = 8080
    """Port the HTTP server listens on (0 picks a free one)."""
    public_url: str = ""
    """Base URL that bots and browsers reach the platform at; empty means http://host:port."""
    db: str = "merknera.db"
    """Path of the SQLite database file."""
    assets_dir: str = ""
    """Directory of the game asset files and their manifest; empty means the ``assets/``
    directory of this installation."""

    connect_timeout: float = 2.0
    """Seconds to open a connection to a bot."""
    move_timeout: float = 10.0
    """Seconds a bot has to answer NextMove (per game: ``[games.X] move_timeout``)."""
    ping_timeout: float = 5.0
    """Seconds a bot has to answer Status.Ping."""
    notify_timeout: float = 5.0
    """Seconds allowed for NewGame, Complete and Error calls."""
    rest_call_timeout: float = 1.0
    """Seconds allowed for each call to a bot that speaks a game's own REST API, its moves
    included (per game: ``[games.X] rest_call_timeout``; the Squelchbot arena spec's 1 s)."""
    announce_timeout: float = 1.0
    """Seconds allowed for the calls a game makes while it goes on and waits for (Squelch's
    TurnStart and the like); their replies are ignored."""
    max_reply_bytes: int = 65536
    """Largest reply body accepted from a bot; a larger one is a malformed reply."""

    ping_interval: float = 60.0
    """Seconds between liveness pings of online bots; a bot not heard from for this long
    is pinged before its next first move of a game."""
    offline_retry_min: float = 1.0
    """First delay before re-pinging an offline bot; doubles on every failure."""
    offline_retry_max: float = 120.0
    """Longest delay between re-pings of an offline bot."""
    offline_grace: float = 300.0
    """Seconds a game waits for an offline seat before that seat forfeits."""
    ready_timeout: float = 120.0
    """Seconds a bot that answered NewGame with PREPARING has to call Ready."""

    concurrency: int = 32
    """Games played at the same time, at most (on each node)."""
    lease_seconds: float = 15.0
    """A node's lease on a game, renewed every third of it: a dead node's games move on."""
    max_strikes: int = 3
    """Faulty replies that forfeit a game (per game: ``[games.X] max_strikes``)."""

    allowed_networks: tuple[str, ...] = (
        "127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7",
    )
    """Networks a bot's endpoint may resolve into (CIDR).  Add "0.0.0.0/0" and "::/0" to
    allow bots anywhere on the internet."""

    ladder: bool = False
    """Keep pairing online bots of every game (the continuous ladder)."""
    ladder_interval: float = 5.0
    """Seconds between the ladder's scheduling passes."""
    max_games_per_bot: int = 4
    """Games a bot may be in at once, at most, for the ladder to give it another."""
    fault_window: int = 10
    """The last games of a bot that the fault rule looks at."""
    fault_share: float = 0.5
    """Share of those games with a fault of the bot's own that disables it (0 = never)."""
    admin_token: str = ""
    """The token of the admin API (``Authorization: Bearer <token>``); empty = no admin."""

    max_games_per_owner: int = 0
    """Games one owner's bots may be in at once (fair share); 0 = a quarter of
    ``concurrency``."""
    registration_burst: int = 10
    """Registrations a user may make in a row..."""
    registration_interval: float = 6.0
    """...after which one more is allowed every this many seconds."""
    max_bots_per_user: int = 20
    """Bot names one user may register."""

    idle_timeout: float = 15.0
    """Seconds a client connection may go without sending a whole request's head (idle,
    kept alive, or sending its headers slowly) before it is closed."""
    body_timeout: float = 15.0
    """Seconds a client has to send a request body."""
    max_connections: int = 4096
    """Client connections open at once on every listener together (lowered at start-up to
    what the open-files limit allows)."""
    max_connections_per_client: int = 64
    """Connections one client address (an IPv6 /64) may hold open at once."""
    max_streams: int = 256
    """Live streams open at once on every listener together (server-sent events, the
    hexagons observers' streams)."""
    max_streams_per_client: int = 8
    """Live streams one client address may hold open at once."""
    max_heavy_per_client: int = 8
    """Answers that take the platform a while to make (a long game's replay, its calls'
    bodies, a stored gateway game rebuilt) one client address may be waiting for at once
    (:mod:`merknera.work`)."""
    stream_send_timeout: float = 15.0
    """Seconds a live stream's client has to take what it is sent; one that does not is
    cut off (its connection reset)."""
    request_burst: int = 300
    """Requests one client address may send in a row..."""
    request_rate: float = 100.0
    """...and then per second, on average (more are answered 429 with Retry-After)."""
    auth_failure_burst: int = 10
    """Wrong tokens one client address may send in a row..."""
    auth_failure_interval: float = 1.0
    """...after which it may try one more every this many seconds (429 with Retry-After)."""

    battlebot_port: int = 0
    """Port of the Battlebot listener, where Battlebot's WebSocket clients register, log in
    and play (0 = no listener)."""
    battlebot_tls_cert: str = ""
    """PEM certificate (chain) file: the Battlebot listener speaks TLS (``https``/``wss``,
    all that the 2017-06 client speaks) when this and ``battlebot_tls_key`` are set."""
    battlebot_tls_key: str = ""
    """The PEM private key of ``battlebot_tls_cert``."""
    battlebot_match_wait: float = 5.0
    """Seconds a Battlebot client with no contest waits for another client before it is
    matched with an online bot of another protocol that plays its game."""
    battlebot_salt_turn_limit: float = 3.0
    """Seconds a client of the salted-login protocol has for a valid turn (Battlebot's 3 s
    from the last valid update; invalid turns do not restart it)."""
    battlebot_graphql_turn_limit: float = 4.0
    """The same for a client of the GraphQL-registration protocol (Battlebot's later 4 s)."""
    battlebot_login_timeout: float = 10.0
    """Seconds a Battlebot client has to log in after it connects."""
    battlebot_first_message_wait: float = 1.0
    """The most seconds the listener waits for a new connection to speak first (a
    GraphQL-era client sends its login at once) before it sends the salt that a
    salted-login client waits for.  Where the kernel tells the connection's round trip
    (Linux), the wait is 0.2 s plus four round trips, if that is less."""
    battlebot_max_message: int = 65536
    """Largest message a Battlebot client may send, in bytes; a larger one closes the
    connection (1009)."""

    hexagons_port: int = 0
    """Port of the hexagons listener: the MebiPenny 2011 hexagons server's API at its root,
    for its clients (0 = no listener)."""
    hexagons_turn_limit: float = 30.0
    """Seconds a hexagons player has for each move once it holds the turn token (the
    original's 30 s); a player that takes longer is disqualified."""
    hexagons_match_wait: float = 5.0
    """Seconds a client alone in ``GET /match``'s queue waits before it is given a game
    with an online Hexagons bot of another protocol."""
    hexagons_join_wait: float = 120.0
    """Seconds a hexagons game waits for its players to join before it is dropped."""
    kalaha_port: int = 0
    """Port of the Kalaha listener: the Kalaha board API (``/api/boards``), whose boards
    any origin's pages may read (CORS) (0 = no listener)."""
    kalaha_origins: tuple[str, ...] = ("http://localhost:4200",)
    """Origins (``scheme://host[:port]``) of the front ends whose pages may create boards
    and move on them at the Kalaha listener, besides the platform's own play page: by
    default the original front end's (``kalaha-fe`` under ``ng serve``)."""
    person_turn_limit: float = 300.0
    """Seconds a person (a Kalaha board's player, a game in the browser) has for each
    move; one who takes longer loses on time."""
    max_open_games_per_client: int = 16
    """Games one client address may have open at once at the gateways whose clients have
    no accounts (hexagons games, Kalaha boards, games in the browser)."""
    max_open_games: int = 1000
    """Such games open at once in all (the address holding the most gives one up)."""

    log_level: str = "INFO"
    """Logging level of the platform process."""

    games: Mapping[str, GameRules] = field(default_factory=dict)
    """Per-game rule overrides (TOML only)."""

    @property
    def base_url(self) -> str:
        """The public base URL without a trailing slash."""
        if self.public_url:
            return self.public_url.rstrip("/")
        return f"http://{host_port(self.host, self.port)}"

    @property
    def assets_path(self) -> Path:
        """The asset directory: ``assets_dir``, or this installation's ``assets/``."""
        if self.assets_dir:
            return Path(self.assets_dir)
        # Imported here: merknera.assets imports aiohttp, which `merknera user` never needs.
        from merknera.assets import default_directory

        return default_directory()

    @property
    def networks(self) -> tuple[IPNetwork, ...]:
        """``allowed_networks`` parsed."""
        return tuple(ipaddress.ip_network(net, strict=False) for net in self.allowed_networks)

    @property
    def owner_share(self) -> int:
        """Games one owner's bots may be in at once: ``max_games_per_owner``, or a quarter
        of ``concurrency`` (at least one) when that is 0."""
        return self.max_games_per_owner or max(1, self.concurrency // 4)

    def rules_for(self, mnemonic: str) -> GameRules:
        """The rules of play for one game: its overrides, else the global values."""
        return self.games.get(mnemonic, GameRules(self.move_timeout, self.max_strikes,
                                                  self.rest_call_timeout))


OVERRIDABLE: tuple[str, ...] = tuple(
    f.name for f in dataclasses.fields(Config) if f.name != "games"
)
"""The keys settable from the environment and the command line."""


def _field_types() -> dict[str, Any]:
    return get_type_hints(Config)


def _coerce(key: str, raw: object, source: str) -> object:
    """Turn a raw value (a TOML value, or a string from env/argv) into the field's type."""
    kind = _field_types()[key]
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
            if isinstance(raw, list) and all(isinstance(item, str) for item in raw):
                return tuple(raw)
            return _bad(raw)
    except ValueError as exc:
        raise ConfigError(f"{key} from {source}: {raw!r} is not valid ({exc})") from None
    raise AssertionError(f"unhandled config type {kind} for {key}")


_BOOLEANS = {"true": True, "1": True, "yes": True, "on": True,
             "false": False, "0": False, "no": False, "off": False}


def _bad(raw: object) -> object:
    raise ValueError(f"unexpected {type(raw).__name__}")


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
"""A URL (SQLite would make a folder of its scheme, ``mysql:``, and a file in it)."""


def parse_origin(text: str) -> str | None:
    """``text`` as a web origin (what a browser sends in ``Origin``), written one way
    (``http://localhost:4200``; the port always given, the host in lower case), so that
    two spellings of one origin compare equal; None for anything else (``null``, a path,
    another scheme)."""
    try:
        parts = urllib.parse.urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if (parts.scheme.lower() not in _DEFAULT_PORTS or not host or parts.username is not None
            or parts.password is not None or parts.path not in ("", "/") or parts.query
            or parts.fragment or text.strip().endswith(("?", "#"))):
        return None
    scheme = parts.scheme.lower()
    return f"{scheme}://{host_port(host, port if port is not None else _DEFAULT_PORTS[scheme])}"


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _validate(config: Config) -> Config:
    def need(ok: bool, key: str, why: str) -> None:
        if not ok:
            raise ConfigError(f"{key} = {getattr(config, key)!r}: {why}")

    need(0 <= config.port <= 65535, "port", "must be between 0 and 65535")
    if _URL.match(config.db) and not POSTGRESQL_URL.match(config.db):
        raise ConfigError(f"db = '{config.db.split('://')[0]}://...': a URL the store does "
                          "not speak: db is the path of a SQLite file (one node) or a "
                          "postgresql:// URL (any number of nodes)")
    for key in ("battlebot_port", "hexagons_port", "kalaha_port"):
        need(0 <= getattr(config, key) <= 65535, key, "must be between 0 and 65535")
    need(bool(config.battlebot_tls_cert) == bool(config.battlebot_tls_key),
         "battlebot_tls_cert", "needs battlebot_tls_key, and the key the certificate")
    need(config.battlebot_max_message >= 1024, "battlebot_max_message", "must be at least 1024")
    for key in ("connect_timeout", "move_timeout", "ping_timeout", "notify_timeout",
                "announce_timeout", "rest_call_timeout", "battlebot_match_wait",
                "battlebot_salt_turn_limit", "battlebot_graphql_turn_limit",
                "battlebot_login_timeout", "battlebot_first_message_wait",
                "hexagons_turn_limit", "hexagons_match_wait", "hexagons_join_wait",
                "person_turn_limit",
                "ping_interval", "offline_retry_min", "offline_retry_max"):
        need(getattr(config, key) > 0, key, "must be greater than 0")
    need(config.offline_grace >= 0, "offline_grace", "must not be negative")
    need(config.ready_timeout > 0, "ready_timeout", "must be greater than 0")
    need(config.offline_retry_max >= config.offline_retry_min, "offline_retry_max",
         "must not be less than offline_retry_min")
    need(config.concurrency >= 1, "concurrency", "must be at least 1")
    need(config.max_strikes >= 1, "max_strikes", "must be at least 1")
    need(config.max_reply_bytes >= 1024, "max_reply_bytes", "must be at least 1024")
    need(config.ladder_interval > 0, "ladder_interval", "must be greater than 0")
    need(config.lease_seconds >= 1, "lease_seconds", "must be at least 1")
    need(config.max_games_per_bot >= 1, "max_games_per_bot", "must be at least 1")
    need(config.fault_window >= 1, "fault_window", "must be at least 1")
    need(0 <= config.fault_share <= 1, "fault_share", "must be between 0 and 1")
    need(config.max_games_per_owner >= 0, "max_games_per_owner",
         "must not be negative (0 = a quarter of concurrency)")
    for key in ("max_open_games_per_client", "max_open_games",
                "registration_burst", "max_bots_per_user", "max_connections",
                "max_connections_per_client", "max_streams", "max_streams_per_client",
                "max_heavy_per_client", "request_burst",
                "auth_failure_burst"):
        need(getattr(config, key) >= 1, key, "must be at least 1")
    for key in ("registration_interval", "idle_timeout", "body_timeout", "request_rate",
                "auth_failure_interval", "stream_send_timeout"):
        need(getattr(config, key) > 0, key, "must be greater than 0")
    need(bool(config.db), "db", "must name a file")
    need(config.log_level.upper() in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
         "log_level", "must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL")
    need(config.public_url == "" or config.public_url.startswith(("http://", "https://")),
         "public_url", "must start with http:// or https://")
    for origin in config.kalaha_origins:
        if parse_origin(origin) is None:
            raise ConfigError(f"kalaha_origins: {origin!r} is not an origin (scheme://host"
                              "[:port] with the scheme http or https, and nothing after, "
                              "as a browser names a page's origin)")
    for net in config.allowed_networks:
        try:
            ipaddress.ip_network(net, strict=False)
        except ValueError as exc:
            raise ConfigError(f"allowed_networks: {net!r} is not a network ({exc})") from None
    for mnemonic, rules in config.games.items():
        for key, ok, why in (("move_timeout", rules.move_timeout > 0, "greater than 0"),
                             ("rest_call_timeout", rules.rest_call_timeout > 0,
                              "greater than 0"),
                             ("max_strikes", rules.max_strikes >= 1, "at least 1")):
            if not ok:
                raise ConfigError(f"games.{mnemonic}.{key} = {getattr(rules, key)!r}: "
                                  f"must be {why}")
    return config


def _game_rules(table: object, base: dict[str, Any], source: str) -> dict[str, GameRules]:
    if not isinstance(table, dict):
        raise ConfigError(f"[games] in {source} must be a table of tables")
    rules: dict[str, GameRules] = {}
    for mnemonic, values in table.items():
        if not isinstance(values, dict):
            raise ConfigError(f"[games.{mnemonic}] in {source} must be a table")
        unknown = set(values) - {f.name for f in dataclasses.fields(GameRules)}
        if unknown:
            raise ConfigError(f"[games.{mnemonic}] in {source}: unknown keys {sorted(unknown)}")
        # Each rule is also a global key of Config, which is its default and its type.
        chosen: dict[str, Any] = {
            f.name: _coerce(f.name, values.get(f.name, base[f.name]), source)
            for f in dataclasses.fields(GameRules)}
        rules[mnemonic] = GameRules(**chosen)
    return rules


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
    values: dict[str, Any] = {f.name: getattr(Config(), f.name)
                              for f in dataclasses.fields(Config)}
    games_table: object = None
    source_path: Path | None
    if path is not None:
        source_path = Path(path)
    elif env.get(ENV_PREFIX + "CONFIG"):
        source_path = Path(env[ENV_PREFIX + "CONFIG"])
    else:
        source_path = Path("config.toml") if Path("config.toml").is_file() else None
    if source_path is not None:
        try:
            with source_path.open("rb") as handle:
                document = tomllib.load(handle)
        except OSError as exc:
            raise ConfigError(f"cannot read {source_path}: {exc.strerror}") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{source_path} is not valid TOML: {exc}") from None
        for key, raw in document.items():
            if key == "games":
                games_table = raw
            elif key in OVERRIDABLE:
                values[key] = _coerce(key, raw, str(source_path))
            else:
                raise ConfigError(f"{source_path}: unknown key {key!r}")
    for key in OVERRIDABLE:
        raw_env = env.get(ENV_PREFIX + key.upper())
        if raw_env is not None:
            values[key] = _coerce(key, raw_env, f"${ENV_PREFIX}{key.upper()}")
    for key, raw in (overrides or {}).items():
        if raw is None or key == "games":
            continue
        if key not in OVERRIDABLE:
            raise ConfigError(f"unknown configuration key {key!r}")
        values[key] = _coerce(key, raw, f"--{key.replace('_', '-')}")
    table: dict[str, Any] = {}
    if games_table is not None:
        if not isinstance(games_table, dict):
            raise ConfigError(f"[games] in {source_path} must be a table of tables")
        table = {name: dict(rules) if isinstance(rules, dict) else rules
                 for name, rules in games_table.items()}
    for source, assignments in ((f"${ENV_PREFIX}GAMES", env.get(ENV_PREFIX + "GAMES")),
                                ("--games", (overrides or {}).get("games"))):
        for mnemonic, key, raw in _game_assignments(assignments, source):
            rules = table.setdefault(mnemonic, {})
            if not isinstance(rules, dict):
                raise ConfigError(f"[games.{mnemonic}] must be a table")
            rules[key] = raw
    if table:
        values["games"] = _game_rules(table, values, str(source_path or "the overrides"))
    return _validate(Config(**values))


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


def add_config_arguments(parser: Any, keys: Sequence[str] = OVERRIDABLE) -> None:
    """Add ``--<key>`` options (with dashes or underscores) to an argparse parser."""
    parser.add_argument("--config", dest="config_path", default=None,
                        help="TOML configuration file (default: ./config.toml if present)")
    for key in keys:
        dashed = "--" + key.replace("_", "-")
        flags = [dashed] if "_" not in key else [dashed, "--" + key]
        if _field_types()[key] is bool:
            # `--ladder` alone means true; `--ladder false` is accepted too.
            parser.add_argument(*flags, dest=key, default=None, nargs="?", const="true",
                                metavar="true|false", help=f"set the configuration key {key}")
            continue
        parser.add_argument(*flags, dest=key, default=None, metavar=key.upper(),
                            help=f"override the configuration key {key}")
    if "move_timeout" in keys:
        parser.add_argument("--games", action="append", default=None,
                            metavar="MNEMONIC.KEY=VALUE",
                            help="a per-game rule, e.g. TICTACTOE.move_timeout=5 (repeatable)")


def overrides_from_args(args: Any) -> dict[str, object]:
    """The ``--<key>`` values given on the command line."""
    found = {key: getattr(args, key, None) for key in OVERRIDABLE}
    found["games"] = getattr(args, "games", None)
    return found
