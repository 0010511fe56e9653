// What agents spend, and their limits (SPEC 18), as the page shows it: a line under each agent's
// row (its tokens, cost, memory, CPU time and turns; its limits, yellow once it has passed 80 % of
// one, red once one stopped it) and the team's sum in the top bar (its cost and tokens, "of $X"
// under a team max-cost, its live agents "of N" under max-agents). Each agent row of GET …/agents
// carries its `usage`; GET …/usage brings the live ones and the team's sum up to date between two
// fetches (usage changes with no activity entry: the watcher samples every `sample-every`).
// The figures are written as the command line writes them (cli/usage_cells.cpp).
import { h, setText } from './dom.js';

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

// "0", "950", "12.3k", "4.1M": a count of tokens.
export function tokensText(n) {
  n = Number(n ?? 0);
  if (n < 1e3) return String(n);
  if (n < 1e6) return `${(n / 1e3).toFixed(1)}k`;
  if (n < 1e9) return `${(n / 1e6).toFixed(1)}M`;
  return `${(n / 1e9).toFixed(1)}G`;
}

// "$0.0123", "$1.25".
export const usdText = (usd) => (usd < 1 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`);

// "512 B", "3.4 MiB", "210 MiB", "1.2 GiB".
export function sizeText(bytes) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  if (u === 0) return `${bytes} B`;
  return `${v < 10 ? v.toFixed(1) : v.toFixed(0)} ${units[u]}`;
}

// "0.4s", "12.0s", "3m02s", "2h05m": CPU or wall time.
export function timeText(ms) {
  const s = Math.trunc(ms / 1000);
  if (ms < 60000) return `${(ms / 1000).toFixed(1)}s`;
  const pad = (n) => String(n).padStart(2, '0');
  if (s < 3600) return `${Math.trunc(s / 60)}m${pad(s % 60)}s`;
  return `${Math.trunc(s / 3600)}h${pad(Math.trunc(s / 60) % 60)}m`;
}

const LIVE = new Set(['spawning', 'active', 'shutting_down']);

// The tree's memory: PSS, else RSS ([label, text, title]); null before the first sample. Of an
// agent that has ended, its peak (its last sample is no longer what it holds).
function memoryOf(m, live) {
  if (!m) return null;
  const peak = m.peakPss || m.peakRss;
  if (!live && peak) return ['peak ', sizeText(peak), `the most its process tree held (${m.peakPss ? 'PSS' : 'RSS'})`];
  const pss = typeof m.pss === 'number' && m.pss > 0 ? m.pss : null;
  const rss = typeof m.rss === 'number' ? m.rss : null;
  if (pss === null && rss === null) return null;
  const parts = [];
  if (pss !== null) parts.push(`PSS ${sizeText(pss)}`);
  if (rss !== null) parts.push(`RSS ${sizeText(rss)}`);
  if (peak) parts.push(`peak ${sizeText(peak)}`);
  return ['mem ', sizeText(pss ?? rss), `its process tree's memory: ${parts.join(', ')}${m.sampledAt ? `\nsampled at ${m.sampledAt}` : ''}`];
}

// Its limits as set: ["1.0M tokens", "$5.00", "2.0 GiB", "3s"]; empty when none.
export function limitsParts(l) {
  if (!l) return [];
  const out = [];
  if (typeof l.maxTokens === 'number') out.push(`${tokensText(l.maxTokens)} tokens`);
  if (typeof l.maxCost === 'number') out.push(usdText(l.maxCost));
  if (typeof l.maxMemory === 'number') out.push(sizeText(l.maxMemory));
  if (l.maxRuntime) out.push(String(l.maxRuntime));
  return out;
}

const piece = (cls, label, text, title) => h(`span.use.${cls}`, { title }, label ? h('span.muted', null, label) : null, text);

