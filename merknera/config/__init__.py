"""Configuration: ``config.toml``, then the environment, then the command line -> one Config.

A :class:`Config` is made of groups of settings, one per concern (``config.listeners.port``,
``config.limits.idle_timeout``, ``config.battlebot.port``).  Each setting is defined once,
in its group: its type and default by the field, its help and bounds by :func:`setting`.
That one definition gives the setting's key and everything done with it:

1. the TOML file (``--config PATH``, ``MERKNERA_CONFIG``, or ``./config.toml`` if present)
   sets it by its key (``battlebot_port = 8083``), or in its group's table
   (``[battlebot]`` ``port = 8083``);
2. the environment, as ``MERKNERA_<KEY>`` (``MERKNERA_MOVE_TIMEOUT=2.5``);
3. the command line, as ``--<key>`` (``--move-timeout 2.5`` or ``--move_timeout 2.5``),
   whose ``--help`` shows each setting's help, default and bounds, by group.

Later sources win.  The key of a setting is its field's name, after its group's
``KEY_PREFIX`` for the gateways' groups (``battlebot_port`` is ``config.battlebot.port``).

Per-game rules (the keys of :class:`GameRules`) are set in TOML tables
``[games.<MNEMONIC>]``, in the environment as ``MERKNERA_GAMES="TICTACTOE.move_timeout=5,..."``
and on the command line as ``--games TICTACTOE.move_timeout=5`` (repeatable).
"""

from merknera.config.arguments import add_config_arguments, flag_help, overrides_from_args, shown
from merknera.config.load import load_config, sample
from merknera.config.schema import (
    A_PORT,
    AT_LEAST_ONE,
    ENV_PREFIX,
    NOT_NEGATIVE,
    POSITIVE,
    Bound,
    ConfigError,
    IPNetwork,
    Key,
    Setting,
    Settings,
    setting,
)
from merknera.config.settings import (
    GROUPS,
    KEYS,
    OVERRIDABLE,
    AccountSettings,
    BattlebotSettings,
    CallSettings,
    Config,
    GameRules,
    GuestSettings,
    HexagonsSettings,
    KalahaSettings,
    LimitSettings,
    ListenerSettings,
    LivenessSettings,
    LogSettings,
    MetricsSettings,
    SchedulingSettings,
    StoreSettings,
    TlsFiles,
)

__all__ = [
    "AT_LEAST_ONE",
    "A_PORT",
    "ENV_PREFIX",
    "GROUPS",
    "KEYS",
    "NOT_NEGATIVE",
    "OVERRIDABLE",
    "POSITIVE",
    "AccountSettings",
    "BattlebotSettings",
    "Bound",
    "CallSettings",
    "Config",
    "ConfigError",
    "GameRules",
    "GuestSettings",
    "HexagonsSettings",
    "IPNetwork",
    "KalahaSettings",
    "Key",
    "LimitSettings",
    "ListenerSettings",
    "LivenessSettings",
    "LogSettings",
    "MetricsSettings",
    "SchedulingSettings",
    "Setting",
    "Settings",
    "StoreSettings",
    "TlsFiles",
    "add_config_arguments",
    "flag_help",
    "load_config",
    "overrides_from_args",
    "sample",
    "setting",
    "shown",
]
