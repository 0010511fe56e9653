// An agent brought back after a reboot (SPEC 19, issue 41): Claude Code, Codex and Gemini CLI,
// each spawned by `team spawn NAME --preset P --worktree` in a git repository the test makes,
// interactive in its pane with nothing allowed beforehand, its model a scripted fake on
// 127.0.0.1 that answers every prompt `ANSWER <word>` and records every request. In each run:
//   1. one prompt through `team prompt`, answered: the agent's conversation begins;
//   2. work left behind: an uncommitted file in its worktree, a message it has not read, a task
//      it holds (its epoch noted);
//   3. the reboot: every process of the home SIGKILLed, its tmux server included, until none
//      is left; `team agents --all` says the agent was lost;
//   4. `team resume --all`: resumed, with its conversation's kind and id;
//   5. the next prompt's request to the model carries the first prompt and its answer; the file
//      is there unchanged, the message unread, the task held by it again at a higher epoch; and
//      `team usage` counts every call the fake answered once (the record the agent appends to
//      after the resume also holds the calls from before the kill).
// And Claude Code never prompted before the reboot: resumed "fresh", and it works.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { FakeGemini, FakeOpenAI } from './fake-others.mjs';
import { FakeAnthropic, contentText } from './fake-anthropic.mjs';
import { CLAUDE, CODEX, GEMINI, join, marked, readFileSync, safeBase, until } from './harness.mjs';
import { CODEX_OFFLINE, codexHome, fake, geminiHome } from './others.mjs';

const WAIT = Number(process.env.TEAM_AGENTS_WAIT_MS ?? 90000);  // the bound of every wait on the agent
const debug = (...a) => process.env.TEAM_AGENTS_DEBUG && console.error('[resume]', ...a);

// The fake's brain: `ANSWER <word>` for a prompt `... prompt <word>`.
const answering = (c) => ({ text: `ANSWER ${c.typed.match(/prompt (\w+)/)?.[1] ?? 'nothing'}` });

// The team's directory made a git repository with one commit, so that `--worktree` has one.
function gitRepo(home) {
  const git = (...args) => execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args],
    { cwd: home.work, env: home.env(), stdio: 'pipe' });
  writeFileSync(join(home.work, 'README.md'), 'the project\n');
  git('init', '-q', '-b', 'main');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'first');
}

// Where `team spawn NAME --worktree` puts the agent's worktree (docs/guide.md, Worktrees): its
// config must trust it beforehand, as it does the team's directory.
const worktreeOf = (home, name) => join(home.dir, 'worktrees', home.teamName, name);

// `--env KEY=VALUE` flags as the environment that `team resume` needs (the store keeps only
// their names: the values come from whoever resumes).
function envOf(flags) {
  const env = {};
  for (let i = 0; i < flags.length; i += 2) {
    const kv = flags[i + 1];
    env[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 1);
  }
  return env;
}

