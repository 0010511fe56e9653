// The agents table: one keyed row per agent record (a reused name is a new record, so the key is
// the agent id and its creation time), updated in place when an event changes it, with a graceful
// Stop and a Force button per live agent, and a spinner on the row while its request runs. An
// agent with a git worktree (SPEC 14) has a line of its own under its row, the table's full width:
// its branch, commits ahead/behind, and badges for a dirty tree, a conflict with another agent's
// branch and one with the base. That line is a keyed row too (the agent's key and "|wt"). An agent
// on the Agent Client Protocol has a line of its own as well ("|acp", acp.js): its ACP state, its
// turn, its queue and open permission requests, its transcript, and Cancel while a turn runs.
import { api, teamPath } from './api.js';
import { h, setText, KeyedList } from './dom.js';
import { toast, toastError, confirmAction, timeEl, setTime } from './ui.js';
import { worktreeLine } from './worktrees.js';
import { acpLine } from './acp.js';

const LIVE = new Set(['spawning', 'active', 'shutting_down']);

export class AgentsTable {
  // ctx: {team(): name, openTasks(name): count, openLog(name), openTranscript(name), changed()}
  constructor(ctx) {
    this.ctx = ctx;
    this.agents = [];
    this.busy = new Set(); // names with a request under way
    this.filter = '';
    this.showEnded = true;
    this.selected = null;
    this.body = document.getElementById('agents-body');
    // Items: {a} for an agent's row, {a, acp: true} for its ACP line, {a, wt: true} for its
    // worktree's line.
    this.list = new KeyedList(this.body, {
      key: ({ a, wt, acp }) => `${a.agentId}|${a.createdAt}${wt ? '|wt' : acp ? '|acp' : ''}`,
      signature: ({ a, wt, acp }) =>
        wt
          ? JSON.stringify([a.worktree, LIVE.has(a.status), this.selected === a.name])
          : acp
            ? JSON.stringify([a.acp, a.status, Boolean(a.worktree), this.busy.has(a.name), this.selected === a.name])
            : JSON.stringify([a.status, a.paneId, a.pid, a.color, a.exitReason, a.exitCode, a.signal, a.host, a.hostState,
              this.ctx.openTasks(a.name), this.busy.has(a.name), this.selected === a.name, Boolean(a.worktree), Boolean(a.acp)]),
      create: ({ a, wt, acp }) => (wt ? this.createWorktreeRow(a) : acp ? this.createAcpRow(a) : this.createRow(a)),
      update: (tr, { a, wt, acp }) => (wt ? this.updateWorktreeRow(tr, a) : acp ? this.updateAcpRow(tr, a) : this.updateRow(tr, a)),
    });
  }

  async load() {
    this.agents = await api(teamPath(this.ctx.team(), 'agents') + '?all=true');
    this.render();
  }

  // The agents shown, in creation order (rows do not jump when a status changes).
  visible() {
    const f = this.filter.toLowerCase();
    return this.agents.filter(
      (a) =>
        (this.showEnded || LIVE.has(a.status)) &&
        (!f || a.name.toLowerCase().includes(f) || a.status.includes(f) || (a.role ?? '').toLowerCase().includes(f)),
    );
  }

  render() {
    const shown = this.visible();
    const items = [];
    for (const a of shown) {
      items.push({ a });
      if (a.acp) items.push({ a, acp: true });
      if (a.worktree) items.push({ a, wt: true });
    }
    this.list.render(items);
    const live = this.agents.filter((a) => LIVE.has(a.status)).length;
    setText(document.getElementById('agents-count'), `${live} live${this.agents.length > live ? ` · ${this.agents.length - live} ended` : ''}`);
    document.getElementById('agents-empty').hidden = shown.length > 0;
  }

  createRow(a) {
    const tr = h('tr', { dataset: { agent: a.name } });
    const nameBtn = h('button.name-btn', { type: 'button', title: `Show the log of ${a.name}` },
      h('span.swatch'), h('span.name-text', null, a.name));
    nameBtn.addEventListener('click', () => this.ctx.openLog(a.name));
    const stop = h('button.btn', { type: 'button', 'aria-label': `Stop ${a.name} (graceful shutdown request)`, title: 'Ask the agent to shut down (graceful)' }, 'Stop');
    const force = h('button.btn.btn-danger', { type: 'button', 'aria-label': `Force-kill ${a.name}`, title: 'End its whole process tree now' }, 'Force');
    stop.addEventListener('click', () => this.stop(a.name));
    force.addEventListener('click', () => this.force(a.name));
    tr.append(
      h('td.name', null, nameBtn),
      h('td', null, h('span.st')),
      h('td.mono'),
      h('td.mono'),
      h('td.num'),
      h('td', null, timeEl(a.createdAt, 'span.age')),
      h('td.ended'),
      h('td.actions', null, h('span.spinner', { role: 'progressbar', 'aria-label': 'working' }), stop, force),
    );
    tr._cells = { swatch: nameBtn.firstChild, tds: tr.children, stop, force };
    return tr;
  }

  updateRow(tr, a) {
    const { swatch, tds, stop, force } = tr._cells;
    const live = LIVE.has(a.status);
    swatch.className = `swatch c-${a.color ?? 'none'}`;
    swatch.title = a.color ?? '';
    const st = tds[1].firstChild;
    st.className = `st st-${a.status}`;
    setText(st, a.status);
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
    const busy = this.busy.has(a.name);
    tr.classList.toggle('busy', busy);
    tr.classList.toggle('ended', !live);
    tr.classList.toggle('selected', this.selected === a.name);
    tr.classList.toggle('has-wt', Boolean(a.worktree) && !a.acp);
    tr.classList.toggle('has-acp', Boolean(a.acp));
    tr.setAttribute('aria-busy', busy ? 'true' : 'false');
    stop.hidden = force.hidden = !live;
    stop.disabled = busy || a.status === 'shutting_down';
    force.disabled = busy;
  }

  createAcpRow(a) {
    return h('tr.acp-row', { dataset: { acpOf: a.name } }, h('td', { colspan: 8 }, h('div.acp-line')));
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
    return h('tr.wt-row', { dataset: { worktreeOf: a.name } }, h('td', { colspan: 8 }, h('div.wt')));
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
