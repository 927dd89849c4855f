// Comment commands (README "Comment commands and auto-merge"): one per line, anywhere in
// a comment, never inside a code block or a quote. Pure: text in, commands out; each
// command's arguments are read by its own entry of the table (./commands/index.ts).
import { commandTyped, commentHelpText, type Command } from './commands/index.js';

export type { Command, CommandName } from './commands/index.js';
export { commentHelpText };

/** A line that looks like a command but is not one we know or has the wrong arguments. */
export interface CommandProblem {
  line: number;
  text: string;
  reason: string;
}

export interface ParsedComment {
  commands: Command[];
  problems: CommandProblem[];
}

/** How much of a comment is read, and how many commands one comment may carry. */
export const MAX_COMMENT_CHARS = 65_536;
export const MAX_COMMANDS = 20;

// `/name` then arguments; a path such as `/etc/hosts` is not a command (the name ends at a space).
const COMMAND_LINE = /^\/([A-Za-z][A-Za-z-]*)(?:[ \t]+(.*))?$/;

export function parseComment(body: string): ParsedComment {
  const commands: Command[] = [];
  const problems: CommandProblem[] = [];
  const lines = body.slice(0, MAX_COMMENT_CHARS).split(/\r\n|\r|\n/);
  let fence: string | undefined;
  let inHtmlComment = false;
  let tooMany = false;
  lines.forEach((full, index) => {
    const line = index + 1;
    // HTML comments (`<!-- ... -->`, also over several lines) are not shown to readers, so
    // nothing in them is a command: only what is left of the line outside them is read.
    // An unclosed `<!--` hides the rest of the comment (the safe direction).
    let raw = full;
    if (fence === undefined) {
      const visible = stripHtmlComments(full, inHtmlComment);
      inHtmlComment = visible.open;
      if (visible.hid) {
        raw = visible.text;
        if (raw.trim() === '') return;
      }
    }
    // Fenced code blocks (``` or ~~~, up to three spaces of indent) hide their content.
    const fenceMatch = /^ {0,3}(`{3,}|~{3,})/.exec(raw);
    if (fenceMatch) {
      const marker = fenceMatch[1] as string;
      if (fence === undefined) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length && raw.trim() === marker)
        fence = undefined;
      return;
    }
    if (fence !== undefined) return;
    // Four spaces or a tab make an indented code block; `>` a quote.
    if (/^( {4}|\t)/.test(raw) || /^ {0,3}>/.test(raw)) return;
    const text = raw.trim();
    const m = COMMAND_LINE.exec(text);
    if (!m) return;
    if (commands.length + problems.length >= MAX_COMMANDS) {
      if (!tooMany)
        problems.push({
          line,
          text,
          reason: `too many commands: at most ${MAX_COMMANDS} per comment are read`,
        });
      tooMany = true;
      return;
    }
    const name = (m[1] as string).toLowerCase();
    const args = (m[2] ?? '').trim().split(/\s+/).filter(Boolean);
    const command = commandTyped(name);
    if (!command) {
      problems.push({ line, text, reason: `\`/${name.slice(0, 50)}\` is not a catalog-bot command` });
      return;
    }
    const parsed = command.parse(args, name, { line, text });
    if ('problem' in parsed) problems.push({ line, text, reason: parsed.problem });
    else commands.push(parsed);
  });
  return { commands, problems };
}

/**
 * A line without its HTML comments: `open` says whether the line starts inside one (and
 * whether it ends inside one), `hid` whether anything was taken out. `<!-->` and `<!--->`
 * are complete comments, as in CommonMark.
 */
function stripHtmlComments(line: string, open: boolean): { text: string; open: boolean; hid: boolean } {
  let text = '';
  let at = 0;
  let hid = open;
  while (at <= line.length) {
    if (open) {
      const end = line.indexOf('-->', at);
      if (end < 0) return { text, open: true, hid: true };
      at = end + 3;
      open = false;
      continue;
    }
    const start = line.indexOf('<!--', at);
    if (start < 0) {
      text += line.slice(at);
      break;
    }
    text += line.slice(at, start);
    hid = true;
    open = true;
    at = start + 2; // `<!-->` closes at once
  }
  return { text, open: false, hid };
}

/** Commands of `now` that `before` (the comment's previous body) did not have: an edit runs only those. */
export function addedCommands(before: string, now: string): ParsedComment {
  const seen = new Set(parseComment(before).commands.map((c) => c.text));
  const parsed = parseComment(now);
  return { commands: parsed.commands.filter((c) => !seen.has(c.text)), problems: parsed.problems };
}
