// A scripted fake of the model API of Codex (OpenAI's Responses API, POST /v1/responses) on
// 127.0.0.1. As fake-anthropic.mjs does for Claude Code, it answers the agent's requests with the
// step its `brain` decides from the conversation: here the brain gets {tools: [names], calls: [{name, args, result}], text} and
// returns {tool, input} or {text}.
import { createServer } from 'node:http';

class FakeBase {
  constructor(brain) {
    this.brain = brain;
    this.requests = [];
    this.other = [];
    this.waiters = [];
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

  // Records a conversation and wakes the waiters whose predicate it fulfils.
  seen(conversation) {
    this.requests.push({ at: performance.now(), conversation });
    for (const w of [...this.waiters]) {
      if (w.predicate(conversation)) {
        clearTimeout(w.timer);
        this.waiters = this.waiters.filter((x) => x !== w);
        w.resolve(this.requests.at(-1));
      }
    }
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

  unknown(req, res) {
    this.other.push(`${req.method} ${req.url}`);
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"not faked"}}');
  }
}

let ids = 0;
const nextId = (p) => `${p}_${++ids}`;

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
    const calls = [];
    const byId = new Map();
    const texts = [];
    for (const item of body.input ?? []) {
      if (item.type === 'function_call') {
        const call = { name: item.namespace ? `${item.namespace}__${item.name}` : item.name, args: safeJson(item.arguments), result: undefined };
        calls.push(call);
        byId.set(item.call_id, call);
      } else if (item.type === 'function_call_output' && byId.has(item.call_id)) {
        const out = item.output;
        byId.get(item.call_id).result = typeof out === 'string' ? out : JSON.stringify(out);
      } else if (item.type === 'message' && item.role === 'user') {
        for (const c of item.content ?? []) if (c.text) texts.push(c.text);
      }
    }
    const conversation = { tools, calls, text: texts.join('\n'), body };
    this.seen(conversation);
    const step = (await this.brain(conversation)) ?? { text: 'done' };
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const id = nextId('resp');
    const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    send('response.created', { response: { id } });
    let item;
    if (step.tool) {
      const [namespace, name] = step.tool.includes('__') ? [step.tool.slice(0, step.tool.lastIndexOf('__')), step.tool.slice(step.tool.lastIndexOf('__') + 2)] : [undefined, step.tool];
      item = { type: 'function_call', id: nextId('fc'), call_id: nextId('call'), name, arguments: JSON.stringify(step.input ?? {}) };
      if (namespace) item.namespace = namespace;
    } else {
      item = { type: 'message', role: 'assistant', id: nextId('msg'), content: [{ type: 'output_text', text: step.text, annotations: [] }] };
    }
    send('response.output_item.done', { output_index: 0, item });
    send('response.completed', {
      response: { id, usage: { input_tokens: 100, input_tokens_details: null, output_tokens: 20, output_tokens_details: null, total_tokens: 120 } },
    });
    res.end();
  }
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
