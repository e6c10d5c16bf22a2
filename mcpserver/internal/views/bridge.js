// The view's side of the MCP Apps protocol, written by hand: JSON-RPC over
// postMessage with the host (window.parent). The view asks ui/initialize,
// says ui/notifications/initialized, then draws each
// ui/notifications/tool-result it receives. It asks the host to call no
// tool: a view shows an answer, it never acts on one.
"use strict";
var korral = (function () {
  var nextID = 1, pending = {}, onResult = null;
  function send(msg) { window.parent.postMessage(msg, "*"); }
  function request(method, params) {
    var id = nextID++;
    send({ jsonrpc: "2.0", id: id, method: method, params: params });
    return new Promise(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
  }
  function notify(method, params) { send({ jsonrpc: "2.0", method: method, params: params || {} }); }
  function reply(id, result) { send({ jsonrpc: "2.0", id: id, result: result }); }

  window.addEventListener("message", function (ev) {
    if (ev.source !== window.parent) return;
    var m = ev.data;
    if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
    if (m.method === undefined) {
      var p = pending[m.id];
      if (p) { delete pending[m.id]; if (m.error) p.reject(m.error); else p.resolve(m.result); }
      return;
    }
    if (m.method === "ui/notifications/tool-result") {
      if (onResult) onResult(m.params || {});
      layout();
      resize();
    } else if (m.method === "ui/notifications/host-context-changed") {
      theme(m.params);
      layout();
    } else if (m.id !== undefined) {
      if (m.method === "ping" || m.method === "ui/resource-teardown") reply(m.id, {});
      else send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "method not found" } });
    }
  });

  // theme applies the host's context: its light or dark theme, and its
  // style variables (the ext-apps names, such as --color-text-primary),
  // which style.css reads with fallbacks of its own. Only custom properties
  // are taken, and only string values.
  function theme(ctx) {
    if (!ctx || typeof ctx !== "object") return;
    var root = document.documentElement;
    if (ctx.theme === "light" || ctx.theme === "dark") root.setAttribute("data-theme", ctx.theme);
    var vars = ctx.styles && ctx.styles.variables;
    if (!vars || typeof vars !== "object") return;
    for (var k in vars) {
      if (/^--[a-z0-9-]+$/.test(k) && typeof vars[k] === "string") root.style.setProperty(k, vars[k]);
    }
  }

  // A chart slot draws its SVG at the width it is shown, so that one SVG
  // unit is one CSS pixel: labels keep their size in a chat column.
  var slots = [];
  function slot(draw) {
    var div = document.createElement("div");
    div.className = "chart-slot";
    slots.push({ div: div, draw: draw, width: -1 });
    return div;
  }
  function layout() {
    slots = slots.filter(function (s) { return s.div.isConnected; });
    slots.forEach(function (s) {
      var w = Math.floor(s.div.clientWidth);
      if (w <= 0 || w === s.width) return;
      s.width = w;
      s.div.textContent = "";
      s.div.appendChild(s.draw(w));
    });
  }
  var resizing = 0;
  window.addEventListener("resize", function () {
    clearTimeout(resizing);
    resizing = setTimeout(function () { layout(); resize(); }, 100);
  });

  function resize() {
    var el = document.documentElement;
    notify("ui/notifications/size-changed", { width: Math.ceil(el.scrollWidth), height: Math.ceil(el.scrollHeight) });
  }

  // envelope returns the tool's envelope ({ok, data} or {ok: false, error})
  // from a tool result: its structured content, else (a tool error carries
  // none) the JSON text of its first content block.
  function envelope(result) {
    if (result.structuredContent && typeof result.structuredContent === "object") return result.structuredContent;
    var c = (result.content || [])[0];
    if (c && c.type === "text") { try { return JSON.parse(c.text); } catch (e) { /* not JSON */ } }
    return null;
  }

  // Text from StoreLink reaches the model fenced as
  // ⟦untrusted:TAG⟧…⟦/TAG⟧. A person reads it without the fence, marked, and
  // always as text: every string goes through textContent, never through
