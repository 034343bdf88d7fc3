/**
 * Shell parsing for the command guard: the `tree-sitter-bash` grammar (run by `web-tree-sitter`;
 * both WebAssembly files are embedded in the module graph) turns a command line into a syntax tree,
 * and this module reduces the tree to what a judge needs: every simple command at any depth
 * (lists, pipelines, subshells, command and process substitutions, bodies of `if`, `for`,
 * `while`, `case` and functions, assignment values) with its words' literal values, and every
 * redirection. The parser is loaded on first use, never at module load.
 *
 * @module
 */

import { decodeEmbeddedWasm } from "./_wasm_bytes.ts";

/** One word of a command after quote removal, with what the shell could still change in it. */
export interface ShellWord {
  /** The literal value; a part computed at run time (`$x`, `$(…)`) is `\u0000`. */
  readonly value: string;
  /** Some part is computed at run time (an expansion or a substitution). */
  readonly dynamic: boolean;
  /** An unquoted expansion: word splitting may turn it into several words, flags included. */
  readonly splittable: boolean;
  /** Unquoted glob or brace characters: the shell may turn it into other or several words. */
  readonly pattern: boolean;
}

/** A redirection: its operator (`>`, `>>`, `&>`, `>|`, `<`, `<<<`, …) and target word. */
export interface ShellRedirect {
  /** The operator as written. */
  readonly op: string;
  /** The target (a file, a descriptor number), or `null` for a here-document. */
  readonly target: ShellWord | null;
  /** The redirected statement runs no program or a no-op (`> f`, `: > f`): a truncation. */
  readonly truncates: boolean;
}

/** A simple command: its words (program first, assignments excluded) and source text. */
export interface ShellCommand {
  /** The words: program name and arguments. */
  readonly words: readonly ShellWord[];
  /** The command's source text, for reasons. */
  readonly text: string;
  /** Assignments before the program (`GIT_PAGER=… git log`), each as one `NAME=value` word. */
  readonly assignments?: readonly ShellWord[];
  /**
   * Its standard input is given by the line (a pipe, `<`, a here-document or here-string);
   * otherwise it reads the caller's input, which for a tool call is empty.
   */
  readonly input?: boolean;
}

/** A parsed command line. */
export interface ParsedShell {
  /** Every simple command at any depth, in source order. */
  readonly commands: readonly ShellCommand[];
  /** Every redirection at any depth. */
  readonly redirects: readonly ShellRedirect[];
  /** Names of functions whose body calls the function itself (`:(){ :|:& };:`). */
  readonly recursiveFunctions: readonly string[];
  /**
   * Bodies of here-documents with an unquoted delimiter: the shell expands `$(…)` and backticks
   * in them, so each is judged again as the inside of a double-quoted string.
   */
  readonly expandedBodies: readonly string[];
  /**
   * What the bash tool may run from this parse: the argv of a command line that is one simple
   * command whose words are all literal, or the shell constructs that stop it.
   */
  readonly runnable: RunnableCommand;
}

/**
 * The command line as the bash tool runs it (no shell): `argv` from the parsed words, or the
 * shell constructs (`a pipeline (|)`, `a redirection (>)`, …) that only a shell could run.
 */
export type RunnableCommand =
  | { readonly argv: readonly string[] }
  | { readonly refused: readonly string[] };

/** A command line the parser could not read completely: the guard denies it. */
export class ShellParseError extends Error {
  /** Makes the error. */
  constructor(message: string) {
    super(message);
    this.name = "ShellParseError";
  }
}

/** The subset of a `web-tree-sitter` node this module reads. */
interface SyntaxNode {
  readonly type: string;
  readonly text: string;
  readonly isNamed: boolean;
  readonly isMissing: boolean;
  readonly hasError: boolean;
  readonly startIndex: number;
  readonly children: (SyntaxNode | null)[];
  readonly namedChildren: (SyntaxNode | null)[];
  childForFieldName(name: string): SyntaxNode | null;
  childrenForFieldName(name: string): (SyntaxNode | null)[];
}

interface SyntaxTree {
  readonly rootNode: SyntaxNode;
  delete(): void;
}

interface SyntaxParser {
  parse(source: string): SyntaxTree | null;
}

/** A loaded parser: synchronous once loaded. */
export type ShellParser = (source: string) => ParsedShell;

/** The longest command line parsed, in characters (longer ones are refused). */
export const MAX_SHELL_SOURCE = 100_000;

let loading: Promise<ShellParser> | null = null;

