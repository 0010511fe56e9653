// The screenshot of the guide (docs/dashboard.png): a small team at work under a max-cost, what
// each agent spends and its limits (SPEC 18: one past 80 % of its max-tokens), one agent waiting
// for a permission (SPEC 17), one lost with its Resume button (SPEC 19: the home's tmux server
// was killed under it), the log of another open, and the Kept worktrees panel with the team's last
// land (SPEC 20): docs' branch landed on main, flaky's in conflict with it.
// Run: TEAM_BINARY=build/team node tests/web/screenshot.mjs [OUT.png] [--dark]
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync, appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Home, TEAM, closeBrowser, until } from './harness.mjs';

const out = process.argv.find((a) => a.endsWith('.png')) ?? new URL('../../docs/dashboard.png', import.meta.url).pathname;
const home = new Home();
// What Claude Code's hook would report of `name` (the agents below run with its preset).
const report = (name, event, payload) =>
  new Promise((res, rej) => {
    const child = execFile(TEAM, ['--home', home.dir, '__report', `${name}@web`, 'claude', event], { env: home.env() },
      (error, stdout, stderr) => (error ? rej(new Error(stderr || error.message)) : res()));
    child.stdin.end(JSON.stringify(payload));
  });
// A Claude Code transcript of `calls` model calls of `model` (what the usage watcher reads, SPEC 18).
const transcript = (name, model, calls, [input, output, cacheRead, cacheWrite]) => {
  const file = join(home.dir, `${name}.jsonl`);
  for (let i = 0; i < calls; i++) {
    appendFileSync(file, JSON.stringify({ type: 'assistant', timestamp: new Date().toISOString(), message: {
      id: `msg_${name}_${i}`, model, usage: { input_tokens: input + 37 * i, output_tokens: output + 11 * i,
        cache_read_input_tokens: cacheRead * (i + 1), cache_creation_input_tokens: cacheWrite } } }) + '\n');
  }
  return file;
};
// `git ARGS` in the team's repository.
const repo = join(home.dir, 'repo');
const git = (...args) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: repo, env: home.env() }).toString();
// What a worktree agent does before it works: a commit on its branch.
const commit = (file, sed) => `sed -i '${sed}' ${file} && git -c user.name=a -c user.email=a@a commit -qam '${file}'`;
try {
  mkdirSync(repo);
  writeFileSync(join(repo, 'README.md'), '# parser\nA parser.\n\n## Tests\nnpm test\n');
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-qm', 'start');
  await home.teamOk(['create', 'web', '--description', 'the web app', '--max-cost', '20', '--max-agents', '6',
    '--repo', repo, '--check', 'grep -q Tests README.md', '--json']);
  await home.teamOk(['config', 'set', 'sample-every', '500ms', '--team', 'web', '--json']);
  // The first agent is lost: its task handed back when the home's tmux server is killed under it
  // (as a crash kills it), recorded once the agents are looked at; the others start after. It
  // committed in its worktree first, a line that main changes too.
  await home.teamOk(['spawn', 'flaky', '--worktree', '--json', '--', 'bash', '-c',
    `${commit('README.md', 's/^npm test$/npm test -- --retries 3/')}; exec sleep 3600`]);
  await until(() => git('rev-list', '--count', 'main..team/web/flaky').trim() === '1', 'flaky to commit');
  await home.teamOk(['task', 'add', 'fix the flaky test', '--owner', 'flaky', '--json']);
  const tmuxPid = Number(execFileSync('tmux', ['-S', join(home.dir, 'tmux.sock'), 'display-message', '-p', '#{pid}']));
  process.kill(tmuxPid, 'SIGKILL');
  await until(async () => (await home.teamOk(['agents', '--all', '--json'])).some((a) => a.exitReason === 'lost'), 'flaky to be lost');
  // A worker: a script that prints a test run and sleeps, and ignores the flags a preset adds.
  const worker = (name, colour, text) => {
    const file = join(home.dir, `${name}.sh`);
    writeFileSync(file, `#!/bin/bash\nprintf '\\e[1;${colour}m%s\\e[0m %s\\n' "$TEAM_AGENT_NAME" '${text}'; printf '\\e[2m$ npm test\\e[0m\\n\\e[32m  ✓\\e[0m parser handles empty input\\n\\e[32m  ✓\\e[0m parser keeps comments\\n\\e[31m  ✗\\e[0m parser: unicode escapes (expected 2, got 1)\\n'; exec sleep 3600\n`, { mode: 0o755 });
    return [file];
  };
  await home.teamOk(['spawn', 'parser', '--role', 'writes the parser', '--preset', 'claude', '--max-cost', '2', '--max-runtime', '2h',
    '--json', '--', ...worker('parser', 34, 'working on task 2')]);
  await home.teamOk(['spawn', 'reviewer', '--role', 'reviews changes', '--preset', 'claude', '--max-tokens', '80000',
    '--json', '--', ...worker('reviewer', 35, 'reviewing the parser')]);
  await home.teamOk(['spawn', 'docs', '--worktree', '--json', '--', 'bash', '-c',
    `${commit('README.md', 's/^A parser.$/A parser of the grammar in docs\\/grammar.md./')} && exec ${worker('docs', 36, 'writing the guide')[0]}`]);
  await until(() => git('rev-list', '--count', 'main..team/web/docs').trim() === '1', 'docs to commit');
  await report('parser', 'UserPromptSubmit', { prompt: 'take task 2',
    transcript_path: transcript('parser', 'claude-sonnet-4-5', 6, [1200, 400, 20000, 1500]) });
  await report('reviewer', 'UserPromptSubmit', { prompt: 'review the parser',
    transcript_path: transcript('reviewer', 'claude-opus-4-5', 2, [3000, 600, 20000, 2000]) });
  await report('reviewer', 'PermissionRequest', { tool_name: 'Bash', tool_input: { command: 'git push origin team/web/parser' } });
  await home.teamOk(['task', 'add', 'write the parser', '--owner', 'parser', '--json']);
  await home.teamOk(['task', 'update', '2', '--status', 'in_progress', '--json']);
  await home.teamOk(['task', 'add', 'review the parser', '--owner', 'reviewer', '--json']);
  await home.teamOk(['task', 'add', 'document the grammar', '--owner', 'docs', '--json']);
  await home.teamOk(['send', 'parser', 'take task 2 (team task claim 2)', '--json']);
  await home.teamOk(['shell', 'start', '--json', '--', 'sleep', '3600']);
  await home.teamOk(['kill-agent', 'docs', '--json']);
  // main moves under flaky's line; then a land: docs lands, flaky conflicts (exit 1: one did not).
  writeFileSync(join(repo, 'README.md'), '# parser\nA parser.\n\n## Tests\nnpm test -- --ci\n');
  git('commit', '-qam', 'tests: --ci');
  const land = await home.team(['land', 'docs', 'flaky', '--json']);
  if (land.json?.landed !== 1) throw new Error(`the land did not land docs: ${land.stdout}${land.stderr}`);
  await home.serve();
  const { page } = await home.open({ viewport: { width: 1280, height: 900 } });
  if (process.argv.includes('--dark')) await page.emulateMedia({ colorScheme: 'dark' });
  await page.locator('#agents-body tr[data-wait-of="reviewer"] .wait-what').waitFor();
  await page.locator('#agents-body tr[data-agent="flaky"] .btn-resume').waitFor();
  // What they spent, read by their watchers (every 500 ms here) and fetched by the page's timer.
  await page.locator('#agents-body tr[data-usage-of="parser"] .use-tokens', { hasText: /[1-9].*k tokens/ }).waitFor({ timeout: 20000 });
  await page.locator('#agents-body tr[data-usage-of="reviewer"] .use-limits.badge-warn').waitFor({ timeout: 20000 });
  await page.locator('#agents-body tr[data-usage-of="parser"] .use-mem', { hasText: /iB/ }).waitFor({ timeout: 20000 });
  await page.locator('#agents-body tr[data-agent="parser"] .name-btn').click();
  await page.locator('#log-body', { hasText: 'unicode escapes' }).waitFor();
  await until(async () => (await page.locator('#exec-list li').count()) === 1, 'the running shell');
  await page.locator('#worktrees-panel > summary').click();
  await page.locator('#land-list li[data-agent="flaky"][data-outcome="conflict"]').waitFor();
  await page.locator('#wt-list li[data-agent="docs"]').waitFor();
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await home.cleanup().catch((e) => console.error(e.message));
  await closeBrowser();
}
