/* The play page: a person picks a game and an online bot and plays it move by move.

   Tic-tac-toe goes through this site's play API (/api/play); Kalaha through the Kalaha
   board API on its own listener (data-kalaha, with CORS), and /api/play/kalaha/<board>
   for the game's id and moves.  Boards are drawn by boards.js (window.MerkneraBoards);
   this script adds the clicks.  Every value from a server is text: the DOM is built with
   createElement and textContent only. */
(function () {
  "use strict";
  var root = document.getElementById("play");
  if (!root || !window.MerkneraBoards) { return; }
  var kalahaUrl = root.dataset.kalaha || "";
  var turnLimit = Number(root.dataset.turnLimit) || 0;

  var form = document.getElementById("play-form");
  var opponentSelect = document.getElementById("play-opponent");
  var seatField = document.getElementById("play-seat-field");
  var seatSelect = document.getElementById("play-seat");
  var nameInput = document.getElementById("play-name");
  var startButton = document.getElementById("play-start");
  var note = document.getElementById("play-note");
  var errorBox = document.getElementById("play-error");
  var gameBox = document.getElementById("play-game");
  var statusLine = document.getElementById("play-status");
  var board = document.getElementById("play-board");
  var movesList = document.getElementById("play-moves");
  var endBox = document.getElementById("play-end");
  var resultLine = document.getElementById("play-result");
  var gameLink = document.getElementById("play-link");
  var againButton = document.getElementById("play-again");

  var OUTCOMES = { won: "You won!", lost: "You lost.", draw: "A draw.", none: "No result." };

  /* The game being played: { via: "api" | "kalaha", game, token | boardId, seat,
     names: [by seat], info: the latest view of /api/play, state: a Kalaha BoardState,
     busy: a request is under way } */
  var current = null;

  /* -- helpers --------------------------------------------------------------------------- */

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }

  function chosenGame() {
    var input = form.querySelector('input[name="game"]:checked');
    return input ? { mnemonic: input.value, via: input.dataset.via } : null;
  }

  function showError(text) {
    errorBox.textContent = text;
    errorBox.hidden = !text;
  }

  function message(reply, fallback) {
    var body = reply.body || {};
    var text = typeof body.error === "string" ? body.error
      : typeof body.message === "string" ? body.message : "";
    return text || fallback + " (HTTP " + reply.status + ")";
  }

  /** A JSON request: resolves to { ok, status, body } (network failures too, status 0). */
  function call(method, url, body) {
    var init = { method: method, headers: { Accept: "application/json" } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(url, init).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (parsed) {
        return { ok: response.ok, status: response.status, body: parsed };
      });
    }, function () {
      return { ok: false, status: 0, body: { error: "The server could not be reached." } };
    });
  }

  /** This browser's secret for the guest name ``name``, made at its first use. */
  function secretFor(name) {
    var key = "merknera.guest-secrets";
    var kept = {};
    try { kept = JSON.parse(window.localStorage.getItem(key) || "{}") || {}; } catch (e) { kept = {}; }
    if (typeof kept[name] !== "string") {
      var bytes = new Uint8Array(16);
      window.crypto.getRandomValues(bytes);
      kept[name] = Array.prototype.map.call(bytes, function (b) {
        return (b + 256).toString(16).slice(1);
      }).join("");
      try { window.localStorage.setItem(key, JSON.stringify(kept)); } catch (e) { /* kept for this page only */ }
    }
    return kept[name];
  }

  /* -- choosing a game and a bot --------------------------------------------------------- */

  function loadOpponents() {
    var game = chosenGame();
    if (!game) { return; }
    seatField.hidden = game.via !== "api";
    opponentSelect.replaceChildren();
    startButton.disabled = true;
    note.textContent = "Looking for bots online…";
    call("GET", "/api/play/opponents?game=" + encodeURIComponent(game.mnemonic))
      .then(function (reply) {
        var now = chosenGame();
        if (!now || now.mnemonic !== game.mnemonic) { return; }
        if (!reply.ok) {
          note.textContent = "";
          showError(message(reply, "The bots could not be listed"));
          return;
        }
        var bots = Array.isArray(reply.body.bots) ? reply.body.bots : [];
        bots.forEach(function (bot) {
          var option = el("option", null, bot.name + " " + bot.version + " (by " + bot.owner + ")");
          option.value = String(bot.id);
          option.dataset.name = String(bot.name);
          opponentSelect.appendChild(option);
        });
        startButton.disabled = bots.length === 0;
        note.textContent = bots.length ? bots.length + (bots.length === 1 ? " bot is" : " bots are") +
          " online." : "No bot of this game is online now; try again later.";
      });
  }

  function start(event) {
    event.preventDefault();
    var game = chosenGame();
    var option = opponentSelect.selectedOptions[0];
    if (!game || !option || current) { return; }
    showError("");
    var name = nameInput.value.trim();
    var request = { opponent: Number(option.value) };
    if (name) {
      request.name = name;
      // A name is bound to a secret the first time it plays (the README's "Guests"): this
      // browser keeps one per name, so that nobody else can play under the name.
      if (name.indexOf("#") < 0) { request.secret = secretFor(name); }
    }
    startButton.disabled = true;
    note.textContent = "Starting…";
    var names = [name || "anonymous", option.dataset.name];
    var begun;
    if (game.via === "kalaha") {
      begun = call("POST", kalahaUrl + "/api/boards", request).then(function (reply) {
        if (reply.status !== 201) { return reply; }
        current = { via: "kalaha", game: "KALAHA", boardId: String(reply.body.boardId),
                    seat: 0, names: names, state: reply.body, info: null, busy: false };
        return refreshKalaha().then(function () { return reply; });
      });
    } else {
      request.game = game.mnemonic;
      request.seat = Number(seatSelect.value);
      begun = call("POST", "/api/play", request).then(function (reply) {
        if (reply.status !== 201) { return reply; }
        current = { via: "api", game: reply.body.game, token: reply.body.token,
                    seat: reply.body.seat, names: [], info: null, busy: false };
        applyView(reply.body);
        return reply;
      });
    }
    begun.then(function (reply) {
      note.textContent = "";
      if (reply.status !== 201) {
        startButton.disabled = false;
        showError(message(reply, "The game could not be started"));
        return;
      }
      form.hidden = true;
      gameBox.hidden = false;
      draw();
    });
  }

  /* -- the game --------------------------------------------------------------------------- */

  /** A view of /api/play: shown, then (while the bot thinks) asked for again. */
  function applyView(view) {
    current.info = view;
    current.names = (view.players || []).map(function (p) { return p.you ? p.name + " (you)" : p.name; });
    draw();
    if (!view.over && !view.your_turn) { awaitTurn(current); }
  }

  /** Ask for the game until it is the person's turn or over (again after a failure). */
  function awaitTurn(game) {
    game.busy = true;
    call("GET", "/api/play/" + encodeURIComponent(game.token) + "?wait=1").then(function (reply) {
      if (current !== game) { return; }
      game.busy = false;
      if (reply.ok) { showError(""); applyView(reply.body); return; }
      showError(message(reply, "The game could not be read") + " Trying again…");
      if (reply.status !== 404) { setTimeout(function () { if (current === game) { awaitTurn(game); } }, 3000); }
    });
  }

  function refreshKalaha() {
    return call("GET", "/api/play/kalaha/" + encodeURIComponent(current.boardId)).then(function (reply) {
      if (reply.ok) { current.info = reply.body; }
    });
  }

  function lastFrame(info) {
    var moves = info && Array.isArray(info.moves) ? info.moves : [];
    return moves.length ? moves[moves.length - 1] : null;
  }

  function draw() {
    if (!current) { return; }
    var info = current.info;
    var position = current.via === "kalaha" ? current.state : info && info.board;
    var names = current.via === "kalaha" ? [current.names[0] + " (you)", current.names[1]] : current.names;
    window.MerkneraBoards[current.game](board, position, { players: names, frame: lastFrame(info) });
    var mine = yourTurn();
    board.classList.toggle("is-your-turn", mine);
    board.setAttribute("data-your-turn", mine ? "true" : "false");
    if (mine) { markPlayable(); }
    drawMoves(info);
    drawStatus(info, mine);
  }

  function yourTurn() {
    if (!current || current.busy) { return false; }
    if (current.via === "kalaha") {
      var s = current.state || {};
      return !s.gameOver && s.nextPlayer === "ONE";
    }
    return !!(current.info && current.info.your_turn);
  }

  function over() {
    if (current.via === "kalaha") { return !!(current.state && current.state.gameOver); }
    return !!(current.info && current.info.over);
  }

  function drawMoves(info) {
    movesList.replaceChildren();
    var moves = info && Array.isArray(info.moves) ? info.moves : [];
    moves.forEach(function (m, i) {
      var item = el("li", m.seat === current.seat ? "mine" : "theirs");
      item.appendChild(el("span", "seq", i + 1));
      item.appendChild(el("span", "what", m.text));
      var who = current.names[m.seat];
      item.appendChild(el("span", "who", m.seat === current.seat ? "you" : who || "chance"));
      movesList.appendChild(item);
    });
    if (!moves.length) { movesList.appendChild(el("li", "empty", "No moves yet.")); }
  }

  function drawStatus(info, mine) {
    var bot = current.names[1 - current.seat] || "The bot";
    if (over()) {
      var outcome = info && info.outcome;
      statusLine.textContent = "The game is over: " + (OUTCOMES[outcome] || "no result.").toLowerCase();
      resultLine.replaceChildren(el("strong", null, OUTCOMES[outcome] || "The game is over."));
      if (info && info.detail) { resultLine.appendChild(document.createTextNode(" " + info.detail)); }
      if (info && info.rated === false) {
        resultLine.appendChild(el("span", "muted", " (unrated: you played anonymously)"));
      }
      if (info && info.game_id) {
        gameLink.href = "/games/" + Number(info.game_id);
        gameLink.textContent = "See game #" + Number(info.game_id) + "’s page";
      }
      endBox.hidden = false;
      root.setAttribute("data-outcome", outcome || "");
      return;
    }
    endBox.hidden = true;
    var limit = turnLimit ? " You have " + Math.round(turnLimit / 60 * 10) / 10 + " minutes a move." : "";
    if (mine) {
      statusLine.textContent = (current.game === "KALAHA"
        ? "Your turn: pick one of your pits (the bottom row)." : "Your turn: pick an empty cell.") + limit;
    } else {
      statusLine.textContent = bot + " is thinking…";
    }
  }

  /** The move a click on the board makes, or null. */
  function moveAt(target) {
    if (current.game === "TICTACTOE") {
      var cell = target.closest(".mb-cell[data-cell]");
      if (!cell || cell.getAttribute("data-mark")) { return null; }
      return { position: Number(cell.getAttribute("data-cell")) };
    }
    if (current.game === "KALAHA") {
      var pit = target.closest(".mb-kal-pit[data-pit]");
      if (!pit || pit.getAttribute("data-row") !== (current.seat === 0 ? "one" : "two")) { return null; }
      return { pitIndex: Number(pit.getAttribute("data-pit")) };
    }
    return null;
  }

  /** The cells or pits a move can be made on: focusable buttons for the keyboard. */
  function markPlayable() {
    board.querySelectorAll(".mb-cell[data-cell], .mb-kal-pit[data-pit]").forEach(function (spot) {
      var move = moveAt(spot);
      if (!move || (spot.getAttribute("data-stones") === "0")) { return; }
      spot.classList.add("is-playable");
      spot.setAttribute("tabindex", "0");
      spot.setAttribute("role", "button");
      spot.setAttribute("aria-label", move.position !== undefined
        ? "Play cell " + move.position : "Sow pit " + move.pitIndex);
    });
  }

  function play(event) {
    if (!current || !yourTurn()) { return; }
    var move = moveAt(event.target);
    if (!move) { return; }
    showError("");
    current.busy = true;
    draw();
    var sent;
    if (current.via === "kalaha") {
      sent = call("PUT", kalahaUrl + "/api/boards/" + encodeURIComponent(current.boardId),
                  { pitIndex: move.pitIndex, player: "ONE" }).then(function (reply) {
        if (!reply.ok) { return reply; }
        current.state = reply.body;
        return refreshKalaha().then(function () { return reply; });
      });
    } else {
      sent = call("POST", "/api/play/" + encodeURIComponent(current.token) + "/moves", { move: move });
    }
    sent.then(function (reply) {
      current.busy = false;
      if (!reply.ok) {
        showError(message(reply, "The move was refused"));
        draw();
        return;
      }
      if (current.via === "kalaha") { draw(); } else { applyView(reply.body); }
    });
  }

  function again() {
    current = null;
    board.replaceChildren();
    movesList.replaceChildren();
    root.removeAttribute("data-outcome");
    gameBox.hidden = true;
    endBox.hidden = true;
    form.hidden = false;
    showError("");
    loadOpponents();
  }

  form.addEventListener("submit", start);
  form.addEventListener("change", function (event) {
    if (event.target && event.target.name === "game") { showError(""); loadOpponents(); }
  });
  board.addEventListener("click", play);
  board.addEventListener("keydown", function (event) {
    if (event.key === "Enter" || event.key === " ") { event.preventDefault(); play(event); }
  });
  againButton.addEventListener("click", again);
  loadOpponents();
}());
