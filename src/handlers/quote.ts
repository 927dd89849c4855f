// Text from a pull request's files (bundle, channel and package names, deprecation messages)
// quoted in the bot's replies. Inside a code span or a fenced block GitHub renders no
// Markdown, HTML, links or @mentions, so a name cannot notify anyone, hide text or forge a
// link (docs/security.md). The fence is longer than any backtick run of the text, so the
// text cannot close it.

// Control characters and the bidirectional overrides that could make a reply read differently
// from what it says; newlines are kept in blocks.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

function longestRun(text: string, char: string): number {
  let longest = 0;
  let run = 0;
  for (const c of text) {
    run = c === char ? run + 1 : 0;
    if (run > longest) longest = run;
  }
  return longest;
}

/** `text` cut to `max` characters, saying so. */
export function bounded(text: string, max: number, more = '… (cut)'): string {
  return text.length <= max ? text : text.slice(0, Math.max(0, max - more.length - 1)) + '\n' + more;
}

/** A fenced code block holding `text` as it is (`info`: the language, like `mermaid`). */
export function codeBlock(text: string, info = 'text'): string {
  const clean = text.replace(UNSAFE, '\ufffd').replace(/\r\n?/g, '\n').trimEnd();
  const fence = '`'.repeat(Math.max(3, longestRun(clean, '`') + 1));
  return `${fence}${info}\n${clean}\n${fence}`;
}

/** A code span holding a short piece of text on one line (at most `max` characters). */
export function inlineCode(text: string, max = 200): string {
  let clean = text.replace(UNSAFE, '\ufffd').replace(/\s+/g, ' ');
  if (clean.length > max) clean = clean.slice(0, max - 1) + '…';
  const ticks = '`'.repeat(longestRun(clean, '`') + 1);
  const pad = clean.startsWith('`') || clean.endsWith('`') ? ' ' : '';
  return `${ticks}${pad}${clean}${pad}${ticks}`;
}
