"""Who plays whom in a tournament round: round robin (Berger tables) and a Swiss system.

Pure functions over plain data, no I/O: the tournament runner stores games and results and
asks this module for the next round.  Entrants are bot ids, given in seed order (the
caller's initial ranking, e.g. by rating); the first of a pairing takes seat 0 and moves
first, which is the "white" of chess pairing rules and why colour balance matters.

Results are 4-tuples ``(round, first, second, outcome)`` (a :class:`Result` is one):
``second`` is None for a bye, ``outcome`` is 1, 0.5 or 0 from the first's view, or
:data:`NO_RESULT` for a game that did not count (both score nothing).  A pairing that
ended with no result still counts as "met" and a bye still counts as had, so the Swiss
system does not pair the same game again; it gives neither colour nor points.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal, NamedTuple, TypeAlias

NoResult: TypeAlias = Literal["no result"]
NO_RESULT: Final[NoResult] = "no result"
Outcome: TypeAlias = float | NoResult
ResultLike: TypeAlias = tuple[int, int, int | None, Outcome]
FIRST: Final = 1
SECOND: Final = -1


class Pairing(NamedTuple):
    """One board of a round: ``first`` takes seat 0; ``second`` None means ``first`` has the bye."""

    first: int
    second: int | None

    @property
    def is_bye(self) -> bool:
        return self.second is None


class Result(NamedTuple):
    """A played (or cancelled) board: ``outcome`` is from ``first``'s view."""

    round: int
    first: int
    second: int | None
    outcome: Outcome


@dataclass(frozen=True)
class Scoring:
    """Points per outcome.  A bye scores like a win by default, as in most chess Swiss
    events, because the entrant sitting out did nothing wrong."""

    win: float = 1.0
    draw: float = 0.5
    loss: float = 0.0
    bye: float = 1.0

    def of(self, outcome: float) -> float:
        """Points for a game outcome (1, 0.5 or 0 from the scorer's view)."""
        return self.win if outcome == 1 else self.draw if outcome == 0.5 else self.loss


DEFAULT_SCORING: Final = Scoring()


def checked_results(results: Iterable[ResultLike]) -> list[Result]:
    """The results as :class:`Result`, in round order, refusing outcomes that mean nothing.

    Sorting makes colour histories follow the order of play whatever order the caller's
    store returned them in; the sort is stable, so boards of a round keep their order.
    """
    out: list[Result] = []
    for raw in results:
        result = Result(*raw)
        if result.outcome != NO_RESULT and result.outcome not in (0, 0.5, 1):
            raise ValueError(f"outcome must be 1, 0.5, 0 or {NO_RESULT!r}: {result}")
        if result.first == result.second:
            raise ValueError(f"an entrant cannot play itself: {result}")
        out.append(result)
    out.sort(key=lambda r: r.round)
    return out


def seed_index(entrants: Sequence[int]) -> dict[int, int]:
    """Each entrant's seed (0 = top), refusing duplicates, which would pair a bot with itself."""
    seeds = {entrant: i for i, entrant in enumerate(entrants)}
    if len(seeds) != len(entrants):
        raise ValueError(f"duplicate entrants: {sorted(entrants)}")
    return seeds


# --- Round robin ------------------------------------------------------------------------


def round_robin_rounds(count: int, cycles: int = 1) -> int:
    """Rounds a round robin of ``count`` entrants takes: N-1 per cycle, N when N is odd
    (one entrant sits out each round)."""
    if count < 2:
        return 0
    return (count if count % 2 else count - 1) * cycles


