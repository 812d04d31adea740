"""The tests' throwaway PostgreSQL cluster (tests/support/postgres.py): it starts from
nothing, serves SQL over TCP to the user the tests know, and leaves nothing behind."""

from __future__ import annotations

import subprocess

from tests.support.postgres import start_cluster


def test_a_throwaway_cluster_serves_and_goes_away() -> None:
    cluster = start_cluster()
    try:
        assert cluster.psql("SELECT 1 + 1") == "2"
        cluster.psql("CREATE DATABASE arena")
        cluster.psql("CREATE TABLE t (n integer); INSERT INTO t VALUES (7)", database="arena")
        assert cluster.psql("SELECT n FROM t", database="arena") == "7"
        assert cluster.url.startswith(f"postgresql://{cluster.user}@127.0.0.1:")
    finally:
        cluster.stop()
    assert not cluster.directory.exists()
    gone = subprocess.run(["psql", "-X", "-h", "127.0.0.1", "-p", str(cluster.port), "-U",
                           cluster.user, "-c", "SELECT 1"], capture_output=True, timeout=30,
                          check=False)
    assert gone.returncode != 0
