"""After start-up, the serving process keeps its long-lived heap out of the collector's
sight and collects its youngest generation less often (merknera.heap).  Run in a process
of its own: the settings are the whole process's."""

from __future__ import annotations

import json
import subprocess
import sys

from merknera import heap

PROBE = """
import gc, json, weakref
from merknera import heap

class Node:
    pass

def cycle():
    node = Node()
    node.self = node
    return weakref.ref(node)

before = cycle()  # made before settle, then dropped: garbage settle collects
heap.settle()
frozen = gc.get_freeze_count()
print(json.dumps({"frozen": frozen, "threshold": gc.get_threshold(),
                  "before_freed": before() is None}))
"""


def test_settle_collects_then_freezes_startup() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          check=True)
    probe = json.loads(done.stdout)
    default_middle, default_oldest = 10, 10  # CPython's, which settle leaves as they are
    assert probe["threshold"] == [heap.YOUNGEST_THRESHOLD, default_middle, default_oldest]
    assert probe["frozen"] > 1_000  # the interpreter's and merknera's modules at least
    assert probe["before_freed"], "start-up's garbage was frozen instead of collected"
