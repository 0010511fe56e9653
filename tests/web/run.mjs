// Real-browser tests of the dashboard of `team serve` (SPEC 13): headless Debian chromium driven
// by playwright-core, the built `team` binary (TEAM_BINARY), real tmux and real processes, each
// test on a home, a tmux server and a port of its own (harness.mjs). Every wait is a condition (a
// locator, a poll of /proc or of `team --json`), never a fixed sleep. Every test ends by checking
// that its pages logged no console error and asked nothing of any other origin; a failed test
// leaves a screenshot in the build's Testing/web directory.
//
// Run: TEAM_BINARY=build/team node tests/web/run.mjs   (ctest runs it: label `web`)
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Home, TEAM, until, alive, tree, closeBrowser } from './harness.mjs';

after(closeBrowser);

// A test on a home of its own, cleaned up whatever happens.
function webTest(name, fn, options = {}) {
  test(name, { timeout: 120000, ...options }, async () => {
    const home = new Home();
    let failed = name;
    try {
      await fn(home);
      home.checkPage();
      failed = null;
    } finally {
      await home.cleanup(failed);
    }
  });
}

// The ANSI parser of the log panel, without a browser.
test('ansi: SGR colours become styled runs, every other escape and control character is dropped', async () => {
  const { parseAnsi } = await import('../../web/ansi.js');
  const runs = parseAnsi('\x1b[1;31mred\x1b[0m <b>&\r\nx\x1b[38;5;208mo\x1b[38;2;1;2;3mt\x1b[2J\x1b]0;title\x07!\x1b[39;7mi\x07\r\nabc\rde');
  assert.deepEqual(runs.map((r) => [r.text, r.fg, r.bold, r.inverse]), [
    ['red', 1, true, false],
    [' <b>&\nx', null, false, false],
    ['o', 208, false, false],
    ['t!', [1, 2, 3], false, false],
    ['i\nde', null, false, true],
  ]);
  // Bright colours, backgrounds, resets one by one, a malformed 38.
  const more = parseAnsi('\x1b[92;104mA\x1b[22;49mB\x1b[38;9mC\x1b[mD');
  assert.deepEqual(more.map((r) => [r.text, r.fg, r.bg]), [['A', 10, 12], ['BC', 10, null], ['D', null, null]]);
});

// The figures of what agents spend, written as the command line writes them (cli/usage_cells.cpp).
test('usage: tokens, dollars, sizes, times and limits are written as team usage writes them', async () => {
  const { tokensText, usdText, sizeText, timeText, limitsParts } = await import('../../web/usage.js');
  assert.deepEqual([0, 950, 12345, 4.1e6, 1.2e9].map(tokensText), ['0', '950', '12.3k', '4.1M', '1.2G']);
  assert.deepEqual([0, 0.0123, 1.25, 5].map(usdText), ['$0.0000', '$0.0123', '$1.25', '$5.00']);
  assert.deepEqual([512, 3.4 * 2 ** 20, 210 * 2 ** 20, 1.2 * 2 ** 30].map(sizeText), ['512 B', '3.4 MiB', '210 MiB', '1.2 GiB']);
  assert.deepEqual([400, 12000, 182000, 7.5e6].map(timeText), ['0.4s', '12.0s', '3m02s', '2h05m']);
  assert.deepEqual(limitsParts({ maxTokens: 1e6, maxCost: 5, maxMemory: 2 ** 31, maxRuntime: '1h', limitGrace: '30s' }),
    ['1.0M tokens', '$5.00', '2.0 GiB', '1h']);
  assert.deepEqual(limitsParts({ maxTokens: null, maxCost: null, maxMemory: null, maxRuntime: null, limitGrace: '30s' }), []);
});

const row = (page, name) => page.locator(`#agents-body tr[data-agent="${name}"]`);
// The line under an agent's row that shows its worktree (SPEC 14).
const wtRow = (page, name) => page.locator(`#agents-body tr[data-worktree-of="${name}"]`);

webTest('the token opens the page, is traded for an HttpOnly cookie and leaves the URL', async (home) => {
  await home.teamOk(['create', 'web', '--json']);
  await home.serve();
  const { page, response } = await home.open();
  assert.equal(new URL(page.url()).search, '', 'the token is gone from the address');
  assert.match(response.headers()['content-security-policy'] ?? '', /default-src 'self'/);
  const cookies = await page.context().cookies();
  const cookie = cookies.find((c) => c.httpOnly);
  assert.ok(cookie, `an HttpOnly cookie: ${JSON.stringify(cookies)}`);
  assert.equal(cookie.sameSite, 'Strict');
  assert.equal(await page.evaluate(() => document.cookie), '', 'the page script cannot read the token');
  // The team, its summary and the live indicator.
  assert.equal(await page.locator('#team-select').inputValue(), 'web');
  await page.locator('#conn.conn-live').waitFor();
  assert.equal(new URL(page.url()).hash, '#web');
  // Without the cookie (a fresh context) neither the page nor the API answers, and what comes
  // back says how to get in.
  const other = await home.page();
  const denied = await other.goto(home.origin + '/');
  assert.equal(denied.status(), 401);
  assert.match(await other.locator('body').textContent(), /team serve --url/);
  const apiDenied = await other.request.get(home.origin + '/api/teams');
  assert.equal(apiDenied.status(), 401);
  home.allowedConsole.push(/status of 401/);
});

webTest('an agent spawned from the command line appears, and changes, without a reload', async (home) => {
  await home.teamOk(['create', 'web', '--json']);
  await home.serve();
  const { page } = await home.open();
  await page.locator('#agents-empty').waitFor();
  await page.evaluate(() => (window.__sameDocument = true));
  await home.teamOk(['spawn', 'w1', '--json', '--', 'sleep', '1000']);
  await row(page, 'w1').locator('.st-active').waitFor();
  await page.locator('#activity-list li[data-type="agent_spawned"]').waitFor();
  // A task for it shows in the tasks panel and in its row.
  await home.teamOk(['task', 'add', 'write the parser', '--owner', 'w1', '--json']);
  await page.locator('#tasks-list li', { hasText: 'write the parser' }).waitFor();
  await until(async () => (await row(page, 'w1').locator('td.num').textContent()) === '1', 'the tasks column to say 1');
  // A message sent from the command line raises the recipient's unread count in the open panel.
  await page.locator('#inbox-panel > summary').click();
  const badge = page.getByRole('button', { name: 'Open the inbox of w1' }).locator('.unread');
  await until(async () => (await badge.textContent()) === '0 unread', 'the inbox of w1 to be counted');
  await home.teamOk(['send', 'w1', 'take task 1', '--json']);
  await until(async () => (await badge.textContent()) === '1 unread', 'the unread count of w1 to be 1');
  // A graceful stop from the command line turns the row to shutting_down.
  await home.teamOk(['kill-agent', 'w1', '--json']);
  await row(page, 'w1').locator('.st-shutting_down').waitFor();
  await page.locator('#shutdowns-list li', { hasText: 'w1@web' }).waitFor();
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'no reload happened');
});

