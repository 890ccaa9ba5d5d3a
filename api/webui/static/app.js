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
