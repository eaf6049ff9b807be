// State Secrets: live pages, over the server's event stream (server-sent
// events, /game/events). Every page is complete without this script; with
// it, what changes in the game shows up without a reload:
//
//   <body data-events="/game/events?tid=...">    where the stream is
//   <x data-live="ap|cash|agents|security|secrets|tick|round">  figures
//   <time data-countdown data-live="next">      the next tick (countdown.js)
//   <ol data-live-list="feed|news|post">        lines, newest first
//   <a data-live-tab="hq|news|board">           tabs: a count of unseen lines
//   <tr data-source="ID"> with data-live="price|stock" cells
//   <div data-live-alert hidden>                shown when someone acts on you
//
// EventSource reconnects by itself and sends the last id it saw, so the
// server resumes after it; a "reset" event (changes missed) reloads.
(function () {
  "use strict";
  var url = document.body && document.body.getAttribute("data-events");
  if (!url || !window.EventSource) { return; }
  var page = document.body.getAttribute("data-page") || "";
  // A page reached by ?tid= carries it in its links (the stream's URL has it).
  var tid = (url.match(/[?&]tid=([0-9a-f]+)/) || [])[1];
  var unseen = { hq: 0, news: 0, board: 0 };
  var es = new EventSource(url);

  function each(sel, fn) { Array.prototype.forEach.call(document.querySelectorAll(sel), fn); }
  function set(name, value) {
    each('[data-live="' + name + '"]', function (node) { node.textContent = String(value); });
  }
  function plural(n, one, many) { return n + " " + (n === 1 ? one : many); }
  function figures(me) {
    if (!me) { return; }
    set("ap", me.ap); set("cash", me.cash); set("agents", me.agents);
    set("security", me.security); set("secrets", me.secrets);
    set("secrets-label", me.secrets === 1 ? "Secret" : "Secrets");
  }
  function p2(n) { return n < 10 ? "0" + n : String(n); }
  // stamp is a time as the pages write it: "2026-11-30 10:30 UTC".
  function stamp(iso) {
    var d = new Date(iso);
    if (isNaN(d)) { return ""; }
    return d.getUTCFullYear() + "-" + p2(d.getUTCMonth() + 1) + "-" + p2(d.getUTCDate()) + " " +
      p2(d.getUTCHours()) + ":" + p2(d.getUTCMinutes()) + " UTC";
  }
  function clock(iso) {
    var d = new Date(iso);
    return p2(d.getUTCHours()) + ":" + p2(d.getUTCMinutes()) + ":" + p2(d.getUTCSeconds()) + " UTC";
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function time(iso) {
    var t = el("time", "", stamp(iso));
    t.setAttribute("datetime", iso);
    return t;
  }
  // prepend adds a line at the top of each list of kind, marked new.
  function prepend(kind, build) {
    each('[data-live-list="' + kind + '"]', function (list) {
      var li = build();
      li.classList.add("live-new");
      var empty = list.querySelector("li.empty");
      if (empty) { list.removeChild(empty); }
      list.insertBefore(li, list.firstChild);
    });
  }
  // line is a feed or news line, as the feed template writes it.
  function line(text, at) {
    var li = el("li");
    li.appendChild(time(at));
    li.appendChild(el("span", "", text));
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
    each("[data-live-alert]", function (node) {
      node.textContent = text;
      node.hidden = false;
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
    prepend("feed", function () { return line(d.text, d.at); });
    badge("hq");
    if (d.alert) { alertMe(d.text); }
  });
  on("news", function (d) {
    prepend("news", function () { return line(d.text, d.at); });
    badge("news");
  });
  on("post", function (d) {
    prepend("post", function () {
      var li = el("li");
      var by = el("p", "byline");
      var who = el("strong");
      var link = el("a", "", d.author);
      link.setAttribute("href", "/game?function=profile&name=" + encodeURIComponent(d.author) + (tid ? "&tid=" + tid : ""));
      who.appendChild(link);
      by.appendChild(who);
      by.appendChild(document.createTextNode(" "));
      by.appendChild(el("span", "badge " + d.faction.toLowerCase(), d.faction));
      if (d.factionOnly) {
        by.appendChild(document.createTextNode(" "));
        by.appendChild(el("span", "stamp", d.faction + " only"));
      }
      by.appendChild(document.createTextNode(" · "));
      by.appendChild(time(d.at));
      li.appendChild(by);
      li.appendChild(el("p", "body", d.body));
      return li;
    });
    badge("board");
  });
  on("tick", function (d) {
    figures(d.me);
    set("tick", d.tick);
    set("round", d.round);
    set("round-end", d.roundEnd);
    each('time[data-live="round-end-at"]', function (node) {
      node.setAttribute("datetime", d.roundEndAt);
      node.textContent = stamp(d.roundEndAt);
    });
    each('time[data-live="next"]', function (node) {
      node.setAttribute("datetime", d.next);
      node.textContent = clock(d.next);
    });
    if (window.StateSecretsCountdown) { window.StateSecretsCountdown(); }
  });
  on("source", function (d) {
    each('[data-source="' + d.id + '"]', function (row) {
      var price = row.querySelector('[data-live="price"]');
      if (price) { price.textContent = "$" + d.price; }
      var stock = row.querySelector('[data-live="stock"]');
      if (stock) { stock.textContent = String(d.secrets); }
      // The haggle form sends the price the player saw: now this one.
      var seen = row.querySelector('input[name="price"]');
      if (seen) { seen.value = String(d.price); }
      row.classList.add("live-new");
    });
  });
  on("reset", function () { window.location.reload(); });
})();
