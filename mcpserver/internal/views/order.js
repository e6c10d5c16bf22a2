// The order view: the order tool's answer as the buyer
// checks it before confirming, and as the approver's state after. It shows
// the exact request StoreLink would receive, the quantity check, the days of
// cover and the open orders of the same SKU; in approval mode, the
// approval's state and its console link. It offers no button that orders:
// confirming stays the model's call, approving a person's in the console.
(function () {
  var el = korral.el, add = korral.add, facts = korral.facts, when = korral.when;
  var titles = {
    preview: "Preview: nothing was sent",
    raised: "Raised at StoreLink",
    pending_approval: "Staged: waiting for an approver",
    replay: "Already done: this key's earlier answer"
  };

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

  korral.start(function (root, d) {
    var h = add(el("h1"), el("span", "mode badge " + d.mode, titles[d.mode] || d.mode));
    add(root, h);
    var head = add(el("p"), el("strong", "quantity", d.request && d.request.body ? d.request.body.quantity_units + " units" : ""),
      document.createTextNode(" of "), el("span", "product-name", d.product_name || d.sku),
      el("span", "muted", " · SKU " + d.sku + " · store " + d.store_id));
    add(root, head);

    if (d.mode === "pending_approval" || d.approval_id) {
      var ap = add(el("section", "panel approval"), el("h2", null, "Approval"));
      add(ap, facts([
        ["state", d.order_status || (d.approval_id ? "waiting for an approver" : "")],
        ["approval", d.approval_id],
        ["lapses at", d.approval_expires_at ? when(d.approval_expires_at) : ""],
        ["console", consoleLink(d)]
      ]));
      add(root, ap);
    } else if (d.order_id) {
      add(root, add(el("section", "panel"), el("h2", null, "Order"),
        facts([["order", d.order_id], ["status", d.order_status], ["expected arrival", d.expected_arrival ? when(d.expected_arrival) : ""]])));
    }

    var req = add(el("section", "panel request"), el("h2", null, "The exact request"));
    if (d.request) add(req, el("pre", "request-line", d.request.method + " " + d.request.path + "\n" + JSON.stringify(d.request.body, null, 2)));
    add(root, req);

    var qc = d.quantity_check;
    if (qc) {
      var q = add(el("section", "panel quantity-check"), add(el("h2"), document.createTextNode("Quantity check "), el("span", "badge verdict " + qc.verdict, qc.verdict)));
      var ul = el("ul");
      (qc.reasons || []).forEach(function (r) { add(ul, el("li", null, r)); });
      add(root, add(q, ul));
    }

    var j = d.justification;
    if (j) {
      var cover = j.days_of_cover_after_delivery;
      add(root, add(el("section", "panel justification"), el("h2", null, "Why this quantity"), facts([
        ["days of cover after delivery", cover ? cover.low + " to " + cover.high + " days" : "unknown"],
        ["on hand", j.on_hand_units + " (about " + j.estimated_on_hand_now + " now)"],
        ["stockout window", j.stockout_earliest ? when(j.stockout_earliest) + " to " + when(j.stockout_latest || j.stockout_earliest) : "none projected"],
        ["expected arrival", j.expected_arrival ? when(j.expected_arrival) : "unknown"],
        ["supplier lead time", j.supplier_lead_time_days !== null && j.supplier_lead_time_days !== undefined ? j.supplier_lead_time_days + " days" : "unknown"],
        ["confidence", j.confidence],
        ["data quality flags", (j.data_quality_flags || []).length ? (j.data_quality_flags || []).join(", ") : "none"]
      ])));
    }

    var oo = add(el("section", "panel open-orders"), el("h2", null, "Open orders of this SKU here"));
    var open = d.open_orders_same_sku || [];
    if (open.length) {
      var t = add(el("table"), add(el("tr"), el("th", null, "reference"), el("th", null, "state"), el("th", null, "units"), el("th", null, "created")));
      open.forEach(function (o) {
        add(t, add(el("tr", "open-order"), el("td", null, o.reference), el("td", null, o.state), el("td", null, o.quantity_units), el("td", null, when(o.created_at))));
      });
      add(oo, t);
    } else add(oo, el("p", "muted", "none"));
    if (d.duplicate_warning) add(oo, el("p", "caveat", d.duplicate_warning));
    add(root, oo);

    add(root, facts([
      ["writes", d.writes_enabled ? "enabled" : "disabled"],
      ["approval required", d.approval_required ? "yes" : "no"],
      ["largest order", d.max_order_units + " units"],
      ["idempotency key", d.idempotency_key]
    ]));
    if (d.next_step) add(root, el("p", "muted next-step", d.next_step));
    if (d.demo_notice) add(root, el("p", "caveat demo", d.demo_notice));
  });
})();
