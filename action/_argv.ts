/**
 * Command-line parsing for the bash tool (refuses shell control operators and splits a command
 * into argv with POSIX-like quoting, so it can run without a shell). Pure string code, no runtime
 * APIs. (`guardDestructive` in `./coding` judges commands from a tree-sitter parse instead.)
 *
 * @module
 */

/** Shell control operators the bash tool refuses (anywhere in the command, even quoted). */
export const SHELL_CONTROL_OPERATORS: readonly string[] = [
  ";",
  "&&",
  "||",
  "|",
  "`",
  "$(",
  "<",
  ">",
  "\n",
  "\r",
];

/** The control operators found in `command`, in the order of {@linkcode SHELL_CONTROL_OPERATORS}. */
export function findControlOperators(command: string): string[] {
  const found: string[] = [];
  for (const op of SHELL_CONTROL_OPERATORS) {
    if (!command.includes(op)) continue;
    // "|" is reported once even when only "||" is present.
    if (op === "|" && found.includes("||") && !command.replaceAll("||", "").includes("|")) continue;
    found.push(op);
  }
  return found;
}

/** A parse failure (unterminated quote, dangling escape, empty command). */
export class MalformedCommandError extends SyntaxError {
  /** Makes the error. */
  constructor(message: string) {
    super(message);
    this.name = "MalformedCommandError";
  }
}

/**
 * Splits a command into words: whitespace separates; single quotes keep everything literally;
 * double quotes keep everything but `\"`, `\\`, `\$` and `` \` `` escapes; a backslash outside
 * quotes escapes the next character. No expansion of any kind happens.
 */
export function parseArgv(command: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let i = 0;
  while (i < command.length) {
    const c = command[i];
    if (c === " " || c === "\t") {
      if (inWord) {
        words.push(word);
        word = "";
        inWord = false;
      }
      i++;
      continue;
    }
    inWord = true;
    if (c === "'") {
      const end = command.indexOf("'", i + 1);
      if (end === -1) throw new MalformedCommandError("unterminated single quote");
      word += command.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i++;
      let closed = false;
      while (i < command.length) {
        const d = command[i];
        if (d === '"') {
          closed = true;
          i++;
          break;
        }
        if (d === "\\" && i + 1 < command.length && '"\\$`'.includes(command[i + 1])) {
          word += command[i + 1];
          i += 2;
          continue;
        }
        word += d;
        i++;
      }
      if (!closed) throw new MalformedCommandError("unterminated double quote");
    } else if (c === "\\") {
      if (i + 1 >= command.length) throw new MalformedCommandError("dangling backslash");
      word += command[i + 1];
      i += 2;
    } else {
      word += c;
      i++;
    }
  }
  if (inWord) words.push(word);
  if (words.length === 0) throw new MalformedCommandError("empty command");
  return words;
}