/**
 * Loads the bash grammar once (later calls share it). Both WebAssembly files (the tree-sitter
 * runtime and the bash grammar) are embedded in the module graph (`_wasm_*.ts`), so nothing is
 * read from `node_modules` or the file system: the parser loads the same way from a checkout, JSR
 * over https, JSR's npm form or a bundle. Rejects with a specific error when the runtime cannot
 * decode or run WebAssembly; the guard then fails closed.
 */
export function loadShellParser(): Promise<ShellParser> {
  loading ??= (async () => {
    const [{ Parser, Language }, runtime, grammar] = await Promise.all([
      import("web-tree-sitter"),
      import("./_wasm_tree_sitter.ts"),
      import("./_wasm_bash_grammar.ts"),
    ]);
    const [runtimeBytes, grammarBytes] = await Promise.all([
      decodeEmbeddedWasm(runtime),
      decodeEmbeddedWasm(grammar),
    ]);
    // The embedded runtime's Emscripten glue is the imported package's: the versions must match.
    await Parser.init({ wasmBinary: runtimeBytes.buffer as ArrayBuffer });
    const language = await Language.load(grammarBytes);
    const parser = new Parser();
    parser.setLanguage(language);
    return (source: string) => parseWith(parser as unknown as SyntaxParser, source);
  })().catch((error) => {
    loading = null;
    throw error;
  });
  return loading;
}

function parseWith(parser: SyntaxParser, source: string): ParsedShell {
  if (source.length > MAX_SHELL_SOURCE) {
    throw new ShellParseError(`command longer than ${MAX_SHELL_SOURCE} characters`);
  }
  if (source.includes("\0")) throw new ShellParseError("command contains a NUL byte");
  const tree = parser.parse(source);
  if (!tree) throw new ShellParseError("the parser gave no result");
  try {
    const root = tree.rootNode;
    if (root.hasError) throw new ShellParseError(`syntax error near ${describeError(root)}`);
    const out: Collected = { commands: [], redirects: [], recursive: [], bodies: [] };
    visit(root, out);
    return {
      commands: out.commands,
      redirects: out.redirects,
      recursiveFunctions: out.recursive,
      expandedBodies: out.bodies,
      runnable: runnableOf(root),
    };
  } finally {
    tree.delete();
  }
}

function describeError(root: SyntaxNode): string {
  const stack = [root];
  while (stack.length) {
    const node = stack.pop() as SyntaxNode;
    if (node.type === "ERROR" || node.isMissing) {
      const text = node.text.length > 40 ? `${node.text.slice(0, 40)}…` : node.text;
      return node.isMissing ? `a missing ${JSON.stringify(node.type)}` : JSON.stringify(text);
    }
    for (const child of node.children) if (child) stack.push(child);
  }
  return "the end";
}

/** Node types that run nothing and hold no commands. */
const TEXT_NODES = new Set(["comment", "heredoc_body", "heredoc_start", "heredoc_end"]);

/** Programs that read nothing and do nothing: a redirection after them only truncates. */
const NO_OP_PROGRAMS = new Set([":", "true", "false"]);

interface Collected {
  commands: ShellCommand[];
  redirects: ShellRedirect[];
  recursive: string[];
  bodies: string[];
}