// The set-up of each agent: the fake, the spawn's flags, the command. `trusted`: a directory
// its config trusts beside the team's.
const agents = {
  claude: async (home, trusted) => {
    const model = await fake(home, FakeAnthropic, answering);
    const config = home.claudeConfig('w', { permissions: {} });
    const file = join(config, '.claude.json');
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    doc.projects[trusted] = { ...doc.projects[home.work] };
    writeFileSync(file, JSON.stringify(doc, null, 2));
    return { model, flags: home.claudeEnv(config, model), command: [CLAUDE], kind: 'claude' };
  },
  codex: async (home, trusted) => {
    const model = await fake(home, FakeOpenAI, answering);
    const flags = codexHome(home, model);
    const config = join(home.dir, 'codex', 'config.toml');
    writeFileSync(config, `${readFileSync(config, 'utf8')}[projects.${JSON.stringify(trusted)}]\ntrust_level = "trusted"\n`);
    return { model, flags, command: [CODEX, ...CODEX_OFFLINE], kind: 'codex' };
  },
  gemini: async (home, trusted) => {
    const model = await fake(home, FakeGemini, answering);
    const flags = geminiHome(home, model);
    const file = join(home.dir, 'gemini', '.gemini', 'trustedFolders.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), [trusted]: 'TRUST_FOLDER' }));
    return { model, flags, command: [GEMINI, '-m', 'gemini-2.5-flash'], kind: 'gemini' };
  },
};

// Until the agent's input box is there: its SessionStart hook (idle) for Claude Code and Gemini
// CLI; Codex's first hook comes with the first prompt, so its screen.
async function ready(home, name, kind) {
  if (kind === 'codex') {
    const a = await home.agent(name);
    await until(async () => /Ask Codex to do anything|\u203a /.test(await home.screen(a.paneId)), WAIT, "Codex's input box");
    return;
  }
  await waitUntil(home, name, 'idle');
}

async function waitUntil(home, name, state) {
  const r = await home.team(['wait', name, '--until', state, '--timeout', `${WAIT / 1000}s`], { timeoutMs: WAIT + 10000 });
  assert.equal(r.code, 0, `team wait ${name} --until ${state} (exit ${r.code}): ${r.stderr}${r.stdout}`);
}

// A prompt typed by `team prompt` (taken), answered by the fake, the agent idle again: the
// fake's first request that carries it.
async function turn(home, model, name, text) {
  const r = await home.team(['prompt', name, text, '--json']);
  assert.equal(r.code, 0, `team prompt ${name} ${JSON.stringify(text)} (exit ${r.code}): ${r.stderr}${r.stdout}`);
  assert.equal(JSON.parse(r.stdout).taken, true, r.stdout);
  const request = await model.waitFor((c) => c.typed.includes(text), WAIT, `the prompt ${JSON.stringify(text)}`);
  await waitUntil(home, name, 'idle');
  return request;
}

// `team usage NAME --json`: its row.
async function usage(home, name) {
  const doc = await home.json(['usage', name]);
  assert.equal(doc.agents.length, 1, JSON.stringify(doc));
  return doc.agents[0];
}

const tokensOf = (t) => ({ input: t.input, output: t.output, cacheRead: t.cacheRead, cacheWrite: t.cacheWrite, calls: t.calls });

// Waits until `team usage` holds, to the token, every call of the agent's own conversation that
// the fake answered (mainUsage()); fails at once when it holds more (a call counted twice).
async function usageEqualsTheFake(home, model, name) {
  let last;
  try {
    return await until(async () => {
      last = await usage(home, name);
      const want = model.mainUsage();
      const have = tokensOf(last.tokens);
      if (have.calls > want.calls || have.input > want.input) {
        throw new Error(`team usage counts more than the fake answered: ${JSON.stringify(have)}, the fake ${JSON.stringify(want)}`);
      }
      return JSON.stringify(have) === JSON.stringify(want) && last;
    }, WAIT, "team usage's tokens to equal the fake's");
  } catch (e) {
    e.message += `\n  team usage: ${JSON.stringify(last?.tokens)} (records ${last?.records})\n  the fake:   ${JSON.stringify(model.mainUsage())}`;
    throw e;
  }
}

// Whether process `pid` has exited: no such process, or a zombie.
function exited(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

// The reboot: every process of the home (each carries its marker) SIGKILLed, its tmux server,
// the agents' pane supervisors, watchers and the agents included, again until none is left.
async function reboot(home) {
  const killed = new Set();
  await until(() => {
    const left = marked(home.mark);
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
      } catch {
        // gone meanwhile
      }
    }
    return left.length === 0;
  }, 10000, 'every process of the home to be gone');
  // Each has exited, not only lost its environment (a process being killed loses it first: a
  // look meanwhile would still see it running): gone, or a zombie.
  await until(() => [...killed].every(exited), 10000, 'every process killed to have exited');
  debug(`killed ${killed.size} processes`);
  assert.ok(killed.size > 0);
}

