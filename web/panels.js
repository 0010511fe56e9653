// The side panels: open shutdown requests, running executions (each with a Stop button), tasks,
// inboxes (unread counts, opened on click) and the activity feed (live, newest first, capped).
import { api, teamPath } from './api.js';
import { h, setText, KeyedList } from './dom.js';
import { toast, toastError, timeEl, setTime } from './ui.js';

const $ = (id) => document.getElementById(id);

function showCount(countId, emptyId, n, label = String(n)) {
  setText($(countId), n ? label : '');
  $(emptyId).hidden = n > 0;
}

// ---- shutdown requests (from the team's status) ----
export class ShutdownsPanel {
  constructor() {
    this.list = new KeyedList($('shutdowns-list'), {
      key: (r) => r.requestId,
      signature: (r) => JSON.stringify([r.phase, r.forceAt, r.rejectReason]),
      create: (r) => h('li', null, h('span.id', null, `#${r.requestId}`), h('span.grow.mono'), h('span.st'), timeEl(r.requestedAt)),
      update: (li, r) => {
        const [, who, phase] = li.children;
        setText(who, r.agentId);
        who.title = r.reason ? `reason: ${r.reason}` : '';
        phase.className = `st st-${r.phase}`;
        setText(phase, r.method === 'force' ? `${r.phase} (force)` : r.phase);
      },
    });
  }

  render(requests) {
    this.list.render(requests ?? []);
    showCount('shutdowns-count', 'shutdowns-empty', requests?.length ?? 0);
  }
}

// ---- running executions (home-wide) ----
export class ExecutionsPanel {
  constructor(ctx) {
    this.ctx = ctx; // {team(), changed()}
    this.busy = new Set();
    this.source = null; // 'executions' or, on a server without them, 'shells'
    this.list = new KeyedList($('exec-list'), {
      key: (e) => e.execution_id,
      signature: (e) => JSON.stringify([e.team, e.agent, this.busy.has(e.execution_id)]),
      create: (e) => this.createItem(e),
      update: (li, e) => {
        const busy = this.busy.has(e.execution_id);
        li.classList.toggle('busy', busy);
        li.setAttribute('aria-busy', String(busy));
        li._stop.disabled = busy;
        setText(li._owner, [e.team, e.agent].filter(Boolean).join(' / '));
      },
    });
  }

  createItem(e) {
    const cmd = Array.isArray(e.command) ? e.command.join(' ') : String(e.command ?? '');
    const stop = h('button.btn.btn-danger', { type: 'button', 'aria-label': `Stop execution ${e.execution_id}`,
      title: 'SIGINT to the whole tree, SIGKILL after 5 s' }, 'Stop');
    stop.addEventListener('click', () => this.terminate(e.execution_id));
    const li = h('li', { dataset: { execution: e.execution_id } },
      h('span.id', null, e.execution_id),
      h('span.grow.mono', { title: cmd }, cmd),
      h('span.when.owner'),
      timeEl(e.started_at),
      h('span.spinner', { role: 'progressbar', 'aria-label': 'working' }),
      stop);
    li._stop = stop;
    li._owner = li.children[2];
    return li;
  }

  // The running executions of the home; on a server without the executions resource (404),
  // the running shells of the team instead, from then on.
  async load() {
    if (this.source !== 'shells') {
      try {
        const r = await api('/api/executions/running');
        this.source = 'executions';
        this.items = r?.executions ?? [];
        return this.render();
      } catch (e) {
        if (e.status !== 404 || this.source === 'executions') throw e;
        this.source = 'shells';
      }
    }
    const team = this.ctx.team();
    const shells = await api(teamPath(team, 'shells'));
    this.items = shells
      .filter((s) => s.status === 'running')
      .map((s) => ({ execution_id: s.id, team, agent: s.agent, command: s.command, started_at: s.startedAt, pid: s.pid }));
    this.render();
  }

  render() {
    this.list.render(this.items);
    showCount('exec-count', 'exec-empty', this.items.length);
  }

