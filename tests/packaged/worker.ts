// A module Worker for workerd, bundled by scripts/packaged/run.ts from the installed npm form:
// it loads the web-standard entries and judges commands with the shell guard (the WebAssembly
// parser embedded in the package, nothing read from node_modules or a file system). Nothing runs
// at module load.

import { Session } from "@hookscope/core";
import { HookBus } from "@hookscope/core/hooks";
import { IModel } from "@hookscope/core/service";
import { ActionManager } from "@hookscope/core/action";
import { judgeCommand } from "@hookscope/core/coding";

async function report(): Promise<Record<string, unknown>> {
  return {
    entries: {
      root: typeof Session,
      hooks: typeof HookBus,
      service: typeof IModel,
      action: typeof ActionManager,
    },
    ls: (await judgeCommand("ls -la")) ?? null,
    rm: (await judgeCommand("rm -rf /"))?.decision ?? null,
    nested: (await judgeCommand("timeout 5 sh -c 'find . -delete'"))?.decision ?? null,
  };
}

/** The module Worker. */
export default {
  async fetch(): Promise<Response> {
    try {
      return Response.json(await report());
    } catch (error) {
      return new Response(String((error as Error)?.stack ?? error), { status: 500 });
    }
  },
};
