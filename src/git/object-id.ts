// What names a git object for good: its full id (sha1, or sha256 in a sha256 repository).
// Anything else (a ref, an abbreviation) may name another object tomorrow, and may look
// like an option to git.

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** Is `rev` a full object id, which always names the same object? */
export const isObjectId = (rev: string): boolean => OBJECT_ID.test(rev);
