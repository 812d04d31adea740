"""Configuration (merknera/config.py): file, then environment, then command line.

Every test passes ``environ`` explicitly and a path (or runs in an empty tmp_path), so the
real environment and working directory never leak in.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import re
import tomllib
from pathlib import Path

import pytest

from merknera import cli
from merknera.config import (
    GROUPS,
    KEYS,
    OVERRIDABLE,
    Config,
    ConfigError,
    GameRules,
    Key,
    ListenerSettings,
    StoreSettings,
    add_config_arguments,
    load_config,
    overrides_from_args,
    sample,
)
from merknera.hosts import parse_origin


@pytest.fixture
def toml(tmp_path: Path) -> Path:
    """An empty config file; tests write their own content into it."""
    path = tmp_path / "config.toml"
    path.write_text("", encoding="utf-8")
    return path


ANY_HOST = "0.0.0.0"  # noqa: S104 (a value to configure; nothing binds in these tests)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults(toml: Path) -> None:
    config = load_config(toml, environ={})
    assert config == Config()
    listeners = config.listeners
    assert (listeners.host, listeners.port, listeners.public_url, config.store.db) == (
        "127.0.0.1", 8080, "", "merknera.db")
    assert (config.rules.move_timeout, config.calls.ping_timeout, config.rules.max_strikes) == (
        10.0, 5.0, 3)
    assert config.games == {}
    assert config.rules_for("TICTACTOE") == GameRules(move_timeout=10.0, max_strikes=3)


def test_without_a_file_the_defaults_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert load_config(environ={}) == Config()


def test_without_a_path_config_toml_in_the_working_directory_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "config.toml", "port = 9001\n")
    assert load_config(environ={}).listeners.port == 9001


def test_without_a_path_merknera_config_names_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "config.toml", "port = 9001\n")
    other = write(tmp_path / "other.toml", "port = 9002\n")
    assert load_config(environ={"MERKNERA_CONFIG": str(other)}).listeners.port == 9002


def test_the_project_config_toml_is_valid_and_matches_the_defaults(tmp_path: Path) -> None:
    shipped = write(tmp_path / "config.toml", sample())
    assert load_config(shipped, environ={}) == Config()


def test_file_values(toml: Path) -> None:
    write(toml, """
