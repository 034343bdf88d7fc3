// Counts a test run from the JUnit XML reports of its runners (deno test --junit-path, bun test
// --reporter=junit, node --test-reporter=junit), so scripts/test.sh never scrapes human output.
//
//   node --import tsx scripts/junit_counts.ts [--skipped] [--slowest N] REPORT.xml...
//
// Prints one line "PASSED FAILED SKIPPED" (numbers), then "failed: FILE: NAME" per failed test,
// with --skipped "skipped: FILE: NAME (REASON)" per skipped test, and with --slowest N the N files
// that took longest ("slow: SECONDS FILE"). A report that is missing or has no test in it counts
// as one failure (the runner died before it wrote one). Counted are leaf tests: `it`s, not the
// `describe`s around them; a describe that failed with no failed test in it (a failing hook)
// counts as one failure.

import { existsSync, readFileSync } from "node:fs";
import process from "node:process";

interface Element {
  name: string;
  attrs: Record<string, string>;
  children: Element[];
}

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

function unescape(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, code: string) => {
    if (code[0] === "#") {
      const n = code[1] === "x" || code[1] === "X"
        ? parseInt(code.slice(2), 16)
        : parseInt(code.slice(1), 10);
      return Number.isFinite(n) ? String.fromCodePoint(n) : whole;
    }
    return ENTITIES[code.toLowerCase()] ?? whole;
  });
}

/** A small XML reader: elements and attributes only (text, comments and CDATA are skipped). */
function parseXml(xml: string): Element {
  const root: Element = { name: "#root", attrs: {}, children: [] };
  const stack: Element[] = [root];
  let i = 0;
  while (i < xml.length) {
    const lt = xml.indexOf("<", i);
    if (lt < 0) break;
    if (xml.startsWith("<!--", lt)) {
      const end = xml.indexOf("-->", lt + 4);
      i = end < 0 ? xml.length : end + 3;
      continue;
    }
    if (xml.startsWith("<![CDATA[", lt)) {
      const end = xml.indexOf("]]>", lt + 9);
      i = end < 0 ? xml.length : end + 3;
      continue;
    }
    if (xml.startsWith("<?", lt) || xml.startsWith("<!", lt)) {
      const end = xml.indexOf(">", lt);
      i = end < 0 ? xml.length : end + 1;
      continue;
    }
    if (xml[lt + 1] === "/") {
      const end = xml.indexOf(">", lt);
      const name = xml.slice(lt + 2, end < 0 ? xml.length : end).trim();
      // Close up to the matching element (tolerates a report cut short).
      for (let k = stack.length - 1; k > 0; k--) {
        if (stack[k].name === name) {
          stack.length = k;
          break;
        }
      }
      i = end < 0 ? xml.length : end + 1;
      continue;
    }
    let j = lt + 1;
    while (j < xml.length && !/[\s/>]/.test(xml[j])) j++;
    const element: Element = { name: xml.slice(lt + 1, j), attrs: {}, children: [] };
    let selfClosing = false;
    while (j < xml.length) {
      while (j < xml.length && /\s/.test(xml[j])) j++;
      if (xml[j] === ">") {
        j++;
        break;
      }
      if (xml.startsWith("/>", j)) {
        selfClosing = true;
        j += 2;
        break;
      }
      const eq = xml.indexOf("=", j);
      if (eq < 0) {
        j = xml.length;
        break;
      }
      const key = xml.slice(j, eq).trim();
      const quote = xml[eq + 1];
      const close = xml.indexOf(quote, eq + 2);
      if (close < 0) {
        j = xml.length;
        break;
      }
      element.attrs[key] = unescape(xml.slice(eq + 2, close));
      j = close + 1;
    }
    stack[stack.length - 1].children.push(element);
    if (!selfClosing) stack.push(element);
    i = j;
  }
  return root;
}

interface Case {
  key: string;
  file: string;
  status: "passed" | "failed" | "skipped";
  reason: string;
}

function statusOf(element: Element): { status: Case["status"]; reason: string } {
  for (const child of element.children) {
    if (child.name === "failure" || child.name === "error") {
      return { status: "failed", reason: child.attrs.message ?? "" };
    }
  }
  for (const child of element.children) {
    if (child.name === "skipped") return { status: "skipped", reason: child.attrs.message ?? "" };
  }
  return { status: "passed", reason: "" };
}

/** The first `file` attribute at or under `element` (Node 24 and Bun write one per test case). */
function firstFile(element: Element): string | undefined {
  if (element.attrs.file !== undefined) return element.attrs.file;
  for (const child of element.children) {
    const file = firstFile(child);
    if (file !== undefined) return file;
  }
  return undefined;
}