// The children of an agent's usage line.
export function usageLine(u) {
  const t = u.tokens ?? {};
  const models = Object.keys(u.models ?? {});
  const out = [
    piece('use-tokens', null, `${tokensText(t.total)} tokens`,
      `input ${t.input ?? 0}, output ${t.output ?? 0}, cache read ${t.cacheRead ?? 0}, cache write ${t.cacheWrite ?? 0}` +
        `; ${plural(t.calls ?? 0, 'model call')}${models.length ? `\nmodels: ${models.join(', ')}` : ''}`),
  ];
  if (typeof u.cost === 'number') {
    const own = u.costSource === 'agent';
    out.push(piece('use-cost', null, usdText(u.cost), own
      ? "the agent's own figure (its status line)"
      : 'its tokens at the price table\'s prices'));
    if (own) out.push(h('span.muted.use-own', { title: "the agent's own figure (its status line)" }, 'its own figure'));
  } else {
    const unpriced = u.costUnknownModels ?? [];
    out.push(piece('use-cost.use-unknown', null, 'unknown',
      unpriced.length ? `no price for: ${unpriced.join(', ')} (team config set prices FILE)` : 'no price for its model'));
  }
  const mem = memoryOf(u.memory, LIVE.has(u.status));
  out.push(mem ? piece('use-mem', ...mem) : piece('use-mem', 'mem ', '-', 'not sampled yet'));
  out.push(piece('use-cpu', 'cpu ', timeText(u.cpuMs ?? 0), `CPU time of its process tree; ${timeText(u.wallMs ?? 0)} since it started`));
  out.push(piece('use-turns', null, plural(u.turns ?? 0, 'turn'), 'prompts it was given'));
  const limits = limitsParts(u.limits);
  const warned = u.warned ?? [];
  if (u.stoppedBy) {
    out.push(h('span.badge.badge-danger.use-limit', { title: `crossed its ${u.stoppedBy}: asked to stop (reason budget), forced after ${u.limits?.limitGrace ?? 'its grace'}` },
      `stopped: ${u.stoppedBy}`));
  }
  if (limits.length) {
    const text = `limits ${limits.join(', ')}`;
    const title = `stopped at 100 %, forced after ${u.limits.limitGrace ?? '30s'}; the leader is warned at 80 %` +
      (warned.length ? `\npast 80 % of: ${warned.join(', ')}` : '');
    out.push(h(`span.badge.use-limits${warned.length && !u.stoppedBy ? '.badge-warn' : ''}`, { title },
      warned.length && !u.stoppedBy ? `${text} · 80 % of ${warned.join(', ')}` : text));
  } else if (warned.length && !u.stoppedBy) {
    out.push(h('span.badge.badge-warn.use-limits', null, `80 % of ${warned.join(', ')}`));
  }
  return out;
}

// What of a usage object the line shows (its signature: the line is rebuilt only when it changed).
export function usageSignature(u) {
  return u ? JSON.stringify([u.status, u.tokens, u.cost, u.costSource, u.costUnknownModels, u.turns, u.cpuMs,
    u.memory?.pss, u.memory?.rss, u.memory?.peakPss, u.memory?.peakRss, u.limits, u.warned, u.stoppedBy]) : '';
}

// The team's sum in the top bar, from GET …/usage.
export function renderTeamUsage(el, doc) {
  const total = doc.total ?? {};
  const limits = doc.limits ?? {};
  const cost = total.cost ?? 0;
  const max = typeof limits.maxCost === 'number' ? limits.maxCost : null;
  const unknown = total.costUnknownAgents ?? 0;
  let text = usdText(cost) + (unknown ? ' + unknown' : '') + (max !== null ? ` of ${usdText(max)}` : '');
  text += ` · ${tokensText(total.tokens?.total ?? 0)} tokens`;
  if (typeof limits.maxAgents === 'number') text += ` · ${limits.liveAgents ?? 0} of ${limits.maxAgents} agents`;
  setText(el, text);
  const ratio = max ? cost / max : 0;
  el.className = `team-usage${ratio >= 1 ? ' over' : ratio >= 0.8 ? ' near' : ''}`;
  const lines = [`the team's agents: ${usdText(cost)}${max !== null ? ` of its max-cost ${usdText(max)}` : ''}`];
  if (unknown) lines.push(`+ ${plural(unknown, 'agent')} of unknown cost (a model without a price)`);
  lines.push(`${total.tokens?.total ?? 0} tokens, CPU ${timeText(total.cpuMs ?? 0)}, memory of the live ones ${sizeText(total.memory?.pss || total.memory?.rss || 0)}`);
  lines.push(`${limits.liveAgents ?? 0} live agent(s)${typeof limits.maxAgents === 'number' ? ` of its max-agents ${limits.maxAgents}` : ''}`);
  if (doc.prices?.taken) lines.push(`prices taken ${doc.prices.taken}${doc.prices.source ? ` (${doc.prices.source})` : ''}`);
  el.title = lines.join('\n');
  el.hidden = false;
}
