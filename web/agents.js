// The agents table: one keyed row per agent record (a reused name is a new record, so the key is
// the agent id and its creation time), updated in place when an event changes it, with a graceful
// Stop and a Force button per live agent, and a spinner on the row while its request runs. An
// agent with a git worktree (SPEC 14) has a line of its own under its row, the table's full width:
// its branch, commits ahead/behind, and badges for a dirty tree, a conflict with another agent's
// branch and one with the base. That line is a keyed row too (the agent's key and "|wt"). An agent
// on the Agent Client Protocol has a line of its own as well ("|acp", acp.js): its ACP state, its
// turn, its queue and open permission requests, its transcript, and Cancel while a turn runs.
// What each agent is doing (SPEC 17, activity.js) is a badge in its row and, while it waits for
// a person, a line under it ("|wait") with what it waits on and the command that answers; the
// waiting agents come first. What it spends (SPEC 18, usage.js) is a line under those two
// ("|use"): tokens, cost, memory, CPU time, turns and its limits; the ACP and worktree lines follow.
// A lost agent (SPEC 19: its tmux server or the machine ended under it) says `lost` and has a
// Resume button (so has one a signal ended), and the panel's head a "Resume all" while the team
// has any (POST …/resume).
import { api, teamPath } from './api.js';
import { h, setText, KeyedList, coalesce } from './dom.js';
import { toast, toastError, confirmAction, timeEl, setTime } from './ui.js';
import { activityCell, setActivityCell, waitLine, activityOrder, isWaiting, waitingCount } from './activity.js';
import { worktreeLine } from './worktrees.js';
import { acpLine } from './acp.js';
import { usageLine, usageSignature } from './usage.js';

const LIVE = new Set(['spawning', 'active', 'shutting_down']);
// Ended because its tmux server or the machine went down under it (SPEC 19).
const isLost = (a) => a.status === 'terminated' && a.exitReason === 'lost';
// What `team resume --all` starts again (team/resume.cpp's ended_by_accident): a lost agent, and
// one whose program a signal of a shutting-down machine ended.
const endedByAccident = (a) => isLost(a) ||
  (a.status === 'terminated' && a.exitReason === 'exited' && (a.signal != null || (a.exitCode ?? 0) !== 0));
const COLUMNS = 9; // of the table (index.html): a line under a row spans them all

export class AgentsTable {
  // ctx: {team(): name, openTasks(name): count, openLog(name), openTranscript(name), changed(),
  // waiting(count): the number of waiting agents after each render}
  constructor(ctx) {
    this.ctx = ctx;
    this.agents = [];
    // Activities from agent_state events since the last fetch, by agentId: a fetch that was
    // answered before such an event does not put the older state back (load()).
    this.patches = new Map();
    this.renderSoon = coalesce(() => this.render(), 50);
    this.busy = new Set(); // names with a request under way
    this.filter = '';
    this.showEnded = true;
    this.selected = null;
    this.body = document.getElementById('agents-body');
    this.resumeAllBtn = document.getElementById('resume-all');
    this.resumeAllBtn.addEventListener('click', () => this.resumeAll());
    // Items, in this order: {a} for an agent's row, {a, wait: true} for the line of what it waits
    // on, {a, use: true} for its usage line, {a, acp: true} for its ACP line, {a, wt: true} for its
    // worktree's.
    const line = ({ wt, acp, wait, use }) => (wt ? '|wt' : acp ? '|acp' : wait ? '|wait' : use ? '|use' : '');
    this.list = new KeyedList(this.body, {
      key: (item) => `${item.a.agentId}|${item.a.createdAt}${line(item)}`,
      signature: ({ a, wt, acp, wait, use }) =>
        use
          ? JSON.stringify([usageSignature(a.usage), LIVE.has(a.status), isWaiting(a) && LIVE.has(a.status),
            this.hasMoreLines(a), this.selected === a.name])
          : wt
          ? JSON.stringify([a.worktree, LIVE.has(a.status), this.selected === a.name])
          : acp
            ? JSON.stringify([a.acp, a.status, Boolean(a.worktree), this.busy.has(a.name), this.selected === a.name])
            : wait
              ? JSON.stringify([a.activity, Boolean(a.usage || a.acp || a.worktree), this.selected === a.name])
              : JSON.stringify([a.status, a.paneId, a.pid, a.color, a.exitReason, a.exitCode, a.signal, a.host, a.hostState,
                a.activity?.state, a.activity?.since, a.activity?.source,
                this.ctx.openTasks(a.name), this.busy.has(a.name), this.selected === a.name, Boolean(a.worktree), Boolean(a.acp),
                this.resumable(a)]),
      create: (item) => (item.wt ? this.createWorktreeRow(item.a) : item.acp ? this.createAcpRow(item.a)
        : item.wait ? this.createWaitRow(item.a) : item.use ? this.createUsageRow(item.a) : this.createRow(item.a)),
      update: (tr, item) => (item.wt ? this.updateWorktreeRow(tr, item.a) : item.acp ? this.updateAcpRow(tr, item.a)
        : item.wait ? this.updateWaitRow(tr, item.a) : item.use ? this.updateUsageRow(tr, item.a) : this.updateRow(tr, item.a)),
    });
  }

