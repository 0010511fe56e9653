// Figures of real agents (bench/run --only agents): Claude Code spawned by `team spawn --preset
// claude` on the scripted fake model of the tests (fake-anthropic.mjs), timed from the leader's side.
//   - Claude Code's own start: from `team spawn` to the model's first request;
//   - spawn -> first MCP call: to the request that carries the result of the agent's first team
//     tool call (inbox_read), Claude Code's start included;
//   - a graceful stop of an idle agent: `kill-agent --wait` until confirmed and ended, the request
//     reaching the agent through the channel push, and through the pane (plain preset);
//   - a force kill of a busy agent (a long Bash in its tree): `kill-agent --force`.
// Each run spawns fresh agents in one home; /bin/true is timed between samples as bench/run's
// baseline is. Prints rows of bench/run's table, or with --json one JSON object per figure.
//
// Run: TEAM_BINARY=build/team node tests/agents/bench.mjs [--runs 5] [--json]
import { execFile } from 'node:child_process';
import { Home, tree } from './harness.mjs';
import { teammate } from './teammate.mjs';
import { cmdline, mcpLog, model, ready } from './claude.mjs';
import { until } from './harness.mjs';

const at = process.argv.indexOf('--runs');
const RUNS = at > 0 ? Number(process.argv[at + 1]) : 5;
const JSON_OUT = process.argv.includes('--json');
const WAIT = 90000;

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
const trueMs = () => new Promise((done) => {
  const t = performance.now();
  execFile('/bin/true', () => done(performance.now() - t));
});

const figures = {
  start: { name: 'claude: spawn -> first model request', goal: 0, times: [] },
  mcp: { name: 'claude: spawn -> first MCP call', goal: 0, times: [] },
  channel: { name: 'claude: graceful stop, idle (channel)', goal: 500, times: [] },
  pane: { name: 'claude: graceful stop, idle (pane notice)', goal: 500, times: [], failed: 0 },
  force: { name: 'claude: force kill, busy', goal: 200, times: [] },
};
const baseline = [];

const home = new Home();
let status = 0;
try {
  const fake = await model(home, teammate({
    work: [{ tool: 'inbox_read', input: { unread: true } },
      { tool: 'Bash', input: { command: 'sleep 300', description: 'a long build', timeout: 600000 } }],
  }));
  await home.create();
  for (let run = 0; run < RUNS; run++) {
    // Start and first MCP call; then a force kill while its Bash runs.
    const name = `b${run}`;
    const before = fake.requests.length;
    const t0 = performance.now();
    const agent = await home.spawnClaude(name, fake, { args: ['Build it.'] });
    const mine = (c) => fake.requests.indexOf(fake.requests.find((r) => r.conversation === c)) >= before;
    const first = await fake.waitFor((c) => mine(c), WAIT, 'the first request');
    figures.start.times.push(first.at - t0);
    const mcp = await fake.waitFor((c) => mine(c) && c.called('mcp__team__inbox_read').some((x) => x.result !== undefined), WAIT, 'the first MCP result');
    figures.mcp.times.push(mcp.at - t0);
    await until(() => tree(agent.pid).some((p) => cmdline(p) === 'sleep\x00300\x00'), WAIT, 'the long Bash');
    let r = await home.team(['kill-agent', name, '--force', '--json']);
    if (r.code !== 0) throw new Error(`kill-agent --force: ${r.stderr}${r.stdout}`);
    figures.force.times.push(r.ms);
    baseline.push(await trueMs());

    // A graceful stop of an idle agent, its request pushed through the channel.
    const c = await home.spawnClaude(`c${run}`, fake, { channels: true });
    await until(async () => /development channels/i.test(await home.screen(c.paneId)), WAIT, 'the channels warning');
    await home.tmux(['send-keys', '-t', c.paneId, 'Enter']);
    await until(() => (mcpLog(home).match(/Channel notifications registered/g) ?? []).length > run, WAIT, 'the channel');
    await ready(home, c);
    r = await home.team(['kill-agent', `c${run}`, '--wait', '--timeout', '60s', '--json'], { timeoutMs: 70000 });
    if (r.code !== 0) throw new Error(`kill-agent --wait (channel): ${r.stderr}${r.stdout}`);
    figures.channel.times.push(r.ms);
    baseline.push(await trueMs());

    // The same through the pane (the plain preset: no channel).
    const p = await home.spawnClaude(`p${run}`, fake);
    await ready(home, p);
    r = await home.team(['kill-agent', `p${run}`, '--wait', '--timeout', '20s', '--json'], { timeoutMs: 30000 });
    if (r.code === 0) figures.pane.times.push(r.ms);
    else {
      figures.pane.failed++;
      await home.team(['kill-agent', `p${run}`, '--force']);
    }
    baseline.push(await trueMs());
  }
  baseline.sort((a, b) => a - b);
  const base = quantile(baseline, 0.5);
  for (const f of Object.values(figures)) {
    const t = [...f.times].sort((a, b) => a - b);
    const row = { name: f.name, runs: t.length, median_ms: quantile(t, 0.5), p90_ms: quantile(t, 0.9), p99_ms: quantile(t, 0.99),
      ratio_to_true: t.length ? quantile(t, 0.5) / base : null, goal_ms: f.goal || null,
      ok: f.goal ? t.length === RUNS && quantile(t, 0.5) <= f.goal : true };
    if (f.failed) row.unanswered = f.failed;
    if (!row.ok) status = 1;
    if (JSON_OUT) console.log(JSON.stringify(row));
    else {
      const cell = (v) => (v === undefined || v === null ? '-' : v.toFixed(1)).padStart(9);
      const verdict = !f.goal ? '' : t.length < RUNS ? `${f.failed}/${RUNS} no answer` : row.ok ? 'ok' : 'OVER';
      console.log(`| ${f.name.padEnd(42)} | ${cell(row.median_ms)} | ${cell(row.p90_ms)} | ${cell(row.p99_ms)} | ` +
        `${(row.ratio_to_true ? `${row.ratio_to_true.toFixed(0)}x` : '-').padStart(18)} | ${(f.goal ? `${f.goal} ms` : '-').padStart(7)} | ${verdict.padEnd(7)} |`);
    }
  }
  if (!JSON_OUT) console.log(`(/bin/true in the same run: median ${base.toFixed(2)} ms; ${RUNS} runs)`);
} catch (e) {
  console.error(`bench agents: ${e.stack ?? e}`);
  status = 1;
} finally {
  await home.cleanup().catch((e) => {
    console.error(`bench agents: cleanup: ${e.message}`);
    status = 1;
  });
}
process.exit(status);
