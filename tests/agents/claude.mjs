// Claude Code (tests/agents' pinned release) spawned by `team spawn --preset claude`, its model a
// scripted fake of the Anthropic Messages API on 127.0.0.1 (fake-anthropic.mjs, teammate.mjs).
// One scenario per ctest test (label `agents`); run.mjs runs one by name.
import assert from 'node:assert/strict';
import { FakeAnthropic } from './fake-anthropic.mjs';
import { teammate } from './teammate.mjs';
import { readdirSync } from 'node:fs';
import { existsSync, join, readFileSync, tree, until } from './harness.mjs';

const WAIT = Number(process.env.TEAM_AGENTS_WAIT_MS ?? 90000);  // the bound of every wait on the agent: Claude Code starts in 2-10 s, slower under load

// A fake model for one home, stopped by its cleanup.
export async function model(home, brain) {
  const fake = await new FakeAnthropic(brain).start();
  home.cleanups.push(() => fake.stop());
  return fake;
}

// Waits until Claude Code's input box is on the agent's screen: it reads what is typed from then
// on, as a person would wait before typing (nothing else tells that the full-screen program is ready).
export async function ready(home, agent) {
  await until(async () => /for shortcuts|\u276f|^>\s/m.test(await home.screen(agent.paneId)), WAIT,
    `Claude Code's input box in ${agent.name}'s pane`);
}

// `kill-agent NAME --wait`: the document it returns (exit 0) or a failure with its output.
async function stop(home, name, more = []) {
  const r = await home.team(['kill-agent', name, '--wait', '--timeout', '60s', ...more, '--json'], { timeoutMs: 70000 });
  assert.equal(r.code, 0, `kill-agent ${name} failed (exit ${r.code}): ${r.stderr}${r.stdout}`);
  return { ...JSON.parse(r.stdout), ms: r.ms };
}

// Every answer to a confirm that came back to the model was the tool's result, not a transport
// error: the reply is written before the agent's tree is signalled (issue 24; Claude Code may be
// gone before it sends the answer on, so an answer is not required).
function confirmsAnswered(fake) {
  for (const r of fake.requests) {
    for (const call of r.conversation.called('mcp__team__shutdown_respond')) {
      if (call.input?.action !== 'confirm' || call.result === undefined) continue;
      assert.ok(!call.isError, `the confirm was answered with an error: ${call.result}`);
    }
  }
}

// The leader's next unread message, waited for.
async function nextMessage(home) {
  const [m] = await home.json(['inbox', '--unread', '--mark-read', '--limit', '1', '--wait', '90s'], { timeoutMs: 100000 });
  return m;
}

