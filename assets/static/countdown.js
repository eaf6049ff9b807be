// State Secrets: count down to the next tick, in the browser only.
//
// The server writes the next tick as an absolute time,
//   <time datetime="2026-11-30T10:40:00Z" data-countdown>10:40 UTC</time>
//   <span data-countdown-out></span>
// so a page re-requested with no change in the game is byte-identical; this
// script fills the span with "in 4m 05s" (or "in 6d 04h 10m" for the round's
// end) once a second. When the tick is due it says "any moment" and stops; live.js moves the datetime to the next tick
// when the tick arrives and calls window.StateSecretsCountdown to restart.
(function () {
  "use strict";
  var clocks = document.querySelectorAll("time[data-countdown]");
  if (!clocks.length) { return; }
  var timer = null;

  function pad(n) { return n < 10 ? "0" + n : String(n); }

  function render(ms) {
    if (ms <= 0) { return "any moment"; }
    return "in " + span(ms);
  }

  function span(ms) {
    var s = Math.floor(ms / 1000);
    var d = Math.floor(s / 86400);
    var h = Math.floor((s % 86400) / 3600);
    var m = Math.floor((s % 3600) / 60);
    s = s % 60;
    if (d) { return d + "d " + pad(h) + "h " + pad(m) + "m"; }
    return (h ? h + "h " + pad(m) + "m " : m + "m ") + pad(s) + "s";
  }

  function tick() {
    var running = false;
    clocks.forEach(function (el) {
      var out = el.parentNode.querySelector("[data-countdown-out]");
      var due = Date.parse(el.getAttribute("datetime"));
      if (!out || isNaN(due)) { return; }
      var left = due - Date.now();
      out.textContent = render(left);
      if (left > 0) { running = true; }
    });
    timer = running ? setTimeout(tick, 1000 - (Date.now() % 1000)) : null;
  }
  window.StateSecretsCountdown = function () {
    if (timer) { clearTimeout(timer); }
    tick();
  };
  tick();
})();
