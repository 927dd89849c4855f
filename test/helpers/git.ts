// git in a test's temporary repository, as one fixed author (so commits need no git config on
// the machine); a command that fails throws with git's own message.
import { spawnSync } from 'node:child_process';

/** Runs git in `repo`; returns its stdout, trimmed. */
export function git(repo: string, ...args: string[]): string {
  const r = spawnSync('git', ['-C', repo, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** `git` bound to one repository. */
export const gitIn =
  (repo: string) =>
  (...args: string[]): string =>
    git(repo, ...args);

/** Commits the files in `repo` (a fresh directory) as main, then `edit`s them and commits that as branch pr. */
export function commitBaseAndPr(repo: string, edit: (repo: string) => void): string {
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'base');
  git(repo, 'checkout', '-q', '-b', 'pr');
  edit(repo);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-qm', 'head');
  return repo;
}
