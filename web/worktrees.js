// Worktrees (SPEC 14): the git state of a worktree agent's row in the agents table (its branch,
// ahead/behind, dirty, conflicts with other agents' branches, whether it merges into the base), and
// the Kept worktrees panel: each kept worktree with its state, branch, changes and snapshots, a
// diff button and a merge button that checks first (a conflict names its files and merges
// nothing), then asks, then merges. Removing a worktree is for the command line only.
import { api, teamPath } from './api.js';
import { h, setText, KeyedList } from './dom.js';
import { toast, toastError, confirmAction } from './ui.js';

const $ = (id) => document.getElementById(id);
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
const short = (commit) => String(commit ?? '').slice(0, 7);

// "a.txt, b.txt +3 more": at most three files named.
function fileList(files) {
  const f = files ?? [];
  return f.slice(0, 3).join(', ') + (f.length > 3 ? ` +${f.length - 3} more` : '');
}

// "1 staged, 2 modified, 1 untracked": the counts that are not zero.
export function changesText(w) {
  return [['staged', w.staged], ['modified', w.modified], ['untracked', w.untracked], ['unmerged', w.unmerged]]
    .filter(([, n]) => n)
    .map(([k, n]) => `${n} ${k}`)
    .join(', ');
}

const badge = (text, kind, title) => h(`span.badge${kind ? `.badge-${kind}` : ''}`, { title }, text);

// The children of an agent row's worktree line. A live agent's worktree carries its counts; an
// ended one only its path and branch.
export function worktreeLine(w) {
  const out = [h('span.branch', { title: `${w.path}\nbranched from ${w.baseName ? `${w.baseName} at ` : ''}${short(w.base)}` }, w.branch)];
  if (w.ahead !== undefined) {
    out.push(h('span.ab', { title: `${plural(w.ahead, 'commit')} ahead of the base, ${w.behind} behind` }, `↑${w.ahead} ↓${w.behind}`));
  }
  if (w.missing) out.push(badge('missing', 'danger', `${w.path} is gone; its branch and snapshots are kept`));
  if (w.clean === false) out.push(badge(`dirty: ${changesText(w)}`, 'warn', 'uncommitted work in its worktree'));
  for (const c of w.conflictsWith ?? []) {
    out.push(badge(`conflicts with ${c.agent} (${fileList(c.files)})`, 'danger',
      `${w.branch} and ${c.branch} change the same lines of:\n${(c.files ?? []).join('\n')}`));
  }
  if (w.mergesCleanly === false) {
    const files = w.mergeConflicts ?? [];
    out.push(badge(files.length ? `merge conflicts (${fileList(files)})` : 'merge conflicts', 'danger',
      `merging ${w.branch} into ${w.baseName || short(w.base)} conflicts in:\n${files.join('\n')}`));
  }
  if (w.error) out.push(badge('git error', 'danger', w.error));
  return out;
}

// What a kept worktree is: in use (its agent runs in it), present, missing (the directory is
// gone; its branch and snapshots are kept) or creating.
function stateOf(w) {
  if (w.missing) return ['missing', 'st-lost'];
  if (w.state === 'present') return w.live ? ['in use', 'st-active'] : ['present', 'st-present'];
  return [w.state, `st-${w.state}`];
}

const STRATEGY = {
  merge: 'with a merge commit',
  squash: 'as one squashed commit',
  rebase: 'rebased onto it (its commits rewritten)',
  ff: 'by fast-forward only',
};

export class WorktreesPanel {
  constructor(ctx) {
    this.ctx = ctx; // {team(), changed()}
    this.items = [];
    this.busy = new Set(); // agents with a request under way
    this.conflicts = new Map(); // agent -> the last merge check that found conflicts
    this.diffName = null;
    this.list = new KeyedList($('wt-list'), {
      key: (w) => `${w.agent}|${w.path}`,
      signature: (w) => JSON.stringify([w, this.busy.has(w.agent), this.conflicts.get(w.agent) ?? null, this.diffName === w.agent]),
      create: (w) => this.createItem(w),
      update: (li, w) => this.updateItem(li, w),
    });
    $('worktrees-panel').addEventListener('toggle', () => this.isOpen() && this.ctx.changed());
    $('wt-refresh').addEventListener('click', () => this.ctx.changed());
    $('wt-diff-close').addEventListener('click', () => this.closeDiff());
    $('wt-diff-wip').addEventListener('change', () => this.diffName && this.loadDiff().catch(toastError));
  }

