// What GitHub renders of a Markdown text as Markdown: the tests that check hostile names
// reach a comment or a description only as code read it through this one function.
import { expect } from 'vitest';

/**
 * The text with fenced blocks (``` or ~~~, closed by a fence of the same kind at least as
 * long) and code spans (a run of backticks up to the next run of the same length) taken
 * out. Every fence must be closed: an open one would swallow the rest of the text.
 */
export function outsideCode(markdown: string): string {
  const kept: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split('\n')) {
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence === undefined && m) {
      fence = m[1];
      continue;
    }
    if (fence !== undefined) {
      if (m && m[1]![0] === fence[0] && m[1]!.length >= fence.length && line.trim() === m[1])
        fence = undefined;
      continue;
    }
    kept.push(line.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, ''));
  }
  expect(fence, 'every fence is closed').toBeUndefined();
  return kept.join('\n');
}
