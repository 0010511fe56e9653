// Runs one scenario of the real agents' tests by its name (ctest runs each as a test of its own,
// label `agents`), or every scenario with no name. Each has a TEAM_HOME, a tmux server, a fake
// model on a free port of 127.0.0.1 and an agent config directory of its own, and cleans up
// whatever happens: see docs/testing.md.
//
// Run: TEAM_BINARY=build/team node tests/agents/run.mjs ['claude: the work through MCP']
import { test } from 'node:test';
import { withHome } from './harness.mjs';
import { scenarios as claude } from './claude.mjs';
import { scenarios as others } from './others.mjs';
import { scenarios as acp } from './acp.mjs';
import { scenarios as unattended } from './unattended.mjs';
import { scenarios as activity } from './activity.mjs';
import { scenarios as usage } from './usage.mjs';
import { scenarios as resume } from './resume.mjs';

const all = { ...claude, ...others, ...acp, ...unattended, ...activity, ...usage, ...resume };
const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!all[name]) {
    console.error(`run.mjs: no scenario ${JSON.stringify(name)}; one of:\n  ${Object.keys(all).join('\n  ')}`);
    process.exit(2);
  }
}
for (const [name, body] of Object.entries(all)) {
  if (wanted.length === 0 || wanted.includes(name)) test(name, { timeout: 240000 }, withHome(body, body.homeOptions));
}
