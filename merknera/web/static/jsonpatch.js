/* JSON Patch (RFC 6902) as replays send it: window.MerkneraPatch.apply(state, patch) is
   the state with the patch's add, remove and replace operations done (what the server's
   merknera/web/jsonpatch.py makes; any other operation is refused).  The state given is
   not changed: what an operation changes is copied and the rest is shared, so one
   keyframe's state serves every frame rebuilt from it.  An operation that does not apply
   throws an Error that names it and says why. */
(function () {
  "use strict";

  var own = Object.prototype.hasOwnProperty;
  var INDEX = /^(0|[1-9][0-9]*)$/;

  function put(object, key, value) {
    // Not object[key] = value: for the key "__proto__" (an own key when JSON.parse reads
    // it) that would set the object's prototype instead.
    Object.defineProperty(object, key, { value: value, writable: true, enumerable: true, configurable: true });
  }

  function pointer(parts, depth) {
    var path = parts.slice(0, depth).map(function (p) { return "/" + p.replace(/~/g, "~0").replace(/\//g, "~1"); });
    return path.join("") || "the state";
  }

  /* A copy of node with the operation done at parts[depth:]. */
  function changed(node, parts, depth, op) {
    var part = parts[depth], last = depth === parts.length - 1, where = pointer(parts, depth);
    var copy;
    if (Array.isArray(node)) {
      copy = node.slice();
      if (last && op.op === "add" && part === "-") { copy.push(op.value); return copy; }
      if (!INDEX.test(part)) { throw new Error(where + " is an array, and " + JSON.stringify(part) + " is no index of one"); }
      var index = Number(part), end = last && op.op === "add";
      if (index > copy.length || (index === copy.length && !end)) {
        throw new Error(where + " has " + copy.length + " items, so no index " + index);
      }
      if (!last) { copy[index] = changed(copy[index], parts, depth + 1, op); }
      else if (op.op === "add") { copy.splice(index, 0, op.value); }
      else if (op.op === "remove") { copy.splice(index, 1); }
      else { copy[index] = op.value; }
      return copy;
    }
    if (node === null || typeof node !== "object") {
      throw new Error(where + " is " + (node === null ? "null" : typeof node) + ", which has no " + JSON.stringify(part));
    }
    if (!own.call(node, part) && !(last && op.op === "add")) {
      throw new Error(where + " has no key " + JSON.stringify(part) + (last ? " to " + op.op : ""));
    }
    copy = {};
    Object.keys(node).forEach(function (key) {
      if (!(last && op.op === "remove" && key === part)) { put(copy, key, node[key]); }
    });
    if (!last) { put(copy, part, changed(node[part], parts, depth + 1, op)); }
    else if (op.op !== "remove") { put(copy, part, op.value); }
    return copy;
  }

  function applyOp(state, op) {
    if (op === null || typeof op !== "object") { throw new Error("an operation is an object"); }
    if (op.op !== "add" && op.op !== "remove" && op.op !== "replace") {
      throw new Error("the operation must be add, remove or replace");
    }
    if (typeof op.path !== "string") { throw new Error("the path must be a string"); }
    if (op.op !== "remove" && !own.call(op, "value")) { throw new Error(op.op + " needs a value"); }
    if (op.path === "") {
      if (op.op === "remove") { throw new Error("the whole state cannot be removed"); }
      return op.value;
    }
    if (op.path.charAt(0) !== "/") { throw new Error('a JSON Pointer is "" or starts with "/"'); }
    var parts = op.path.slice(1).split("/").map(function (p) { return p.replace(/~1/g, "/").replace(/~0/g, "~"); });
    return changed(state, parts, 0, op);
  }

  function apply(state, patch) {
    if (!Array.isArray(patch)) { throw new Error("a patch is an array of operations"); }
    patch.forEach(function (op, n) {
      try {
        state = applyOp(state, op);
      } catch (error) {
        var what = op !== null && typeof op === "object" ? " (" + op.op + " " + op.path + ")" : "";
        throw new Error("operation " + (n + 1) + " of the patch" + what + ": " + error.message);
      }
    });
    return state;
  }

  window.MerkneraPatch = Object.freeze({ apply: apply });
}());
