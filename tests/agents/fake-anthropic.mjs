// A scripted fake of the Anthropic Messages API on 127.0.0.1, for Claude Code pointed at it by
// ANTHROPIC_BASE_URL. Each POST /v1/messages of the agent's own conversation (the requests that
// offer the `team` MCP server's tools or Claude Code's own) is answered by the test's `brain`:
// a function of the conversation received that returns the next step, a tool call or text,
// streamed as the real API streams it (SSE: message_start, content_block_start/delta/stop,
// message_delta, message_stop). Claude Code's side requests (a title, a quota probe, a topic: no
// tools offered) get a short text; count_tokens and anything else an answer without error.
// Every answer carries usage figures of its own (request n of the fake: usageOf(n)), and `usage`
// keeps what each answer said, so a test can compare what the agent recorded to the token.
import { createServer } from 'node:http';

// The text of a message content (a string, or blocks: text and the text inside tool_results).
export function contentText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) => {
      if (b.type === 'text') return b.text;
      if (b.type === 'tool_result') return contentText(b.content);
      return '';
    })
    .join('\n');
}

// What a brain reads: the conversation of one request, with the tool calls made so far and their
// results paired.
export class Conversation {
  constructor(body) {
    this.body = body;
    this.messages = body.messages ?? [];
    this.tools = (body.tools ?? []).map((t) => t.name);
    this.calls = [];  // {id, name, input, result (text) | undefined, isError}
    const byId = new Map();
    for (const m of this.messages) {
      if (!Array.isArray(m.content)) continue;
      for (const b of m.content) {
        if (m.role === 'assistant' && b.type === 'tool_use') {
          const call = { id: b.id, name: b.name, input: b.input, result: undefined, isError: false };
          this.calls.push(call);
          byId.set(b.id, call);
        } else if (m.role === 'user' && b.type === 'tool_result' && byId.has(b.tool_use_id)) {
          const call = byId.get(b.tool_use_id);
          call.result = contentText(b.content);
          call.isError = b.is_error === true;
        }
      }
    }
  }

  // The last message's text: what was typed, pushed, or returned since the model's last step.
  get last() {
    let i = this.messages.length;
    while (i > 0 && this.messages[i - 1].role !== 'assistant') i--;
    return this.messages.slice(i).map((m) => contentText(m.content)).join('\n');
  }

  // What was typed or pushed since the model's last step: the text blocks after the last
  // assistant message, without tool results and without Claude Code's own notes.
  get typed() {
    let i = this.messages.length;
    while (i > 0 && this.messages[i - 1].role !== 'assistant') i--;
    return this.messages.slice(i).map(typedText).join('\n');
  }

  // The index of the last message whose typed text matches `pattern` (-1: none).
  lastTyped(pattern) {
    for (let i = this.messages.length - 1; i >= 0; i--) if (pattern.test(typedText(this.messages[i]))) return i;
    return -1;
  }

  // The index of the last assistant message that called `tool` (-1: none).
  lastCalled(tool) {
    for (let i = this.messages.length - 1; i >= 0; i--) {
      const m = this.messages[i];
      if (m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_use' && b.name === tool)) return i;
    }
    return -1;
  }

  // Every user-side text of the conversation.
  get all() {
    return this.messages.filter((m) => m.role === 'user').map((m) => contentText(m.content)).join('\n');
  }

  called(name) {
    return this.calls.filter((c) => c.name === name);
  }

  lastCall() {
    return this.calls[this.calls.length - 1];
  }

  has(tool) {
    return this.tools.includes(tool);
  }
}

// The text a person typed or a server pushed in a message: its text blocks, without tool results,
// Claude Code's system reminders, its list of agent types and the MCP servers' instructions it
// adds once they have connected.
function typedText(m) {
  if (m.role === 'assistant') return '';
  const blocks = typeof m.content === 'string' ? [m.content]
    : Array.isArray(m.content) ? m.content.filter((b) => b.type === 'text').map((b) => b.text) : [];
  // (What was typed while the model was busy comes as a 'system' message: "The user sent a new
  // message while you were working: ...".)
  return blocks
    .filter((t) => !t.startsWith('# MCP Server Instructions') && !t.startsWith('Available agent types'))
    .join('\n')
    // A reminder is Claude Code's context, except the one that carries what was typed while the
    // model was busy (a queued message, delivered mid-turn).
    .replace(/<system-reminder>[\s\S]*?<\/system-reminder>/g, (r) => (/\[team\]|<channel/.test(r) ? r : ''));
}

// The sum of usage figures (usageOf's shape): {input, output, cacheRead, cacheWrite, calls}.
export function sumUsage(list) {
  const sum = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, calls: list.length };
  for (const u of list) for (const k of ['input', 'output', 'cacheRead', 'cacheWrite']) sum[k] += u[k];
  return sum;
}

let ids = 0;
const nextId = (prefix) => `${prefix}_${process.pid}_${++ids}`;

function sse(res, event, data) {
  res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
}

// The usage of the fake's n-th answer (from 1), different for every n, in Anthropic's units:
// input not counting the cache's reads and writes.
export function usageOf(n) {
  return { input: 1000 + 7 * n, output: 50 + 3 * n, cacheRead: 10 * n, cacheWrite: 5 * n };
}

