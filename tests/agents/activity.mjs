// What each agent is doing (SPEC 17), told by the real agents themselves: Claude Code, Codex and
// Gemini CLI spawned by `team spawn --preset`, interactive in a pane, nothing allowed beforehand
// in their own settings, each against the scripted fake of its model on 127.0.0.1. The preset's
// hooks call `team __report`; these scenarios prove what that makes of a turn: `working` once the
// prompt is taken (`team prompt` returns on that report), `waiting` on the agent's own permission
// dialog with the tool and its command, one `needs_input` message to the leader for that wait,
// the dialog answered in the pane as a person would, then `working` and `idle` at the turn's end.
// The ACP agent's side of the same is in acp.mjs.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { FakeGemini, FakeOpenAI } from './fake-others.mjs';
import { FakeAnthropic } from './fake-anthropic.mjs';
import { claudeTools, geminiTools, teammate } from './teammate.mjs';
import { CLAUDE, CODEX, GEMINI, existsSync, join, readFileSync, safeBase, tree, until } from './harness.mjs';
import { CODEX_OFFLINE, codexHome, fake, geminiHome } from './others.mjs';
import { cmdline } from './claude.mjs';

const WAIT = Number(process.env.TEAM_AGENTS_WAIT_MS ?? 90000);  // the bound of every wait on the agent
const COMMAND = 'echo ran > ran.txt';  // the shell command each model asks to run

// `team wait w1 --until STATE`: exit 0 within WAIT, else a failure with what it said.
async function waitUntil(home, state, name = 'w1') {
  const r = await home.team(['wait', name, '--until', state, '--timeout', `${WAIT / 1000}s`], { timeoutMs: WAIT + 10000 });
  assert.equal(r.code, 0, `team wait ${name} --until ${state} (exit ${r.code}): ${r.stderr}${r.stdout}` +
    `; its activity: ${JSON.stringify((await home.agent(name))?.activity)}`);
}

// The leader's needs_input messages (read or not).
const needsInput = async (home) => home.json(['inbox', '--type', 'needs_input']);

// The agent_state entries of the activity log, for w1: [{state, from, source, event, waitingOn}].
async function states(home) {
  const entries = await home.json(['activity', '--type', 'agent_state']);
  return entries.map((e) => e.details ?? e.data ?? e).filter((d) => String(d.agentId).startsWith('w1@'));
}

// `list` holds `wanted` in order (other entries between them allowed).
function inOrder(list, wanted, what) {
  let at = 0;
  for (const x of list) if (at < wanted.length && x === wanted[at]) at++;
  assert.equal(at, wanted.length, `${what}: ${wanted.join(' → ')} not in order in ${list.join(' → ')}`);
}

// The start of a turn of a preset agent: the prompt taken (by its report), working, then
// waiting on its own permission dialog for COMMAND (waitingOn: `expect`), one needs_input
// message to the leader, the command not run. `before(agent)`: what to wait for before typing
// (as a person waits for the agent's input box).
async function turn(home, agent, { expect, before, asks }) {
  await before(agent);
  // Waited for from before the prompt: the turn may be over by the time the prompt returns.
  const stop = new AbortController();
  try {
    const working = home.team(['wait', 'w1', '--until', 'working', '--timeout', `${WAIT / 1000}s`],
      { timeoutMs: WAIT + 10000, signal: stop.signal });
    const prompt = await home.team(['prompt', 'w1', 'Say hello to the leader, then write ran.txt.', '--json']);
    assert.equal(prompt.code, 0, `team prompt (exit ${prompt.code}): ${prompt.stderr}${prompt.stdout}`);
    const taken = JSON.parse(prompt.stdout);
    assert.equal(taken.taken, true, prompt.stdout);
    assert.equal(taken.how, 'report', prompt.stdout);
    assert.equal((await working).code, 0, 'the agent never reported working');
  } finally {
    stop.abort();
  }

  // Its own dialog: waiting, on the command.
  await waitUntil(home, 'waiting');
  const a = await home.agent('w1');
  assert.equal(a.activity.state, 'waiting', JSON.stringify(a.activity));
  assert.equal(a.activity.source, 'hooks', JSON.stringify(a.activity));
  assert.deepEqual(a.activity.waitingOn, { kind: 'permission', ...expect }, JSON.stringify(a.activity));
  const [message, ...more] = await needsInput(home);
  assert.deepEqual(more, [], 'more than one needs_input message');
  assert.equal(message?.from, 'w1', JSON.stringify(message));
  const data = typeof message.data === 'string' ? JSON.parse(message.data) : message.data;
  assert.deepEqual(data.waitingOn, a.activity.waitingOn, JSON.stringify(message));
  assert.match(message.text, /echo ran > ran\.txt/, JSON.stringify(message));
  assert.ok(!existsSync(join(home.work, 'ran.txt')), 'the command ran before it was allowed');
  // The person sees the dialog before answering it.
  await until(async () => asks.test(await home.screen(agent.paneId)), WAIT, "the agent's permission dialog");
  return { a, message };
}