webTest('Force on an agent ends its whole tree, and the row and the activity feed say so', async (home) => {
  await home.teamOk(['create', 'web', '--json']);
  // A tree: bash with two sleeps under it.
  const spawned = await home.teamOk(['spawn', 'w1', '--json', '--', 'bash', '-c', 'sleep 1000 & sleep 1000; wait']);
  await home.serve();
  const { page } = await home.open();
  await row(page, 'w1').locator('.st-active').waitFor();
  const pids = await until(() => {
    const t = tree(spawned.pid);
    return t.length >= 3 ? t : null;
  }, 'the agent to start its sleeps');
  await row(page, 'w1').getByRole('button', { name: 'Force-kill w1' }).click();
  const dialog = page.locator('#confirm');
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Force-kill w1' }).click();
  await row(page, 'w1').locator('.st-terminated').waitFor();
  assert.match(await row(page, 'w1').locator('td.ended').textContent(), /force_killed/);
  await page.locator('#activity-list li[data-type="agent_force_killed"]').waitFor();
  // The stop and force buttons of an ended agent are gone.
  assert.equal(await row(page, 'w1').getByRole('button', { name: 'Force-kill w1' }).isVisible(), false);
  const agents = await home.teamOk(['agents', '--all', '--json']);
  assert.equal(agents[0].status, 'terminated');
  assert.equal(agents[0].exitReason, 'force_killed');
  for (const pid of pids) assert.equal(alive(pid), false, `process ${pid} of the agent's tree is gone`);
  const act = await home.teamOk(['activity', '--type', 'agent_force_killed', '--json']);
  assert.equal(act.length, 1);
});

// The home's tmux server killed as a crash kills it (SIGKILL: no pane closes in order), then the
// agents looked at once, so that they are recorded lost (SPEC 19) before the test goes on.
async function loseTmuxServer(home, names) {
  const sock = join(home.dir, 'tmux.sock');
  const pid = await new Promise((res, rej) =>
    execFile('tmux', ['-S', sock, 'display-message', '-p', '#{pid}'], (error, stdout) => (error ? rej(error) : res(Number(stdout)))));
  process.kill(pid, 'SIGKILL');
  await until(async () => {
    const agents = await home.teamOk(['agents', '--all', '--json']);
    return names.every((n) => agents.some((a) => a.name === n && a.status === 'terminated' && a.exitReason === 'lost'));
  }, `${names.join(', ')} to be recorded lost`);
}

webTest('lost agents show Resume: one brought back from its row, the other from Resume all; a refusal said', async (home) => {
  await home.teamOk(['create', 'web', '--json']);
  await home.teamOk(['spawn', 'w1', '--json', '--', 'sleep', '1000']);
  await home.teamOk(['spawn', 'w2', '--json', '--', 'sleep', '1000']);
  await home.serve();
  const { page } = await home.open();
  for (const n of ['w1', 'w2']) await row(page, n).locator('.st-active').waitFor();
  const resumeAll = page.locator('#resume-all');
  assert.equal(await resumeAll.isVisible(), false, 'no Resume all without a lost agent');
  assert.equal(await row(page, 'w1').getByRole('button', { name: 'Resume w1' }).isVisible(), false);

  await loseTmuxServer(home, ['w1', 'w2']);
  // Lost, each with its Resume button and no Stop or Force; the head counts them and offers all.
  for (const n of ['w1', 'w2']) {
    await row(page, n).locator('.st.st-lost', { hasText: 'lost' }).waitFor();
    assert.equal(await row(page, n).getByRole('button', { name: `Resume ${n}` }).isVisible(), true);
    assert.equal(await row(page, n).getByRole('button', { name: `Force-kill ${n}` }).isVisible(), false);
  }
  assert.equal(await row(page, 'w1').locator('td.ended').textContent(), 'lost');
  await page.locator('#agents-count', { hasText: '0 live · 2 to resume · 2 ended' }).waitFor();
  await resumeAll.waitFor();

  // Resume on its row: w1 starts again (fresh: a plain program has no conversation), and says so.
  await row(page, 'w1').getByRole('button', { name: 'Resume w1' }).click();
  await page.locator('.toast.ok', { hasText: /^w1: started fresh: a command without a preset/ }).waitFor();
  await row(page, 'w1').locator('.st-active').waitFor();
  assert.equal(await row(page, 'w1').getByRole('button', { name: 'Resume w1' }).isVisible(), false, 'no Resume once back');
  await page.locator('#activity-list li[data-type="agent_resumed"]').waitFor();
  const w1 = (await home.teamOk(['agents', '--json'])).find((a) => a.name === 'w1');
  assert.equal(w1.status, 'active');
  assert.ok(alive(w1.pid), 'its command runs again');
  await page.locator('#agents-count', { hasText: '1 live · 1 to resume · 1 ended' }).waitFor();

  // Resume all: w2 comes back, and the control goes with the last lost agent.
  await resumeAll.click();
  await page.locator('.toast.ok', { hasText: /^w2: started fresh: / }).waitFor();
  await row(page, 'w2').locator('.st-active').waitFor();
  await resumeAll.waitFor({ state: 'hidden' });
  await page.locator('#agents-count', { hasText: /^2 live$/ }).waitFor();

  // An --env value is never stored: w3 starts again only where TEAM_WEB_SECRET is set, and the
  // server's environment does not set it. Its refusal is said as the server says it.
  await home.teamOk(['spawn', 'w3', '--env', 'TEAM_WEB_SECRET=x', '--json', '--', 'sleep', '1000']);
  await row(page, 'w3').locator('.st-active').waitFor();
  await loseTmuxServer(home, ['w1', 'w2', 'w3']);
  await row(page, 'w3').getByRole('button', { name: 'Resume w3' }).click();
  await page.locator('.toast:not(.ok)', { hasText: /cannot resume 'w3': it was given --env TEAM_WEB_SECRET, which this environment does not set/ }).waitFor();
  await until(async () => !(await row(page, 'w3').getAttribute('class')).includes('busy'), 'the resume of w3 to end');
  assert.equal(await row(page, 'w3').locator('.st.st-lost').count(), 1, 'w3 stays lost');
  assert.equal(await resumeAll.isVisible(), true, 'Resume all stays while agents are lost');
  home.allowedConsole.push(/status of 409 .*\/api\/teams\/web\/resume/);
});

webTest('Stop on a graceful agent asks it to shut down, with a spinner until the answer', async (home) => {
  await home.teamOk(['create', 'web', '--json']);
  await home.teamOk(['spawn', 'w1', '--json', '--', 'sleep', '1000']);
  await home.serve();
  const { page } = await home.open();
  const stop = row(page, 'w1').getByRole('button', { name: 'Stop w1 (graceful shutdown request)' });
  await stop.click();
  await row(page, 'w1').locator('.st-shutting_down').waitFor();
  await page.locator('#activity-list li[data-type="shutdown_requested"]').waitFor();
  assert.equal(await stop.isDisabled(), true, 'Stop is off while a request is open');
  const status = await home.teamOk(['shutdown', 'status', 'w1', '--json']);
  assert.equal((Array.isArray(status) ? status[0] : status).phase, 'requested');
});

webTest('Stop on a running execution ends it, and activity shows execution_cancelled', async (home) => {
  await home.teamOk(['create', 'web', '--json']);
  const shell = await home.teamOk(['shell', 'start', '--json', '--', 'bash', '-c', 'sleep 1000 & sleep 1000; wait']);
  await home.serve();
  const { page } = await home.open();
  const item = page.locator(`#exec-list li[data-execution="${shell.shell_id}"]`);
  await item.waitFor();
  const pids = await until(() => {
    const t = tree(shell.pid);
    return t.length >= 3 ? t : null;
  }, 'the shell to start its sleeps');
  await item.getByRole('button', { name: `Stop execution ${shell.shell_id}` }).click();
  await item.waitFor({ state: 'detached' });
  await page.locator('#activity-list li[data-type="execution_cancelled"]').waitFor();
  await page.locator('.toast.ok', { hasText: shell.shell_id }).waitFor();
  for (const pid of pids) await until(() => !alive(pid), `process ${pid} of the execution to end`, 2000);
  await page.locator('#exec-empty').waitFor();
});