// Anthropic's `usage` object of `u` (usageOf's), its output as `output_tokens` says it.
function wireUsage(u, output = u.output) {
  return {
    input_tokens: u.input, cache_creation_input_tokens: u.cacheWrite, cache_read_input_tokens: u.cacheRead,
    output_tokens: output,
  };
}

// Streams one assistant message: `step` is {text} or {tool: NAME, input: {...}, text?}; `u` its
// usage (usageOf's): message_start says the input and 1 output token, message_delta the output.
function stream(res, model, step, u, id) {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'request-id': nextId('req'),
  });
  sse(res, 'message_start', {
    message: {
      id, type: 'message', role: 'assistant', model, content: [],
      stop_reason: null, stop_sequence: null, usage: wireUsage(u, 1),
    },
  });
  let index = 0;
  if (step.text) {
    sse(res, 'content_block_start', { index, content_block: { type: 'text', text: '' } });
    sse(res, 'content_block_delta', { index, delta: { type: 'text_delta', text: step.text } });
    sse(res, 'content_block_stop', { index });
    index++;
  }
  if (step.tool) {
    sse(res, 'content_block_start', {
      index, content_block: { type: 'tool_use', id: nextId('toolu'), name: step.tool, input: {} },
    });
    sse(res, 'content_block_delta', {
      index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(step.input ?? {}) },
    });
    sse(res, 'content_block_stop', { index });
  }
  sse(res, 'message_delta', {
    delta: { stop_reason: step.tool ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: u.output },
  });
  sse(res, 'message_stop', {});
  res.end();
}

function reply(res, model, step, u, id) {
  const content = [];
  if (step.text) content.push({ type: 'text', text: step.text });
  if (step.tool) content.push({ type: 'tool_use', id: nextId('toolu'), name: step.tool, input: step.input ?? {} });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({
    id, type: 'message', role: 'assistant', model, content,
    stop_reason: step.tool ? 'tool_use' : 'end_turn', stop_sequence: null,
    usage: wireUsage(u),
  }));
}

export class FakeAnthropic {
  // brain(conversation) -> step | Promise<step>: the agent's next step.
  constructor(brain) {
    this.brain = brain;
    this.requests = [];  // {at, path, conversation} of the agent's own conversation
    this.other = [];     // paths of every other request
    // What each answer of /v1/messages said, in order: {id (message.id), model, side (a side
    // request: no tools offered), input, output, cacheRead, cacheWrite}. Claude Code's transcript
    // records the agent's own conversation (side false), not its side requests: mainUsage().
    this.usage = [];
    this.waiters = [];
    this.server = createServer((req, res) => this.handle(req, res));
  }

  async start() {
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = this.server.address().port;
    this.url = `http://127.0.0.1:${this.port}`;
    return this;
  }

  async stop() {
    this.server.closeAllConnections?.();
    await new Promise((resolve) => this.server.close(resolve));
  }

  // Resolves with the first request of the agent's conversation (now or later) for which
  // `predicate(conversation)` holds; rejects after `ms`.
  waitFor(predicate, ms, what = 'a request') {
    const found = this.requests.find((r) => predicate(r.conversation));
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = { predicate, resolve };
      waiter.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`the fake model did not receive ${what} within ${ms} ms ` +
                         `(${this.requests.length} requests: ${this.describe()})`));
      }, ms);
      this.waiters.push(waiter);
    });
  }

  // The usage of the answers to the agent's own conversation (what its transcript records),
  // summed: {input, output, cacheRead, cacheWrite, calls}.
  mainUsage() {
    return sumUsage(this.usage.filter((u) => !u.side));
  }

  // Answers `res` with `step`, streamed or not as `body` asked, its usage recorded.
  send(res, body, model, step, side) {
    const u = { id: nextId('msg'), model, side, ...usageOf(this.usage.length + 1) };
    this.usage.push(u);
    (body.stream ? stream : reply)(res, model, step, u, u.id);
  }

  // The tools called so far in the agent's conversation, in order: for failure messages.
  describe() {
    const last = this.requests[this.requests.length - 1];
    if (!last) return 'none';
    return last.conversation.calls.map((c) => c.name.replace('mcp__team__', '')).join(', ') || 'no call';
  }

  handle(req, res) {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const path = req.url.split('?')[0];
      let body = {};
      try {
        body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
      } catch {
        // not JSON: answered below like any other
      }
      try {
        await this.answer(req, res, path, body);
      } catch (e) {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'api_error', message: String(e) } }));
      }
    });
  }

  async answer(req, res, path, body) {
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ input_tokens: 100 }));
      return;
    }
    if (req.method === 'POST' && path === '/v1/messages') {
      const model = body.model ?? 'claude-sonnet-4-5';
      const tools = body.tools ?? [];
      if (tools.length === 0) {  // a side request: a title, a quota probe, a topic
        this.other.push(path);
        this.send(res, body, model, { text: 'Team work' }, true);
        return;
      }
      const conversation = new Conversation(body);
      const record = { at: performance.now(), path, conversation };
      this.requests.push(record);
      for (const w of [...this.waiters]) {
        if (w.predicate(conversation)) {
          clearTimeout(w.timer);
          this.waiters = this.waiters.filter((x) => x !== w);
          w.resolve(record);
        }
      }
      const step = (await this.brain(conversation)) ?? { text: 'Done.' };
      this.send(res, body, model, step, false);
      return;
    }
    this.other.push(path);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  }
}