export const scenarios = {
  // The work through MCP: inbox read, task claimed, files written with Bash and Write, the task
  // done, the leader told; the first prompt is given on the command line (Claude Code sends it
  // before its MCP servers have connected: the model waits for them with WaitForMcpServers).
  'claude: the work through MCP': async (home) => {
    const fake = await model(home, teammate({
      work: [
        { tool: 'inbox_read', input: { unread: true } },
        { tool: 'task_claim', input: { id: '1' } },
        { tool: 'Bash', input: { command: 'echo "parser written" > parser.txt', description: 'write the parser' } },
        { tool: 'Write', input: { file_path: join(home.work, 'NOTES.md'), content: 'the parser reads lines\n' } },
        { tool: 'task_done', input: { id: '1' } },
        { tool: 'message_send', input: { to: 'leader', text: 'task 1 is done: parser.txt and NOTES.md' } },
      ],
    }));
    await home.create();
    await home.json(['task', 'add', 'write the parser']);
    const agent = await home.spawnClaude('w1', fake, { args: ['Work on the team tasks.'] });
    const m = await nextMessage(home);
    assert.equal(m.from, 'w1');
    assert.match(m.text, /task 1 is done/);
    assert.equal(readFileSync(join(home.work, 'parser.txt'), 'utf8'), 'parser written\n');
    assert.equal(readFileSync(join(home.work, 'NOTES.md'), 'utf8'), 'the parser reads lines\n');
    const task = await home.json(['task', 'show', '1']);
    assert.equal(task.status, 'completed');
    assert.equal(task.owner, 'w1');
    const done = await fake.waitFor((c) => c.called('mcp__team__message_send').some((x) => x.result !== undefined), WAIT, 'the result of message_send');
    const calls = done.conversation.calls.map((c) => c.name);
    for (const tool of ['mcp__team__inbox_read', 'mcp__team__task_claim', 'Bash', 'Write', 'mcp__team__task_done', 'mcp__team__message_send']) {
      assert.ok(calls.includes(tool), `${tool} was not called: ${calls.join(', ')}`);
    }
    assert.ok(agent.pid > 0);
  },

  // A graceful stop of an idle agent, nothing typed by the leader: kill-agent alone reaches it.
  'claude: a graceful stop of an idle agent': async (home) => {
    const fake = await model(home, teammate());
    await home.create();
    const agent = await home.spawnClaude('w1', fake);
    await ready(home, agent);
    const r = await stop(home, 'w1');
    assert.equal(r.phase, 'confirmed', JSON.stringify(r));
    const a = await home.agent('w1');
    assert.equal(a.status, 'terminated');
    assert.equal(a.exitReason, 'confirmed');
    assert.deepEqual(tree(agent.pid), []);
    confirmsAnswered(fake);
  },

  // The same for a busy agent: its model is thinking (slow to answer) when the request comes.
  'claude: a graceful stop of a busy agent': async (home) => {
    let thinking;
    const busy = new Promise((r) => { thinking = r; });
    const fake = await model(home, teammate({
      work: [
        { tool: 'task_claim', input: { id: '1' } },
        { tool: 'Bash', input: { command: 'echo step > step.txt', description: 'work' } },
      ],
      // The answer after the claim takes 3 s: the model is busy when the leader asks.
      onStep: (c, step) => { if (step.tool === 'Bash') thinking(); },
      delay: (c, step) => (step.tool === 'Bash' && c.called('Bash').length === 0 ? 3000 : 0),
    }));
    await home.create();
    await home.json(['task', 'add', 'long work']);
    await home.spawnClaude('w1', fake, { args: ['Claim task 1 and do it.'] });
    await busy;
    const r = await stop(home, 'w1');
    assert.equal(r.phase, 'confirmed', JSON.stringify(r));
    assert.equal((await home.agent('w1')).exitReason, 'confirmed');
    confirmsAnswered(fake);
  },

  // The channel push: Claude Code started with team's channel; its warning screen answered as a
  // person would; a message sent (no --notify) reaches the model with nothing typed, and so does
  // a shutdown request.
  'claude: the channel push': async (home) => {
    const fake = await model(home, teammate({
      work: [{ tool: 'message_send', input: { to: 'leader', text: 'heard you through the channel' } }],
    }));
    await home.create();
    const agent = await home.spawnClaude('w1', fake, { channels: true });
    // The warning about development channels: its first choice accepts.
    await until(async () => /development channels/i.test(await home.screen(agent.paneId)), WAIT, 'the channels warning');
    await home.tmux(['send-keys', '-t', agent.paneId, 'Enter']);
    await ready(home, agent);
    // A message stored before Claude Code has registered its channel handler is not shown to the
    // model (the push at the server's start comes ~200 ms too early for it: see docs/mcp.md):
    // wait for the registration, written to Claude Code's MCP log of the server.
    await until(() => mcpLog(home).includes('Channel notifications registered'), WAIT, 'the channel registered');
    await home.json(['send', 'w1', 'ping from the leader']);
    const m = await nextMessage(home);
    assert.equal(m.text, 'heard you through the channel');
    const pushed = await fake.waitFor((c) => /<channel[^>]*>[\s\S]*ping from the leader/.test(c.all), 1000, 'the push');
    assert.ok(pushed);
    // The ping's turn ends with the request that carries message_send's result (the fake then
    // answers at once): a stop made before it lands mid-turn, and under load the model then read
    // the request from its inbox before the push came, which this test is not about.
    await fake.waitFor((c) => c.called('mcp__team__message_send').length >= 1, WAIT, "the ping turn's last request");
    // --no-notify: nothing is typed into the pane, the push is the request's only way in (with the
    // notice typed too, the model may take the typed line first under load and read its inbox).
    const r = await stop(home, 'w1', ['--no-notify']);
    assert.equal(r.phase, 'confirmed', JSON.stringify(r));
    await fake.waitFor((c) => /<channel[^>]*request_id=/.test(c.all), 1000, 'the shutdown request pushed');
    confirmsAnswered(fake);
  },

  // teardown of three idle agents: every one confirms in the graceful phase.
  'claude: teardown of three agents': async (home) => {
    const fake = await model(home, teammate());
    await home.create();
    const agents = [];
    for (const name of ['w1', 'w2', 'w3']) agents.push(await home.spawnClaude(name, fake));
    for (const a of agents) await ready(home, a);
    const r = await home.team(['teardown', '--grace', '60s', '--json'], { timeoutMs: 90000 });
    assert.equal(r.code, 0, `teardown failed (exit ${r.code}): ${r.stderr}${r.stdout}`);
    const doc = JSON.parse(r.stdout);
    const rows = doc.agents ?? doc;
    assert.equal(rows.length, 3, r.stdout);
    for (const row of rows) assert.equal(row.phase, 'confirmed', r.stdout);
    for (const a of agents) assert.deepEqual(tree(a.pid), []);
  },

  // kill-agent --force of a busy agent (a long Bash): nothing of its tree is left.
  'claude: a force kill of a busy agent': async (home) => {
    const fake = await model(home, teammate({
      work: [{ tool: 'Bash', input: { command: 'sleep 300', description: 'a long build', timeout: 600000 } }],
    }));
    await home.create();
    const agent = await home.spawnClaude('w1', fake, { args: ['Build it.'] });
    const pids = await until(() => {
      const t = tree(agent.pid);
      return t.some((p) => cmdline(p) === 'sleep\x00300\x00') && t;
    }, WAIT, 'the long Bash in the agent\'s tree');
    const r = await home.team(['kill-agent', 'w1', '--force', '--json']);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.equal(JSON.parse(r.stdout).phase, 'force_killed');
    const left = pids.filter((p) => existsSync(`/proc/${p}`) && !/\) Z /.test(stat(p)));
    assert.deepEqual(left, [], 'processes of the agent left after kill-agent --force');
    assert.equal((await home.agent('w1')).exitReason, 'force_killed');
  },

  // team logs --screen: readable while the agent lives and after it ended (no escapes, the
  // transcript's words).
  'claude: logs --screen live and after the end': async (home) => {
    const fake = await model(home, teammate({ done: 'The quick brown fox jumps over the lazy dog.' }));
    await home.create();
    const agent = await home.spawnClaude('w1', fake, { args: ['Say the pangram.'] });
    const live = await until(async () => {
      const r = await home.team(['logs', 'w1', '--screen']);
      return r.code === 0 && /quick brown fox/.test(r.stdout) && r.stdout;
    }, WAIT, 'the answer on the screen');
    assert.doesNotMatch(live, /\x1b/, 'escape codes in logs --screen');
    assert.match(live, /Say the pangram/);
    const r = await home.team(['kill-agent', 'w1', '--force', '--json']);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const after = await home.team(['logs', 'w1', '--screen', '--json']);
    assert.equal(after.code, 0, after.stderr);
    const doc = JSON.parse(after.stdout);
    assert.equal(doc.live, false);
    assert.match(doc.screen, /quick brown fox/);
    const plain = await home.team(['logs', 'w1', '--screen']);
    assert.doesNotMatch(plain.stdout, /\x1b/, 'escape codes in logs --screen after the end');
    assert.match(plain.stdout, /quick brown fox/);
    assert.deepEqual(tree(agent.pid), []);
  },
};

// Claude Code's log of the `team` MCP server (under HOME/.cache/claude-cli-nodejs/PROJECT/).
export function mcpLog(home) {
  const base = join(home.dir, '.cache', 'claude-cli-nodejs');
  let text = '';
  try {
    for (const project of readdirSync(base)) {
      const dir = join(base, project, 'mcp-logs-team');
      if (!existsSync(dir)) continue;
      for (const f of readdirSync(dir)) text += readFileSync(join(dir, f), 'utf8');
    }
  } catch {
    // not written yet
  }
  return text;
}

export function cmdline(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1');
  } catch {
    return '';
  }
}

function stat(pid) {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return ') Z ';
  }
}
