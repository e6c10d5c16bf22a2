// The stock risk view: one panel per store of korral_check_stock_risk's
// answer. Each leads with the decision in the buyer's words (the answer's
// headline), then today's projection: on hand falling from the count
// through the trading hours to the stockout window, the close and the
// delivery. The daily sales history comes beneath as context, with its
// flagged days drawn and every flag named; the figures fold away last.
// The history chart keeps the approvals console's geometry
// (mcpserver/console/chart.go) at its full width and is drawn narrower in a
// chat column, one SVG unit to a CSS pixel (ADR 0041).
(function () {
  var el = korral.el, add = korral.add, facts = korral.facts, when = korral.when, wall = korral.wall, visible = korral.visible;
  var W = 720, H = 300, LEFT = 56, RIGHT = W - 16, TOP = 28, BOTTOM = H - 56, MAX_AHEAD = 14, DAY = 86400000;
  // Days whose sales do not show demand as it was, as the console marks them.
  var FLAGGED = ["closed", "zero_sales", "possible_stockout", "bulk_dominated", "no_history"];
  var SVG = "http://www.w3.org/2000/svg";
  // The words for the answer's closed sets. A data quality flag reads as
  // the answer's own note (data_quality_notes) where it carries one, else
  // as korral.FLAG_WORDS; a day's flags as korral.DAY_WORDS (both from
  // package projection, written into bridge.js by views.go).
  var DAY_WORDS = korral.DAY_WORDS;
  var WORDS = {
    stockout: { "true": "Runs out before close", "false": "Lasts until close", unknown: "Cannot tell if it lasts" },
    arrival: { "true": "Delivery in time", "false": "Delivery too late", unknown: "Delivery timing unknown" },
    confidence: { high: "High confidence", medium: "Medium confidence", low: "Low confidence", none: "No projection" }
  };

  function svg(tag, attrs, text) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = visible(String(text));
    return e;
  }
  function badge(kind, value) { return el("span", "badge " + kind + "-" + value, (WORDS[kind] || {})[value] || value); }
  // label is a text that stays inside [0, w]: centred on x when it fits,
  // else pushed to the nearer edge (about 7 px per character at 12 px).
  function label(w, x, y, text, cls) {
    var est = String(text).length * 7, anchor = "middle";
    if (x - est / 2 < 2) { anchor = "start"; x = Math.max(x, 2); }
    if (x + est / 2 > w - 2) { anchor = "end"; x = Math.min(x, w - 2); }
    return svg("text", { x: x, y: y, "text-anchor": anchor, "class": cls || "" }, text);
  }
  // niceScale: the axis top and step for values up to v, about four steps
  // of 1, 2 or 5 times a power of ten (console: niceScale).
  function niceScale(v) {
    var raw = v / 4, mag = Math.pow(10, Math.floor(Math.log10(raw))), step = mag;
    for (var m of [1, 2, 5, 10]) { if (m * mag >= raw) { step = m * mag; break; } }
    if (step < 1) step = 1;
    return [Math.ceil(v / step) * step, step];
  }
  function yAxis(s, left, right, top, bottom, max) {
    var sc = niceScale(Math.max(max, 1)), yAt = function (v) { return bottom - Math.max(0, v) / sc[0] * (bottom - top); };
    for (var v = 0; v <= sc[0] + sc[1] / 2; v += sc[1]) {
      add(s, svg("line", { "class": "axis", x1: left, x2: right, y1: yAt(v), y2: yAt(v) }),
        svg("text", { x: left - 6, y: yAt(v) + 4, "text-anchor": "end" }, String(v)));
    }
    return yAt;
  }
  // clock reads closes_at_today, which the answer gives as "22:00".
  var clock = /^(\d{1,2}):(\d{2})$/;
  function hm(ts) { var w = wall(ts); return w ? w.hm : clock.test(ts || "") ? ts : ""; }

  // headline is the answer's headline (projection.Headline on the server),
  // so the view, the console and the agent read the same sentence.
  function headline(r) { return typeof r.headline === "string" ? r.headline : ""; }
  function tone(r) {
    if (r.will_stockout_before_close_today === "true" || r.arrival_beats_stockout === "false") return "tone-bad";
    return r.will_stockout_before_close_today === "unknown" ? "tone-warn" : "tone-good";
  }

  // projection draws today: x from the count (or now) to the close, y the
  // units on hand. The sold line runs from the count to now; from now the
  // stock falls at the fast and the slow sell rate to the stockout window.
  // What falls after the chart's end (a stockout tomorrow, a delivery days
  // away) is named at its right edge.
  function projection(r, width) {
    var w = Math.min(width, W), h = 250, left = 40, right = w - 8, top = 56, bottom = h - 30;
    var a = wall(r.as_of), base = a ? a.day : 0;
    var m = function (ts) {
      var x = wall(ts), c = clock.exec(ts || "");
      return x ? (x.day - base) / 60000 + x.minutes : c ? +c[1] * 60 + +c[2] : null;
    };
    var win = r.stockout_window || [], now = m(r.as_of), count = m(r.on_hand_as_of), close = m(r.closes_at_today);
    var lo = m(win[0]), hi = win[1] ? m(win[1]) : lo, del = m(r.earliest_delivery), rate = r.units_per_trading_hour;
    var onNow = r.estimated_on_hand_now, start = count !== null && count >= 0 && count < now ? count : now;
    var end = close !== null && close > now ? close : hi !== null && hi > now ? hi : now + 480;
    if (end - start < 60) start = end - 60;
    var span = end - start, xAt = function (t) { return left + (Math.max(start, Math.min(t, end)) - start) / span * (right - left); };
    var s = svg("svg", { "class": "chart projection", viewBox: "0 0 " + w + " " + h, width: w, height: h, role: "img" });
    add(s, svg("title", {}, headline(r)));
    var yAt = yAxis(s, left, right, top, bottom, Math.max(r.on_hand_units, onNow, 1));
    if (lo !== null && lo <= end) {
      var x0 = xAt(lo);
      add(s, svg("rect", { "class": "window", x: x0, y: top, width: Math.max(xAt(hi) - x0, 3), height: bottom - top }));
    }
    var soldTo = function (zero, r1) {
      if (zero !== null && zero <= end) return [[now, onNow], [zero, 0], [end, 0]];
      return r1 ? [[now, onNow], [end, onNow - r1 * (end - now) / 60]] : null;
    };
    var pts = function (list) { return list.map(function (p) { return xAt(p[0]).toFixed(1) + "," + yAt(p[1]).toFixed(1); }).join(" "); };
    var fast = soldTo(lo, rate && rate[1]), slow = soldTo(hi, rate && rate[0]);
    if (fast && slow) add(s, svg("polygon", { "class": "fan", points: pts(fast) + " " + pts(slow.slice().reverse()) }));
    if (fast) add(s, svg("polyline", { "class": "fast", points: pts(fast) }));
    if (slow) add(s, svg("polyline", { "class": "slow", points: pts(slow) }));
    if (count !== null && count < now) add(s, svg("polyline", { "class": "sold", points: pts([[count, r.on_hand_units], [now, onNow]]) }));
    add(s, svg("line", { "class": "now", x1: xAt(now), x2: xAt(now), y1: top, y2: bottom }));
    add(s, svg("line", { "class": "axis", x1: left, x2: right, y1: bottom, y2: bottom }));
    // The time axis: whole hours, far enough apart to read, and "now".
    var step = [60, 120, 180, 240, 360].find(function (st) { return st / span * (right - left) >= 48; }) || 720;
    for (var t = Math.ceil(start / step) * step; t <= end; t += step) {
      if (Math.abs(xAt(t) - xAt(now)) > 60) add(s, label(w, xAt(t), bottom + 18, String(Math.floor(t / 60) % 24).padStart(2, "0") + ":00"));
    }
    add(s, label(w, xAt(now), bottom + 18, "now " + hm(r.as_of)));
    // One row above the plot for each marker, so that none overlaps.
    var day = function (ts) { var x = wall(ts); return x && x.day === base ? hm(ts) : when(ts); };
    if (lo !== null) {
      var sameDay = win[1] && (wall(win[1]) || {}).day === (wall(win[0]) || {}).day;
      var text = "runs out " + day(win[0]) + (hi === lo ? "" : "–" + (sameDay ? hm(win[1]) : day(win[1])));
      add(s, lo <= end ? label(w, xAt((lo + hi) / 2), 14, text, "window-label") : label(w, right, 14, text + " →", "window-label"));
    }
    if (close !== null && close >= start && close <= end) {
      add(s, svg("line", { "class": "close", x1: xAt(close), x2: xAt(close), y1: top - 6, y2: bottom }),
        label(w, xAt(close), 30, "close " + hm(r.closes_at_today) + (r.units_short_by_close > 0 ? ": " + r.units_short_by_close + " short" : ""), "close-label"));
    }
    if (del !== null) {
      var inside = del <= end, xd = inside ? xAt(del) : right;
      add(s, svg("line", { "class": "delivery" + (inside ? "" : " later"), x1: xd, x2: xd, y1: inside ? top - 6 : bottom - 14, y2: bottom }),
        label(w, xd, 46, "delivery " + day(r.earliest_delivery) + (inside ? "" : " →"), "delivery-label"));
    }
    return s;
  }

  function legend(items) {
    var l = el("div", "legend");
    items.forEach(function (it) { add(l, add(el("span"), el("i", it[0]), document.createTextNode(it[1]))); });
    return l;
  }

  // dayFlags is each evidence row's day flags, as a list.
  function dayFlags(row, iFlags) {
    var flags = (iFlags >= 0 && row[iFlags]) || [];
    return typeof flags === "string" ? flags.split(/[,\s]+/).filter(Boolean) : flags;
  }

  // history draws the daily sales bars; a flagged day is drawn in the flag
  // colour, at least 3 px tall even with no sale, with a mark above it.
  function history(r, width) {
    var w = Math.min(width, W), right = w - (W - RIGHT), h = Math.min(H, Math.max(200, w * 0.5)), bottom = h - (H - BOTTOM);
    var cols = r.evidence.columns, rows = r.evidence.rows, n = rows.length;
    var iDay = cols.indexOf("day"), iUnits = cols.indexOf("units_sold"), iFlags = cols.indexOf("flags");
    var s = svg("svg", { "class": "chart history", viewBox: "0 0 " + w + " " + h, width: w, height: h, role: "img" });
    add(s, svg("title", {}, "Units sold per day over the last " + n + " days"));
    var max = 0;
    rows.forEach(function (row) { max = Math.max(max, +row[iUnits] || 0); });
    var yAt = yAxis(s, LEFT, right, TOP, bottom, max), slot = (right - LEFT) / n;
    // A label every few days, far enough apart that the last one, pushed
    // inside the edge, keeps clear of the one before.
    var every = Math.max(1, Math.ceil(72 / slot));
    rows.forEach(function (row, i) {
      var units = +row[iUnits] || 0, flags = dayFlags(row, iFlags), x = LEFT + i * slot + slot * 0.15;
      var flagged = flags.some(function (f) { return FLAGGED.indexOf(f) >= 0; });
      var y = Math.min(yAt(units), bottom - (flagged ? 3 : 0));
      var bar = svg("rect", { "class": "bar" + (flagged ? " flagged" : ""), x: x, y: y, width: slot * 0.7, height: bottom - y });
      add(bar, svg("title", {}, row[iDay] + ": " + units + (units === 1 ? " unit" : " units") + " sold" +
        (flags.length ? " (" + flags.map(function (f) { return DAY_WORDS[f] || f; }).join(", ") + ")" : "")));
      add(s, bar);
      if (flagged) {
        var cx = x + slot * 0.35;
        add(s, svg("path", { "class": "flag-mark", d: "M" + (cx - 5) + " " + (y - 11) + " h10 l-5 8 z" }));
      }
      if ((n - 1 - i) % every === 0) add(s, label(w, LEFT + (i + 0.5) * slot, bottom + 18, String(row[iDay])));
    });
    add(s, svg("line", { "class": "axis", x1: LEFT, x2: right, y1: bottom, y2: bottom }));
    return s;
  }

  // notes is each data quality flag in words: the answer's own notes,
  // else this view's words for the flag, then the flagged days by date.
  function notes(r) {
    var ul = el("ul", "flags"), given = r.data_quality_notes;
    var list = Array.isArray(given) && given.length ? given : (r.data_quality_flags || []);
    list.forEach(function (f) {
      var text = typeof f === "string" ? (given === list ? f : korral.FLAG_WORDS[f] || f.replace(/_/g, " ")) : f.text || f.note || f.message || korral.FLAG_WORDS[f.flag] || "";
      add(ul, el("li", null, text));
    });
    var cols = (r.evidence || {}).columns || [], iDay = cols.indexOf("day"), iFlags = cols.indexOf("flags"), days = [];
    ((r.evidence || {}).rows || []).forEach(function (row) {
      var f = dayFlags(row, iFlags).filter(function (x) { return FLAGGED.indexOf(x) >= 0; });
      if (f.length) days.push(row[iDay] + " (" + f.map(function (x) { return DAY_WORDS[x] || x; }).join(", ") + ")");
    });
    if (days.length) add(ul, el("li", "flagged-days", "Flagged days, drawn in orange: " + days.join("; ") + "."));
    return ul.childNodes.length ? ul : el("p", "muted flags-none", "No data quality problems found.");
  }

  function panel(st) {
    var sec = el("section", "panel store");
    var h = add(el("h2"), el("span", "store-name", st.store_name || "store " + st.store_id));
    if (st.store_name) add(h, el("span", "muted", " (store " + st.store_id + ")"));
    add(sec, h);
    if (st.error || !st.risk) return add(sec, el("p", "error-message", (st.error || {}).message || "No answer for this store."));
    var r = st.risk, win = r.stockout_window || [];
    add(sec, el("p", "headline " + tone(r), headline(r)),
      add(el("div", "verdicts"), badge("stockout", r.will_stockout_before_close_today), badge("arrival", r.arrival_beats_stockout), badge("confidence", r.confidence)));
    if (r.as_of) {
      add(sec, korral.slot(function (w) { return projection(r, w); }),
        legend([["line", "sold since the count"], ["fast", "fast and slow sell rate"], ["window", "stockout window"], ["close", "close"], ["delivery", "delivery"]]));
    }
    if (r.evidence && r.evidence.rows && r.evidence.rows.length) {
      add(sec, el("h3", null, "Sales, last " + r.evidence.rows.length + " days"), korral.slot(function (w) { return history(r, w); }),
        legend([["bar", "units sold per day"], ["flag", "flagged day"]]));
    }
    add(sec, el("h3", null, "Data quality"), notes(r), el("p", "caveat", r.caveat));
    var d = add(el("details", "figures"), el("summary", null, "All figures"));
    add(d, facts([
      ["stockout window", win[0] ? when(win[0]) + " to " + when(win[1] || win[0]) : "none projected"],
      ["earliest delivery", r.earliest_delivery ? when(r.earliest_delivery) : "unknown"],
      ["on hand", r.on_hand_units + " (counted " + when(r.on_hand_as_of) + ", about " + r.estimated_on_hand_now + " now)"],
      ["short by close", r.units_short_by_close],
      ["closes today", r.closes_at_today ? when(r.closes_at_today) : "closed today"],
      ["sell rate", r.units_per_trading_hour ? r.units_per_trading_hour.join(" to ") + " units per trading hour" : "not projected"],
      ["sold in 24 h", r.units_sold_last_24h],
      ["how the rate was found", r.velocity_basis]
    ]));
    return add(sec, d);
  }

  // sweepPanel is a chain sweep's whole chain (store_ids ["all"]): the
  // stores by outcome in a sentence, the stores at risk beyond the detailed
  // panels, and the stores that could not be checked.
  function sweepPanel(sw, detailed) {
    var o = sw.outcomes || {}, sec = el("section", "panel sweep"), parts = [];
    // Each outcome with its verb for one store and for several.
    [["stockout_before_close", "runs out before close", "run out before close"], ["flagged_data", "has flagged data", "have flagged data"],
      ["cannot_tell", "cannot tell", "cannot tell"], ["no_stockout", "lasts until close", "last until close"],
      ["not_checked", "could not be checked", "could not be checked"]].forEach(function (p) {
      if (o[p[0]] || p[0] === "stockout_before_close" && o[p[0]] !== undefined) parts.push(o[p[0]] + " " + (o[p[0]] === 1 ? p[1] : p[2]));
    });
    add(sec, el("h2", null, "Chain sweep: " + sw.stores_checked + " stores checked"),
      el("p", "headline sweep-headline " + (o.stockout_before_close ? "tone-bad" : o.cannot_tell || o.flagged_data ? "tone-warn" : "tone-good"), parts.join(", ") + "."),
      el("p", "muted", detailed === 1 ? "Below: the store most at risk." : detailed ? "Below: the " + detailed + " most at risk." : "No store at risk."));
    var t = sw.more_at_risk || {}, rows = t.rows || [], cols = t.columns || [];
    if (rows.length) {
      add(sec, el("h3", null, "More stores at risk"));
      var table = el("table", "more-at-risk"), head = el("tr");
      cols.forEach(function (c) { add(head, el("th", null, c.replace(/_/g, " "))); });
      add(table, head);
      rows.forEach(function (row) {
        var tr = el("tr");
        row.forEach(function (cell, i) {
          add(tr, el("td", null, /^stockout|delivery/.test(cols[i]) && cell ? when(cell) : cell === null ? "" : cell));
        });
        add(table, tr);
      });
      add(sec, add(el("div", "table-wrap"), table));
    }
    if (sw.at_risk_not_listed) add(sec, el("p", "muted", sw.at_risk_not_listed + " more at risk, not listed: ask for them by store."));
    (sw.errors || []).forEach(function (e) {
      add(sec, el("p", "error-message", "Not checked (" + (e.store_ids || []).join(", ") + "): " + e.message));
    });
    return sec;
  }

  korral.start(function (root, d) {
    var name = d.product && d.product.name;
    add(root, add(el("h1"), el("span", null, "Stock risk: "), el("span", "product-name", name || d.sku)));
    var sub = add(el("p", "muted small"), document.createTextNode("SKU " + d.sku));
    if (d.product && d.product.supplier) add(sub, document.createTextNode(" · supplier "), el("span", "supplier", d.product.supplier));
    if (d.product && d.product.case_pack > 1) add(sub, document.createTextNode(" · cases of " + d.product.case_pack));
    add(root, sub);
    if (d.sweep) add(root, sweepPanel(d.sweep, (d.stores || []).length));
    (d.stores || []).forEach(function (st) { add(root, panel(st)); });
  });
})();
