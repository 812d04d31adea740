"""Users and their API tokens.  Tokens are stored as SHA-256 hashes, never in plain text."""

from __future__ import annotations

import hashlib
import secrets
import string
from dataclasses import dataclass

from merknera.store.db import Connection, Database, Row, now

TOKEN_ALPHABET = string.ascii_letters + string.digits
TOKEN_LENGTH = 50
"""Merknera's tokens were 50 characters from [a-zA-Z0-9]; ours are too, from `secrets`."""


class UserExistsError(ValueError):
    """A user with that name exists already."""


class UnknownUserError(LookupError):
    """No user has that name."""


class NoTokenError(LookupError):
    """The user has no current token (to rotate)."""


@dataclass(frozen=True)
class User:
    """A person who owns bots."""

    id: int
    name: str
    created_at: str
    suspended_reason: str | None = None
    """Why an admin suspended the user (None: not suspended)."""
    suspended_at: str | None = None
    """When an admin suspended the user (None: not suspended)."""

    @property
    def suspended(self) -> bool:
        """Whether an admin has suspended the user."""
        return self.suspended_reason is not None


def new_token() -> str:
    """A fresh API token."""
    return "".join(secrets.choice(TOKEN_ALPHABET) for _ in range(TOKEN_LENGTH))


def hash_token(token: str) -> str:
    """The stored form of a token.

    A plain SHA-256 is enough: tokens are 50 random characters (~297 bits), so there is
    nothing for a slow password hash to protect against.
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _user(row: Row) -> User:
    return User(id=row["id"], name=row["name"], created_at=row["created_at"],
                suspended_reason=row["suspended_reason"], suspended_at=row["suspended_at"])


async def create_user(db: Database, name: str, description: str = "created with the user") -> (
        tuple[User, str]):
    """Create a user with one token; returns the user and the token (shown only now).

    :raises UserExistsError: if the name is taken.
    """
    token, stamp = new_token(), now()

    def work(conn: Connection) -> User:
        if conn.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone() is not None:
            raise UserExistsError(f'a user named "{name}" exists already')
        user_id = insert_user(conn, name, stamp)
        _insert_token(conn, user_id, token, description, stamp)
        return User(user_id, name, stamp)

    return await db.transaction(work), token


async def issue_token(db: Database, name: str, description: str) -> str:
    """Add a token to an existing user; returns it.

    :raises UnknownUserError: if there is no such user.
    """
    token, stamp = new_token(), now()

    def work(conn: Connection) -> None:
        row = conn.execute("SELECT id FROM users WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise UnknownUserError(f'there is no user named "{name}"')
        _insert_token(conn, row["id"], token, description, stamp)

    await db.transaction(work)
    return token


async def rotate_token(db: Database, name: str, description: str) -> tuple[str, int]:
    """Revoke every current token of a user and issue one new token, in one transaction:
    the old ones are refused from the moment it commits.  Returns the new token (shown only
    now) and how many tokens were revoked.

    :raises UnknownUserError: if there is no such user.
    :raises NoTokenError: if the user has no current token (an owner named by a gateway, or
        one whose tokens were all revoked: ``merknera user token`` issues one).
    """
    token, stamp = new_token(), now()

    def work(conn: Connection) -> int:
        row = conn.execute("SELECT id FROM users WHERE name = ?", (name,)).fetchone()
        if row is None:
            raise UnknownUserError(f'there is no user named "{name}"')
        revoked = conn.execute("UPDATE tokens SET status = 'REVOKED' WHERE user_id = ? "
                               "AND status = 'CURRENT'", (row["id"],)).rowcount
        if revoked == 0:
            raise NoTokenError(f'the user "{name}" has no current token to rotate; '
                               f"`merknera user token {name}` issues one")
        _insert_token(conn, row["id"], token, description, stamp)
        return int(revoked)

    revoked = await db.transaction(work)
    return token, revoked


@dataclass(frozen=True)
class UserSummary:
    """A user with the counts an operator looks at."""

    user: User
    tokens: int
    """Current (not revoked) tokens."""
    bots: int
    """Bot versions that are not superseded (current or disabled)."""


async def summaries(db: Database) -> list[UserSummary]:
    """Every user, by id, with their current tokens and bots counted."""
    rows = await db.fetchall(
        "SELECT users.*, (SELECT COUNT(*) FROM tokens WHERE tokens.user_id = users.id "
        "AND tokens.status = 'CURRENT') AS current_tokens, (SELECT COUNT(*) FROM bots "
        "WHERE bots.user_id = users.id AND bots.status != 'SUPERSEDED') AS bot_versions "
        "FROM users ORDER BY users.id")
    return [UserSummary(_user(row), int(row["current_tokens"]), int(row["bot_versions"]))
            for row in rows]


def _insert_token(conn: Connection, user_id: int, token: str, description: str,
                  stamp: str) -> None:
    conn.execute(
        "INSERT INTO tokens (user_id, token_hash, description, created_at) VALUES (?, ?, ?, ?)",
        (user_id, hash_token(token), description, stamp))


_SELECT_OWNER = ("SELECT users.* FROM tokens JOIN users ON users.id = tokens.user_id "
                 "WHERE tokens.token_hash = ? AND tokens.status = 'CURRENT'")


def user_for_token(conn: Connection, token: str) -> User | None:
    """The user a current token belongs to, or None (inside a transaction)."""
    row = conn.execute(_SELECT_OWNER, (hash_token(token),)).fetchone()
    return None if row is None else _user(row)


async def find_user_by_token(db: Database, token: str) -> User | None:
    """The user a current token belongs to, read outside any transaction."""
    row = await db.fetchone(_SELECT_OWNER, (hash_token(token),))
    return None if row is None else _user(row)


async def get_user(db: Database, name: str) -> User | None:
    """The user with that name, or None."""
    row = await db.fetchone("SELECT * FROM users WHERE name = ?", (name,))
    return None if row is None else _user(row)


def by_name(conn: Connection, name: str) -> User | None:
    """The user with that name, or None (inside a transaction)."""
    row = conn.execute("SELECT * FROM users WHERE name = ?", (name,)).fetchone()
    return None if row is None else _user(row)


def insert_user(conn: Connection, name: str, stamp: str) -> int:
    """Add a user without a token (inside a write transaction); returns its id."""
    return int(conn.execute("INSERT INTO users (name, created_at) VALUES (?, ?) RETURNING id",
                            (name, stamp)).fetchone()[0])


def has_tokens(conn: Connection, user_id: int) -> bool:
    """Whether the user has ever had a token (an account that registers over ``/rpc``,
    not an owner named by a gateway's registration)."""
    return conn.execute("SELECT 1 FROM tokens WHERE user_id = ? LIMIT 1",
                        (user_id,)).fetchone() is not None


def set_suspended(conn: Connection, user_id: int, reason: str | None) -> None:
    """Suspend a user (with the reason), or lift the suspension (``None``)."""
    conn.execute("UPDATE users SET suspended_reason = ?, suspended_at = ? WHERE id = ?",
                 (reason, None if reason is None else now(), user_id))
