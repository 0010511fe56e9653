// Agents on the Agent Client Protocol (issue 27): the permission requests they ask of their client,
// answered from the page; an ACP agent's line in the agents table (its ACP state, its turn, its
// queue, a Cancel button while a turn runs); and its transcript (prompts, streamed text, thoughts,
// tool calls with their status and terminals, the plan as a checklist, the stop reason), fetched
// again when an event of that agent says it changed. Everything an agent wrote reaches the page as
// text (dom.js's h and setText), never as markup.
import { api, teamPath } from './api.js';
import { h, setText, KeyedList } from './dom.js';
import { toast, toastError, timeEl } from './ui.js';

const $ = (id) => document.getElementById(id);
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

// A value as one short line (an agent's rawInput, say): strings as they are, the rest as JSON.
export function shortText(v, max = 160) {
  if (v === undefined || v === null) return '';
  let s;
  try {
    s = typeof v === 'string' ? v : JSON.stringify(v);
  } catch {
    s = String(v);
  }
  s = s.replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

// The same value whole, for a tooltip (at most `max` characters).
function fullText(v, max = 4000) {
  if (v === undefined || v === null) return '';
  let s;
  try {
    s = typeof v === 'string' ? v : JSON.stringify(v, null, 2);
  } catch {
    s = String(v);
  }
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

// allow_once / allow_always green, reject_once / reject_always red.
const optionClass = (kind) => (/^allow/.test(kind ?? '') ? 'opt-allow' : /^reject/.test(kind ?? '') ? 'opt-reject' : 'opt-other');

// ---- permission requests ----

const OPEN = new Set(['open', 'answering']);

export class PermissionsPanel {
  constructor(ctx) {
    this.ctx = ctx; // {team(), changed()}
    this.items = [];
    this.busy = new Set(); // ids with an answer under way
    this.answered = new Map(); // id -> optionId answered from this page (until the server says so too)
    this.enabled = false; // only a team with an ACP agent shows (and asks for) them
    this.showClosed = false;
    this.list = new KeyedList($('perm-list'), {
      key: (p) => p.id,
      signature: (p) => JSON.stringify([p, this.busy.has(p.id)]),
      create: (p) => this.createItem(p),
      update: (li, p) => this.updateItem(li, p),
    });
    $('perm-closed').addEventListener('change', (e) => {
      this.showClosed = e.target.checked;
      this.ctx.changed();
    });
  }

  // Shows the panel (and asks for its requests) once the team has an ACP agent; answers whether
  // that just happened.
  enable(on) {
    if (on === this.enabled) return false;
    this.enabled = on;
    $('permissions-panel').hidden = !on;
    return on;
  }

  // Another team: nothing of this one stays on show.
  reset() {
    this.items = [];
    this.answered.clear();
    this.enable(false);
    this.render();
  }

  async load() {
    if (!this.enabled) return;
    const list = await api(teamPath(this.ctx.team(), 'permissions') + (this.showClosed ? '?all=true' : ''));
    this.items = Array.isArray(list) ? list : [];
    // What the server has closed needs no memory of an answer given here.
    for (const id of [...this.answered.keys()]) {
      const p = this.items.find((i) => i.id === id);
      if (!p || !OPEN.has(p.state)) this.answered.delete(id);
    }
    this.render();
  }

  // Open requests first, oldest first (the order they were asked in); closed ones after, newest
  // first. A request answered from this page counts as answered at once, even when a fetch begun
  // before the answer still calls it open.
  shown() {
    const items = this.items.map((p) =>
      this.answered.has(p.id) && OPEN.has(p.state) ? { ...p, state: 'answered', answer: this.answered.get(p.id) } : p);
    const open = items.filter((p) => OPEN.has(p.state)).sort((a, b) => a.id - b.id);
    const closed = this.showClosed ? items.filter((p) => !OPEN.has(p.state)).sort((a, b) => b.id - a.id) : [];
    return { open, all: [...open, ...closed] };
  }

  render() {
    const { open, all } = this.shown();
    this.list.render(all);
    setText($('perm-count'), open.length ? `${open.length} open` : '');
    $('permissions-panel').classList.toggle('attention', open.length > 0);
    $('perm-empty').hidden = all.length > 0;
  }

  createItem(p) {
    const li = h('li.perm', { dataset: { permission: p.id } },
      h('div.perm-head', null,
        h('span.id', null, `#${p.id}`),
        h('span.mono.perm-agent'),
        h('span.badge.perm-kind'),
        h('span.grow.perm-title'),
        timeEl(p.createdAt)),
      h('div.perm-input.mono'),
      h('div.perm-opts'));
    li._cells = { agent: li.querySelector('.perm-agent'), kind: li.querySelector('.perm-kind'),
      title: li.querySelector('.perm-title'), input: li.querySelector('.perm-input'), opts: li.querySelector('.perm-opts') };
    return li;
  }

  updateItem(li, p) {
    const { agent, kind, title, input, opts } = li._cells;
    const tc = p.toolCall ?? {};
    setText(agent, p.agent ?? String(p.agentId ?? '').split('@')[0]);
    agent.title = p.agentId ?? '';
    setText(kind, tc.kind ?? 'other');
    kind.hidden = !tc.kind;
    const what = tc.title || tc.toolCallId || 'a tool call';
    setText(title, what);
    title.title = [what, tc.toolCallId ? `tool call ${tc.toolCallId}` : '', tc.status ? `status ${tc.status}` : '']
      .filter(Boolean).join('\n');
    setText(input, shortText(tc.rawInput));
    input.title = fullText(tc.rawInput);
    input.hidden = tc.rawInput === undefined || tc.rawInput === null;
    const open = OPEN.has(p.state);
    const busy = this.busy.has(p.id) || p.state === 'answering';
    li.classList.toggle('busy', busy);
    li.classList.toggle('closed', !open);
    li.setAttribute('aria-busy', String(busy));
    if (open) {
      opts.replaceChildren(
        ...(p.options ?? []).map((o) => {
          const b = h(`button.btn.opt.${optionClass(o.kind)}`, { type: 'button', title: `${o.kind ?? ''} (${o.optionId})`,
            dataset: { option: o.optionId, kind: o.kind ?? '' } }, o.name || o.optionId);
          b.disabled = busy;
          b.addEventListener('click', () => this.answer(p, o));
          return b;
        }),
        h('span.spinner', { role: 'progressbar', 'aria-label': 'working' }));
    } else {
      const opt = (p.options ?? []).find((o) => o.optionId === p.answer);
      const said = p.state === 'answered'
        ? `answered: ${opt?.name ?? p.answer ?? '?'}${p.answeredBy ? ` by ${p.answeredBy}` : ''}`
        : p.state;
      opts.replaceChildren(h(`span.st.st-perm-${p.state}${opt ? `.${optionClass(opt.kind)}` : ''}`, null, said));
    }
  }

  async answer(p, option) {
    this.busy.add(p.id);
    this.render();
    try {
      const r = await api(teamPath(this.ctx.team(), 'permissions', String(p.id)), { method: 'POST', body: { option: option.optionId } });
      this.answered.set(p.id, r?.answer ?? option.optionId);
      toast(`${p.agent ?? p.agentId}: ${option.name || option.optionId} (#${p.id})`, { ok: true });
    } catch (e) {
      toastError(e);
    } finally {
      this.busy.delete(p.id);
      this.render();
      await this.ctx.changed().catch(() => {});
    }
  }
}

// ---- an ACP agent's line in the agents table ----

// The children of the line under an ACP agent's row: its ACP state, its turn (running or queued),
// how many prompts wait, its open permission requests, its policy, and its buttons.
// handlers: {live, busy, open (its transcript is on show), transcript(), cancel()}
export function acpLine(a, handlers) {
  const x = a.acp ?? {};
  const out = [
    h('span.badge.acp-tag', { title: 'an agent on the Agent Client Protocol' }, 'ACP'),
    h(`span.st.acp-state.st-acp-${x.state ?? 'unknown'}`, { title: stateTitle(x) }, stateText(x)),
    h('span.acp-turn', null, turnText(x)),
  ];
  if (x.queued) out.push(h('span.badge', { title: 'prompts waiting for the running turn to end' }, `${x.queued} queued`));
  if (x.openPermissions) {
    out.push(h('span.badge.badge-warn.acp-perms', { title: 'waiting for an answer in Permission requests' },
      plural(x.openPermissions, 'permission request')));
  }
  if (x.policy) out.push(h('span.muted.acp-policy', { title: 'what it may do without asking' }, `permissions: ${x.policy}`));
  out.push(h('span.spacer'));
  const show = h('button.btn.acp-show', { type: 'button', 'aria-pressed': String(Boolean(handlers.open)),
    'aria-label': `Show the transcript of ${a.name}` }, 'transcript');
  show.addEventListener('click', handlers.transcript);
  out.push(show);
  if (handlers.live && x.turn?.state === 'running') {
    const cancel = h('button.btn.btn-danger.acp-cancel', { type: 'button', 'aria-label': `Cancel the turn of ${a.name}`,
      title: 'session/cancel: the agent ends its turn as cancelled' }, 'Cancel');
    cancel.disabled = Boolean(handlers.busy);
    cancel.addEventListener('click', handlers.cancel);
    out.push(cancel);
  }
  return out;
}

// "ready", "ended (the agent exited)"; on hover its session, or how it wants to be signed in.
function stateText(x) {
  return `${x.state ?? '?'}${x.state === 'ended' && x.endReason ? ` (${x.endReason})` : ''}`;
}

function stateTitle(x) {
  const lines = [];
  if (x.sessionId) lines.push(`session ${x.sessionId}`);
  if (x.state === 'needs_auth') {
    const ways = (Array.isArray(x.authMethods) ? x.authMethods : []).map((m) => m?.name ?? m?.id ?? String(m));
    lines.push(`the agent wants to be signed in first${ways.length ? `: ${ways.join(', ')}` : ''}`);
  }
  return lines.join('\n');
}

function turnText(x) {
  const t = x.turn;
  if (!t) return x.state === 'ended' ? 'no turn' : 'idle';
  // its number: `id` in SPEC 15's sketch, `turn` as the server sends it (the acp_turns row)
  return `turn ${t.id ?? t.turn ?? '?'} ${t.state}`;
}

// ---- the transcript ----

// A tool call record as one shape, whichever the server sent: {toolCall: {toolCallId, …}} or
// the flat fields of acp/transcript.cpp's first records (id, tool_kind, raw_input…).
export function toolCallOf(rec) {
  const t = rec.toolCall ?? {};
  return {
    id: t.toolCallId ?? rec.id ?? '',
    title: t.title ?? rec.title ?? '',
    kind: t.kind ?? rec.tool_kind ?? 'other',
    status: t.status ?? rec.status ?? 'pending',
    content: t.content ?? rec.content ?? [],
    locations: t.locations ?? rec.locations ?? [],
    rawInput: t.rawInput ?? rec.raw_input ?? null,
    rawOutput: t.rawOutput ?? rec.raw_output ?? null,
  };
}

const stopReasonOf = (rec) => rec.stopReason ?? rec.stop_reason ?? null;

// A content block's text (ACP ContentBlock: text, or a resource link / image / … named by type).
function blockText(block) {
  if (!block || typeof block !== 'object') return block === undefined || block === null ? '' : String(block);
  if (block.type === 'text') return block.text ?? '';
  if (block.type === 'resource_link') return `[${block.name ?? block.uri ?? 'resource'}]`;
  if (block.type === 'resource') return `[${block.resource?.uri ?? 'resource'}]`;
  return `[${block.type ?? 'content'}]`;
}

// One transcript record as an element. ctx: {terminal(id) → Promise of {output, exitStatus}}.
export function renderRecord(rec, ctx) {
  const turn = rec.turn ?? 0;
  switch (rec.kind) {
    case 'prompt':
      return h('div.tr.tr-prompt', { dataset: { turn } }, h('span.tr-turn', null, `turn ${turn}`), h('div.tr-text', null, rec.text ?? ''));
    case 'user_message':
      return h('div.tr.tr-user', { dataset: { turn } }, h('span.tr-label', null, 'user'), h('div.tr-text', null, rec.text ?? ''));
    case 'agent_message':
      return h('div.tr.tr-msg', { dataset: { turn } }, rec.text ?? '');
    case 'agent_thought':
      return h('div.tr.tr-thought', { dataset: { turn }, title: 'a thought' }, rec.text ?? '');
    case 'tool_call':
      return toolCallEl(toolCallOf(rec), turn, ctx);
    case 'plan':
      return planEl(rec.entries ?? [], turn);
    case 'mode':
      return h('div.tr.tr-mode', { dataset: { turn } }, `mode: ${rec.mode ?? rec.text ?? ''}`);
    case 'stop': {
      const reason = stopReasonOf(rec);
      if (rec.error) {
        return h('div.tr.tr-stop.tr-failed', { dataset: { turn, stopReason: reason ?? '' } }, `turn ${turn} failed: ${rec.error}`);
      }
      return h('div.tr.tr-stop', { dataset: { turn, stopReason: reason ?? '' } },
        `turn ${turn} ended: `, h(`span.stop-reason.stop-${reason ?? 'none'}`, null, reason ?? '?'));
    }
    default:
      // an update of a kind this page does not know: kept in the record, not shown
      return h('div.tr.tr-other', { hidden: true, dataset: { turn, kind: rec.kind ?? '' } });
  }
}

function toolCallEl(t, turn, ctx) {
  const el = h('div.tr.tr-tool', { dataset: { turn, toolCall: t.id, status: t.status } },
    h('div.tr-tool-head', null,
      h('span.badge.tool-kind', null, t.kind),
      h('span.tr-tool-title', { title: `tool call ${t.id}` }, t.title || t.id),
      h(`span.st.tool-st.st-tool-${t.status}`, null, t.status)));
  if (t.rawInput !== null && t.rawInput !== undefined) {
    el.append(h('div.tr-tool-input.mono', { title: fullText(t.rawInput) }, shortText(t.rawInput, 240)));
  }
  for (const item of Array.isArray(t.content) ? t.content : []) {
    if (!item || typeof item !== 'object') continue;
    if (item.type === 'content') el.append(h('div.tr-tool-text', null, blockText(item.content)));
    else if (item.type === 'diff') el.append(h('div.tr-tool-diff.mono', { title: 'a diff' }, `diff ${item.path ?? ''}`));
    else if (item.type === 'terminal' && item.terminalId) el.append(terminalEl(String(item.terminalId), ctx));
  }
  const locs = (Array.isArray(t.locations) ? t.locations : [])
    .filter((l) => l && l.path)
    .map((l) => (l.line ? `${l.path}:${l.line}` : l.path));
  if (locs.length) el.append(h('div.tr-tool-locs.mono.muted', null, locs.join('  ')));
  return el;
}

// A terminal in a tool call is a background shell of the home (its terminal id is the shell's id):
// a button shows what it printed, and shows it again fetched anew on the next click.
function terminalEl(id, ctx) {
  const out = h('pre.tr-term-out', { hidden: true, tabindex: 0 });
  const btn = h('button.btn.tr-term-btn', { type: 'button', 'aria-expanded': 'false', 'aria-label': `Show the output of terminal ${id}`,
    title: `what the shell ${id} printed` }, `output of ${id}`);
  const hide = h('button.btn.tr-term-hide', { type: 'button', hidden: true, 'aria-label': `Hide the output of terminal ${id}` }, 'hide');
  btn.addEventListener('click', async () => {
    btn.disabled = true;
    try {
      const r = await ctx.terminal(id);
      const st = r?.exitStatus;
      const end = !st ? '' : st.status === 'running' ? '\n(still running)'
        : `\n(${st.status ?? 'ended'}${st.returncode !== undefined && st.returncode !== null ? `, return code ${st.returncode}` : ''})`;
      out.textContent = String(r?.output ?? '').replace(/\n$/, '') + (r?.truncated ? '\n(only the end is kept)' : '') + end;
      out.hidden = false;
      hide.hidden = false;
      btn.setAttribute('aria-expanded', 'true');
    } catch (e) {
      toastError(e);
    } finally {
      btn.disabled = false;
    }
  });
  hide.addEventListener('click', () => {
    out.hidden = true;
    hide.hidden = true;
    btn.setAttribute('aria-expanded', 'false');
  });
  return h('div.tr-term', { dataset: { terminal: id } }, h('span.muted', null, 'terminal '), btn, hide, out);
}

function planEl(entries, turn) {
  const list = h('ul.tr-checklist');
  for (const e of Array.isArray(entries) ? entries : []) {
    const status = e?.status ?? 'pending';
    const box = h('input', { type: 'checkbox', disabled: true, 'aria-label': status });
    box.checked = status === 'completed';
    box.indeterminate = status === 'in_progress';
    list.append(h('li', { dataset: { status } }, box, h('span', null, e?.content ?? ''),
      e?.priority && e.priority !== 'medium' ? h('span.muted', null, ` (${e.priority})`) : null));
  }
  return h('div.tr.tr-plan', { dataset: { turn } }, h('div.tr-label', null, 'plan'), list);
}

export class TranscriptPanel {
  // ctx: {team(), agent(name) → its record in the agents list, busy(name), cancel(name), onClose()}
  constructor(ctx) {
    this.ctx = ctx;
    this.name = null;
    this.sigs = []; // the JSON of each record on show, by index
    $('acp-close').addEventListener('click', () => this.close());
    $('acp-cancel').addEventListener('click', () => this.name && this.ctx.cancel(this.name));
    this.renderCtx = {
      terminal: (id) => api(teamPath(this.ctx.team(), 'shells', id, 'output')),
    };
  }

  open(name) {
    this.name = name;
    this.sigs = [];
    $('acp-panel').hidden = false;
    setText($('acp-agent'), name);
    $('acp-body').replaceChildren();
    $('acp-empty').hidden = true;
    this.sync();
  }

  close() {
    if (!this.name) return;
    this.name = null;
    this.sigs = [];
    $('acp-panel').hidden = true;
    $('acp-body').replaceChildren();
    this.ctx.onClose();
  }

  // The head of the panel as the agents list says: ACP state, turn, Cancel while a turn runs.
  sync() {
    if (!this.name) return;
    const a = this.ctx.agent(this.name);
    const x = a?.acp ?? null;
    const st = $('acp-state');
    st.className = `st acp-state st-acp-${x?.state ?? 'unknown'}`;
    setText(st, x ? stateText(x) : a ? 'not an ACP agent' : 'gone');
    st.title = x ? stateTitle(x) : '';
    setText($('acp-turn'), x ? turnText(x) + (x.queued ? ` · ${x.queued} queued` : '') : '');
    const cancel = $('acp-cancel');
    cancel.hidden = !(x && x.turn?.state === 'running' && a.status !== 'terminated');
    cancel.disabled = Boolean(this.ctx.busy(this.name));
    cancel.setAttribute('aria-label', `Cancel the turn of ${this.name}`);
  }

  async refresh() {
    if (!this.name) return;
    const name = this.name;
    const doc = await api(teamPath(this.ctx.team(), 'agents', name, 'logs'));
    if (name !== this.name) return;
    this.render(Array.isArray(doc?.records) ? doc.records : null, doc);
  }

  // Only the records that changed are made again (chunks grow the last one; a tool call's update
  // changes its own), so an open terminal output or the scroll position stay as they were.
  render(records, doc) {
    const body = $('acp-body');
    if (!records) {
      // not (or no longer) a transcript: the log's text, as the log panel would show it
      this.sigs = [];
      body.replaceChildren(h('div.tr.tr-msg', null, doc?.output ?? ''));
      $('acp-empty').hidden = true;
      return;
    }
    const atBottom = body.scrollHeight - body.scrollTop - body.clientHeight < 24;
    for (const [i, rec] of records.entries()) {
      const sig = JSON.stringify(rec);
      if (this.sigs[i] === sig) continue;
      const el = renderRecord(rec, this.renderCtx);
      const old = body.children[i];
      if (old) old.replaceWith(el);
      else body.append(el);
      this.sigs[i] = sig;
    }
    while (body.children.length > records.length) body.lastElementChild.remove();
    this.sigs.length = records.length;
    $('acp-empty').hidden = records.length > 0;
    if ($('acp-follow').checked && atBottom) body.scrollTop = body.scrollHeight;
  }
}
