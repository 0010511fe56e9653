// What the tests of real agents share: a home of their own (TEAM_HOME, and so a tmux server of
// its own), `team` run as the leader, Claude Code's prepared config directory, and the cleanup
// that leaves nothing running even when a test failed (every process the test starts carries a
// marker in its environment; afterwards none may be left).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { secureBase } from '../support/homes.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const TEAM = resolve(process.env.TEAM_BINARY ?? process.env.TEAM_DEFAULT_BINARY ?? join(here, '../../build/team'));
export const CLAUDE = join(here, 'node_modules/@anthropic-ai/claude-code/bin/claude.exe');
export const CODEX = join(here, 'node_modules/.bin/codex');
export const GEMINI = join(here, 'node_modules/.bin/gemini');
// Claude Code's ACP adapter (claude-agent-acp): it runs the Claude Agent SDK, which runs the SDK's
// own Claude Code binary (@anthropic-ai/claude-agent-sdk-linux-x64, the release the SDK was built
// with).
export const CLAUDE_ACP = join(here, 'node_modules/.bin/claude-agent-acp');

// The fake key: Claude Code asks once whether to use a key from the environment, unless its last
// 20 characters are already approved in its config.
export const FAKE_KEY = 'sk-ant-api03-team-tests-fake-key-0123456789abcdefghijklmnop';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A directory for homes where Gemini CLI reads a preset's settings file (tests/support/homes.mjs).
export const safeBase = () => secureBase(TEAM, 'agent-homes');

// Live (not zombie) processes whose environment carries `mark` (and every one of `more`).
export function marked(mark, ...more) {
  const found = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      if (/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) continue;
      const env = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      if ([mark, ...more].every((m) => env.includes(m))) found.push(Number(pid));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

// Live processes in the tree under `pid` (itself included), found through /proc's parent links.
export function tree(pid) {
  const parents = new Map();
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (fields[0] !== 'Z') parents.set(Number(p), Number(fields[1]));
    } catch {
      // gone
    }
  }
  const out = parents.has(pid) ? [pid] : [];
  for (let i = 0; i < out.length; i++) {
    for (const [child, parent] of parents) if (parent === out[i]) out.push(child);
  }
  return out;
}

// Polls `probe` (sync or async) until it returns something truthy, or fails after `ms`: only
// where nothing better exists (the state of a pane's screen, /proc).
export async function until(probe, ms, what) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

export class Home {
  // `base`: the directory the home is made in (default: the system's temporary directory).
  constructor({ team = 'crew', base = tmpdir() } = {}) {
    mkdirSync(base, { recursive: true, mode: 0o700 });
    this.dir = mkdtempSync(join(base, 'tagent-'));
    this.work = join(this.dir, 'work');  // the team's directory, where agents start
    mkdirSync(this.work);
    this.teamName = team;
    this.markValue = randomUUID();
    this.mark = `TEAM_TEST_MARK=${this.markValue}`;
    this.cleanups = [];
  }

  env(more = {}) {
    return {
      PATH: process.env.PATH,
      HOME: this.dir,
      TERM: 'xterm-256color',
      LANG: 'C.UTF-8',
      TEAM_HOME: this.dir,
      TEAM_NAME: this.teamName,
      TEAM_TEST_MARK: this.markValue,
      ...more,
    };
  }

  // `team ARGS` as the leader: {code, stdout, stderr, ms}. `signal` (an AbortSignal) ends it early.
  team(args, { timeoutMs = 120000, env = {}, signal } = {}) {
    const started = performance.now();
    return new Promise((done) => {
      execFile(TEAM, args, { env: this.env(env), timeout: timeoutMs, maxBuffer: 64 << 20, signal }, (error, stdout, stderr) => {
        done({ code: error ? error.code ?? 1 : 0, stdout, stderr, ms: performance.now() - started });
      });
    });
  }

  // `team ARGS --json` that must succeed: its document.
  async json(args, options) {
    const at = args.indexOf('--');  // --json goes before the agent's command
    const r = await this.team(at < 0 ? [...args, '--json'] : [...args.slice(0, at), '--json', ...args.slice(at)], options);
    assert.equal(r.code, 0, `team ${args.join(' ')} failed (exit ${r.code}): ${r.stderr}${r.stdout}`);
    return JSON.parse(r.stdout);
  }

  tmux(args) {
    return new Promise((done) => {
      execFile('tmux', ['-S', join(this.dir, 'tmux.sock'), ...args], { env: this.env(), timeout: 10000 },
        (error, stdout, stderr) => done({ code: error ? error.code ?? 1 : 0, stdout, stderr }));
    });
  }

  async create() {
    await this.json(['create', this.teamName, '--cwd', this.work]);
  }

