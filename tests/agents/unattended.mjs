// The presets with nobody at the keyboard (issue 37): Claude Code, Codex and Gemini CLI, each
// spawned by `team spawn --preset`, interactive in its tmux pane as a team's agents run, with
// nothing allowed beforehand in its own settings (only its first-run screens prepared: the
// onboarding, the key, the folder's trust), its model a scripted fake of its API on 127.0.0.1.
// In each run:
//   1. the model's first answer calls a team tool (message_send): it goes through with nobody
//      typing, since the preset allowed the team's server;
//   2. the model asks for a shell command: the agent's own permission prompt shows, since the
//      preset allowed nothing else; the person says no (Escape) and the command never runs;
//   3. the leader's graceful kill-agent: the notice typed into the pane, the request read from
//      the inbox and answered through the tools (approve, confirm), the agent ended, its tree gone.
// Also the one-shot modes (`codex exec` in others.mjs, `gemini -p` here) and a Gemini spawn
// refused for a home whose directories Gemini CLI would not trust.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync } from 'node:fs';
import { FakeGemini, FakeOpenAI } from './fake-others.mjs';
import { FakeAnthropic } from './fake-anthropic.mjs';
import { claudeTools, geminiTools, teammate } from './teammate.mjs';
import { CODEX, GEMINI, existsSync, join, safeBase, tree, until } from './harness.mjs';
import { CODEX_OFFLINE, codexHome, fake, geminiHome } from './others.mjs';

const WAIT = Number(process.env.TEAM_AGENTS_WAIT_MS ?? 90000);

// The leader's next unread message, waited for.
async function nextMessage(home) {
  const [m] = await home.json(['inbox', '--unread', '--mark-read', '--limit', '1', '--wait', '90s'], { timeoutMs: 100000 });
  return m;
}

// The run of one agent (see the top): `spawn(model, prompt)` spawns w1 with the preset,
// `shell` is the model's call of the agent's own shell tool, `asks` what its permission prompt
// says on the screen.
async function unattended(home, { Fake, T, spawn, shell, asks }) {
  const steps = [];
  const model = await fake(home, Fake, teammate({
    T,
    work: [
      { tool: 'message_send', input: { to: 'leader', text: 'hello from w1, unasked' } },
      { ...shell, own: true },
    ],
    onStep: (c, step) => steps.push(step.tool ?? 'text'),
  }));
  await home.create();
  const agent = await spawn(model, 'Say hello to the leader, then write ran.txt.');
  // 1. The team's tool, called with nobody at the keyboard.
  const m = await nextMessage(home);
  assert.equal(m.from, 'w1');
  assert.equal(m.text, 'hello from w1, unasked');
  // The model's first answer was a team tool (Claude Code's own WaitForMcpServers may come first,
  // when the prompt given at start reached the model before the server had connected; it asks
  // nobody).
  const first = steps.filter((s) => s !== 'WaitForMcpServers')[0];
  assert.ok(first.startsWith(T('')), `the model's first answer: ${steps.join(', ')}`);
  // 2. The agent's own tool still asks its person.
  const screen = await until(async () => {
    const s = await home.screen(agent.paneId);
    return asks.test(s) && s;
  }, WAIT, "the agent's permission prompt for the shell command");
  assert.match(screen, /echo ran > ran\.txt/);
  // Escape until the prompt is gone, as a person presses it again when the first went unseen
  // (a key that comes before the prompt reads keys is lost: seen once in CI with Codex).
  let pressed = 0;
  await until(async () => {
    if (!asks.test(await home.screen(agent.paneId))) return true;
    if (pressed++ % 30 === 0) await home.tmux(['send-keys', '-t', agent.paneId, 'Escape']);
    return false;
  }, WAIT, 'the prompt answered no');
  // 3. A graceful stop, answered through the team's tools.
  const r = await home.team(['kill-agent', 'w1', '--wait', '--timeout', '60s', '--json'], { timeoutMs: 70000 });
  assert.equal(r.code, 0, `kill-agent w1 failed (exit ${r.code}): ${r.stderr}${r.stdout}`);
  assert.equal(JSON.parse(r.stdout).phase, 'confirmed', r.stdout);
  const a = await home.agent('w1');
  assert.equal(a.exitReason, 'confirmed');
  assert.deepEqual(tree(agent.pid), []);
  assert.ok(!existsSync(join(home.work, 'ran.txt')), 'the refused command ran');
  const calls = model.requests.at(-1).conversation.calls.map((c) => c.name);
  for (const tool of ['message_send', 'inbox_read', 'shutdown_respond']) {
    assert.ok(calls.includes(T(tool)), `${T(tool)} was not called: ${calls.join(', ')}`);
  }
}