  isOpen() {
    return $('worktrees-panel').open;
  }

  // The kept worktrees, only while the panel is open (each one is a `git status`).
  async load() {
    if (!this.isOpen()) return;
    this.items = await api(teamPath(this.ctx.team(), 'worktrees'));
    this.render();
  }

  render() {
    this.list.render(this.items);
    const inUse = this.items.filter((w) => stateOf(w)[0] === 'in use').length;
    setText($('wt-count'), this.items.length ? `${this.items.length}${inUse ? ` · ${inUse} in use` : ''}` : '');
    $('wt-empty').hidden = this.items.length > 0;
  }

  // Another team: nothing of this one stays on show.
  reset() {
    this.items = [];
    this.conflicts.clear();
    this.closeDiff();
    this.render();
  }

  createItem(w) {
    const name = w.agent;
    const diff = h('button.btn', { type: 'button', 'aria-label': `Show the diff of ${name}`, title: 'What its branch changed since its base' }, 'diff');
    const merge = h('button.btn', { type: 'button', 'aria-label': `Merge ${name}`, title: 'Check, then merge its branch into the base branch' }, 'merge');
    diff.addEventListener('click', () => this.showDiff(name));
    merge.addEventListener('click', () => this.merge(name));
    const li = h('li', { dataset: { agent: name } },
      h('span.mono.wt-agent', null, name),
      h('span.st'),
      h('span.grow.mono.wt-branch'),
      h('span.wt-changes'),
      h('span.when.wt-snaps'),
      h('span.spinner', { role: 'progressbar', 'aria-label': 'working' }),
      diff,
      merge,
      h('div.wt-note'));
    li._cells = { st: li.children[1], branch: li.children[2], changes: li.children[3], snaps: li.children[4], diff, merge, note: li.children[8] };
    return li;
  }

  updateItem(li, w) {
    const { st, branch, changes, snaps, diff, merge, note } = li._cells;
    const [state, cls] = stateOf(w);
    st.className = `st ${cls}`;
    setText(st, state);
    setText(branch, w.branch);
    branch.title = `${w.path}\nbranched from ${w.baseName ? `${w.baseName} at ` : ''}${short(w.base)}`;
    let text = '-';
    if (w.error) text = `git error: ${w.error}`;
    else if (w.ahead !== undefined) text = `↑${w.ahead} ↓${w.behind} · ${w.clean ? 'clean' : changesText(w)}`;
    setText(changes, text);
    changes.className = `wt-changes${w.error || w.clean === false ? ' warn' : ''}`;
    const refs = w.snapshots ?? [];
    setText(snaps, plural(refs.length, 'snapshot') + (w.snapshotOwed ? ' (one owed)' : ''));
    snaps.title = refs.join('\n');
    const busy = this.busy.has(w.agent);
    li.classList.toggle('busy', busy);
    li.setAttribute('aria-busy', String(busy));
    li.classList.toggle('selected', this.diffName === w.agent);
    diff.disabled = merge.disabled = busy;
    const c = this.conflicts.get(w.agent);
    note.hidden = !c;
    setText(note, c ? `merging ${c.branch} into ${c.into} conflicts in: ${(c.check?.files ?? []).join(', ')}` : '');
  }

  // ---- diff: the files and line counts first, then the patch ----

  async showDiff(name) {
    this.diffName = name;
    $('wt-diff').hidden = false;
    setText($('wt-diff-agent'), name);
    this.render();
    try {
      await this.loadDiff();
    } catch (e) {
      toastError(e);
    }
  }

  closeDiff() {
    this.diffName = null;
    $('wt-diff').hidden = true;
    $('wt-diff-body').replaceChildren();
    this.render();
  }

