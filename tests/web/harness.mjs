// What the dashboard's browser tests and its benchmark share: a TEAM_HOME of its own per test (so
// a tmux server of its own, on a socket in that home), `team serve` on a free port of that home,
// headless Debian chromium driven by playwright-core, and a cleanup that runs even when the test
// failed: the page closed, the server stopped, the home's agents and tmux server ended, the home
// removed. Every process a test starts carries a marker in its environment; none may be left.
import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, rmSync, readdirSync, readFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const TEAM = resolve(process.env.TEAM_BINARY ?? join(here, '../../build/team'));
export const CHROMIUM = process.env.TEAM_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = resolve(process.env.TEAM_WEB_ARTIFACTS ?? join(here, '../../build/Testing/web'));

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls `fn` until it returns a truthy value (returned) or `ms` runs out (throws `what`).
export async function until(fn, what, ms = 10000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) Z /.test(stat); // a zombie has ended
  } catch {
    return false;
  }
}

// The pids of `pid` and all its descendants, from /proc.
export function tree(pid) {
  const children = new Map();
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(p));
    } catch {}
  }
  const out = [];
  const walk = (p) => {
    out.push(p);
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return out;
}

// Live processes whose environment carries `mark`.
function marked(mark) {
  const found = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      if (!alive(pid)) continue;
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(mark)) found.push(Number(pid));
    } catch {}
  }
  return found;
}

let browser = null;
// One browser for the run (launching takes a second); each test gets a context of its own.
// A missing browser is a failure, never a skip.
export async function launchBrowser() {
  if (browser) return browser;
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no browser at ${CHROMIUM}: scripts/setup installs Debian's chromium (or set TEAM_CHROMIUM)`);
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  return browser;
}
export async function closeBrowser() {
  await browser?.close();
  browser = null;
}

export class Home {
  constructor(label = 'web') {
    this.dir = mkdtempSync(join(tmpdir(), 'tweb-'));
    this.label = label;
    this.markValue = randomUUID();
    this.mark = `TEAM_TEST_MARK=${this.markValue}`;
    this.server = null;
    this.pages = [];
    this.contexts = [];
    this.console = []; // console errors and page errors of every page
    this.serverErr = ''; // what team serve wrote on stderr, shown when a test fails
    this.requests = []; // every URL any page asked for
    // A server without the executions resource answers 404 once; the page then lists shells.
    this.allowedConsole = [/status of 404 .*\/api\/executions\/running/];
  }

  env(more = {}) {
    return {
      PATH: process.env.PATH,
      HOME: process.env.HOME ?? this.dir,
      TEAM_HOME: this.dir,
      TEAM_TEST_MARK: this.markValue,
      NO_COLOR: '1',
      ...more,
    };
  }

  // `team ARGS` -> {code, stdout, stderr, json (when stdout is JSON)}.
  team(args) {
    return new Promise((res) => {
      execFile(TEAM, args, { env: this.env(), maxBuffer: 1 << 26 }, (error, stdout, stderr) => {
        let json = null;
        try {
          json = JSON.parse(stdout);
        } catch {}
        res({ code: error ? error.code ?? 1 : 0, stdout, stderr, json });
      });
    });
  }

  async teamOk(args) {
    const r = await this.team(args);
    if (r.code !== 0) throw new Error(`team ${args.join(' ')}: exit ${r.code}: ${r.stderr || r.stdout}`);
    return r.json ?? r.stdout;
  }

