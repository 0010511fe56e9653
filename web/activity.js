// What each agent is doing (SPEC 17), as the agents table shows it: a badge (starting, working,
// waiting, idle, ended) with how long it has lasted and, on hover, the source that said so; for a
// waiting agent a line under its row with what it waits on (a permission: the tool and its
// command or file; a question: its text) and the command that answers it; and the order of the
// table, waiting agents first. The rows come from GET …/agents (each agent's `activity`) and are
// brought up to date between two fetches by the `agent_state` entries of the event stream.
import { h, setText } from './dom.js';
import { toast, toastError, setAge } from './ui.js';

// What each source is, for the badge's title.
const SOURCES = {
  hooks: "the agent's own reports (its hooks)",
  acp: 'the ACP host (its turns and permission requests)',
  screen: 'its pane (output is working, a still screen is idle)',
  process: 'its process record',
};

export const isWaiting = (a) => a.activity?.state === 'waiting';

// The command that answers a wait: the one the wait names, else attaching to the agent's pane
// (what the leader's needs_input message says too).
export function answerOf(a) {
  return a.activity?.waitingOn?.answer || `team attach ${a.name} --team ${a.team}`;
}

// What a wait is on, in words: ["a permission", "Bash", "rm -rf build"].
export function waitParts(on) {
  const kind = on?.kind === 'question' ? 'an answer' : on?.kind === 'permission' ? 'a permission' : 'a person';
  return [kind, on?.tool ?? '', on?.command || on?.file || on?.text || ''];
}

// The agents in the table's order: those waiting first, the longest wait on top; then the
// others in creation order (a row does not jump when its agent starts or stops working).
export function activityOrder(agents) {
  const waiting = agents.filter(isWaiting);
  if (!waiting.length) return agents;
  waiting.sort((x, y) => (x.activity.since < y.activity.since ? -1 : x.activity.since > y.activity.since ? 1 : 0));
  return [...waiting, ...agents.filter((a) => !isWaiting(a))];
}

// The badge's cell of a row: made once, then set by setActivityCell.
export function activityCell() {
  return h('td.act-cell', null, h('span.act'), h('span.act-age'));
}

export function setActivityCell(td, a) {
  const [badge, age] = [td.firstChild, td.lastChild];
  const act = a.activity;
  const state = act?.state ?? '';
  badge.className = `act act-${state || 'none'}`;
  setText(badge, state || '-');
  setAge(age, state ? act.since : null);
  td.title = state
    ? `${state} since ${act.since ?? '?'}, from ${SOURCES[act.source] ?? act.source}`
    : 'no activity source (the leader, or an agent from before activity was recorded)';
  td.dataset.source = act?.source ?? '';
}

// The line under a waiting agent's row: what it waits on, since when, the answer and a Copy
// button for it.
export function waitLine(a) {
  const on = a.activity.waitingOn ?? {};
  const [kind, tool, what] = waitParts(on);
  const answer = answerOf(a);
  const copy = h('button.btn', { type: 'button', 'aria-label': `Copy the command that answers ${a.name}`,
    title: 'Copy the command to the clipboard' }, 'Copy');
  // The clipboard is the browser's only in a secure context (the loopback is one); elsewhere
  // the command is selected for the person to copy.
  const code = h('code.wait-answer', { title: answer }, answer);
  copy.addEventListener('click', () => {
    if (navigator.clipboard) {
      navigator.clipboard.writeText(answer).then(() => toast(`copied: ${answer}`, { ok: true }), toastError);
    } else {
      getSelection().selectAllChildren(code);
    }
  });
  return [
    h('span.wait-kind', null, `waits for ${kind}`),
    tool ? h('span.wait-tool', null, tool) : null,
    what ? h('code.wait-what', { title: what }, what) : null,
    h('span.spacer'),
    h('span.muted', null, 'answer:'),
    code,
    copy,
  ];
}

// The counts for the panel's head and the page's title.
export function waitingCount(agents) {
  let n = 0;
  for (const a of agents) if (isWaiting(a)) n++;
  return n;
}
