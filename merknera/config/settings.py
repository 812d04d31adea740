"""The settings, in groups by concern, and the :class:`Config` they make."""

from __future__ import annotations

import dataclasses
import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, get_type_hints

from merknera.config.schema import (
    A_PORT,
    AT_LEAST_ONE,
    NOT_NEGATIVE,
    POSITIVE,
    SETTING_KEY,
    Bound,
    IPNetwork,
    Key,
    Settings,
    coerce,
    setting,
)
from merknera.hosts import host_port


@dataclass(frozen=True)
class TlsFiles:
    """A listener's TLS certificate (chain) and its private key: two PEM files."""

    cert: str
    key: str


@dataclass(frozen=True)
class ListenerSettings(Settings):
    """Where the platform listens (/rpc, the site and the API) and what it is called."""

    host: str = setting("127.0.0.1", "Address the HTTP server listens on (0.0.0.0 for every "
                        "interface).", metavar="ADDRESS")
    port: int = setting(8080, "Port the HTTP server listens on (0 picks a free one).",
                        bound=A_PORT)
    public_url: str = setting("", "Base URL that bots and browsers reach the platform at "
                              "(asset URLs are built from it); empty means http://host:port "
                              "(https://host:port with TLS).", metavar="URL")
    tls_cert: str = setting("", "PEM certificate (chain) file: with tls_key, every listener "
                            "(this one, the hexagons, Kalaha and Battlebot listeners) speaks "
                            "TLS only (https, wss).", metavar="PATH")
    tls_key: str = setting("", "The PEM private key of tls_cert.", metavar="PATH")
    trusted_proxies: tuple[str, ...] = setting(
        (), "Networks (CIDR) of the reverse proxies in front of the platform: from these "
        "peers only, a request's client is the right-most address in proxy_header that is "
        "not itself a trusted proxy, and its scheme is the one the proxy names "
        "(X-Forwarded-Proto, or Forwarded's proto); every per-client limit counts that "
        "client. Other peers' forwarding headers are ignored. Empty: no proxy.",
        metavar="CIDR,...")
    proxy_header: str = setting("X-Forwarded-For", "The header the trusted proxies add the "
                                "client's address to: X-Forwarded-For (with the scheme in "
                                "X-Forwarded-Proto), or Forwarded (RFC 7239, its for= and "
                                "proto=). Only this one is read: the proxy passes the other "
                                "on as the client sent it.",
                                choices=("X-FORWARDED-FOR", "FORWARDED"))

    @property
    def tls(self) -> TlsFiles | None:
        """The certificate and key every listener serves TLS with; None: plain HTTP."""
        return TlsFiles(self.tls_cert, self.tls_key) if self.tls_cert else None

    @property
    def scheme(self) -> str:
        """How a client reaches the listeners: ``https`` with TLS, else ``http``."""
        return "https" if self.tls_cert else "http"

    def url(self, port: int) -> str:
        """The base URL of a listener of this host on ``port`` (``https://127.0.0.1:8081``)."""
        return f"{self.scheme}://{host_port(self.host, port)}"

    @property
    def base_url(self) -> str:
        """The public base URL without a trailing slash."""
        if self.public_url:
            return self.public_url.rstrip("/")
        return self.url(self.port)

    @property
    def proxy_networks(self) -> tuple[IPNetwork, ...]:
        """``trusted_proxies`` parsed."""
        return tuple(ipaddress.ip_network(net, strict=False) for net in self.trusted_proxies)


@dataclass(frozen=True)
class StoreSettings(Settings):
    """Where the platform keeps its games and its game assets."""

    db: str = setting("merknera.db", "Path of the SQLite database file (one node), or a "
                      "postgresql:// URL (any number of nodes).", metavar="PATH|URL")
    assets_dir: str = setting("", "Directory of the game asset files and their manifest; "
                              "empty means the game_assets/ directory of this installation.",
                              metavar="DIR")

    @property
    def assets_path(self) -> Path:
        """The asset directory: ``assets_dir``, or this installation's ``game_assets/``."""
        if self.assets_dir:
            return Path(self.assets_dir)
        # Imported here: merknera.assets imports aiohttp, which `merknera user` never needs.
        from merknera.assets import default_directory

        return default_directory()