  async terminate(id) {
    this.busy.add(id);
    this.render();
    try {
      if (this.source === 'shells') {
        // SIGINT to the tree, SIGKILL after the kill's timeout: what terminate does
        const r = await api(teamPath(this.ctx.team(), 'shells', id, 'kill'), { method: 'POST', body: { signal: 'SIGINT' } });
        toast(`${id}: ${r.signal_sent === 'none' ? r.error ?? 'already finished' : 'terminated'}`, { ok: true });
      } else {
        const r = await api(`/api/executions/${encodeURIComponent(id)}/terminate`, { method: 'POST', body: {} });
        const rc = r.returncode === null || r.returncode === undefined ? '' : ` (return code ${r.returncode})`;
        toast(`${id}: ${r.status}${rc}`, { ok: true });
      }
    } catch (e) {
      toastError(e);
    } finally {
      this.busy.delete(id);
      await this.ctx.changed().catch(() => {});
      this.render();
    }
  }
}

// ---- tasks ----
const OPEN = new Set(['pending', 'in_progress']);

export class TasksPanel {
  constructor() {
    this.tasks = [];
    this.showDone = false;
    this.list = new KeyedList($('tasks-list'), {
      key: (t) => t.id,
      signature: (t) => JSON.stringify([t.subject, t.status, t.owner, t.warning, t.blockedBy]),
      create: () => h('li', null, h('span.id'), h('span.grow'), h('span.mono.owner'), h('span.st')),
      update: (li, t) => {
        const [id, subject, owner, status] = li.children;
        setText(id, `#${t.id}`);
        setText(subject, t.subject + (t.warning ? ' ⚠' : ''));
        subject.title = [t.description, t.warning, t.blockedBy?.length ? `blocked by ${t.blockedBy.join(', ')}` : '']
          .filter(Boolean).join('\n');
        subject.classList.toggle('warn', Boolean(t.warning));
        setText(owner, t.owner ?? '');
        status.className = `st st-${t.status}`;
        setText(status, t.status);
      },
    });
  }

  async load(team) {
    this.tasks = await api(teamPath(team, 'tasks'));
    this.render();
  }

  // Open tasks owned by `name` (the agents table's tasks column).
  openFor(name) {
    let n = 0;
    for (const t of this.tasks) if (t.owner === name && OPEN.has(t.status)) n++;
    return n;
  }

  render() {
    const shown = this.tasks.filter((t) => this.showDone || OPEN.has(t.status));
    this.list.render(shown);
    const open = this.tasks.filter((t) => OPEN.has(t.status)).length;
    showCount('tasks-count', 'tasks-empty', shown.length, `${open} open`);
  }
}

// ---- inboxes: one line per member with its unread count; a click opens the messages ----
export class InboxesPanel {
  constructor(ctx) {
    this.ctx = ctx; // {team()}
    this.members = [];
    this.unread = new Map();
    this.openName = null;
    this.loading = false;
    this.list = new KeyedList($('inbox-list'), {
      key: (m) => m,
      signature: (m) => `${this.unread.get(m) ?? '?'}|${this.openName === m}`,
      create: (m) => {
        const btn = h('button.inbox-btn', { type: 'button', 'aria-label': `Open the inbox of ${m}` },
          h('span.grow.mono', null, m), h('span.unread'));
        btn.addEventListener('click', () => this.open(m));
        return h('li', null, btn);
      },
      update: (li, m) => {
        const n = this.unread.get(m);
        const badge = li.querySelector('.unread');
        setText(badge, n === undefined ? '…' : `${n} unread`);
        badge.classList.toggle('zero', !n);
        li.firstChild.setAttribute('aria-pressed', String(this.openName === m));
      },
    });
    $('inbox-close').addEventListener('click', () => this.close());
    $('inbox-panel').addEventListener('toggle', () => this.isOpen() && this.refresh());
  }

  isOpen() {
    return $('inbox-panel').open;
  }

  setMembers(names) {
    this.members = names;
    this.list.render(this.members);
  }