// The dialog answered with `answer` typed through `team prompt` (taken when the wait ends): the
// turn ends idle, the command ran, the log holds the turn's states and `expectEvents`, one wait.
async function turnEnds(home, answer, expectEvents) {
  const r = await home.team(['prompt', 'w1', answer, '--json']);
  assert.equal(r.code, 0, `team prompt w1 ${answer} (the answer; exit ${r.code}): ${r.stderr}${r.stdout}`);
  if (process.env.TEAM_AGENTS_DEBUG) console.error(`[answer] ${r.stdout.trim()} ${Math.round(r.ms)} ms`);
  // Taken by the report that the wait ended, or by the screen (the key read, the dialog gone).
  assert.match(JSON.parse(r.stdout).how, /^(report|screen)$/, r.stdout);
  await waitUntil(home, 'idle');
  await until(() => existsSync(join(home.work, 'ran.txt')), WAIT, 'ran.txt written by the allowed command');
  const log = await states(home);
  if (process.env.TEAM_AGENTS_DEBUG) console.error(JSON.stringify(log));
  inOrder(log.map((d) => d.state), ['working', 'waiting', 'working', 'idle'], 'the states');
  inOrder(log.map((d) => d.event), expectEvents, 'the events');
  assert.equal(log.filter((d) => d.state === 'waiting').length, 1, JSON.stringify(log));
  assert.equal((await needsInput(home)).length, 1, 'a second needs_input message');
  return log;
}

// The model of these turns: the team's message_send (a tool that asks nobody), then the agent's
// own shell tool (which asks), then "done".
async function model(home, Fake, T, shell) {
  return fake(home, Fake, teammate({ T, work: [{ tool: 'message_send', input: { to: 'leader', text: 'hello' } }, { ...shell, own: true }] }));
}

// Live `team __report` processes under `pid`.
const reporting = (pid) => tree(pid).filter((p) => cmdline(p).includes('\0__report\0'));

// Codex in a pane, prompted to run a command outside its sandbox, at its dialog: its hooks said
// working, then waiting on the command (one needs_input). Its first hook comes with the first
// prompt: the prompt waits for its input box, as a person would.
async function codexAtItsDialog(home) {
  const m = await model(home, FakeOpenAI, claudeTools, {
    tool: 'exec_command',
    input: { cmd: COMMAND, sandbox_permissions: 'require_escalated', justification: 'write ran.txt' },
  });
  await home.create();
  const agent = await home.json(['spawn', 'w1', '--preset', 'codex', ...codexHome(home, m), '--', CODEX, ...CODEX_OFFLINE]);
  await turn(home, agent, {
    expect: { tool: 'Bash', command: COMMAND },
    asks: /Would you like to run the following command\?/,
    before: async () => until(async () => /Ask Codex to do anything|\u203a /.test(await home.screen(agent.paneId)), WAIT, "Codex's input box"),
  });
  return agent;
}

