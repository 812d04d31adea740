/* Merknera's board renderers for the replay page.

   window.MerkneraBoards[<GAME>](root, state, ctx) empties root and draws the game's
   position in it.  state is the game's spectator view; ctx is
   { players: [names by seat], setup: {...}, frame: null | {seq, seat, move, text, ...},
     reveal: bool }.

   Everything from state and ctx is untrusted text: the DOM is built with createElement /
   createElementNS, textContent and setAttribute only (never HTML strings), and nothing is
   styled inline (the page's CSP allows no inline styles): the look is in boards.css.
   The renderers keep no state, add no listeners and start no timers. */
(function () {
  "use strict";

  var SVGNS = "http://www.w3.org/2000/svg";
  var SEAT_COLOURS = 6;

  /* -- DOM helpers: text only --------------------------------------------------------- */

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null && text !== "") { e.textContent = String(text); }
    return e;
  }

  function svg(tag, attrs, cls) {
    var e = document.createElementNS(SVGNS, tag);
    if (attrs) {
      for (var key in attrs) {
        if (Object.prototype.hasOwnProperty.call(attrs, key) && attrs[key] !== undefined &&
            attrs[key] !== null) {
          e.setAttribute(key, String(attrs[key]));
        }
      }
    }
    if (cls) { e.setAttribute("class", cls); }
    return e;
  }

  function stext(x, y, text, cls) {
    var t = svg("text", { x: round(x), y: round(y) }, cls);
    t.textContent = String(text);
    return t;
  }

  function add(parent, child) { parent.appendChild(child); return child; }

  function data(e, name, value) { e.setAttribute("data-" + name, String(value)); return e; }

  function round(n) { return Math.round(n * 100) / 100; }

  /* -- value helpers ------------------------------------------------------------------- */

  function isObj(x) { return x !== null && typeof x === "object" && !Array.isArray(x); }
  function list(x) { return Array.isArray(x) ? x : []; }
  function isInt(x) { return Number.isInteger(x); }
  function isNum(x) { return typeof x === "number" && Number.isFinite(x); }
  function num(x, fallback) { return isNum(x) ? x : fallback; }
  function last(a) { return a.length ? a[a.length - 1] : undefined; }

  function seatClass(seat) {
    return isInt(seat) && seat >= 0 ? "seat-" + (seat % SEAT_COLOURS) : "seat-none";
  }

  function fmt(n) {
    if (!isNum(n)) { return "?"; }
    return String(n);
  }

  function signed(n) {
    if (!isNum(n)) { return "?"; }
    return (n > 0 ? "+" : n < 0 ? "\u2212" : "\u00b1") + String(Math.abs(n));
  }

  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }

  function diceText(n) { return n + (n === 1 ? " die" : " dice"); }

  /** The players' names in seat order, at least ``count`` of them. */
  function names(ctx, state, count) {
    var given = list(ctx.players);
    if (!given.length && isObj(state)) { given = list(state.players); }
    var out = [];
    var n = Math.max(count || 0, given.length);
    for (var i = 0; i < n; i++) {
      var name = given[i];
      out.push(name === undefined || name === null || name === "" ? "Seat " + (i + 1) : String(name));
    }
    return out;
  }

  /** The frame's move, if it is an object. */
  function moveOf(ctx) {
    return isObj(ctx.frame) && isObj(ctx.frame.move) ? ctx.frame.move : null;
  }

  function frameSeat(ctx) {
    return isObj(ctx.frame) && isInt(ctx.frame.seat) ? ctx.frame.seat : null;
  }

  /* -- shared pieces ------------------------------------------------------------------- */

  /** The legend: each player with their seat colour, a marker, their score, who is to
      move and who won.  o: { scores, turn, winners: [seats], marks: [text], notes: [text],
      cls } */
  function playerList(who, o) {
    o = o || {};
    var winners = list(o.winners);
    var ol = el("ol", "mb-players" + (o.cls ? " " + o.cls : ""));
    ol.setAttribute("aria-label", "Players");
    who.forEach(function (name, seat) {
      if (o.only && o.only.indexOf(seat) < 0) { return; }
      var li = add(ol, el("li", "mb-player " + seatClass(seat)));
      data(li, "seat", seat);
      var swatch = add(li, el("span", "mb-swatch", o.marks ? o.marks[seat] : ""));
      swatch.setAttribute("aria-hidden", "true");
      var label = add(li, el("span", "mb-who"));
      var nm = add(label, el("span", "mb-name", name));
      nm.setAttribute("title", name);
      if (o.notes && o.notes[seat]) { add(label, el("span", "mb-note", o.notes[seat])); }
      if (o.turn === seat) {
        li.classList.add("is-turn");
        add(li, el("span", "mb-tag mb-tag-turn", o.turnLabel || "to move"));
      }
      if (winners.indexOf(seat) >= 0) {
        li.classList.add("is-winner");
        add(li, el("span", "mb-tag mb-tag-win", "winner"));
      }
      if (o.scores && o.scores[seat] !== undefined && o.scores[seat] !== null) {
        var sc = add(li, el("span", "mb-score", fmt(o.scores[seat])));
        data(sc, "score", o.scores[seat]);
      }
    });
    return ol;
  }

  function status(text, cls) {
    return el("p", "mb-status" + (cls ? " " + cls : ""), text);
  }

  /** Seats with the highest score (all of them tie when equal). */
  function best(scores) {
    var top = -Infinity;
    scores.forEach(function (s) { if (isNum(s) && s > top) { top = s; } });
    var out = [];
    scores.forEach(function (s, seat) { if (s === top) { out.push(seat); } });
    return out;
  }

  /** A renderer that never throws: a short message replaces a board it cannot draw. */
  function guard(kind, draw) {
    return function (root, state, ctx) {
      if (!root || typeof root.replaceChildren !== "function") { return; }
      root.replaceChildren();
      var c = isObj(ctx) ? ctx : {};
      var top = el("div", "mb board-" + kind.toLowerCase());
      data(top, "game", kind);
      try {
        if (state === null || state === undefined) { throw new Error("no state"); }
        draw(top, state, c);
        root.appendChild(top);
      } catch (err) {
        var msg = el("p", "mb-error", "This position cannot be drawn.");
        data(msg, "game", kind);
        data(msg, "error", err && err.message ? String(err.message).slice(0, 200) : "error");
        root.replaceChildren(msg);
      }
    };
  }

  /* -- tic-tac-toe and noughts and crosses ----------------------------------------------- */

  var LINES = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8],
               [2, 4, 6]];
  var MARKS = ["X", "O"];

  function markOf(x) {
    var m = typeof x === "string" ? x.toUpperCase() : "";
    return m === "X" || m === "O" ? m : "";
  }

  function winningLine(cells) {
    for (var i = 0; i < LINES.length; i++) {
      var l = LINES[i];
      if (cells[l[0]] && cells[l[0]] === cells[l[1]] && cells[l[1]] === cells[l[2]]) { return l; }
    }
    return null;
  }

  /** The 3x3 grid: cells are ``.mb-cell[data-cell=0-8][data-mark]`` with the mark as text. */
  function grid(cells, lastCell, win) {
    var g = el("div", "mb-ttt");
    g.setAttribute("role", "img");
    var words = [];
    var winner = win ? MARKS.indexOf(cells[win[0]]) : -1;
    for (var i = 0; i < 9; i++) {
      var mark = cells[i];
      var cell = add(g, el("div", "mb-cell"));
      data(cell, "cell", i);
      data(cell, "row", Math.floor(i / 3));
      data(cell, "col", i % 3);
      data(cell, "mark", mark);
      if (mark) {
        add(cell, el("span", "mb-mark " + seatClass(MARKS.indexOf(mark)), mark));
        words.push(mark + " at row " + (Math.floor(i / 3) + 1) + " column " + (i % 3 + 1));
      }
      if (i === lastCell) { cell.classList.add("is-last"); }
      if (win && win.indexOf(i) >= 0) { cell.classList.add("is-win", seatClass(winner)); }
    }
    g.setAttribute("aria-label", "Board: " + (words.length ? words.join(", ") : "empty"));
    return g;
  }

  function cellsFrom(board) {
    var flat = [];
    list(board).forEach(function (row) {
      if (Array.isArray(row)) { row.forEach(function (c) { flat.push(c); }); } else { flat.push(row); }
    });
    var cells = [];
    for (var i = 0; i < 9; i++) { cells.push(markOf(flat[i])); }
    return cells;
  }

  function tictactoe(top, state, ctx) {
    var cells = cellsFrom(state);
    var who = names(ctx, null, 2);
    var mv = moveOf(ctx);
    var lastCell = mv && isInt(mv.position) ? mv.position : null;
    var win = winningLine(cells);
    var crosses = cells.filter(function (c) { return c === "X"; }).length;
    var noughts = cells.filter(function (c) { return c === "O"; }).length;
    var text, turn = null, winners = [];
    if (win) {
      var seat = MARKS.indexOf(cells[win[0]]);
      winners = [seat];
      text = who[seat] + " (" + cells[win[0]] + ") wins with three in a row.";
    } else if (crosses + noughts === 9) {
      text = "A draw: the board is full.";
    } else {
      turn = crosses > noughts ? 1 : 0;
      text = MARKS[turn] + " to move: " + who[turn] + ".";
    }
    buildTtt(top, cells, lastCell, who, text, turn, winners);
  }

  function buildTtt(top, cells, lastCell, who, text, turn, winners) {
    var wrap = add(top, el("div", "mb-split mb-split-ttt"));
    var main = add(wrap, el("div", "mb-main"));
    add(main, grid(cells, lastCell, winningLine(cells)));
    var side = add(wrap, el("div", "mb-side"));
    add(side, playerList(who, { marks: MARKS, turn: turn, winners: winners }));
    add(side, status(text));
  }

  function noughtsandcrosses(top, state, ctx) {
    if (!isObj(state)) { throw new Error("not a state object"); }
    var cells = cellsFrom(state.board);
    var who = names(ctx, state, 2);
    var marks = isObj(state.marks) ? state.marks : {};
    if (typeof marks.X === "string") { who[0] = marks.X; }
    if (typeof marks.O === "string") { who[1] = marks.O; }
    var mv = moveOf(ctx);
    var lastCell = null;
    if (mv && Array.isArray(mv.space) && isInt(mv.space[0]) && isInt(mv.space[1]) &&
        mv.space[0] >= 0 && mv.space[0] < 3 && mv.space[1] >= 0 && mv.space[1] < 3) {
      lastCell = mv.space[0] * 3 + mv.space[1];
    }
    var text, turn = null, winners = [];
    if (state.complete) {
      var victor = state.victor;
      var seat = victor === null || victor === undefined ? -1 : who.indexOf(String(victor));
      if (seat >= 0) {
        winners = [seat];
        text = who[seat] + " (" + MARKS[seat] + ") wins";
      } else if (victor === null || victor === undefined) {
        text = "A draw";
      } else {
        text = String(victor) + " wins";
      }
      text += state.reason && state.reason !== "complete" ? " (" + String(state.reason) + ")." : ".";
    } else {
      var next = state.nextPlayer;
      turn = next === undefined ? null : who.indexOf(String(next));
      if (turn < 0) { turn = null; }
      text = turn === null ? "In play." : MARKS[turn] + " to move: " + who[turn] + ".";
    }
    buildTtt(top, cells, lastCell, who, text, turn, winners);
  }

  /* -- Numberwang ----------------------------------------------------------------------- */

  function numberwang(top, state, ctx) {
    if (!isObj(state)) { throw new Error("not a state object"); }
    var who = names(ctx, state, 2);
    var n = isObj(state.board) ? state.board.n : undefined;
    var mv = moveOf(ctx);
    var mover = frameSeat(ctx);
    var delta = mv && isNum(mv.n) ? mv.n : null;
    var wins = 10;

    var wrap = add(top, el("div", "mb-nw"));
    var head = add(wrap, el("div", "mb-nw-head"));
    add(head, el("div", "mb-nw-label", "n ="));
    var total = add(head, el("div", "mb-nw-total " +
      (isNum(n) && n > 0 ? seatClass(0) : isNum(n) && n < 0 ? seatClass(1) : "seat-none"), fmt(n)));
    data(total, "n", isNum(n) ? n : "");
    total.setAttribute("aria-label", "n is " + (isNum(n) ? String(n) : "unknown"));
    if (delta !== null && mover !== null) {
      var change = add(head, el("div", "mb-nw-change"));
      add(change, el("span", "mb-nw-delta " + seatClass(mover), signed(delta)));
      add(change, el("span", "mb-nw-by", " by " + (who[mover] || "?")));
    }

    /* the gauge from -10 to 10, with the winning zones beyond */
    var W = 400, x0 = 40, x1 = 360;
    var X = function (v) {
      var c = Math.max(-11.6, Math.min(11.6, v));
      return x0 + (c + wins) / (2 * wins) * (x1 - x0);
    };
    var g = add(wrap, svg("svg", { viewBox: "0 0 " + W + " 74", role: "img" }, "mb-nw-gauge"));
    g.setAttribute("aria-label", "Gauge from \u221210 to 10");
    add(g, svg("rect", { x: 4, y: 32, width: x0 - 4, height: 12, rx: 6 }, "mb-nw-zone " + seatClass(1)));
    add(g, svg("rect", { x: x1, y: 32, width: W - 4 - x1, height: 12, rx: 6 }, "mb-nw-zone " + seatClass(0)));
    add(g, svg("rect", { x: x0, y: 34, width: x1 - x0, height: 8, rx: 4 }, "mb-nw-track"));
    var ticks = "";
    for (var v = -wins; v <= wins; v++) {
      var tx = round(X(v));
      ticks += "M" + tx + " " + (v % 5 === 0 ? 28 : 31) + "V" + (v % 5 === 0 ? 48 : 45);
    }
    add(g, svg("path", { d: ticks }, "mb-nw-ticks"));
    [-10, -5, 0, 5, 10].forEach(function (t) {
      add(g, stext(X(t), 64, String(t).replace("-", "\u2212"), "mb-nw-tick"));
    });
    if (isNum(n)) {
      if (delta !== null && mover !== null && isNum(n - delta) && delta !== 0) {
        var from = X(n - delta), to = X(n);
        if (Math.abs(to - from) > 2) {
          var dir = to > from ? 1 : -1;
          var arrow = "M" + round(from) + " 16H" + round(to - dir * 6) +
                      "M" + round(to - dir * 7) + " 11L" + round(to) + " 16L" + round(to - dir * 7) + " 21";
          add(g, svg("path", { d: arrow }, "mb-nw-arrow " + seatClass(mover)));
        }
      }
      add(g, svg("circle", { cx: round(X(n)), cy: 38, r: 9 },
        "mb-nw-marker " + (n > 0 ? seatClass(0) : n < 0 ? seatClass(1) : "seat-none")));
    }

    var winners = [];
    var turn = null;
    var text;
    if (state.complete) {
      var seat = state.victor === null || state.victor === undefined ? -1 : who.indexOf(String(state.victor));
      if (seat >= 0) {
        winners = [seat];
        text = who[seat] + " wins: n reached " + fmt(n) + ".";
      } else {
        text = "A draw: n never reached 10 or \u221210" +
          (isInt(state.turns) ? " in " + plural(state.turns, "turn") : "") + ".";
      }
    } else {
      turn = who.indexOf(String(state.nextPlayer));
      if (turn < 0) { turn = isInt(state.turns) ? state.turns % 2 : null; }
      text = turn === null ? "In play." : who[turn] + " to move.";
    }
    add(wrap, playerList(who, {
      turn: turn, winners: winners,
      notes: ["wins at 10 or more", "wins at \u221210 or less"]
    }));
    var foot = status(text);
    if (isInt(state.turns)) {
      add(foot, el("span", "mb-muted", " " + state.turns +
        (isInt(state.maxTurns) ? " of " + state.maxTurns : "") + " turns played."));
    }
    add(wrap, foot);
  }

  /* -- Kalaha --------------------------------------------------------------------------- */

  function kalaha(top, state, ctx) {
    if (!isObj(state)) { throw new Error("not a state object"); }
    var who = names(ctx, null, 2);
    var rows = [state.rowOne, state.rowTwo].map(function (row) {
      var pits = isObj(row) ? list(row.pits) : [];
      var out = [];
      for (var i = 0; i < 6; i++) {
        var p = pits[i];
        out.push(isNum(p) ? p : isObj(p) && isNum(p.stones) ? p.stones : null);
      }
      return { pits: out, store: isObj(row) && isNum(row.kalahaStones) ? row.kalahaStones : null };
    });
    var next = state.nextPlayer === "ONE" ? 0 : state.nextPlayer === "TWO" ? 1 : null;

    /* what the last move touched: the pit sown, and (when the frame says how many stones)
       the pits and store that received them, counter-clockwise from the mover's side */
    var mover = frameSeat(ctx);
    var mv = moveOf(ctx);
    var source = mv && isInt(mv.pitIndex) && mv.pitIndex >= 0 && mv.pitIndex < 6 &&
                 (mover === 0 || mover === 1) ? mv.pitIndex : null;
    var sown = {};
    var finalKey = null;
    if (source !== null && isObj(ctx.frame) && typeof ctx.frame.text === "string") {
      var m = /\((\d+) stones?\)/.exec(ctx.frame.text);
      var stones = m ? Math.min(parseInt(m[1], 10), 200) : 0;
      var pos = source;
      for (var k = 0; k < stones; k++) {
        pos = (pos + 1) % 13;
        var key = pos < 6 ? mover + ":" + pos : pos === 6 ? "store:" + mover : (1 - mover) + ":" + (pos - 7);
        sown[key] = true;
        finalKey = key;
      }
    }

    var over = rows.every(function (r) { return r.pits.every(function (p) { return p === 0; }); });
    var winners = [];
    var text = null;
    if (over && isNum(rows[0].store) && isNum(rows[1].store)) {
      if (rows[0].store === rows[1].store) {
        text = "A draw, " + rows[0].store + " stones each.";
      } else {
        var w = rows[0].store > rows[1].store ? 0 : 1;
        winners = [w];
        text = who[w] + " wins, " + Math.max(rows[0].store, rows[1].store) + " to " +
          Math.min(rows[0].store, rows[1].store) + ".";
      }
    }
    /* each player's card beside their own row: TWO above the board, ONE below it */
    var legend = {
      scores: [rows[0].store, rows[1].store], turn: over ? null : next, winners: winners,
      marks: ["1", "2"], notes: ["ONE \u00b7 bottom row, store on the right",
                                 "TWO \u00b7 top row, store on the left"]
    };

    var W = 820, H = 320;
    var box = add(top, el("div", "mb-kal"));
    add(box, playerList(who, Object.assign({ only: [1], cls: "mb-kal-two" }, legend)));
    var g = add(box, svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img" }, "mb-kal-board"));
    g.setAttribute("aria-label", "Kalaha board: " + who[0] + "'s store " + fmt(rows[0].store) +
      ", " + who[1] + "'s store " + fmt(rows[1].store));
    add(g, svg("rect", { x: 2, y: 2, width: W - 4, height: H - 4, rx: 48 }, "mb-kal-wood"));

    function store(seat, x) {
      var s = add(g, svg("g", null, "mb-kal-store " + seatClass(seat)));
      data(s, "store", seat === 0 ? "one" : "two");
      data(s, "stones", rows[seat].store === null ? "" : rows[seat].store);
      add(s, svg("rect", { x: x, y: 40, width: 92, height: 240, rx: 46 }, "mb-kal-hole"));
      add(s, stext(x + 46, 174, fmt(rows[seat].store), "mb-kal-count mb-kal-count-store"));
      if (sown["store:" + seat]) { s.classList.add("is-sown"); }
      if (finalKey === "store:" + seat) { s.classList.add("is-final"); }
    }
    store(1, 24);      /* TWO's store on the left */
    store(0, W - 116); /* ONE's store on the right */

    var left = 180, step = 92;
    for (var seat = 0; seat < 2; seat++) {
      for (var i = 0; i < 6; i++) {
        /* ONE's pits 0-5 run left to right along the bottom, TWO's right to left on top */
        var col = seat === 0 ? i : 5 - i;
        var cx = left + col * step;
        var cy = seat === 0 ? 226 : 94;
        var count = rows[seat].pits[i];
        var p = add(g, svg("g", null, "mb-kal-pit " + seatClass(seat)));
        data(p, "row", seat === 0 ? "one" : "two");
        data(p, "pit", i);
        data(p, "stones", count === null ? "" : count);
        add(p, svg("circle", { cx: cx, cy: cy, r: 38 }, "mb-kal-hole"));
        add(p, stext(cx, cy + 11, fmt(count), "mb-kal-count"));
        add(g, stext(cx, seat === 0 ? 300 : 30, i, "mb-kal-index"));
        if (sown[seat + ":" + i]) { p.classList.add("is-sown"); }
        if (finalKey === seat + ":" + i) { p.classList.add("is-final"); }
        if (source !== null && mover === seat && source === i) { p.classList.add("is-last"); }
        if (count === 0) { p.classList.add("is-empty"); }
      }
    }
    add(box, playerList(who, Object.assign({ only: [0], cls: "mb-kal-one" }, legend)));
    if (text) { add(box, status(text)); }
    add(box, el("p", "mb-caption",
      "Stones are sown counter-clockwise: ONE\u2019s pits left to right, then TWO\u2019s right to left."));
  }

  /* -- Hexagons ------------------------------------------------------------------------- */

  function hexagons(top, state, ctx) {
    if (!isObj(state)) { throw new Error("not a state object"); }
    var rows = state.rows, cols = state.cols;
    if (!isInt(rows) || !isInt(cols) || rows < 1 || cols < 2 || rows > 60 || cols > 60) {
      throw new Error("no board size");
    }
    var who = names(ctx, state, 2);
    var width = function (r) { return r % 2 === 0 ? cols - 1 : cols; };
    var on = function (r, c) { return r >= 0 && r < rows && c >= 0 && c < width(r); };
    /* neighbours clockwise from the left; even rows sit half a step to the right */
    var around = function (r, c) {
      var shift = (r + 1) % 2;
      return [[r, c - 1], [r - 1, c + shift - 1], [r - 1, c + shift], [r, c + 1],
              [r + 1, c + shift], [r + 1, c + shift - 1]];
    };
    var S = 40, HS = S * Math.sqrt(3) / 2, pad = 18;
    var px = function (r, c) { return round(pad + (c + (r % 2 === 0 ? 0.5 : 0)) * S); };
    var py = function (r) { return round(pad + r * HS); };
    var W = pad * 2 + (cols - 1) * S, H = pad * 2 + (rows - 1) * HS;

    /* the natural size keeps a small board from being blown up; CSS caps it to the width */
    var g = svg("svg", { viewBox: "0 0 " + round(W) + " " + round(H), role: "img",
      width: Math.round(W * 1.45), height: Math.round(H * 1.45) }, "mb-hx-board");
    g.setAttribute("aria-label", "Hexagons board, " + rows + " rows by " + cols + " columns");

    /* every line that could be drawn, faintly: the rings of the hexagons */
    var grid = "";
    var r, c, i;
    for (r = 0; r < rows; r++) {
      for (c = 0; c < width(r); c++) {
        var nb = around(r, c);
        for (i = 3; i < 6; i++) {   /* right and the two below: each line once */
          if (on(nb[i][0], nb[i][1])) {
            grid += "M" + px(r, c) + " " + py(r) + "L" + px(nb[i][0], nb[i][1]) + " " + py(nb[i][0]);
          }
        }
      }
    }
    add(g, svg("path", { d: grid }, "mb-hx-grid"));

    /* claimed hexagons, in the owner's colour; those the last move claimed stand out */
    var mv = moveOf(ctx);
    var lastLine = null;
    if (mv && Array.isArray(mv.line) && mv.line.length === 2 && isObj(mv.line[0]) && isObj(mv.line[1])) {
      var a = mv.line[0], b = mv.line[1];
      if (isInt(a.row) && isInt(a.col) && isInt(b.row) && isInt(b.col)) {
        lastLine = [a.row, a.col, b.row, b.col];
      }
    }
    var hexes = list(state.hexagons).filter(function (h) {
      return Array.isArray(h) && isInt(h[0]) && isInt(h[1]) && on(h[0], h[1]);
    });
    var ringHas = function (h, line) {
      var nb = around(h[0], h[1]);
      for (var k = 0; k < 6; k++) {
        var p = nb[k], q = nb[(k + 1) % 6];
        if ((p[0] === line[0] && p[1] === line[1] && q[0] === line[2] && q[1] === line[3]) ||
            (q[0] === line[0] && q[1] === line[1] && p[0] === line[2] && p[1] === line[3])) {
          return true;
        }
      }
      return false;
    };
    var fresh = {};
    if (lastLine) {
      for (i = hexes.length - 1; i >= 0 && ringHas(hexes[i], lastLine); i--) { fresh[i] = true; }
    }
    var layer = add(g, svg("g", null, "mb-hx-hexes"));
    hexes.forEach(function (h, idx) {
      var pts = around(h[0], h[1]).map(function (p) { return px(p[0], p[1]) + "," + py(p[0]); });
      var poly = add(layer, svg("polygon", { points: pts.join(" ") },
        "mb-hx-hex " + seatClass(h[2]) + (fresh[idx] ? " is-new" : "")));
      data(poly, "hex", h[0] + "," + h[1]);
      data(poly, "seat", isInt(h[2]) ? h[2] : "");
    });

    /* the lines drawn, in their seat's colour: one path per seat (a big board has over a
       thousand lines; separate elements would cost more than the rest of the redraw),
       and the last line on its own, on top, over a halo */
    var paths = {}, counts = {};
    var lastSeat = null, lastFound = false, drawnCount = 0;
    list(state.lines).forEach(function (l) {
      if (!Array.isArray(l) || !isInt(l[0]) || !isInt(l[1]) || !isInt(l[2]) || !isInt(l[3])) { return; }
      drawnCount += 1;
      if (lastLine && ((l[0] === lastLine[0] && l[1] === lastLine[1] && l[2] === lastLine[2] && l[3] === lastLine[3]) ||
                       (l[0] === lastLine[2] && l[1] === lastLine[3] && l[2] === lastLine[0] && l[3] === lastLine[1]))) {
        lastFound = true;
        lastSeat = l[4];
        return;
      }
      var key = seatClass(l[4]);
      paths[key] = (paths[key] || "") + "M" + px(l[0], l[1]) + " " + py(l[0]) + "L" + px(l[2], l[3]) + " " + py(l[2]);
      counts[key] = (counts[key] || 0) + 1;
    });
    Object.keys(paths).forEach(function (key) {
      var path = add(g, svg("path", { d: paths[key] }, "mb-hx-lines " + key));
      data(path, "count", counts[key]);
    });
    if (lastFound) {
      var lastGroup = add(g, svg("g", null, "mb-hx-lines mb-hx-last " + seatClass(lastSeat)));
      var ends = { x1: px(lastLine[0], lastLine[1]), y1: py(lastLine[0]),
                   x2: px(lastLine[2], lastLine[3]), y2: py(lastLine[2]) };
      add(lastGroup, svg("line", ends, "mb-hx-halo"));
      var lastEl = add(lastGroup, svg("line", ends, "is-last"));
      data(lastEl, "line", lastLine[0] + "," + lastLine[1] + "-" + lastLine[2] + "," + lastLine[3]);
      data(lastEl, "seat", isInt(lastSeat) ? lastSeat : "");
    }
    data(top, "lines", drawnCount);
    data(top, "hexagons", hexes.length);

    /* the points, one path of dots; claimed centres carry their owner's dot */
    var dots = "";
    var claimed = {};
    hexes.forEach(function (h) { claimed[h[0] + "," + h[1]] = h[2]; });
    for (r = 0; r < rows; r++) {
      for (c = 0; c < width(r); c++) {
        if (claimed[r + "," + c] !== undefined) { continue; }
        var x = px(r, c), y = py(r);
        dots += "M" + round(x - 3.2) + " " + y + "a3.2 3.2 0 1 0 6.4 0a3.2 3.2 0 1 0 -6.4 0";
      }
    }
    add(g, svg("path", { d: dots }, "mb-hx-points"));
    hexes.forEach(function (h, idx) {
      add(g, svg("circle", { cx: px(h[0], h[1]), cy: py(h[0]), r: fresh[idx] ? 8 : 6.5 },
        "mb-hx-centre " + seatClass(h[2])));
    });

    var scores = list(state.scores).length ? list(state.scores) : [0, 1].map(function (s) {
      return hexes.filter(function (h) { return h[2] === s; }).length;
    });
    var turn = isInt(state.turn) ? state.turn : null;
    var over = state.turn === null;
    var winners = [];
    var text;
    if (over) {
      var top2 = best(scores);
      if (top2.length === 1) {
        winners = top2;
        text = who[top2[0]] + " wins, " + scores[top2[0]] + " to " + scores[1 - top2[0]] +
          ": no hexagon can be claimed any more.";
      } else {
        text = "A draw, " + plural(scores[0], "hexagon") + " each.";
      }
    } else {
      text = turn === null ? "In play." : who[turn] + " to move.";
    }
    var wrap = add(top, el("div", "mb-split mb-split-wide"));
    add(add(wrap, el("div", "mb-main")), g);
    var side = add(wrap, el("div", "mb-side"));
    add(side, playerList(who, { scores: scores, turn: turn, winners: winners }));
    var st = add(side, status(text));
    add(st, el("span", "mb-muted", " " + plural(list(state.lines).length, "line") + " drawn, " +
      rows + "\u00d7" + cols + " board."));
  }

  /* -- Scrabble ------------------------------------------------------------------------- */

  var COLUMN_NAMES = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  var PREMIUM = { DL: "sq-dl", TL: "sq-tl", DW: "sq-dw", TW: "sq-tw" };

  function scrabble(top, state, ctx) {
    if (!isObj(state)) { throw new Error("not a state object"); }
    var setup = isObj(ctx.setup) ? ctx.setup : {};
    var squares = list(setup.squares);
    var points = isObj(setup.points) ? setup.points : {};
    var board = list(state.board).map(function (row) { return typeof row === "string" ? row : ""; });
    var rows = Math.min(99, Math.max(board.length, squares.length) || 15);
    var cols = 0;
    board.forEach(function (row) { cols = Math.max(cols, row.length); });
    squares.forEach(function (row) { cols = Math.max(cols, list(row).length); });
    cols = Math.min(26, cols || 15);
    var start = Array.isArray(setup.start) && isInt(setup.start[0]) && isInt(setup.start[1])
      ? setup.start : [Math.floor(rows / 2), Math.floor(cols / 2)];
    var seats = Math.max(list(state.scores).length, list(state.players).length, list(ctx.players).length, 2);
    var who = names(ctx, state, seats);

    var mover = frameSeat(ctx);
    var mv = moveOf(ctx);
    var placed = {};
    if (mv && String(mv.type).toUpperCase() === "PLAY") {
      list(mv.playtiles).forEach(function (t) {
        if (isObj(t) && isInt(t.row) && isInt(t.col)) { placed[t.row + "," + t.col] = true; }
      });
    }

    var S = 40, M = 22;   /* square size, margin for the coordinates */
    var W = M + cols * S + 2, H = M + rows * S + 2;
    var g = svg("svg", { viewBox: "0 0 " + W + " " + H, role: "img" }, "mb-sc-board");
    g.setAttribute("aria-label", "Scrabble board");
    add(g, svg("rect", { x: M, y: M, width: cols * S, height: rows * S, rx: 4 }, "mb-sc-bed"));
    /* Plain squares are the bed between grid lines; premium squares and tiles are rects
       carrying the data- attributes.  The texts are tspans of a few <text> elements: a
       separate <text> per square costs more to lay out than the rest of the board. */
    var r, c, d = "";
    for (c = 1; c < cols; c++) { d += "M" + (M + c * S) + " " + M + "v" + rows * S; }
    for (r = 1; r < rows; r++) { d += "M" + M + " " + (M + r * S) + "h" + cols * S; }
    add(g, svg("path", { d: d }, "mb-sc-grid"));
    var texts = { coord: svg("text", null, "mb-sc-coord"), premium: svg("text", null, "mb-sc-premium"),
                  letter: svg("text", null, "mb-sc-letter"), points: svg("text", null, "mb-sc-points") };
    var span = function (kind, x, y, text, cls) {
      var t = svg("tspan", { x: round(x), y: round(y) }, cls);
      t.textContent = String(text);
      texts[kind].appendChild(t);
      return t;
    };
    for (c = 0; c < cols; c++) { span("coord", M + c * S + S / 2, 15, COLUMN_NAMES[c]); }
    for (r = 0; r < rows; r++) { span("coord", M / 2 - 1, M + r * S + S / 2 + 4, r + 1); }
    for (r = 0; r < rows; r++) {
      var line = board[r] || "";
      var kinds = list(squares[r]);
      for (c = 0; c < cols; c++) {
        var x = M + c * S, y = M + r * S;
        var ch = line.charAt(c);
        var kind = typeof kinds[c] === "string" && Object.prototype.hasOwnProperty.call(PREMIUM, kinds[c])
          ? kinds[c] : "";
        var isStart = r === start[0] && c === start[1];
        var sq;
        if (/^[A-Za-z]$/.test(ch)) {
          var blank = ch !== ch.toUpperCase();
          var letter = ch.toUpperCase();
          var fresh = placed[r + "," + c];
          sq = add(g, svg("rect", { x: x + 1.5, y: y + 1.5, width: S - 3, height: S - 3, rx: 5 },
            "mb-sc-sq mb-tile" + (blank ? " is-blank" : "") + (fresh ? " is-new " + seatClass(mover) : "")));
          data(sq, "tile", letter);
          if (blank) { data(sq, "blank", "1"); }
          span("letter", x + S / 2 - (blank ? 0 : 2), y + 28, letter, blank ? "is-blank" : null);
          if (!blank && isNum(points[letter])) { span("points", x + S - 5, y + S - 5, points[letter]); }
        } else if (kind || isStart) {
          sq = add(g, svg("rect", { x: x + 1, y: y + 1, width: S - 2, height: S - 2, rx: 3 },
            "mb-sc-sq " + (PREMIUM[kind] || "sq-plain") + (isStart ? " sq-start" : "")));
          if (kind) { data(sq, "premium", kind); }
          if (isStart) { data(sq, "start", "1"); }
          span("premium", x + S / 2, y + (isStart ? 27 : 24.5), isStart ? "\u2605" : kind,
               (PREMIUM[kind] || "sq-plain") + (isStart ? " sq-start" : ""));
        } else {
          continue;
        }
        data(sq, "square", COLUMN_NAMES[c] + (r + 1));
        data(sq, "row", r);
        data(sq, "col", c);
      }
    }
    g.appendChild(texts.coord);
    g.appendChild(texts.premium);
    g.appendChild(texts.letter);
    g.appendChild(texts.points);

    /* the side panel: scores, racks, the bag, the ending */
    var scores = list(state.scores);
    var racks = Array.isArray(state.racks) ? state.racks : null;
    var sizes = list(state.racksizes);
    var ended = typeof state.ending === "string" && state.ending !== "";
    var turn = !ended && isInt(state.turn) ? state.turn % who.length : null;
    var winners = ended ? best(scores) : [];
    if (winners.length === who.length) { winners = []; }

    var wrap = add(top, el("div", "mb-split mb-split-wide"));
    add(add(wrap, el("div", "mb-main")), g);
    var side = add(wrap, el("div", "mb-side"));
    var ol = add(side, playerList(who, { scores: scores, turn: turn, winners: winners, cls: "mb-sc-players" }));
    var items = ol.children;
    for (var s = 0; s < items.length; s++) {
      var rackBox = add(items[s], el("div", "mb-rack"));
      var rack = racks && typeof racks[s] === "string" ? racks[s] : null;
      if (rack !== null) {
        data(rackBox, "rack", rack);
        if (!rack.length) { add(rackBox, el("span", "mb-muted", "no tiles")); }
        for (var k = 0; k < rack.length && k < 20; k++) {
          var t = rack.charAt(k).toUpperCase();
          var chip = add(rackBox, el("span", "mb-chip" + (t === "*" ? " is-blank" : ""), t === "*" ? "" : t));
          chip.setAttribute("title", t === "*" ? "blank" : t + " (" + (isNum(points[t]) ? points[t] : "?") + ")");
          if (t !== "*" && isNum(points[t])) { add(chip, el("sub", null, String(points[t]))); }
        }
      } else if (isInt(sizes[s])) {
        add(rackBox, el("span", "mb-muted", plural(sizes[s], "tile")));
      }
      if (ended && isNum(list(state.adjustments)[s])) {
        add(rackBox, el("span", "mb-adjust", signed(state.adjustments[s]) + " at the end"));
      }
    }
    var facts = add(side, el("p", "mb-status"));
    if (isInt(state.bagcount)) {
      var bag = add(facts, el("span", "mb-bag", state.bagcount === 0 ? "The bag is empty" :
        plural(state.bagcount, "tile") + " in the bag"));
      data(bag, "bag", state.bagcount);
    }
    if (ended) {
      var out = isInt(state.turn) ? (state.turn - 1 + who.length) % who.length : null;
      var how = state.ending === "OUT"
        ? (out === null ? "A player" : who[out]) + " went out with the bag empty."
        : state.ending === "SCORELESS" ? "Six scoreless turns in a row ended the game."
        : "The game is over (" + String(state.ending) + ").";
      var end = add(side, status(how, "mb-ending"));
      data(end, "ending", state.ending);
    } else if (isInt(state.scoreless) && state.scoreless > 0) {
      add(facts, el("span", "mb-muted", " \u00b7 " + plural(state.scoreless, "scoreless turn") + " in a row"));
    }
    var legend = add(side, el("div", "mb-sc-legend"));
    [["TW", "triple word"], ["DW", "double word"], ["TL", "triple letter"], ["DL", "double letter"]]
      .forEach(function (p) {
        var item = add(legend, el("span", "mb-sc-key"));
        add(item, el("span", "mb-sc-keybox " + PREMIUM[p[0]], p[0]));
        add(item, document.createTextNode(p[1]));
      });
  }

  /* -- Squelch -------------------------------------------------------------------------- */

  var PIPS = {
    1: [[20, 20]], 2: [[11, 11], [29, 29]], 3: [[11, 11], [20, 20], [29, 29]],
    4: [[11, 11], [29, 11], [11, 29], [29, 29]],
    5: [[11, 11], [29, 11], [20, 20], [11, 29], [29, 29]],
    6: [[11, 11], [29, 11], [11, 20], [29, 20], [11, 29], [29, 29]]
  };

  /** Which dice of ``roll`` the ``take`` used (each taken value marks one die). */
  function takenMask(roll, take) {
    var mask = [];
    var want = {};
    String(take || "").split("").forEach(function (d) { want[d] = (want[d] || 0) + 1; });
    roll.split("").forEach(function (d) {
      if (want[d]) { want[d] -= 1; mask.push(true); } else { mask.push(false); }
    });
    return mask;
  }

  function dice(roll, take, seat, cls) {
    var faces = String(roll || "").replace(/[^1-6]/g, "").slice(0, 12).split("");
    var mask = takenMask(faces.join(""), take);
    var w = Math.max(1, faces.length) * 48 - 8;
    var g = svg("svg", { viewBox: "0 0 " + w + " 40", width: w, height: 40, role: "img" },
      "mb-dice " + seatClass(seat) + (cls ? " " + cls : ""));
    g.setAttribute("aria-label", "Dice " + faces.join(" ") + (take ? ", taken " + take : ""));
    faces.forEach(function (f, i) {
      var d = add(g, svg("g", { transform: "translate(" + i * 48 + " 0)" },
        "mb-die" + (mask[i] ? " is-taken" : "")));
      data(d, "die", f);
      add(d, svg("rect", { x: 1, y: 1, width: 38, height: 38, rx: 8 }));
      var path = "";
      PIPS[f].forEach(function (p) {
        path += "M" + (p[0] - 3.6) + " " + p[1] + "a3.6 3.6 0 1 0 7.2 0a3.6 3.6 0 1 0 -7.2 0";
      });
      add(d, svg("path", { d: path }, "mb-pips"));
    });
    return g;
  }

  /** A roll as compact text: its dice, the ones taken stressed. */
  function rollText(record, seat) {
    var span = el("span", "mb-roll");
    var roll = isObj(record) && typeof record.roll === "string" ? record.roll.slice(0, 12) : "";
    var take = isObj(record) && typeof record.take === "string" ? record.take : "";
    var mask = takenMask(roll, take);
    roll.split("").forEach(function (d, i) {
      add(span, el("span", mask[i] ? "mb-d is-taken " + seatClass(seat) : "mb-d", d));
    });
    if (take) {
      add(span, el("span", "mb-roll-pts", "+" + (isNum(record.points) ? record.points : "?")));
    } else {
      add(span, el("span", "mb-roll-pts mb-bust", "squelch"));
    }
    return span;
  }

  function squelch(top, state, ctx) {
    if (!isObj(state)) { throw new Error("not a state object"); }
    var settings = isObj(state.settings) ? state.settings : {};
    var scores = list(state.scores);
    var seats = Math.max(scores.length, list(state.players).length, list(ctx.players).length, 2);
    var who = names(ctx, state, seats);
    var wins = list(state.wins);
    var maxPoints = num(settings.maxPoints, 5000);
    var turn = isObj(state.turn) ? state.turn : null;
    var over = state.turn === null;
    var lastTurns = list(state.lastTurns);
    var finalRound = isObj(state.finalRound) ? state.finalRound : null;

    /* the header: game n of m, the target, the final round */
    var head = add(top, el("div", "mb-sq-head"));
    var game = add(head, el("span", "mb-sq-game",
      "Game " + fmt(state.game) + (isInt(settings.gameCount) ? " of " + settings.gameCount : "")));
    data(game, "game", isInt(state.game) ? state.game : "");
    add(head, el("span", "mb-muted", "to " + fmt(maxPoints) + " points"));
    if (finalRound) {
      var trig = isInt(finalRound.trigger) ? who[finalRound.trigger] : null;
      add(head, el("span", "mb-badge", "Final round" + (trig ? ": " + trig + " reached " + fmt(maxPoints) : "")));
    }

    /* the current turn: whose, the points at stake, the dice */
    var mv = moveOf(ctx);
    var fseat = isObj(ctx.frame) && isInt(ctx.frame.seat) ? ctx.frame.seat : null;
    var panel = add(top, el("div", "mb-sq-turn"));
    var shown = null;  /* {seat, roll, take, note, cls} */
    if (turn && typeof turn.roll === "string" && turn.roll) {
      var opts = list(turn.options);
      shown = { seat: turn.seat, roll: turn.roll, take: "", cls: fseat === -1 ? "is-fresh" : "",
        note: "rolled " + diceText(turn.roll.length) + "; " + plural(opts.length, "option") + " to choose from" };
    } else if (mv && typeof mv.take === "string" && fseat !== null && fseat >= 0) {
      var rec = null, banked = null;
      if (turn && turn.seat === fseat && list(turn.rolls).length) {
        rec = last(list(turn.rolls));
      } else if (isObj(lastTurns[fseat]) && list(lastTurns[fseat].rolls).length) {
        rec = last(list(lastTurns[fseat].rolls));
        banked = lastTurns[fseat];
      }
      if (isObj(rec)) {
        var took = "took " + String(rec.take) + " for " + fmt(rec.points);
        shown = { seat: fseat, roll: rec.roll, take: rec.take, cls: "is-taken-roll",
          note: banked ? took + " and stayed: banked " + fmt(num(banked.endPoints, 0) - num(banked.startPoints, 0))
                       : took + (turn && isInt(turn.dice) ? ", rolls " + diceText(turn.dice) + " next" : "") };
      }
    } else if (mv && typeof mv.roll === "string" && fseat === -1) {
      /* a roll that scored nothing: the turn is over, its record is in lastTurns */
      var found = -1, foundId = -1;
      lastTurns.forEach(function (t, seat) {
        if (isObj(t) && isObj(last(list(t.rolls))) && last(list(t.rolls)).roll === mv.roll &&
            !last(list(t.rolls)).take && num(t.turnid, 0) > foundId) {
          found = seat; foundId = num(t.turnid, 0);
        }
      });
      var lost = 0;
      if (found >= 0) {
        list(lastTurns[found].rolls).forEach(function (x) { lost += isObj(x) ? num(x.points, 0) : 0; });
      }
      shown = { seat: found >= 0 ? found : null, roll: mv.roll, take: "", cls: "is-squelch",
        note: "Squelch! Nothing scores" + (lost ? ": " + fmt(lost) + " points lost" : "") };
    }

    var turnSeat = turn && isInt(turn.seat) ? turn.seat : null;
    var whoLine = add(panel, el("div", "mb-sq-who"));
    if (over) {
      panel.classList.add("is-over");
      var top3 = best(who.map(function (_, seat) { return num(wins[seat], 0); }));
      var games = isInt(settings.gameCount) ? settings.gameCount : null;
      var won = num(wins[top3[0]], 0);
      add(whoLine, el("strong", null, "The match is over: " + (top3.length === 1
        ? who[top3[0]] + " won " + won + (games ? " of " + games : "") + (games === 1 ? " game." : " games.")
        : top3.map(function (seat) { return who[seat]; }).join(" and ") + " tie with " + plural(won, "win") + " each.")));
    } else if (turnSeat !== null) {
      panel.classList.add(seatClass(turnSeat));
      add(whoLine, el("span", "mb-swatch " + seatClass(turnSeat))).setAttribute("aria-hidden", "true");
      var nm = add(whoLine, el("strong", "mb-name", who[turnSeat]));
      nm.setAttribute("title", who[turnSeat]);
      add(whoLine, el("span", "mb-muted", " \u00b7 turn " + fmt(turn.turnid)));
      var stake = add(whoLine, el("span", "mb-sq-stake", fmt(num(turn.points, 0)) + " at stake"));
      data(stake, "points", num(turn.points, 0));
    }
    if (shown && shown.roll) {
      var rollBox = add(panel, el("div", "mb-sq-roll " + (shown.cls || "")));
      if (shown.seat !== null && shown.seat !== turnSeat) {
        add(rollBox, el("div", "mb-sq-by " + seatClass(shown.seat), who[shown.seat] + "\u2019s last roll"));
      }
      var diceEl = add(rollBox, dice(shown.roll, shown.take, shown.seat, null));
      data(diceEl, "roll", shown.roll);
      data(diceEl, "take", shown.take || "");
      add(rollBox, el("div", "mb-sq-note", shown.note));
    } else if (!over && turn) {
      add(panel, el("div", "mb-sq-note", "To roll " + diceText(num(turn.dice, 6)) +
        (num(turn.turnid, 0) === 1 && num(state.game, 1) > 1 ? ": game " + state.game + " begins." : ".")));
    }
    if (turn && typeof turn.roll === "string" && turn.roll) {
      var ul = add(panel, el("ul", "mb-sq-options"));
      ul.setAttribute("aria-label", "Options");
      list(turn.options).slice(0, 40).forEach(function (o) {
        if (!isObj(o)) { return; }
        var li = add(ul, el("li", "mb-opt"));
        data(li, "option", o.id);
        add(li, el("span", "mb-opt-id", "#" + String(o.id)));
        add(li, el("span", "mb-opt-dice", String(o.dieValues)));
        add(li, el("span", "mb-opt-pts", fmt(o.points)));
      });
    }
    if (turn && list(turn.rolls).length && !(shown && shown.cls === "is-taken-roll" && list(turn.rolls).length === 1)) {
      var so = add(panel, el("div", "mb-sq-sofar"));
      add(so, el("span", "mb-muted", "This turn: "));
      list(turn.rolls).forEach(function (x) { add(so, rollText(x, turnSeat)); });
    }

    /* the players: wins, the score with a bar towards maxPoints, the last turn */
    var leader = isInt(state.leader) ? state.leader : null;
    var mostWins = -1;
    wins.forEach(function (w) { if (isNum(w) && w > mostWins) { mostWins = w; } });
    var ol = add(top, el("ol", "mb-players mb-sq-players"));
    ol.setAttribute("aria-label", "Players");
    who.forEach(function (name, seat) {
      var li = add(ol, el("li", "mb-player " + seatClass(seat)));
      data(li, "seat", seat);
      if (turnSeat === seat && !over) { li.classList.add("is-turn"); }
      if (over && wins[seat] === mostWins && mostWins > 0) { li.classList.add("is-winner"); }
      var row1 = add(li, el("div", "mb-sq-row"));
      add(row1, el("span", "mb-swatch")).setAttribute("aria-hidden", "true");
      var nm2 = add(row1, el("span", "mb-name", name));
      nm2.setAttribute("title", name);
      if (turnSeat === seat && !over) { add(row1, el("span", "mb-tag mb-tag-turn", "rolling")); }
      if (leader === seat && !over && num(scores[seat], 0) > 0) { add(row1, el("span", "mb-tag", "leads")); }
      if (li.classList.contains("is-winner")) { add(row1, el("span", "mb-tag mb-tag-win", "winner")); }
      var w = add(row1, el("span", "mb-wins", plural(num(wins[seat], 0), "win")));
      data(w, "wins", num(wins[seat], 0));
      var sc = add(row1, el("span", "mb-score", fmt(scores[seat])));
      data(sc, "score", isNum(scores[seat]) ? scores[seat] : "");

      var bar = add(li, svg("svg", { viewBox: "0 0 100 6", preserveAspectRatio: "none" }, "mb-bar"));
      bar.setAttribute("aria-hidden", "true");
      add(bar, svg("rect", { x: 0, y: 0, width: 100, height: 6, rx: 0 }, "mb-bar-track"));
      var frac = maxPoints > 0 ? Math.max(0, Math.min(1, num(scores[seat], 0) / maxPoints)) : 0;
      if (frac > 0) { add(bar, svg("rect", { x: 0, y: 0, width: round(frac * 100), height: 6 }, "mb-bar-fill")); }

      var lt = lastTurns[seat];
      if (isObj(lt)) {
        var sum = add(li, el("div", "mb-sq-last"));
        add(sum, el("span", "mb-muted", "Last turn: "));
        list(lt.rolls).slice(-8).forEach(function (x) { add(sum, rollText(x, seat)); });
        var gain = num(lt.endPoints, 0) - num(lt.startPoints, 0);
        add(sum, el("span", gain > 0 ? "mb-sq-result" : "mb-sq-result mb-bust",
          gain > 0 ? "banked " + fmt(gain) : "lost the turn"));
      }
    });
  }

  window.MerkneraBoards = Object.freeze({
    TICTACTOE: guard("TICTACTOE", tictactoe),
    NOUGHTSANDCROSSES: guard("NOUGHTSANDCROSSES", noughtsandcrosses),
    NUMBERWANG: guard("NUMBERWANG", numberwang),
    KALAHA: guard("KALAHA", kalaha),
    HEXAGONS: guard("HEXAGONS", hexagons),
    SCRABBLE: guard("SCRABBLE", scrabble),
    SQUELCH: guard("SQUELCH", squelch)
  });
}());