// The messages of a conversation as text, for a failure's message.
const said = (c) => c.messages.map((m) => `${m.role}: ${contentText(m.content).replace(/\s+/g, ' ').slice(-80)}`).join(' | ');

// The run of one agent (see the top).
async function resumedAfterReboot(home, kind) {
  gitRepo(home);
  await home.create();
  await home.json(['config', 'set', 'sample-every', '200ms']);
  const wt = worktreeOf(home, 'w1');
  const { model, flags, command } = await agents[kind](home, wt);
  const spawned = await home.json(['spawn', 'w1', '--preset', kind, '--worktree', ...flags, '--', ...command]);
  debug('spawned', JSON.stringify(spawned).slice(0, 400));
  await ready(home, 'w1', kind);

  // 1. Its conversation begins.
  await turn(home, model, 'w1', 'first prompt ALPHA');
  const before = await usageEqualsTheFake(home, model, 'w1');
  const w1 = await home.agent('w1');
  assert.equal(w1.worktree?.path ?? w1.worktree, wt, `its worktree: ${JSON.stringify(w1.worktree)}`);

  // 2. Work left behind.
  const notes = join(wt, 'notes.txt');
  writeFileSync(notes, 'half done, not committed\n');
  const sent = await home.json(['send', 'w1', 'the message w1 has not read']);
  const messageId = sent.id ?? sent.messageId ?? sent;
  const added = await home.json(['task', 'add', 'the task w1 holds']);
  const claimed = await home.json(['task', 'claim', String(added.id), '--as', 'w1']);
  assert.equal(claimed.owner, 'w1', JSON.stringify(claimed));
  const epoch = (await home.json(['task', 'show', String(added.id)])).epoch;
  assert.equal(typeof epoch, 'number');

  // 3. The reboot.
  await reboot(home);
  const lost = await home.agent('w1');
  assert.equal(lost.status, 'terminated', JSON.stringify(lost));
  assert.equal(lost.exitReason, 'lost', JSON.stringify(lost));

  // 4. Resumed.
  const seen = model.requests.length;
  const resumed = await home.json(['resume', '--all'], { env: envOf(flags) });
  debug('resume', JSON.stringify(resumed));
  assert.equal(resumed.agents.length, 1, JSON.stringify(resumed));
  const [o] = resumed.agents;
  assert.equal(o.name, 'w1');
  assert.equal(o.outcome, 'resumed', JSON.stringify(o));
  assert.equal(o.conversation, kind, JSON.stringify(o));
  assert.match(o.conversationId ?? '', /^[0-9a-f-]{36}$/, JSON.stringify(o));
  assert.equal(o.worktree, wt, JSON.stringify(o));
  assert.deepEqual(o.tasks, [String(added.id)], JSON.stringify(o));
  await ready(home, 'w1', kind);
  const back = await home.agent('w1');
  assert.equal(back.status, 'active', JSON.stringify(back));
  assert.equal(back.id, w1.id, 'the same record');

  // 5. Its conversation, carried into the next request.
  const next = await turn(home, model, 'w1', 'second prompt BRAVO');
  assert.ok(model.requests.indexOf(next) >= seen, 'the request came after the resume');
  const c = next.conversation;
  const user = c.messages.filter((m) => m.role === 'user').map((m) => contentText(m.content)).join('\n');
  const assistant = c.messages.filter((m) => m.role === 'assistant').map((m) => contentText(m.content)).join('\n');
  assert.ok(user.includes('first prompt ALPHA'), `the first prompt is not in the request after the resume: ${said(c)}`);
  assert.ok(assistant.includes('ANSWER ALPHA'), `the first answer is not in the request after the resume: ${said(c)}`);
  // Its work: the file as it was, the message unread, the task held again at a higher epoch.
  assert.equal(readFileSync(notes, 'utf8'), 'half done, not committed\n');
  const status = execFileSync('git', ['status', '--porcelain'], { cwd: wt, env: home.env() }).toString();
  assert.match(status, /^\?\? notes\.txt$/m, status);
  const unread = await home.json(['inbox', '--agent', 'w1', '--unread']);
  assert.ok(unread.some((m) => String(m.id) === String(messageId) && m.text === 'the message w1 has not read'),
    `the message is not unread: ${JSON.stringify(unread)}`);
  const task = await home.json(['task', 'show', String(added.id)]);
  assert.equal(task.owner, 'w1', JSON.stringify(task));
  assert.equal(task.status, 'in_progress', JSON.stringify(task));
  assert.ok(task.epoch > epoch, `the task's epoch ${task.epoch}, ${epoch} before the reboot`);

  // Spending: every call the fake answered, once (the calls from before the kill not again).
  const after = await usageEqualsTheFake(home, model, 'w1');
  assert.ok(after.tokens.calls > before.tokens.calls, JSON.stringify({ before: before.tokens, after: after.tokens }));
  // The conversation's id is the agent's own: its record (the one team reads) is named after
  // it (Claude Code's transcript, Codex's rollout) or says it (Gemini CLI's chat file's header).
  const record = after.records ?? '';
  if (kind === 'gemini') {
    assert.equal(JSON.parse(readFileSync(record, 'utf8').split('\n')[0]).sessionId, o.conversationId, record);
  } else {
    assert.ok(record.endsWith(`${o.conversationId}.jsonl`), `the record ${record}, the conversation ${o.conversationId}`);
  }
  const settled = await usage(home, 'w1');
  assert.deepEqual(tokensOf(settled.tokens), tokensOf(model.mainUsage()), 'team usage a moment later');
  console.error(`[resume] ${kind}: ${o.outcome} ${o.conversationId}; ${model.requests.length} requests, ` +
    `${before.tokens.calls} calls before the reboot, ${after.tokens.calls} in all, ${after.tokens.total} tokens`);
  await home.json(['kill-agent', 'w1', '--force']);
}

