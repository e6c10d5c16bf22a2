// The stock risk view: one panel per store of korral_check_stock_risk's
// answer, each with the chart the approvals console draws for an order
// (mcpserver/console/chart.go): the same geometry, drawn here from the
// answer's evidence rows. The x axis is store-local days, one slot per
// evidence row, then the days ahead up to the later of the stockout window
// and the earliest delivery (at most 14); the y axis is units, so a day's
// sales and the stock on hand compare directly.
(function () {
  var el = korral.el, add = korral.add, facts = korral.facts, when = korral.when, wall = korral.wall, visible = korral.visible;
  var W = 720, H = 300, LEFT = 56, RIGHT = W - 16, TOP = 28, BOTTOM = H - 56, MAX_AHEAD = 14, DAY = 86400000;
  // Days whose sales do not show demand as it was, as the console marks them.
  var FLAGGED = ["closed", "zero_sales", "possible_stockout", "bulk_dominated", "no_history"];
  var SVG = "http://www.w3.org/2000/svg";

  function svg(tag, attrs, text) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = visible(String(text));
    return e;
  }
  // niceScale: the axis top and step for values up to v, about four steps
  // of 1, 2 or 5 times a power of ten (console: niceScale).
  function niceScale(v) {
    var raw = v / 4, mag = Math.pow(10, Math.floor(Math.log10(raw))), step = mag;
    for (var m of [1, 2, 5, 10]) { if (m * mag >= raw) { step = m * mag; break; } }
    if (step < 1) step = 1;
    return [Math.ceil(v / step) * step, step];
  }
  // rowDays dates the evidence rows, labelled "Fri 13": the last is the
  // latest such day before as_of's day, each earlier one the latest before
  // the row after it.
  function rowDays(labels, asOf) {
    var a = wall(asOf), out = new Array(labels.length);
    var cursor = (a ? a.day : Date.UTC(2000, 0, 1)) - DAY;
    for (var i = labels.length - 1; i >= 0; i--) {
      var m = /(\d{1,2})\s*$/.exec(String(labels[i])), n = m ? +m[1] : 0;
      for (var k = 0; k < 40 && n && new Date(cursor).getUTCDate() !== n; k++) cursor -= DAY;
      out[i] = cursor;
      cursor -= DAY;
    }
    return out;
  }

  function chart(store, r, productName) {
    var cols = r.evidence.columns, rows = r.evidence.rows, n = rows.length;
    var ci = function (name) { return cols.indexOf(name); };
    var iDay = ci("day"), iUnits = ci("units_sold"), iFlags = ci("flags");
    var dates = rowDays(rows.map(function (row) { return row[iDay]; }), r.as_of), base = dates[0];
    var offset = function (ts) {
      var w = wall(ts);
      return w ? (w.day - base) / DAY + w.minutes / 1440 : null;
    };
    var win = r.stockout_window || [], lo = offset(win[0]), hi = offset(win[1]), del = offset(r.earliest_delivery);
    var slots = n;
    [hi === null ? lo : hi, del].forEach(function (o) {
      if (o !== null) slots = Math.max(slots, Math.min(Math.ceil(o + 1e-9), n + MAX_AHEAD));
    });
    var slot = (RIGHT - LEFT) / slots;
    var xAt = function (o) { return LEFT + Math.max(0, Math.min(o, slots)) * slot; };
    var maxUnits = 0;
    rows.forEach(function (row) { maxUnits = Math.max(maxUnits, +row[iUnits] || 0); });
    var scale = niceScale(Math.max(maxUnits, r.on_hand_units || 0, 1)), top = scale[0], step = scale[1];
    var yAt = function (v) { return BOTTOM - Math.max(0, v) / top * (BOTTOM - TOP); };

    var windowText = "no projected stockout window";
    if (lo !== null) windowText = "projected stockout between " + when(win[0]) + " and " + when(win[1] || win[0]);
    var s = svg("svg", { "class": "chart", viewBox: "0 0 " + W + " " + H, role: "img" });
    add(s, svg("title", {}, "Units of " + productName + " sold per day at " + store + "; on hand " + r.on_hand_units + "; " + windowText + "."));

    for (var v = 0; v <= top + step / 2; v += step) {
      add(s, svg("line", { "class": "axis", x1: LEFT, x2: RIGHT, y1: yAt(v), y2: yAt(v) }),
        svg("text", { x: LEFT - 6, y: yAt(v) + 4, "text-anchor": "end" }, String(v)));
    }
    if (lo !== null) {
      var x0 = xAt(lo), w = Math.max(xAt(Math.max(hi === null ? lo : hi, lo)) - x0, 3);
      var labelY = TOP - 8;
      if (del !== null && Math.abs(xAt(del) - (x0 + w / 2)) < 64) labelY = TOP - 22;
      add(s, svg("rect", { "class": "window", x: x0, y: TOP, width: w, height: BOTTOM - TOP }, undefined),
        svg("text", { "class": "window-label", x: x0 + w / 2, y: labelY, "text-anchor": "middle" }, "stockout"));
    }
    var every = Math.floor((n + 6) / 7);
    rows.forEach(function (row, i) {
      var units = +row[iUnits] || 0, flags = (iFlags >= 0 && row[iFlags]) || [];
      if (typeof flags === "string") flags = flags.split(/[,\s]+/).filter(Boolean);
      var flagged = flags.some(function (f) { return FLAGGED.indexOf(f) >= 0; });
      var y = yAt(units);
      var bar = svg("rect", { "class": "bar" + (flagged ? " flagged" : ""), x: LEFT + i * slot + slot * 0.15, y: y, width: slot * 0.7, height: BOTTOM - y });
      add(bar, svg("title", {}, row[iDay] + ": " + units + (units === 1 ? " unit" : " units") + " sold" + (flags.length ? " (" + flags.join(", ") + ")" : "")));
      add(s, bar);
      if ((n - 1 - i) % every === 0) add(s, svg("text", { x: LEFT + (i + 0.5) * slot, y: BOTTOM + 16, "text-anchor": "middle" }, String(row[iDay])));
    });
    var today = r.as_of ? offset(r.as_of.slice(0, 10) + "T00:00") : null;
    if (slots > n && today !== null) {
      add(s, svg("line", { "class": "today", x1: xAt(today), x2: xAt(today), y1: TOP, y2: BOTTOM }),
        svg("text", { x: xAt(today) + 3, y: BOTTOM + 30 }, "today"));
    }
    var yOn = yAt(r.on_hand_units || 0);
    add(s, svg("line", { "class": "onhand", x1: LEFT, x2: RIGHT, y1: yOn, y2: yOn }),
      svg("text", { x: RIGHT, y: yOn - 4, "text-anchor": "end" }, "on hand " + r.on_hand_units));
    if (del !== null) {
      var xd = xAt(del);
      add(s, svg("line", { "class": "delivery", x1: xd, x2: xd, y1: TOP - 4, y2: BOTTOM }),
        svg("text", { "class": "delivery-label", x: xd, y: BOTTOM + 44, "text-anchor": xd > W - 120 ? "end" : "middle" }, "earliest delivery " + when(r.earliest_delivery)));
    }
    add(s, svg("line", { "class": "axis", x1: LEFT, x2: RIGHT, y1: BOTTOM, y2: BOTTOM }));
    return s;
  }

  function legend() {
    var l = el("div", "legend"), item = function (color, text) {
      var i = el("i"); i.style.background = "var(" + color + ")";
      return add(el("span"), i, document.createTextNode(text));
    };
    return add(l, item("--bar", "units sold per day"), item("--flag", "flagged day"), item("--window", "stockout window"), item("--delivery", "earliest delivery"));
  }

  function panel(p, st) {
    var sec = el("section", "panel");
    var h = add(el("h2"), el("span", "store-name", st.store_name || "store " + st.store_id));
    if (st.store_name) add(h, el("span", "muted", " (store " + st.store_id + ")"));
    add(sec, h);
    if (st.error || !st.risk) {
      var e = st.error || {};
      return add(sec, facts([["error", e.code], ["message", e.message], ["what to do", e.remediation]]));
    }
    var r = st.risk, win = r.stockout_window || [];
    var verdict = el("span", "badge " + (r.will_stockout_before_close_today === "true" ? "yes" : "no"), r.will_stockout_before_close_today);
    add(sec, facts([
      ["stock out before close", verdict],
      ["stockout window", win[0] ? when(win[0]) + " to " + when(win[1] || win[0]) : "none projected"],
      ["earliest delivery", r.earliest_delivery ? when(r.earliest_delivery) : "unknown"],
      ["delivery beats stockout", r.arrival_beats_stockout],
      ["on hand", r.on_hand_units + " (counted " + when(r.on_hand_as_of) + ", about " + r.estimated_on_hand_now + " now)"],
      ["short by close", r.units_short_by_close],
      ["confidence", el("span", "badge confidence", r.confidence)]
    ]));
    if (r.evidence && r.evidence.rows && r.evidence.rows.length) add(sec, chart(st.store_name ? "" + st.store_name.replace(/\u27E6[^\u27E7]*\u27E7/g, "") : "store " + st.store_id, r, p), legend());
    add(sec, el("h3", null, "Data quality flags"));
    var flags = r.data_quality_flags || [];
    if (flags.length) {
      var ul = el("ul", "flags");
      flags.forEach(function (f) { add(ul, el("li", null, typeof f === "string" ? f : JSON.stringify(f))); });
      add(sec, ul);
    } else add(sec, el("p", "muted flags-none", "none"));
    return add(sec, el("p", "muted basis", r.velocity_basis), el("p", "caveat", r.caveat));
  }

  // sweepPanel is a chain sweep's whole chain (store_ids ["all"]): the
  // counts by outcome, the stores at risk beyond the detailed panels as a
  // table, and the stores that could not be checked by error code.
  function sweepPanel(sw, detailed) {
    var o = sw.outcomes || {}, sec = el("section", "panel sweep");
    add(sec, el("h2", null, "Chain sweep: " + sw.stores_checked + " stores checked"), facts([
      ["stock out before close", o.stockout_before_close],
      ["cannot tell", o.cannot_tell],
      ["no stockout", o.no_stockout],
      ["not checked", o.not_checked],
      ["shown below", detailed ? "the " + detailed + " most at risk" : "no store at risk"]
    ]));
    var t = sw.more_at_risk || {}, rows = t.rows || [], cols = t.columns || [];
    if (rows.length) {
      add(sec, el("h3", null, "More stores at risk"));
      var table = el("table", "more-at-risk"), head = el("tr");
      cols.forEach(function (c) { add(head, el("th", null, c.replace(/_/g, " "))); });
      add(table, head);
      rows.forEach(function (row) {
        var tr = el("tr");
        row.forEach(function (cell, i) {
          add(tr, el("td", null, cols[i] === "stockout_earliest" && cell ? when(cell) : cell === null ? "" : cell));
        });
        add(table, tr);
      });
      add(sec, table);
    }
    if (sw.at_risk_not_listed) add(sec, el("p", "muted", sw.at_risk_not_listed + " more at risk, not listed: ask for them by store."));
    (sw.errors || []).forEach(function (e) {
      add(sec, el("h3", null, "Not checked: " + e.code), facts([
        ["stores", (e.store_ids || []).join(", ")], ["message", e.message], ["what to do", e.remediation]]));
    });
    return sec;
  }

  korral.start(function (root, d) {
    var name = d.product && d.product.name;
    var h = add(el("h1"), el("span", null, "Stock risk: "), el("span", "product-name", name || d.sku));
    add(root, h, el("p", "muted", "SKU " + d.sku + (d.product && d.product.supplier ? " · supplier " : "")));
    if (d.product && d.product.supplier) add(root.lastChild, el("span", "supplier", d.product.supplier));
    var plain = (name || d.sku || "").replace(/\u27E6[^\u27E7]*\u27E7/g, "");
    if (d.sweep) add(root, sweepPanel(d.sweep, (d.stores || []).length));
    (d.stores || []).forEach(function (st) { add(root, panel(plain, st)); });
  });
})();