export const scenarios = {
  'claude: unattended in a pane, nothing allowed beforehand': withSafeHome(async (home) => {
    await unattended(home, {
      Fake: FakeAnthropic,
      T: claudeTools,
      spawn: (model, prompt) => home.spawnClaude('w1', model, { permissions: {}, args: [prompt] }),
      shell: { tool: 'Bash', input: { command: 'echo ran > ran.txt', description: 'write ran.txt' } },
      asks: /Do you want to proceed\?/,
    });
  }),

  'codex: unattended in a pane, nothing allowed beforehand': withSafeHome(async (home) => {
    await unattended(home, {
      Fake: FakeOpenAI,
      T: claudeTools,
      spawn: (model, prompt) => home.json(['spawn', 'w1', '--preset', 'codex', ...codexHome(home, model), '--', CODEX, ...CODEX_OFFLINE, prompt]),
      // Codex runs a command in its sandbox without asking; one the model wants run outside it
      // asks the person.
      shell: {
        tool: 'exec_command',
        input: { cmd: 'echo ran > ran.txt', sandbox_permissions: 'require_escalated', justification: 'write ran.txt' },
      },
      asks: /Would you like to run the following command\?/,
    });
  }),

  'gemini: unattended in a pane, nothing allowed beforehand': withSafeHome(async (home) => {
    await unattended(home, {
      Fake: FakeGemini,
      T: geminiTools,
      spawn: (model, prompt) => home.json(['spawn', 'w1', '--preset', 'gemini', ...geminiHome(home, model), '--', GEMINI, '-m', 'gemini-2.5-flash', '-i', prompt]),
      shell: { tool: 'run_shell_command', input: { command: 'echo ran > ran.txt', description: 'write ran.txt' } },
      asks: /Allow execution of/,
    });
  }),

  // gemini -p: one prompt, the team's tools called, the agent ends.
  'gemini: a prompt through gemini -p': withSafeHome(async (home) => {
    const model = await fake(home, FakeGemini, teammate({
      T: geminiTools,
      work: [
        { tool: 'task_claim', input: { id: '1' } },
        { tool: 'message_send', input: { to: 'leader', text: 'claimed task 1 through MCP' } },
      ],
    }));
    await home.create();
    await home.json(['task', 'add', 'a task for gemini']);
    await home.json(['spawn', 'w1', '--preset', 'gemini', ...geminiHome(home, model), '--', GEMINI, '-m', 'gemini-2.5-flash', '-p', 'Claim task 1 and tell the leader.']);
    const m = await nextMessage(home);
    assert.equal(m.from, 'w1');
    assert.equal(m.text, 'claimed task 1 through MCP');
    const done = await model.waitFor((c) => c.called(geminiTools('message_send')).some((x) => x.result !== undefined), WAIT, 'the result of message_send');
    const calls = done.conversation.calls.map((c) => c.name);
    assert.ok(calls.includes(geminiTools('task_claim')), calls.join(', '));
    // It ends after its prompt: then its claimed task is back in the pool.
    await until(async () => (await home.agent('w1')).status === 'terminated', WAIT, 'gemini -p to end');
    const task = await home.json(['task', 'show', '1']);
    assert.equal(task.status, 'pending', JSON.stringify(task));
  }),

  // A home under a directory others may write (as the system's temporary directory is; made so
  // here, whatever TMPDIR says): Gemini CLI would skip the preset's settings file, so the spawn is
  // refused, with the reason and the fix, and leaves nothing: no agent, no file, no pane.
  'gemini: refused for a home under a directory others may write': async (home) => {
    const shared = join(home.dir, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    const env = { TEAM_HOME: join(shared, 'home') };
    const created = await home.team(['create', home.teamName, '--cwd', home.work], { env });
    assert.equal(created.code, 0, created.stderr);
    const r = await home.team(['spawn', 'w1', '--preset', 'gemini', '--', GEMINI], { env });
    assert.equal(r.code, 2, r.stderr + r.stdout);
    const why = process.getuid() === 0 ? `'${shared}' is writable by others` : 'not root';
    assert.ok(r.stderr.includes(why), r.stderr);
    assert.match(r.stderr, /Fix: /);
    const agents = await home.team(['agents', '--all', '--json'], { env });
    assert.deepEqual(JSON.parse(agents.stdout), []);
    assert.ok(!existsSync(join(env.TEAM_HOME, 'presets')));
    assert.ok(!existsSync(join(env.TEAM_HOME, 'tmux.sock')));
  },
};

// The scenario on a home where Gemini CLI reads the preset's settings file (safeBase): the
// homes of all these scenarios, so each agent is proven where a user's default home would be.
function withSafeHome(body) {
  body.homeOptions = () => ({ base: safeBase() });
  return body;
}
