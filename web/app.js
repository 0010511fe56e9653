// The dashboard of `team serve` (SPEC 13): the teams, a team's agents (with their worktrees' git
// state, SPEC 14), tasks, running executions, inboxes, activity, an agent's log, open shutdown
// requests, the kept worktrees with the team's Land button and its last land (SPEC 20), and for
// agents on the Agent Client Protocol their permission requests and transcripts, what each agent is
// doing (SPEC 17: waiting agents first, and a browser notification when one starts waiting) and
// what each spends against its limits, with the team's sum in the top bar (SPEC 18), kept up to
// date by one event stream (GET /api/events). An event marks what it touches as stale; a short
// coalescing delay later each stale part is fetched again, one request per part at a time, and
// rendered with keyed row updates (an agent's change of activity is applied from the event itself).
// The page never polls for everything; only what changes without an activity event is also
// refreshed on a modest interval: an open log, open inboxes, the git state of live agents'
// worktrees (an agent's commit is no event), what live agents spend (sampled by their watchers, no
// event either), and a land while it runs (a branch's check starting is no event).
import { api, teamPath } from './api.js';
import { h, setText, coalesce } from './dom.js';
import { toastError, tickTimes } from './ui.js';
import { AgentsTable } from './agents.js';
import { ShutdownsPanel, ExecutionsPanel, TasksPanel, InboxesPanel, ActivityPanel } from './panels.js';
import { LogPanel } from './log.js';
import { WorktreesPanel } from './worktrees.js';
import { LandPanel } from './land.js';
import { PermissionsPanel, TranscriptPanel } from './acp.js';
import { Notifier } from './notify.js';
import { renderTeamUsage } from './usage.js';

const $ = (id) => document.getElementById(id);
const state = { teams: [], team: null, status: null };
const currentTeam = () => state.team;

const tasks = new TasksPanel();
const agents = new AgentsTable({
  team: currentTeam,
  openTasks: (name) => tasks.openFor(name),
  openLog: (name) => openLog(name),
  openTranscript: (name) => openTranscript(name),
  changed: () => refreshNow('agents', 'status', 'tasks', 'teams'),
  busyChanged: () => transcript.sync(),
  waiting: (n) => setTitle(n),
});
const shutdowns = new ShutdownsPanel();
const executions = new ExecutionsPanel({ team: currentTeam, changed: () => refreshNow('executions') });
const inboxes = new InboxesPanel({ team: currentTeam });
const activity = new ActivityPanel();
const log = new LogPanel({ team: currentTeam, onClose: () => agents.select(null) });
const permissions = new PermissionsPanel({ team: currentTeam, changed: () => refreshNow('permissions', 'agents') });
const transcript = new TranscriptPanel({
  team: currentTeam,
  agent: (name) => agents.find(name),
  busy: (name) => agents.busy.has(name),
  cancel: (name) => agents.cancel(name),
  onClose: () => agents.select(null),
});
const worktrees = new WorktreesPanel({ team: currentTeam, changed: () => refreshNow('worktrees', 'agents') });
const land = new LandPanel({ team: currentTeam, changed: () => refreshNow('worktrees', 'agents') });
const notifier = new Notifier({ show: (team, name) => showAgent(team, name) });

// The tab's title: the team, and how many of its agents wait for a person.
function setTitle(waiting) {
  if (!state.team) return;
  const title = `${waiting ? `(${waiting}) ` : ''}${state.team} · team`;
  if (document.title !== title) document.title = title;
}

// A notification's click: that agent's team, its row on screen.
async function showAgent(team, name) {
  if (team !== state.team) {
    location.hash = '#' + encodeURIComponent(team);
    await selectTeam(team);
  }
  const tr = document.querySelector(`#agents-body tr[data-agent="${CSS.escape(name)}"]`);
  tr?.scrollIntoView({ block: 'nearest' });
  tr?.querySelector('.name-btn')?.focus();
}

// ---- loading, one request per part at a time ----

// Wraps a loader so that calls while it runs make it run once more afterwards (never two at
// once, and never an older answer rendered over a newer one).
function serial(fn) {
  let running = null;
  let again = false;
  return () => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await fn();
        } while (again);
      } finally {
        running = null;
      }
    })();
    return running;
  };
}

