// Scripted fakes of the model APIs of Codex (OpenAI's Responses API, POST /v1/responses) and
// Gemini CLI (the Gemini API, POST /v1beta/models/M:streamGenerateContent) on 127.0.0.1. As
// fake-anthropic.mjs does for Claude Code, each answers the agent's requests with the step its
// `brain` decides: the request is read into the same Conversation as Claude Code's (its messages
// in the Messages API's shape: text, tool_use and tool_result blocks), so the same brains
// (teammate.mjs) drive every agent; a brain returns {tool, input} or {text}. Every answer carries
// usage figures of its own (fake-anthropic.mjs's usageOf(n) for the fake's n-th answer), and
// `usage` keeps what each said in the units team records: input not counting cached tokens,
// output counting reasoning (thoughts).
import { createServer } from 'node:http';
import { Conversation, sumUsage, usageOf } from './fake-anthropic.mjs';

class FakeBase {
  constructor(brain) {
    this.brain = brain;
    this.requests = [];
    this.other = [];
    this.waiters = [];
    // What each answer said, in order: {model, side (not the agent's own conversation: a check,
    // a title), input, output, cacheRead, cacheWrite, wire (the usage object as sent)}.
    this.usage = [];
    this.server = createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', async () => {
        let body = {};
        try {
          body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
        } catch {
          // answered as anything else
        }
        try {
          await this.answer(req, res, req.url, body);
        } catch (e) {
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: String(e) } }));
        }
      });
    });
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

  // Records a conversation, wakes the waiters whose predicate it fulfils, and returns the
  // brain's step.
  async decide(conversation) {
    this.requests.push({ at: performance.now(), conversation });
    for (const w of [...this.waiters]) {
      if (w.predicate(conversation)) {
        clearTimeout(w.timer);
        this.waiters = this.waiters.filter((x) => x !== w);
        w.resolve(this.requests.at(-1));
      }
    }
    return (await this.brain(conversation)) ?? { text: 'done' };
  }

  waitFor(predicate, ms, what = 'a request') {
    const found = this.requests.find((r) => predicate(r.conversation));
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = { predicate, resolve };
      waiter.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        const last = this.requests.at(-1)?.conversation;
        reject(new Error(`the fake model did not receive ${what} within ${ms} ms (${this.requests.length} ` +
          `requests; calls: ${last ? last.calls.map((c) => c.name).join(', ') : 'none'}; other: ${this.other.join(' ')})`));
      }, ms);
      this.waiters.push(waiter);
    });
  }

  // The next answer's usage figures, recorded as `side` or not.
  nextUsage(model, side) {
    const u = { model, side, ...usageOf(this.usage.length + 1), cacheWrite: 0 };
    this.usage.push(u);
    return u;
  }

  // The usage of the answers to the agent's own conversation, summed: {input, output,
  // cacheRead, cacheWrite, calls}.
  mainUsage() {
    return sumUsage(this.usage.filter((u) => !u.side));
  }

  unknown(req, res) {
    this.other.push(`${req.method} ${req.url}`);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"not faked"}}');
  }
}

let ids = 0;
const nextId = (p) => `${p}_${++ids}`;

// Messages in the Messages API's shape, built one block at a time: a block of the other role
// starts a new message.
class Messages {
  constructor() {
    this.list = [];
  }

  add(role, block) {
    const last = this.list.at(-1);
    if (last?.role === role) last.content.push(block);
    else this.list.push({ role, content: [block] });
  }
}

