// Per-call overhead against the floor: the same TypeScript SDK client calls
// one tool on each of several stdio servers, in alternating rounds, and
// reports the medians over the rounds of
//   - call_p50_ms: the p50 of CALLS sequential calls (1 caller);
//   - calls_per_s: calls per second with CALLERS concurrent callers;
//   - cpu_us_per_call: the server process's CPU time (user + system, from
//     /proc/PID/stat) over all rounds per call, which a busy neighbour
//     hardly moves,
// each beside the floor (the first server: the bare go-sdk echo server,
// bench/echoserver). Every server stays connected for the whole run and the
// order of the servers rotates from round to round, so drift in the
// machine's load hits all of them alike. Usage (bench/run.sh does this):
//   node floor.mjs '<json list of {name, command, args, env, tool, arguments, target}>'
// prints one JSON object on stdout;
//   node floor.mjs --markdown FILE
// prints it as Markdown, with the targets of the servers that name one.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readFileSync } from "node:fs";

const ROUNDS = Number(process.env.TSFLOOR_ROUNDS || 7);
const CALLS = Number(process.env.TSFLOOR_CALLS || 400);
const CALLERS = Number(process.env.TSFLOOR_CALLERS || 8);

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function connect(server) {
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args || [],
    env: { PATH: process.env.PATH, ...(server.env || {}) },
    stderr: "ignore",
  });
  const client = new Client({ name: "tsfloor", version: "1" });
  await client.connect(transport);
  await client.listTools(); // the client checks results against output schemas from here on
  const call = async () => {
    const res = await client.callTool({ name: server.tool, arguments: server.arguments || {} });
    if (res.isError) throw new Error(`${server.name}: ${server.tool} failed: ${JSON.stringify(res.content)}`);
  };
  for (let i = 0; i < 50; i++) await call(); // warm up
  return { client, call, pid: transport.pid };
}

// cpuTicks is a process's user + system time in clock ticks (1/100 s on
// Linux); fields 14 and 15 of /proc/PID/stat, counted after the command
// name, which may hold spaces.
function cpuTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(f[11]) + Number(f[12]);
}

async function round({ call }) {
  const lat = [];
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    await call();
    lat.push(performance.now() - t);
  }
  const total = CALLS * 2;
  let next = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: CALLERS }, async () => {
    while (next++ < total) await call();
  }));
  return { p50: median(lat), rate: total / ((performance.now() - start) / 1000) };
}

function markdown(r) {
  const names = Object.keys(r.servers);
  const floor = names[0];
  const fl = r.servers[floor];
  const f = (x, d) => x.toFixed(d);
  let md = `### Per-call overhead against the go-sdk floor (TypeScript SDK client, ${r.rounds} alternating rounds, medians)\n\n`;
  md += `Each round: ${r.calls} sequential calls (p50), then ${r.calls * 2} calls from ${r.callers} concurrent callers on one session.\n\n`;
  md += `| Server, tool | p50 ms, 1 caller | × floor | calls/s, ${r.callers} callers | × floor | server CPU µs/call | × floor | p50 range | calls/s range |\n`;
  md += `|---|---:|---:|---:|---:|---:|---:|---|---|\n`;
  for (const n of names) {
    const s = r.servers[n];
    const range = (xs, d) => `${f(Math.min(...xs), d)}–${f(Math.max(...xs), d)}`;
    md += `| ${n} | ${f(s.call_p50_ms, 3)} | ${f(s.call_p50_ms / fl.call_p50_ms, 2)}x | ${f(s.calls_per_s, 0)} | ${f(s.calls_per_s / fl.calls_per_s, 2)}x | ${f(s.cpu_us_per_call, 0)} | ${f(s.cpu_us_per_call / fl.cpu_us_per_call, 2)}x | ${range(s.p50_rounds, 3)} | ${range(s.rate_rounds, 0)} |\n`;
  }
  const targeted = names.filter((n) => r.servers[n].target);
  if (targeted.length > 0) {
    const met = (ok) => (ok ? "yes" : "**no**");
    md += `\n| Target (against ${floor}) | Measured | Met |\n|---|---|---|\n`;
    for (const n of targeted) {
      const s = r.servers[n], t = s.target;
      const p = s.call_p50_ms / fl.call_p50_ms, q = s.calls_per_s / fl.calls_per_s;
      md += `| ${n}: trivial-call p50 at most ${f(t.p50_ratio_max, 2)}x | ${f(p, 2)}x | ${met(p <= t.p50_ratio_max)} |\n`;
      md += `| ${n}: calls/s with ${r.callers} callers at least ${f(t.rate_ratio_min, 2)}x | ${f(q, 2)}x | ${met(q >= t.rate_ratio_min)} |\n`;
    }
  }
  return md;
}

if (process.argv[2] === "--markdown") {
  process.stdout.write(markdown(JSON.parse(readFileSync(process.argv[3], "utf8"))));
  process.exit(0);
}

const servers = JSON.parse(process.argv[2]);
const conns = [];
for (const s of servers) conns.push(await connect(s));
const rounds = servers.map(() => ({ p50: [], rate: [], ticks: 0 }));
for (let r = 0; r < ROUNDS; r++) {
  // Rotate who goes first, so no server always follows the same one.
  for (let k = 0; k < servers.length; k++) {
    const i = (k + r) % servers.length;
    const t0 = cpuTicks(conns[i].pid);
    let m;
    try {
      m = await round(conns[i]);
    } catch (e) {
      throw new Error(`${servers[i].name}, round ${r + 1}: ${e.message}`); // which server did not answer
    }
    rounds[i].ticks += cpuTicks(conns[i].pid) - t0;
    rounds[i].p50.push(m.p50);
    rounds[i].rate.push(m.rate);
  }
}
for (const c of conns) await c.client.close();
const out = { rounds: ROUNDS, calls: CALLS, callers: CALLERS, servers: {} };
servers.forEach((s, i) => {
  out.servers[s.name] = {
    tool: s.tool,
    call_p50_ms: median(rounds[i].p50),
    calls_per_s: median(rounds[i].rate),
    cpu_us_per_call: (rounds[i].ticks * 10000) / (ROUNDS * CALLS * 3),
    p50_rounds: rounds[i].p50,
    rate_rounds: rounds[i].rate,
    ...(s.target ? { target: s.target } : {}),
  };
});
console.log(JSON.stringify(out));