  // Starts `team serve` on a free port (--listen 127.0.0.1:0) and waits for the address it prints.
  async serve(extra = []) {
    const listen = extra.includes('--listen') ? [] : ['--listen', '127.0.0.1:0'];
    const child = spawn(TEAM, ['serve', ...listen, ...extra], {
      env: this.env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.server = child;
    let out = '';
    const url = await new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`team serve printed no address in 10 s: ${out}`)), 10000);
      const look = (chunk) => {
        out += chunk.toString('utf8');
        const m = out.match(/http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]+/);
        if (m) {
          clearTimeout(timer);
          res(m[0]);
        }
      };
      child.stdout.on('data', look);
      child.stderr.on('data', look);
      child.stderr.on('data', (chunk) => { this.serverErr += chunk.toString('utf8'); });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        rej(new Error(`team serve ended (${code ?? signal}): ${out}`));
      });
    });
    this.url = url;
    this.origin = new URL(url).origin;
    return url;
  }

  // SIGTERM to `team serve` (SIGKILL if it has not ended within 3 s).
  async stopServer() {
    const server = this.server;
    if (!server || server.exitCode !== null || server.signalCode !== null) return;
    const ended = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await Promise.race([ended, sleep(3000)]);
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGKILL');
      await ended;
    }
  }

  // A page of a fresh browser context, watched: console errors, page errors and every request.
  async page({ viewport = { width: 1400, height: 900 } } = {}) {
    const b = await launchBrowser();
    const context = await b.newContext({ viewport });
    this.contexts.push(context);
    const page = await context.newPage();
    page.on('console', (m) => {
      if (m.type() === 'error') this.console.push(`console: ${m.text()} (${m.location()?.url ?? ''})`);
    });
    page.on('pageerror', (e) => this.console.push(`page error: ${e.message}`));
    page.on('request', (r) => this.requests.push(r.url()));
    // A server error's body says what failed: kept beside the console's bare status line.
    page.on('response', async (r) => {
      if (r.status() < 500) return;
      const body = await r.text().catch(() => '(no body)');
      this.console.push(`server error ${r.status()} for ${r.url()}: ${body}`);
    });
    this.pages.push(page);
    return page;
  }

  // Opens the dashboard with the token and waits for its first full render.
  async open(opts) {
    const page = await this.page(opts);
    const response = await page.goto(this.url);
    await page.locator('html[data-ready]').waitFor();
    return { page, response };
  }

  // What every test checks at its end: no console error, no request off this server.
  checkPage() {
    const errors = this.console.filter((e) => !this.allowedConsole.some((re) => re.test(e)));
    if (errors.length) throw new Error(`console errors:\n${errors.join('\n')}`);
    const foreign = this.requests.filter((u) => !u.startsWith(this.origin + '/'));
    if (foreign.length) throw new Error(`requests off the machine's server:\n${foreign.join('\n')}`);
  }

  async cleanup(failedName = null) {
    if (failedName && this.pages[0] && !this.pages[0].isClosed()) {
      mkdirSync(ARTIFACTS, { recursive: true });
      const file = join(ARTIFACTS, `${failedName.replace(/[^A-Za-z0-9]+/g, '-')}.png`);
      await this.pages[0].screenshot({ path: file, fullPage: true }).catch(() => {});
      console.error(`# screenshot of the failed test: ${file}`);
    }
    if (failedName && this.serverErr) console.error(`# team serve's stderr:\n${this.serverErr}`);
    for (const c of this.contexts) await c.close().catch(() => {});
    await this.stopServer();
    // Shells still running are killed; the home's agents (and its tmux server) end with a
    // teardown of each team.
    for (const sh of (await this.team(['shell', 'list', '--json'])).json ?? []) {
      await this.team(['shell', 'kill', sh.id, '--signal', 'SIGKILL', '--json']);
    }
    const teams = (await this.team(['list', '--json'])).json ?? [];
    for (const t of teams) if (t.status !== 'dissolved') await this.team(['teardown', t.name, '--grace', '250ms', '--json']);
    await new Promise((r) => execFile('tmux', ['-S', join(this.dir, 'tmux.sock'), 'kill-server'], () => r()));
    let left = [];
    try {
      left = await until(() => {
        const l = marked(this.mark);
        return l.length === 0 ? [] : null;
      }, 'the test processes to end', 3000);
    } catch {
      left = marked(this.mark);
      for (const pid of left) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
    if (left.length) throw new Error(`processes of the test left running: ${left.join(' ')}`);
  }
}
