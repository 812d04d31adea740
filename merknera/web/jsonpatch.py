"""JSON Patch (RFC 6902) between two JSON values, for replays that send what a move changed.

:func:`diff` makes the patch that turns one value into another, using three of the RFC's
operations: ``add`` (a new key, or ``/-`` to append to an array), ``remove`` and
``replace``.  Paths are JSON Pointers (RFC 6901: ``~`` is written ``~0`` and ``/`` is
``~1``; ``""`` is the whole value).  Any JSON Patch library applies such a patch;
:func:`apply` is this module's own, with which the replays rebuild a frame's whole state
from the one before it, copying only what an operation changes (the tests check the
patches with another library too).

The patch follows how views change from one move to the next: an array that grows at its
end gets ``add .../-`` for its new items, an array that shrinks at its end gets ``remove``
for its last items, an array of the same length gets a patch per changed item (or, when
most items changed, is replaced whole), and an object gets a patch per changed key.  It
is exact, key order included: applying it gives a value that serialises to the same JSON
text, so a page that draws objects' keys in order draws the same thing.

Scalars compare by type and value (``true`` is not ``1``).  Arrays first compare with
Python's ``==``, which is fast but holds ``1``, ``1.0`` and ``true`` equal, so an array
whose items flip between those without any other change is not patched; JSON as
JavaScript reads it cannot tell ``1`` from ``1.0``, and a view that turns a ``true`` into a
``1`` is not a view of any game here (the replay tests compare every frame as JSON text).
"""

from __future__ import annotations

from typing import Any

from merknera.games import JSON

Patch = list[JSON]
"""A JSON Patch: its operations (objects) in order."""


class PatchError(ValueError):
    """A patch that does not apply to the value it is applied to."""


def pointer(parts: list[str]) -> str:
    """The JSON Pointer of a path's keys and indexes (RFC 6901)."""
    return "".join("/" + part.replace("~", "~0").replace("/", "~1") for part in parts)


def parts_of(path: str) -> list[str]:
    """A JSON Pointer's keys and indexes.

    :raises PatchError: for a pointer that is neither ``""`` nor starts with ``/``.
    """
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f'a JSON Pointer is "" or starts with "/", not {path[:40]!r}')
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def diff(before: JSON, after: JSON) -> Patch:
    """The patch that turns ``before`` into ``after`` (``[]`` when they are the same)."""
    ops: Patch = []
    _diff(before, after, "", ops)
    return ops


# The paths below are pointers built as they go down (``path`` is the pointer so far): a
# replay diffs every move's view, and joining lists of keys anew for each op was a fifth
# of a long game's build.

def _below(path: str, key: str) -> str:
    if "~" in key or "/" in key:
        key = key.replace("~", "~0").replace("/", "~1")
    return f"{path}/{key}"


def _replace(path: str, value: JSON, ops: Patch) -> None:
    ops.append({"op": "replace", "path": path, "value": value})


def _diff(before: JSON, after: JSON, path: str, ops: Patch) -> None:
    if before is after:
        return
    if type(before) is not type(after):
        _replace(path, after, ops)
    elif isinstance(before, dict):
        assert isinstance(after, dict)
        _diff_object(before, after, path, ops)
    elif isinstance(before, list):
        assert isinstance(after, list)
        _diff_array(before, after, path, ops)
    elif before != after:
        _replace(path, after, ops)


def _diff_object(before: dict[str, JSON], after: dict[str, JSON], path: str,
                 ops: Patch) -> None:
    # Removing keys keeps the others' order and adding puts a key last, as both Python and
    # JavaScript do; when that does not give ``after``'s order, the object is sent whole.
    if before.keys() != after.keys():
        kept = [key for key in before if key in after]
        if kept + [key for key in after if key not in before] != list(after):
            _replace(path, after, ops)
            return
        ops.extend({"op": "remove", "path": _below(path, key)}
                   for key in before if key not in after)
    elif list(before) != list(after):  # the same keys in another order
        _replace(path, after, ops)
        return
    for key, value in after.items():
        if key in before:
            _diff(before[key], value, _below(path, key), ops)
        else:
            ops.append({"op": "add", "path": _below(path, key), "value": value})


