// Times MCP servers from the client most hosts embed: the official
// TypeScript SDK's Client over stdio. For each server it measures
//   - ready: spawn, initialize and a completed tools/list (what a host waits
//     for before the first call; the client compiles the output schemas
//     here), the median of RUNS fresh processes;
//   - call: the p50 of sequential calls of one trivial tool;
//   - throughput: calls per second with CALLERS concurrent callers.
// Both servers are measured in the same run, so the ratios hold on a noisy
// machine. Usage (bench/run.sh does this):
//   node bench.mjs '<json list of {name, command, args, env, tool, arguments}>'
// prints one JSON object on stdout;
//   node bench.mjs --markdown FILE
// prints that object as a Markdown table, each server beside the first.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const RUNS = Number(process.env.TSBENCH_RUNS || 15);
const CALLS = Number(process.env.TSBENCH_CALLS || 400);
const CALLERS = Number(process.env.TSBENCH_CALLERS || 8);

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};

async function connect(server) {
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args || [],
    env: { PATH: process.env.PATH, ...(server.env || {}) },
    stderr: "ignore",
  });
  const client = new Client({ name: "tsbench", version: "1" });
  await client.connect(transport);
  return client;
}

async function ready(server) {
  const times = [];
  let listBytes = 0;
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    const client = await connect(server);
    const list = await client.listTools();
    times.push(performance.now() - start);
    listBytes = Buffer.byteLength(JSON.stringify(list));
    await client.close();
  }
  return { ready_ms: median(times), tools_list_bytes: listBytes };
}

async function calls(server) {
  const client = await connect(server);
  await client.listTools(); // the client checks results against output schemas from here on
  const call = async () => {
    const res = await client.callTool({ name: server.tool, arguments: server.arguments || {} });
    if (res.isError) throw new Error(`${server.name}: ${server.tool} failed: ${JSON.stringify(res.content)}`);
  };
  for (let i = 0; i < 20; i++) await call(); // warm up
  const lat = [];
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    await call();
    lat.push(performance.now() - t);
  }
  const start = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: CALLERS }, async () => {
    while (next++ < CALLS * 2) await call();
  }));
  const seconds = (performance.now() - start) / 1000;
  await client.close();
  return { call_p50_ms: median(lat), calls_per_s: (CALLS * 2) / seconds };
}

if (process.argv[2] === "--markdown") {
  const { readFileSync } = await import("node:fs");
  const r = JSON.parse(readFileSync(process.argv[3], "utf8"));
  const names = Object.keys(r.servers);
  const [ours, ...others] = names;
  const f = (x, d = 1) => x.toFixed(d);
  const rows = [
    ["Time to ready: spawn, initialize, tools/list (median ms)", "ready_ms", 1, false],
    ["Trivial call, sequential (p50 ms)", "call_p50_ms", 3, false],
    [`Calls per second, ${r.callers} callers`, "calls_per_s", 0, true],
    ["tools/list result (bytes)", "tools_list_bytes", 0, false],
  ];
  let md = `### TypeScript SDK client, same run (${r.runs} starts, ${r.calls} sequential calls)\n\n`;
  md += `| Figure | ${names.join(" | ")} | ${others.map((o) => `${ours} / ${o}`).join(" | ")} |\n`;
  md += `|---|${names.map(() => "---:").join("|")}|${others.map(() => "---:").join("|")}|\n`;
  for (const [label, key, d] of rows) {
    md += `| ${label} | ${names.map((n) => f(r.servers[n][key], d)).join(" | ")} | ${others.map((o) => f(r.servers[ours][key] / r.servers[o][key], 2) + "x").join(" | ")} |\n`;
  }
  // The targets of this comparison: a host ready within 80 ms, and a trivial
  // call at least as cheap as the reference server's (the first other one).
  if (others.length > 0) {
    const us = r.servers[ours], ref = r.servers[others[0]];
    const met = (ok) => (ok ? "yes" : "**no**");
    md += `\n| Target | Measured | Met |\n|---|---|---|\n`;
    md += `| Time to ready at most 80 ms (median) | ${f(us.ready_ms)} ms | ${met(us.ready_ms <= 80)} |\n`;
    md += `| Trivial call p50 at most 1.0x ${others[0]}'s | ${f(us.call_p50_ms / ref.call_p50_ms, 2)}x | ${met(us.call_p50_ms <= ref.call_p50_ms)} |\n`;
    md += `| Calls per second with ${r.callers} callers at least 1.0x ${others[0]}'s | ${f(us.calls_per_s / ref.calls_per_s, 2)}x | ${met(us.calls_per_s >= ref.calls_per_s)} |\n`;
  }
  process.stdout.write(md);
  process.exit(0);
}

const servers = JSON.parse(process.argv[2]);
const out = { runs: RUNS, calls: CALLS, callers: CALLERS, servers: {} };
// Alternate the servers so that drift in the machine's load hits both.
for (const s of servers) out.servers[s.name] = await ready(s);
for (const s of servers) Object.assign(out.servers[s.name], await calls(s));
console.log(JSON.stringify(out));
