import { describe, it } from "node:test";
import assert from "node:assert/strict";
import fc from "fast-check";
import { z } from "zod";
import { Session, Tool, ToolDeniedError } from "../../mod.ts";

type Kind = "none" | "allow" | "ask" | "deny" | "throw";
interface Spec {
  kind: Kind;
  rewrite: boolean;
  priority: number;
  async: boolean;
  shadow: boolean;
}

const spec: fc.Arbitrary<Spec> = fc.record({
  kind: fc.constantFrom<Kind>("none", "allow", "ask", "deny", "throw"),
  rewrite: fc.boolean(),
  priority: fc.integer({ min: -2, max: 2 }),
  async: fc.boolean(),
  shadow: fc.boolean(),
});

const RANK: Record<string, number> = { none: 0, allow: 1, ask: 2, deny: 3 };

class Thrown extends Error {}

describe("the tool.pre decision fold (property)", () => {
  it("verdict = max(deny > ask > allow), rewrites compose in chain order, every hook judges the final args, a throw denies", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(spec, { maxLength: 8 }), async (specs) => {
        const session = new Session();
        const branch = session.newBranch();
        const received: unknown[] = [];
        branch.actions.register(
          new Tool({
            name: "t",
            inputSchema: z.object({ trail: z.array(z.number()) }),
            execute: (args: { trail: number[] }) => {
              received.push(args);
              return "ok";
            },
          }),
        );
        const seen: number[][] = [];
        specs.forEach((s, id) => {
          const handler = ({ args }: { args: Readonly<Record<string, unknown>> }) => {
            seen[id] = [...(args.trail as number[])];
            if (s.kind === "throw") throw new Thrown(`handler ${id}`);
            if (s.kind === "none") return undefined;
            // An idempotent rewrite: given its own output, it returns equal arguments.
            const trail = args.trail as number[];
            const updatedArgs = s.rewrite && s.kind !== "deny"
              ? { trail: trail.includes(id) ? [...trail] : [...trail, id] }
              : undefined;
            if (s.kind === "deny") return { decision: "deny" as const, reason: `deny ${id}` };
            return updatedArgs ? { decision: s.kind, updatedArgs } : { decision: s.kind };
          };
          session.hooks.on(
            "tool.pre",
            s.async ? async (p) => await Promise.resolve(handler(p)) : handler,
            { priority: s.priority, name: `h${id}`, ...(s.shadow ? { mode: "shadow" } : {}) },
          );
        });

        // The model: priority order (stable), stop at the first applied deny or throw.
        const order = specs.map((s, id) => ({ ...s, id }))
          .sort((a, b) => b.priority - a.priority);
        let verdict = 0;
        let trail: number[] = [];
        let stop: { kind: "deny" | "throw"; id: number } | null = null;
        const expectedSeen = new Map<number, number[]>();
        for (const h of order) {
          expectedSeen.set(h.id, [...trail]);
          if (h.shadow) continue;
          if (h.kind === "throw" || h.kind === "deny") {
            stop = { kind: h.kind, id: h.id };
            break;
          }
          verdict = Math.max(verdict, RANK[h.kind]);
          if (h.rewrite && h.kind !== "none") trail = [...trail, h.id];
        }
        // A pass that rewrote is followed by one on the final arguments, which every hook sees.
        if (stop === null && trail.length > 0) {
          for (const h of order) expectedSeen.set(h.id, [...trail]);
        }

        let asked = 0;
        const outcome = await branch.act({ function: "t", arguments: { trail: [] } }, {
          approve: () => (asked++, true),
        }).then((r) => ({ ok: r }), (e) => ({ error: e }));

        for (const [id, expected] of expectedSeen) assert.deepEqual(seen[id], expected);
        if (stop?.kind === "throw") {
          assert.ok("error" in outcome && outcome.error instanceof Thrown);
          assert.equal(outcome.error.message, `handler ${stop.id}`);
          assert.equal(received.length, 0);
        } else if (stop?.kind === "deny") {
          assert.ok("error" in outcome && outcome.error instanceof ToolDeniedError);
          assert.equal(outcome.error.reason, `deny ${stop.id}`);
          assert.equal(outcome.error.hook, `h${stop.id}`);
          assert.equal(received.length, 0);
          assert.equal(asked, 0);
        } else {
          assert.ok("ok" in outcome, String((outcome as { error?: unknown }).error));
          assert.deepEqual(received, [{ trail }]);
          assert.equal(asked, verdict === RANK.ask ? 1 : 0);
        }
      }),
      { numRuns: 150 },
    );
  });
});
