#!/usr/bin/env node
// A scripted ACP agent for the tests of acp/ (team's ACP client), on the official TypeScript
// SDK (2.x: acp.agent()…connect(acp.ndJsonStream(...))). Each line of a prompt's text is one
// step of a script:
//   say TEXT              stream TEXT as agent message chunks (three pieces)
//   think TEXT            a thought chunk
//   plan A|B|C            a plan, then the same plan with its first step completed
//   tool ID KIND TITLE    a tool call, then its update to completed with a text content
//   mode NAME / usage USED SIZE    current_mode_update / usage_update
//   permission KIND       ask permission for a tool call of KIND (options allow, allow-always,
//                         reject, reject-always); says "permission: <optionId|cancelled>" and
//                         ends the turn `cancelled` when it was cancelled
//   terminal LIMIT CMD ARGS…   terminal/create (LIMIT bytes, "-" for none), wait_for_exit,
//                         output, release; says the result as JSON
//   terminal-kill CMD ARGS…    create, kill, wait_for_exit, release; says the result as JSON
//   terminal-release CMD ARGS… create, release while it runs, then output; says what came back
//   read PATH [LINE LIMIT] / write PATH TEXT    fs/*; says the content, "written" or the error
//   call METHOD           a request the client does not serve; says the error code
//   echo-session          says the cwd and mcpServers that session/new got, as JSON
//   wait-cancel           waits for session/cancel, then ends the turn `cancelled`
//   ignore-cancel         never ends the turn, whatever comes
//   crash                 exits with 3 in the middle of the turn
//   garbage / huge        writes a line that is not JSON / a line of 17 MiB
//   unknown-update        an update of an unknown kind, and a chunk with unknown fields and _meta
//   sleep MS              waits
//   stop REASON           the turn's stop reason (end_turn when absent)
//   fail TEXT             session/prompt answers error -32603 with TEXT: the turn fails, the
//                         agent goes on
//   history               says "history: N earlier turns[: P1 | P2 …]", the prompts of the
//                         session's earlier turns (a loaded session's included), newlines as "; "
// Flags: --auth (session/new wants `authenticate` first), --version N (answers protocol version
// N), --ignore-eof (ignores the end of stdin and SIGTERM, and leaves a detached grandchild),
// --load-sessions DIR (offers loadSession: each session's history, its turns' prompts and what
// the agent said in them, is kept in DIR/<sessionId>.json, written whole before each turn's
// reply so that it outlives a SIGKILL; session/load replays it as user_message_chunk and
// agent_message_chunk updates before its reply, and the session goes on with it; an unknown id
// is answered -32002. Session ids are then unique across processes).
// ACP_TEST_STAMP_FILE=PATH (for bench/acp.cpp; nothing is written without it): appends a line
// "EVENT MS" per event, MS being CLOCK_MONOTONIC in milliseconds (process.hrtime.bigint() on
// Linux, comparable with clock_gettime(CLOCK_MONOTONIC) of another process). EVENT: prompt (a
// session/prompt received), permission-request (about to send session/request_permission),
// permission-answer (its reply received), cancel (a session/cancel received), terminal-request /
// terminal-created (terminal/create about to be sent / answered).
import * as acp from "@agentclientprotocol/sdk";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const needsAuth = flag("--auth");
let authenticated = false;
const version = flag("--version") ? Number(args[args.indexOf("--version") + 1]) : acp.PROTOCOL_VERSION;
const loadDir = flag("--load-sessions") ? args[args.indexOf("--load-sessions") + 1] : null;

if (flag("--ignore-eof")) {
  process.on("SIGTERM", () => {});
  setInterval(() => {}, 1 << 30);
  spawn("sleep", ["600"], { detached: true, stdio: "ignore" }).unref();
}

const stampFile = process.env.ACP_TEST_STAMP_FILE;
const stamp = stampFile
  ? (event) => appendFileSync(stampFile, `${event} ${(Number(process.hrtime.bigint()) / 1e6).toFixed(3)}\n`)
  : () => {};

// sessionId -> { cwd, mcpServers, cancelled: Promise, cancel(), history: [{ prompt, said }], said }
const sessions = new Map();
let nextSession = 1;

// A session's history under --load-sessions: replaced whole through a rename, never half written.
const historyFile = (sessionId) => join(loadDir, `${encodeURIComponent(sessionId)}.json`);
function keepHistory(sessionId, session) {
  if (!loadDir) return;
  const file = historyFile(sessionId);
  writeFileSync(`${file}.tmp`, JSON.stringify({ cwd: session.cwd, history: session.history }));
  renameSync(`${file}.tmp`, file);
}

