// Landing (SPEC 20): the Land button of the Kept worktrees panel and the team's last land under
// it. Land asks first for a dry run (POST …/land {dry_run: true}: which branches would land,
// conflict or be skipped), shows it and asks, then lands those branches in that order (POST
// …/land {names}), which answers when the whole land is done. Meanwhile GET …/lands?limit=1 is
// fetched every second, and at once on a land_* or branch_landed event, so that each branch's row
// shows as it is decided (queued, checking, landing, then landed with its commit, conflict with
// its files, check_failed with its exit code, team shell and the check's last lines, skipped with
// why). The outcome is a note at the bottom right, as Resume's; a refusal (a land already running,
// no check, a dirty checkout of the target) an error note with the server's words.
import { api, teamPath } from './api.js';
import { h, setText, KeyedList } from './dom.js';
import { toast, toastError, confirmAction, setTime } from './ui.js';

const $ = (id) => document.getElementById(id);
const branches = (n) => `${n} branch${n === 1 ? '' : 'es'}`;
const short = (commit) => String(commit ?? '').slice(0, 7);
const POLL_MS = 1000;

// The colour of an outcome (the status classes of style.css).
const OUTCOME_CLASS = {
  landed: 'st-active',
  would_land: 'st-active',
  conflict: 'st-failed',
  check_failed: 'st-failed',
  interrupted: 'st-failed',
  skipped: 'st-terminated',
  queued: 'st-terminated',
  checking: 'st-in_progress',
  landing: 'st-in_progress',
};
const OUTCOME_TEXT = { check_failed: 'check failed', would_land: 'would land' };

// What a branch's row says after its outcome: the commit, the files, the check's code and shell.
export function landDetail(b) {
  switch (b.outcome) {
    case 'landed':
      return `${short(b.commit)}${b.previous ? ` (was ${short(b.previous)})` : ''}${b.why ? `: ${b.why}` : ''}`;
    case 'would_land':
      return 'merges cleanly; the check runs when it lands';
    case 'conflict':
      return `conflicts in ${(b.files ?? []).join(', ')}`;
    case 'check_failed': {
      const code = typeof b.exitCode === 'number' ? `exit ${b.exitCode}` : b.signal ? `killed by ${b.signal}` : 'no exit code';
      return `${code} · team shell ${b.shellId ?? '?'}${b.why ? `: ${b.why}` : ''}${b.outputTail ? '' : ' (it printed nothing)'}`;
    }
    case 'queued':
      return 'waiting its turn';
    case 'checking':
      return 'the check runs';
    case 'landing':
      return 'moving the target';
    default:
      return b.why ?? '';
  }
}

export class LandPanel {
  constructor(ctx) {
    this.ctx = ctx; // {team(), changed()}
    this.last = null; // the land on show: the team's last one, or a dry run's answer (after: that land's id)
    this.running = false; // a land (or its dry run) asked from this page is under way
    this.timer = null;
    this.list = new KeyedList($('land-list'), {
      key: (b) => `${b.agent}|${b.branch}`,
      signature: (b) => JSON.stringify(b),
      create: (b) => this.createItem(b),
      update: (li, b) => this.updateItem(li, b),
    });
    $('wt-land').addEventListener('click', () => this.land());
  }

  // The team's last land (what another page or the command line ran shows too).
  async load() {
    const team = this.ctx.team();
    const lands = await api(`${teamPath(team, 'lands')}?limit=1`);
    if (team !== this.ctx.team()) return;
    // A dry run on show stays until a land newer than the one it replaced is there.
    if (this.last?.dryRun && (lands[0]?.landId ?? null) === this.last.after) return this.render();
    this.last = lands[0] ?? null;
    this.render();
    // A land started elsewhere is followed as one started here.
    if (this.last?.status === 'running') this.poll();
  }

  reset() {
    this.last = null;
    this.stopPolling();
    this.render();
  }

  render() {
    const l = this.last;
    $('wt-land').disabled = this.running;
    $('land-box').setAttribute('aria-busy', String(this.running || l?.status === 'running'));
    $('land-box').classList.toggle('busy', this.running || l?.status === 'running');
    $('land-box').hidden = !l;
    if (!l) return this.list.render([]);
    setText($('land-what'), `${l.dryRun ? 'dry run' : `land ${l.landId}`} into ${l.into} · ${l.strategy} · check ${l.check}`);
    $('land-what').title = l.check;
    const status = l.dryRun ? 'would do' : l.status ?? 'done';
    const st = $('land-status');
    st.className = `st ${status === 'running' ? 'st-in_progress' : status === 'interrupted' ? 'st-failed' : 'st-terminated'}`;
    setText(st, status);
    const when = $('land-when');
    when.hidden = !l.startedAt;
    if (l.startedAt) setTime(when, l.endedAt ?? l.startedAt);
    this.list.render(l.branches ?? []);
    $('land-empty').hidden = (l.branches ?? []).length > 0;
  }

