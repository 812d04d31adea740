"""The ``merknera`` command: ``serve``, ``demo``, ``try``, ``config``,
``user add|token|list|suspend|unsuspend``, ``bot list|disable|enable``, ``guest secret``,
``assets verify|manifest``, ``ratings rebuild``, ``db migrate|copy|backup``,
``tournament create|show``, and ``--version``."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

from merknera import __version__, accounts_cli, logformat, loop
from merknera.assets import AssetError
from merknera.config import (
    Config,
    ConfigError,
    add_config_arguments,
    load_config,
    overrides_from_args,
    sample,
)
from merknera.games import PLUGIN_PROBLEMS
from merknera.store import Database, StoreError
from merknera.store.db import POSTGRESQL_URL, redacted
from merknera.store.discipline import DISABLED_BY_ADMIN, SUSPENDED_BY_ADMIN


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="merknera", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the platform until Ctrl-C")
    add_config_arguments(serve)

    demo = commands.add_parser("demo", help="run the platform with reference bots (make run)")
    add_config_arguments(demo)

    trying = commands.add_parser(
        "try", help="play a bot on a private platform inside the command against the "
                    "game's reference bots (no token; nothing stored or rated): a line per "
                    "call, a line per game, a summary; exit 0 only if it made no fault")
    trying.add_argument("url", metavar="URL",
                        help="the bot's endpoint (its base URL for --protocol squelch-rest)")
    trying.add_argument("--game", required=True, type=str.upper,
                        help="the game's mnemonic, e.g. TICTACTOE")
    trying.add_argument("--games", dest="game_count", type=_game_count, default=None,
                        metavar="N", help="games to play, 1 to 1000 (default: two against "
                                          "each opponent, one in each seat)")
    trying.add_argument("--seed", type=int, default=None, metavar="S",
                        help="the seed the games are dealt from: the same seed, the same "
                             "games (default: a new one, printed at the end)")
    trying.add_argument("--protocol", choices=("jsonrpc", "squelch-rest"), default="jsonrpc",
                        help="how the platform calls the bot (and --against)")
    trying.add_argument("--against", action="append", default=None, metavar="URL",
                        help="play the bot at URL rather than the reference bots "
                             "(repeatable)")
    trying.add_argument("--json", action="store_true",
                        help="one JSON object a line: the calls, the games, the summary")
    add_config_arguments(trying, keys=())

    commands.add_parser(
        "config", help="print the sample configuration: every key, its default and what it "
                       "does (merknera config > config.toml, then edit)")

    user = commands.add_parser("user", help="manage users and their API tokens")
    user_commands = user.add_subparsers(dest="user_command", required=True)
    add = user_commands.add_parser("add", help="create a user; prints its token last")
    add.add_argument("name")
    add_config_arguments(add, keys=("db",))
    token = user_commands.add_parser(
        "token", help="`token NAME` issues another token to a user; `token rotate NAME` "
                      "revokes the user's tokens and issues one new (each printed last)")
    token.add_argument("first", metavar="NAME|rotate")
    token.add_argument("rotated", nargs="?", metavar="NAME", help="after rotate: whose tokens")
    token.add_argument("--description", default=accounts_cli.TOKEN_DESCRIPTION,
                       help="what the token issued is for (not with rotate)")
    add_config_arguments(token, keys=("db",))
    users_list = user_commands.add_parser(
        "list", help="every user: current tokens, bots, suspension")
    users_list.add_argument("--json", action="store_true", help="one JSON array, for scripts")
    add_config_arguments(users_list, keys=("db",))
    suspend = user_commands.add_parser(
        "suspend", help="refuse a user's token and registrations and disable their bots "
                        "(their unfinished games end without a result)")
    suspend.add_argument("name")
    suspend.add_argument("--reason", default=SUSPENDED_BY_ADMIN, help="shown to them")
    add_config_arguments(suspend, keys=("db",))
    unsuspend = user_commands.add_parser(
        "unsuspend", help="lift a suspension; the bots it disabled play again")
    unsuspend.add_argument("name")
    add_config_arguments(unsuspend, keys=("db",))
    bot = commands.add_parser("bot", help="list, disable and enable bots")
    bot_commands = bot.add_subparsers(dest="bot_command", required=True)
    bots_list = bot_commands.add_parser(
        "list", help="bot versions in play or disabled (--all: superseded ones too)")
    bots_list.add_argument("--game", type=str.upper, help="one game's, e.g. TICTACTOE")
    bots_list.add_argument("--all", action="store_true", help="superseded versions too")
    bots_list.add_argument("--json", action="store_true", help="one JSON array, for scripts")
    add_config_arguments(bots_list, keys=("db",))
    disable = bot_commands.add_parser(
        "disable", help="take a bot out of play (its unfinished games end without a result)")
    disable.add_argument("name")
    disable.add_argument("--reason", default=DISABLED_BY_ADMIN,
                         help="kept in the bot's log and shown at its registrations")
    add_config_arguments(disable, keys=("db",))
    enable = bot_commands.add_parser("enable", help="put a disabled bot back in play")
    enable.add_argument("name")
    add_config_arguments(enable, keys=("db",))
    guest = commands.add_parser("guest", help="the names guests play under")
    guest_commands = guest.add_subparsers(dest="guest_command", required=True)
    secret = guest_commands.add_parser(
        "secret", help="bind a guest name to a new secret and print it (for its player)")
    secret.add_argument("name")
    add_config_arguments(secret, keys=("db",))
    assets = commands.add_parser("assets", help="check the game asset files")
    asset_commands = assets.add_subparsers(dest="assets_command", required=True)
    verify = asset_commands.add_parser(
        "verify", help="check every asset file against the manifest (exit 1 on a mismatch)")
    add_config_arguments(verify, keys=("assets_dir",))
    manifest = asset_commands.add_parser(
        "manifest", help="recompute the hashes of the files listed in manifest.json")
    add_config_arguments(manifest, keys=("assets_dir",))
    ratings = commands.add_parser("ratings", help="the bots' ratings")
    rating_commands = ratings.add_subparsers(dest="ratings_command", required=True)
    rebuild = rating_commands.add_parser(
        "rebuild", help="recompute every rating from the stored results, in the order of finish")
    add_config_arguments(rebuild, keys=("db",))
    store = commands.add_parser("db", help="the store")
    store_commands = store.add_subparsers(dest="db_command", required=True)
    backup = store_commands.add_parser(
        "backup", help="copy the store to a new file while a platform serves it (SQLite: "
                       "its online backup; PostgreSQL: pg_dump's custom format)")
    backup.add_argument("path", type=Path, metavar="PATH", help="the new file")
    add_config_arguments(backup, keys=("db",))
    migrate = store_commands.add_parser(
        "migrate", help="bring the store to this version's schema (serve does it too)")
    add_config_arguments(migrate, keys=("db",))
    copy = store_commands.add_parser(
        "copy", help="move a SQLite arena into an empty PostgreSQL database (checked by "
                     "row counts and a rebuild of the ratings)")
    copy.add_argument("--from", dest="source", required=True, metavar="PATH",
                      help="the SQLite file (no node may serve it meanwhile)")
    copy.add_argument("--to", dest="target", required=True, metavar="URL",
                      help="postgresql://user:password@host:port/name, an empty database")
    add_config_arguments(copy, keys=())
    tournament = commands.add_parser("tournament", help="create and show tournaments")
    tournament_commands = tournament.add_subparsers(dest="tournament_command", required=True)
    create = tournament_commands.add_parser(
        "create", help="a tournament the platform serving the database will play")
    create.add_argument("--game", required=True, help="the game's mnemonic, e.g. TICTACTOE")
    create.add_argument("--format", required=True, choices=("round-robin", "swiss"))
    create.add_argument("--rounds", required=True, type=int,
                        help="round robin: cycles (2 = both seatings); swiss: rounds")
    create.add_argument("--bots", nargs="+", default=None, metavar="BOT",
                        help="ids or names (default: every current bot of the game)")
    create.add_argument("--wait", action="store_true",
                        help="stay until it has finished and print its table")
    add_config_arguments(create, keys=("db",))
    show = tournament_commands.add_parser("show", help="print a tournament's table")
    show.add_argument("id", type=int)
    add_config_arguments(show, keys=("db",))
    return parser


def _game_count(text: str) -> int:
    """``--games``: a whole number from 1 to 1000."""
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if not 1 <= count <= 1000:
        raise argparse.ArgumentTypeError(f"{count} is not from 1 to 1000")
    return count


def _try(args: argparse.Namespace, config: Config) -> int:
    from merknera.protocol.bot_protocols import BotProtocol
    from merknera.try_cli import TryRequest, run_command

    request = TryRequest(args.url, args.game, args.game_count, args.seed,
                         BotProtocol(args.protocol), tuple(args.against or ()), args.json)
    return loop.run(run_command(config, request))


def _assets_verify(directory: Path) -> int:
    from merknera import assets

    try:
        manifest = assets.read_manifest(directory)
    except assets.AssetError as exc:
        print(f"merknera: {exc}", file=sys.stderr)
        return 1
    contents, problems = assets.check(directory, manifest)
    if not problems:
        try:
            assets.load_games(assets.AssetStore(manifest, contents))
        except assets.AssetError as exc:
            problems.append(f"(the games) {exc}")
    bad = {problem.split(":", 1)[0] for problem in problems} & set(manifest.files)
    for path, entry in sorted(manifest.files.items()):
        if path not in bad:
            print(f"ok       {path}  sha1 {entry.sha1}  {entry.size} bytes")
    for problem in problems:
        print(f"MISMATCH {problem}")
    print(f"{len(manifest.files) - len(bad)} of {len(manifest.files)} files match "
          f"{directory / assets.MANIFEST}")
    return 1 if problems else 0


def _assets_manifest(directory: Path) -> int:
    from merknera import assets

    try:
        manifest = assets.rebuild_manifest(directory)
    except assets.AssetError as exc:
        print(f"merknera: {exc}", file=sys.stderr)
        return 1
    (directory / assets.MANIFEST).write_text(json.dumps(manifest.to_json(), indent=2) + "\n",
                                            "utf-8")
    print(f"wrote {directory / assets.MANIFEST} ({len(manifest.files)} files)")
    return 0


async def _guest_secret(db_path: str, name: str) -> int:
    from merknera.gateways.guests import GuestRefusedError, give_secret

    db = await Database.open(db_path)
    try:
        secret = await give_secret(db, name)
    except GuestRefusedError as exc:
        print(f"merknera: {exc}", file=sys.stderr)
        return 1
    finally:
        await db.close()
    print(f'The guest name "{name}" is bound to a new secret, which follows; it is shown only '
          f"now. Its player plays as {name}#<secret> (or gives it as \"secret\"):")
    print(secret)
    return 0


async def _db_migrate(db_path: str) -> int:
    before = await asyncio.to_thread(_schema_version, db_path)
    db = await Database.open(db_path)
    try:
        after = await db.schema_version()
    finally:
        await db.close()
    print(f"{redacted(db_path)}: schema version {after}" + (
        " (new)" if before is None else " (it was already)" if before == after
        else f" (migrated from {before})"))
    return 0


def _schema_version(db_path: str) -> int | None:
    """The schema version of an existing store, read without changing it; None for
    a store not made yet."""
    if POSTGRESQL_URL.match(db_path):
        from merknera.store.postgres import connect_sync

        conn = connect_sync(db_path)
        try:
            row = conn.execute("SELECT to_regclass('merknera_schema') IS NOT NULL").fetchone()
            if row is None or not row[0]:
                return None
            version = conn.execute("SELECT version FROM merknera_schema").fetchone()
            return None if version is None else int(version[0])
        finally:
            conn.raw.close()
    if db_path == ":memory:" or not Path(db_path).exists():
        return None
    file = sqlite3.connect(f"{Path(db_path).resolve().as_uri()}?mode=ro", uri=True)
    try:
        return int(file.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{db_path}: cannot open it as a SQLite store: {exc}") from exc
    finally:
        file.close()


async def _db_copy(source: str, target: str) -> int:
    from merknera.store.copy import copy

    if not POSTGRESQL_URL.match(target):
        print(f"merknera: --to {target!r} is not a postgresql:// URL", file=sys.stderr)
        return 2
    try:
        summary = await copy(source, target)
    except StoreError as exc:
        print(f"merknera: {exc}", file=sys.stderr)
        return 1
    print(f"Copied {source} into {redacted(target)}:")
    for table, count in summary.rows.items():
        print(f"  {table:<22}{count:>10,} rows (the same count on both sides)")
    print(f"Ratings rebuilt from the copied results: {summary.rated_games} games, "
          f"{summary.rated_bots} bots, the same as copied.")
    return 0


async def _db_backup(db_path: str, path: Path) -> int:
    from merknera.store.backup import backup

    made = await backup(db_path, path)
    print(f"Backed up {redacted(db_path)} to {made.path} ({made.size:,} bytes).")
    if made.schema_version is not None:
        print(f"It is a store of schema version {made.schema_version}" + (
            "" if made.migrated_from is None else
            f" (migrated from {made.migrated_from})") + f" with {made.games:,} games; "
            f"`merknera serve --db {made.path}` serves it as it is.")
    else:
        print(f"It is a dump in pg_dump's custom format; `pg_restore --dbname=URL "
              f"{made.path}` restores it into an empty database.")
    return 0


async def _ratings_rebuild(db_path: str) -> int:
    from merknera.store import ratings

    db = await Database.open(db_path)
    try:
        summary = await ratings.rebuild(db)
    finally:
        await db.close()
    print(f"Rebuilt the ratings in {redacted(db_path)}: {summary.games} games rated, "
          f"{summary.bots} bots rated.")
    print("The stored ratings were already the same." if summary.changed == 0 else
          f"{summary.changed} bots' stored ratings differed and were replaced.")
    return 0


async def _user_command(args: argparse.Namespace, db: str) -> int:
    if args.user_command == "add":
        return await accounts_cli.user_add(db, args.name)
    if args.user_command == "list":
        return await accounts_cli.user_list(db, args.json)
    if args.user_command == "suspend":
        return await accounts_cli.user_suspend(db, args.name, args.reason)
    if args.user_command == "unsuspend":
        return await accounts_cli.user_unsuspend(db, args.name)
    if args.rotated is None:
        return await accounts_cli.user_token(db, args.first, args.description)
    if args.first == "rotate":
        return await accounts_cli.token_rotate(db, args.rotated)
    print("merknera: user token takes NAME (another token) or rotate NAME (the user's "
          f"tokens replaced by one), not {args.first!r} {args.rotated!r}", file=sys.stderr)
    return 2


async def _bot_command(args: argparse.Namespace, db: str) -> int:
    if args.bot_command == "list":
        return await accounts_cli.bot_list(db, args.game, args.all, args.json)
    if args.bot_command == "disable":
        return await accounts_cli.bot_disable(db, args.name, args.reason)
    return await accounts_cli.bot_enable(db, args.name)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``merknera`` console script."""
    args = _parser().parse_args(argv)
    if args.command == "config":
        print(sample(), end="")
        return 0
    try:
        config = load_config(args.config_path, overrides=overrides_from_args(args))
    except ConfigError as exc:
        print(f"merknera: configuration error: {exc}", file=sys.stderr)
        return 2
    if args.command == "try":  # its output is the transcript: the platform's warnings only
        config = config.replace(log_level="WARNING")
    logformat.configure(config.log)
    for problem in PLUGIN_PROBLEMS:  # skipped; the platform starts without them
        logging.getLogger("merknera.games.plugins").warning("%s", problem)
    try:
        if args.command == "assets":
            if args.assets_command == "verify":
                return _assets_verify(config.store.assets_path)
            return _assets_manifest(config.store.assets_path)
        if args.command == "serve":
            from merknera.server import serve

            loop.run(serve(config))
            return 0
        if args.command == "try":
            return _try(args, config)
        if args.command == "demo":
            from merknera.demo import run_demo

            return asyncio.run(run_demo(config))
        if args.command == "ratings":
            return asyncio.run(_ratings_rebuild(config.store.db))
        if args.command == "db":
            if args.db_command == "copy":
                return asyncio.run(_db_copy(args.source, args.target))
            if args.db_command == "backup":
                return asyncio.run(_db_backup(config.store.db, args.path))
            return asyncio.run(_db_migrate(config.store.db))
        if args.command == "tournament":
            from merknera import tournament_cli

            if args.tournament_command == "create":
                return asyncio.run(tournament_cli.create(
                    config.store.db, args.game, args.format, args.rounds, args.bots, args.wait))
            return asyncio.run(tournament_cli.show(config.store.db, args.id))
        if args.command == "guest":
            return asyncio.run(_guest_secret(config.store.db, args.name))
        if args.command == "bot":
            return asyncio.run(_bot_command(args, config.store.db))
        return asyncio.run(_user_command(args, config.store.db))
    except (StoreError, AssetError) as exc:
        print(f"merknera: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"merknera: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