function newCancel(session) {
  session.cancelled = new Promise((resolve) => (session.cancel = resolve));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function runStep(ctx, session, sessionId, line) {
  const client = ctx.client;
  const update = (u) => {
    if (u.sessionUpdate === "agent_message_chunk") session.said += u.content.text;
    return client.notify(acp.methods.client.session.update, { sessionId, update: u });
  };
  const say = (text) => update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text } });
  const [verb, ...rest] = line.trim().split(/\s+/);
  const restText = line.trim().slice(verb.length).trimStart();
  switch (verb) {
    case "say": {
      const third = Math.ceil(restText.length / 3);
      for (let i = 0; i < restText.length; i += third) await say(restText.slice(i, i + third));
      return;
    }
    case "think":
      return update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: restText } });
    case "plan": {
      const steps = restText.split("|");
      const entries = (done) =>
        steps.map((content, i) => ({ content, priority: "medium", status: i < done ? "completed" : "pending" }));
      await update({ sessionUpdate: "plan", entries: entries(0) });
      return update({ sessionUpdate: "plan", entries: entries(1) });
    }
    case "tool": {
      const [id, kind, ...title] = rest;
      await update({ sessionUpdate: "tool_call", toolCallId: id, title: title.join(" "), kind, status: "in_progress" });
      return update({
        sessionUpdate: "tool_call_update",
        toolCallId: id,
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: `${id} done` } }],
      });
    }
    case "mode":
      return update({ sessionUpdate: "current_mode_update", currentModeId: rest[0] });
    case "usage":
      return update({ sessionUpdate: "usage_update", used: Number(rest[0]), size: Number(rest[1]) });
    case "permission": {
      const kind = rest[0] ?? "edit";
      const toolCall = { toolCallId: `perm-${kind}`, title: `a ${kind} tool call`, kind, status: "pending" };
      await update({ sessionUpdate: "tool_call", ...toolCall });
      stamp("permission-request");
      const answer = await client.request(acp.methods.client.session.requestPermission, {
        sessionId,
        toolCall,
        options: [
          { optionId: "allow", name: "Allow", kind: "allow_once" },
          { optionId: "allow-always", name: "Always allow", kind: "allow_always" },
          { optionId: "reject", name: "Reject", kind: "reject_once" },
          { optionId: "reject-always", name: "Always reject", kind: "reject_always" },
        ],
      });
      stamp("permission-answer");
      const outcome = answer.outcome.outcome === "selected" ? answer.outcome.optionId : "cancelled";
      await say(`permission: ${outcome}`);
      if (outcome === "cancelled") return "cancelled";
      return;
    }
    case "terminal":
    case "terminal-kill":
    case "terminal-release": {
      const limited = verb === "terminal";
      const limit = limited ? rest[0] : "-";
      const [command, ...commandArgs] = limited ? rest.slice(1) : rest;
      const params = { sessionId, command, args: commandArgs, env: [{ name: "ACP_TEST", value: "1" }] };
      if (limit !== "-") params.outputByteLimit = Number(limit);
      stamp("terminal-request");
      const { terminalId } = await client.request(acp.methods.client.terminal.create, params);
      stamp("terminal-created");
      const ids = { sessionId, terminalId };
      if (verb === "terminal-release") {
        await client.request(acp.methods.client.terminal.release, ids);
        try {
          await client.request(acp.methods.client.terminal.output, ids);
          return say("released: output still served");
        } catch (e) {
          return say(`released: ${e.code}`);
        }
      }
      if (verb === "terminal-kill") await client.request(acp.methods.client.terminal.kill, ids);
      const exit = await client.request(acp.methods.client.terminal.waitForExit, ids);
      const output = await client.request(acp.methods.client.terminal.output, ids);
      await client.request(acp.methods.client.terminal.release, ids);
      return say(JSON.stringify({ exitCode: exit.exitCode ?? null, signal: exit.signal ?? null,
                                  output: output.output, truncated: output.truncated }));
    }
    case "read": {
      const params = { sessionId, path: rest[0] };
      if (rest[1]) params.line = Number(rest[1]);
      if (rest[2]) params.limit = Number(rest[2]);
      try {
        const { content } = await client.request(acp.methods.client.fs.readTextFile, params);
        return say(content);
      } catch (e) {
        return say(`error ${e.code}: ${e.message}`);
      }
    }
    case "write":
      try {
        await client.request(acp.methods.client.fs.writeTextFile, {
          sessionId, path: rest[0], content: restText.slice(rest[0].length).trimStart() });
        return say("written");
      } catch (e) {
        return say(`error ${e.code}: ${e.message}`);
      }
    case "call":
      try {
        await client.request(rest[0], { sessionId });
        return say("call answered");
      } catch (e) {
        return say(`error ${e.code}`);
      }
    case "echo-session":
      return say(JSON.stringify({ cwd: session.cwd, mcpServers: session.mcpServers }));
    case "wait-cancel":
      await session.cancelled;
      return "cancelled";
    case "ignore-cancel":
      return new Promise(() => {});
    case "crash":
      process.exit(3);
      break;
    case "garbage":
      process.stdout.write("this is not json\n");
      return;
    case "huge":
      process.stdout.write(`{"jsonrpc":"2.0","method":"session/update","params":"${"a".repeat(17 * 1024 * 1024)}"}\n`);
      return;
    case "unknown-update":
      process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: {
        sessionId, update: { sessionUpdate: "future_kind", something: [1, 2], _meta: { x: 1 } } } }) + "\n");
      process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: {
        sessionId, _meta: { trace: "t" }, update: { sessionUpdate: "agent_message_chunk", newField: true,
          content: { type: "text", text: "still read", _meta: {} } } } }) + "\n");
      process.stdout.write(JSON.stringify({ jsonrpc: "2.0", method: "x/unknown_notification", params: {} }) + "\n");
      return;
    case "history": {
      const prompts = session.history.map((t) => t.prompt.replaceAll("\n", "; "));
      return say(`history: ${prompts.length} earlier turns${prompts.length ? ": " : ""}${prompts.join(" | ")}`);
    }
    case "sleep":
      return sleep(Number(rest[0]));
    case "stop":
      return rest[0];
    case "fail":
      throw acp.RequestError.internalError(undefined, restText);
    case "":
    case undefined:
      return;
    default:
      return say(`unknown step ${verb}`);
  }
}

