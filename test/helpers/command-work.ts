// Work a check worker runs for the tests of comment commands (src/handlers/command-worker.ts):
// an answer far over a comment's size, and work that fails.

export async function hugeAnswer(input: { size: number }): Promise<{ ok: boolean; say: string }> {
  return { ok: true, say: 'x'.repeat(input.size) };
}

export async function failing(): Promise<never> {
  throw new Error('bad input from `the pull request`');
}