webTest('hostile names and text render as text, never as markup', async (home) => {
  const evil = `<img src=x onerror="window.__pwned=1">"'&amp;`;
  await home.teamOk(['create', 'web', '--description', evil, '--json']);
  await home.teamOk(['spawn', 'w-1', '--role', evil, '--json', '--', 'bash', '-c',
    `printf '%s\\n' '<script>window.__pwned=2</script> ünïcødé 🚀'; printf '\\e[31mred\\e[0m \\e]0;title\\a<b>bold?</b>\\n'; sleep 1000`]);
  await home.teamOk(['task', 'add', `<script>window.__pwned=3</script> ü 🚀`, '--description', evil, '--owner', 'w-1', '--json']);
  await home.teamOk(['send', 'w-1', `<iframe src="javascript:window.__pwned=4"></iframe> 你好`, '--json']);
  await home.serve();
  const { page } = await home.open();
  await page.locator('#tasks-list li', { hasText: '<script>window.__pwned=3</script> ü 🚀' }).waitFor();
  assert.match(await page.locator('#team-summary').textContent(), /<img src=x onerror=/);
  // The inbox, opened on click.
  await page.locator('#inbox-panel > summary').click();
  await page.getByRole('button', { name: 'Open the inbox of w-1' }).click();
  await page.locator('#inbox-body li', { hasText: '<iframe src="javascript:window.__pwned=4"></iframe> 你好' }).waitFor();
  // The log, opened from the agent's name, with its colours as spans and its text as text.
  await row(page, 'w-1').locator('.name-btn').click();
  await page.locator('#log-body', { hasText: '<script>window.__pwned=2</script> ünïcødé 🚀' }).waitFor();
  await page.locator('#log-body .ansi-fg1', { hasText: 'red' }).waitFor();
  assert.match(await page.locator('#log-body').textContent(), /<b>bold\?<\/b>/);
  assert.equal(await page.locator('#log-body').textContent().then((t) => t.includes('title')), false, 'OSC title dropped');
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'nothing from the API ran');
  for (const sel of ['img', 'iframe', 'b', 'main script']) {
    assert.equal(await page.locator(`#board ${sel}`).count(), 0, `no ${sel} element was made`);
  }
  // The log may be asked for its screen view first (a server without one answers 400).
  home.allowedConsole.push(/status of 400/);
});

webTest('a home of 200 agents renders, and one change touches one row', async (home) => {
  await home.teamOk(['create', 'web', '--json']);
  // 200 agent records, spawned four at a time (each a `sleep` in a pane).
  const names = Array.from({ length: 200 }, (_, i) => `a${String(i).padStart(3, '0')}`);
  for (let i = 0; i < names.length; i += 4) {
    await Promise.all(names.slice(i, i + 4).map((n) => home.teamOk(['spawn', n, '--json', '--', 'sleep', '1000'])));
  }
  await home.serve();
  const t0 = Date.now();
  const { page } = await home.open();
  await until(async () => (await page.locator('#agents-body tr[data-agent]').count()) === 200, '200 rows');
  console.error(`# 200 agents: first full render in ${Date.now() - t0} ms`);
  // A change to one agent replaces no other row: mark the rows, force-kill one, check the marks.
  // (Each row and the usage line under it.)
  await page.evaluate(() => document.querySelectorAll('#agents-body tr').forEach((tr) => (tr.__mark = 1)));
  await home.teamOk(['kill-agent', 'a100', '--force', '--grace', '250ms', '--json']);
  await row(page, 'a100').locator('.st-terminated').waitFor();
  assert.equal(await page.evaluate(() => [...document.querySelectorAll('#agents-body tr')].filter((tr) => tr.__mark).length), 400);
  // The filter narrows the table.
  await page.locator('#agent-filter').fill('a19');
  await until(async () => (await page.locator('#agents-body tr[data-agent]').count()) === 10, 'the filter to leave 10 rows');
}, { timeout: 300000 });

webTest('the indicator says when the stream is down, and the page catches up when it is back', async (home) => {
  await home.teamOk(['create', 'web', '--json']);
  await home.serve();
  const { page } = await home.open();
  await page.locator('#conn.conn-live').waitFor();
  const port = new URL(home.origin).port;
  await home.stopServer();
  await page.locator('#conn:not(.conn-live)').waitFor();
  // A change while the page cannot hear of it, then the server back on the same port.
  await home.teamOk(['spawn', 'w1', '--json', '--', 'sleep', '1000']);
  await home.serve(['--listen', `127.0.0.1:${port}`]);
  await page.locator('#conn.conn-live').waitFor({ timeout: 20000 });
  await row(page, 'w1').locator('.st-active').waitFor();
  // The browser's failed attempts while the server was away.
  home.allowedConsole.push(/ERR_CONNECTION_REFUSED|net::ERR_|Failed to load resource/);
});

// `git ARGS` in `cwd` with the test's environment (its marker too) -> stdout; a failure throws.
function git(home, cwd, ...args) {
  return new Promise((res, rej) => {
    execFile('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, env: home.env() }, (error, stdout, stderr) =>
      error ? rej(new Error(`git ${args.join(' ')}: ${stderr || error.message}`)) : res(stdout));
  });
}