  async load() {
    const agents = await api(teamPath(this.ctx.team(), 'agents') + '?all=true');
    for (const a of agents) {
      const p = this.patches.get(a.agentId);
      if (p && LIVE.has(a.status) && p.since > (a.activity?.since ?? '')) a.activity = p;
    }
    this.patches.clear();
    this.agents = agents;
    this.render();
  }

  // An `agent_state` entry of the event stream: the agent's activity as it says, at once and
  // without fetching every agent again. False when no live agent of that id is known (then the
  // caller fetches them).
  applyState(row) {
    const d = row.details ?? {};
    let a = null;
    for (let i = this.agents.length - 1; i >= 0 && !a; i--) {
      if (this.agents[i].agentId === d.agentId && LIVE.has(this.agents[i].status)) a = this.agents[i];
    }
    if (!a || !d.state) return false;
    const activity = { state: d.state, since: row.at, source: d.source, waitingOn: d.waitingOn ?? null };
    if (a.activity?.since && a.activity.since > activity.since) return true; // already newer
    a.activity = activity;
    this.patches.set(a.agentId, activity);
    this.renderSoon();
    return true;
  }

  // The agents shown: those waiting for a person first, then the others in creation order
  // (rows do not jump when a status changes).
  visible() {
    const f = this.filter.toLowerCase();
    return activityOrder(this.agents.filter(
      (a) =>
        (this.showEnded || LIVE.has(a.status)) &&
        (!f || a.name.toLowerCase().includes(f) || a.status.includes(f) || (a.activity?.state ?? '').includes(f) ||
          (a.role ?? '').toLowerCase().includes(f)),
    ));
  }

  render() {
    const shown = this.visible();
    const items = [];
    for (const a of shown) {
      items.push({ a });
      if (isWaiting(a) && LIVE.has(a.status)) items.push({ a, wait: true });
      if (a.usage) items.push({ a, use: true });
      if (a.acp) items.push({ a, acp: true });
      if (a.worktree) items.push({ a, wt: true });
    }
    this.list.render(items);
    const live = this.agents.filter((a) => LIVE.has(a.status)).length;
    const waiting = waitingCount(this.agents);
    const lost = this.lost();
    setText(document.getElementById('agents-count'),
      `${live} live${waiting ? ` · ${waiting} waiting` : ''}${lost.length ? ` · ${lost.length} to resume` : ''}` +
        `${this.agents.length > live ? ` · ${this.agents.length - live} ended` : ''}`);
    this.resumeAllBtn.hidden = lost.length === 0;
    this.resumeAllBtn.disabled = lost.some((a) => this.busy.has(a.name));
    this.resumeAllBtn.title = `Start again the agents the team lost (${lost.map((a) => a.name).join(', ')}), as team resume --all does`;
    document.getElementById('agents-empty').hidden = shown.length > 0;
    this.ctx.waiting?.(waiting);
  }

