// Codex (tests/agents' pinned release) spawned by `team spawn --preset codex`, pointed at a
// scripted fake of OpenAI's Responses API on 127.0.0.1 (fake-others.mjs). It runs one prompt
// (`codex exec`) in which the model reads the inbox, claims task 1 and tells the leader through
// the team's MCP tools; the agent then ends. Nothing in its config approves the team's server:
// the preset does. Also the set-ups of Codex and Gemini CLI that unattended.mjs shares (Codex and
// Gemini CLI interactive in a pane, and `gemini -p`, are there).
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { FakeOpenAI } from './fake-others.mjs';
import { CODEX, join } from './harness.mjs';

// The steps of the prompt: [tool, input] for a model whose team tools are named by `name(tool)`;
// then text.
function script(name) {
  const steps = [
    [name('inbox_read'), { unread: true }],
    [name('task_claim'), { id: '1' }],
    [name('message_send'), { to: 'leader', text: 'claimed task 1 through MCP' }],
  ];
  return (c) => {
    for (const [tool, input] of steps) if (!c.calls.some((call) => call.name === tool)) return { tool, input };
    return { text: 'done' };
  };
}

export async function fake(home, Kind, brain) {
  const f = await new Kind(brain).start();
  home.cleanups.push(() => f.stop());
  return f;
}

// Codex's home: a model provider of its own pointed at the fake, its update check and analytics
// off, the team's folder trusted (its first-run screen); no approval policy, no MCP server.
export function codexHome(home, model) {
  const dir = join(home.dir, 'codex');
  mkdirSync(dir);
  writeFileSync(join(dir, 'config.toml'), [
    'model = "gpt-5"',
    'model_provider = "fake"',
    'check_for_update_on_startup = false',
    '[analytics]',
    'enabled = false',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = "${model.url}/v1"`,
    'env_key = "FAKE_OPENAI_KEY"',
    'wire_api = "responses"',
    `[projects.${JSON.stringify(home.work)}]`,
    'trust_level = "trusted"',
    '',
  ].join('\n'));
  return ['--env', `CODEX_HOME=${dir}`, '--env', 'FAKE_OPENAI_KEY=fake'];
}
// Codex's calls outside the machine (plugins, apps), off.
export const CODEX_OFFLINE = ['--disable', 'plugins', '--disable', 'apps', '--disable', 'remote_plugin'];

// Gemini CLI's home (GEMINI_CLI_HOME): the API key chosen as its authentication, usage
// statistics and the update check off, the team's folder trusted (its first-run screen); no MCP
// server, nothing allowed.
export function geminiHome(home, model) {
  const dir = join(home.dir, 'gemini');
  mkdirSync(join(dir, '.gemini'), { recursive: true });
  writeFileSync(join(dir, '.gemini', 'settings.json'), JSON.stringify({
    security: { auth: { selectedType: 'gemini-api-key' } },
    privacy: { usageStatisticsEnabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
  }, null, 2));
  writeFileSync(join(dir, '.gemini', 'trustedFolders.json'), JSON.stringify({ [home.work]: 'TRUST_FOLDER' }));
  return ['--env', `GEMINI_CLI_HOME=${dir}`, '--env', 'GEMINI_API_KEY=fake', '--env', `GOOGLE_GEMINI_BASE_URL=${model.url}`];
}

// The leader's next unread message and task 1, once the agent has told the leader.
async function outcome(home) {
  const [m] = await home.json(['inbox', '--unread', '--mark-read', '--limit', '1', '--wait', '90s'], { timeoutMs: 100000 });
  const task = await home.json(['task', 'show', '1']);
  return { m, task };
}

export const scenarios = {
  // Codex 0.169.0 (`codex exec`): its home as codexHome makes it, the Responses API.
  'codex: an MCP call against the fake model': async (home) => {
    const model = await fake(home, FakeOpenAI, script((t) => `mcp__team__${t}`));
    await home.create();
    await home.json(['task', 'add', 'a task for codex']);
    await home.json(['spawn', 'w1', '--preset', 'codex', ...codexHome(home, model),
      '--', CODEX, 'exec', '--skip-git-repo-check', ...CODEX_OFFLINE, 'Claim task 1 and tell the leader.']);
    const { m, task } = await outcome(home);
    assert.equal(m.from, 'w1');
    assert.equal(m.text, 'claimed task 1 through MCP');
    // `codex exec` ends after its turn: once it has, its claimed task is back in the pool,
    // naming w1 in its warning (SPEC 6); before, w1 owns it.
    if (task.owner === null) {
      assert.equal(task.status, 'pending', JSON.stringify(task));
      assert.match(JSON.stringify(task.warning), /w1/, JSON.stringify(task));
    } else {
      assert.equal(task.owner, 'w1');
      assert.equal(task.status, 'in_progress');
    }
    // The leader's message lands when the tool call does; the model's next request, which
    // carries that call's result, may come a moment later.
    const last = await model.waitFor((c) => c.calls.some((call) => call.name === 'mcp__team__message_send'), 60000,
      'the result of message_send');
    const calls = last.conversation.calls.map((c) => c.name);
    assert.deepEqual(calls, ['mcp__team__inbox_read', 'mcp__team__task_claim', 'mcp__team__message_send']);
  },
};