def _diff_array(before: list[JSON], after: list[JSON], path: str, ops: Patch) -> None:
    # Comparing slices runs in C: the lines of a long game's board are checked in
    # microseconds, where a Python loop over them at every move made a replay quadratic.
    old, new = len(before), len(after)
    if new >= old and after[:old] == before:
        end = f"{path}/-"
        ops.extend({"op": "add", "path": end, "value": item} for item in after[old:])
    elif new < old and before[:new] == after:
        ops.extend({"op": "remove", "path": f"{path}/{index}"}
                   for index in range(old - 1, new - 1, -1))
    elif new == old:
        changed = [index for index in range(old)
                   if type(before[index]) is not type(after[index])
                   or before[index] != after[index]]
        if len(changed) * 2 > old:
            _replace(path, after, ops)
            return
        for index in changed:
            _diff(before[index], after[index], f"{path}/{index}", ops)
    else:
        _replace(path, after, ops)


def apply(document: JSON, patch: Patch) -> JSON:
    """``document`` with ``patch`` applied (``document`` itself is not changed: what an
    operation changes is copied, the rest is shared).

    :raises PatchError: naming the operation that does not apply and why.
    """
    for number, op in enumerate(patch, 1):
        try:
            document = _apply_op(document, op)
        except PatchError as exc:
            raise PatchError(f"operation {number} of the patch ({_brief(op)}): {exc}") from None
    return document


def _brief(op: Any) -> str:
    if not isinstance(op, dict):
        return repr(op)[:60]
    return f"{op.get('op')} {str(op.get('path'))[:60]}"


def _apply_op(document: JSON, op: JSON) -> JSON:
    if not isinstance(op, dict):
        raise PatchError(f"an operation is an object, not {type(op).__name__}")
    kind, path = op.get("op"), op.get("path")
    if kind not in ("add", "remove", "replace"):
        raise PatchError(f"the operation must be add, remove or replace, not {kind!r}")
    if not isinstance(path, str):
        raise PatchError(f"the path must be a string, not {path!r}")
    if kind != "remove" and "value" not in op:
        raise PatchError(f"{kind} needs a value")
    parts = parts_of(path)
    if not parts:
        if kind == "remove":
            raise PatchError("the whole document cannot be removed")
        return op["value"]
    return _changed(document, parts, 0, kind, op.get("value"))


def _changed(node: JSON, parts: list[str], depth: int, kind: str, value: JSON) -> JSON:
    """A copy of ``node`` with the operation done at ``parts[depth:]``."""
    part, last = parts[depth], depth == len(parts) - 1
    where = pointer(parts[:depth]) or "the document"
    if isinstance(node, dict):
        copy = dict(node)
        if last:
            if kind != "add" and part not in copy:
                raise PatchError(f"{where} has no key {part!r} to {kind}")
            if kind == "remove":
                del copy[part]
            else:
                copy[part] = value
        elif part not in copy:
            raise PatchError(f"{where} has no key {part!r}")
        else:
            copy[part] = _changed(copy[part], parts, depth + 1, kind, value)
        return copy
    if isinstance(node, list):
        items = list(node)
        if last and kind == "add" and part == "-":
            items.append(value)
            return items
        index = _index(part, len(items), where, end=kind == "add" and last)
        if not last:
            items[index] = _changed(items[index], parts, depth + 1, kind, value)
        elif kind == "add":
            items.insert(index, value)
        elif kind == "remove":
            del items[index]
        else:
            items[index] = value
        return items
    raise PatchError(f"{where} is {type(node).__name__}, which has no {part!r}")


def _index(part: str, size: int, where: str, *, end: bool) -> int:
    """An array index of a pointer: digits without leading zeros, below ``size`` (or equal
    to it, with ``end``: an ``add`` may insert after the last item)."""
    if not (part.isascii() and part.isdigit()) or (len(part) > 1 and part[0] == "0"):
        raise PatchError(f"{where} is an array, and {part!r} is no index of one")
    index = int(part)
    if index > size or (index == size and not end):
        raise PatchError(f"{where} has {size} items, so no index {index}")
    return index
