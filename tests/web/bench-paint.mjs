// First paint of the dashboard of a 200-agent home in headless Chromium (goal: 500 ms).
// Makes a home with N agents (each a `sleep` in a pane), starts `team serve`, signs a browser
// context in once, then loads the page RUNS times (after one warm-up) and measures, on the page's
// own clock, from navigation start to the frame after the first full render (the
// `dashboard-painted` mark: every panel fetched and all N rows in the table). Prints the median,
// p90 and p99 as a row of bench/run's table, and with --json one JSON object.
//
// Run: TEAM_BINARY=build/team node tests/web/bench-paint.mjs [--agents 200] [--runs 15] [--json]
import { Home, closeBrowser } from './harness.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const AGENTS = arg('--agents', 200);
const RUNS = arg('--runs', 15);
const GOAL_MS = 500;

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

const home = new Home();
let failed = 'bench-paint';
try {
  await home.teamOk(['create', 'web', '--json']);
  const names = Array.from({ length: AGENTS }, (_, i) => `a${String(i).padStart(3, '0')}`);
  for (let i = 0; i < names.length; i += 4) {
    await Promise.all(names.slice(i, i + 4).map((n) => home.teamOk(['spawn', n, '--json', '--', 'sleep', '3600'])));
  }
  for (let i = 0; i < 20; i++) await home.teamOk(['task', 'add', `task ${i}`, '--owner', names[i], '--json']);
  await home.serve();
  const { page } = await home.open(); // signs in (the cookie stays in this context)
  const times = [];
  for (let run = 0; run <= RUNS; run++) {
    await page.reload({ waitUntil: 'commit' }); // a new document each time (a goto to /#web would only scroll)
    await page.locator('html[data-painted]').waitFor();
    const rows = await page.locator('#agents-body tr[data-agent]').count();
    if (rows !== AGENTS) throw new Error(`${rows} rows, not ${AGENTS}`);
    const ms = await page.evaluate(() => performance.getEntriesByName('dashboard-painted')[0].startTime);
    if (run > 0) times.push(ms); // the first load warms the server and the browser's caches
  }
  home.checkPage();
  times.sort((a, b) => a - b);
  const [median, p90, p99] = [0.5, 0.9, 0.99].map((q) => quantile(times, q));
  const name = `dashboard first paint, ${AGENTS} agents`;
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ name, runs: RUNS, median_ms: median, p90_ms: p90, p99_ms: p99, goal_ms: GOAL_MS, ok: median <= GOAL_MS }));
  } else {
    const cell = (v) => v.toFixed(1).padStart(9);
    console.log(`| ${name.padEnd(28)} | ${cell(median)} | ${cell(p90)} | ${cell(p99)} | ${''.padStart(18)} | ${`${GOAL_MS} ms`.padStart(7)} | ${(median <= GOAL_MS ? 'ok' : 'OVER').padEnd(7)} |`);
  }
  failed = null;
} finally {
  await home.cleanup(failed).catch((e) => {
    console.error(`bench-paint: cleanup: ${e.message}`);
    process.exitCode = 1;
  });
  await closeBrowser();
}