  // Claude Code's config directory, prepared so that no first-run screen shows: onboarding done,
  // the fake key approved, this team's directory trusted, the team's tools, Bash and Write
  // allowed without asking (`permissions`: settings.json's permissions instead); with `channels`,
  // the channels' feature flag in its cached features.
  claudeConfig(name, { channels = false, permissions = { allow: ['mcp__team', 'Bash', 'Write'] } } = {}) {
    const dir = join(this.dir, `claude-${name}`);
    mkdirSync(dir, { recursive: true });
    const config = {
      hasCompletedOnboarding: true,
      lastOnboardingVersion: '2.1.197',
      numStartups: 1,
      customApiKeyResponses: { approved: [FAKE_KEY.slice(-20)], rejected: [] },
      projects: { [this.work]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true, allowedTools: [] } },
      autoUpdates: false,
    };
    if (channels) config.cachedGrowthBookFeatures = { tengu_harbor: true };
    writeFileSync(join(dir, '.claude.json'), JSON.stringify(config, null, 2));
    writeFileSync(join(dir, 'settings.json'), JSON.stringify({ permissions }, null, 2));
    return dir;
  }

  // The `--env` flags of `team spawn` that point Claude Code (config directory `config`) at the
  // fake model `fake`.
  claudeEnv(config, fake, { channels = false } = {}) {
    const flags = ['--env', `CLAUDE_CONFIG_DIR=${config}`, '--env', `ANTHROPIC_BASE_URL=${fake.url}`,
      '--env', `ANTHROPIC_API_KEY=${FAKE_KEY}`, '--env', 'DISABLE_AUTOUPDATER=1', '--env', 'DISABLE_ERROR_REPORTING=1'];
    // No traffic beyond the fake: telemetry and the other non-essential calls off. Claude Code
    // then ignores its cached feature flags too, the channels' one among them: a channel needs
    // them on (what it then tries to reach: docs/testing.md).
    if (!channels) flags.push('--env', 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1', '--env', 'DISABLE_TELEMETRY=1');
    return flags;
  }

  // `team spawn NAME --preset claude` on Claude Code from tests/agents, its model `fake`.
  // `permissions`: its settings.json's (claudeConfig's default allows the team's tools, Bash
  // and Write beforehand; {} allows nothing).
  async spawnClaude(name, fake, { channels = false, args = [], env = [], permissions } = {}) {
    const flags = this.claudeEnv(this.claudeConfig(name, { channels, ...(permissions && { permissions }) }), fake, { channels });
    for (const e of env) flags.push('--env', e);
    const extra = channels ? ['--dangerously-load-development-channels', 'server:team'] : [];
    return this.json(['spawn', name, '--preset', 'claude', ...flags, '--', CLAUDE, ...extra, ...args]);
  }

  // The pane's screen as text (no escapes), through the home's tmux server.
  async screen(pane) {
    const r = await this.tmux(['capture-pane', '-p', '-J', '-t', pane]);
    return r.code === 0 ? r.stdout : '';
  }

  async agent(name) {
    const all = await this.json(['agents', '--all']);
    return all.filter((a) => a.name === name).pop();
  }

  async cleanup() {
    for (const c of this.cleanups.reverse()) await c().catch(() => {});
    await this.tmux(['kill-server']);
    // Let team record the ends, then nothing carrying the marker may be left.
    await this.team(['agents', '--all', '--json'], { timeoutMs: 20000 }).catch(() => {});
    let left = marked(this.mark);
    for (let i = 0; i < 100 && left.length > 0; i++) {
      await sleep(50);
      left = marked(this.mark);
    }
    const described = left.map((pid) => {
      try {
        return `${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').slice(0, 120)}`;
      } catch {
        return String(pid);
      }
    });
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    if (process.env.TEAM_KEEP_HOME) console.error(`kept ${this.dir}`);
    else rmSync(this.dir, { recursive: true, force: true });
    assert.deepEqual(described, [], 'processes of the test left running');
  }
}

// Runs `body(home)` on a fresh home, cleaning up whatever happens; on failure the screens of the
// home's panes and the fakes' last steps are printed first.
// `options`: Home's, or a function that returns them.
export function withHome(body, options = {}) {
  return async () => {
    const home = new Home(typeof options === 'function' ? options() : options);
    let failure = null;
    try {
      await body(home);
    } catch (e) {
      failure = e;
      // The failure first: a log cut short by its reader keeps its head.
      console.error(`---- failed: ${e?.stack ?? e}`);
      const agents = await home.team(['agents', '--all', '--json']);
      for (const a of agents.code === 0 ? JSON.parse(agents.stdout) : []) {
        const logs = await home.team(['logs', a.name, '-n', '40']);
        console.error(`---- ${a.name} (${a.status} ${a.exitReason ?? ''}): team logs ----\n${logs.stdout}${logs.stderr}`);
      }
    }
    try {
      await home.cleanup();
    } catch (e) {
      failure ??= e;
    }
    if (failure) throw failure;
  };
}

export { existsSync, readdirSync, readFileSync, join };
