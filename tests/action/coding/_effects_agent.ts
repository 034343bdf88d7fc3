// The agent the change-set approval tests run in this process and in a child process: a branch
// with the coding preset (its keep-data effects policy asks before deletions) and the bash tool
// of a toolkit over WORKSPACE, whose state is in STATE; a scripted model that calls bash once
// with the command it was given, then answers "done".

import process from "node:process";
import { IModel } from "../../../service/mod.ts";
import { FunctionEndpoint } from "../../../service/mod.ts";
import { codingSpec, CodingToolkit } from "../../../action/coding/mod.ts";
import type { Branch, Session } from "../../../session/mod.ts";

/** A model that calls bash with `command` (call id `callId`) once, then answers. */
export function bashModel(command: string, callId: string): IModel {
  return new IModel({
    model: "m",
    endpoint: new FunctionEndpoint({
      call: (request: unknown) => {
        const messages = (request as { messages?: { role: string }[] }).messages ?? [];
        return messages.at(-1)?.role === "tool"
          ? { choices: [{ message: { content: "done" } }] }
          : {
            choices: [{
              message: {
                content: "",
                tool_calls: [{
                  id: callId,
                  function: { name: "bash", arguments: JSON.stringify({ command }) },
                }],
              },
            }],
          };
      },
    }),
  });
}

/** The toolkit of these tests. */
export function effectsToolkit(
  ws: string,
  state: string,
  extra?: Record<string, unknown>,
): CodingToolkit {
  return new CodingToolkit({
    workspaceRoot: ws,
    tools: ["bash"],
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp/home" },
    sandbox: { maxProcesses: 64 },
    effectsDir: state,
    ...extra,
  });
}

/** A branch of `session` with the coding preset and the toolkit's bash bound to it. */
export function codingBranch(
  session: Session,
  ws: string,
  state: string,
  model?: IModel,
  extra?: Record<string, unknown>,
): Branch {
  const branch = session.newBranch({
    spec: codingSpec({ cwd: ws }),
    ...(model ? { model } : {}),
  });
  effectsToolkit(ws, state, extra).bind(branch);
  return branch;
}