  createRow(a) {
    const tr = h('tr', { dataset: { agent: a.name } });
    const nameBtn = h('button.name-btn', { type: 'button', title: `Show the log of ${a.name}` },
      h('span.swatch'), h('span.name-text', null, a.name));
    nameBtn.addEventListener('click', () => this.ctx.openLog(a.name));
    const stop = h('button.btn', { type: 'button', 'aria-label': `Stop ${a.name} (graceful shutdown request)`, title: 'Ask the agent to shut down (graceful)' }, 'Stop');
    const force = h('button.btn.btn-danger', { type: 'button', 'aria-label': `Force-kill ${a.name}`, title: 'End its whole process tree now' }, 'Force');
    const resume = h('button.btn.btn-resume', { type: 'button', 'aria-label': `Resume ${a.name}`,
      title: 'Start it again under its name, with its conversation where its kind can resume one' }, 'Resume');
    stop.addEventListener('click', () => this.stop(a.name));
    force.addEventListener('click', () => this.force(a.name));
    resume.addEventListener('click', () => this.resume([a.name]));
    tr.append(
      h('td.name', null, nameBtn),
      h('td', null, h('span.st')),
      activityCell(),
      h('td.mono'),
      h('td.mono'),
      h('td.num'),
      h('td', null, timeEl(a.createdAt, 'span.age')),
      h('td.ended'),
      h('td.actions', null, h('span.spinner', { role: 'progressbar', 'aria-label': 'working' }), stop, force, resume),
    );
    tr._cells = { swatch: nameBtn.firstChild, tds: [...tr.children], stop, force, resume };
    tr._cells.act = tr._cells.tds.splice(2, 1)[0]; // the other cells keep their places
    return tr;
  }

  updateRow(tr, a) {
    const { swatch, tds, stop, force, resume } = tr._cells;
    const live = LIVE.has(a.status);
    const lost = isLost(a);
    swatch.className = `swatch c-${a.color ?? 'none'}`;
    swatch.title = a.color ?? '';
    const st = tds[1].firstChild;
    // Lost is a terminated agent's reason, shown as its status: it is the one a person can bring back.
    st.className = `st st-${lost ? 'lost' : a.status}`;
    setText(st, lost ? 'lost' : a.status);
    st.title = lost ? 'terminated: its tmux server or the machine ended under it (team resume starts it again)' : '';
    // An agent on another host (SPEC 16): its host before its pane, the host's state as a title.
    setText(tds[2], a.host ? `${a.host} ${a.paneId ?? '-'}` : a.paneId ?? '-');
    tds[2].title = a.host ? `on host ${a.host}: ${a.hostState ?? '?'}` : '';
    tds[2].className = a.host ? `mono host-${a.hostState}` : 'mono';
    setText(tds[3], a.pid ?? '-');
    const open = this.ctx.openTasks(a.name);
    setText(tds[4], live && open ? open : '-');
    setTime(tds[5].firstChild, a.createdAt);
    let ended = a.exitReason ?? '';
    if (a.exitCode !== null && a.exitCode !== undefined) ended += ` (${a.exitCode})`;
    if (a.signal) ended += ` (${a.signal})`;
    setText(tds[6], ended);
    tds[6].className = `ended st-${a.exitReason ?? ''}`;
    tds[6].title = ended;
    setActivityCell(tr._cells.act, a);
    tr.classList.toggle('waiting', isWaiting(a) && live);
    const busy = this.busy.has(a.name);
    tr.classList.toggle('busy', busy);
    tr.classList.toggle('ended', !live);
    tr.classList.toggle('selected', this.selected === a.name);
    tr.classList.toggle('has-wt', Boolean(a.worktree) && !a.acp);
    tr.classList.toggle('has-use', Boolean(a.usage));
    tr.classList.toggle('has-acp', Boolean(a.acp));
    tr.setAttribute('aria-busy', busy ? 'true' : 'false');
    stop.hidden = force.hidden = !live;
    stop.disabled = busy || a.status === 'shutting_down';
    force.disabled = busy;
    resume.hidden = !this.resumable(a);
    resume.disabled = busy;
  }

