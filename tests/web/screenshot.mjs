// The screenshot of the guide (docs/dashboard.png): a small team at work, one agent waiting for a
// permission (SPEC 17), the log of another open.
// Run: TEAM_BINARY=build/team node tests/web/screenshot.mjs [OUT.png] [--dark]
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
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
try {
  await home.teamOk(['create', 'web', '--description', 'the web app', '--json']);
  // A worker: a script that prints a test run and sleeps, and ignores the flags a preset adds.
  const worker = (name, colour, text) => {
    const file = join(home.dir, `${name}.sh`);
    writeFileSync(file, `#!/bin/bash\nprintf '\\e[1;${colour}m%s\\e[0m %s\\n' "$TEAM_AGENT_NAME" '${text}'; printf '\\e[2m$ npm test\\e[0m\\n\\e[32m  ✓\\e[0m parser handles empty input\\n\\e[32m  ✓\\e[0m parser keeps comments\\n\\e[31m  ✗\\e[0m parser: unicode escapes (expected 2, got 1)\\n'; exec sleep 3600\n`, { mode: 0o755 });
    return [file];
  };
  await home.teamOk(['spawn', 'parser', '--role', 'writes the parser', '--preset', 'claude', '--json', '--', ...worker('parser', 34, 'working on task 1')]);
  await home.teamOk(['spawn', 'reviewer', '--role', 'reviews changes', '--preset', 'claude', '--json', '--', ...worker('reviewer', 35, 'reviewing the parser')]);
  await home.teamOk(['spawn', 'docs', '--json', '--', ...worker('docs', 36, 'writing the guide')]);
  await home.teamOk(['spawn', 'flaky', '--json', '--', 'sleep', '3600']);
  await report('parser', 'UserPromptSubmit', { prompt: 'take task 1' });
  await report('reviewer', 'PermissionRequest', { tool_name: 'Bash', tool_input: { command: 'git push origin team/web/parser' } });
  await home.teamOk(['task', 'add', 'write the parser', '--owner', 'parser', '--json']);
  await home.teamOk(['task', 'update', '1', '--status', 'in_progress', '--json']);
  await home.teamOk(['task', 'add', 'review the parser', '--owner', 'reviewer', '--json']);
  await home.teamOk(['task', 'add', 'document the grammar', '--owner', 'docs', '--json']);
  await home.teamOk(['task', 'add', 'fix the flaky test', '--owner', 'flaky', '--json']);
  await home.teamOk(['send', 'parser', 'take task 1 (team task claim 1)', '--json']);
  await home.teamOk(['shell', 'start', '--json', '--', 'sleep', '3600']);
  await home.teamOk(['kill-agent', 'flaky', '--force', '--grace', '250ms', '--json']);
  await home.teamOk(['kill-agent', 'docs', '--json']);
  await home.serve();
  const { page } = await home.open({ viewport: { width: 1280, height: 720 } });
  if (process.argv.includes('--dark')) await page.emulateMedia({ colorScheme: 'dark' });
  await page.locator('#agents-body tr[data-wait-of="reviewer"] .wait-what').waitFor();
  await page.locator('#agents-body tr[data-agent="parser"] .name-btn').click();
  await page.locator('#log-body', { hasText: 'unicode escapes' }).waitFor();
  await until(async () => (await page.locator('#exec-list li').count()) === 1, 'the running shell');
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await home.cleanup().catch((e) => console.error(e.message));
  await closeBrowser();
}
