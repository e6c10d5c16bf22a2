// The order view: the order tool's answer as the buyer reads it before
// confirming, and as the approver's state after: the product, the store,
// the units (and cases when the answer knows the case pack), the delivery,
// and the quantity check's verdict in words, then its reasons, the days of
// cover and the open orders of the same SKU. It shows neither the request's
// body nor the words the answer holds for the model (next_step, the
// remediation); the idempotency key folds away. It offers no button that
// orders: confirming stays the model's call, approving a person's in the
// console.
(function () {
  var el = korral.el, add = korral.add, facts = korral.facts, when = korral.when;
  var titles = {
    preview: "Preview: nothing was sent",
    raised: "Ordered at StoreLink",
    pending_approval: "Staged: waiting for an approver",
    replay: "Already done: this key's earlier answer"
  };
  var VERDICT = {
    ok: ["Looks right", "Nothing in the quantity check to remark on."],
    review: ["Check before sending", "The quantity check asks a person to look:"],
    refuse: ["Would be refused", "This order cannot be sent as it is:"]
  };
  var STATUS = {
    submitted: "submitted to StoreLink", acknowledged: "acknowledged by StoreLink", shipped: "shipped", delivered: "delivered",
    rejected: "rejected: nothing is coming", cancelled: "cancelled: nothing is coming", sending: "being sent", raised: "ordered",
    failed: "failed: nothing was ordered", retryable: "not sent yet", unknown: "may have been ordered: being checked",
    pending_approval: "waiting for an approver", expired: "expired unapproved: nothing was sent"
  };

  function status(s) { return el("span", "badge status-" + s, STATUS[s] || s); }

  function consoleLink(d) {
    var url = d.console_url || d.approval_url;
    if (typeof url !== "string" || !/^https?:\/\//.test(url)) return null;
    var a = el("a", "console", "Open the order in the approvals console");
    a.href = url; a.target = "_blank"; a.rel = "noopener noreferrer";
    // A sandboxed frame may not navigate: ask the host to open the link.
    a.addEventListener("click", function (ev) {
      ev.preventDefault();
      korral.request("ui/open-link", { url: url }).catch(function () { window.open(url, "_blank", "noopener"); });
    });
    return a;
  }

  // units is "24 units", with the cases when the answer carries a case pack.
  function units(d) {
    var q = d.quantity_units !== undefined ? d.quantity_units : d.request && d.request.body ? d.request.body.quantity_units : null;
    if (q === null || q === undefined) return "";
    var pack = d.case_pack || (d.product && d.product.case_pack), text = q + (q === 1 ? " unit" : " units");
    if (pack > 1) text += q % pack === 0 ? " (" + q / pack + (q / pack === 1 ? " case" : " cases") + " of " + pack + ")" : " (not whole cases of " + pack + ")";
    return text;
  }

  function verdictPanel(qc) {
    var v = VERDICT[qc.verdict] || [qc.verdict, ""];
    var sec = add(el("section", "panel quantity-check"), add(el("p", "headline"), el("span", "badge verdict verdict-" + qc.verdict, v[0])));
    sec.setAttribute("aria-label", "Quantity check");
    if (v[1] && (qc.verdict === "ok" || (qc.reasons || []).length)) add(sec, el("p", null, v[1]));
    var ul = el("ul", "reasons");
    (qc.reasons || []).forEach(function (r) { add(ul, el("li", null, r)); });
    return add(sec, ul);
  }

  function justification(j) {
    var cover = j.days_of_cover_after_delivery, flags = j.data_quality_flags || [];
    return add(el("section", "panel justification"), el("h2", null, "Why this quantity"), facts([
      ["days of cover after delivery", cover ? cover.low + " to " + cover.high + " days" : "unknown"],
      ["on hand", j.on_hand_units + " (about " + j.estimated_on_hand_now + " now)"],
      ["runs out", j.stockout_earliest ? when(j.stockout_earliest) + " to " + when(j.stockout_latest || j.stockout_earliest) : "no stockout projected"],
      ["supplier lead time", j.supplier_lead_time_days !== null && j.supplier_lead_time_days !== undefined ? j.supplier_lead_time_days + (j.supplier_lead_time_days === 1 ? " day" : " days") : "unknown"],
      ["confidence", el("span", "badge confidence-" + j.confidence, j.confidence)],
      ["data quality", flags.length ? flags.map(function (f) { return korral.FLAG_WORDS[f] || f.replace(/_/g, " "); }).join(" ") : "no problems found"]
    ]));
  }

  function openOrders(d) {
    var oo = add(el("section", "panel open-orders"), el("h2", null, "Open orders of this product here"));
    var open = d.open_orders_same_sku || [];
    if (open.length) {
      var t = add(el("table"), add(el("tr"), el("th", null, "order"), el("th", null, "state"), el("th", null, "units"), el("th", null, "created")));
      open.forEach(function (o) {
        add(t, add(el("tr", "open-order"), el("td", "key", o.reference), add(el("td"), status(o.state)), el("td", null, o.quantity_units), el("td", null, when(o.created_at))));
      });
      add(oo, add(el("div", "table-wrap"), t));
    } else add(oo, el("p", "muted", "none"));
    if (d.duplicate_warning) add(oo, el("p", "caveat", d.duplicate_warning));
    return oo;
  }

  korral.start(function (root, d) {
    add(root, add(el("h1"), el("span", "mode badge mode-" + d.mode, titles[d.mode] || d.mode)));
    if (d.quantity_check) add(root, verdictPanel(d.quantity_check));
    var j = d.justification || {}, arrival = d.expected_arrival || j.expected_arrival;
    var cover = j.days_of_cover_after_delivery;
    add(root, add(el("section", "panel order"), add(el("dl", "order-lines"),
      el("dt", null, "product"), el("dd", "product-name", d.product_name || "SKU " + d.sku),
      el("dt", null, "store"), el("dd", "store", "store " + d.store_id),
      el("dt", null, "quantity"), el("dd", "quantity", units(d)),
      el("dt", null, "delivery"), el("dd", "delivery", arrival ? when(arrival) : "unknown"),
      cover ? el("dt", null, "lasts") : null, cover ? el("dd", "cover", cover.low + " to " + cover.high + " days after delivery") : null,
      d.order_status ? el("dt", null, "status") : null, d.order_status ? add(el("dd"), status(d.order_status)) : null),
    el("p", "muted small", "SKU " + d.sku)));

    if (d.mode === "pending_approval" || d.approval_id) {
      add(root, add(el("section", "panel approval"), el("h2", null, "Approval"), facts([
        ["state", d.order_status ? STATUS[d.order_status] || d.order_status : "waiting for an approver"],
        ["approval", d.approval_id],
        ["lapses at", d.approval_expires_at ? when(d.approval_expires_at) : ""],
        ["console", consoleLink(d)]
      ])));
    } else if (d.order_id) {
      add(root, add(el("section", "panel"), el("h2", null, "Order"), facts([["order", d.order_id], ["status", d.order_status ? status(d.order_status) : ""]])));
    }
    if (d.justification) add(root, justification(d.justification));
    add(root, openOrders(d));

    var ref = add(el("details", "reference"), el("summary", null, "Reference for support"));
    add(ref, facts([
      ["idempotency key", el("span", "key idempotency-key", d.idempotency_key)],
      ["writes", d.writes_enabled ? "enabled" : "disabled"],
      ["approval required", d.approval_required ? "yes" : "no"],
      ["largest order", d.max_order_units + " units"]
    ]));
    add(root, ref);
  });
})();
