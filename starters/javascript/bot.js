#!/usr/bin/env node
// A tic-tac-toe bot for Merknera: serves HTTP (the platform POSTs JSON-RPC to it) or, with
// --connect, connects out over a WebSocket. The protocol: docs/bots/protocol.md.
"use strict";
const crypto = require("node:crypto");
const http = require("node:http");
const { parseArgs } = require("node:util");
const WebSocket = require("ws");

const LINES = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];
const won = (board, mark) => LINES.some((line) => line.every((i) => board[i] === mark));

// ===== YOUR MOVE LOGIC GOES HERE ============================================================
// board: 9 cells "X", "O" or "" (empty), row by row; mark: yours, "X" or "O" (X moves first).
// Return the index (0-8) of an empty cell. This one never loses: it searches every game to
// the end, scoring a win higher the sooner it comes, so it wins when it can and blocks.
function chooseMove(board, mark) {
  const search = (cells, me, you, free) => {  // `me` to move: the best [score, position]
    let best = [-Infinity, -1];
    for (let i = 0; i < 9; i++) {
      if (cells[i]) continue;
      cells[i] = me;
      const score = won(cells, me) ? free : free > 1 ? -search(cells, you, me, free - 1)[0] : 0;
      cells[i] = "";
      if (score > best[0]) best = [score, i];
    }
    return best;
  };
  const cells = board.map((cell) => cell || "");
  return search(cells, mark, mark === "X" ? "O" : "X", cells.filter((cell) => !cell).length)[1];
}
// =============================================================================================

// The result of one call from the platform; an exception becomes a JSON-RPC error.
function answer(method, params) {
  switch (method) {
    case "Status.Ping": return { ping: "OK" };
    case "TicTacToe.NewGame": return { status: "READY" };
    case "TicTacToe.NextMove": return { position: chooseMove(params.gamestate, params.mark) };
    case "TicTacToe.Complete":
      console.log(`game ${params.gameid}: ${params.winner ? "won"
        : won(params.gamestate, "X") || won(params.gamestate, "O") ? "lost" : "drawn"}`);
      return null;
    case "TicTacToe.Error": console.error(`game ${params.gameid}: ${params.message}`); return null;
    default: throw Object.assign(new Error(`Method not found: ${method}`), { code: -32601 });
  }
}

function respond(request) {                        // a JSON-RPC 2.0 response to a request
  try {
    return { jsonrpc: "2.0", id: request.id, result: answer(request.method, request.params || {}) };
  } catch (err) {
    const error = { code: err.code || -32603, message: err.message };
    return { jsonrpc: "2.0", id: request.id, error };
  }
}

function registerParams(opts) {
  return { token: opts.token, botname: opts.name, botversion: opts.version, game: "TICTACTOE",
           programminglanguage: "JavaScript" };
}

// Serve mode: answer the platform's POSTs, checking their signature once registered.
async function serve(opts) {
  let secret = null;
  const signed = (req, body) => {
    const stamp = req.headers["x-merknera-timestamp"] || "";
    const given = Buffer.from(req.headers["x-merknera-signature"] || "");
    const hmac = crypto.createHmac("sha256", secret).update(`${stamp}.${body}`);
    const mac = "sha256=" + hmac.digest("hex");
    return Math.abs(Date.now() / 1000 - Number(stamp)) <= 60 && given.length === mac.length
      && crypto.timingSafeEqual(given, Buffer.from(mac));
  };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      if (secret !== null && !signed(req, body)) return res.writeHead(401).end("bad signature\n");
      let reply;
      try { reply = respond(JSON.parse(body)); }
      catch { reply = { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }; }
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(reply));
    });
  });
  await new Promise((ready) => server.listen(opts.port, opts.host, ready));
  const endpoint = opts.endpoint || `http://${opts.host}:${server.address().port}/`;
  const call = { jsonrpc: "2.0", id: 1, method: "RegistrationService.Register",
                 params: { ...registerParams(opts), rpcendpoint: endpoint } };
  const response = await fetch(`${opts.platform}/rpc`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(call) });
  const reply = await response.json();
  if (reply.error) throw new Error(`registration failed: ${JSON.stringify(reply.error)}`);
  secret = reply.result.secret;
  console.log(`registered: ${reply.result.message} (serving ${endpoint})`);
}

// Connect mode: one WebSocket, registered first, then answering requests; reconnects on a drop.
function connect(opts, delay = 1) {
  const url = opts.platform.replace(/^http/, "ws") + "/rpc/ws";
  const ws = new WebSocket(url);
  ws.on("open", () => ws.send(JSON.stringify({ jsonrpc: "2.0", id: "register",
    method: "RegistrationService.Register", params: registerParams(opts) })));
  ws.on("message", (data) => {
    const message = JSON.parse(data.toString());
    if (message.method !== undefined) {
      if (message.id !== undefined) ws.send(JSON.stringify(respond(message)));
    } else if (message.id === "register" && message.error) {
      // Too many registrations (-32008) or the platform's own trouble (-32603): try again.
      if ([-32008, -32603].includes(message.error.code)) return;
      console.error(`registration failed: ${JSON.stringify(message.error)}`);
      process.exit(1);
    } else if (message.id === "register") {
      delay = 1;
      console.log(`registered: ${message.result.message} (connected to ${url})`);
    }
  });
  ws.on("error", (err) => console.error(`${url}: ${err.message}`));
  ws.on("close", (code, reason) => {
    if (code === 4000) { console.log(`replaced by a newer connection: ${reason}`); process.exit(0); }
    console.error(`connection closed (${code} ${reason}); reconnecting in ${delay} s`);
    setTimeout(() => connect(opts, Math.min(delay * 2, 30)), delay * 1000);
  });
}

const text = (value) => ({ type: "string", default: value });
const { values: opts } = parseArgs({ options: {
  platform: text("http://127.0.0.1:8080"), token: text(""), name: text("js-starter"),
  version: text("1.0.0"), connect: { type: "boolean", default: false }, host: text("127.0.0.1"),
  port: text("8000"), endpoint: text(undefined) } });
opts.platform = opts.platform.replace(/\/+$/, "");
opts.port = Number(opts.port);
if (opts.connect) connect(opts);
else serve(opts).catch((err) => { console.error(`${opts.platform}: ${err.message}`); process.exit(1); });