  createItem(b) {
    const li = h('li', { dataset: { agent: b.agent } },
      h('span.mono.land-agent', null, b.agent),
      h('span.mono.land-branch'),
      h('span.st.land-outcome'),
      h('span.grow.land-detail'),
      h('pre.land-tail'));
    li._cells = { branch: li.children[1], outcome: li.children[2], detail: li.children[3], tail: li.children[4] };
    return li;
  }

  updateItem(li, b) {
    const { branch, outcome, detail, tail } = li._cells;
    li.dataset.outcome = b.outcome;
    setText(branch, b.branch);
    branch.title = `its tip ${short(b.tip)}`;
    outcome.className = `st land-outcome ${OUTCOME_CLASS[b.outcome] ?? ''}`;
    setText(outcome, OUTCOME_TEXT[b.outcome] ?? b.outcome);
    const text = landDetail(b);
    setText(detail, text);
    detail.title = b.outcome === 'conflict' ? (b.files ?? []).join('\n') : text;
    tail.hidden = !b.outputTail;
    setText(tail, b.outputTail ?? '');
  }

  // ---- land: a dry run shown and confirmed, then the land, followed as it goes ----

  async land() {
    if (this.running) return;
    const team = this.ctx.team();
    const path = teamPath(team, 'land');
    this.running = true;
    this.render();
    try {
      const plan = await api(path, { method: 'POST', body: { dry_run: true } });
      this.last = { ...plan, after: this.last?.dryRun ? this.last.after : this.last?.landId ?? null };
      this.render();
      const names = (plan.branches ?? []).map((b) => b.agent);
      if (!names.length) {
        toast(`nothing to land into ${plan.into}: no worktree agent has ended or is idle with commits ahead`, { ok: true });
        return;
      }
      const would = plan.branches.filter((b) => b.outcome === 'would_land').length;
      const ok = await confirmAction(`Land ${branches(names.length)} into ${plan.into}?`,
        `One at a time, in this order: ${names.join(', ')}. ${would} would merge cleanly; each is kept only if ` +
          `\`${plan.check}\` passes on the result. A conflict or a red check changes nothing and tells its agent.` +
          (plan.warning ? ` Warning: ${plan.warning}.` : ''),
        `Land into ${plan.into}`);
      if (!ok) return;
      this.last = null;
      this.poll();
      const r = await api(path, { method: 'POST', body: { names } });
      this.shown(r);
      toast(`land ${r.landId} into ${r.into}: ${summary(r)}`, { ok: true });
    } catch (e) {
      // A land with a branch that did not land answers its whole document all the same.
      if (e.doc?.branches && e.doc.landId) {
        this.shown(e.doc);
        toast(`land ${e.doc.landId} into ${e.doc.into}: ${summary(e.doc)}`);
      } else {
        toastError(e); // refused: a land running, no check, a dirty checkout, not the leader
      }
    } finally {
      this.running = false;
      this.stopPolling();
      // The branches, the agents' badges and the land as the server now sees them.
      await this.ctx.changed().catch(() => {});
      this.render();
    }
  }

  // The land's own answer, as its history would show it once done.
  shown(doc) {
    this.last = { ...doc, status: doc.stopped ? 'stopped' : 'done' };
    this.render();
  }

  // GET …/lands every second while a land runs (its rows as they are decided).
  poll() {
    if (this.timer) return;
    const tick = async () => {
      try {
        const team = this.ctx.team();
        const [l] = await api(`${teamPath(team, 'lands')}?limit=1`);
        if (team !== this.ctx.team()) return this.stopPolling();
        // While this page's land has not started yet, the last land shown is an older one.
        if (l && (l.status === 'running' || !this.running)) {
          this.last = l;
          this.render();
        }
        if (!this.running && l?.status !== 'running') return this.stopPolling();
      } catch (e) {
        if (!this.running) this.stopPolling();
        return;
      } finally {
        if (this.timer) this.timer = setTimeout(tick, POLL_MS);
      }
    };
    this.timer = setTimeout(tick, 0);
  }

  stopPolling() {
    clearTimeout(this.timer);
    this.timer = null;
  }
}

// "1 landed, 1 conflict, 1 check failed": the outcomes of a land, counted.
function summary(doc) {
  const counts = new Map();
  for (const b of doc.branches ?? []) counts.set(b.outcome, (counts.get(b.outcome) ?? 0) + 1);
  if (!counts.size) return 'nothing to land';
  return [...counts].map(([o, n]) => `${n} ${OUTCOME_TEXT[o] ?? o}`).join(', ') + (doc.stopped ? ' (stopped at the first failure)' : '');
}