const app = acp
  .agent({ name: "team-acp-test-agent" })
  .onRequest(acp.methods.agent.initialize, () => ({
    protocolVersion: version,
    agentCapabilities: { loadSession: loadDir !== null },
    agentInfo: { name: "team-acp-test-agent", version: "1.0.0" },
    authMethods: needsAuth ? [{ id: "token", name: "A token", description: "for the tests" }] : [],
  }))
  .onRequest(acp.methods.agent.authenticate, ({ params }) => {
    if (params.methodId !== "token") throw acp.RequestError.invalidParams(undefined, "unknown method");
    authenticated = true;
    return {};
  })
  .onRequest(acp.methods.agent.session.new, ({ params }) => {
    if (needsAuth && !authenticated) throw acp.RequestError.authRequired();
    const sessionId = loadDir ? `session-${randomUUID()}` : `session-${nextSession++}`;
    const session = { cwd: params.cwd, mcpServers: params.mcpServers, history: [], said: "" };
    newCancel(session);
    sessions.set(sessionId, session);
    keepHistory(sessionId, session);
    return { sessionId };
  })
  .onRequest(acp.methods.agent.session.load, async (ctx) => {
    const { sessionId, cwd, mcpServers } = ctx.params;
    if (!loadDir || !existsSync(historyFile(sessionId))) throw acp.RequestError.sessionNotFound(sessionId);
    const { history } = JSON.parse(readFileSync(historyFile(sessionId), "utf8"));
    // The conversation replayed as the ACP spec has it: every turn's prompt and answer as
    // session/update notifications, all sent before the reply.
    const replay = (u) => ctx.client.notify(acp.methods.client.session.update, { sessionId, update: u });
    for (const turn of history) {
      await replay({ sessionUpdate: "user_message_chunk", content: { type: "text", text: turn.prompt } });
      if (turn.said) await replay({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: turn.said } });
    }
    const session = { cwd, mcpServers, history, said: "" };
    newCancel(session);
    sessions.set(sessionId, session);
    return {};
  })
  .onRequest(acp.methods.agent.session.prompt, async (ctx) => {
    stamp("prompt");
    const { sessionId, prompt } = ctx.params;
    const session = sessions.get(sessionId);
    if (!session) throw acp.RequestError.sessionNotFound(sessionId);
    newCancel(session);
    const text = prompt.filter((b) => b.type === "text").map((b) => b.text).join("\n");
    session.said = "";
    // The turn joins the history once it has run, whatever its end.
    const remember = () => {
      session.history.push({ prompt: text, said: session.said });
      keepHistory(sessionId, session);
    };
    let stopReason = "end_turn";
    try {
      for (const line of text.split("\n")) {
        const result = await runStep(ctx, session, sessionId, line);
        if (result === "cancelled") return { stopReason: "cancelled" };
        if (typeof result === "string") stopReason = result;
      }
    } finally {
      remember();
    }
    return { stopReason };
  })
  .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
    stamp("cancel");
    sessions.get(params.sessionId)?.cancel?.();
  });

const connection = app.connect(
  acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)),
);
if (!flag("--ignore-eof")) connection.closed.then(() => process.exit(0));
