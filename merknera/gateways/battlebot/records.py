"""What Battlebot's read-only paths answer, read from the platform's store (research a.2,
a.8): its games as the documents its server stored, its bots without their credentials,
and a contest's table.  Functions of a reader connection; no I/O of their own.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from merknera.games import JSON, JSONObject, Termination
from merknera.games.battlebot import COMPLETE, battlebot_reason
from merknera.gateways.battlebot.accounts import shown_owner
from merknera.gateways.battlebot.wire import BattlebotGame
from merknera.store.db import Connection, Row

RECENT_GAMES = 30
"""How many games ``GET /games/<game>`` lists (Battlebot's 30)."""

WIN_POINTS, DRAW_POINTS = 3, 1
"""A contest's table: 3 points a win, 1 a draw (Battlebot's "ambitious" ranking)."""

_GAMES = """
SELECT games.id, games.contest, games.final_state, games.reason, games.started_at,
       games.created_at,
       (SELECT json_group_array(json_object('name', seated.name, 'result', seated.result))
        FROM (SELECT bots.name, seats.result FROM seats JOIN bots ON bots.id = seats.bot_id
              WHERE seats.game_id = games.id ORDER BY seats.seat) AS seated) AS players
FROM games
"""


def _document(row: Row, game: BattlebotGame) -> JSONObject:
    """A finished game as Battlebot stored it (without ``turns``)."""
    players = json.loads(row["players"])
    names: list[JSON] = [player["name"] for player in players]
    final = json.loads(row["final_state"]) if row["final_state"] else {}
    if not isinstance(final, dict):
        final = {}
    termination = Termination(row["reason"])
    winners = [player["name"] for player in players if player["result"] == "WIN"]
    if termination is Termination.NORMAL:
        reason = final.get("reason") if isinstance(final.get("reason"), str) else COMPLETE
    else:
        reason = battlebot_reason(termination)
    document: JSONObject = {"_id": str(row["id"]), "game": game.path_name}
    if row["contest"] is not None:
        document["contest"] = row["contest"]
    document["players"] = names
    for key in ("board", "marks"):
        if key in final:
            document[key] = final[key]
    document["victor"] = winners[0] if len(winners) == 1 else None
    document["reason"] = reason
    document["startTime"] = row["started_at"] or row["created_at"]
    return document


def recent_games(conn: Connection, game: BattlebotGame) -> list[JSONObject]:
    """The game's last finished games, newest first, without their turns."""
    rows = conn.execute(f"{_GAMES} WHERE games.game = ? AND games.status = 'FINISHED' "
                        "ORDER BY games.id DESC LIMIT ?", (game.mnemonic, RECENT_GAMES))
    return [_document(row, game) for row in rows]


def game_document(conn: Connection, game: BattlebotGame,
                  game_id: int) -> JSONObject | None:
    """One finished game with its valid turns (each the move, its player and time)."""
    row = conn.execute(f"{_GAMES} WHERE games.id = ? AND games.game = ? "
                       "AND games.status = 'FINISHED'", (game_id, game.mnemonic)).fetchone()
    if row is None:
        return None
    document = _document(row, game)
    names = document["players"]
    assert isinstance(names, list)
    turns: list[JSON] = []
    for seat, move, stamp in conn.execute(
            "SELECT seat, move, created_at FROM moves WHERE game_id = ? AND move IS NOT NULL "
            "ORDER BY seq", (game_id,)):
        turn = json.loads(move)
        if isinstance(turn, dict) and 0 <= seat < len(names):
            turns.append({**turn, "player": names[seat], "time": stamp})
    document["turns"] = turns
    return document


def game_bots(conn: Connection, game: BattlebotGame,
              most: int | None = None) -> list[JSONObject]:
    """The game's bots in play (not superseded), oldest first, ``most`` of them at most:
    name, owner and date, never a credential."""
    rows = conn.execute(
        "SELECT bots.name, users.name AS owner, bots.created_at FROM bots "
        "JOIN users ON users.id = bots.user_id WHERE bots.game = ? "
        "AND bots.status != 'SUPERSEDED' ORDER BY bots.id LIMIT ?",
        (game.mnemonic, 2**62 if most is None else most))
    return [{"bot_id": name, "owner": shown_owner(owner), "date_registered": created}
            for name, owner, created in rows]


def contest_meetings(conn: Connection, mnemonic: str,
                     contest: str) -> dict[tuple[int, int], int]:
    """How often each ordered pair of bots (first seat, second seat) has been matched in a
    contest: every game but those that ended without a result."""
    rows = conn.execute(
        "SELECT first.bot_id, second.bot_id, COUNT(*) FROM games "
        "JOIN seats AS first ON first.game_id = games.id AND first.seat = 0 "
        "JOIN seats AS second ON second.game_id = games.id AND second.seat = 1 "
        "WHERE games.game = ? AND games.contest = ? "
        "AND (games.outcome IS NULL OR games.outcome != 'NO_RESULT') "
        "GROUP BY first.bot_id, second.bot_id", (mnemonic, contest))
    return {(first, second): count for first, second, count in rows}


@dataclass
class Standing:
    """One bot's line of a contest's table."""

    bot_id: str
    wins: int = 0
    losses: int = 0
    draws: int = 0

    @property
    def score(self) -> int:
        return WIN_POINTS * self.wins + DRAW_POINTS * self.draws

    def as_json(self) -> JSONObject:
        return {"bot_id": self.bot_id, "wins": self.wins, "losses": self.losses,
                "draws": self.draws, "score": self.score}


def ranked(lines: Iterable[Standing]) -> list[Standing]:
    """A contest's lines, best first: by score, then more wins, then fewer losses (then
    the name, so that every read gives the same order)."""
    return sorted(lines, key=lambda line: (-line.score, -line.wins, line.losses, line.bot_id))


def contest_table(conn: Connection, game: BattlebotGame,
                  contest: str) -> JSONObject:
    """A contest's table and games: ``{bots: [{bot_id, wins, losses, draws, score}],
    games: [...]}``, best first by score, then more wins, then fewer losses."""
    rows = conn.execute(f"{_GAMES} WHERE games.game = ? AND games.contest = ? "
                        "AND games.status = 'FINISHED' ORDER BY games.id",
                        (game.mnemonic, contest)).fetchall()
    standings: dict[str, Standing] = {}
    for row in rows:
        for player in json.loads(row["players"]):
            line = standings.setdefault(player["name"], Standing(player["name"]))
            result = player["result"]
            if result == "WIN":
                line.wins += 1
            elif result == "LOSS":
                line.losses += 1
            elif result == "DRAW":
                line.draws += 1
    return {"bots": [line.as_json() for line in ranked(standings.values())],
            "games": [_document(row, game) for row in rows]}
