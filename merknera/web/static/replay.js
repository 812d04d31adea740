/* The game page's replay: every frame of the move log with the board after it, step, play
   and jump controls, and (while the game runs) new frames as they are stored.

   Frames come from /api/games/<id>/replay and then /api/games/<id>/live (server-sent
   events).  A frame carries its state whole ("state": the start, every 100th frame, a
   stream's first) or as the JSON Patch from the frame before it ("patch"), so a frame's
   state is rebuilt from the nearest whole one at or before it (patches are applied by
   window.MerkneraPatch, jsonpatch.js).  Boards are drawn by
   window.MerkneraBoards[<GAME>] (boards.js).  Everything a bot sent is shown with
   textContent, never as markup. */
(function () {
  "use strict";

  var section = document.getElementById("replay");
  if (!section) { return; }
  var gameId = section.dataset.game;
  var board = document.getElementById("board");
  var scrub = document.getElementById("scrub");
  var position = document.getElementById("position");
  var current = document.getElementById("current");
  var list = document.getElementById("moves");
  var playButton = section.querySelector('[data-act="play"]');
  var PLAY_MS = 700;
  var own = Object.prototype.hasOwnProperty;

  var data = null;        // the replay: game, players, setup, reveal, state, frames
  var rebuilt = { index: -1, state: null };  // the last state rebuilt (stepping on from it
                                             // applies one patch, not all since a keyframe)
  var items = [];         // the move list's <li>, one per frame
  var index = 0;          // how many frames are shown
  var timer = null;
  var live = null;        // the EventSource while the game runs

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function playerName(seat) {
    if (seat === -1) { return "chance"; }
    var name = data.players[seat];
    return name === undefined ? "seat " + (seat + 1) : name;
  }

  function latency(ms) {
    if (ms === null || ms === undefined) { return ""; }
    return ms >= 100 ? Math.round(ms) + " ms" : ms.toFixed(1) + " ms";
  }

  function frameText(frame) {
    if (frame.fault) { return frame.fault.toLowerCase().replace(/_/g, " ") + ": " + (frame.text || ""); }
    return frame.text || JSON.stringify(frame.move);
  }

  /* The state after i frames: from the last one rebuilt when it is on the way, else from
     the nearest whole state at or before i. */
  function stateAt(i) {
    var from = i;
    while (from > 0 && !own.call(data.frames[from - 1], "state")) { from -= 1; }
    var state = from === 0 ? data.state : data.frames[from - 1].state;
    if (rebuilt.index <= i && rebuilt.index >= from) { from = rebuilt.index; state = rebuilt.state; }
    for (var k = from + 1; k <= i; k += 1) {
      try {
        state = window.MerkneraPatch.apply(state, data.frames[k - 1].patch);
      } catch (error) {
        throw new Error("the board after #" + data.frames[k - 1].seq + " cannot be rebuilt: " + error.message);
      }
    }
    rebuilt = { index: i, state: state };
    return state;
  }

  function draw(i) {
    var render = window.MerkneraBoards && window.MerkneraBoards[data.game];
    var frame = i > 0 ? data.frames[i - 1] : null;
    var ctx = { players: data.players, setup: data.setup, frame: frame, reveal: data.reveal };
    var state;
    try {
      state = stateAt(i);
    } catch (error) {
      board.replaceChildren(el("p", "fault", error.message));
      return;
    }
    if (typeof render === "function") {
      render(board, state, ctx);
    } else {
      board.replaceChildren(el("pre", "raw-state", JSON.stringify(state, null, 1)));
    }
  }

  function describe(i) {
    current.replaceChildren();
    if (i === 0) {
      current.appendChild(el("span", "muted", "The start: " + data.players.join(" vs ") + "."));
      return;
    }
    var frame = data.frames[i - 1];
    var line = el("div");
    line.appendChild(el("strong", null, "#" + frame.seq + " " + playerName(frame.seat)));
    line.appendChild(document.createTextNode(": "));
    line.appendChild(el("span", frame.fault ? "fault" : "text", frameText(frame)));
    current.appendChild(line);
    var facts = [];
    if (frame.latency_ms !== null && frame.latency_ms !== undefined) { facts.push("replied in " + latency(frame.latency_ms)); }
    if (frame.fault) { facts.push("fault: " + frame.fault.toLowerCase().replace(/_/g, " ")); }
    if (facts.length) { current.appendChild(el("div", "muted", facts.join(" · "))); }
  }

  function show(i, scroll) {
    var last = data.frames.length;
    index = Math.max(0, Math.min(last, i));
    draw(index);
    describe(index);
    scrub.max = String(last);
    scrub.value = String(index);
    position.textContent = index + " / " + last;
    section.dataset.index = String(index);
    for (var k = 0; k < items.length; k += 1) {
      items[k].classList.toggle("current-move", k === index - 1);
    }
    if (scroll && index > 0) {
      items[index - 1].scrollIntoView({ block: "nearest" });
    }
  }

  function addFrames(frames) {
    frames.forEach(function (frame) {
      data.frames.push(frame);
      var item = el("li", frame.fault ? "fault" : null);
      item.dataset.index = String(data.frames.length);
      item.appendChild(el("span", "seq", "#" + frame.seq));
      item.appendChild(el("span", "what", playerName(frame.seat) + ": " + frameText(frame)));
      item.appendChild(el("span", "lat", latency(frame.latency_ms)));
      items.push(item);
      list.appendChild(item);
    });
  }

  function stop() {
    if (timer !== null) { clearInterval(timer); timer = null; }
    playButton.setAttribute("aria-pressed", "false");
    playButton.textContent = "Play";
    playButton.setAttribute("aria-label", "Play");
  }

  function play() {
    if (index >= data.frames.length) { show(0, true); }
    playButton.setAttribute("aria-pressed", "true");
    playButton.textContent = "Pause";
    playButton.setAttribute("aria-label", "Pause");
    timer = setInterval(function () {
      if (index < data.frames.length) {
        show(index + 1, true);
      } else if (live === null) {
        stop();
      }
    }, PLAY_MS);
  }

  var actions = {
    first: function () { stop(); show(0, true); },
    prev: function () { stop(); show(index - 1, true); },
    next: function () { stop(); show(index + 1, true); },
    last: function () { stop(); show(data.frames.length, true); },
    play: function () { if (timer === null) { play(); } else { stop(); } }
  };

  function bind() {
    section.querySelectorAll("[data-act]").forEach(function (button) {
      button.addEventListener("click", function () { actions[button.dataset.act](); });
    });
    scrub.addEventListener("input", function () { stop(); show(Number(scrub.value), true); });
    list.addEventListener("click", function (event) {
      var item = event.target.closest("li");
      if (item) { stop(); show(Number(item.dataset.index), false); }
    });
    document.addEventListener("keydown", function (event) {
      var tag = (event.target && event.target.tagName) || "";
      if (tag === "INPUT" || tag === "TEXTAREA" || event.altKey || event.ctrlKey || event.metaKey) { return; }
      var keys = { ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last", " ": "play" };
      if (keys[event.key]) { event.preventDefault(); actions[keys[event.key]](); }
    });
  }

  function follow() {
    var after = data.frames.length ? data.frames[data.frames.length - 1].seq : 0;
    live = new EventSource("/api/games/" + gameId + "/live?after=" + after);
    if (!document.getElementById("live-badge")) {
      var badge = el("span", "live-badge", "LIVE");
      badge.id = "live-badge";
      position.after(badge);
    }
    live.addEventListener("error", function () {
      // A dropped connection is retried by the browser; a refused one (too many streams
      // open: 503) closes the source for good, so try again a little later.
      if (live !== null && live.readyState === EventSource.CLOSED) {
        live = null;
        setTimeout(follow, 5000);
      }
    });
    live.addEventListener("frame", function (event) {
      var atEnd = index === data.frames.length;
      addFrames([JSON.parse(event.data)]);
      if (atEnd) { show(data.frames.length, true); } else { show(index, false); }
    });
    live.addEventListener("end", function () {
      live.close();
      live = null;
      // The finished game's page shows the outcome, and what was hidden while it ran.
      window.location.replace("/games/" + gameId + "?step=" + data.frames.length);
    });
  }

  fetch("/api/games/" + gameId + "/replay", { headers: { Accept: "application/json" } })
    .then(function (response) {
      if (!response.ok) { throw new Error("the replay could not be loaded (HTTP " + response.status + ")"); }
      return response.json();
    })
    .then(function (replay) {
      var frames = replay.frames;
      data = replay;
      data.frames = [];
      addFrames(frames);
      bind();
      if (replay.error) {
        section.insertBefore(el("p", "fault", replay.error), section.firstChild);
      }
      var step = section.dataset.step;
      show(step === "" ? data.frames.length : Number(step), true);
      if (replay.status !== "FINISHED") { follow(); }
    })
    .catch(function (error) {
      board.replaceChildren(el("p", "fault", String(error.message || error)));
    });
}());