webTest('worktree agents show their branch and conflicts; the kept worktrees show a diff and merge after a check', async (home) => {
  // A real repository in the test's home, one commit of two files.
  const repo = join(home.dir, 'repo');
  mkdirSync(join(repo, 'src'), { recursive: true });
  writeFileSync(join(repo, 'src', 'a.txt'), 'one\ntwo\nthree\n');
  writeFileSync(join(repo, 'README'), 'a repository for the dashboard test\n');
  await git(home, repo, 'init', '-q', '-b', 'main');
  await git(home, repo, 'add', '.');
  await git(home, repo, 'commit', '-qm', 'start');
  await home.teamOk(['create', 'web', '--repo', repo, '--json']);
  // Two agents on branches of their own, each changing the same line of src/a.txt and committing.
  for (const n of ['w1', 'w2']) {
    await home.teamOk(['spawn', n, '--worktree', '--json', '--', 'bash', '-c',
      `sed -i 's/^two$/two by ${n}/' src/a.txt && git -c user.name=a -c user.email=a@a commit -qam x; exec sleep 600`]);
  }
  // Their commits are no activity event: the page is opened once both have committed.
  await until(async () => {
    const agents = await home.teamOk(['agents', '--json']);
    return agents.length === 2 && agents.every((a) => a.worktree?.ahead === 1 && a.worktree?.conflictsWith?.length === 1);
  }, 'both agents to commit (team agents: ahead 1, a conflict each)', 30000);
  await home.serve();
  const { page } = await home.open();

  // The agents table: branch, ahead/behind, each agent's conflict with the other, naming the file.
  for (const [me, other] of [['w1', 'w2'], ['w2', 'w1']]) {
    const wt = wtRow(page, me);
    await wt.locator('.branch', { hasText: `team/web/${me}` }).waitFor();
    assert.equal((await wt.locator('.ab').textContent()).trim(), '↑1 ↓0');
    await wt.locator('.badge-danger', { hasText: `conflicts with ${other} (src/a.txt)` }).waitFor();
    assert.equal(await wt.locator('.badge', { hasText: 'dirty' }).count(), 0, `${me} committed everything`);
    assert.equal(await wt.locator('.badge', { hasText: 'merge conflicts' }).count(), 0, `${me} merges cleanly into main`);
  }

  // The kept worktrees: state, branch, changes, snapshots.
  await page.locator('#worktrees-panel > summary').click();
  const kept = (n) => page.locator(`#wt-list li[data-agent="${n}"]`);
  await kept('w1').waitFor();
  await kept('w2').waitFor();
  assert.equal(await kept('w1').locator('.st').textContent(), 'in use');
  assert.equal(await kept('w1').locator('.wt-branch').textContent(), 'team/web/w1');
  assert.equal(await kept('w1').locator('.wt-changes').textContent(), '↑1 ↓0 · clean');
  assert.equal(await kept('w1').locator('.wt-snaps').textContent(), '0 snapshots');
  assert.equal(await kept('w1').getByRole('button', { name: /discard|remove/i }).count(), 0, 'no discard on the page');

  // Its diff: the files and counts, then the patch.
  await kept('w1').getByRole('button', { name: 'Show the diff of w1' }).click();
  const diff = page.locator('#wt-diff-body');
  await diff.locator('.diff-add', { hasText: '+two by w1' }).waitFor();
  const text = await diff.textContent();
  assert.match(text, /^ src\/a\.txt \| 2 \+-$/m);
  assert.match(text, /^-two$/m);
  assert.ok(text.indexOf('1 file changed') < text.indexOf('diff --git'), 'the stat comes first');

  // Merge w1: checked, confirmed, merged into main, and the page says so.
  const before = (await git(home, repo, 'rev-parse', 'main')).trim();
  await kept('w1').getByRole('button', { name: 'Merge w1' }).click();
  const dialog = page.locator('#confirm');
  await dialog.waitFor();
  assert.match(await dialog.textContent(), /team\/web\/w1 \(1 commit ahead of the base\) merges cleanly into main/);
  await dialog.getByRole('button', { name: 'Merge into main' }).click();
  await page.locator('.toast.ok', { hasText: 'w1: team/web/w1 merged into main' }).waitFor();
  await page.locator('#activity-list li[data-type="worktree_merged"]').waitFor();
  assert.equal((await git(home, repo, 'show', 'main:src/a.txt')), 'one\ntwo by w1\nthree\n');
  const merged = (await git(home, repo, 'rev-parse', 'main')).trim();
  assert.notEqual(merged, before);
  assert.equal(await git(home, repo, 'status', '--porcelain'), '', 'the checkout of main was updated, clean');

  // Now w2 conflicts with main: its row says so, and its merge stops at the check, naming the file.
  await wtRow(page, 'w2').locator('.badge-danger', { hasText: 'merge conflicts (src/a.txt)' }).waitFor();
  await kept('w2').getByRole('button', { name: 'Merge w2' }).click();
  await kept('w2').locator('.wt-note', { hasText: 'merging team/web/w2 into main conflicts in: src/a.txt' }).waitFor();
  await page.locator('.toast:not(.ok)', { hasText: 'w2: not merged, team/web/w2 conflicts with main in src/a.txt' }).waitFor();
  await until(async () => !(await kept('w2').getAttribute('class')).includes('busy'), 'the merge of w2 to end');
  assert.equal(await dialog.isVisible(), false, 'no confirmation was asked');
  assert.equal((await git(home, repo, 'rev-parse', 'main')).trim(), merged, 'main did not move');

  // A file written in a worktree is no activity event: the page looks at live agents' branches
  // (and the open kept worktrees) again on its own, every 10 s.
  const w2 = (await home.teamOk(['agents', '--json'])).find((a) => a.name === 'w2');
  writeFileSync(join(w2.worktree.path, 'notes.txt'), 'not committed\n');
  await wtRow(page, 'w2').locator('.badge-warn', { hasText: 'dirty: 1 untracked' }).waitFor({ timeout: 15000 });
  await kept('w2').locator('.wt-changes', { hasText: '↑1 ↓0 · 1 untracked' }).waitFor({ timeout: 15000 });
  // The refused check is a 409 (the page shows its files).
  home.allowedConsole.push(/status of 409/);
});