host = "0.0.0.0"
port = 9000
public_url = "https://arena.example.org/"
db = "/var/lib/merknera/arena.db"
move_timeout = 2.5
ping_interval = 30
max_strikes = 5
allowed_networks = ["0.0.0.0/0", "::/0"]
log_level = "DEBUG"
""")
    config = load_config(toml, environ={})
    assert config.listeners.host == ANY_HOST
    assert config.listeners.port == 9000
    assert config.listeners.public_url == "https://arena.example.org/"
    assert config.store.db == "/var/lib/merknera/arena.db"
    assert config.rules.move_timeout == 2.5
    assert config.liveness.ping_interval == 30.0
    assert isinstance(config.liveness.ping_interval, float)
    assert config.rules.max_strikes == 5
    assert config.calls.allowed_networks == ("0.0.0.0/0", "::/0")
    assert config.log.level == "DEBUG"
    assert config.calls.notify_timeout == 5.0  # untouched keys keep their defaults


def test_the_environment_overrides_the_file(toml: Path) -> None:
    write(toml, f"port = 9000\nmove_timeout = 2.5\nhost = \"{ANY_HOST}\"\n")
    config = load_config(toml, environ={"MERKNERA_PORT": "9100", "MERKNERA_MOVE_TIMEOUT": "1.5",
                                        "PORT": "1", "merknera_host": "ignored"})
    assert config.listeners.port == 9100
    assert config.rules.move_timeout == 1.5
    assert config.listeners.host == ANY_HOST


def test_overrides_override_the_environment(toml: Path) -> None:
    write(toml, "port = 9000\n")
    config = load_config(toml, environ={"MERKNERA_PORT": "9100", "MERKNERA_DB": "env.db"},
                         overrides={"port": "9200", "db": None, "max_strikes": "4"})
    assert config.listeners.port == 9200
    assert config.store.db == "env.db"  # a None override means "not given"
    assert config.rules.max_strikes == 4


def test_command_line_options(toml: Path) -> None:
    parser = argparse.ArgumentParser()
    add_config_arguments(parser)
    args = parser.parse_args([
        "--config", str(toml), "--move-timeout", "2.5", "--ping_timeout", "1",
        "--allowed-networks", "10.0.0.0/8, 192.168.0.0/16", "--port", "0"])
    assert args.config_path == str(toml)
    overrides = overrides_from_args(args)
    assert set(overrides) == {*OVERRIDABLE, "games"}
    config = load_config(args.config_path, environ={"MERKNERA_MOVE_TIMEOUT": "9"},
                         overrides=overrides)
    assert config.rules.move_timeout == 2.5
    assert config.calls.ping_timeout == 1.0
    assert config.calls.allowed_networks == ("10.0.0.0/8", "192.168.0.0/16")
    assert config.listeners.port == 0
    assert config.calls.connect_timeout == Config().calls.connect_timeout


def test_command_line_options_for_some_keys_only() -> None:
    parser = argparse.ArgumentParser()
    add_config_arguments(parser, keys=("port",))
    assert parser.parse_args(["--port", "1"]).port == "1"
    with pytest.raises(SystemExit):
        parser.parse_args(["--move-timeout", "1"])


def test_games_is_not_a_command_line_key() -> None:
    assert "games" not in OVERRIDABLE
    assert "move_timeout" in OVERRIDABLE
    # Every setting of every group of Config, the per-game rules (games) aside.
    settings = [member for group in dataclasses.fields(Config) if group.name != "games"
                for member in dataclasses.fields(getattr(Config(), group.name))]
    assert len(OVERRIDABLE) == len(settings)


def test_allowed_networks_from_a_comma_separated_environment_string(toml: Path) -> None:
    config = load_config(toml, environ={
        "MERKNERA_ALLOWED_NETWORKS": " 10.0.0.0/8 ,::1/128,, 192.168.1.0/24 "})
    assert config.calls.allowed_networks == ("10.0.0.0/8", "::1/128", "192.168.1.0/24")
    assert config.calls.networks == (ipaddress.ip_network("10.0.0.0/8"),
                                     ipaddress.ip_network("::1/128"),
                                     ipaddress.ip_network("192.168.1.0/24"))


def test_networks_with_host_bits_are_accepted(toml: Path) -> None:
    config = load_config(toml, environ={"MERKNERA_ALLOWED_NETWORKS": "10.1.2.3/8"})
    assert config.calls.networks == (ipaddress.ip_network("10.0.0.0/8"),)


def test_per_game_rules(toml: Path) -> None:
    write(toml, """