// the HTML parser.
  var fence = /^\u27E6untrusted:([0-9a-f]+)\u27E7([\s\S]*)\u27E6\/\1\u27E7$/;
  // Control, format and bidirectional characters are written as visible
  // escapes (\u202E), as the console writes them (package textsafe), so
  // that a name cannot reverse the reading order of the text around it.
  // Tabs and line breaks stay: the exact request is shown as lines.
  var hidden = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202E\u2060-\u206F\uFEFF\uFFF9-\uFFFB]/g;
  function visible(s) {
    return s.replace(hidden, function (c) { return "\\u" + ("000" + c.charCodeAt(0).toString(16).toUpperCase()).slice(-4); });
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) {
      var s = String(text), m = fence.exec(s);
      if (m) { s = m[2]; e.classList.add("untrusted"); e.title = "text from StoreLink"; }
      e.textContent = visible(s);
    }
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
    return parent;
  }
  function facts(pairs) {
    var dl = el("dl", "facts");
    pairs.forEach(function (p) {
      if (p[1] === undefined || p[1] === null || p[1] === "") return;
      var dd = p[1] instanceof Node ? add(el("dd"), p[1]) : el("dd", null, p[1]);
      add(dl, el("dt", null, p[0]), dd);
    });
    return dl;
  }
  // when shows an RFC 3339 time in the store's own wall time, as written:
  // "Fri 27 Nov 17:55".
  var days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
  var months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  function wall(ts) {
    var m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(ts || "");
    if (!m) return null;
    return { day: Date.UTC(+m[1], +m[2] - 1, +m[3]), minutes: +m[4] * 60 + +m[5], hm: m[4] + ":" + m[5] };
  }
  function when(ts) {
    var w = wall(ts);
    if (!w) return ts || "";
    var d = new Date(w.day);
    return days[d.getUTCDay()] + " " + d.getUTCDate() + " " + months[d.getUTCMonth()] + " " + w.hm;
  }
  // An error's remediation is written for the model; the person reads the
  // message.
  function showError(root, env) {
    var e = (env && env.error) || { code: "NO_RESULT", message: "The tool result carried no answer." };
    add(root, add(el("section", "panel"), el("h2", null, "No answer"), el("p", "error-message", e.message),
      el("p", "muted small", "Error " + e.code)));
  }
  // demo says, in a person's words, that the answer came from the embedded
  // demo StoreLink (the answer's demo_notice is written for the model).
  function demo(root, d) {
    if (d.demo_notice) add(root, el("p", "caveat demo", "Demo data from the embedded StoreLink: not Korral's data, and nothing was ordered at Korral."));
  }
  function start(draw) {
    onResult = function (result) {
      var root = document.getElementById("root");
      root.textContent = "";
      var env = envelope(result);
      if (!env || env.ok !== true || !env.data) showError(root, env);
      else { draw(root, env.data); demo(root, env.data); }
    };
    request("ui/initialize", {
      appInfo: { name: "korral-storelink-view", version: "1" },
      appCapabilities: {},
      protocolVersion: "2026-01-26"
    }).then(function (res) { theme(res && res.hostContext); notify("ui/notifications/initialized", {}); resize(); });
  }
  // The flags in a buyer's words, written in from package projection
  // (views.go): FLAG_WORDS for the data quality flags, DAY_WORDS for the
  // evidence days' flags.
  var FLAG_WORDS = {{FLAG_WORDS}};
  var DAY_WORDS = {{DAY_WORDS}};
  return { FLAG_WORDS: FLAG_WORDS, DAY_WORDS: DAY_WORDS, el: el, add: add, facts: facts, when: when, wall: wall, start: start, request: request, visible: visible, slot: slot };
})();
