/**
 * What `hookscope run`/`demo` store so that `hookscope resume` (another process) can rebuild the
 * same coding agent: the model server, the model, the workspace and the approval policy. Kept in
 * the session row's metadata; no secret is stored (the API key comes from the environment).
 *
 * @module
 */

import type { ToolPreDecision } from "../hooks/mod.ts";
import type { SessionStore } from "../store/session_store.ts";
import { modelServer } from "./_credentials.ts";

/** The agent setup a resumed run needs. */
export interface ResumeInfo {
  /** The OpenAI-compatible API root. */
  baseURL: string;
  /** The model name. */
  model: string;
  /** The folder the coding tools are confined to. */
  workspace: string;
  /** Tools whose calls need approval. */
  askBefore: string[];
  /** The coding toolkit's `effectsDir`, when the run named one (`--effects-dir`). */
  effectsDir?: string;
}

/** Stores the setup in the session row's metadata (`metadata.hookscope`). */
export async function saveResumeInfo(
  store: SessionStore,
  sessionId: string,
  config: {
    baseURL: string;
    model: string;
    workspace: string;
    askBefore?: readonly string[];
    effectsDir?: string;
  },
): Promise<void> {
  const row = await store.getSession(sessionId);
  const info: ResumeInfo = {
    // Never a credential: a user name and password in the URL are dropped.
    baseURL: modelServer(config.baseURL).url,
    model: config.model,
    workspace: config.workspace,
    askBefore: [...(config.askBefore ?? [])],
    ...(config.effectsDir !== undefined ? { effectsDir: config.effectsDir } : {}),
  };
  await store.updateSession(sessionId, {
    metadata: { ...(row?.metadata ?? {}), hookscope: info },
  });
}

/** The stored setup, or `null` when the session was not started by `hookscope run`/`demo`. */
export function readResumeInfo(metadata: unknown): ResumeInfo | null {
  const info = (metadata as { hookscope?: Record<string, unknown> } | null | undefined)?.hookscope;
  if (info === null || typeof info !== "object") return null;
  const { baseURL, model, workspace, askBefore, effectsDir } = info;
  if (typeof baseURL !== "string" || typeof model !== "string" || typeof workspace !== "string") {
    return null;
  }
  return {
    baseURL,
    model,
    workspace,
    askBefore: Array.isArray(askBefore)
      ? askBefore.filter((name): name is string => typeof name === "string")
      : [],
    ...(typeof effectsDir === "string" && effectsDir !== "" ? { effectsDir } : {}),
  };
}

/** A `tool.pre` hook that asks for approval before any call of the named tools. */
export function askBeforeHook(
  tools: readonly string[],
): (payload: { toolName: string }) => ToolPreDecision {
  const names = new Set(tools);
  return ({ toolName }) =>
    names.has(toolName)
      ? { decision: "ask", reason: `${toolName} calls need a person's approval` }
      : undefined;
}