  async loadDiff() {
    const name = this.diffName;
    const wip = $('wt-diff-wip').checked;
    const path = teamPath(this.ctx.team(), 'agents', name, 'diff');
    const body = $('wt-diff-body');
    body.setAttribute('aria-busy', 'true');
    try {
      const [stat, full] = await Promise.all([
        api(`${path}?stat=true${wip ? '&wip=true' : ''}`),
        api(wip ? `${path}?wip=true` : path),
      ]);
      if (this.diffName !== name || $('wt-diff-wip').checked !== wip) return; // asked for another since
      setText($('wt-diff-what'), wip ? 'its uncommitted work, against its HEAD'
        : `${full.branch} against its base ${short(full.base)}`);
      if (!full.diff.trim()) {
        body.replaceChildren(h('span.muted', null, wip ? 'No uncommitted work.' : 'No changes since its base.'));
      } else {
        body.replaceChildren(diffFragment(`${stat.diff}\n${full.diff}`));
      }
      body.scrollTop = 0;
    } finally {
      body.setAttribute('aria-busy', 'false');
    }
  }

  // ---- merge: check first; a conflict names its files and changes nothing ----

  async merge(name) {
    const strategy = $('wt-strategy').value;
    const w = this.items.find((i) => i.agent === name);
    this.busy.add(name);
    this.render();
    try {
      const path = teamPath(this.ctx.team(), 'agents', name);
      const check = await this.checked(() => api(`${path}/merge-check?strategy=${encodeURIComponent(strategy)}`));
      if (!check) return;
      this.conflicts.delete(name);
      this.render();
      const commits = w?.ahead !== undefined ? ` (${plural(w.ahead, 'commit')} ahead of the base)` : '';
      const ok = await confirmAction(`Merge ${name} into ${check.into}?`,
        `${check.branch}${commits} merges cleanly into ${check.into}; it is brought in ${STRATEGY[strategy] ?? `(${strategy})`}.`,
        `Merge into ${check.into}`);
      if (!ok) return;
      const r = await this.checked(() => api(`${path}/merge`, { method: 'POST', body: { strategy, into: check.into } }));
      if (!r) return;
      toast(`${name}: ${r.branch} merged into ${r.into}${r.commit ? ` (${short(r.commit)})` : ''}`, { ok: true });
    } catch (e) {
      toastError(e);
    } finally {
      this.busy.delete(name);
      // The agents' badges and this list as the server now sees them.
      await this.ctx.changed().catch(() => {});
      this.render();
    }
  }

  // Runs a merge or its check; a refusal that is a conflict (409 with the files) is kept on the
  // row and told, and answers null.
  async checked(call) {
    try {
      return await call();
    } catch (e) {
      const doc = e.doc;
      if (!doc?.check || doc.check.clean !== false) throw e;
      this.conflicts.set(doc.agent, doc);
      this.render();
      toast(`${doc.agent}: not merged, ${doc.branch} conflicts with ${doc.into} in ${fileList(doc.check.files)}`);
      return null;
    }
  }
}

// A diff as text, its added, removed, hunk and header lines in spans of their own (at most
// MAX_LINES; the rest is `team diff NAME`'s).
const MAX_LINES = 20000;
function diffFragment(text) {
  const frag = document.createDocumentFragment();
  const lines = text.split('\n');
  let plain = '';
  const flush = () => {
    if (plain) frag.append(plain);
    plain = '';
  };
  for (const [i, line] of lines.entries()) {
    if (i === MAX_LINES) {
      flush();
      frag.append(h('span.muted', null, `… ${lines.length - MAX_LINES} more lines: team diff NAME shows them all\n`));
      break;
    }
    const nl = i < lines.length - 1 ? '\n' : '';
    let cls = null;
    if (/^(diff --git |index |--- |\+\+\+ |new file|deleted file|similarity|rename )/.test(line)) cls = 'diff-meta';
    else if (line.startsWith('@@')) cls = 'diff-hunk';
    else if (line.startsWith('+')) cls = 'diff-add';
    else if (line.startsWith('-')) cls = 'diff-del';
    if (!cls) {
      plain += line + nl;
      continue;
    }
    flush();
    frag.append(h(`span.${cls}`, null, line + nl));
  }
  flush();
  return frag;
}