def round_robin(entrants: Sequence[int], *, cycles: int = 1) -> list[list[Pairing]]:
    """Every round of a round robin: each pair meets once per cycle.

    Circle method as in FIDE's Berger tables: the last slot stays put and the others rotate
    one place a round.  With an odd count a phantom takes the fixed slot and whoever draws
    it has the bye that round (seed order: the top seed sits out round 1), so each entrant
    has exactly one bye per cycle; the bye is listed last in its round.

    Seats: the fixed slot alternates between first and second, and on the other boards the
    seat depends on the board's parity.  Over a cycle each entrant is first in half its
    games, rounded either way, and never three times running (checked for N up to 21).
    A second cycle repeats the first with seats swapped, so every pair plays both seatings;
    further cycles alternate.
    """
    seed_index(entrants)  # refuses duplicates
    if cycles < 1:
        raise ValueError("a round robin has at least one cycle")
    if len(entrants) < 2:
        return []
    slots: list[int | None] = list(entrants)
    if len(slots) % 2:
        slots.append(None)
    n = len(slots)
    ring = n - 1
    cycle: list[list[tuple[int, int]]] = []
    for r in range(ring):
        # The fixed slot against the entrant that has rotated to the top of the ring.
        boards = [(r, ring) if r % 2 == 0 else (ring, r)]
        for board in range(1, n // 2):
            up, down = (r + board) % ring, (r - board) % ring
            boards.append((up, down) if board % 2 else (down, up))
        cycle.append(boards)
    plan: list[list[Pairing]] = []
    for c in range(cycles):
        swap = c % 2 == 1
        for boards in cycle:
            games: list[Pairing] = []
            byes: list[Pairing] = []
            for a, b in boards:
                first, second = (slots[b], slots[a]) if swap else (slots[a], slots[b])
                if first is None or second is None:
                    sitter = second if first is None else first
                    assert sitter is not None
                    byes.append(Pairing(sitter, None))
                else:
                    games.append(Pairing(first, second))
            plan.append(games + byes)
    return plan


# --- Swiss --------------------------------------------------------------------------------


@dataclass
class _Record:
    """What pairing needs to know about an entrant's tournament so far."""

    score: float = 0.0
    colours: list[int] = field(default_factory=list)  # FIRST/SECOND of games with a result
    met: Counter[int] = field(default_factory=Counter)
    byes: int = 0

    def preference(self) -> tuple[int, int]:
        """(colour wanted, strength): strength 3 absolute, 2 strong, 1 mild, 0 none.

        FIDE's C.04.1 rules, simplified: a colour difference of two or the same colour
        twice running makes the other colour absolute (so nobody reaches a difference of
        three or three in a row while it can be avoided); a difference of one is strong;
        otherwise alternate mildly.
        """
        diff = sum(self.colours)
        last_two = self.colours[-2:]
        if diff <= -2 or last_two == [SECOND, SECOND]:
            return FIRST, 3
        if diff >= 2 or last_two == [FIRST, FIRST]:
            return SECOND, 3
        if diff:
            return (SECOND if diff > 0 else FIRST), 2
        if self.colours:
            return -self.colours[-1], 1
        return 0, 0


def _records(entrants: Sequence[int], results: Iterable[ResultLike],
             scoring: Scoring) -> dict[int, _Record]:
    records = {entrant: _Record() for entrant in entrants}
    for result in checked_results(results):
        first = records.get(result.first)
        if result.second is None:
            if first is not None:
                first.byes += 1
                if result.outcome != NO_RESULT:
                    first.score += scoring.bye
            continue
        second = records.get(result.second)
        for me, other, colour in ((first, result.second, FIRST),
                                  (second, result.first, SECOND)):
            if me is None:  # an entrant no longer paired (withdrawn): only its opponents count
                continue
            me.met[other] += 1
            if result.outcome != NO_RESULT:
                me.colours.append(colour)
                view = result.outcome if colour == FIRST else 1 - result.outcome
                me.score += scoring.of(view)
    return records


def swiss_round(entrants: Sequence[int], results: Iterable[ResultLike], *,
                scoring: Scoring = DEFAULT_SCORING) -> list[Pairing]:
    """The next Swiss round for ``entrants`` (seed order) given all results so far.

    A simplified Dutch system: entrants are ranked by score, then seed; each score group
    pairs its top half against its bottom half (1st v. (n/2+1)th ...), and the odd one out
    floats down to the highest-ranked entrant of the next group.  In priority order:

    1. At most one bye each: the bye goes to the lowest-ranked entrant without one whose
       absence still lets everyone else be paired without a rematch (the lowest-ranked
       without one when no choice can avoid rematches).
    2. No rematch, and no pair whose absolute colour wishes clash (see
       :meth:`_Record.preference`), whenever a full pairing without them exists; each is
       dropped only when impossible.  That is decided exactly with maximum matchings, so a
       good choice at the top never leaves the bottom unpairable.
    3. Within those rules, top-down: the best-ranked unpaired entrant takes the first
       opponent, in this order, that keeps the rest pairable: its own score group before
       lower ones; colour wishes both grantable before not; Dutch order (top half v.
       bottom half, then the rest of the group; the next group from its top).

    Seats follow FIDE's colour allocation (grant both wishes, else the stronger, else
    alternate back to where their histories differed, else the higher-ranked's wish; in
    round 1 the higher-ranked alternates by board).  Deterministic: the same inputs give the
    same round.  Entrants that appear in results but not in ``entrants`` (withdrawn) are
    not paired.
    """
    seeds = seed_index(entrants)
    records = _records(entrants, results, scoring)
    ranked = sorted(entrants, key=lambda e: (-records[e].score, seeds[e]))
    bye = _choose_bye(ranked, records) if len(ranked) % 2 else None
    players = [e for e in ranked if e != bye]
    plan = [Pairing(*_seats(a, b, records, seeds)) for a, b in _pair(players, records)]
    if bye is not None:
        plan.append(Pairing(bye, None))
    return plan


def _clash(a: _Record, b: _Record) -> int:
    """How strongly the colour wishes of a pair collide: 0 if both can be granted, else
    the weaker wish's strength (that is the one that will be refused)."""
    (want_a, strength_a), (want_b, strength_b) = a.preference(), b.preference()
    return min(strength_a, strength_b) if want_a == want_b != 0 else 0


def _fresh_and_colour_safe(a: _Record, b: _Record, b_id: int) -> bool:
    return a.met[b_id] == 0 and _clash(a, b) < 3


def _fresh(a: _Record, b: _Record, b_id: int) -> bool:
    return a.met[b_id] == 0


def _anyone(a: _Record, b: _Record, b_id: int) -> bool:
    return True


# Which pairs may meet, strictest first: the round uses the strictest rule under which
# everyone can still be paired, so each rule is dropped only when it cannot be kept.
Rule: TypeAlias = Callable[[_Record, _Record, int], bool]
_RULES: Final[tuple[Rule, ...]] = (_fresh_and_colour_safe, _fresh, _anyone)


def _graph(players: Sequence[int], records: dict[int, _Record], rule: Rule) -> list[list[int]]:
    """Adjacency (by rank index) of the pairs the rule allows."""
    return [[j for j, b in enumerate(players)
             if i != j and rule(records[a], records[b], b)]
            for i, a in enumerate(players)]


def _choose_bye(ranked: Sequence[int], records: dict[int, _Record]) -> int:
    """The lowest-ranked entrant without a bye whose absence leaves a rematch-free round.

    One maximum matching of the whole field, then per candidate at most one augmenting
    search: removing a vertex frees at most its partner.
    """
    pool = [i for i, e in enumerate(ranked) if records[e].byes == 0] or list(range(len(ranked)))
    adj = _graph(ranked, records, _fresh)
    alive = [True] * len(ranked)
    match = [-1] * len(ranked)
    _complete(adj, alive, match)  # a maximum matching; odd count, so never complete
    for i in reversed(pool):
        trial = match.copy()
        _unmatch(trial, i)
        alive[i] = False
        if _complete(adj, alive, trial):
            return ranked[i]
        alive[i] = True
    return ranked[pool[-1]]


def _pair(players: Sequence[int], records: dict[int, _Record]) -> list[tuple[int, int]]:
    """Pairs (higher-ranked first) covering ``players`` (rank order, even count)."""
    n = len(players)
    alive = [True] * n
    for rule in _RULES:
        adj = _graph(players, records, rule)
        match = [-1] * n
        if _complete(adj, alive, match):
            break
    score = [records[e].score for e in players]
    unpaired = list(range(n))
    pairs: list[tuple[int, int]] = []
    while unpaired:
        top = unpaired[0]
        group = [i for i in unpaired if score[i] == score[top]]
        half = len(group) // 2
        # Dutch order within the group: top half against bottom half (the best-ranked
        # unpaired meets the group's middle), then the bottom half's lower entrants, then
        # the top half from its lowest up (FIDE's transpositions before exchanges).
        dutch = {i: k for k, i in enumerate(group[half:] + group[half - 1:0:-1])}
        mine = records[players[top]]

        def choice(i: int, top: int = top, dutch: dict[int, int] = dutch,
                   mine: _Record = mine) -> tuple[int, float, int, int]:
            # Fewest meetings (only differs when rematches are unavoidable), nearest score,
            # fewest refused colour wishes, then Dutch order (rank order in lower groups).
            other = records[players[i]]
            return (mine.met[players[i]], score[top] - score[i], _clash(mine, other),
                    dutch.get(i, i))

        for other in sorted((i for i in adj[top] if alive[i]), key=choice):
            if match[top] == other:
                break
            trial = match.copy()
            _unmatch(trial, top)
            _unmatch(trial, other)
            trial[top], trial[other] = other, top
            alive[top] = alive[other] = False
            if _complete(adj, alive, trial):
                match = trial
                break
            alive[top] = alive[other] = True
        else:  # pragma: no cover - match[top] is always a candidate and always works
            raise AssertionError("no opponent keeps the round pairable")
        partner = match[top]
        alive[top] = alive[partner] = False
        unpaired = [i for i in unpaired if i not in (top, partner)]
        pairs.append((players[top], players[partner]))
    return pairs


def _seats(a: int, b: int, records: dict[int, _Record],
           seeds: dict[int, int]) -> tuple[int, int]:
    """(first, second) for a pair whose higher-ranked entrant is ``a``."""
    ra, rb = records[a], records[b]
    (want_a, strength_a), (want_b, strength_b) = ra.preference(), rb.preference()
    a_first: bool
    if want_a != want_b:  # both grantable (or only one has a wish)
        a_first = want_a == FIRST if want_a else want_b == SECOND
    elif want_a == 0:  # no games yet: the higher-ranked alternates by board, via its seed
        a_first = seeds[a] % 2 == 0
    elif strength_a != strength_b:
        a_first = (want_a == FIRST) == (strength_a > strength_b)
    elif strength_a == 3 and abs(sum(ra.colours)) != abs(sum(rb.colours)):
        a_first = (want_a == FIRST) == (abs(sum(ra.colours)) > abs(sum(rb.colours)))
    else:
        # Alternate relative to the latest game in which their seats differed, counting
        # back from each one's last game; failing that the higher-ranked gets its wish.
        a_first = want_a == FIRST
        for ca, cb in zip(reversed(ra.colours), reversed(rb.colours), strict=False):
            if ca != cb:
                a_first = ca == SECOND
                break
    return (a, b) if a_first else (b, a)


# --- Maximum matching (Edmonds' blossom algorithm) ----------------------------------------


def _unmatch(match: list[int], v: int) -> None:
    if match[v] != -1:
        match[match[v]] = -1
        match[v] = -1


def _complete(adj: Sequence[Sequence[int]], alive: Sequence[bool], match: list[int]) -> bool:
    """Extend ``match`` (in place) to a maximum matching of the alive vertices; True when
    it then covers them all.

    Greedy pairing can paint itself into a corner (the last few entrants have all met);
    asking for a perfect matching before every choice is what makes "no rematch when
    avoidable" exact.  Edmonds' algorithm because the graph is general, not bipartite.
    A vertex with no augmenting path now never gets one later (a classic property), so
    one search per free vertex suffices: O(n^3) for the whole matching.
    """
    for root in range(len(adj)):
        if alive[root] and match[root] == -1:
            end = _augmenting_path(adj, alive, match, root)
            if end is not None:
                _flip(end[0], end[1], match)
    return all(match[v] != -1 for v in range(len(adj)) if alive[v])


def _flip(v: int, parent: list[int], match: list[int]) -> None:
    while v != -1:
        pv = parent[v]
        next_v = match[pv]
        match[v], match[pv] = pv, v
        v = next_v


def _augmenting_path(adj: Sequence[Sequence[int]], alive: Sequence[bool], match: list[int],
                     root: int) -> tuple[int, list[int]] | None:
    n = len(adj)
    used = [False] * n
    parent = [-1] * n
    base = list(range(n))
    used[root] = True
    queue = [root]

    def lca(a: int, b: int) -> int:
        seen = [False] * n
        while True:
            a = base[a]
            seen[a] = True
            if match[a] == -1:
                break
            a = parent[match[a]]
        while True:
            b = base[b]
            if seen[b]:
                return b
            b = parent[match[b]]

    def mark(v: int, b: int, child: int, blossom: list[bool]) -> None:
        while base[v] != b:
            blossom[base[v]] = blossom[base[match[v]]] = True
            parent[v] = child
            child = match[v]
            v = parent[match[v]]

    head = 0
    while head < len(queue):
        v = queue[head]
        head += 1
        for to in adj[v]:
            if not alive[to] or base[v] == base[to] or match[v] == to:
                continue
            if to == root or (match[to] != -1 and parent[match[to]] != -1):
                # An odd cycle: contract it into a blossom with base ``common``.
                common = lca(v, to)
                blossom = [False] * n
                mark(v, common, to, blossom)
                mark(to, common, v, blossom)
                for i in range(n):
                    if blossom[base[i]]:
                        base[i] = common
                        if not used[i]:
                            used[i] = True
                            queue.append(i)
            elif parent[to] == -1:
                parent[to] = v
                if match[to] == -1:
                    return to, parent
                used[match[to]] = True
                queue.append(match[to])
    return None