move_timeout = 7.0
[games.TICTACTOE]
move_timeout = 2
max_strikes = 1
[games.SCRABBLE]
max_strikes = 5
""")
    config = load_config(toml, environ={})
    assert config.rules_for("TICTACTOE") == GameRules(move_timeout=2.0, max_strikes=1)
    # A key the table leaves out comes from the global value.
    assert config.rules_for("SCRABBLE") == GameRules(move_timeout=7.0, max_strikes=5)
    # A game without a table gets the global values.
    assert config.rules_for("KALAHA") == GameRules(move_timeout=7.0, max_strikes=3)


def test_per_game_rules_inherit_environment_and_overrides(toml: Path) -> None:
    write(toml, "[games.TICTACTOE]\nmax_strikes = 2\n")
    config = load_config(toml, environ={"MERKNERA_MOVE_TIMEOUT": "4"},
                         overrides={"max_strikes": "6"})
    assert config.rules_for("TICTACTOE") == GameRules(move_timeout=4.0, max_strikes=2)
    assert config.rules_for("SCRABBLE") == GameRules(move_timeout=4.0, max_strikes=6)


@pytest.mark.parametrize(("public_url", "host", "port", "expected"), [
    ("", "127.0.0.1", 8080, "http://127.0.0.1:8080"),
    ("", "::1", 9000, "http://[::1]:9000"),
    ("https://arena.example.org/", ANY_HOST, 80, "https://arena.example.org"),
    ("http://10.0.0.5:8080/merknera/", ANY_HOST, 80, "http://10.0.0.5:8080/merknera"),
], ids=["host and port", "v6 host", "public url", "public url with a path"])
def test_base_url(public_url: str, host: str, port: int, expected: str) -> None:
    listeners = ListenerSettings(public_url=public_url, host=host, port=port)
    assert Config(listeners=listeners).listeners.base_url == expected


# -- refusals --------------------------------------------------------------------------------

INVALID_VALUES = [
    # (what, environment, the text the message must contain)
    ("port above 65535", {"MERKNERA_PORT": "65536"}, "port"),
    ("negative port", {"MERKNERA_PORT": "-1"}, "port"),
    ("port not a number", {"MERKNERA_PORT": "abc"}, "port"),
    ("port a float", {"MERKNERA_PORT": "80.5"}, "port"),
    ("empty port", {"MERKNERA_PORT": ""}, "port"),
    ("negative move timeout", {"MERKNERA_MOVE_TIMEOUT": "-1"}, "move_timeout"),
    ("zero move timeout", {"MERKNERA_MOVE_TIMEOUT": "0"}, "move_timeout"),
    ("NaN move timeout", {"MERKNERA_MOVE_TIMEOUT": "nan"}, "move_timeout"),
    ("negative connect timeout", {"MERKNERA_CONNECT_TIMEOUT": "-0.5"}, "connect_timeout"),
    ("negative ping timeout", {"MERKNERA_PING_TIMEOUT": "-2"}, "ping_timeout"),
    ("negative notify timeout", {"MERKNERA_NOTIFY_TIMEOUT": "-2"}, "notify_timeout"),
    ("zero rest call timeout", {"MERKNERA_REST_CALL_TIMEOUT": "0"}, "rest_call_timeout"),
    ("negative rest call timeout", {"MERKNERA_REST_CALL_TIMEOUT": "-1"}, "rest_call_timeout"),
    ("zero ping interval", {"MERKNERA_PING_INTERVAL": "0"}, "ping_interval"),
    ("negative grace", {"MERKNERA_OFFLINE_GRACE": "-1"}, "offline_grace"),
    ("retry max below min", {"MERKNERA_OFFLINE_RETRY_MIN": "10",
                             "MERKNERA_OFFLINE_RETRY_MAX": "5"}, "offline_retry_max"),
    ("zero concurrency", {"MERKNERA_CONCURRENCY": "0"}, "concurrency"),
    ("zero strikes", {"MERKNERA_MAX_STRIKES": "0"}, "max_strikes"),
    ("tiny reply cap", {"MERKNERA_MAX_REPLY_BYTES": "100"}, "max_reply_bytes"),
    ("empty db", {"MERKNERA_DB": ""}, "db"),
    ("public url without scheme", {"MERKNERA_PUBLIC_URL": "arena.example.org"}, "public_url"),
    ("bad network", {"MERKNERA_ALLOWED_NETWORKS": "10.0.0.0/8,not-a-network"},
     "allowed_networks: 'not-a-network'"),
    ("bad prefix length", {"MERKNERA_ALLOWED_NETWORKS": "10.0.0.0/33"}, "allowed_networks"),
]


@pytest.mark.parametrize(("environ", "named"), [row[1:] for row in INVALID_VALUES],
                         ids=[row[0] for row in INVALID_VALUES])
def test_invalid_values_name_the_key(toml: Path, environ: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(toml, environ=environ)
    assert named in str(caught.value)


def test_a_bad_environment_value_names_the_variable(toml: Path) -> None:
    with pytest.raises(ConfigError, match=r"port from \$MERKNERA_PORT: 'abc' is not valid"):
        load_config(toml, environ={"MERKNERA_PORT": "abc"})


def test_a_bad_override_names_the_option(toml: Path) -> None:
    with pytest.raises(ConfigError, match=r"move_timeout from --move-timeout: 'soon'"):
        load_config(toml, environ={}, overrides={"move_timeout": "soon"})


def test_a_range_error_names_the_key_and_the_value(toml: Path) -> None:
    with pytest.raises(ConfigError, match=r"^port = 70000: must be between 0 and 65535$"):
        load_config(toml, environ={}, overrides={"port": "70000"})


FILE_ERRORS = [
    ("port a string", 'port = "abc"\n', "port from "),
    ("port a bool", "port = true\n", "a boolean is not an integer"),
    ("port a float", "port = 8080.0\n", "port from "),
    ("timeout a bool", "move_timeout = false\n", "a boolean is not a number"),
    ("timeout a string", 'move_timeout = "fast"\n', "move_timeout from "),
    ("host a number", "host = 1\n", "host from "),
    ("networks numbers", "allowed_networks = [1, 2]\n", "allowed_networks from "),
    ("networks a table", "[allowed_networks]\na = 1\n", "allowed_networks from "),
    ("unknown key", "colour = \"blue\"\n", "unknown key 'colour'"),
    ("misspelt key", "move_timout = 2\n", "unknown key 'move_timout'"),
    ("games not a table", "games = 3\n", "[games]"),
    ("game not a table", "[games]\nTICTACTOE = 3\n", "[games.TICTACTOE]"),
    ("unknown game key", "[games.TICTACTOE]\nmove_timout = 2\n", "move_timout"),
    ("game timeout zero", "[games.TICTACTOE]\nmove_timeout = 0\n", "games.TICTACTOE"),
    ("game strikes zero", "[games.TICTACTOE]\nmax_strikes = 0\n", "games.TICTACTOE"),
    ("game rest timeout zero", "[games.SQUELCH]\nrest_call_timeout = 0\n",
     "games.SQUELCH.rest_call_timeout"),
    ("game rest timeout a string", '[games.SQUELCH]\nrest_call_timeout = "x"\n',
     "rest_call_timeout from "),
    ("game strikes a bool", "[games.TICTACTOE]\nmax_strikes = true\n", "max_strikes"),
    ("game timeout a string", '[games.TICTACTOE]\nmove_timeout = "x"\n', "move_timeout"),
]


@pytest.mark.parametrize(("text", "named"), [row[1:] for row in FILE_ERRORS],
                         ids=[row[0] for row in FILE_ERRORS])
def test_file_errors_name_the_key(toml: Path, text: str, named: str) -> None:
    write(toml, text)
    with pytest.raises(ConfigError) as caught:
        load_config(toml, environ={})
    assert named in str(caught.value)


def test_invalid_toml_names_the_file(toml: Path) -> None:
    write(toml, "port = = 80\n")
    with pytest.raises(ConfigError, match="is not valid TOML") as caught:
        load_config(toml, environ={})
    assert str(toml) in str(caught.value)


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match="cannot read") as caught:
        load_config(missing, environ={})
    assert str(missing) in str(caught.value)


def test_an_unknown_override_is_an_error(toml: Path) -> None:
    with pytest.raises(ConfigError, match="unknown configuration key 'colour'"):
        load_config(toml, environ={}, overrides={"colour": "blue"})
    with pytest.raises(ConfigError, match=r"is not MNEMONIC\.key=value"):
        load_config(toml, environ={}, overrides={"games": "x"})


def test_per_game_rules_from_the_environment_and_the_command_line(toml: Path) -> None:
    config = load_config(toml, environ={"MERKNERA_GAMES": "TICTACTOE.move_timeout=3"},
                         overrides={"games": ["TICTACTOE.max_strikes=2"]})
    assert config.rules_for("TICTACTOE").move_timeout == 3.0
    assert config.rules_for("TICTACTOE").max_strikes == 2
    with pytest.raises(ConfigError, match="unknown keys"):
        load_config(toml, environ={"MERKNERA_GAMES": "TICTACTOE.colour=3"})


def test_a_log_level_must_be_known(toml: Path) -> None:
    with pytest.raises(ConfigError, match="log_level"):
        load_config(toml, environ={"MERKNERA_LOG_LEVEL": "loud"})


def test_config_error_is_a_value_error() -> None:
    assert issubclass(ConfigError, ValueError)


def test_an_infinite_connect_timeout_is_refused(toml: Path) -> None:
    with pytest.raises(ConfigError, match="connect_timeout"):
        load_config(toml, environ={"MERKNERA_CONNECT_TIMEOUT": "inf"})


# -- rest_call_timeout: global, and per game ------------------------------------------------


@pytest.mark.parametrize("value", ["0", "-1", "-0.25"])
@pytest.mark.parametrize("source", ["environment", "file", "override"])
def test_a_rest_call_timeout_that_is_not_positive_is_refused(toml: Path, source: str,
                                                             value: str) -> None:
    environ: dict[str, str] = {}
    overrides: dict[str, object] = {}
    if source == "environment":
        environ["MERKNERA_REST_CALL_TIMEOUT"] = value
    elif source == "file":
        write(toml, f"rest_call_timeout = {value}\n")
    else:
        overrides["rest_call_timeout"] = value
    with pytest.raises(ConfigError) as caught:
        load_config(toml, environ=environ, overrides=overrides)
    assert str(caught.value) == (f"rest_call_timeout = {float(value)!r}: "
                                 "must be greater than 0")


@pytest.mark.parametrize(("value", "shown"), [("0", "0.0"), ("-2", "-2.0")])
@pytest.mark.parametrize("source", ["file", "environment", "--games"])
def test_a_per_game_rest_call_timeout_that_is_not_positive_is_refused(
        toml: Path, source: str, value: str, shown: str) -> None:
    environ: dict[str, str] = {}
    overrides: dict[str, object] = {}
    if source == "file":
        write(toml, f"[games.SQUELCH]\nrest_call_timeout = {value}\n")
    elif source == "environment":
        environ["MERKNERA_GAMES"] = f"SQUELCH.rest_call_timeout={value}"
    else:
        overrides["games"] = [f"SQUELCH.rest_call_timeout={value}"]
    with pytest.raises(ConfigError) as caught:
        load_config(toml, environ=environ, overrides=overrides)
    assert str(caught.value) == (f"games.SQUELCH.rest_call_timeout = {shown}: "
                                 "must be greater than 0")


def test_a_per_game_rest_call_timeout_and_the_global_default(toml: Path) -> None:
    write(toml, """