// Codex: POST /v1/responses, streamed. A team tool is a function call in the namespace
// `mcp__team` (its name the tool's own); its output comes back as a function_call_output item.
export class FakeOpenAI extends FakeBase {
  async answer(req, res, url, body) {
    if (req.method !== 'POST' || !url.startsWith('/v1/responses')) return this.unknown(req, res);
    const tools = [];
    for (const t of body.tools ?? []) {
      if (t.type === 'namespace' || t.tools) for (const inner of t.tools ?? []) tools.push(`${t.name}__${inner.name}`);
      else tools.push(t.name ?? t.type);
    }
    const messages = new Messages();
    for (const item of body.input ?? []) {
      if (item.type === 'function_call') {
        messages.add('assistant', {
          type: 'tool_use', id: item.call_id, name: item.namespace ? `${item.namespace}__${item.name}` : item.name,
          input: safeJson(item.arguments),
        });
      } else if (item.type === 'function_call_output') {
        const out = item.output;
        messages.add('user', { type: 'tool_result', tool_use_id: item.call_id, content: typeof out === 'string' ? out : JSON.stringify(out) });
      } else if (item.type === 'message' && (item.role === 'user' || item.role === 'assistant')) {
        for (const c of item.content ?? []) if (c.text) messages.add(item.role, { type: 'text', text: c.text });
      }
    }
    const step = await this.decide(new Conversation({ messages: messages.list, tools: tools.map((name) => ({ name })), raw: body }));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const id = nextId('resp');
    const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send('response.created', { response: { id } });
    let item;
    if (step.tool) {
      const cut = step.tool.lastIndexOf('__');
      const [namespace, name] = cut > 0 ? [step.tool.slice(0, cut), step.tool.slice(cut + 2)] : [undefined, step.tool];
      item = { type: 'function_call', id: nextId('fc'), call_id: nextId('call'), name, arguments: JSON.stringify(step.input ?? {}) };
      if (namespace) item.namespace = namespace;
    } else {
      item = { type: 'message', role: 'assistant', id: nextId('msg'), content: [{ type: 'output_text', text: step.text, annotations: [] }] };
    }
    send('response.output_item.done', { output_index: 0, item });
    // Input counts the cached tokens, output the reasoning (none here).
    const u = this.nextUsage(body.model ?? '', false);
    u.wire = {
      input_tokens: u.input + u.cacheRead, input_tokens_details: { cached_tokens: u.cacheRead },
      output_tokens: u.output, output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: u.input + u.cacheRead + u.output,
    };
    send('response.completed', { response: { id, usage: u.wire } });
    res.end();
  }
}

// Gemini CLI: POST /v1beta/models/MODEL:streamGenerateContent?alt=sse. A team tool is a function
// named `mcp_team_<tool>`; its result comes back as a functionResponse part. The side requests
// (generateContent: the next-speaker check and the like, countTokens) get short answers.
export class FakeGemini extends FakeBase {
  async answer(req, res, url, body) {
    const path = url.split('?')[0];
    const model = decodeURIComponent(path.split('/').pop().split(':')[0]);
    // The prompt counts the cached tokens; thoughts are output beside the candidates.
    const usageMetadata = (side) => {
      const u = this.nextUsage(model, side);
      const thoughts = this.usage.length;
      u.wire = {
        promptTokenCount: u.input + u.cacheRead, cachedContentTokenCount: u.cacheRead,
        candidatesTokenCount: u.output - thoughts, thoughtsTokenCount: thoughts,
        totalTokenCount: u.input + u.cacheRead + u.output,
      };
      return u.wire;
    };
    if (req.method === 'POST' && path.endsWith(':countTokens')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ totalTokens: 100 }));
    }
    if (req.method === 'POST' && path.endsWith(':generateContent')) {
      this.other.push(`POST ${path}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      const text = JSON.stringify({ reasoning: 'the turn is over', next_speaker: 'user' });
      return res.end(JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }], usageMetadata: usageMetadata(true) }));
    }
    if (req.method !== 'POST' || !path.endsWith(':streamGenerateContent')) return this.unknown(req, res);
    const tools = [];
    for (const t of body.tools ?? []) for (const f of t.functionDeclarations ?? []) tools.push({ name: f.name });
    const messages = new Messages();
    const open = new Map();  // a function's name -> the ids of its calls not answered yet
    for (const content of body.contents ?? []) {
      const role = content.role === 'model' ? 'assistant' : 'user';
      for (const part of content.parts ?? []) {
        if (part.functionCall) {
          const id = part.functionCall.id ?? nextId('call');
          open.set(part.functionCall.name, [...(open.get(part.functionCall.name) ?? []), id]);
          messages.add(role, { type: 'tool_use', id, name: part.functionCall.name, input: part.functionCall.args ?? {} });
        } else if (part.functionResponse) {
          const r = part.functionResponse;
          const waiting = open.get(r.name) ?? [];
          const id = r.id && waiting.includes(r.id) ? r.id : waiting[0];
          open.set(r.name, waiting.filter((x) => x !== id));
          const response = r.response ?? {};
          messages.add(role, {
            type: 'tool_result', tool_use_id: id, is_error: response.error !== undefined,
            content: responseText(response),
          });
        } else if (typeof part.text === 'string' && !part.thought) {
          messages.add(role, { type: 'text', text: part.text });
        }
      }
    }
    const step = await this.decide(new Conversation({ messages: messages.list, tools, raw: body }));
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const parts = [];
    if (step.text) parts.push({ text: step.text });
    if (step.tool) parts.push({ functionCall: { name: step.tool, args: step.input ?? {} } });
    const chunk = {
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
      usageMetadata: usageMetadata(false), modelVersion: 'gemini-2.5-flash',
    };
    res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
    res.end();
  }
}

// The text of a functionResponse's `response`: an MCP tool's result is its text in `output`.
function responseText(response) {
  if (typeof response.output === 'string') return response.output;
  if (typeof response.error === 'string') return response.error;
  return JSON.stringify(response);
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
