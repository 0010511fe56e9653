// Where the node tests make a home in which Gemini CLI reads a preset's settings file (issue 37):
// every directory above it root's and writable by neither group nor others, as a user's default
// home (~/.local/state/team) is for root. The system's temporary directory (mode 1777) is not
// one, and neither is a build directory below it: the candidates are the build's Testing
// directory, then the user's cache. Shared by tests/agents and tests/mcp.
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

// Why Gemini CLI would skip a settings file below `dir` (team's own check, gemini_settings_skipped,
// in a few lines): a directory on the way not root's, or writable by group or others.
function unsafeFor(dir) {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(d)) {
      const st = statSync(d);
      if (st.uid !== 0 || (st.mode & 0o022) !== 0) return `${d} (uid ${st.uid}, mode ${(st.mode & 0o7777).toString(8)})`;
    }
    if (d === dirname(d)) return null;
  }
}

// The directory `name` in the first candidate that is such a place, for the tests of the `team`
// binary at `team`; $TEAM_TEST_HOMES first when set. Throws, saying why each was not, when none is.
export function secureBase(team, name) {
  const candidates = [process.env.TEAM_TEST_HOMES, join(dirname(team), 'Testing', name), join(homedir(), '.cache', 'team-tests', name)];
  const why = [];
  for (const c of candidates.filter(Boolean)) {
    const reason = unsafeFor(c);
    if (!reason) return c;
    why.push(`${c}: ${reason}`);
  }
  throw new Error(`no directory for a home that Gemini CLI would read a settings file in (as root, none writable by group or others):\n  ${why.join('\n  ')}`);
}
