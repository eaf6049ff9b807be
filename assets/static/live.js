// State Secrets: live pages, over the server's event stream (server-sent
// events, /game/events). Every page is complete without this script; with
// it, what changes in the game shows up without a reload:
//
//   <body data-events="/game/events?tid=...">    where the stream is
//   <x data-live="ap|cash|agents|security|secrets|tick|round">  figures
//   <time data-countdown data-live="next">      the next tick (countdown.js)
//   <ol data-live-list="feed|news|post">        lines, newest first
//   <a data-live-tab="hq|news|board">           tabs: a count of unseen lines
//   <tr data-source="ID"> with data-live="price|stock|heat" cells and the
//                                               haggle form (its offer follows the price)
//   <div data-live-alert hidden>                shown when someone acts on you, and at
//                                               a round's end (your place)
//   <p data-live-status hidden>                 shown while the stream is down
//   <x data-protected-until="TICK">             a protection from theft, with
//                                               data-part="tick|in|at" children: counts
//                                               down, goes at TICK (data-protection="me": yours)
//   <tbody data-ranking="OFFSET" [data-complete]> rows <tr data-player="ID"> with
//                                               data-standing="place|secrets" cells,
//                                               re-sorted as standings change, read
//                                               again at each tick; a
//                                               [data-protection-slot] cell takes the marker
//   <section data-faction-total="FBI|MIB">      data-total="score|secrets|players"
//
// EventSource reconnects by itself and sends the last id it saw, so the
// server resumes after it; a "reset" event (changes missed) reloads;
// "logout" and "stop" end live updates on the page with a notice saying
// why, and "renew" (the stream's lifetime is over) reconnects quietly.
(function () {
  "use strict";
  var url = document.body && document.body.getAttribute("data-events");
  if (!url || !window.EventSource) { return; }
  var page = document.body.getAttribute("data-page") || "";
  // The stream says which page it feeds, so that the server leaves out
  // what this page does not show (standings, sources' prices).
  if (page) { url += (url.indexOf("?") < 0 ? "?" : "&") + "view=" + encodeURIComponent(page); }
  // A page reached by ?tid= carries it in its links (the stream's URL has it).
  var tid = (url.match(/[?&]tid=([0-9a-f]+)/) || [])[1];
  var unseen = { hq: 0, news: 0, board: 0 };
  // The clock as the page was read, then as each tick says: protections
  // count down from it.
  var clk = {
    tick: Number(document.body.getAttribute("data-tick")) || 0,
    round: Number(document.body.getAttribute("data-round")) || 0,
    interval: Number(document.body.getAttribute("data-interval")) || 0,
    next: NaN // when the next tick is due, in ms; known on HQ and after a tick
  };
  var nextNode = document.querySelector('time[data-live="next"]');
  if (nextNode) { clk.next = Date.parse(nextNode.getAttribute("datetime")); }
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
    each('[data-protection="me"]', function (node) { protection(node, me.protectedUntil); });
    unread("messages", me.unreadMessages);
    unread("board", me.unreadFaction);
  }
  // unread sets a tab's unread count (private messages, the faction
  // channel), hidden at 0.
  function unread(tab, n) {
    if (typeof n !== "number") { return; }
    each('[data-unread="' + tab + '"]', function (node) {
      node.querySelector('[data-part="n"]').textContent = String(n);
      node.hidden = n === 0;
    });
  }
  function unreadOf(tab) {
    var node = document.querySelector('[data-unread="' + tab + '"] [data-part="n"]');
    return node ? Number(node.textContent) || 0 : 0;
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
  function iso(ms) { return new Date(ms).toISOString().replace(/\.\d+Z$/, "Z"); }
  // roughly and until say how far a tick is as the server writes it
  // (templates/view.go): "in 40 min", "in 3 h", "now", "2 h ago".
  function roughly(ms) {
    if (ms < 60e3) { return Math.floor(ms / 1e3) + " s"; }
    if (ms < 3600e3) { return Math.floor(ms / 60e3) + " min"; }
    if (ms < 48 * 3600e3) { return Math.floor(ms / 3600e3) + " h"; }
    return Math.floor(ms / 86400e3) + " d";
  }
  function until(tick) {
    var ms = (tick - clk.tick) * clk.interval;
    if (ms === 0) { return "now"; }
    return ms < 0 ? roughly(-ms) + " ago" : "in " + roughly(ms);
  }
  // restart plays the highlight of a node that changed again: adding the
  // class it already has would not.
  function restart(node) {
    node.classList.remove("live-new");
    void node.offsetWidth; // a reflow ends the old animation
    node.classList.add("live-new");
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
  // protection shows node, a protection from theft until tick (if given,
  // else its data-protected-until), with its countdown, and hides it once
  // the clock has reached it; false then.
  function protection(node, tick) {
    if (tick !== undefined) { node.setAttribute("data-protected-until", String(tick)); }
    tick = Number(node.getAttribute("data-protected-until"));
    var on = clk.tick < tick;
    node.hidden = !on;
    if (!on) { return false; }
    var part = function (name) { return node.querySelector('[data-part="' + name + '"]'); };
    if (part("tick")) { part("tick").textContent = String(tick); }
    if (part("in")) { part("in").textContent = until(tick); }
    if (part("at") && !isNaN(clk.next)) {
      var at = iso(clk.next + (tick - clk.tick - 1) * clk.interval);
      part("at").setAttribute("datetime", at);
      part("at").textContent = stamp(at);
    }
    return true;
  }
  // marker is a row's "protected until tick N (in X)", as the templates
  // write it (parts.templ, protection).
  function marker(tick) {
    var m = el("span", "protected");
    m.setAttribute("data-protected-until", String(tick));
    m.appendChild(document.createTextNode("protected until tick "));
    m.appendChild(el("span", "", "")).setAttribute("data-part", "tick");
    m.appendChild(document.createTextNode(" ("));
    m.appendChild(el("span", "", "")).setAttribute("data-part", "in");
    m.appendChild(document.createTextNode(")"));
    return m;
  }
  // protectRow puts the marker of a protection until tick in row, or takes
  // it out when there is none.
  function protectRow(row, tick) {
    var slot = row.querySelector("[data-protection-slot]");
    var m = row.querySelector(".protected[data-protected-until]");
    if (clk.tick >= tick) {
      if (m) { m.parentNode.removeChild(m); }
      return;
    }
    if (!m && slot) {
      m = marker(tick);
      if (slot.getAttribute("data-protection-slot") === "start") {
        slot.insertBefore(m, slot.firstChild);
      } else {
        slot.appendChild(document.createTextNode(" "));
        slot.appendChild(m);
      }
    }
    if (m) { protection(m, tick); }
  }
  // protections brings every protection on the page to the clock.
  function protections() {
    each("[data-protected-until]", function (node) {
      if (!protection(node) && node.classList.contains("protected")) { node.parentNode.removeChild(node); }
    });
  }

  // The ranking: rows follow each player's standing and keep their order
  // (Secrets, then name, as game.Rank: cash is private, and the player
  // events carry none), level players sharing a place; with every player
  // on the page, the sides' totals follow too.
  function standingOf(row, name) {
    var cell = row.querySelector('[data-standing="' + name + '"]');
    return cell ? Number(cell.textContent) : 0;
  }
  function rankRow(d) {
    var row = el("tr");
    row.setAttribute("data-player", String(d.id));
    row.setAttribute("data-name", d.name);
    row.setAttribute("data-faction", d.faction);
    var place = el("td", "num");
    place.setAttribute("data-standing", "place");
    var who = el("td");
    who.setAttribute("data-protection-slot", "");
    var link = el("a", "", d.name);
    link.setAttribute("href", "/game?function=profile&name=" + encodeURIComponent(d.name) + (tid ? "&tid=" + tid : ""));
    who.appendChild(link);
    who.appendChild(document.createTextNode(" "));
    who.appendChild(el("span", "badge " + d.faction.toLowerCase(), d.faction));
    var secrets = el("td", "num");
    secrets.setAttribute("data-standing", "secrets");
    [place, who, secrets].forEach(function (td) { row.appendChild(td); });
    return row;
  }
  function byStanding(a, b) {
    var an = a.getAttribute("data-name"), bn = b.getAttribute("data-name");
    return standingOf(b, "secrets") - standingOf(a, "secrets") ||
      (an.toLowerCase() < bn.toLowerCase() ? -1 : an.toLowerCase() > bn.toLowerCase() ? 1 : an < bn ? -1 : an > bn ? 1 : 0);
  }
  function rank(tbody, d) {
    var row = tbody.querySelector('tr[data-player="' + d.id + '"]');
    if (!row) {
      if (!tbody.hasAttribute("data-complete")) { return; } // on another page
      row = rankRow(d);
      var empty = tbody.querySelector("tr.empty-row");
      if (empty) { tbody.removeChild(empty); }
      tbody.appendChild(row);
    }
    row.querySelector('[data-standing="secrets"]').textContent = String(d.secrets);
    var rows = Array.prototype.slice.call(tbody.querySelectorAll("tr[data-player]")).sort(byStanding);
    // Players level on Secrets share a place (game.SharedPlaces); the
    // first row of a later page counts from the page's start.
    var offset = Number(tbody.getAttribute("data-ranking")) || 0, place = 0;
    rows.forEach(function (r, i) {
      tbody.appendChild(r);
      if (i === 0 || standingOf(r, "secrets") !== standingOf(rows[i - 1], "secrets")) { place = offset + i + 1; }
      r.querySelector('[data-standing="place"]').textContent = String(place);
    });
    if (tbody.hasAttribute("data-complete")) { totals(rows); }
    restart(row);
  }
  // reloadStandings brings the ranking's table and the sides' totals up to
  // date at a round's end, which starts every player afresh without a
  // player event for each: the page is read again and its table put in
  // place, then the player events that arrived meanwhile are applied on top
  // of it. Any other tick sends a player event for each player whose
  // Secrets it changed (the broker's winners), so the page reads nothing.
  var reloading = null;
  function reloadStandings() {
    if (!document.querySelector("tbody[data-ranking]") || !window.fetch || !window.DOMParser) { return; }
    if (reloading) { reloading.again = true; return; }
    reloading = { again: false, since: [] };
    fetch(window.location.href, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) { throw new Error("ranking: " + r.status); }
      return r.text();
    }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      ["tbody[data-ranking]", ".factions"].forEach(function (sel) {
        var now = document.querySelector(sel), fresh = doc.querySelector(sel);
        if (now && fresh) { now.parentNode.replaceChild(document.importNode(fresh, true), now); }
      });
      reloading.since.forEach(function (d) { each("tbody[data-ranking]", function (tbody) { rank(tbody, d); }); });
    }).catch(function () {}).then(function () {
      var again = reloading.again;
      reloading = null;
      if (again) { reloadStandings(); }
    });
  }

  // reloadRound brings any other open page up to date at a round's end:
  // the reset changes more than a tick's figures say (a trap, a sweep, a
  // bid, the dossiers, the protections), so the page is read again and
  // the content of its main put in place, all but the alert that says why
  // (and the flash). A page where the player is writing something is left
  // as it is.
  var rereading = false;
  function reloadRound() {
    if (document.querySelector("tbody[data-ranking]")) { reloadStandings(); return; }
    if (rereading || !window.fetch || !window.DOMParser) { return; }
    var writing = Array.prototype.some.call(document.querySelectorAll("textarea"), function (t) { return t.value !== ""; });
    if (writing) { return; }
    rereading = true;
    fetch(window.location.href, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) { throw new Error("round: " + r.status); }
      return r.text();
    }).then(function (html) {
      var fresh = new DOMParser().parseFromString(html, "text/html").getElementById("main");
      var now = document.getElementById("main");
      if (!fresh || !now) { return; }
      var kept = function (n) { return n.nodeType === 1 && (n.hasAttribute("data-live-alert") || n.classList.contains("flash")); };
      Array.prototype.slice.call(now.childNodes).forEach(function (n) { if (!kept(n)) { now.removeChild(n); } });
      Array.prototype.slice.call(fresh.childNodes).forEach(function (n) {
        if (!kept(n)) { now.appendChild(document.importNode(n, true)); }
      });
      protections();
      if (window.StateSecretsCountdown) { window.StateSecretsCountdown(); }
    }).catch(function () {}).then(function () { rereading = false; });
  }

  // totals sums the sides from every row, and says who leads as
  // game.Ranking.Winner does: on Secrets per player (level: nobody).
  function totals(rows) {
    var sides = {};
    rows.forEach(function (r) {
      var f = r.getAttribute("data-faction");
      var t = sides[f] || (sides[f] = { players: 0, secrets: 0 });
      t.players += 1; t.secrets += standingOf(r, "secrets");
    });
    var fbi = sides.FBI || { players: 0, secrets: 0 }, mib = sides.MIB || { players: 0, secrets: 0 };
    var na = Math.max(1, fbi.players), nb = Math.max(1, mib.players);
    var lead = fbi.secrets * nb - mib.secrets * na;
    each("[data-faction-total]", function (card) {
      var f = card.getAttribute("data-faction-total"), t = f === "FBI" ? fbi : mib;
      var put = function (name, v) {
        var n = card.querySelector('[data-total="' + name + '"]');
        if (n) { n.textContent = v; }
      };
      put("score", (t.players ? t.secrets / t.players : 0).toFixed(1));
      put("secrets", String(t.secrets)); put("players", String(t.players));
      var badge = card.querySelector(".lead");
      if (badge) { badge.hidden = !(f === "FBI" ? lead > 0 : lead < 0); }
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

  // reloadThread brings an open conversation up to date when a private
  // message arrives (its feed line says who wrote): the page is read again
  // and its thread put in place, which also marks the message read.
  function reloadThread(text) {
    var thread = document.querySelector("ol.thread");
    if (!thread || !window.fetch || !window.DOMParser || text.indexOf("A private message from ") !== 0) { return; }
    fetch(window.location.href, { credentials: "same-origin" }).then(function (r) {
      if (!r.ok) { throw new Error("thread: " + r.status); }
      return r.text();
    }).then(function (html) {
      var doc = new DOMParser().parseFromString(html, "text/html");
      var fresh = doc.querySelector("ol.thread"), now = document.querySelector("ol.thread");
      if (fresh && now) { now.parentNode.replaceChild(document.importNode(fresh, true), now); }
      var n = doc.querySelector('[data-unread="messages"] [data-part="n"]');
      if (n) { unread("messages", Number(n.textContent) || 0); }
    }).catch(function () {});
  }
  on("feed", function (d) {
    figures(d.me);
    if (page === "messages") { reloadThread(d.text); }
    prepend("feed", function () { return line(d.text, d.at); });
    badge("hq");
    if (d.alert) { alertMe(d.text); }
  });
  // A news line the same as the newest one adds to its count instead (the
  // news template folds such runs: newsFeed).
  on("news", function (d) {
    var folded = false;
    each('[data-live-list="news"]', function (list) {
      var top = list.querySelector("li:not(.empty)"), text = top && top.querySelector("span");
      if (!text || text.textContent !== d.text) { return; }
      var times = (Number(top.getAttribute("data-times")) || 1) + 1;
      top.setAttribute("data-times", String(times));
      var count = top.querySelector(".times");
      if (!count) {
        count = el("span", "times");
        top.appendChild(document.createTextNode(" "));
        top.appendChild(count);
      }
      count.textContent = "\u00d7" + times;
      top.replaceChild(time(d.at), top.querySelector("time"));
      restart(top);
      folded = true;
    });
    if (!folded) { prepend("news", function () { return line(d.text, d.at); }); }
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
    if (d.factionOnly && d.author !== (document.querySelector(".agent strong") || {}).textContent && page !== "board") {
      unread("board", unreadOf("board") + 1);
    }
  });
  on("tick", function (d) {
    clk.tick = d.tick;
    if (d.interval) { clk.interval = d.interval; }
    clk.next = Date.parse(d.next);
    figures(d.me);
    protections();
    if (d.round !== clk.round) { reloadRound(); }
    clk.round = d.round;
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
      var heat = row.querySelector('[data-live="heat"]');
      if (heat) { heat.textContent = d.heat + "%"; }
      offerFollows(row, d.price);
      restart(row);
    });
  });
  // The haggle form sends the price the player saw with the offer. An offer
  // left at the asking price (a sure buy) follows the price, seen price and
  // all, so it stays a sure buy; an offer the player typed keeps the price
  // it was typed against, so a rise past it is refused, saying so, rather
  // than silently turned into a worse gamble (a fall goes through).
  function offerFollows(row, now) {
    var seen = row.querySelector('input[name="price"]'), offer = row.querySelector('input[name="offer"]');
    row.setAttribute("data-price", String(now));
    if (!seen || !offer) { return; }
    if (Number(offer.value) === Number(seen.value)) {
      offer.value = String(now);
      seen.value = String(now);
    }
  }
  document.addEventListener("input", function (ev) {
    var offer = ev.target, row = offer.closest && offer.closest("[data-source]");
    if (offer.name !== "offer" || !row || !row.hasAttribute("data-price")) { return; }
    var seen = row.querySelector('input[name="price"]');
    if (seen) { seen.value = row.getAttribute("data-price"); } // typed against the price shown now
  });
  on("player", function (d) {
    if (reloading) { reloading.since.push(d); }
    each("tbody[data-ranking]", function (tbody) { rank(tbody, d); });
    each('tr[data-player="' + d.id + '"]', function (row) { protectRow(row, d.protectedUntil); });
  });
  // While the stream is down (the server restarts, the network went) a
  // notice says so; EventSource reconnects by itself every few seconds,
  // and the notice goes when it is back. It waits lostNoticeAfter first,
  // so a stream that drops and comes back at once (a page loading while
  // the server is busy, a proxy's idle cut) shows nothing over the page.
  // A stream the browser gave up on (CLOSED) asks for a reload at once.
  function status(text) {
    each("[data-live-status]", function (node) {
      node.textContent = text || "";
      node.hidden = !text;
    });
  }
  // renewing: the server ended the stream at its lifetime and the browser
  // reconnects at once; no notice for that.
  var renewing = false, lostNoticeAfter = 3000, lostTimer = 0;
  es.addEventListener("open", function () {
    renewing = false;
    clearTimeout(lostTimer);
    lostTimer = 0;
    status("");
  });
  es.addEventListener("error", function () {
    if (es.readyState === EventSource.CLOSED) {
      clearTimeout(lostTimer);
      status("Live updates stopped: reload the page to resume them.");
      return;
    }
    if (renewing || lostTimer) { return; }
    lostTimer = setTimeout(function () {
      lostTimer = 0;
      if (es.readyState === EventSource.CONNECTING) { status("The connection to headquarters was lost: reconnecting…"); }
    }, lostNoticeAfter);
  });
  on("reset", function () { window.location.reload(); });
  on("renew", function () { renewing = true; });
  // The server says this page must not reconnect: the session ended
  // (logout here or everywhere, expiry), or too many live pages are open
  // (this is the oldest tab of the session, or the address has too many).
  function stop(text) {
    clearTimeout(lostTimer);
    es.close();
    status(text);
  }
  on("logout", function () {
    stop("You were logged out (here or on another device): live updates stopped. Log in again to resume them.");
  });
  on("stop", function (d) {
    stop(d.reason === "address" ?
      "Live updates are off on this page: too many live pages are open from your address. Reload to try again." :
      "Live updates are paused on this tab: you have too many tabs open. Reload it to resume here.");
  });
})();
