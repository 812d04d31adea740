"""The event loop of ``merknera serve``: uvloop where it is installed (a dependency wherever
it is built), which spends less CPU per loop iteration than asyncio's own; asyncio's own
loop elsewhere.  The platform
works on both: the tests run in-process on asyncio's loop, the platform processes of the
end-to-end tests on this one, and the bot client's wire (whose transports the two loops make
differently) is tested on both (tests/http1).

``merknera demo`` (``make run``) stays on asyncio's loop: under uvloop, the SIGINT that
stops it was seen a second time, as a KeyboardInterrupt, once the demo's bot processes
ended (uvloop handles the child's SIGCHLD by running Python's pending signal handlers,
SIGINT's default one among them by then).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to its end on a new loop (as :func:`asyncio.run` does)."""
    try:
        import uvloop
    except ImportError:  # a platform uvloop is not built for
        return asyncio.run(main)
    return uvloop.run(main)