@dataclass(frozen=True)
class CallSettings(Settings):
    """Calls to bots: how long each kind may take, how large a reply may be, and which
    networks a bot's endpoint may be on."""

    connect_timeout: float = setting(2.0, "Seconds to open a connection to a bot.",
                                     bound=POSITIVE)
    ping_timeout: float = setting(5.0, "Seconds a bot has to answer Status.Ping (any HTTP "
                                  "200 in time means online).", bound=POSITIVE)
    notify_timeout: float = setting(5.0, "Seconds allowed for NewGame, Complete and Error "
                                    "calls.", bound=POSITIVE)
    announce_timeout: float = setting(1.0, "Seconds allowed for the calls a game makes while "
                                      "it goes on and waits for (Squelch's TurnStart and the "
                                      "like); their replies are ignored.", bound=POSITIVE)
    max_reply_bytes: int = setting(65536, "Largest reply body accepted from a bot; a larger "
                                   "one is a malformed reply.", bound=Bound(least=1024))
    allowed_networks: tuple[str, ...] = setting(
        ("127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
         "fc00::/7"),
        "Networks (CIDR) a bot's endpoint may resolve into: a registration outside them is "
        "refused, and calls never go elsewhere. Add 0.0.0.0/0 and ::/0 to allow bots "
        "anywhere on the internet.", metavar="CIDR,...")

    @property
    def networks(self) -> tuple[IPNetwork, ...]:
        """``allowed_networks`` parsed."""
        return tuple(ipaddress.ip_network(net, strict=False) for net in self.allowed_networks)


@dataclass(frozen=True)
class GameRules(Settings):
    """Rules of play: every game's, unless a game has its own ([games.MNEMONIC] tables,
    MERKNERA_GAMES, --games MNEMONIC.key=value)."""

    move_timeout: float = setting(10.0, "Seconds a bot has to answer NextMove; a late reply "
                                  "forfeits the game.", bound=POSITIVE)
    max_strikes: int = setting(3, "Faulty replies (malformed, illegal, error) that forfeit a "
                               "game; the last one does.", bound=AT_LEAST_ONE)
    rest_call_timeout: float = setting(1.0, "Seconds a bot that speaks the game's own REST "
                                       "API has for each call, its moves included (the "
                                       "Squelchbot arena spec allows 1 s).", bound=POSITIVE)


@dataclass(frozen=True)
class LivenessSettings(Settings):
    """How the platform learns that a bot is online or offline, and waits for it."""

    ping_interval: float = setting(60.0, "Seconds between liveness pings of online bots; a "
                                   "bot not heard from for this long is pinged before its "
                                   "next first move of a game.", bound=POSITIVE)
    offline_retry_min: float = setting(1.0, "First delay before re-pinging an offline bot, in "
                                       "seconds; it doubles on every failure.", bound=POSITIVE)
    offline_retry_max: float = setting(120.0, "Longest delay between re-pings of an offline "
                                       "bot, in seconds (at least offline_retry_min).",
                                       bound=POSITIVE)
    offline_grace: float = setting(300.0, "Seconds a game waits for an offline seat before "
                                   "that seat forfeits.", bound=NOT_NEGATIVE)
    ready_timeout: float = setting(120.0, "Seconds a bot that answered NewGame with PREPARING "
                                   "has to call Ready.", bound=POSITIVE)