const loaders = {
  teams: serial(loadTeams),
  status: serial(loadStatus),
  agents: serial(async () => {
    await agents.load();
    transcript.sync();
    // The permission requests are shown (and asked for) once the team has an ACP agent.
    if (permissions.enable(agents.hasAcp() || permissions.enabled)) await loaders.permissions().catch(report);
  }),
  tasks: serial(async () => {
    await tasks.load(state.team);
    agents.render(); // the tasks column
  }),
  executions: serial(() => executions.load()),
  activity: serial(() => activity.load(state.team)),
  inboxes: serial(() => inboxes.refresh()),
  log: serial(() => log.refresh()),
  // The kept worktrees and the team's last land, only while their panel is open.
  worktrees: serial(() => Promise.all([worktrees.load(), worktrees.isOpen() ? land.load() : null])),
  permissions: serial(() => permissions.load()), // only once the team has an ACP agent
  transcript: serial(() => transcript.refresh()), // only while one is open
};
// The store's hosts (SPEC 16, GET /api/hosts): none on a SQLite store, and then nothing shows.
// Their leases change with no activity entry, so while there are hosts and the page is on
// screen they are fetched again every 2 s (a read of one small table).
const hostList = { hosts: [] };
async function loadHosts() {
  hostList.hosts = await api('/api/hosts');
  const el = $('hosts');
  el.hidden = hostList.hosts.length === 0;
  el.replaceChildren(
    ...hostList.hosts.map((x) => {
      let text = `${x.name} ${x.state}`;
      if (typeof x.leaseAgeMs === 'number') text += ` · lease ${(x.leaseAgeMs / 1000).toFixed(1)} s`;
      if (typeof x.rttMs === 'number') text += ` · ${x.rttMs.toFixed(1)} ms`;
      return h(`span.host.host-${x.state}`, { title: `${x.ssh}: team ${x.version}, ${x.agents} live agent(s)` }, text);
    }),
  );
}
loaders.hosts = serial(loadHosts);
// What the team spends (SPEC 18, GET …/usage): its sum in the top bar, and each live agent's
// figures into its row. Tokens, memory and CPU change with no activity entry, so while a live
// agent is on screen this is fetched again every 5 s, and at once on a budget_* entry.
async function loadUsage() {
  const team = state.team;
  const doc = await api(teamPath(team, 'usage'));
  if (team !== state.team) return; // an answer for the team shown before
  renderTeamUsage($('team-usage'), doc);
  agents.applyUsage(doc.agents ?? []);
}
loaders.usage = serial(loadUsage);
const TEAM_PARTS = ['status', 'agents', 'tasks', 'executions', 'activity', 'worktrees', 'permissions', 'usage'];

function refreshNow(...parts) {
  return Promise.all(parts.map((p) => loaders[p]().catch(report)));
}

let signedOut = false;
function report(e) {
  if (e?.status === 401) return showSignin();
  toastError(e);
}

const stale = new Set();
const flush = coalesce(() => {
  const parts = [...stale];
  stale.clear();
  refreshNow(...parts);
}, 150);
function markStale(...parts) {
  for (const p of parts) stale.add(p);
  flush();
}

// ---- teams ----

async function loadTeams() {
  state.teams = await api('/api/teams');
  const select = $('team-select');
  const names = state.teams.map((t) => t.name);
  // Rebuild the few options only when the set of teams changed; otherwise just relabel.
  if ([...select.options].map((o) => o.value).join('\n') !== names.join('\n')) {
    select.replaceChildren(...state.teams.map((t) => h('option', { value: t.name }, t.name)));
  }
  for (const [i, t] of state.teams.entries()) {
    setText(select.options[i], `${t.name}  (${t.liveAgents}/${t.totalAgents})${t.status === 'dissolved' ? ' dissolved' : ''}`);
  }
  if (state.team) select.value = state.team;
  $('noteams').hidden = state.teams.length > 0;
  $('board').hidden = state.teams.length === 0;
  // No team yet, or the one asked for in the address is not (or no longer) there: pick one.
  if (state.teams.length && !state.teams.some((t) => t.name === state.team)) {
    state.team = null;
    selectTeam(pickTeam());
  }
}

// The team named in the URL's hash, else the first live one, else the first.
function pickTeam() {
  const wanted = decodeURIComponent(location.hash.slice(1));
  if (state.teams.some((t) => t.name === wanted)) return wanted;
  return (state.teams.find((t) => t.status !== 'dissolved') ?? state.teams[0]).name;
}