webTest('Land: a dry run asked first, each branch shown as it is decided, main moved once, a land while one runs and one over uncommitted work refused', async (home) => {
  const repo = join(home.dir, 'repo');
  mkdirSync(repo, { recursive: true });
  writeFileSync(join(repo, 'README'), 'one\ntwo\n');
  await git(home, repo, 'init', '-q', '-b', 'main');
  await git(home, repo, 'add', '.');
  await git(home, repo, 'commit', '-qm', 'start');
  // The team's check waits for the test's gate (so that the land is seen running), then fails on
  // a branch that has red.txt, printing it: a hostile output tail.
  const gate = join(home.dir, 'gate');
  const check = `while [ ! -e '${gate}' ]; do sleep 0.05; done; if [ -e red.txt ]; then cat red.txt; exit 3; fi`;
  await home.teamOk(['create', 'web', '--repo', repo, '--check', check, '--json']);
  const hostile = '<b id="pwn">red</b> & <img src=x onerror="window.__pwned=1">';
  const work = {
    good: 'echo good > good.txt && git add good.txt',
    red: `printf '%s\\n' '${hostile}' > red.txt && git add red.txt`,
    clash: "sed -i 's/^two$/two by clash/' README",
  };
  // Each agent commits on its branch and ends; one after the other, so that the land takes them in
  // this order (by when each finished).
  for (const [n, cmd] of Object.entries(work)) {
    await home.teamOk(['spawn', n, '--worktree', '--json', '--', 'bash', '-c', `${cmd} && git -c user.name=a -c user.email=a@a commit -qam ${n}`]);
    await until(async () => (await home.teamOk(['agents', '--all', '--json'])).some((a) => a.name === n && a.status === 'terminated'),
      `${n} to commit and end`);
    assert.equal((await git(home, repo, 'rev-list', '--count', `main..team/web/${n}`)).trim(), '1', `${n} committed`);
  }
  // main changes the line clash changed.
  writeFileSync(join(repo, 'README'), 'one\ntwo on main\n');
  await git(home, repo, 'commit', '-qam', 'main moves');
  const before = (await git(home, repo, 'rev-parse', 'main')).trim();
  await home.serve();
  const { page } = await home.open();
  await page.locator('#worktrees-panel > summary').click();
  const landed = (p, n) => p.locator(`#land-list li[data-agent="${n}"]`);

  // Land: the dry run first, shown and confirmed.
  await page.locator('#wt-land').click();
  const dialog = page.locator('#confirm');
  await dialog.waitFor();
  assert.match(await dialog.locator('#confirm-title').textContent(), /^Land 3 branches into main\?$/);
  assert.match(await dialog.locator('#confirm-text').textContent(), /in this order: good, red, clash\. 2 would merge cleanly/);
  await landed(page, 'clash').locator('.land-detail', { hasText: 'conflicts in README' }).waitFor();
  assert.equal(await landed(page, 'good').getAttribute('data-outcome'), 'would_land');
  assert.equal(await page.locator('#land-status').textContent(), 'would do');
  assert.equal((await git(home, repo, 'rev-parse', 'main')).trim(), before, 'a dry run moves nothing');
  await dialog.getByRole('button', { name: 'Land into main' }).click();

  // Running: good's check waits at the gate, the others queued; the button is off meanwhile.
  await page.locator('#land-status', { hasText: 'running' }).waitFor();
  await page.locator('#land-list li[data-agent="good"][data-outcome="checking"]').waitFor();
  assert.equal(await landed(page, 'red').getAttribute('data-outcome'), 'queued');
  assert.equal(await landed(page, 'clash').getAttribute('data-outcome'), 'queued');
  assert.equal(await page.locator('#wt-land').isDisabled(), true);

  // Land from a second page while it runs: refused, in the server's words; the first page's land
  // goes on.
  const { page: other } = await home.open();
  await other.locator('#worktrees-panel > summary').click();
  await other.locator('#land-status', { hasText: 'running' }).waitFor();
  await other.locator('#wt-land').click();
  await other.locator('#confirm').getByRole('button', { name: 'Land into main' }).click();
  await other.locator('.toast:not(.ok)', { hasText: /a land of team 'web' is running \(land 1, started by .*\): one at a time/ }).waitFor();
  await until(async () => !(await other.locator('#wt-land').isDisabled()), 'the refused land to end');

  // The gate opens: good lands, red's check fails, clash conflicts with main; each row says how.
  writeFileSync(gate, '');
  await page.locator('.toast:not(.ok) .grow', { hasText: /^land 1 into main: 1 landed, 1 check failed, 1 conflict$/ }).waitFor();
  const main = (await git(home, repo, 'rev-parse', 'main')).trim();
  assert.equal(await landed(page, 'good').getAttribute('data-outcome'), 'landed');
  assert.equal(await landed(page, 'good').locator('.land-detail').textContent(), `${main.slice(0, 7)} (was ${before.slice(0, 7)})`);
  assert.equal(await landed(page, 'red').locator('.land-outcome').textContent(), 'check failed');
  const [land] = await home.teamOk(['lands', '--json']);
  const redRow = land.branches.find((b) => b.agent === 'red');
  assert.match(redRow.shellId, /^bg-/);
  assert.equal(await landed(page, 'red').locator('.land-detail').textContent(), `exit 3 · team shell ${redRow.shellId}`);
  // The hostile output as text: no element of it on the page.
  assert.equal(await landed(page, 'red').locator('.land-tail').textContent(), hostile);  // the tail without its last newline
  assert.equal(await page.locator('#land-list b, #land-list img, #pwn').count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await landed(page, 'clash').getAttribute('data-outcome'), 'conflict');
  assert.equal(await landed(page, 'clash').locator('.land-detail').textContent(), 'conflicts in README');
  assert.equal(await page.locator('#land-status').textContent(), 'done');
  await page.locator('#activity-list li[data-type="branch_landed"]').waitFor();
  // main moved once, by good's merge, and its checkout with it.
  assert.equal((await git(home, repo, 'rev-list', '--first-parent', '--count', `${before}..main`)).trim(), '1');
  assert.equal((await git(home, repo, 'rev-parse', 'main^1')).trim(), before);
  assert.equal(await git(home, repo, 'show', 'main:good.txt'), 'good\n');
  assert.equal(await git(home, repo, 'status', '--porcelain'), '', 'the checkout of main was updated, clean');
  // The other page follows the land it did not start to its end.
  await landed(other, 'clash').locator('.land-detail', { hasText: 'conflicts in README' }).waitFor();
  await other.locator('#land-status', { hasText: 'done' }).waitFor();
  // Uncommitted work in main's checkout: the dry run warns, the land is refused, main stays.
  writeFileSync(join(repo, 'README'), 'one\ntwo on main\nthree\n');
  await page.locator('#wt-land').click();
  await dialog.waitFor();
  assert.match(await dialog.locator('#confirm-text').textContent(), /in this order: red, clash\. .*Warning: 'main' is checked out in .* with uncommitted work/);
  await dialog.getByRole('button', { name: 'Land into main' }).click();
  await page.locator('.toast:not(.ok)', { hasText: /land never moves a branch under uncommitted work/ }).waitFor();
  await until(async () => !(await page.locator('#wt-land').isDisabled()), 'the refused land to end');
  assert.equal((await git(home, repo, 'rev-parse', 'main')).trim(), main, 'main did not move');
  // A land with a branch that did not land answers 500 with every row; the refused ones 409.
  home.allowedConsole.push(/status of (500|409) .*\/api\/teams\/web\/land/, /server error 500 for .*\/api\/teams\/web\/land: /);
});

// The scripted ACP agent of tests/acp (each line of a prompt is one step of its script), run by
// the node that runs these tests.
const ACP_AGENT = fileURLToPath(new URL('../acp/agent.mjs', import.meta.url));
const acpLine = (page, name) => page.locator(`#agents-body tr[data-acp-of="${name}"]`);