function visit(
  node: SyntaxNode,
  out: Collected,
  extra: readonly ShellWord[] = [],
  input = false,
): void {
  if (node.type === "heredoc_redirect") {
    const start = node.children.find((child) => child?.type === "heredoc_start")?.text ?? "";
    const body = node.children.find((child) => child?.type === "heredoc_body");
    if (body && !/['"\\]/.test(start) && /[`$]/.test(body.text)) out.bodies.push(body.text);
  }
  if (TEXT_NODES.has(node.type)) return;
  if (node.type === "command") {
    const name = node.childForFieldName("name");
    const words: ShellWord[] = [];
    if (name) words.push(wordOf(name.namedChildren[0] ?? name));
    for (const argument of node.childrenForFieldName("argument")) {
      if (argument) words.push(wordOf(argument));
    }
    words.push(...extra);
    const assignments: ShellWord[] = [];
    for (const child of node.namedChildren) {
      if (child?.type !== "variable_assignment") continue;
      const name = child.childForFieldName("name")?.text ?? "";
      const valueNode = child.childForFieldName("value");
      const value = valueNode ? wordOf(valueNode) : null;
      assignments.push({
        value: `${name}=${value?.value ?? ""}`,
        dynamic: value?.dynamic ?? false,
        splittable: false,
        pattern: false,
      });
    }
    if (words.length) {
      out.commands.push({
        words,
        text: node.text,
        ...(assignments.length ? { assignments } : {}),
        ...(input || givesInput(node) ? { input: true } : {}),
      });
    }
  }
  let body: SyntaxNode | null = null;
  let trailing: ShellWord[] = [];
  let bodyInput = false;
  if (node.type === "redirected_statement") {
    body = node.childForFieldName("body");
    // The grammar reads `rm >/dev/null -rf x` as a redirection with three destinations; bash
    // gives the words after the first to the command as arguments.
    trailing = trailingWords(node);
    if (trailing.length && body?.type !== "command") {
      out.commands.push({ words: trailing, text: node.text });
      trailing = [];
    }
    // Input given to the statement (`cat > f <<EOF`, `< in`) is content, not a truncation.
    const hasInput = givesInput(node);
    bodyInput = input || hasInput;
    const truncates = !bodyInput && (!body || isNoOp(body));
    for (const child of node.children) {
      if (child && /_redirect$/.test(child.type)) out.redirects.push(redirectOf(child, truncates));
    }
  } else if (node.type === "command") {
    for (const child of node.children) {
      if (child && /_redirect$/.test(child.type)) out.redirects.push(redirectOf(child, false));
    }
  }
  if (node.type === "function_definition") {
    const name = node.childForFieldName("name")?.text ?? "";
    const body = node.childForFieldName("body");
    if (name && body && callsName(body, name)) out.recursive.push(name);
  }
  // Who reads the line's input: later parts of a pipeline, a redirected body, and everything in
  // a group or subshell that reads it.
  const named = node.namedChildren;
  named.forEach((child, index) => {
    if (!child) return;
    const isBody = body !== null && sameNode(child, body);
    const childInput = node.type === "pipeline"
      ? index > 0 || input
      : isBody
      ? bodyInput
      : PASS_INPUT.has(node.type) && input;
    visit(child, out, isBody ? trailing : [], childInput);
  });
}

/** The node carries an input redirection (`< in`, a here-document or here-string). */
function givesInput(node: SyntaxNode): boolean {
  return node.children.some((child) =>
    child !== null &&
    (child.type === "heredoc_redirect" || child.type === "herestring_redirect" ||
      (child.type === "file_redirect" && child.children.some((c) => c?.text === "<")))
  );
}

/** Nodes whose commands read the input given to the node itself. */
const PASS_INPUT = new Set(["subshell", "compound_statement", "negated_command", "list"]);

/** Node objects are made per access: compare position and type. */
function sameNode(a: SyntaxNode, b: SyntaxNode): boolean {
  return a.startIndex === b.startIndex && a.type === b.type && a.text === b.text;
}

/** Words the grammar put after a redirection's target: arguments of the redirected command. */
function trailingWords(node: SyntaxNode): ShellWord[] {
  const words: ShellWord[] = [];
  for (const child of node.children) {
    if (!child || child.type !== "file_redirect") continue;
    const targets = child.childrenForFieldName("destination");
    for (const target of targets.slice(1)) if (target) words.push(wordOf(target));
  }
  return words;
}

/** Shell constructs by node type, as the bash tool names them when it refuses a command. */
const CONSTRUCTS: Record<string, string> = {
  pipeline: "a pipeline (|)",
  list: "a command list (&& or ||)",
  redirected_statement: "a redirection (<, >, >>, here-document)",
  file_redirect: "a redirection (<, >, >>, here-document)",
  heredoc_redirect: "a redirection (<, >, >>, here-document)",
  herestring_redirect: "a redirection (<, >, >>, here-document)",
  subshell: "a subshell ( … )",
  compound_statement: "a group { … }",
  if_statement: "an if statement",
  for_statement: "a for loop",
  c_style_for_statement: "a for loop",
  while_statement: "a while loop",
  case_statement: "a case statement",
  function_definition: "a function definition",
  negated_command: "a negation (!)",
  declaration_command: "a declaration (export, declare, local, readonly)",
  unset_command: "unset",
  test_command: "a test ([ … ] or [[ … ]])",
  variable_assignment: "a variable assignment (NAME=value)",
  simple_expansion: "a parameter expansion ($NAME)",
  expansion: "a parameter expansion (${…})",
  command_substitution: "a command substitution ($(…) or `…`)",
  process_substitution: "a process substitution (<(…) or >(…))",
  arithmetic_expansion: "an arithmetic expansion ($((…)))",
  brace_expression: "a brace expansion ({a..b})",
};

/**
 * The argv of a command line that is exactly one simple command of literal words (comments
 * dropped, as bash drops them), or every construct in it that only a shell could run.
 */
function runnableOf(root: SyntaxNode): RunnableCommand {
  const found = new Set<string>();
  const statements = root.namedChildren.filter((child) => child && child.type !== "comment");
  if (statements.length === 0) return { refused: ["no command"] };
  if (statements.length > 1) found.add("more than one command (;, & or a newline)");
  for (const child of root.children) {
    if (child && !child.isNamed && child.text === "&") found.add("a background job (&)");
  }
  collectConstructs(root, found);
  const command = statements[0] as SyntaxNode;
  if (command.type !== "command") {
    if (found.size === 0) found.add(`a ${command.type.replaceAll("_", " ")}`);
    return { refused: [...found] };
  }
  const argv: string[] = [];
  const name = command.childForFieldName("name");
  const nodes = [name, ...command.childrenForFieldName("argument")].filter((node) => node !== null);
  for (const node of nodes) {
    const wordNode = node === name ? node.namedChildren[0] ?? node : node;
    const word = wordOf(wordNode);
    const first = wordNode.type === "concatenation" ? wordNode.children[0] : wordNode;
    // bash expands an unquoted ~ at the start of a word and after = or : in a word that looks
    // like an assignment (`x=~/a`).
    const unquoted = wordNode.type === "concatenation"
      ? wordNode.children.filter((c) => c?.type === "word").map((c) => c?.text ?? "")
      : wordNode.type === "word"
      ? [wordNode.text]
      : [];
    if (
      (first && first.type === "word" && first.text.startsWith("~")) ||
      unquoted.some((text) => /[=:]~/.test(text))
    ) {
      found.add(`a tilde expansion (${wordNode.text})`);
    }
    const inside = new Set<string>();
    collectConstructs(wordNode, inside);
    if (word.dynamic && inside.size === 0) {
      found.add(`a word computed at run time (${wordNode.text})`);
    } else if (word.pattern && !word.dynamic) {
      found.add(`a glob or brace pattern (${wordNode.text})`);
    }
    argv.push(word.value);
  }
  for (const child of command.namedChildren) {
    if (child && !nodes.some((node) => sameNode(node, child))) {
      found.add(CONSTRUCTS[child.type] ?? `shell syntax (${child.type.replaceAll("_", " ")})`);
    }
  }
  // No program is named `-…`; a runner that passes argv on (`exec "$@"`) would read it as options.
  if (argv.length && argv[0].startsWith("-")) {
    found.add(`a program name starting with - (${argv[0]})`);
  }
  if (found.size || argv.length === 0) {
    if (found.size === 0) found.add("no program");
    return { refused: [...found] };
  }
  return { argv };
}

function collectConstructs(node: SyntaxNode, found: Set<string>): void {
  const name = CONSTRUCTS[node.type];
  if (name) found.add(name);
  if (node.type === "list" || node.type === "program") {
    for (const child of node.children) {
      if (child && !child.isNamed && (child.text === ";" || child.text === "&")) {
        found.add(
          child.text === "&" ? "a background job (&)" : "more than one command (;, & or a newline)",
        );
      }
    }
  }
  if (node.type === "comment") return;
  for (const child of node.namedChildren) if (child) collectConstructs(child, found);
}

function isNoOp(body: SyntaxNode): boolean {
  if (body.type !== "command") return false;
  const name = body.childForFieldName("name");
  const args = body.childrenForFieldName("argument");
  if (!name) return true;
  const program = wordOf(name.namedChildren[0] ?? name).value;
  if (NO_OP_PROGRAMS.has(program)) return true;
  const values = args.map((arg) => (arg ? wordOf(arg).value : ""));
  // `cat` with no file reads the (empty) input; `echo` alone writes one newline.
  if (program === "cat" && values.every((value) => value === "/dev/null" || value === "-")) {
    return true;
  }
  if (program === "echo" && values.every((value) => value === "-n" || value === "-e")) return true;
  if (program === "printf" && values.length === 1 && values[0] === "") return true;
  return false;
}

function callsName(node: SyntaxNode, name: string): boolean {
  if (node.type === "command") {
    const called = node.childForFieldName("name");
    if (called && wordOf(called.namedChildren[0] ?? called).value === name) return true;
  }
  return node.namedChildren.some((child) => child !== null && callsName(child, name));
}

function redirectOf(node: SyntaxNode, truncates: boolean): ShellRedirect {
  const op = node.children.find((child) => child && !child.isNamed)?.text ?? "";
  const destination = node.childForFieldName("destination") ??
    node.namedChildren.find((child) =>
      child !== null && child.type !== "file_descriptor" && child.type !== "heredoc_start"
    ) ?? null;
  const target = node.type === "heredoc_redirect" || !destination ? null : wordOf(destination);
  return { op, target, truncates: truncates && /^(>|>\||&>|>&)$/.test(op) };
}

const DYNAMIC = "\u0000";
const GLOB_CHARS = /[*?[]|\{.*(,|\.\.).*\}/;

/** Unquoted text the shell would expand as a glob or a brace pattern (`\*` stays literal). */
function isPattern(text: string): boolean {
  return GLOB_CHARS.test(text.replace(/\\./gs, "_"));
}

/** The value of a word node after quote removal. */
export function wordOf(node: SyntaxNode): ShellWord {
  switch (node.type) {
    case "word":
    case "number": {
      const value = unescapeUnquoted(node.text);
      return { value, dynamic: false, splittable: false, pattern: isPattern(node.text) };
    }
    case "raw_string":
      return { value: node.text.slice(1, -1), dynamic: false, splittable: false, pattern: false };
    case "ansi_c_string":
      return {
        value: decodeAnsiC(node.text.slice(2, -1)),
        dynamic: false,
        splittable: false,
        pattern: false,
      };
    case "string":
    case "translated_string": {
      let value = "";
      let dynamic = false;
      for (const child of node.namedChildren) {
        if (!child) continue;
        if (child.type === "string_content") value += unescapeDoubleQuoted(child.text);
        else if (child.type === "string") {
          const inner = wordOf(child);
          value += inner.value;
          dynamic ||= inner.dynamic;
        } else {
          value += DYNAMIC;
          dynamic = true;
        }
      }
      // Text between named children (for example a lone `$`) is literal.
      if (node.namedChildren.length === 0) {
        const start = node.text.indexOf('"');
        value = unescapeDoubleQuoted(node.text.slice(start + 1, -1));
      }
      return { value, dynamic, splittable: false, pattern: false };
    }
    case "concatenation": {
      let value = "";
      let dynamic = false;
      let splittable = false;
      let pattern = isPattern(
        node.children.filter((c) => c && (c.type === "word" || !c.isNamed)).map((c) => c?.text)
          .join(""),
      );
      for (const child of node.children) {
        if (!child) continue;
        if (!child.isNamed) {
          value += child.text;
          continue;
        }
        const part = wordOf(child);
        value += part.value;
        dynamic ||= part.dynamic;
        splittable ||= part.splittable;
        pattern ||= part.pattern;
      }
      return { value, dynamic, splittable, pattern };
    }
    default:
      // $x, ${x}, $(…), `…`, <(…), $((…)), brace expressions: computed at run time.
      return { value: DYNAMIC, dynamic: true, splittable: true, pattern: true };
  }
}

function unescapeUnquoted(text: string): string {
  return text.replace(/\\(\n|.)/gs, (_m, c: string) => (c === "\n" ? "" : c));
}

function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === "\n" ? "" : c));
}

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  e: "\x1b",
  E: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "?": "?",
};

function decodeAnsiC(text: string): string {
  return text.replace(
    /\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|U[0-9a-fA-F]{1,8}|[0-7]{1,3}|c.|.)/gs,
    (_m, code: string) => {
      const head = code[0];
      if (head === "x" || head === "u" || head === "U") {
        return String.fromCodePoint(Number.parseInt(code.slice(1), 16) % 0x110000);
      }
      if (/[0-7]/.test(head)) return String.fromCharCode(Number.parseInt(code, 8) & 0xff);
      if (head === "c") return String.fromCharCode(code.charCodeAt(1) & 0x1f);
      return SIMPLE_ESCAPES[code] ?? `\\${code}`;
    },
  );
}

/**
 * What the bash tool runs for `source`: the argv from the same parse the command guard judges
 * (a single simple command of literal words, comments dropped), or the constructs that stop it.
 * Throws {@linkcode ShellParseError} for a line the parser cannot read, and the loader's error
 * when the grammar cannot load.
 */
export async function parseRunnable(source: string): Promise<RunnableCommand> {
  const parse = await loadShellParser();
  return parse(source).runnable;
}
