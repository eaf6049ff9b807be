// State Secrets: live pages, over the server's event stream (server-sent
// events, /game/events). Every page is complete without this script; with
// it, what changes in the game shows up without a reload:
//
//   <body data-events="/game/events?tid=...">    where the stream is
//   <x data-live="ap|cash|agents|security|secrets|tick|round">  figures
//   <time data-countdown data-live="next">      the next tick (countdown.js)
//   <ol data-live-list="feed|news|post">        lines, newest first
//   <a data-live-tab="hq|news|board">           tabs: a count of unseen lines
//   <tr data-source="ID"> with data-live="price|stock|state" cells
//   <div data-live-alert hidden>                shown when someone acts on you
//
// EventSource reconnects by itself and sends the last id it saw, so the
// server resumes after it; an "reset" event (changes missed) reloads.
(function () {
  "use strict";
  var url = document.body && document.body.getAttribute("data-events");
  if (!url || !window.EventSource) { return; }
  var page = document.body.getAttribute("data-page") || "";
  var unseen = { hq: 0, news: 0, board: 0 };
  var es = new EventSource(url);

  function each(sel, fn) { Array.prototype.forEach.call(document.querySelectorAll(sel), fn); }
  function set(name, value) {
    each('[data-live="' + name + '"]', function (el) { el.textContent = String(value); });
  }
  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }
  function figures(me) {
    if (!me) { return; }
    set("ap", me.ap); set("cash", me.cash); set("agents", me.agents);
    set("security", me.security); set("secrets", me.secrets);
    set("secrets-label", plural(me.secrets, "Secret", "Secrets"));
  }
  function stamp(iso) {
    var d = new Date(iso);
    if (isNaN(d)) { return ""; }
    function p(n) { return n < 10 ? "0" + n : String(n); }
    return p(d.getUTCHours()) + ":" + p(d.getUTCMinutes()) + " UTC";
  }
  // prepend adds a line at the top of each list of kind, marked new.
  function prepend(kind, build) {
    var added = false;
    each('[data-live-list="' + kind + '"]', function (list) {
      var li = build();
      li.className = (li.className ? li.className + " " : "") + "live-new";
      list.insertBefore(li, list.firstChild);
      var empty = list.parentNode.querySelector("[data-live-empty]");
      if (empty) { empty.hidden = true; }
      added = true;
    });
    return added;
  }
  function line(text, at, tick) {
    var li = document.createElement("li");
    var t = document.createElement("span");
    t.className = "when";
    t.textContent = "Tick " + tick + " · " + stamp(at);
    li.appendChild(t);
    li.appendChild(document.createTextNode(" " + text));
    return li;
  }
  function badge(tab) {
    if (tab === page) { return; }
    unseen[tab] += 1;
    each('[data-live-tab="' + tab + '"]', function (a) {
      var b = a.querySelector(".unseen");
      if (!b) {
        b = document.createElement("span");
        b.className = "unseen";
        a.appendChild(document.createTextNode(" "));
        a.appendChild(b);
      }
      b.textContent = String(unseen[tab]);
      b.setAttribute("aria-label", plural(unseen[tab], "new line", "new lines"));
    });
  }
  function alertMe(text) {
    each("[data-live-alert]", function (el) {
      el.textContent = text;
      el.hidden = false;
    });
  }
  function on(kind, fn) {
    es.addEventListener(kind, function (ev) {
      var d;
      try { d = JSON.parse(ev.data); } catch (e) { return; }
      fn(d);
    });
  }

  on("feed", function (d) {
    figures(d.me);
    prepend("feed", function () { return line(d.text, d.at, d.tick); });
    badge("hq");
    if (d.alert) { alertMe(d.text); }
  });
  on("news", function (d) {
    prepend("news", function () { return line(d.text, d.at, d.tick); });
    badge("news");
  });
  on("post", function (d) {
    prepend("post", function () {
      var li = document.createElement("li");
      var who = document.createElement("strong");
      who.textContent = d.author;
      li.appendChild(who);
      li.appendChild(document.createTextNode(" (" + d.faction + ") · " + stamp(d.at)));
      var p = document.createElement("p");
      p.textContent = d.body;
      li.appendChild(p);
      return li;
    });
    badge("board");
  });
  on("tick", function (d) {
    figures(d.me);
    set("tick", d.tick);
    set("round", d.round);
    each('time[data-live="next"]', function (el) {
      el.setAttribute("datetime", d.next);
      el.textContent = stamp(d.next);
    });
    if (window.StateSecretsCountdown) { window.StateSecretsCountdown(); }
  });
  on("source", function (d) {
    each('[data-source="' + d.id + '"]', function (row) {
      var price = row.querySelector('[data-live="price"]');
      if (price) { price.textContent = "$" + d.price; }
      var stock = row.querySelector('[data-live="stock"]');
      if (stock) { stock.textContent = String(d.secrets); }
      var offer = row.querySelector('input[name="seen_price"]');
      if (offer) { offer.value = String(d.price); }
    });
  });
  on("reset", function () { window.location.reload(); });
})();
