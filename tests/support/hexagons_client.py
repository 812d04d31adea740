"""A MebiPenny 2011 hexagons client for tests, run as its own process.

It is written from the protocol notes (``research/seed-systems.md`` part (c)), not from the
platform: it imports nothing from ``merknera`` and has its own copy of the board's geometry
(c.4) to pick its lines and to check what the server tells it.  Like the Ruby clients of the
contest it joins (``POST /<id>/players``), then long-polls ``POST /<id>/moves`` while the
answers carry an ``X-Turn-Token``, merging each Game Delta into its own copy of the Game
(``lines`` and ``hexagons`` appended, ``players`` replaced by name, ``state`` taken).

Where the game comes from: ``--game ID`` (a game made elsewhere), ``--create ROWSxCOLS``
(``POST /`` first; the ``created`` event names the game) or ``--match`` (``GET /match``).

Behaviours (``--after N``: the misbehaviour comes at the client's Nth move, default 1):

* ``normal``: the first legal line, row-major;
* ``greedy``: the line that claims most, else one that leaves no hexagon one line short,
  else the first legal line;
* ``illegal``: a line already drawn (``line already placed``), or two points that are not
  neighbours when none is drawn yet;
* ``malformed``: a move body with one endpoint only (``invalid line data``);
* ``wrong-token``: the move first with a wrong ``X-Turn-Token``, then with none, then
  with the right one; then it plays on as ``normal``;
* ``vanish``: at its Nth turn it leaves without a word (the process exits);
* ``observer``: ``POST /<id>/observers`` (with ``--wrapper``), reading the stream.

Every event is one JSON object on its own stdout line:

``created``/``matched`` {id}, ``join-sent``, ``answer`` {request, status, headers, body}
(every HTTP answer; ``headers`` only those of interest), ``joined`` {token}, ``turn``
{number, token}, ``move-sent`` {number, kind, body, token}, ``vanish``, ``observed``
{index, raw, document} (one per stream line), ``inconsistent`` {problem} (the server told
something the geometry or its earlier answers contradict), and last ``end`` {reason, game}
(``game`` is the merged copy) or ``error`` {message}.

Exit status: 0 when it ran as asked (whatever the result), 2 when a request it needed was
refused (``end`` with reason ``refused`` says which), 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import aiohttp

BEHAVIOURS = ("normal", "greedy", "illegal", "malformed", "wrong-token", "vanish", "observer")
TURN_TOKEN = "X-Turn-Token"
OBSERVER_TOKEN = "X-Observer-Token"
INTERESTING = (TURN_TOKEN, OBSERVER_TOKEN, "Location", "Content-Type", "Retry-After")
"""The headers an ``answer`` event shows."""

Point = tuple[int, int]
Line = tuple[Point, Point]
"""Sorted row-major: the smaller endpoint first."""


def emit(event: str, **fields: Any) -> None:
    """Print one event as a JSON line and flush, so a reading test sees it at once."""
    print(json.dumps({"event": event, **fields}), flush=True)


class RefusedError(Exception):
    """A request the client needed was refused (exit 2)."""


# -- the board (c.4, c.5) -------------------------------------------------------------------


def sorted_line(a: Point, b: Point) -> Line:
    """The line between two points, endpoints row-major."""
    return (a, b) if a <= b else (b, a)


class Board:
    """A ``rows`` x ``cols`` triangular lattice: even rows hold ``cols - 1`` points, odd rows
    ``cols``; the even rows sit half a step to the right."""

    def __init__(self, rows: int, cols: int) -> None:
        self.rows, self.cols = rows, cols
        self.points = [(r, c) for r in range(rows) for c in range(self.width(r))]
        self.lines = sorted({sorted_line(p, q) for p in self.points
                             for q in self.neighbours(p)})
        self.centers = [p for p in self.points if len(self.neighbours(p)) == 6]
        expected = (2 * (rows - 1) * (cols - 1) + (rows + 1) // 2 * (cols - 2)
                    + (rows - 1) // 2 * (cols - 1))
        if len(self.lines) != expected:  # the original's formula (c.4)
            raise RuntimeError(f"{rows}x{cols}: {len(self.lines)} lines, expected {expected}")

    def width(self, row: int) -> int:
        return self.cols - 1 if row % 2 == 0 else self.cols

    def on_board(self, point: Point) -> bool:
        row, col = point
        return 0 <= row < self.rows and 0 <= col < self.width(row)

    def neighbours(self, point: Point) -> list[Point]:
        """On-board neighbours, clockwise from the left."""
        r, c = point
        if r % 2 == 0:
            around = [(r, c - 1), (r - 1, c), (r - 1, c + 1), (r, c + 1), (r + 1, c + 1),
                      (r + 1, c)]
        else:
            around = [(r, c - 1), (r - 1, c - 1), (r - 1, c), (r, c + 1), (r + 1, c),
                      (r + 1, c - 1)]
        return [p for p in around if self.on_board(p)]

    def ring(self, center: Point) -> list[Line]:
        """The six lines joining consecutive neighbours of a centre."""
        around = self.neighbours(center)
        return [sorted_line(around[i], around[(i + 1) % 6]) for i in range(6)]

    def adjacent(self, a: Point, b: Point) -> bool:
        return b in self.neighbours(a)


class Copy:
    """The client's own copy of a Game, kept up by merging deltas, and what it means on the
    board."""

    def __init__(self, game: dict[str, Any]) -> None:
        self.game = game
        self.board = Board(int(game["rows"]), int(game["cols"]))
        self.check(game.get("lines", []), game.get("hexagons", []), [], [])

    @staticmethod
    def point(coordinate: Any) -> Point:
        return int(coordinate["row"]), int(coordinate["col"])

    def drawn(self) -> set[Line]:
        return {sorted_line(*map(self.point, line["endpoints"])) for line in self.game["lines"]}

    def claimed(self) -> set[Point]:
        return {self.point(hexagon["center"]) for hexagon in self.game["hexagons"]}

    def merge(self, delta: dict[str, Any]) -> None:
        """Take a Game Delta in, as the Ruby clients did; a player is one object, so a new
        score shows wherever the player does (``players`` and the owners)."""
        game = self.game
        self.check(delta.get("lines", []), delta.get("hexagons", []), game["lines"],
                   game["hexagons"])
        game["lines"] = game["lines"] + list(delta.get("lines", []))
        game["hexagons"] = game["hexagons"] + list(delta.get("hexagons", []))
        scores = {p["name"]: p["score"] for p in delta.get("players", [])}
        for player in delta.get("players", []):
            if all(p["name"] != player["name"] for p in game["players"]):
                game["players"].append(dict(player))
        for player in self.players():
            if player["name"] in scores:
                player["score"] = scores[player["name"]]
        if "state" in delta:
            game["state"] = delta["state"]

    def players(self) -> Iterator[dict[str, Any]]:
        """Every player object of the copy: ``players`` and the owners."""
        yield from self.game["players"]
        for item in (*self.game["lines"], *self.game["hexagons"]):
            if isinstance(item.get("owner"), dict):
                yield item["owner"]

    def check(self, lines: list[Any], hexagons: list[Any], before_lines: list[Any],
              before_hexagons: list[Any]) -> None:
        """Report (``inconsistent``) new lines and hexagons that the geometry forbids."""
        board = self.board
        drawn = {sorted_line(*map(self.point, line["endpoints"])) for line in before_lines}
        claimed = {self.point(h["center"]) for h in before_hexagons}
        for line in lines:
            ends = [self.point(end) for end in line["endpoints"]]
            key = sorted_line(ends[0], ends[1])
            if ends != list(key):
                emit("inconsistent", problem=f"endpoints not sorted row-major: {line}")
            if not all(board.on_board(end) for end in ends) or not board.adjacent(*ends):
                emit("inconsistent", problem=f"not a line of the board: {line}")
            if key in drawn:
                emit("inconsistent", problem=f"line drawn twice: {line}")
            if any(end in claimed for end in ends):
                emit("inconsistent", problem=f"line touches a claimed centre: {line}")
            drawn.add(key)
        for hexagon in hexagons:
            center = self.point(hexagon["center"])
            if center not in board.centers:
                emit("inconsistent", problem=f"not a centre: {hexagon}")
            elif not all(line in drawn for line in board.ring(center)):
                emit("inconsistent", problem=f"claimed with its ring open: {hexagon}")
            if center in claimed or any(p in claimed for p in board.neighbours(center)):
                emit("inconsistent", problem=f"claimed next to a claimed centre: {hexagon}")
            claimed.add(center)

    # -- choosing a line ----------------------------------------------------------------

    def legal(self) -> list[Line]:
        """Every line that may be drawn now (c.5), row-major."""
        drawn, claimed = self.drawn(), self.claimed()
        return [line for line in self.board.lines if line not in drawn
                and line[0] not in claimed and line[1] not in claimed]

    def open_centers(self) -> list[Point]:
        """Centres that can still be claimed."""
        claimed = self.claimed()
        return [c for c in self.board.centers if c not in claimed
                and not any(p in claimed for p in self.board.neighbours(c))]

    def claims(self, line: Line) -> int:
        """Hexagons that drawing ``line`` would claim."""
        drawn = self.drawn() | {line}
        return sum(1 for c in self.open_centers() if line in self.board.ring(c)
                   and all(ring in drawn for ring in self.board.ring(c)))

    def gives_away(self, line: Line) -> bool:
        """Whether ``line`` leaves a claimable hexagon one line short."""
        drawn = self.drawn() | {line}
        return any(sum(ring not in drawn for ring in self.board.ring(c)) == 1
                   for c in self.open_centers() if line in self.board.ring(c))

    def choose(self, greedy: bool) -> Line:
        legal = self.legal()
        if not legal:
            raise RuntimeError("no legal line left, but the server gave the move")
        if not greedy:
            return legal[0]
        best = max(legal, key=self.claims)
        if self.claims(best):
            return best
        return next((line for line in legal if not self.gives_away(line)), legal[0])

    def illegal(self) -> Line:
        """A line the server must refuse: one drawn already, or two points apart."""
        lines = self.game["lines"]
        if lines:
            ends = [self.point(end) for end in lines[0]["endpoints"]]
            return ends[1], ends[0]  # either order is the same line
        return (1, 0), (1, 2)


def wire_line(line: Line) -> list[dict[str, int]]:
    return [{"row": row, "col": col} for row, col in line]


# -- HTTP ---------------------------------------------------------------------------------


class Server:
    """The hexagons server at ``url``."""

    def __init__(self, session: aiohttp.ClientSession, url: str) -> None:
        self.session = session
        self.url = url.rstrip("/")

    async def call(self, label: str, method: str, path: str, body: Any = None, *,
                   headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], Any]:
        """One request, answered in full; prints an ``answer`` event."""
        data = None if body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json"} if data is not None else {}
        async with self.session.request(method, self.url + path, data=data,
                                        headers={**sent, **(headers or {})}) as response:
            text = await response.text()
            shown = {k: response.headers[k] for k in INTERESTING if k in response.headers}
        try:
            value: Any = json.loads(text) if text else None
        except ValueError:
            value = text
        emit("answer", request=label, status=response.status, headers=shown, body=value)
        return response.status, shown, value


def game_id(location: str | None) -> str:
    if not location or not location.startswith("/") or len(location) < 2:
        raise RuntimeError(f"expected a Location /<id>, got {location!r}")
    return location[1:]


async def find_game(server: Server, args: argparse.Namespace) -> str:
    """The game to play or watch: given, created, or matched."""
    if args.game:
        return str(args.game)
    if args.create:
        rows, cols = (int(n) for n in args.create.lower().split("x"))
        body: dict[str, Any] = {"rows": rows, "cols": cols}
        if args.delay_time is not None:
            body["delay_time"] = args.delay_time
        status, headers, _ = await server.call("create", "POST", "/", body)
        if status != 201:
            raise RefusedError(f"POST / answered {status}")
        found = game_id(headers.get("Location"))
        emit("created", id=found)
        return found
    status, headers, _ = await server.call("match", "GET", "/match")
    if status != 201:
        raise RefusedError(f"GET /match answered {status}")
    found = game_id(headers.get("Location"))
    emit("matched", id=found)
    return found


async def play(server: Server, args: argparse.Namespace, game: str) -> None:
    """Join, then move while the answers carry a turn token."""
    emit("join-sent", id=game, name=args.name)
    status, headers, body = await server.call("join", "POST", f"/{game}/players",
                                              {"name": args.name})
    if status != 200:
        emit("end", reason="refused", request="join", status=status, body=body)
        raise RefusedError(f"the join answered {status}: {body}")
    copy = Copy(body)
    token = headers.get(TURN_TOKEN)
    emit("joined", id=game, token=token)
    number = 0
    while token:
        number += 1
        emit("turn", number=number, token=token)
        behaviour = args.behaviour if number == args.after else "normal"
        if args.behaviour == "greedy":
            behaviour = "greedy"
        if behaviour == "vanish":
            emit("vanish", number=number)
            return
        path = f"/{game}/moves"
        if behaviour == "wrong-token":
            body = wire_line(copy.choose(False))
            for wrong in ({TURN_TOKEN: "wrong" + token}, {}):
                emit("move-sent", number=number, kind="wrong-token", body=body,
                     token=wrong.get(TURN_TOKEN))
                status, _, answer = await server.call("move", "POST", path, body,
                                                      headers=wrong)
                if status != 403:
                    raise RuntimeError(f"a move with a wrong token answered {status}: {answer}")
            behaviour = "normal"  # then the same move with the right token
        if behaviour == "illegal":
            body = wire_line(copy.illegal())
        elif behaviour == "malformed":
            body = [{"row": 0, "col": 0}]
        else:
            body = wire_line(copy.choose(behaviour == "greedy"))
        emit("move-sent", number=number, kind=behaviour, body=body, token=token)
        status, headers, answer = await server.call("move", "POST", path, body,
                                                    headers={TURN_TOKEN: token})
        if status != 200:
            emit("end", reason="refused", request="move", status=status, body=answer,
                 game=copy.game)
            if behaviour in ("illegal", "malformed"):
                return  # as asked: it was disqualified
            raise RefusedError(f"the move answered {status}: {answer}")
        copy.merge(answer)
        token = headers.get(TURN_TOKEN)
    emit("end", reason=copy.game.get("state"), game=copy.game)


def unwrap(text: str, wrapper: str | None) -> Any:
    """A stream line's document, out of its wrapper."""
    if wrapper is not None:
        before, after = wrapper.split("%s")
        if not (text.startswith(before) and text.endswith(after)):
            raise RuntimeError(f"a line not in its wrapper: {text[:200]!r}")
        text = text[len(before):len(text) - len(after)]
    return json.loads(text)