export const scenarios = {
  'claude: resumed after a reboot, with its conversation and work': (home) => resumedAfterReboot(home, 'claude'),
  'codex: resumed after a reboot, with its conversation and work': (home) => resumedAfterReboot(home, 'codex'),
  'gemini: resumed after a reboot, with its conversation and work': withSafeHome((home) => resumedAfterReboot(home, 'gemini')),

  // Claude Code never prompted: nothing to resume, so it starts fresh under its id, and works.
  'claude: never prompted before a reboot, resumed fresh': async (home) => {
    gitRepo(home);
    await home.create();
    const wt = worktreeOf(home, 'w1');
    const { model, flags, command } = await agents.claude(home, wt);
    await home.json(['spawn', 'w1', '--preset', 'claude', '--worktree', ...flags, '--', ...command]);
    await ready(home, 'w1', 'claude');
    await reboot(home);
    assert.equal((await home.agent('w1')).exitReason, 'lost');
    const resumed = await home.json(['resume', '--all'], { env: envOf(flags) });
    const [o] = resumed.agents;
    assert.equal(o.outcome, 'fresh', JSON.stringify(o));
    assert.equal(o.conversation, 'claude', JSON.stringify(o));
    assert.match(o.why ?? '', /not begun/, JSON.stringify(o));
    await ready(home, 'w1', 'claude');
    const r = await turn(home, model, 'w1', 'first prompt DELTA');
    assert.ok(!r.conversation.messages.some((m) => m.role === 'assistant'), `a fresh conversation: ${said(r.conversation)}`);
    await usageEqualsTheFake(home, model, 'w1');
    await home.json(['kill-agent', 'w1', '--force']);
  },
};

// The scenario on a home where Gemini CLI reads the preset's settings file (safeBase).
function withSafeHome(body) {
  body.homeOptions = () => ({ base: safeBase() });
  return body;
}
