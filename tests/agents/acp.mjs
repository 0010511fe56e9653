// Claude Code over ACP: claude-agent-acp (tests/agents' pinned release) hosted by `team spawn
// --acp`, its model the scripted fake of the Anthropic Messages API on 127.0.0.1
// (fake-anthropic.mjs). The adapter runs the Claude Agent SDK, which runs the SDK's own Claude Code
// binary, pointed at the fake as the Claude Code scenarios point theirs (claude.mjs): the same
// config directory and environment. Its settings say `permissions.defaultMode: "default"`: with no
// mode set the adapter starts a session in `auto`, where a Write in the session's directory runs
// without asking; in `default` every edit and command asks the client (`session/request_permission`),
// which team hands to the leader (a needs_input message; the agent's activity is `waiting`).
import assert from 'node:assert/strict';
import { cmdline, model } from './claude.mjs';
import { CLAUDE_ACP, existsSync, join, marked, readFileSync, tree } from './harness.mjs';

const WAIT = Number(process.env.TEAM_AGENTS_WAIT_MS ?? 90000);  // the bound of every wait on the agent

// An inbox message's data: an object, or its JSON text.
const data = (m) => (typeof m.data === 'string' ? JSON.parse(m.data) : m.data);

// With TEAM_AGENTS_DEBUG set, the documents the scenario reads go to stderr.
const debug = (what, doc) => {
  if (process.env.TEAM_AGENTS_DEBUG) console.error(`[${what}] ${JSON.stringify(doc)}`);
};

// Live (not zombie) processes among `pids`.
const alive = (pids) => pids.filter((p) => {
  try {
    return !/\) Z /.test(readFileSync(`/proc/${p}/stat`, 'utf8'));
  } catch {
    return false;
  }
});

// A process as a failure names it: pid, command line, state, parent, signals pending.
function describe(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const pending = [...status.matchAll(/^(SigPnd|ShdPnd):\s*(\S+)/gm)].map((m) => `${m[1]} ${m[2]}`).join(' ');
    return `${pid} ${state} ppid ${ppid} ${pending}: ${cmdline(pid).replaceAll('\0', ' ').slice(0, 160)}`;
  } catch {
    return `${pid} (gone)`;
  }
}

