// The scripted model of a teammate: what a model that follows team's instructions does, decided
// step by step from the conversation Claude Code sends (fake-anthropic.mjs's Conversation).
// In order: wait for the team's MCP server when its tools are not offered yet (Claude Code sends
// a prompt typed at start before its MCP servers have connected); answer a shutdown request
// (approve, then confirm) as soon as its id is anywhere in the conversation; read the inbox when
// something new was typed or pushed that names no request; otherwise the scenario's `work`, a list
// of tool calls made in order; then end the turn with `done` as its text. Every agent's model
// gets the same brain: `T` names a team tool as that agent offers it (Claude Code and Codex
// `mcp__team__TOOL`, Gemini CLI `mcp_team_TOOL`).

export const claudeTools = (tool) => `mcp__team__${tool}`;
export const geminiTools = (tool) => `mcp_team_${tool}`;

// The ids of shutdown requests seen: in inbox_read's results (`"requestId":"3"`) and in pushes
// through the channel (`request_id="3"`).
export function requestIds(text) {
  const ids = new Set();
  for (const m of text.matchAll(/"type":\s*"shutdown_request"[^{}]*?"requestId":\s*"?(\d+)/g)) ids.add(m[1]);
  for (const m of text.matchAll(/"requestId":\s*"?(\d+)"?[^{}]*?\}[^{}]*?"type":\s*"shutdown_request"/g)) ids.add(m[1]);
  for (const m of text.matchAll(/<channel[^>]*request_id="(\d+)"[^>]*>/g)) ids.add(m[1]);
  return ids;
}

function answered(c, T, action) {
  return new Set(c.called(T('shutdown_respond'))
    .filter((x) => x.input?.action === action && !x.isError)
    .map((x) => String(x.input.requestId ?? '')));
}

// `work`: [{tool, input, own}] (a short name is a team tool, unless `own`: the agent's own tool
// by its own name); `onStep(conversation, step)` sees every step decided (the tests learn from
// it what the agent is doing); `delay(conversation, step)` returns how long the model "thinks"
// before answering (ms).
export function teammate({ work = [], done = 'done', onStep = () => {}, delay = () => 0, T = claudeTools } = {}) {
  const decide = (c) => {
    if (!c.has(T('inbox_read'))) {
      if (c.has('WaitForMcpServers')) return { tool: 'WaitForMcpServers', input: { servers: ['team'] } };
      return { text: 'The team tools are not available.' };
    }
    const seen = requestIds(c.all);
    const approved = answered(c, T, 'approve');
    const confirmed = answered(c, T, 'confirm');
    for (const id of seen) {
      if (!approved.has(id)) return { tool: T('shutdown_respond'), input: { action: 'approve', requestId: id } };
    }
    for (const id of approved) {
      if (!confirmed.has(id)) return { tool: T('shutdown_respond'), input: { action: 'confirm', requestId: id } };
    }
    // A notice typed or a message pushed since the inbox was last read (perhaps before a wait for
    // the server: the notice is then a few messages back).
    if (c.lastTyped(/\[team\]|<channel|inbox|shutdown/i) > c.lastCalled(T('inbox_read'))) {
      return { tool: T('inbox_read'), input: { unread: true } };
    }
    let pos = 0;
    for (const step of work) {
      const name = step.own || step.tool.includes('__') || /^[A-Z]/.test(step.tool) ? step.tool : T(step.tool);
      const at = c.calls.findIndex((call, i) => i >= pos && call.name === name);
      if (at < 0) return { ...step, tool: name };
      pos = at + 1;
    }
    return { text: done };
  };
  return async (c) => {
    const step = decide(c);
    if (process.env.TEAM_AGENTS_DEBUG === '2') console.error(`[body] ${JSON.stringify(c.messages.slice(-2)).slice(0, 3000)}`);
    if (process.env.TEAM_AGENTS_DEBUG) {
      console.error(`[model] typed ${JSON.stringify(c.typed.slice(0, 400))} -> ${step.tool ?? 'text'} ${JSON.stringify(step.input ?? step.text)}`);
    }
    onStep(c, step);
    const ms = delay(c, step);
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    return step;
  };
}