rest_call_timeout = 2.5
[games.SQUELCH]
rest_call_timeout = 0.4
[games.TICTACTOE]
max_strikes = 2
""")
    config = load_config(toml, environ={})
    assert config.rules.rest_call_timeout == 2.5
    assert config.rules_for("SQUELCH").rest_call_timeout == 0.4
    # A game's table without the key, and a game without a table, get the global value.
    assert config.rules_for("TICTACTOE") == GameRules(move_timeout=10.0, max_strikes=2,
                                                      rest_call_timeout=2.5)
    assert config.rules_for("KALAHA").rest_call_timeout == 2.5
    # The global value set elsewhere than the file is the default of the tables too.
    config = load_config(toml, environ={"MERKNERA_REST_CALL_TIMEOUT": "3"})
    assert config.rules_for("TICTACTOE").rest_call_timeout == 3.0
    assert config.rules_for("SQUELCH").rest_call_timeout == 0.4
    config = load_config(toml, environ={"MERKNERA_REST_CALL_TIMEOUT": "3"},
                         overrides={"rest_call_timeout": "1.5",
                                    "games": ["SQUELCH.rest_call_timeout=0.75"]})
    assert config.rules_for("KALAHA").rest_call_timeout == 1.5
    assert config.rules_for("SQUELCH").rest_call_timeout == 0.75


def test_the_default_rest_call_timeout_is_the_spec_s_second(toml: Path) -> None:
    config = load_config(toml, environ={})
    assert config.rules.rest_call_timeout == 1.0
    assert config.rules_for("SQUELCH").rest_call_timeout == 1.0


@pytest.mark.parametrize("url", ["mysql://merknera:secret@db/z", "sqlite:///merknera.db",
                                 "postgresql+asyncpg://merknera:secret@db/arena"])
def test_a_database_url_the_store_does_not_speak_is_refused(toml: Path, url: str) -> None:
    with pytest.raises(ConfigError, match=r"^db = '.*': a URL the store does not speak") as caught:
        load_config(toml, environ={"MERKNERA_DB": url})
    assert "secret" not in str(caught.value)


@pytest.mark.parametrize("url", ["postgresql://merknera:secret@db:5432/arena",
                                 "postgres://db/arena", "POSTGRESQL://db/arena"])
def test_a_postgresql_url_is_a_store(toml: Path, url: str) -> None:
    assert load_config(toml, environ={"MERKNERA_DB": url}).store.db == url


def test_serve_with_a_database_url_stops_before_making_anything(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MERKNERA_CONFIG", raising=False)
    assert cli.main(["serve", "--db", "mysql://merknera@localhost/arena"]) == 2
    assert "a URL the store does not speak" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # before: a folder "mysql:" with a file in it


def test_the_kalaha_front_ends_default_to_the_original_s_and_are_listed(toml: Path) -> None:
    assert load_config(toml, environ={}).kalaha.origins == ("http://localhost:4200",)
    write(toml, 'kalaha_origins = ["https://kalaha.example", "http://[::1]:4200"]\n')
    assert load_config(toml, environ={}).kalaha.origins == (
        "https://kalaha.example", "http://[::1]:4200")
    listed = load_config(toml, environ={
        "MERKNERA_KALAHA_ORIGINS": "http://a.example:8000, https://b.example"})
    assert listed.kalaha.origins == ("http://a.example:8000", "https://b.example")
    assert load_config(toml, environ={}, overrides={"kalaha_origins": ""}).kalaha.origins == ()


@pytest.mark.parametrize("origin", ["localhost:4200", "http://localhost:4200/app", "null",
                                    "ftp://a.example", "http://a.example:99999", "*",
                                    "http://user@a.example"])
def test_a_kalaha_front_end_must_be_an_origin(toml: Path, origin: str) -> None:
    with pytest.raises(ConfigError, match=rf"^kalaha_origins: '{re.escape(origin)}' is not "
                                          r"an origin \(scheme://host\[:port\]"):
        load_config(toml, environ={}, overrides={"kalaha_origins": f"http://ok.example,"
                                                                   f"{origin}"})


@pytest.mark.parametrize(("text", "parsed"), [
    ("http://localhost:4200", "http://localhost:4200"),
    ("HTTP://LocalHost:4200/", "http://localhost:4200"),
    ("https://kalaha.example", "https://kalaha.example:443"),
    ("http://kalaha.example:80", "http://kalaha.example:80"),
    ("http://[::1]:8080", "http://[::1]:8080"),
    ("null", None), ("http://a.example/b", None), ("http://a.example?", None),
    ("http://a.example#x", None), ("", None)])
def test_an_origin_is_written_one_way(text: str, parsed: str | None) -> None:
    assert parse_origin(text) == parsed


# -- one definition per setting: --help, bounds, groups -------------------------------------


def serve_help(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    """What ``merknera serve --help`` prints, each help text on one line."""
    monkeypatch.setenv("COLUMNS", "2000")
    with pytest.raises(SystemExit) as exited:
        cli.main(["serve", "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def help_of(text: str, flag: str) -> str:
    """The line of ``--help`` that starts with ``flag``, with the next (where a long
    flag puts its help)."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if line.strip().startswith(f"{flag} ") or line.strip() == flag:
            return " ".join(lines[index:index + 2])
    raise AssertionError(f"{flag} is not in --help")