webTest('an ACP agent: its permission request answered from the page, its transcript live, its turn cancelled from its card', async (home) => {
  await home.teamOk(['create', 'web', '--json']);
  await home.teamOk(['spawn', 'a1', '--acp', '--permissions', 'ask', '--json', '--', process.execPath, ACP_AGENT]);
  await home.serve();
  const { page } = await home.open();
  const line = acpLine(page, 'a1');
  await line.locator('.acp-state', { hasText: 'ready' }).waitFor();
  assert.equal((await line.locator('.acp-turn').textContent()).trim(), 'idle');
  // A team with an ACP agent shows its permission requests: none yet.
  await page.locator('#permissions-panel #perm-empty').waitFor();
  // The transcript, open before the turn begins, follows it as it goes.
  await line.getByRole('button', { name: 'Show the transcript of a1' }).click();
  await page.locator('#acp-empty').waitFor();
  const tr = page.locator('#acp-body');
  const evil = '<img/src=x/onerror=window.__pwned=1>';
  await home.teamOk(['prompt', 'a1', ['think pondering', 'plan read|write', `tool t1 read ${evil}`, 'say hello',
    'permission edit', 'say after'].join('\n'), '--json']);

  // The agent asks: a row with the agent, the tool call's title and kind, and one button per option.
  const perm = page.locator('#perm-list li.perm', { hasText: 'a edit tool call' });
  await perm.waitFor();
  assert.equal(await perm.locator('.perm-agent').textContent(), 'a1');
  assert.equal(await perm.locator('.perm-kind').textContent(), 'edit');
  assert.deepEqual(await perm.locator('.perm-opts button').allTextContents(), ['Allow', 'Always allow', 'Reject', 'Always reject']);
  assert.deepEqual(await perm.locator('.perm-opts button').evaluateAll((bs) => bs.map((b) => b.classList.contains('opt-allow') ? 'allow' : b.classList.contains('opt-reject') ? 'reject' : '?')),
    ['allow', 'allow', 'reject', 'reject']);
  await page.locator('#perm-count', { hasText: '1 open' }).waitFor();
  await line.locator('.acp-perms', { hasText: '1 permission request' }).waitFor();
  await line.locator('.acp-turn', { hasText: 'turn 1 running' }).waitFor();
  // The agent waits for a person (SPEC 17): its badge, and under its row the request's title and
  // the command that answers it.
  await row(page, 'a1').locator('.act-waiting').waitFor();
  assert.equal(await row(page, 'a1').locator('td.act-cell').getAttribute('data-source'), 'acp');
  await waitLine(page, 'a1').locator('.wait-answer', { hasText: /^team permission allow\|deny \d+$/ }).waitFor();
  assert.equal(await waitLine(page, 'a1').locator('.wait-tool').textContent(), 'a edit tool call');
  // Meanwhile the transcript: the prompt, the thought (dimmed), the plan as a checklist with its
  // first step done, the tool call with its status and content, the streamed text, the tool call
  // waiting for the answer.
  await tr.locator('.tr-prompt', { hasText: 'permission edit' }).waitFor();
  await tr.locator('.tr-thought', { hasText: 'pondering' }).waitFor();
  const plan = tr.locator('.tr-plan .tr-checklist li');
  await until(async () => (await plan.count()) === 2, 'the plan of two steps');
  assert.deepEqual(await plan.evaluateAll((lis) => lis.map((li) => [li.textContent, li.dataset.status, li.querySelector('input').checked])),
    [['read', 'completed', true], ['write', 'pending', false]]);
  const t1 = tr.locator('.tr-tool[data-tool-call="t1"]');
  await t1.locator('.tool-st', { hasText: 'completed' }).waitFor();
  assert.equal(await t1.locator('.tool-kind').textContent(), 'read');
  assert.equal(await t1.locator('.tr-tool-title').textContent(), evil);
  assert.equal(await t1.locator('.tr-tool-text').textContent(), 't1 done');
  await tr.locator('.tr-msg', { hasText: 'hello' }).waitFor();
  await tr.locator('.tr-tool[data-tool-call="perm-edit"]').waitFor();

  // Allow: the row goes, and the agent goes on with the answer it got.
  await perm.getByRole('button', { name: 'Allow', exact: true }).click();
  await perm.waitFor({ state: 'detached' });
  await page.locator('.toast.ok', { hasText: 'a1: Allow' }).waitFor();
  await tr.locator('.tr-msg', { hasText: 'permission: allow' }).waitFor();
  await tr.locator('.tr-msg', { hasText: 'after' }).waitFor();
  await tr.locator('.tr-stop[data-stop-reason="end_turn"]').waitFor();
  await line.locator('.acp-turn', { hasText: 'idle' }).waitFor();
  await row(page, 'a1').locator('.act-idle').waitFor();
  assert.equal(await waitLine(page, 'a1').count(), 0, 'no line of a wait once answered');
  assert.equal(await line.locator('.acp-perms').count(), 0, 'no open permission request left');
  assert.equal(await line.locator('.acp-cancel').count(), 0, 'no Cancel without a running turn');
  // The server's record of it, and the page's list of closed requests.
  const all = await (await page.request.get(`${home.origin}/api/teams/web/permissions?all=true`)).json();
  assert.equal(all.length, 1);
  assert.equal(all[0].state, 'answered');
  assert.equal(all[0].answer, 'allow');
  await page.locator('#perm-closed').check();
  await page.locator('#perm-list li.perm.closed', { hasText: 'answered: Allow' }).waitFor();

  // A turn that waits for session/cancel: Cancel on its card ends it, and its stop reason shows.
  await home.teamOk(['prompt', 'a1', 'wait-cancel', '--json']);
  const cancel = line.getByRole('button', { name: 'Cancel the turn of a1' });
  await line.locator('.acp-turn', { hasText: 'turn 2 running' }).waitFor();
  await tr.locator('.tr-prompt', { hasText: 'wait-cancel' }).waitFor();
  await page.locator('#acp-cancel').waitFor(); // the transcript's head has it too
  await cancel.click();
  await tr.locator('.tr-stop[data-stop-reason="cancelled"] .stop-reason', { hasText: 'cancelled' }).waitFor();
  await cancel.waitFor({ state: 'detached' });
  await page.locator('#acp-cancel').waitFor({ state: 'hidden' });
  await page.locator('.toast.ok', { hasText: 'a1: turn cancelled' }).waitFor();
  await page.locator('#activity-list li[data-type="acp_turn_ended"]').first().waitFor();

  // A terminal in a tool call (its id is a background shell's) links to what that shell printed:
  // the transcript's own rendering of such a record, against a real shell of the home.
  const shell = await home.teamOk(['shell', 'start', '--json', '--', 'echo', '<b>from the shell</b>']);
  await home.teamOk(['shell', 'wait', shell.shell_id, '--json']);
  await page.evaluate(async (id) => {
    const { renderRecord } = await import('/acp.js');
    const { api, teamPath } = await import('/api.js');
    const rec = { kind: 'tool_call', turn: 3, toolCall: { toolCallId: 'x1', title: 'run echo', kind: 'execute', status: 'completed',
      content: [{ type: 'terminal', terminalId: id }], locations: [], rawInput: { command: 'echo' }, rawOutput: null } };
    const probe = document.createElement('div');
    probe.id = 'probe';
    probe.append(renderRecord(rec, { terminal: (t) => api(teamPath('web', 'shells', t, 'output')) }));
    document.body.append(probe);
  }, shell.shell_id);
  await page.locator('#probe').getByRole('button', { name: `Show the output of terminal ${shell.shell_id}` }).click();
  await page.locator('#probe .tr-term-out', { hasText: '<b>from the shell</b>' }).waitFor();

  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'nothing the agent wrote ran');
  assert.equal(await page.locator('#board img').count(), 0, 'no img element was made');
});

// SPEC 17: what each agent is doing. The agents here report through hooks: the claude preset
// puts its flags after the program's name, and the program (a script in the test's home) ignores
// them. A report is what Claude Code's hook would send, given to `team __report` as the hook does.
function hookAgent(home, name) {
  const program = join(home.dir, 'ignores-its-args');
  writeFileSync(program, '#!/bin/sh\nexec sleep 1000\n', { mode: 0o755 });
  return home.teamOk(['spawn', name, '--preset', 'claude', '--json', '--', program]);
}
function report(home, name, event, payload = {}) {
  return new Promise((res, rej) => {
    const child = execFile(TEAM, ['--home', home.dir, '__report', `${name}@web`, 'claude', event], { env: home.env() },
      (error, stdout, stderr) => (error ? rej(new Error(`__report ${event}: ${stderr || error.message}`)) : res()));
    child.stdin.end(JSON.stringify(payload));
  });
}
const permissionRequest = (command) => ({ tool_name: 'Bash', tool_input: { command } });
// The agents' rows in the table's order.
const rowOrder = (page) => page.locator('#agents-body tr[data-agent]').evaluateAll((trs) => trs.map((tr) => tr.dataset.agent));
const waitLine = (page, name) => page.locator(`#agents-body tr[data-wait-of="${name}"]`);
// Replaces window.Notification with one that records each notification it is asked for (and
// asks the real one for the permission), before any script of the page runs.
function captureNotifications() {
  window.__notes = [];
  const Real = window.Notification;
  window.Notification = class {
    constructor(title, options = {}) {
      window.__notes.push({ title, body: options.body, tag: options.tag });
    }
    static get permission() {
      return Real.permission;
    }
    static requestPermission() {
      return Real.requestPermission();
    }
    close() {}
  };
}
const notes = (page) => page.evaluate(() => window.__notes);

