/* A bot's log, for its owner: the token is sent as a bearer token to the API and kept in
   this tab's sessionStorage only (it is gone when the tab closes). */
(function () {
  "use strict";
  var section = document.getElementById("log");
  if (!section) { return; }
  var KEY = "merknera-token";
  var botId = section.dataset.bot;
  var form = document.getElementById("log-form");
  var input = document.getElementById("log-token");
  var status = document.getElementById("log-status");
  var entries = document.getElementById("log-entries");
  var signout = document.getElementById("log-signout");

  /* A stored time as every page shows one: in UTC, with the zone written (site.py's
     "when"). */
  function when(stamp) {
    var time = document.createElement("time");
    time.className = "when";
    time.dateTime = String(stamp || "");
    time.textContent = time.dateTime.replace("T", " ").slice(0, 19) + " UTC";
    return time;
  }

  function load(token) {
    status.textContent = "Loading…";
    fetch("/api/bots/" + botId + "/log?limit=500", { headers: { Authorization: "Bearer " + token } })
      .then(function (response) {
        return response.json().then(function (body) {
          return { ok: response.ok, body: body };
        });
      })
      .then(function (reply) {
        entries.replaceChildren();
        if (!reply.ok) {
          // A token is kept only once it has shown a log; a refusal (a mistyped token, or
          // another owner's bot) leaves the one kept, if any, as it was.
          status.textContent = reply.body.error || "The log could not be loaded.";
          return;
        }
        sessionStorage.setItem(KEY, token);
        signout.hidden = false;
        challenge.hidden = false;
        status.textContent = reply.body.log.length + " entries, newest first.";
        reply.body.log.forEach(function (entry) {
          var item = document.createElement("li");
          item.appendChild(when(entry.created_at));
          if (entry.game_id) {
            var link = document.createElement("a");
            link.href = "/games/" + Number(entry.game_id);
            link.textContent = "#" + Number(entry.game_id);
            item.appendChild(link);
            item.appendChild(document.createTextNode(" "));
          }
          item.appendChild(document.createTextNode(entry.message));
          entries.appendChild(item);
        });
      })
      .catch(function () { status.textContent = "The log could not be loaded."; });
  }

  /* The owner's challenge: unrated games against another bot (POST /api/challenges). */
  var challenge = document.getElementById("challenge-form");
  var challengeStatus = document.getElementById("challenge-status");
  challenge.addEventListener("submit", function (event) {
    event.preventDefault();
    var token = sessionStorage.getItem(KEY);
    if (!token) { challengeStatus.textContent = "Sign in with your API token first."; return; }
    challengeStatus.textContent = "Asking…";
    fetch("/api/challenges", {
      method: "POST",
      headers: { Authorization: "Bearer " + token, "Content-Type": "application/json" },
      body: JSON.stringify({
        bot: challenge.dataset.name, version: challenge.dataset.version,
        opponent: document.getElementById("challenge-opponent").value.trim(),
        games: Number(document.getElementById("challenge-games").value) })
    })
      .then(function (response) {
        return response.json().then(function (body) { return { ok: response.ok, body: body }; });
      })
      .then(function (reply) {
        if (!reply.ok) {
          challengeStatus.textContent = reply.body.error || "The challenge was refused.";
          return;
        }
        challengeStatus.replaceChildren();
        var link = document.createElement("a");
        link.href = "/api/challenges/" + Number(reply.body.id);
        link.textContent = "Challenge " + Number(reply.body.id);
        challengeStatus.appendChild(link);
        challengeStatus.appendChild(document.createTextNode(
          ": " + reply.body.asked + " games against " + reply.body.opponent +
          "; they begin as soon as both bots are online and there is room."));
      })
      .catch(function () { challengeStatus.textContent = "The challenge could not be sent."; });
  });

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var token = input.value.trim();
    input.value = "";
    if (token) { load(token); }
  });
  signout.addEventListener("click", function () {
    sessionStorage.removeItem(KEY);
    entries.replaceChildren();
    status.textContent = "Signed out.";
    signout.hidden = true;
    challenge.hidden = true;
  });
  var saved = sessionStorage.getItem(KEY);
  if (saved) { load(saved); }
}());