def test_help_shows_each_flag_with_its_help_default_and_bounds(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    text = serve_help(monkeypatch, capsys)
    assert "override the configuration key" not in text
    for key in KEYS.values():
        shown = help_of(text, key.flag)
        assert key.setting.text in shown, key.name
        assert "(default: " in shown, key.name
        rule = key.setting.rule()
        assert rule in shown, key.name
    assert ("--port N Port the HTTP server listens on (0 picks a free one). (default: 8080; "
            "must be between 0 and 65535)") in " ".join(help_of(text, "--port").split())
    assert "(default: 10.0; must be greater than 0)" in help_of(text, "--move-timeout")
    assert "(default: 0; must not be negative)" in help_of(text, "--max-games-per-owner")
    assert "(default: 0.5; must be between 0 and 1)" in help_of(text, "--fault-share")
    assert ("(default: INFO; must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL)"
            in help_of(text, "--log-level"))
    assert "(default: false)" in help_of(text, "--ladder")
    assert "(default: empty)" in help_of(text, "--public-url")
    assert "(default: http://localhost:4200)" in help_of(text, "--kalaha-origins")
    assert "MNEMONIC.KEY=VALUE" in help_of(text, "--games")
    # Grouped by concern, each group with what it is about.
    titles = [line[:-1] for line in text.splitlines() if line in {f"{g}:" for g in GROUPS}]
    assert titles == list(GROUPS)
    assert "What one client may take, on every listener" in text
    # The underscored spellings are taken, and not shown twice.
    assert "--move_timeout" not in text.replace("(--move_timeout)", "")


def test_a_subcommand_shows_only_its_own_settings(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "2000")
    with pytest.raises(SystemExit):
        cli.main(["user", "add", "--help"])
    text = capsys.readouterr().out
    assert "--db PATH|URL" in text
    assert "store:" in text
    assert "--port" not in text
    assert "listeners:" not in text


def test_every_number_has_bounds_and_every_key_is_in_the_sample_file() -> None:
    for key in KEYS.values():
        if key.kind in (int, float):
            assert key.setting.bound is not None, key.name
    assert set(tomllib.loads(sample())) == set(KEYS)


def _outside_and_edge(key: Key) -> tuple[object, object]:
    """A value just outside the setting's bounds, and one on their edge inside."""
    bound = key.setting.bound
    assert bound is not None
    step = 1 if key.kind is int else 0.5
    if bound.above is not None:
        return key.kind(bound.above), key.kind(bound.above + step)
    if bound.most is not None and bound.least is not None:
        return key.kind(bound.most + step), key.kind(bound.most)
    assert bound.least is not None
    return key.kind(bound.least - step), key.kind(bound.least)


BOUNDED = [key for key in KEYS.values() if key.setting.bound is not None]


@pytest.mark.parametrize("key", BOUNDED, ids=[key.name for key in BOUNDED])
def test_the_bounds_of_each_setting_come_from_its_definition(
        toml: Path, key: Key, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    outside, edge = _outside_and_edge(key)
    rule = str(key.setting.bound)
    for source in ("environment", "file", "override"):
        environ: dict[str, str] = {}
        overrides: dict[str, object] = {}
        if source == "environment":
            environ[key.env] = str(outside)
        elif source == "file":
            write(toml, f"{key.name} = {outside}\n")
        else:
            overrides[key.name] = str(outside)
        with pytest.raises(ConfigError) as caught:
            load_config(toml, environ=environ, overrides=overrides)
        assert str(caught.value) == f"{key.name} = {outside!r}: {rule}"
    write(toml, "")
    # The edge is allowed (with offline_retry_min no greater, which the other rule asks).
    environ = {key.env: str(edge)}
    if key.name == "offline_retry_max":
        environ["MERKNERA_OFFLINE_RETRY_MIN"] = str(edge)
    config = load_config(toml, environ=environ)
    assert getattr(getattr(config, key.group), key.field) == edge
    # ...and --help says the same bounds.
    assert f"; {rule})" in help_of(serve_help(monkeypatch, capsys), key.flag)


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(GameRules)])
def test_a_game_s_own_rules_have_the_bounds_of_every_game_s(toml: Path, name: str) -> None:
    key = KEYS[name]
    outside, edge = _outside_and_edge(key)
    with pytest.raises(ConfigError) as caught:
        load_config(toml, environ={"MERKNERA_GAMES": f"KALAHA.{name}={outside}"})
    assert str(caught.value) == f"games.KALAHA.{name} = {outside!r}: {key.setting.bound}"
    config = load_config(toml, environ={"MERKNERA_GAMES": f"KALAHA.{name}={edge}"})
    assert getattr(config.rules_for("KALAHA"), name) == edge