async function loadStatus() {
  const s = await api(teamPath(state.team));
  state.status = s;
  const t = s.tasks ?? {};
  setText($('team-summary'),
    `${s.liveAgents}/${s.totalAgents} agents live · ${(t.pending ?? 0) + (t.in_progress ?? 0)} open tasks` +
      (s.status === 'dissolved' ? ' · dissolved' : '') + (s.description ? ` · ${s.description}` : ''));
  $('team-summary').title = s.cwd ?? '';
  shutdowns.render((s.shutdownRequests ?? []).filter((r) => !r.closedAt));
  const leader = String(s.leader ?? 'leader').split('@')[0];
  inboxes.setMembers([leader, ...(s.agents ?? []).map((a) => a.name).filter((n) => n !== leader)]);
}

async function selectTeam(name) {
  if (!name || name === state.team) return;
  state.team = name;
  if (decodeURIComponent(location.hash.slice(1)) !== name) history.replaceState(null, '', '#' + encodeURIComponent(name));
  $('team-select').value = name;
  if (log.name) log.close();
  transcript.close();
  inboxes.close();
  worktrees.reset();
  land.reset();
  permissions.reset();
  $('team-usage').hidden = true;
  setTitle(0);
  await refreshNow(...TEAM_PARTS, 'inboxes');
  // The first full render of a team: what bench-paint and the tests wait for.
  if (!document.documentElement.dataset.ready) {
    document.documentElement.dataset.ready = '1';
    performance.mark('dashboard-ready');
    // The frame after that render has been painted: a callback queued from requestAnimationFrame
    // runs once the frame is out.
    requestAnimationFrame(() =>
      setTimeout(() => {
        performance.mark('dashboard-painted');
        document.documentElement.dataset.painted = '1';
      }, 0),
    );
  }
}

// An agent's name opens its log; an ACP agent's, its transcript. One of the two at a time.
function openLog(name) {
  if (agents.find(name)?.acp) return openTranscript(name);
  transcript.close();
  agents.select(name);
  log.open(name);
}

function openTranscript(name) {
  if (log.name) log.close();
  agents.select(name);
  transcript.open(name);
  refreshNow('transcript');
}

// ---- live events ----

// What an activity type touches. Unknown types touch everything of the team.
function partsFor(type) {
  if (type === 'message_sent') return [];
  // An agent's activity: its row, from the entry itself (onEvent).
  if (type === 'agent_state') return [];
  if (/^(agent|shutdown)_/.test(type)) return ['agents', 'status', 'teams', 'tasks', 'worktrees', 'hosts', 'usage'];
  // A limit crossed (a warning, a stop) or a spawn refused by one: the figures and the rows.
  if (/^(budget_|spawn_refused)/.test(type)) return ['usage', 'agents'];
  if (/^host_/.test(type)) return ['hosts', 'agents'];
  // A watcher's record of a worktree's git state: the agents' lines only.
  if (type === 'worktree_state') return ['agents'];
  if (/^worktree_/.test(type)) return ['worktrees', 'agents'];
  // A land's start, each branch decided, its end (SPEC 20): the land on show, the branches' state.
  if (/^land_/.test(type) || type === 'branch_landed') return ['worktrees', 'agents'];
  if (/^tasks?_/.test(type)) return ['tasks', 'teams', 'status'];
  if (/^(shell|execution|session)_/.test(type)) return ['executions'];
  // A transcript's growth touches only that transcript (onEvent); a turn, the agent's line.
  if (type === 'acp_transcript') return [];
  if (/^acp_/.test(type)) return ['agents', 'status'];
  if (/^permission_/.test(type)) return ['permissions', 'agents'];
  if (/^team_/.test(type)) return ['teams', 'status', 'agents'];
  return ['teams', ...TEAM_PARTS];
}

function onEvent(ev) {
  let row;
  try {
    row = JSON.parse(ev.data);
  } catch {
    return markStale('teams', ...TEAM_PARTS);
  }
  const type = row.type ?? ev.type;
  const team = typeof row.team === 'object' && row.team ? row.team.name : row.team;
  // An agent that starts waiting, in any team: a notification.
  if (type === 'agent_state') notifier.event(row, team ?? state.team);
  if (team && team !== state.team) return markStale('teams');
  // Rows of no team (a shell started outside any team) are home-wide: shown in every feed.
  if (row.id !== undefined) activity.add(row);
  const parts = partsFor(type);
  // A change of activity updates its agent's row in place (all agents are fetched only for an
  // agent the page does not know yet).
  if (type === 'agent_state' && !agents.applyState(row)) parts.push('agents');
  const about = String(row.details?.agentId ?? '').split('@')[0];
  if (log.name && about === log.name) parts.push('log');
  if (/^permission_/.test(type)) permissions.enable(true);
  // The open transcript: fetched again (150 ms after the first of a burst) when its agent's
  // transcript, turn or permissions changed; never on a timer.
  if (transcript.name && about === transcript.name && /^(acp_|permission_)/.test(type)) parts.push('transcript');
  markStale(...parts);
  // Inboxes: the recipients of a send, or the agent and the leader of a shutdown step.
  if (inboxes.isOpen()) {
    const leader = String(state.status?.leader ?? 'leader').split('@')[0];
    const agent = String(row.details?.agentId ?? '').split('@')[0];
    if (type === 'message_sent') inboxes.refresh([].concat(row.details?.to ?? []).map(String)).catch(report);
    else if (/^shutdown_/.test(type) && agent) inboxes.refresh([agent, leader]).catch(report);
  }
}

