// npm run example: turn examples/catalog-repo/{base,head} into a real git repository with
// two commits (branch `main` = base, branch `pr` = head) and run `catalog-bot check` on it,
// as the GitHub App would on that pull request.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const repo = mkdtempSync(join(tmpdir(), 'catalog-bot-example-'));
const git = (...args) => {
  const r = spawnSync('git', ['-C', repo, '-c', 'user.name=Example', '-c', 'user.email=example@example.com', ...args], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
};

try {
  git('init', '-q', '-b', 'main');
  cpSync(join(here, 'catalog-repo', 'base'), repo, { recursive: true });
  git('add', '-A');
  git('commit', '-qm', 'Catalogs for OCP 4.20 and 4.21');
  git('checkout', '-q', '-b', 'pr');
  rmSync(join(repo, 'catalogs'), { recursive: true });
  cpSync(join(here, 'catalog-repo', 'head'), repo, { recursive: true });
  git('add', '-A');
  git('commit', '-qm', 'Add example-operator v1.2.0 and other-operator');
  const cli = join(here, '..', 'dist', 'cli.js');
  const args = ['check', '--repo', repo, '--base', 'main', '--head', 'pr', ...process.argv.slice(2)];
  process.stdout.write(`$ catalog-bot ${args.join(' ').replace(repo, '<example repo>')}\n`);
  const r = spawnSync(process.execPath, [cli, ...args], { stdio: 'inherit' });
  process.exitCode = r.status ?? 2;
} finally {
  rmSync(repo, { recursive: true, force: true });
}
