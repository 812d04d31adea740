/* The home page's live part: the running games and the latest results, re-rendered by the
   server (HTML it escaped) and pushed as server-sent events whenever the arena changes. */
(function () {
  "use strict";
  var target = document.getElementById("live");
  if (!target || !window.EventSource) { return; }
  var source = new EventSource(target.dataset.live);
  source.addEventListener("home", function (event) {
    target.innerHTML = event.data;  // markup the server rendered with autoescaping
    target.dataset.updated = String(Date.now());
  });
  window.addEventListener("pagehide", function () { source.close(); });
}());
