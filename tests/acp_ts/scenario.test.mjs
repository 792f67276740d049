// One wave-ls ACP scenario driven by the TypeScript SDK's client (an implementation
// independent of the Python `acp` package the main suite uses): initialize, session/new
// with its modes and commands, a prompt that delegates to Explore and then edits a file
// after a permission prompt, session/set_mode; a cloned repository's trust question.
//
// WAVE_PYTHON: the Python that has wave-ls installed (default: python3).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";

const here = dirname(fileURLToPath(import.meta.url));
const python = process.env.WAVE_PYTHON || "python3";
const work = realpathSync(mkdtempSync(join(tmpdir(), "wave-acp-ts-")));
const home = join(work, "home");
const project = join(work, "project");
const updates = [];
const permissions = [];
let model;
let agentProcess;
let connection;
let agent; // the ClientContext: requests to the agent
let sessionId;

function startModel() {
  return new Promise((resolve, reject) => {
    model = spawn(python, ["-m", "wave_ls", "fake-model", "--script", join(here, "script.json")], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    model.on("error", reject);
    let seen = "";
    model.stdout.on("data", (chunk) => {
      seen += chunk;
      const found = /listening on (\S+)/.exec(seen);
      if (found) resolve(found[1]);
    });
    model.on("exit", (code) => reject(new Error(`fake model exited with ${code}`)));
  });
}

function waitFor(predicate, what, timeoutMs = 20000) {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const poll = () => {
      const value = predicate();
      if (value) return resolve(value);
      if (Date.now() - started > timeoutMs) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(poll, 20);
    };
    poll();
  });
}

function texts(update) {
  return (update.content ?? []).filter((c) => c.type === "content").map((c) => c.content.text);
}

before(async () => {
  mkdirSync(home);
  mkdirSync(join(project, "src"), { recursive: true });
  writeFileSync(join(project, "src", "app.py"), "def answer():\n    return 41\n");
  const baseUrl = await startModel();
  agentProcess = spawn(python, ["-m", "wave_ls", "acp"], {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, HOME: home, OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: "k", WAVE_MODEL: "fake-model" },
  });
  const stream = acp.ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout));
  const app = acp
    .client({ name: "wave-ts-scenario" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      permissions.push(params);
      // A tool call: allow once. The trust question has no "once": trust the folder.
      const pick =
        params.options.find((option) => option.kind === "allow_once") ??
        params.options.find((option) => option.kind === "allow_always");
      return { outcome: { outcome: "selected", optionId: pick.optionId } };
    });
  connection = app.connect(stream);
  agent = connection.agent;
});

after(async () => {
  connection?.close();
  agentProcess?.stdin.end();
  agentProcess?.kill();
  model?.kill();
  rmSync(work, { recursive: true, force: true });
});

test("initialize advertises session loading and embedded context", async () => {
  const init = await agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
  });
  assert.equal(init.protocolVersion, acp.PROTOCOL_VERSION);
  assert.equal(init.agentCapabilities.loadSession, true);
  assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true);
});

test("session/new starts in default with the four permission modes and offers the subagents", async () => {
  const session = await agent.request(acp.methods.agent.session.new, { cwd: project, mcpServers: [] });
  sessionId = session.sessionId;
  assert.equal(session.modes.currentModeId, "default");
  assert.deepEqual(
    session.modes.availableModes.map((mode) => mode.id),
    ["default", "acceptEdits", "bypassPermissions", "plan"],
  );
  const commands = await waitFor(
    () => updates.find((u) => u.sessionId === sessionId && u.update.sessionUpdate === "available_commands_update"),
    "available_commands_update",
  );
  const names = commands.update.availableCommands.map((command) => command.name);
  for (const name of ["Explore", "Plan", "general-purpose"]) assert.ok(names.includes(name), name);
});

test("a delegation is one live tool call; an edit asks first", async () => {
  const response = await agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: "text", text: "where are the tests? Then fix answer()." }],
  });
  assert.equal(response.stopReason, "end_turn");
  const mine = updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
  const calls = new Map();
  for (const u of mine) {
    if (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") {
      if (!calls.has(u.toolCallId)) calls.set(u.toolCallId, []);
      calls.get(u.toolCallId).push(u);
    }
  }
  assert.equal(calls.size, 2, "the Agent call and the Edit call; the subagent's Glob is not one");
  const [delegation, editCall] = [...calls.values()];
  assert.match(delegation[0].title, /Explore/);
  const live = delegation.slice(1).filter((u) => u.status === "in_progress" && texts(u).length);
  assert.ok(live.some((u) => texts(u)[0].includes("Glob")), "the subagent's Glob is shown live");
  const last = delegation.at(-1);
  assert.equal(last.status, "completed");
  assert.match(texts(last)[0], /^Done \(1 tool call/);
  assert.equal(texts(last)[1], "One module: src/app.py.");
  assert.equal(editCall[0].kind, "edit");
  assert.equal(editCall[0].content[0].type, "diff");
  assert.equal(editCall.at(-1).status, "completed");
  assert.equal(permissions.length, 1);
  assert.equal(permissions[0].toolCall.toolCallId, editCall[0].toolCallId);
  assert.deepEqual(permissions[0].options.map((o) => o.kind).sort(), ["allow_always", "allow_once", "reject_once"]);
  assert.match(readFileSync(join(project, "src", "app.py"), "utf8"), /return 42/);
  const text = mine.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text).join("");
  assert.ok(text.endsWith("Fixed: answer() returns 42."), text);
});

test("session/set_mode switches to plan", async () => {
  const response = await agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "plan" });
  assert.deepEqual(response, {});
});

test("a cloned repository with committed settings is asked about at the first prompt", async () => {
  const clone = join(work, "clone");
  mkdirSync(join(clone, ".wave"), { recursive: true });
  writeFileSync(join(clone, ".wave", "settings.json"), JSON.stringify({ sandbox: { enabled: true } }));
  const git = (...args) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t.invalid", ...args], { cwd: clone, stdio: "pipe" });
  git("init", "-q");
  git("add", "-A");
  git("commit", "-qm", "ship settings");
  const session = await agent.request(acp.methods.agent.session.new, { cwd: clone, mcpServers: [] });
  const asked = permissions.length;
  const response = await agent.request(acp.methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: "hello" }],
  });
  assert.equal(response.stopReason, "end_turn");
  assert.equal(permissions.length, asked + 1);
  const question = permissions.at(-1);
  assert.equal(question.toolCall.title, `Trust ${clone}?`);
  assert.deepEqual(
    question.options.map((o) => [o.kind, o.name]),
    [["allow_always", "Trust this folder"], ["reject_always", "Don't trust"]],
  );
  const shown = updates.find(
    (u) => u.update.sessionUpdate === "tool_call" && u.update.toolCallId === question.toolCall.toolCallId,
  );
  assert.equal(shown.update.kind, "other", "the question is a tool call the client was shown first");
  const kept = JSON.parse(readFileSync(join(home, ".wave", "trust.json"), "utf8")).folders;
  assert.equal(kept[clone].trusted, true);
});
