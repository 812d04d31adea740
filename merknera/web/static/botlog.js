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
  });
  var saved = sessionStorage.getItem(KEY);
  if (saved) { load(saved); }
}());