export const scenarios = {
  // One turn: the model writes a file with Write, which asks: the agent is waiting on it and
  // the leader, woken by its one needs_input message, allows it; working again, the file is
  // written, the turn ends `end_turn` with the model's "done" and the agent is idle; then
  // kill-agent --force leaves nothing of the agent.
  'claude-acp: a turn with a permission allowed': async (home) => {
    const target = join(home.work, 'hello.txt');
    const fake = await model(home, (c) => (c.calls.some((call) => call.name === 'Write')
      ? { text: 'done' }
      : { tool: 'Write', input: { file_path: target, content: 'hello from the agent\n' } }));
    await home.create();
    const config = home.claudeConfig('w1', { permissions: { defaultMode: 'default' } });
    const agent = await home.json(['spawn', 'w1', '--acp', '--permissions', 'ask', ...home.claudeEnv(config, fake),
      '--env', 'IS_SANDBOX=1', '--', CLAUDE_ACP]);

    // The prompt in the background; the leader waits on its inbox for the permission asked.
    const stop = new AbortController();
    try {
      const prompting = home.team(['prompt', 'w1', 'write the file', '--wait', '--timeout', '120s', '--json'],
        { timeoutMs: 150000, signal: stop.signal });
      const asking = home.team(['inbox', '--type', 'needs_input', '--unread', '--wait', `${WAIT / 1000}s`, '--json'],
        { timeoutMs: WAIT + 15000, signal: stop.signal });
      const first = await Promise.race([asking.then((r) => ({ asked: r })), prompting.then((r) => ({ prompted: r }))]);
      if (first.prompted) {
        const p = first.prompted;
        assert.fail(`the prompt ended before a permission was asked (exit ${p.code}): ${p.stderr}${p.stdout}`);
      }
      const r = first.asked;
      assert.equal(r.code, 0, `no needs_input in the leader's inbox (exit ${r.code}): ${r.stderr}${r.stdout}`);
      const [message] = JSON.parse(r.stdout);
      debug('inbox', message);
      const asked = data(message);
      assert.equal(asked.agent, 'w1', JSON.stringify(message));
      assert.ok(Number.isInteger(asked.permission), JSON.stringify(message));
      assert.equal(asked.toolCall?.kind, 'edit', JSON.stringify(message));
      assert.ok(asked.options?.some((o) => o.kind === 'allow_once'), JSON.stringify(message));
      // The Write waits for the answer.
      assert.ok(!existsSync(target), 'the file was written before the permission was answered');
      const open = await home.json(['permission', 'list']);
      assert.ok(open.some((p) => p.id === asked.permission && p.state === 'open'), JSON.stringify(open));
      // The agent waits (SPEC 17), on that request, and the leader was told once.
      const waiting = (await home.agent('w1')).activity;
      assert.equal(waiting.state, 'waiting', JSON.stringify(waiting));
      assert.equal(waiting.source, 'acp', JSON.stringify(waiting));
      assert.equal(waiting.waitingOn.kind, 'permission', JSON.stringify(waiting));
      assert.equal(waiting.waitingOn.permission, asked.permission, JSON.stringify(waiting));
      assert.equal(waiting.waitingOn.answer, `team permission allow|deny ${asked.permission}`, JSON.stringify(waiting));
      assert.deepEqual(asked.waitingOn, waiting.waitingOn, JSON.stringify(message));
      assert.equal((await home.json(['inbox', '--type', 'needs_input'])).length, 1, 'more than one needs_input message');

      await home.json(['permission', 'allow', String(asked.permission)]);
      const done = await prompting;
      assert.equal(done.code, 0, `team prompt --wait failed (exit ${done.code}): ${done.stderr}${done.stdout}`);
      const turn = JSON.parse(done.stdout);
      debug('prompt', turn);
      assert.equal(turn.success, true, done.stdout);
      assert.equal(turn.agentId, `w1@${home.teamName}`, done.stdout);
      assert.equal(turn.state, 'done', done.stdout);
      assert.equal(turn.stopReason, 'end_turn', done.stdout);
      assert.equal(turn.error, null, done.stdout);
      assert.ok(Number.isInteger(turn.turn), done.stdout);

      // Working once allowed, idle at the turn's end; one wait, one message.
      const r2 = await home.team(['wait', 'w1', '--until', 'idle', '--timeout', '30s']);
      assert.equal(r2.code, 0, `team wait w1 --until idle (exit ${r2.code}): ${r2.stderr}`);
      const states = (await home.json(['activity', '--type', 'agent_state'])).map((e) => e.details)
        .filter((d) => d.agentId === `w1@${home.teamName}`);
      debug('states', states);
      const seq = states.map((d) => `${d.state} (${d.event})`).join(' → ');
      assert.match(seq, /working \(turn started\) → waiting \(session\/request_permission\) → working \(permission answered\) → idle \(turn ended\)/, seq);
      assert.equal((await home.json(['inbox', '--type', 'needs_input'])).length, 1, 'more than one needs_input message');

      // The file, in the agent's directory.
      assert.equal(readFileSync(target, 'utf8'), 'hello from the agent\n');

      // The transcript: the prompt, the tool call completed, the model's answer.
      const logs = await home.json(['logs', 'w1']);
      debug('logs', logs);
      const records = logs.records.filter((x) => x.turn === turn.turn);
      const show = JSON.stringify(logs.records.filter((x) => x.kind !== 'other')).slice(0, 4000);
      assert.ok(records.some((x) => x.kind === 'prompt' && /write the file/.test(x.text)), show);
      const calls = records.filter((x) => x.kind === 'tool_call' && x.toolCall?.toolCallId === asked.toolCall.toolCallId);
      assert.ok(calls.some((x) => x.toolCall.status === 'completed'), show);
      const said = records.filter((x) => x.kind === 'agent_message').map((x) => x.text).join('');
      assert.match(said, /done/, show);
      assert.match(logs.output, /done/, logs.output);

      // What the turn spent (SPEC 18), from its reply's usage: its tokens once, the turn counted.
      const usage = (await home.json(['usage', 'w1'])).agents[0];
      const main = fake.mainUsage();
      debug('usage', { usage, main });
      assert.equal(usage.tokens.calls, 1, JSON.stringify(usage));
      assert.ok(usage.tokens.input > 0 && usage.tokens.output > 0, JSON.stringify(usage));
      assert.equal(usage.turns, 1, JSON.stringify(usage));

      // The request answered with the allow option.
      const all = await home.json(['permission', 'list', '--all']);
      debug('permissions', all);
      const p = all.find((x) => x.id === asked.permission);
      assert.ok(p, JSON.stringify(all));
      assert.equal(p.state, 'answered', JSON.stringify(p));
      assert.equal(p.agent, 'w1', JSON.stringify(p));
      assert.equal(p.agentId, turn.agentId, JSON.stringify(p));
      assert.equal(p.toolCall.toolCallId, asked.toolCall.toolCallId, JSON.stringify(p));
      assert.equal(p.options.find((o) => o.optionId === p.answer)?.kind, 'allow_once', JSON.stringify(p));
      assert.ok(p.answeredBy != null, JSON.stringify(p));

      // The model got the tool's result.
      const result = await fake.waitFor((c) => c.calls.some((call) => call.name === 'Write' && call.result !== undefined),
        1000, 'the result of Write');
      const write = result.conversation.called('Write')[0];
      assert.ok(!write.isError, `Write failed: ${write.result}`);

      // kill-agent --force: nothing of the agent is left (its tree, the adapter and the SDK's
      // Claude Code, read from /proc before the kill; and anything carrying its identity, this
      // home's TEAM_HOME and its TEAM_AGENT_ID: other tests' agents are w1@crew too).
      const mark = [`TEAM_AGENT_ID=${turn.agentId}`, `TEAM_HOME=${home.dir}`];
      const pids = [...new Set([...(agent.pid > 0 ? tree(agent.pid) : []), ...marked(...mark)])];
      assert.ok(pids.some((pid) => /claude-agent-sdk-linux-[^/]+\/claude\0/.test(cmdline(pid))),
        `the SDK's Claude Code is not among the agent's processes: ${pids.map((pid) => cmdline(pid).replaceAll('\0', ' ')).join('; ')}`);
      debug('processes', pids.map((pid) => `${pid} ${cmdline(pid).replaceAll('\0', ' ').slice(0, 100)}`));
      const killed = await home.json(['kill-agent', 'w1', '--force']);
      debug('kill-agent', killed);
      assert.equal(killed.phase, 'force_killed', JSON.stringify(killed));
      assert.deepEqual(alive(pids).map(describe), [], 'processes of the agent left after kill-agent --force');
      assert.deepEqual(marked(...mark).map(describe), [], `processes carrying ${mark.join(' ')} left after kill-agent --force`);
      const a = await home.agent('w1');
      assert.equal(a.status, 'terminated', JSON.stringify(a));
      assert.equal(a.exitReason, 'force_killed', JSON.stringify(a));
    } finally {
      stop.abort();
    }
  },
};