@dataclass(frozen=True)
class SchedulingSettings(Settings):
    """Which games are played, how many at once, on which node, and which bots are given
    more: the ladder, fair shares and the fault rule."""

    concurrency: int = setting(32, "Games played at the same time, at most (on each node).",
                               bound=AT_LEAST_ONE)
    lease_seconds: float = setting(15.0, "A node's lease on a game, renewed every third of "
                                   "it: a dead node's games move on after this long.",
                                   bound=Bound(least=1))
    ladder: bool = setting(False, "Keep pairing online bots of every game (the continuous "
                           "ladder).")
    ladder_interval: float = setting(5.0, "Seconds between the ladder's scheduling passes.",
                                     bound=POSITIVE)
    max_games_per_bot: int = setting(4, "Games a bot may be in at once, at most, for the "
                                     "ladder to give it another.", bound=AT_LEAST_ONE)
    max_games_per_owner: int = setting(0, "Games one owner's bots may be in at once (fair "
                                       "share); 0 = a quarter of concurrency.",
                                       bound=NOT_NEGATIVE)
    trial_share: float = setting(0.25, "Share of concurrency that challenges and duels may "
                                 "take (their games wait beyond it; at least 2 games).",
                                 bound=Bound(least=0, most=1))
    max_challenges_per_owner: int = setting(10, "Challenges one owner may ask for in an hour.",
                                            bound=AT_LEAST_ONE)
    fault_window: int = setting(10, "The last games of a bot that the fault rule looks at.",
                                bound=AT_LEAST_ONE)
    fault_share: float = setting(0.5, "Share of those games with a fault of the bot's own "
                                 "that disables it (0 = never).", bound=Bound(least=0, most=1))

    @property
    def trial_places(self) -> int:
        """Games of challenges and duels in play at once, at most (on the arena)."""
        return max(2, int(self.concurrency * self.trial_share))

    @property
    def owner_share(self) -> int:
        """Games one owner's bots may be in at once: ``max_games_per_owner``, or a quarter
        of ``concurrency`` (at least one) when that is 0."""
        return self.max_games_per_owner or max(1, self.concurrency // 4)


@dataclass(frozen=True)
class AccountSettings(Settings):
    """Who may register bots, how many and how fast, and the admin's token."""

    registration_burst: int = setting(10, "Registrations a user may make in a row...",
                                      bound=AT_LEAST_ONE)
    registration_interval: float = setting(6.0, "...after which one more is allowed every "
                                           "this many seconds.", bound=POSITIVE)
    max_bots_per_user: int = setting(20, "Bot names one user may register.",
                                     bound=AT_LEAST_ONE)
    admin_token: str = setting("", "The token of the admin API (Authorization: Bearer "
                               "<token>); empty = no admin.", metavar="TOKEN")


@dataclass(frozen=True)
class LimitSettings(Settings):
    """What one client may take, on every listener: connections, streams, requests, and
    the time it has to send them."""

    idle_timeout: float = setting(15.0, "Seconds a client connection may go without sending "
                                  "a whole request's head (idle, kept alive, or sending its "
                                  "headers slowly) before it is closed.", bound=POSITIVE)
    body_timeout: float = setting(15.0, "Seconds a client has to send a request body.",
                                  bound=POSITIVE)
    max_connections: int = setting(4096, "Client connections open at once on every listener "
                                   "together (lowered at start-up to what the open-files "
                                   "limit allows).", bound=AT_LEAST_ONE)
    max_connections_per_client: int = setting(64, "Connections one client address (an IPv6 "
                                              "/64) may hold open at once.",
                                              bound=AT_LEAST_ONE)
    max_streams: int = setting(256, "Live streams open at once on every listener together "
                               "(server-sent events, the hexagons observers' streams).",
                               bound=AT_LEAST_ONE)
    max_streams_per_client: int = setting(8, "Live streams one client address may hold open "
                                          "at once.", bound=AT_LEAST_ONE)
    max_heavy_per_client: int = setting(8, "Answers that take the platform a while to make "
                                        "(a long game's replay, its calls' bodies, a stored "
                                        "gateway game rebuilt) one client address may be "
                                        "waiting for at once.", bound=AT_LEAST_ONE)
    stream_send_timeout: float = setting(15.0, "Seconds a live stream's client has to take "
                                         "what it is sent; one that does not is cut off (its "
                                         "connection reset).", bound=POSITIVE)
    request_burst: int = setting(300, "Requests one client address may send in a row...",
                                 bound=AT_LEAST_ONE)
    request_rate: float = setting(100.0, "...and then per second, on average (more are "
                                  "answered 429 with Retry-After).", bound=POSITIVE)
    auth_failure_burst: int = setting(10, "Wrong tokens one client address may send in a "
                                      "row...", bound=AT_LEAST_ONE)
    auth_failure_interval: float = setting(1.0, "...after which it may try one more every "
                                           "this many seconds (429 with Retry-After).",
                                           bound=POSITIVE)


@dataclass(frozen=True)
class BattlebotSettings(Settings):
    """The Battlebot gateway: the listener of Battlebot's WebSocket clients (both of its
    protocols, on one port), where they register, log in and play."""

    KEY_PREFIX: ClassVar[str] = "battlebot_"

    port: int = setting(0, "Port of the Battlebot listener (0 = no listener).", bound=A_PORT)
    tls_cert: str = setting("", "PEM certificate (chain) file of the Battlebot listener "
                            "alone, with battlebot_tls_key: it speaks TLS (https/wss, all "
                            "that the 2017-06 client speaks) with these instead of "
                            "tls_cert and tls_key; empty: with those.", metavar="PATH")
    tls_key: str = setting("", "The PEM private key of battlebot_tls_cert.", metavar="PATH")
    match_wait: float = setting(5.0, "Seconds a Battlebot client with no contest waits for "
                                "another client before it is matched with an online bot of "
                                "another protocol that plays its game.", bound=POSITIVE)
    salt_turn_limit: float = setting(3.0, "Seconds a client of the salted-login protocol has "
                                     "for a valid turn (Battlebot's 3 s from the last valid "
                                     "update; invalid turns do not restart it).",
                                     bound=POSITIVE)
    graphql_turn_limit: float = setting(4.0, "The same for a client of the GraphQL-"
                                        "registration protocol (Battlebot's later 4 s).",
                                        bound=POSITIVE)
    login_timeout: float = setting(10.0, "Seconds a Battlebot client has to log in after it "
                                   "connects.", bound=POSITIVE)
    first_message_wait: float = setting(1.0, "The most seconds the listener waits for a new "
                                        "connection to speak first (a GraphQL-era client "
                                        "sends its login at once) before it sends the salt "
                                        "that a salted-login client waits for. Where the "
                                        "kernel tells the connection's round trip (Linux), "
                                        "the wait is 0.2 s plus four round trips, if that is "
                                        "less.", bound=POSITIVE)
    max_message: int = setting(65536, "Largest message a Battlebot client may send, in "
                               "bytes; a larger one closes the connection (1009).",
                               bound=Bound(least=1024))


@dataclass(frozen=True)
class HexagonsSettings(Settings):
    """The hexagons gateway: the MebiPenny 2011 hexagons server's API at its root, for its
    clients."""

    KEY_PREFIX: ClassVar[str] = "hexagons_"

    port: int = setting(0, "Port of the hexagons listener (0 = no listener).", bound=A_PORT)
    turn_limit: float = setting(30.0, "Seconds a hexagons player has for each move once it "
                                "holds the turn token (the original's 30 s); a player that "
                                "takes longer is disqualified.", bound=POSITIVE)
    match_wait: float = setting(5.0, "Seconds a client alone in GET /match's queue waits "
                                "before it is given a game with an online Hexagons bot of "
                                "another protocol.", bound=POSITIVE)
    join_wait: float = setting(120.0, "Seconds a hexagons game waits for its players to join "
                               "before it is dropped.", bound=POSITIVE)


@dataclass(frozen=True)
class KalahaSettings(Settings):
    """The Kalaha gateway: the Kalaha board API (/api/boards), whose boards any origin's
    pages may read (CORS)."""

    KEY_PREFIX: ClassVar[str] = "kalaha_"

    port: int = setting(0, "Port of the Kalaha listener (0 = no listener).", bound=A_PORT)
    origins: tuple[str, ...] = setting(
        ("http://localhost:4200",),
        "Origins (scheme://host[:port]) of the front ends whose pages may create boards and "
        "move on them at the Kalaha listener, besides the platform's own play page: by "
        "default the original front end's (kalaha-fe under ng serve).", metavar="ORIGIN,...")


@dataclass(frozen=True)
class GuestSettings(Settings):
    """Games opened by clients without accounts (hexagons games, Kalaha boards, games in
    the browser) and the people who play them."""

    person_turn_limit: float = setting(300.0, "Seconds a person (a Kalaha board's player, a "
                                       "game in the browser) has for each move; one who "
                                       "takes longer loses on time.", bound=POSITIVE)
    max_open_games_per_client: int = setting(16, "Such games one client address may have "
                                             "open at once.", bound=AT_LEAST_ONE)
    max_open_games: int = setting(1000, "Such games open at once in all (the address holding "
                                  "the most gives one up).", bound=AT_LEAST_ONE)


@dataclass(frozen=True)
class LogSettings(Settings):
    """What the platform process logs."""

    KEY_PREFIX: ClassVar[str] = "log_"

    level: str = setting("INFO", "Logging level of the platform process.",
                         choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
    format: str = setting("text", "How each log line is written: text (a UTC time, the "
                          "level, the logger and the message), or json (one JSON object a "
                          "line: time, level, logger, message, and game_id and bot_id where "
                          "known).", choices=("TEXT", "JSON"))
    access: bool = setting(False, "Log every HTTP request of every listener (the logger "
                           "merknera.access, at INFO): the client's address, the request "
                           "line, the status, the size, the seconds taken, the referrer and "
                           "the user agent.")

    @property
    def json(self) -> bool:
        """Whether the log lines are JSON objects (``format = "json"``)."""
        return self.format.upper() == "JSON"


@dataclass(frozen=True)
class MetricsSettings(Settings):
    """Who may read the platform's metrics (GET /metrics, in Prometheus' text format):
    the admin token, or clients in these networks."""

    KEY_PREFIX: ClassVar[str] = "metrics_"

    networks: tuple[str, ...] = setting(
        ("127.0.0.0/8", "::1/128"),
        "Networks (CIDR) whose clients may read GET /metrics without a token (a Prometheus "
        "server's); anybody else needs the admin token (Authorization: Bearer).",
        metavar="CIDR,...")

    @property
    def ip_networks(self) -> tuple[IPNetwork, ...]:
        """``networks`` parsed."""
        return tuple(ipaddress.ip_network(net, strict=False) for net in self.networks)


@dataclass(frozen=True)
class Config:
    """Everything the platform can be told, by group.  Immutable; build it with
    :func:`load_config`, or with its groups (``Config(store=StoreSettings(db=path))``)."""

    listeners: ListenerSettings = field(default_factory=ListenerSettings)
    store: StoreSettings = field(default_factory=StoreSettings)
    calls: CallSettings = field(default_factory=CallSettings)
    rules: GameRules = field(default_factory=GameRules)
    liveness: LivenessSettings = field(default_factory=LivenessSettings)
    scheduling: SchedulingSettings = field(default_factory=SchedulingSettings)
    accounts: AccountSettings = field(default_factory=AccountSettings)
    limits: LimitSettings = field(default_factory=LimitSettings)
    battlebot: BattlebotSettings = field(default_factory=BattlebotSettings)
    hexagons: HexagonsSettings = field(default_factory=HexagonsSettings)
    kalaha: KalahaSettings = field(default_factory=KalahaSettings)
    guests: GuestSettings = field(default_factory=GuestSettings)
    log: LogSettings = field(default_factory=LogSettings)
    metrics: MetricsSettings = field(default_factory=MetricsSettings)

    games: Mapping[str, GameRules] = field(default_factory=dict)
    """Per-game rules, by mnemonic; a game without its own plays by :attr:`rules`."""

    @property
    def battlebot_tls(self) -> TlsFiles | None:
        """The certificate and key the Battlebot listener serves TLS with: its own
        (``battlebot_tls_cert``), else every listener's (``tls_cert``); None: plain HTTP."""
        battlebot = self.battlebot
        if battlebot.tls_cert:
            return TlsFiles(battlebot.tls_cert, battlebot.tls_key)
        return self.listeners.tls

    def rules_for(self, mnemonic: str) -> GameRules:
        """The rules of play for one game: its own, else every game's."""
        return self.games.get(mnemonic, self.rules)

    def replace(self, games: Mapping[str, GameRules] | None = None,
                **settings: object) -> Config:
        """This config with some settings changed, named by their keys as in the file
        (``config.replace(port=0, battlebot_port=8083)``), and with other per-game rules
        if ``games`` is given; values are read as from the file, and not checked against
        the bounds.

        :raises TypeError: for a name that is no setting's key.
        :raises ConfigError: for a value the setting cannot take.
        """
        changes: dict[str, dict[str, object]] = {}
        for name, raw in settings.items():
            key = KEYS.get(name)
            if key is None:
                raise TypeError(f"Config.replace: {name!r} is not a setting's key")
            changes.setdefault(key.group, {})[key.field] = coerce(key, raw, "Config.replace")
        groups: dict[str, Any] = {
            group: dataclasses.replace(getattr(self, group), **fields)
            for group, fields in changes.items()}
        return dataclasses.replace(self, **groups, games=self.games if games is None else games)


GROUPS: Mapping[str, type[Settings]] = {
    group.name: get_type_hints(Config)[group.name]
    for group in dataclasses.fields(Config) if group.name != "games"}
"""The settings groups of :class:`Config`, by its attribute, in the order of ``--help``."""


def _keys() -> dict[str, Key]:
    keys: dict[str, Key] = {}
    for group, kind in GROUPS.items():
        hints = get_type_hints(kind)
        for member in dataclasses.fields(kind):
            name = kind.KEY_PREFIX + member.name
            keys[name] = Key(name, group, member.name, hints[member.name], member.default,
                             member.metadata[SETTING_KEY])
    return keys


KEYS: Mapping[str, Key] = _keys()
"""Every setting, by its key."""

OVERRIDABLE: tuple[str, ...] = tuple(KEYS)
"""The keys settable from the file, the environment and the command line."""