  // Unread counts of `names` (all members when not given), four requests at a time, only while
  // the panel is open. A send is an activity event (message_sent, with its recipients); reading
  // is not, so this also runs on a modest interval.
  async refresh(names = null) {
    if (!this.isOpen()) return;
    if (this.loading) {
      this.again = names && this.again !== true ? [...(this.again || []), ...names] : true;
      return;
    }
    this.loading = true;
    const team = this.ctx.team();
    try {
      const queue = names ? this.members.filter((m) => names.includes(m)) : [...this.members];
      const worker = async () => {
        while (queue.length) {
          const m = queue.shift();
          try {
            const msgs = await api(teamPath(team, 'messages') + `?agent=${encodeURIComponent(m)}&unread=true`);
            this.unread.set(m, msgs.length);
          } catch {
            this.unread.delete(m);
          }
        }
      };
      await Promise.all([worker(), worker(), worker(), worker()]);
      this.list.render(this.members);
      let total = 0;
      for (const n of this.unread.values()) total += n;
      setText($('inbox-count'), total ? `${total} unread` : '');
      if (this.openName && (!names || names.includes(this.openName))) await this.loadMessages();
    } finally {
      this.loading = false;
    }
    // Asked again while it ran: once more, for what was asked.
    if (this.again) {
      const again = this.again;
      this.again = null;
      await this.refresh(again === true ? null : again);
    }
  }

  async open(name) {
    this.openName = name;
    $('inbox-messages').hidden = false;
    setText($('inbox-agent'), name);
    this.list.render(this.members);
    try {
      await this.loadMessages();
    } catch (e) {
      toastError(e);
    }
  }

  close() {
    this.openName = null;
    $('inbox-messages').hidden = true;
    this.list.render(this.members);
  }

  async loadMessages() {
    const msgs = await api(teamPath(this.ctx.team(), 'messages') + `?agent=${encodeURIComponent(this.openName)}`);
    const body = $('inbox-body');
    const newest = msgs.slice(-100).reverse();
    body.replaceChildren(
      ...newest.map((m) =>
        h(m.readAt ? 'li.msg' : 'li.msg.is-unread', null,
          h('div.msg-head', null, `#${m.id} ${m.from} → ${m.to}`, m.type !== 'message' ? ` · ${m.type}` : '', ' · ', timeEl(m.createdAt, 'span')),
          h('div.msg-text', null, m.text))),
    );
    if (!newest.length) body.append(h('li.empty', null, 'No messages.'));
  }
}

// ---- activity: newest first, at most CAP rows ----
const CAP = 200;

// One line of what happened, from an activity row's details.
export function describe(row) {
  const d = row.details ?? {};
  const parts = [];
  for (const k of ['agentId', 'state', 'source', 'waitingOn', 'execution_id', 'shellId', 'shell_id', 'taskId', 'subject', 'owner', 'status', 'phase',
    'exitReason', 'exitCode', 'returncode', 'signal', 'reason', 'reassignedTasks', 'requestId', 'from', 'tasks', 'to', 'ids',
    'agent', 'branch', 'into', 'strategy', 'commit', 'permission', 'title', 'answer', 'by', 'turn', 'stopReason', 'error']) {
    let v = d[k];
    if (k === 'commit' && typeof v === 'string') v = v.slice(0, 7);
    if (v === undefined || v === null || v === '' || (Array.isArray(v) && !v.length)) continue;
    parts.push(`${k}=${Array.isArray(v) ? v.join(',') : typeof v === 'object' ? JSON.stringify(v) : v}`);
  }
  if (!parts.length && Object.keys(d).length) return JSON.stringify(d);
  return parts.join('  ');
}

export class ActivityPanel {
  constructor() {
    this.rows = [];
    this.list = new KeyedList($('activity-list'), {
      key: (r) => r.id,
      signature: () => '',
      create: (r) => {
        const details = describe(r);
        return h('li', { dataset: { type: r.type, id: r.id } },
          h('span.type', null, r.type),
          h('span.when', null, `${r.actor ?? ''}${r.details?.via ? ` via ${r.details.via}` : ''} · `, timeEl(r.at, 'span')),
          details ? h('span.details', { title: details }, details) : null);
      },
      update: () => {},
    });
  }

  async load(team) {
    const rows = await api(teamPath(team, 'activity'));
    this.rows = rows.slice(-CAP).reverse();
    this.render();
  }

  add(row) {
    if (this.rows.some((r) => r.id === row.id)) return;
    this.rows.unshift(row);
    this.rows.sort((a, b) => b.id - a.id);
    this.rows.length = Math.min(this.rows.length, CAP);
    this.render();
    this.list.get(row.id)?.classList.add('fresh');
  }

  render() {
    this.list.render(this.rows);
    $('activity-empty').hidden = this.rows.length > 0;
  }
}