/**
 * The test cases of one report, named "describe > ... > it" whatever the runner, and the seconds
 * each file took (Deno: its top-level tests; Bun: the file's suite; Node: its top-level suites
 * and tests, by file where the report names one).
 */
function casesOf(report: Element, fileSeconds: Map<string, number>): Case[] {
  const top = report.children.find((e) => e.name === "testsuites") ?? report;
  const runner = top.attrs.name ?? "";
  const cases: Case[] = [];
  const walk = (element: Element, path: string[], file: string, depth: number): void => {
    for (const child of element.children) {
      if (child.name === "testsuite") {
        // Deno and Bun: the first level of suites are files; Node: suites are describes.
        const isFile = (runner === "deno test" || runner === "bun test") && depth === 0;
        const childFile = isFile ? child.attrs.file ?? child.attrs.name ?? file : file;
        if (depth === 0 && runner !== "deno test") {
          const key = runner === "bun test"
            ? childFile
            : firstFile(child) ?? child.attrs.name ?? "";
          fileSeconds.set(key, (fileSeconds.get(key) ?? 0) + (Number(child.attrs.time) || 0));
        }
        walk(child, isFile ? path : [...path, child.attrs.name ?? ""], childFile, depth + 1);
      } else if (child.name === "testcase") {
        const { status, reason } = statusOf(child);
        const name = child.attrs.name ?? "";
        const caseFile = child.attrs.file ?? file;
        cases.push({ key: [...path, name].join(" > "), file: caseFile, status, reason });
        if (
          depth <= 1 && path.length === 0 && !caseFile.startsWith("ext:") && runner !== "bun test"
        ) {
          fileSeconds.set(
            caseFile,
            (fileSeconds.get(caseFile) ?? 0) + (Number(child.attrs.time) || 0),
          );
        }
      }
    }
  };
  walk(top, [], "", 0);
  // Deno lists the steps of every file under one "ext:deno_node/testing.ts" suite: give each step
  // the file of its top-level test.
  const fileOfTop = new Map<string, string>();
  for (const c of cases) if (!c.file.startsWith("ext:")) fileOfTop.set(c.key, c.file);
  for (const c of cases) {
    if (c.file.startsWith("ext:")) c.file = fileOfTop.get(c.key.split(" > ")[0]) ?? "";
  }
  return cases;
}

function main(args: string[]): number {
  let listSkipped = false;
  let slowest = 0;
  const reports: string[] = [];
  for (let k = 0; k < args.length; k++) {
    if (args[k] === "--skipped") listSkipped = true;
    else if (args[k] === "--slowest") slowest = Number(args[++k]) || 0;
    else reports.push(args[k]);
  }
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const lines: string[] = [];
  const fileSeconds = new Map<string, number>();
  for (const path of reports) {
    const cases = existsSync(path)
      ? casesOf(parseXml(readFileSync(path, "utf8")), fileSeconds)
      : [];
    if (cases.length === 0) {
      failed++;
      lines.push(`failed: ${path}: no test results (the runner wrote no report, or an empty one)`);
      continue;
    }
    const keys = new Set(cases.map((c) => c.key));
    const prefixes = new Set<string>();
    for (const key of keys) {
      const parts = key.split(" > ");
      for (let n = 1; n < parts.length; n++) prefixes.add(parts.slice(0, n).join(" > "));
    }
    const failedKeys = cases.filter((c) => c.status === "failed").map((c) => c.key);
    for (const c of cases) {
      const file = c.file.replace(/^\.\//, "").replace(`${process.cwd()}/`, "");
      const where = file ? `${file}: ` : "";
      if (prefixes.has(c.key)) {
        // A describe: its tests are counted; it counts itself only when it failed on its own.
        const inner = failedKeys.some((k) => k.startsWith(`${c.key} > `));
        if (c.status === "failed" && !inner) {
          failed++;
          lines.push(`failed: ${where}${c.key} (${c.reason.split("\n")[0]})`);
        }
        continue;
      }
      if (c.status === "passed") passed++;
      else if (c.status === "failed") {
        failed++;
        lines.push(`failed: ${where}${c.key}`);
      } else {
        skipped++;
        if (listSkipped) lines.push(`skipped: ${where}${c.key}${c.reason ? ` (${c.reason})` : ""}`);
      }
    }
  }
  console.log(`${passed} ${failed} ${skipped}`);
  for (const line of lines) console.log(line);
  if (slowest > 0) {
    const sorted = [...fileSeconds].sort((a, b) => b[1] - a[1]).slice(0, slowest);
    for (const [file, s] of sorted) {
      console.log(`slow: ${s.toFixed(1)} ${file.replace(/^\.\//, "")}`);
    }
  }
  return 0;
}

process.exitCode = main(process.argv.slice(2));