def test_a_group_s_keys_may_be_written_in_its_table(toml: Path) -> None:
    write(toml, """
port = 9000
[limits]
idle_timeout = 20
request_rate = 50.5
[battlebot]
port = 8083
tls_cert = "cert.pem"
tls_key = "key.pem"
[log]
level = "DEBUG"
[games.TICTACTOE]
max_strikes = 2
""")
    config = load_config(toml, environ={"MERKNERA_IDLE_TIMEOUT": "25"})
    assert config.listeners.port == 9000
    assert config.limits.idle_timeout == 25.0  # the environment still wins over the file
    assert config.limits.request_rate == 50.5
    assert (config.battlebot.port, config.battlebot.tls_cert, config.battlebot.tls_key) == (
        8083, "cert.pem", "key.pem")
    assert config.log.level == "DEBUG"
    assert config.rules_for("TICTACTOE").max_strikes == 2


@pytest.mark.parametrize(("text", "message"), [
    ("[limits]\nidle_timout = 20\n", "unknown key 'idle_timout' in [limits]"),
    ("[limits]\nport = 20\n", "unknown key 'port' in [limits]"),
    ("[battlebot]\nbattlebot_port = 20\n", "unknown key 'battlebot_port' in [battlebot]"),
    ("idle_timeout = 10\n[limits]\nidle_timeout = 20\n",
     "idle_timeout is set twice (as idle_timeout and in [limits])"),
    ("[limits]\nidle_timeout = \"soon\"\n", "idle_timeout from "),
    ("[limits]\nidle_timeout = 0\n", "idle_timeout = 0.0: must be greater than 0"),
])
def test_a_group_s_table_is_checked_like_its_keys(toml: Path, text: str, message: str) -> None:
    write(toml, text)
    with pytest.raises(ConfigError) as caught:
        load_config(toml, environ={})
    assert message in str(caught.value)


def test_replace_changes_settings_by_their_keys() -> None:
    config = Config(store=StoreSettings(db="arena.db"))
    changed = config.replace(port=0, battlebot_port=8083, idle_timeout=3, ladder=True,
                             allowed_networks=("0.0.0.0/0",))
    assert (changed.listeners.port, changed.battlebot.port) == (0, 8083)
    assert changed.limits.idle_timeout == 3.0
    assert isinstance(changed.limits.idle_timeout, float)
    assert changed.scheduling.ladder is True
    assert changed.calls.allowed_networks == ("0.0.0.0/0",)
    assert changed.store.db == "arena.db"  # the rest is kept
    assert config.listeners.port == 8080  # a new config; the old one stays
    rules = {"KALAHA": GameRules(max_strikes=1)}
    assert changed.replace(games=rules).games == rules
    assert changed.replace(games=rules).listeners == changed.listeners
    with pytest.raises(TypeError, match="'prot' is not a setting's key"):
        config.replace(prot=1)
    with pytest.raises(ConfigError, match=r"port from Config\.replace: 'abc' is not valid"):
        config.replace(port="abc")
