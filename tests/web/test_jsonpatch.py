"""The replays' JSON Patch: the patches :func:`diff` makes, that :func:`apply` and, as an
independent check, the ``jsonpatch`` package rebuild the value exactly (as JSON text, key
order included) without changing what it started from, and that a patch which does not
apply is refused by operation, saying why."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonpatch
import pytest

from merknera.web.jsonpatch import PatchError, apply, diff, parts_of, pointer


def add(path: str, value: Any) -> dict[str, Any]:
    return {"op": "add", "path": path, "value": value}


def replace(path: str, value: Any) -> dict[str, Any]:
    return {"op": "replace", "path": path, "value": value}


def remove(path: str) -> dict[str, Any]:
    return {"op": "remove", "path": path}


DIFFS: list[tuple[str, Any, Any, list[dict[str, Any]]]] = [
    ("the same", {"a": [1, 2]}, {"a": [1, 2]}, []),
    ("a scalar", {"turn": 0}, {"turn": 1}, [replace("/turn", 1)]),
    ("true is not 1", {"over": 1}, {"over": True}, [replace("/over", True)]),
    ("1 is not 1.0 at a key", {"n": 1}, {"n": 1.0}, [replace("/n", 1.0)]),
    ("null to a value", {"x": None}, {"x": {"y": 1}}, [replace("/x", {"y": 1})]),
    ("a whole value", [1], {"a": 1}, [replace("", {"a": 1})]),
    ("appended items", {"lines": [[0, 1]]}, {"lines": [[0, 1], [2, 3], [4, 5]]},
     [add("/lines/-", [2, 3]), add("/lines/-", [4, 5])]),
    ("items off the end", [1, 2, 3, 4], [1, 2], [remove("/3"), remove("/2")]),
    ("one cell of many", ["X", "", "", "", ""], ["X", "O", "", "", ""], [replace("/1", "O")]),
    ("most cells: the array whole", [1, 2, 3], [1, 5, 6], [replace("", [1, 5, 6])]),
    ("a nested cell", [[0, 0], [0, 0], [0, 0]], [[0, 0], [0, 7], [0, 0]],
     [replace("/1/1", 7)]),
    ("shorter, not a prefix", [1, 2, 3], [2, 3], [replace("", [2, 3])]),
    ("a key added last", {"a": 1}, {"a": 1, "b": 2}, [add("/b", 2)]),
    ("a key removed", {"a": 1, "b": 2, "c": 3}, {"a": 1, "c": 3}, [remove("/b")]),
    ("keys in another order: whole", {"a": 1, "b": 2}, {"b": 2, "a": 1},
     [replace("", {"b": 2, "a": 1})]),
    ("a key added before others: whole", {"b": 1}, {"a": 0, "b": 1},
     [replace("", {"a": 0, "b": 1})]),
    ("keys with ~ and /", {"a/b": 1, "m~n": [1]}, {"a/b": 2, "m~n": [1, 2]},
     [replace("/a~1b", 2), add("/m~0n/-", 2)]),
    ("an empty key", {"": 1}, {"": 2}, [replace("/", 2)]),
]


@pytest.mark.parametrize(("before", "after", "expected"),
                         [case[1:] for case in DIFFS], ids=[case[0] for case in DIFFS])
def test_diff_makes_the_smallest_usual_patch_and_apply_rebuilds_it(
        before: Any, after: Any, expected: list[dict[str, Any]]) -> None:
    patch = diff(before, after)
    assert patch == expected
    kept = copy.deepcopy(before)
    read = json.loads(json.dumps(patch))  # as a client would read it
    rebuilt = apply(before, read)
    assert json.dumps(rebuilt) == json.dumps(after)
    assert json.dumps(jsonpatch.apply_patch(before, read)) == json.dumps(after)
    assert json.dumps(before) == json.dumps(kept)  # the value it started from is unchanged


def test_pointers_escape_and_read_back() -> None:
    for parts in ([], [""], ["a/b", "~1", "0", "-"], ["x~", "/"]):
        assert parts_of(pointer(parts)) == parts
    assert pointer(["a/b", "~1"]) == "/a~1b/~01"


def test_apply_adds_inserts_removes_and_replaces_anywhere() -> None:
    document: Any = {"a": [1, 3], "b": {"c": 1}}
    patch: list[Any] = [add("/a/1", 2), add("/a/3", 4), remove("/a/0"), replace("/b/c", 5),
                        add("/b/d", {"e": []}), add("/b/d/e/-", 1), remove("/b/c")]
    assert apply(document, patch) == {"a": [2, 3, 4], "b": {"d": {"e": [1]}}}
    assert apply(document, patch) == jsonpatch.apply_patch(document, patch)
    assert document == {"a": [1, 3], "b": {"c": 1}}


REFUSED: list[tuple[Any, Any, str]] = [
    ({}, [{"op": "move", "path": "/a", "from": "/b"}],
     "operation 1 of the patch (move /a): the operation must be add, remove or replace, "
     "not 'move'"),
    ({}, [add("/a", 1), "x"], "operation 2 of the patch ('x'): an operation is an object"),
    ({}, [{"op": "add", "path": "/a"}], "(add /a): add needs a value"),
    ({}, [{"op": "replace", "path": 3, "value": 1}], "the path must be a string, not 3"),
    ({}, [add("a", 1)], 'a JSON Pointer is "" or starts with "/", not \'a\''),
    ({}, [remove("")], "the whole document cannot be removed"),
    ({"a": 1}, [replace("/b", 2)], "the document has no key 'b' to replace"),
    ({"a": 1}, [remove("/b")], "the document has no key 'b' to remove"),
    ({"a": {}}, [add("/a/b/c", 2)], "/a has no key 'b'"),
    ({"a": [1]}, [replace("/a/1", 2)], "/a has 1 items, so no index 1"),
    ({"a": [1]}, [add("/a/2", 2)], "/a has 1 items, so no index 2"),
    ({"a": [1]}, [replace("/a/01", 2)], "/a is an array, and '01' is no index of one"),
    ({"a": [1]}, [replace("/a/-", 2)], "/a is an array, and '-' is no index of one"),
    ({"a": 1}, [add("/a/b", 2)], "/a is int, which has no 'b'"),
]


@pytest.mark.parametrize(("document", "patch", "why"), REFUSED)
def test_a_patch_that_does_not_apply_is_refused_naming_the_operation(
        document: Any, patch: Any, why: str) -> None:
    with pytest.raises(PatchError) as refused:
        apply(document, patch)
    assert why in str(refused.value)
    assert str(refused.value).startswith("operation ")
