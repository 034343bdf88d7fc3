// Child process of effects_userns_test.ts, started as a non-root user (uid 65534 through setpriv
// when the test runs as root): staged runs through an unprivileged user namespace (unshare
// --user --map-root-user, overlayfs with userxattr). Usage: _effects_userns_child.ts BASE
// [fallback]. With "fallback" the PATH it detects with has no `unshare`, so staged runs are off
// and must say so. Prints one JSON line.

import { mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { AgentSpec } from "../../../action/mod.ts";
import { codingSpec, CodingToolkit, detectSandbox } from "../../../action/coding/mod.ts";
import { ApprovalRequiredError } from "../../../core/mod.ts";
import { MemoryStore } from "../../../store/mod.ts";
import { Session } from "../../../session/mod.ts";
import { treeHash } from "./_helpers.ts";

const [base, mode] = process.argv.slice(2);
const ws = join(base, mode === "fallback" ? "ws-fallback" : "ws");
const state = join(base, mode === "fallback" ? "state-fallback" : "state");
mkdirSync(join(ws, "victim", "sub"), { recursive: true });
writeFileSync(join(ws, "victim", "sub", "file"), "precious\n");
writeFileSync(join(ws, "keep.txt"), "keep\n");
writeFileSync(join(ws, "gone.txt"), "gone\n");
const env = { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: join(base, "home") };
const out: Record<string, unknown> = { uid: process.getuid?.() };

if (mode === "fallback") {
  // Only bwrap on the PATH detection uses: no unshare, so no staged runs.
  const bin = join(base, "bin");
  mkdirSync(bin, { recursive: true });
  symlinkSync("/usr/bin/bwrap", join(bin, "bwrap"));
  process.env.PATH = bin;
}

out.info = await detectSandbox();
const initial = treeHash(ws, false);

if (mode === "fallback") {
  const store = new MemoryStore();
  const session = new Session({ store });
  await session.start();
  const branch = session.newBranch({ spec: codingSpec({ cwd: ws }) });
  const toolkit = new CodingToolkit({ workspaceRoot: ws, tools: ["bash"], env, effectsDir: state });
  out.status = await toolkit.sandboxStatus();
  toolkit.bind(branch);
  out.description = branch.actions.get("bash")?.description;
  const echo = await branch.act({ function: "bash", arguments: { command: "echo hi" } });
  out.echo = echo.output;
  // The judge blocks what effects cannot cover here.
  out.removal = await branch.act({ function: "bash", arguments: { command: "rm -rf victim" } })
    .then((r) => r.output, (error: Error) => ({ rejected: error.name, message: error.message }));
  await session.drainSignals();
  await branch.drainSignals();
  out.signals = JSON.stringify(await store.listSessionSignals(session.id));
  out.unchanged = treeHash(ws, false) === initial;
} else {
  const spec = new AgentSpec().effects(
    "bash",
    ({ changes }) =>
      changes.some((c) => c.path.startsWith("victim"))
        ? { decision: "deny", reason: "victim stays" }
        : { decision: "allow" },
  );
  const toolkit = new CodingToolkit({
    workspaceRoot: ws,
    tools: ["bash"],
    env,
    effectsDir: state,
    spec,
  });
  out.status = await toolkit.sandboxStatus();
  const [bash] = toolkit.tools();
  const run = async (command: string, callId: string) =>
    (await bash.execute({ command }, { signal: new AbortController().signal, callId })) as Record<
      string,
      unknown
    >;
  const made = await run(
    "echo new > new.txt && mkdir -p d/e && echo x > d/e/f && chmod 600 keep.txt && ln -s keep.txt link && rm gone.txt",
    "u1",
  );
  out.made = made;
  const after = treeHash(ws, false);
  out.owner = statSync(join(ws, "d", "e", "f")).uid;
  const denied = await run("rm -r victim && echo y > other.txt", "u2");
  out.denied = denied;
  out.deniedUnchanged = treeHash(ws, false) === after;
  await toolkit.undo("u1");
  out.undone = treeHash(ws, false) === initial;
  // An ask without an approver through a session: the kept layer (whiteouts made in the user
  // namespace) waits outside the workspace; acting again with an approval commits it.
  const session = new Session();
  const branch = session.newBranch({ spec: codingSpec({ cwd: ws }) });
  new CodingToolkit({ workspaceRoot: ws, tools: ["bash"], env, effectsDir: state }).bind(branch);
  const removal = { function: "bash", arguments: { command: "rm -r victim" } };
  out.asked = await branch.act(removal, { callId: "u3" }).then(
    () => "ran",
    (error: unknown) =>
      error instanceof ApprovalRequiredError ? error.approval.effects?.count : String(error),
  );
  out.askedUnchanged = treeHash(ws, false) === initial;
  const approved = await branch.act(removal, { callId: "u3", approve: () => true });
  out.approved = approved.output;
  try {
    statSync(join(ws, "victim"));
    out.victimGone = false;
  } catch {
    out.victimGone = true;
  }
}
console.log(JSON.stringify(out));