async def observe(server: Server, args: argparse.Namespace, game: str) -> None:
    """Read the observers' stream to its end, merging its deltas."""
    body = None if args.wrapper is None else {"wrapper": args.wrapper}
    data = None if body is None else json.dumps(body).encode()
    async with server.session.post(f"{server.url}/{game}/observers", data=data) as response:
        shown = {k: response.headers[k] for k in INTERESTING if k in response.headers}
        if response.status != 200:
            text = await response.text()
            emit("answer", request="observe", status=response.status, headers=shown, body=text)
            raise RefusedError(f"the observers' stream answered {response.status}")
        emit("answer", request="observe", status=response.status, headers=shown, body=None)
        copy: Copy | None = None
        pending = b""
        index = 0
        async for chunk in response.content.iter_any():
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                text = line.decode("utf-8")
                document = unwrap(text, args.wrapper)
                emit("observed", index=index, raw=text, document=document)
                index += 1
                if copy is None:
                    copy = Copy(document)
                else:
                    copy.merge(document)
        if pending:
            emit("inconsistent", problem=f"the stream ended inside a line: {pending[:200]!r}")
    emit("end", reason="stream ended", lines=index,
         game=None if copy is None else copy.game)


async def run(args: argparse.Namespace) -> None:
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=10)
    connector = aiohttp.TCPConnector(
        local_addr=None if args.source is None else (args.source, 0))
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        server = Server(session, args.url)
        game = await find_game(server, args)
        if args.behaviour == "observer":
            await observe(server, args, game)
        else:
            await play(server, args, game)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="A MebiPenny 2011 hexagons test client.")
    parser.add_argument("--url", required=True, help="http://host:port of the server")
    parser.add_argument("--name", default="player")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--game", help="the id of a game made elsewhere")
    where.add_argument("--create", metavar="ROWSxCOLS", help="make a game first")
    where.add_argument("--match", action="store_true", help="GET /match for a game")
    parser.add_argument("--delay-time", type=float, help="delay_time of a game made")
    parser.add_argument("--behaviour", choices=BEHAVIOURS, default="normal")
    parser.add_argument("--after", type=int, default=1, help="misbehave at the Nth move")
    parser.add_argument("--wrapper", help="an observer's wrapper, with one %%s")
    parser.add_argument("--timeout", type=float, default=60.0, help="overall limit, seconds")
    parser.add_argument("--source", help="the local address to connect from (another "
                                         "loopback address is another client)")
    args = parser.parse_args(argv)
    if urlsplit(args.url).scheme != "http":
        parser.error("--url must start with http://")
    if args.wrapper is not None and args.wrapper.count("%s") != 1:
        parser.error("--wrapper must hold %s once")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        asyncio.run(asyncio.wait_for(run(args), args.timeout))
        return 0
    except RefusedError as exc:
        status, message = 2, str(exc)
    except TimeoutError as exc:
        status, message = 1, str(exc) or f"timed out after {args.timeout} s"
    except Exception as exc:
        status, message = 1, f"{type(exc).__name__}: {exc}"
    emit("error", message=message)
    print(message, file=sys.stderr, flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
