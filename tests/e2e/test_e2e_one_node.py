"""One node to a SQLite file: a second ``merknera serve`` on the file is refused at start-up,
naming the file, the node that serves it and the way to several nodes, and the first goes
on; once the first is killed (SIGKILL: nothing cleans up), a new node starts on the file."""

from __future__ import annotations

import re

from tests.e2e.harness import E2E


async def test_a_second_node_on_a_sqlite_file_is_refused(e2e: E2E) -> None:
    first = await e2e.start_platform()
    second = await e2e.processes.start(
        "second", "-m", "merknera", "serve", "--db", str(e2e.db), "--host", "127.0.0.1",
        "--port", "0")
    code = await second.process.wait()
    err = second.stderr_path.read_text()
    assert code == 1, err
    assert f"{e2e.db} is served already (merknera serve, pid {first.child.pid}" in err, err
    assert "a SQLite file serves one node" in err, err
    assert "db copy --from FILE --to postgresql://" in err, err  # the way to several nodes
    assert (await e2e.get("/api/bots"))["bots"] == []  # the first serves on
    await e2e.kill_platform()
    again = await e2e.start_platform()
    assert again.child.pid != first.child.pid
    assert re.search(r"pid \d+", (e2e.db.parent / f"{e2e.db.name}.node-lock").read_text())
