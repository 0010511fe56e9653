// The screenshot of the guide (docs/dashboard.png): a small team at work, its log open.
// Run: TEAM_BINARY=build/team node tests/web/screenshot.mjs [OUT.png] [--dark]
import { Home, closeBrowser, until } from './harness.mjs';

const out = process.argv.find((a) => a.endsWith('.png')) ?? new URL('../../docs/dashboard.png', import.meta.url).pathname;
const home = new Home();
try {
  await home.teamOk(['create', 'web', '--description', 'the web app', '--json']);
  const worker = (colour, text) =>
    ['bash', '-c', `printf '\\e[1;${colour}m%s\\e[0m %s\\n' "$TEAM_AGENT_NAME" '${text}'; printf '\\e[2m$ npm test\\e[0m\\n\\e[32m  ✓\\e[0m parser handles empty input\\n\\e[32m  ✓\\e[0m parser keeps comments\\n\\e[31m  ✗\\e[0m parser: unicode escapes (expected 2, got 1)\\n'; sleep 3600`];
  await home.teamOk(['spawn', 'parser', '--role', 'writes the parser', '--json', '--', ...worker(34, 'working on task 1')]);
  await home.teamOk(['spawn', 'reviewer', '--role', 'reviews changes', '--json', '--', ...worker(35, 'waiting for a diff')]);
  await home.teamOk(['spawn', 'docs', '--json', '--', ...worker(36, 'writing the guide')]);
  await home.teamOk(['spawn', 'flaky', '--json', '--', 'sleep', '3600']);
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
  await page.locator('#agents-body tr[data-agent="parser"] .name-btn').click();
  await page.locator('#log-body', { hasText: 'unicode escapes' }).waitFor();
  await until(async () => (await page.locator('#exec-list li').count()) === 1, 'the running shell');
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await home.cleanup().catch((e) => console.error(e.message));
  await closeBrowser();
}