export const scenarios = {
  // Claude Code, Bash not allowed (its preset allows only the team's tools): PermissionRequest
  // says waiting on Bash and the command; the Notification that comes 6 s later, while the
  // dialog still shows, sends no second message; "1" typed in the pane answers it.
  'claude: waiting on a permission, answered in the pane': async (home) => {
    const m = await model(home, FakeAnthropic, claudeTools, { tool: 'Bash', input: { command: COMMAND, description: 'write ran.txt' } });
    await home.create();
    // A hook of the test's own beside the preset's: it tells when Claude Code's Notification
    // has fired (its user settings and --settings' hooks both run).
    const seen = join(home.dir, 'notification.json');
    const config = home.claudeConfig('w1', { permissions: {} });
    writeFileSync(join(config, 'settings.json'), JSON.stringify({
      permissions: {},
      hooks: { Notification: [{ hooks: [{ type: 'command', command: `cat >> '${seen}'` }] }] },
    }));
    const agent = await home.json(['spawn', 'w1', '--preset', 'claude', ...home.claudeEnv(config, m), '--', CLAUDE]);
    const { message } = await turn(home, agent, {
      expect: { tool: 'Bash', command: COMMAND },
      asks: /Do you want to proceed\?/,
      // SessionStart says idle: its input box is there.
      before: async () => waitUntil(home, 'idle'),
    });
    assert.match(message.text, /Bash/, message.text);
    // The late Notification (permission_prompt) while the dialog shows: the same wait.
    await until(() => existsSync(seen) && /permission_prompt/.test(readFileSync(seen, 'utf8')), WAIT, "Claude Code's Notification");
    await until(() => reporting(agent.pid).length === 0, WAIT, 'the hooks of the Notification to finish');
    assert.equal((await needsInput(home)).length, 1, 'the late Notification added a needs_input message');
    assert.equal((await home.agent('w1')).activity.state, 'waiting');
    // Answered: working again, said by Claude Code's state file (busy, as the command starts) or
    // by its PostToolUse (once the command has run), whichever comes first.
    const log = await turnEnds(home, '1', ['UserPromptSubmit', 'PermissionRequest', 'Stop']);
    const resumed = log[log.findIndex((d) => d.state === 'waiting') + 1];
    assert.match(resumed.event, /^(state file: busy|PostToolUse)$/, JSON.stringify(log));
    await home.json(['kill-agent', 'w1', '--force']);
  },

  // Codex: its hooks (wired by -c hooks.… and --dangerously-bypass-hook-trust) say working at
  // the prompt, waiting on the command it wants run outside its sandbox, idle at Stop.
  'codex: working, waiting and idle from its hooks': async (home) => {
    const agent = await codexAtItsDialog(home);
    // "y": yes, this once.
    await turnEnds(home, 'y', ['UserPromptSubmit', 'PermissionRequest', 'PostToolUse', 'Stop']);
    await home.json(['kill-agent', 'w1', '--force']);
  },

  // The same dialog answered no (Escape): Codex says so with its Interrupt hook, idle; the
  // command never runs. (Claude Code and Gemini CLI run no hook at that answer: they stay
  // `waiting` until their next prompt; Claude Code's idle_prompt Notification, 60 s on, aside.)
  'codex: a dialog answered no is idle': async (home) => {
    const agent = await codexAtItsDialog(home);
    // Escape until the dialog is gone, as a person presses it again when the first went unseen
    // (a key that comes before the dialog reads keys is lost).
    let pressed = 0;
    await until(async () => {
      if (!/Would you like to run the following command\?/.test(await home.screen(agent.paneId))) return true;
      if (pressed++ % 30 === 0) await home.tmux(['send-keys', '-t', agent.paneId, 'Escape']);
      return false;
    }, WAIT, 'the dialog answered no');
    await waitUntil(home, 'idle');
    const log = await states(home);
    assert.equal(log.at(-1).event, 'Interrupt', JSON.stringify(log));
    assert.equal(log.at(-2).state, 'waiting', JSON.stringify(log));
    assert.ok(!existsSync(join(home.work, 'ran.txt')), 'the command refused ran');
    await home.json(['kill-agent', 'w1', '--force']);
  },

  // Gemini CLI: BeforeAgent working, its Notification ToolPermission waiting on the command,
  // AfterAgent idle; a shutdown notice at its dialog leaves the dialog alone.
  'gemini: working, waiting and idle from its hooks': withSafeHome(async (home) => {
    const m = await model(home, FakeGemini, geminiTools, { tool: 'run_shell_command', input: { command: COMMAND, description: 'write ran.txt' } });
    await home.create();
    const agent = await home.json(['spawn', 'w1', '--preset', 'gemini', ...geminiHome(home, m), '--', GEMINI, '-m', 'gemini-2.5-flash']);
    await turn(home, agent, {
      expect: { tool: 'Confirm Shell Command', command: COMMAND },
      asks: /Allow execution of/,
      // SessionStart says idle (its input box shows before). The prompt is a paste, and the Enter
      // that follows it within ~0.8 s is a newline to Gemini CLI: `team prompt` presses it again.
      before: async () => waitUntil(home, 'idle'),
    });
    // A graceful stop asked while the dialog shows: its notice never answers the dialog (a
    // paste, which the dialog ignores, and no Enter), and the leader is told why.
    const asked = await home.json(['kill-agent', 'w1']);
    assert.equal(asked.phase, 'requested', JSON.stringify(asked));
    assert.match(asked.notifyError ?? '', /waits at a dialog/, JSON.stringify(asked));
    assert.match(await home.screen(agent.paneId), /Allow execution of/);
    assert.equal((await home.agent('w1')).activity.state, 'waiting');
    assert.ok(!existsSync(join(home.work, 'ran.txt')), 'the notice answered the dialog');
    // "1": allow once.
    await turnEnds(home, '1', ['BeforeAgent', 'Notification', 'AfterTool', 'AfterAgent']);
    await home.json(['kill-agent', 'w1', '--force']);
  }),
};

// The scenario on a home where Gemini CLI reads the preset's settings file (safeBase).
function withSafeHome(body) {
  body.homeOptions = () => ({ base: safeBase() });
  return body;
}
