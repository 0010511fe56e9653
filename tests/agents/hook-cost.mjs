// What a preset's hook costs the agent (SPEC 17): each hook of Claude Code, Codex and Gemini CLI
// runs `sh -c "team --home H __report NAME@TEAM KIND EVENT"` with the hook's JSON on stdin, and
// the agent waits for it. Timed as the agent runs it (a shell, the payload written to its stdin,
// until it exits), against `true` run the same way: a hook that does nothing. The payloads are
// Claude Code's own PermissionRequest and PostToolUse (as tests/agents saw them), alternated, so
// every report changes the agent's state: its row, an activity-log entry, and for each
// PermissionRequest a needs_input message (the leader's inbox is read back between runs).
// Prints median and p99 of each and what the report adds, or with --json one object.
//
// Run: TEAM_BINARY=build/team node tests/agents/hook-cost.mjs [--runs 200] [--json]
import { spawn } from 'node:child_process';
import { Home, TEAM } from './harness.mjs';

const at = process.argv.indexOf('--runs');
const RUNS = at > 0 ? Number(process.argv[at + 1]) : 200;
const JSON_OUT = process.argv.includes('--json');

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
const quote = (s) => `'${s.replaceAll("'", "'\\''")}'`;

// `sh -c command` with `input` on its stdin: ms until it exited.
function run(command, input, env) {
  return new Promise((done, fail) => {
    const t = performance.now();
    const child = spawn('/bin/sh', ['-c', command], { env, stdio: ['pipe', 'ignore', 'inherit'] });
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 ? done(performance.now() - t) : fail(new Error(`${command}: exit ${code}`))));
    child.stdin.on('error', () => {});  // (`true` reads none of it)
    child.stdin.end(input);
  });
}

const home = new Home();
try {
  await home.create();
  await home.json(['spawn', 'w1', '--', 'sleep', '600']);
  const session = '74123573-ad7f-4726-87e8-9828b2c4fd30';
  const base = {
    session_id: session,
    transcript_path: `${home.dir}/claude/projects/-tmp-work/${session}.jsonl`,
    cwd: home.work,
    prompt_id: 'eb866aae-9fd4-43fd-bb52-7eac1b106178',
    permission_mode: 'default',
    effort: { level: 'high' },
    tool_name: 'Bash',
    tool_input: { command: 'npm run build && npm test -- --reporter dot', description: 'build and run the tests' },
  };
  const payloads = {
    PermissionRequest: JSON.stringify({
      ...base, hook_event_name: 'PermissionRequest',
      permission_suggestions: [{ type: 'addDirectories', directories: [home.work], destination: 'session' }],
    }),
    PostToolUse: JSON.stringify({
      ...base, hook_event_name: 'PostToolUse', tool_use_id: 'toolu_01',
      tool_response: { stdout: 'ok\n'.repeat(20), stderr: '', interrupted: false, isImage: false, noOutputExpected: false },
      duration_ms: 163,
    }),
  };
  const env = home.env();
  const report = (event) => `${quote(TEAM)} --home ${quote(home.dir)} __report 'w1@crew' claude ${event}`;
  const hook = [], nothing = [];
  for (let i = 0; i < RUNS; i++) {
    const event = i % 2 === 0 ? 'PermissionRequest' : 'PostToolUse';
    nothing.push(await run('true', payloads[event], env));
    hook.push(await run(report(event), payloads[event], env));
  }
  const agent = await home.agent('w1');
  const messages = await home.json(['inbox', '--type', 'needs_input']);
  if (agent.activity.source !== 'hooks' || messages.length !== Math.ceil(RUNS / 2)) {
    throw new Error(`the reports were not all taken: ${JSON.stringify(agent.activity)}, ${messages.length} needs_input`);
  }
  const figures = {};
  for (const [name, list] of [['hook', hook], ['true', nothing]]) {
    const sorted = [...list].sort((a, b) => a - b);
    figures[name] = { median: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
  }
  figures.added = { median: figures.hook.median - figures.true.median, p99: figures.hook.p99 - figures.true.p99 };
  figures.runs = RUNS;
  figures.payloadBytes = payloads.PermissionRequest.length;
  if (JSON_OUT) console.log(JSON.stringify(figures));
  else {
    const ms = (x) => `${x.toFixed(1)} ms`;
    console.log(`${RUNS} runs each, payload ${figures.payloadBytes} bytes`);
    for (const name of ['hook', 'true', 'added']) console.log(`${name.padEnd(6)} median ${ms(figures[name].median)}  p99 ${ms(figures[name].p99)}`);
  }
} finally {
  await home.team(['kill-agent', 'w1', '--force']).catch(() => {});
  await home.cleanup();
}