  // Lost (or ended by a signal or a non-zero exit: team/resume.cpp's rule), and not since replaced by a newer record of its name (a reused
  // name is a new record; resume starts the newest).
  resumable(a) {
    return endedByAccident(a) && this.find(a.name) === a;
  }

  lost() {
    return this.agents.filter((a) => this.resumable(a));
  }

  // Whether a line of its own (ACP, worktree) comes under its usage line.
  hasMoreLines(a) {
    return Boolean(a.acp || a.worktree);
  }

  createUsageRow(a) {
    return h('tr.use-row', { dataset: { usageOf: a.name } }, h('td', { colspan: COLUMNS }, h('div.use-line')));
  }

  // Rebuilt whole, and only when what it spends or its limits changed (the signature).
  updateUsageRow(tr, a) {
    const u = a.usage;
    tr.classList.toggle('ended', !LIVE.has(a.status));
    tr.classList.toggle('waiting', isWaiting(a) && LIVE.has(a.status));
    tr.classList.toggle('selected', this.selected === a.name);
    tr.classList.toggle('has-more', this.hasMoreLines(a));
    tr.classList.toggle('use-warned', Boolean(u.warned?.length) && !u.stoppedBy);
    tr.classList.toggle('use-stopped', Boolean(u.stoppedBy));
    tr.firstChild.firstChild.replaceChildren(...usageLine(u));
  }

  // The usage of the live agents from GET …/usage (app.js): each live agent's row of it replaces
  // the one its last fetch brought. An ended agent's is left to the agents' own fetch.
  applyUsage(rows) {
    const byId = new Map(rows.filter((u) => LIVE.has(u.status)).map((u) => [u.agentId, u]));
    let changed = false;
    for (const a of this.agents) {
      const u = LIVE.has(a.status) && a.usage ? byId.get(a.agentId) : null;
      if (u && usageSignature(u) !== usageSignature(a.usage)) {
        a.usage = u;
        changed = true;
      }
    }
    if (changed) this.renderSoon();
  }

  createWaitRow(a) {
    return h('tr.wait-row', { dataset: { waitOf: a.name } }, h('td', { colspan: COLUMNS }, h('div.wait-line')));
  }

  // Rebuilt whole, and only when what it waits on changed (the signature).
  updateWaitRow(tr, a) {
    tr.classList.toggle('selected', this.selected === a.name);
    tr.classList.toggle('has-more', Boolean(a.usage || a.acp || a.worktree)); // its usage, ACP or worktree line comes next
    tr.firstChild.firstChild.replaceChildren(...waitLine(a));
  }

  createAcpRow(a) {
    return h('tr.acp-row', { dataset: { acpOf: a.name } }, h('td', { colspan: COLUMNS }, h('div.acp-line')));
  }

  // Rebuilt whole, and only when its ACP state, its turn or its buttons changed (the signature).
  updateAcpRow(tr, a) {
    const live = LIVE.has(a.status);
    tr.classList.toggle('ended', !live);
    tr.classList.toggle('selected', this.selected === a.name);
    tr.classList.toggle('has-wt', Boolean(a.worktree)); // its worktree's line comes next
    tr.firstChild.firstChild.replaceChildren(...acpLine(a, {
      live,
      busy: this.busy.has(a.name),
      open: this.selected === a.name,
      transcript: () => this.ctx.openTranscript(a.name),
      cancel: () => this.cancel(a.name),
    }));
  }

  createWorktreeRow(a) {
    return h('tr.wt-row', { dataset: { worktreeOf: a.name } }, h('td', { colspan: COLUMNS }, h('div.wt')));
  }

  // Rebuilt whole, and only when its worktree's state changed (the signature).
  updateWorktreeRow(tr, a) {
    tr.classList.toggle('ended', !LIVE.has(a.status));
    tr.classList.toggle('selected', this.selected === a.name);
    tr.firstChild.firstChild.replaceChildren(...worktreeLine(a.worktree));
  }

