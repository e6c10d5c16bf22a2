// The test host of e2e/apps_views_test.go: an MCP Apps host built on
// @modelcontextprotocol/ext-apps's AppBridge, as a real host is. It loads a
// case (a view's HTML and CSP from resources/read, and a tool call's
// arguments and result, all from the real storelink-mcp) from the test's
// loopback server, puts the HTML in a sandboxed frame under the CSP the
// resource declares, connects the bridge over postMessage and forwards the
// tool input and result. The test bundles it with esbuild at test time.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

// csp turns the resource's _meta.ui.csp into a policy, as hosts do: no
// domain declared means nothing may be loaded or reached.
function csp(c) {
  const list = (v) => (v && v.length ? " " + v.join(" ") : "");
  c = c || {};
  return [
    "default-src 'none'",
    "script-src 'unsafe-inline'" + list(c.resourceDomains),
    "style-src 'unsafe-inline'" + list(c.resourceDomains),
    "img-src data:" + list(c.resourceDomains),
    "font-src" + (list(c.resourceDomains) || " 'none'"),
    "connect-src" + (list(c.connectDomains) || " 'none'"),
    "frame-src" + (list(c.frameDomains) || " 'none'"),
    "base-uri" + (list(c.baseUriDomains) || " 'self'"),
  ].join("; ");
}

const state = (window.hostState = { phase: "loading", log: [], opened: [] });

async function main() {
  const name = new URLSearchParams(location.search).get("case");
  const res = await fetch("/case/" + encodeURIComponent(name));
  const c = await res.json();
  document.getElementById("tool").textContent = c.tool;

  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.title = c.tool;
  // A case may set the frame's width (a chat column, a desktop pane).
  if (c.width) iframe.style.width = c.width + "px";
  document.getElementById("frame").appendChild(iframe);

  const bridge = new AppBridge(null, { name: "storelink-e2e-host", version: "1.0.0" }, { openLinks: {} }, { hostContext: c.hostContext || {} });
  bridge.onsizechange = ({ height }) => {
    if (height) iframe.style.height = height + "px";
    state.log.push("size " + height);
  };
  bridge.onopenlink = async ({ url }) => {
    state.opened.push(url);
    return {};
  };
  bridge.oncalltool = async (params) => {
    state.log.push("tools/call " + params.name);
    throw new Error("this host lets no view call a tool");
  };
  bridge.oninitialized = async () => {
    state.phase = "initialized";
    await bridge.sendToolInput({ arguments: c.arguments });
    await bridge.sendToolResult(c.result);
    state.phase = "result-sent";
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  const policy = '<meta http-equiv="Content-Security-Policy" content="' + csp(c.csp).replace(/"/g, "&quot;") + '">';
  iframe.srcdoc = c.html.replace(/<head>/i, "<head>" + policy);
}

main().catch((e) => {
  state.phase = "failed";
  state.log.push(String(e && e.stack ? e.stack : e));
});
