// Live audit: when the log records a newer turn, reload the table rows.
// Server-Sent Events from /ui/events; EventSource reconnects by itself.
(function () {
  "use strict";
  var rows = document.getElementById("rows");
  if (!rows || rows.dataset.live === undefined || !window.EventSource) {
    return;
  }
  var query = rows.dataset.live || "";
  var live = document.getElementById("live");
  var src = new EventSource("/ui/events?" + query + (query ? "&" : "") + "top=" + encodeURIComponent(rows.dataset.top || ""));
  src.addEventListener("open", function () { if (live) { live.textContent = "live"; } });
  src.addEventListener("error", function () { if (live) { live.textContent = "reconnecting…"; } });
  src.addEventListener("audit", function () {
    fetch("/ui/rows?" + query, { credentials: "same-origin" })
      .then(function (r) { if (!r.ok) { throw new Error(r.status); } return r.text(); })
      .then(function (html) { rows.innerHTML = html; })
      .catch(function () { if (live) { live.textContent = "update failed; reload the page"; } });
  });
})();

// Live reply: a running turn's page shows its reply while it is written,
// from the turn's event stream; the final reply reloads the page, whose
// timeline then holds the whole turn.
(function () {
  "use strict";
  var box = document.getElementById("live-reply");
  if (!box || !box.dataset.stream || !window.EventSource) {
    return;
  }
  var text = box.querySelector(".live-text");
  var activity = box.querySelector(".live-activity");
  var state = box.querySelector(".live-state");
  var src = new EventSource(box.dataset.stream);
  src.addEventListener("open", function () { state.textContent = "live"; });
  src.addEventListener("error", function () { state.textContent = "reconnecting…"; });
  src.addEventListener("text", function (e) {
    var d = JSON.parse(e.data);
    text.textContent = d.text || "";
    activity.textContent = d.activity || "";
  });
  src.addEventListener("final", function (e) {
    var d = JSON.parse(e.data);
    src.close();
    text.textContent = d.reply || "";
    activity.textContent = "";
    state.textContent = d.status;
    window.location.reload();
  });
})();