webTest('a waiting agent: its badge, what it waits on and its answer, first in the table; idle and working badges', async (home) => {
  await home.teamOk(['create', 'web', '--json']);
  for (const n of ['w1', 'w2', 'w3']) await hookAgent(home, n);
  await home.serve();
  const { page } = await home.open();
  for (const n of ['w1', 'w2', 'w3']) await row(page, n).locator('.act-starting').waitFor();
  assert.deepEqual(await rowOrder(page), ['w1', 'w2', 'w3'], 'creation order while none waits');
  assert.match(await row(page, 'w1').locator('td.act-cell').getAttribute('title'), /^starting since .*, from /);
  // w3 asks for a permission: its badge, the line of what it waits on, and it comes first.
  await report(home, 'w3', 'PermissionRequest', permissionRequest('rm -rf build'));
  await row(page, 'w3').locator('.act-waiting', { hasText: 'waiting' }).waitFor();
  const line = waitLine(page, 'w3');
  await line.locator('.wait-what', { hasText: 'rm -rf build' }).waitFor();
  assert.equal(await line.locator('.wait-kind').textContent(), 'waits for a permission');
  assert.equal(await line.locator('.wait-tool').textContent(), 'Bash');
  assert.equal(await line.locator('.wait-answer').textContent(), 'team attach w3 --team web');
  assert.match(await row(page, 'w3').locator('td.act-cell').getAttribute('title'), /^waiting since .*, from the agent's own reports/);
  assert.match(await row(page, 'w3').locator('.act-age').textContent(), /^(now|\d+ s)$/);
  assert.deepEqual(await rowOrder(page), ['w3', 'w1', 'w2']);
  // The wait line sits right under its agent's row.
  assert.equal(await line.evaluate((tr) => tr.previousElementSibling.dataset.agent), 'w3');
  await page.locator('#agents-count', { hasText: '3 live · 1 waiting' }).waitFor();
  await until(async () => (await page.title()) === '(1) web · team', 'the title to count the waiting agent');
  // w1 asks a question later: the longest wait stays on top.
  await report(home, 'w1', 'PreToolUse', { tool_name: 'AskUserQuestion', tool_input: { questions: [{ question: 'Which <b>branch</b>?' }] } });
  await waitLine(page, 'w1').locator('.wait-what', { hasText: 'Which <b>branch</b>?' }).waitFor();
  assert.equal(await waitLine(page, 'w1').locator('.wait-kind').textContent(), 'waits for an answer');
  assert.deepEqual(await rowOrder(page), ['w3', 'w1', 'w2']);
  // w3 is answered and works again: back to its place, its line gone; w2 ends its turn: idle.
  await report(home, 'w3', 'UserPromptSubmit', { prompt: 'go on' });
  await row(page, 'w3').locator('.act-working').waitFor();
  await line.waitFor({ state: 'detached' });
  await report(home, 'w2', 'Stop');
  await row(page, 'w2').locator('.act-idle').waitFor();
  assert.deepEqual(await rowOrder(page), ['w1', 'w2', 'w3']);
  // The filter knows the activity too.
  await page.locator('#agent-filter').fill('waiting');
  await until(async () => JSON.stringify(await rowOrder(page)) === '["w1"]', 'the filter to leave the waiting agent');
  await page.locator('#agent-filter').fill('');
  // What the page shows is what the API says, after a reload too (no event needed).
  await page.reload();
  await page.locator('html[data-ready]').waitFor();
  await row(page, 'w1').locator('.act-waiting').waitFor();
  assert.deepEqual(await rowOrder(page), ['w1', 'w2', 'w3']);
  const agents = await home.teamOk(['agents', '--json', '--team', 'web']);
  assert.deepEqual(agents.filter((a) => a.activity).map((a) => [a.name, a.activity.state]), [['w1', 'waiting'], ['w2', 'idle'], ['w3', 'working']]);
  // An ended agent says so.
  await home.teamOk(['kill-agent', 'w2', '--force', '--grace', '250ms', '--json']);
  await row(page, 'w2').locator('.act-ended').waitFor();
});

webTest('a notification for each agent that starts waiting: once per wait, none for a wait open before the page', async (home) => {
  await home.teamOk(['create', 'web', '--json']);
  for (const n of ['w1', 'w2']) await hookAgent(home, n);
  // w1 waits before the page opens.
  await report(home, 'w1', 'PermissionRequest', permissionRequest('make install'));
  await home.serve();
  const page = await home.page();
  await page.addInitScript(captureNotifications);
  await page.goto(home.url);
  await page.locator('html[data-ready]').waitFor();
  await page.locator('#conn.conn-live').waitFor();
  await row(page, 'w1').locator('.act-waiting').waitFor();
  // No permission yet: the button asks for it. Headless, the browser's prompt answers no: the
  // button says so. Then the permission is granted (as in the browser's site settings): the
  // button follows, and notifications are on.
  const button = page.locator('#notify');
  const says = (text) => until(async () => (await button.textContent()) === text, `the button to say "${text}"`);
  await says('notify me');
  await button.click();
  await says('notifications blocked');
  assert.equal(await button.isDisabled(), true);
  await page.context().grantPermissions(['notifications'], { origin: home.origin });
  await says('notifications on');
  assert.equal(await button.getAttribute('aria-pressed'), 'true');
  assert.deepEqual(await notes(page), [], 'none for the wait of w1, open before the page');

  // w2 starts waiting: one notification, naming it, its command and the answer.
  await report(home, 'w2', 'PermissionRequest', permissionRequest('git push --force'));
  await until(async () => (await notes(page)).length === 1, 'a notification');
  const [first] = await notes(page);
  assert.equal(first.title, 'w2 (web) waits for a permission');
  assert.equal(first.body, 'Bash: git push --force\nanswer: team attach w2 --team web');
  assert.equal(first.tag, 'team-wait w2@web', 'a newer notification of the same agent replaces an older one');
  // The same wait reported again (Claude Code's Notification after its PermissionRequest) is no
  // new wait; the next one that is, w2 working and then waiting again, is the second notification.
  await report(home, 'w2', 'Notification', { notification_type: 'permission_prompt', message: 'Claude needs your permission to use Bash' });
  await report(home, 'w2', 'PermissionRequest', permissionRequest('git push --force'));
  await report(home, 'w2', 'UserPromptSubmit', { prompt: 'ok' });
  await row(page, 'w2').locator('.act-working').waitFor();
  // (the stream is in order: the entries before the one that made w2 working have been handled)
  assert.equal((await notes(page)).length, 1, 'the same wait reported again raised nothing');
  await report(home, 'w2', 'PermissionRequest', permissionRequest('git push --force'));
  await until(async () => (await notes(page)).length === 2, 'a second notification');
  const waits = await home.teamOk(['activity', '--type', 'agent_state', '--json']);
  assert.equal(waits.filter((e) => e.details.state === 'waiting').length, 3, 'three waits: w1 before the page, w2 twice');
  const all = await notes(page);
  assert.deepEqual(all.map((n) => n.title), ['w2 (web) waits for a permission', 'w2 (web) waits for a permission']);
  assert.ok(all.every((n) => !n.title.startsWith('w1')), 'none for the wait of w1, open before the page');
  // Off from the button: a new wait shows on the page and raises nothing.
  await button.click();
  await says('notifications off');
  assert.equal(await button.getAttribute('aria-pressed'), 'false');
  await report(home, 'w1', 'UserPromptSubmit', { prompt: 'ok' });
  await report(home, 'w1', 'PermissionRequest', permissionRequest('make clean'));
  await waitLine(page, 'w1').locator('.wait-what', { hasText: 'make clean' }).waitFor();
  assert.equal((await notes(page)).length, 2);
});

webTest("a plain program's activity comes from its screen: idle once its screen is still, live", async (home) => {
  await home.teamOk(['create', 'web', '--json']);
  await home.teamOk(['config', 'set', 'idle-after', '1s', '--team', 'web', '--json']);
  await home.serve();
  const { page } = await home.open();
  await page.evaluate(() => (window.__sameDocument = true));
  await home.teamOk(['spawn', 'p1', '--json', '--', 'bash', '-c', 'for i in 1 2 3; do echo "step $i"; sleep 0.2; done; exec sleep 1000']);
  await row(page, 'p1').locator('.act-idle').waitFor();
  assert.equal(await row(page, 'p1').locator('td.act-cell').getAttribute('data-source'), 'screen');
  assert.match(await row(page, 'p1').locator('td.act-cell').getAttribute('title'), /^idle since .*, from its pane/);
  const states = (await home.teamOk(['activity', '--type', 'agent_state', '--json'])).map((e) => e.details.state);
  assert.equal(states.at(-1), 'idle', `the page shows the last state the log has (${states.join(', ')})`);
  assert.equal(await page.evaluate(() => window.__sameDocument), true, 'no reload happened');
});

// What an agent spends (SPEC 18): the line under its row.
const useLine = (page, name) => page.locator(`#agents-body tr[data-usage-of="${name}"]`);

webTest('usage: an agent shows its memory and limits, then stopped: max-runtime once past it, and the top bar sums the team', async (home) => {
  await home.teamOk(['create', 'web', '--json']);
  await home.teamOk(['config', 'set', 'sample-every', '200ms', '--team', 'web', '--json']);
  await home.serve();
  const { page } = await home.open();
  await home.teamOk(['spawn', 'w1', '--max-runtime', '3s', '--limit-grace', '1s', '--json', '--', 'sleep', '1000']);
  const line = useLine(page, 'w1');
  await line.locator('.use-limits', { hasText: 'limits 3s' }).waitFor();
  assert.match(await line.locator('.use-limits').getAttribute('title'), /forced after 1s/);
  assert.equal(await line.locator('.use-tokens').textContent(), '0 tokens');
  assert.equal(await line.locator('.use-cost').textContent(), '$0.0000');
  assert.match(await line.locator('.use-turns').textContent(), /^0 turns$/);
  assert.match(await line.locator('.use-cpu').textContent(), /^cpu \d+\.\ds$/);
  // Its tree's memory, once its watcher has sampled it (no event says so: the page's timer).
  await until(async () => /^mem \d+(\.\d)? (B|KiB|MiB|GiB)$/.test(await line.locator('.use-mem').textContent()),
    "w1's memory", 15000);
  assert.match(await line.locator('.use-mem').getAttribute('title'), /its process tree's memory: (PSS|RSS) /);
  // The team's sum in the top bar, and no max-cost or max-agents.
  await until(async () => (await page.locator('#team-usage').textContent()) === '$0.0000 · 0 tokens', 'the team total');
  // Past 80 % the leader is warned (the line turns yellow); past 100 % it is stopped (red).
  await line.locator('.use-limit', { hasText: 'stopped: max-runtime' }).waitFor({ timeout: 15000 });
  await page.locator('#activity-list li[data-type="budget_stop"]').waitFor();
  assert.ok(await line.evaluate((tr) => tr.classList.contains('use-stopped')), 'the line is marked stopped');
  assert.ok(await line.locator('.use-limit').evaluate((el) => el.classList.contains('badge-danger')), 'in red');
  const warned = await home.teamOk(['activity', '--type', 'budget_warning', '--json']);
  assert.equal(warned.length, 1, 'one warning before the stop');
  // Forced after its grace; its line still says why once it has ended.
  await row(page, 'w1').locator('.st', { hasText: /^(terminated|force_killed|killed)$/ }).waitFor({ timeout: 15000 });
  await line.locator('.use-limit', { hasText: 'stopped: max-runtime' }).waitFor();
  // An ended agent's memory is the most its tree held.
  await until(async () => /^peak \d+(\.\d)? (B|KiB|MiB|GiB)$/.test(await line.locator('.use-mem').textContent()), "w1's peak");
});

webTest('usage: a team created with --max-cost and --max-agents shows its total of $5.00 and its live agents of 2', async (home) => {
  await home.teamOk(['create', 'web', '--max-cost', '5', '--max-agents', '2', '--json']);
  await home.serve();
  const { page } = await home.open();
  const bar = page.locator('#team-usage');
  await until(async () => (await bar.textContent()) === '$0.0000 of $5.00 · 0 tokens · 0 of 2 agents', 'the team total of its max-cost');
  assert.match(await bar.getAttribute('title'), /of its max-cost \$5\.00[^]*0 live agent\(s\) of its max-agents 2/);
  // A spawn is an event: the live count follows at once.
  await home.teamOk(['spawn', 'w1', '--json', '--', 'sleep', '1000']);
  await until(async () => (await bar.textContent()) === '$0.0000 of $5.00 · 0 tokens · 1 of 2 agents', 'one live agent of 2');
  assert.equal(await useLine(page, 'w1').locator('.use-limits').count(), 0, 'no limits of its own');
});

webTest("usage: tokens and cost from an agent's transcript, unknown for a model without a price, its own figure from its status line", async (home) => {
  await home.teamOk(['create', 'web', '--json']);
  await home.teamOk(['config', 'set', 'sample-every', '200ms', '--team', 'web', '--json']);
  for (const n of ['a1', 'a2']) await hookAgent(home, n);
  await home.serve();
  const { page } = await home.open();
  // Claude Code's transcripts (docs/usage-records.md), named by a hook.
  const transcript = (name, model, calls) => {
    const file = join(home.dir, `${name}.jsonl`);
    writeFileSync(file, calls.map(([input, output, cacheRead, cacheWrite], i) => JSON.stringify({ type: 'assistant',
      timestamp: new Date().toISOString(), message: { id: `msg_${name}_${i}`, model, usage: { input_tokens: input,
        output_tokens: output, cache_read_input_tokens: cacheRead, cache_creation_input_tokens: cacheWrite } } }) + '\n').join(''));
    return file;
  };
  await report(home, 'a1', 'UserPromptSubmit', { prompt: 'go',
    transcript_path: transcript('a1', 'claude-sonnet-4-5', [[1000, 100, 2000, 500], [2000, 300, 4000, 0]]) });
  await report(home, 'a2', 'UserPromptSubmit', { prompt: 'go', transcript_path: transcript('a2', 'local-model-x', [[1000, 100, 0, 0]]) });
  // 9,900 tokens at the shipped prices of claude-sonnet-4-5: $0.018675.
  const a1 = useLine(page, 'a1');
  await a1.locator('.use-tokens', { hasText: '9.9k tokens' }).waitFor({ timeout: 15000 });
  await a1.locator('.use-cost', { hasText: '$0.0187' }).waitFor();
  assert.match(await a1.locator('.use-tokens').getAttribute('title'), /input 3000, output 400, cache read 6000, cache write 500; 2 model calls\nmodels: claude-sonnet-4-5/);
  assert.equal(await a1.locator('.use-turns').textContent(), '1 turn');
  // No price for its model: unknown, never a guess, and the title names the model.
  const a2 = useLine(page, 'a2');
  await a2.locator('.use-tokens', { hasText: '1.1k tokens' }).waitFor({ timeout: 15000 });
  assert.equal(await a2.locator('.use-cost').textContent(), 'unknown');
  assert.match(await a2.locator('.use-cost').getAttribute('title'), /^no price for: local-model-x/);
  const bar = page.locator('#team-usage');
  await until(async () => (await bar.textContent()) === '$0.0187 + unknown · 11.0k tokens', 'the team total with an unknown cost');
  assert.match(await bar.getAttribute('title'), /\+ 1 agent of unknown cost/);
  // Claude Code's own figure (its status line) wins over the prices, and says so.
  await report(home, 'a1', 'StatusLine', { cost: { total_cost_usd: 0.5 } });
  await a1.locator('.use-cost', { hasText: '$0.5000' }).waitFor({ timeout: 15000 });
  assert.equal(await a1.locator('.use-own').textContent(), 'its own figure');
  await until(async () => (await bar.textContent()) === '$0.5000 + unknown · 11.0k tokens', 'the team total with its own figure');
});
