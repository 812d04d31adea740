"""The store: SQLite (or PostgreSQL for several nodes), one module of queries per table group.

The move log is the source of truth; every score and table is derived from it.
"""

from merknera.store.db import Database, StoreError, now

__all__ = ["Database", "StoreError", "now"]