  // POSTs `body` to the agent's `verb` (kill, cancel) with its row busy meanwhile; `done` says
  // the answer in a toast. The row changes when the change has committed: what the server now
  // says is fetched after it.
  async act(name, verb, body, done) {
    this.busy.add(name);
    this.render();
    this.ctx.busyChanged?.(name);
    try {
      const r = await api(teamPath(this.ctx.team(), 'agents', name, verb), { method: 'POST', body });
      toast(done(r), { ok: true });
    } catch (e) {
      toastError(e);
    } finally {
      this.busy.delete(name);
      await this.ctx.changed().catch(() => {});
      this.render();
      this.ctx.busyChanged?.(name);
    }
  }

  kill(name, body, done) {
    return this.act(name, 'kill', body, done);
  }

  stop(name) {
    return this.kill(name, { reason: 'stopped from the dashboard' }, (r) => `${name}: shutdown ${r.phase ?? 'requested'}`);
  }

  async force(name) {
    const ok = await confirmAction(`Force-kill ${name}?`,
      `Its whole process tree is ended now (SIGTERM, then SIGKILL) and its unfinished tasks go back to the pool.`,
      `Force-kill ${name}`);
    if (!ok) return;
    return this.kill(name, { force: true, reason: 'force-killed from the dashboard' }, (r) => {
      const n = r.reassignedTasks?.length ?? 0;
      return `${name}: ${r.phase ?? 'force_killed'}${n ? `, ${n} task${n === 1 ? '' : 's'} handed back` : ''}`;
    });
  }

  // Starts lost agents again (SPEC 19): `names`, or every lost agent of the team when null. Their
  // rows are busy meanwhile; each agent's outcome is a toast (resumed, fresh and why, skipped and
  // why), a failure an error toast with its why. The rows change when the fetch after it says so.
  async resume(names) {
    const busy = names ?? this.lost().map((a) => a.name);
    for (const n of busy) this.busy.add(n);
    this.render();
    try {
      const r = await api(teamPath(this.ctx.team(), 'resume'), { method: 'POST', body: names ? { names } : { all: true } });
      if (!r.agents?.length) toast('no agent to resume', { ok: true });
      for (const o of r.agents ?? []) resumeToast(o);
    } catch (e) {
      // A failed start answers the outcomes all the same: each one said, the failures as errors.
      const outcomes = e.doc?.agents ?? [];
      for (const o of outcomes) resumeToast(o);
      if (!outcomes.length) toastError(e);
    } finally {
      for (const n of busy) this.busy.delete(n);
      await this.ctx.changed().catch(() => {});
      this.render();
    }
  }

  resumeAll() {
    return this.resume(null);
  }

  // Cancels the running turn of an ACP agent (session/cancel); the turn's end comes as an event.
  cancel(name) {
    return this.act(name, 'cancel', {},
      (r) => `${name}: ${r.cancelled === false ? 'no turn was running' : 'turn cancelled'}`);
  }

  find(name) {
    // the newest record of that name (a reused name is a new record)
    for (let i = this.agents.length - 1; i >= 0; i--) if (this.agents[i].name === name) return this.agents[i];
    return null;
  }

  hasAcp() {
    return this.agents.some((a) => a.acp);
  }

  hasLive() {
    return this.agents.some((a) => LIVE.has(a.status));
  }

  // Whether a live agent works in a worktree: its commits are no activity event, so the page
  // looks at their state again now and then (app.js).
  hasLiveWorktree() {
    return this.agents.some((a) => a.worktree && LIVE.has(a.status));
  }

  select(name) {
    this.selected = name;
    this.render();
  }
}

// One agent's outcome of a resume, as a toast: `w1: resumed with its conversation (claude 1a2b…)`,
// `w1: started fresh: its kind cannot resume a conversation`, a failure as an error.
function resumeToast(o) {
  const conversation = o.conversation ? ` (${o.conversation}${o.conversationId ? ` ${o.conversationId}` : ''})` : '';
  const why = o.why ? `: ${o.why}` : '';
  if (o.outcome === 'resumed') toast(`${o.name}: resumed with its conversation${conversation}`, { ok: true });
  else if (o.outcome === 'fresh') toast(`${o.name}: started fresh${why}`, { ok: true });
  else if (o.outcome === 'skipped') toast(`${o.name}: skipped${why}`);
  else toast(`${o.name}: not resumed${why}`);
}