function setConn(kind, text) {
  const el = $('conn');
  el.className = `conn conn-${kind}`;
  setText(el.querySelector('.conn-text'), text ?? kind);
  el.title = kind === 'live' ? 'Receiving changes as they happen' : 'The event stream is down; retrying';
}

function connectEvents() {
  const es = new EventSource('/api/events');
  let wasOpen = false;
  es.addEventListener('open', () => {
    setConn('live');
    // After a gap, fetch everything again: what happened meanwhile may not all be replayed.
    if (wasOpen || connectEvents.dropped) markStale('teams', ...TEAM_PARTS, 'transcript');
    wasOpen = true;
  });
  es.addEventListener('error', () => {
    connectEvents.dropped = true;
    if (es.readyState === EventSource.CLOSED) {
      // The browser gives up on an HTTP error (401 after the server restarted with a new token,
      // a 5xx); try again ourselves, and find out whether we are still signed in.
      setConn('offline', 'offline');
      setTimeout(() => {
        loaders.teams().then(connectEvents, (e) => (e.status === 401 ? showSignin() : setTimeout(connectEvents, 3000)));
      }, 3000);
    } else {
      setConn('reconnecting', 'reconnecting…');
    }
  });
  // The server's events are unnamed (no `event:` line), so every type, a new one too, comes
  // here; the row's own `type` says what happened.
  es.addEventListener('message', onEvent);
}

// ---- wiring ----

function showSignin() {
  if (signedOut) return;
  signedOut = true;
  $('board').hidden = true;
  $('noteams').hidden = true;
  $('signin').hidden = false;
  setConn('offline', 'signed out');
}

function wire() {
  notifier.wire();
  $('team-select').addEventListener('change', (e) => {
    location.hash = '#' + encodeURIComponent(e.target.value);
  });
  window.addEventListener('hashchange', () => {
    const name = decodeURIComponent(location.hash.slice(1));
    if (state.teams.some((t) => t.name === name)) selectTeam(name);
  });
  let filterTimer = null;
  $('agent-filter').addEventListener('input', (e) => {
    clearTimeout(filterTimer);
    filterTimer = setTimeout(() => {
      agents.filter = e.target.value.trim();
      agents.render();
    }, 80);
  });
  $('show-ended').checked = agents.showEnded;
  $('show-ended').addEventListener('change', (e) => {
    agents.showEnded = e.target.checked;
    agents.render();
  });
  $('show-done').addEventListener('change', (e) => {
    tasks.showDone = e.target.checked;
    tasks.render();
  });
  setInterval(tickTimes, 15000);
  setInterval(() => !document.hidden && hostList.hosts.length && loaders.hosts().catch(report), 2000);
  setInterval(() => inboxes.isOpen() && loaders.inboxes(), 10000);
  // Agents commit and edit in their worktrees without an activity event: their branches' state
  // is looked at again every 10 s, only while a live agent has a worktree (or the kept worktrees
  // are open) and the page is on screen.
  setInterval(() => {
    if (document.hidden || !state.team) return;
    if (agents.hasLiveWorktree()) loaders.agents().catch(report);
    if (worktrees.isOpen()) loaders.worktrees().catch(report);
  }, 10000);
  setInterval(() => !document.hidden && state.team && agents.hasLive() && loaders.usage().catch(report), 5000);
}

async function boot() {
  wire();
  // The team named in the address is fetched at once, beside the list of teams rather than
  // after it (the first paint waits for both).
  const named = decodeURIComponent(location.hash.slice(1));
  try {
    await Promise.all([loaders.teams(), named ? selectTeam(named) : null, loaders.hosts()]);
  } catch (e) {
    return report(e);
  }
  connectEvents();
}

boot();
