// The small catalog repository the App's comment and merge tests share: package `foo` in
// catalogs/v4.21/foo owned by bob (operators/foo/OWNERS), alice a maintainer, commits made
// in a work tree and pushed to a bare origin the App clones.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export const FOO_ROOT = 'catalogs/v4.21/foo';
export const FOO_OWNERS = 'operators/foo/OWNERS';

export interface FooConfig {
  maintainers?: string[];
  /** The merge method of auto-merge; none: auto-merge off. */
  automerge?: 'merge' | 'squash' | 'rebase';
  /** With auto-merge: the bot's own batch merge on, taking at most this many (docs/merge-queue.md). */
  batch?: number;
  /** OWNERS files name a package's owners (else only `packageOwners`). Default true. */
  ownersFiles?: boolean;
  /** More YAML appended as it is. */
  extra?: string;
}

/** .github/catalog-bot.yml for the foo repository. */
export function fooConfig(options: FooConfig = {}): string {
  const { maintainers = ['alice'], automerge, batch, ownersFiles = true, extra = '' } = options;
  const batchLine = batch ? `  batch: {enabled: true, max: ${batch}}\n` : '';
  return `catalogs: [catalogs/*]
maintainers: [${maintainers.join(', ')}]
ownership:
${ownersFiles ? '  ownersFiles: true\n' : ''}  packageOwners: operators/{package}/OWNERS
${ownersFiles ? '  newPackages: maintainers\n' : ''}${automerge ? `automerge:\n  enabled: true\n  method: ${automerge}\n${batchLine}` : ''}# The tests have no network: quay.io cannot be asked, which may not block a merge here.
images:
  unverifiableRegistries: [quay.io]
${extra}`;
}

/** foo's bundle `version`. */
export function fooBundle(version: string, image = `quay.io/example/foo-bundle:v${version}`): string {
  return `---
schema: olm.bundle
package: foo
name: foo.v${version}
image: ${image}
properties:
  - type: olm.package
    value:
      packageName: foo
      version: ${version}
`;
}

/** foo's package and its `stable` channel: each version replaces the one before. */
export function fooChannel(versions: string[], extraEntries = ''): string {
  const entries = versions
    .map((v, i) => `  - name: foo.v${v}\n${i ? `    replaces: foo.v${versions[i - 1]}\n` : ''}`)
    .join('');
  return `---
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries:
${entries}${extraEntries}`;
}

/** foo's channel and a bundle file for each of `versions`, under FOO_ROOT. */
export function fooCatalogFiles(versions: string[]): Record<string, string> {
  return {
    [`${FOO_ROOT}/catalog.yaml`]: fooChannel(versions),
    ...Object.fromEntries(versions.map((v) => [`${FOO_ROOT}/bundle-${v}.yaml`, fooBundle(v)])),
  };
}

/** foo's versions on the base of the repositories the merge tests build. */
export const FOO_BASE_VERSIONS = ['1.0.0', '1.0.1', '1.0.2'];

/**
 * Two releases made on `base` (which holds fooCatalogFiles(FOO_BASE_VERSIONS)), each fine on
 * its own, that give the channel two heads together: `top` adds 1.2.0 and `bottom` 1.1.0, both
 * replacing 1.0.2.
 */
export function fooTwoHeads(repo: WorkRepo, base: string): { top: string; bottom: string } {
  const channel = fooChannel(FOO_BASE_VERSIONS);
  const top = repo.commit(
    'top',
    {
      [`${FOO_ROOT}/catalog.yaml`]: channel.replace(
        'entries:\n',
        'entries:\n  - name: foo.v1.2.0\n    replaces: foo.v1.0.2\n',
      ),
      [`${FOO_ROOT}/bundle-1.2.0.yaml`]: fooBundle('1.2.0'),
    },
    base,
  );
  const bottom = repo.commit(
    'bottom',
    {
      [`${FOO_ROOT}/catalog.yaml`]: channel + '  - name: foo.v1.1.0\n    replaces: foo.v1.0.2\n',
      [`${FOO_ROOT}/bundle-1.1.0.yaml`]: fooBundle('1.1.0'),
    },
    base,
  );
  return { top, bottom };
}

/** A work tree and a bare origin (default branch `main`); commits are made in the first. */
export class WorkRepo {
  readonly root: string;
  readonly work: string;
  readonly bare: string;

  constructor(prefix = 'catalog-bot-repo-') {
    this.root = mkdtempSync(join(tmpdir(), prefix));
    this.work = join(this.root, 'work');
    this.bare = join(this.root, 'origin.git');
    execFileSync('git', ['init', '-q', '-b', 'main', this.work]);
    execFileSync('git', ['init', '-q', '--bare', '-b', 'main', this.bare]);
  }

  /** git in `cwd` (the work tree unless said), its output trimmed. */
  gitIn(cwd: string, ...args: string[]): string {
    return execFileSync(
      'git',
      ['-C', cwd, '-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args],
      {
        encoding: 'utf8',
      },
    ).trim();
  }

  git(...args: string[]): string {
    return this.gitIn(this.work, ...args);
  }

  /** Write `files` and commit them on what is checked out (on `parent` when given); the new commit. */
  commit(message: string, files: Record<string, string>, parent?: string): string {
    if (parent) this.git('checkout', '-q', '--detach', parent);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(this.work, path)), { recursive: true });
      writeFileSync(join(this.work, path), text);
    }
    this.git('add', '-A');
    this.git('commit', '-q', '--allow-empty', '-m', message);
    return this.git('rev-parse', 'HEAD');
  }

  /**
   * A pull request as GitHub holds it: `baseFiles` committed as main, `prFiles` on top as
   * branch pr, both pushed to the origin (main, and refs/pull/`number`/head); the head.
   */
  pullRequest(number: number, baseFiles: Record<string, string>, prFiles: Record<string, string>): string {
    const base = this.commit('base', baseFiles);
    this.git('checkout', '-q', '-b', 'pr');
    const head = this.commit('pr', prFiles);
    this.push(base, 'refs/heads/main');
    this.push(head, `refs/pull/${number}/head`);
    return head;
  }

  /** Push `sha` to each of `refs` of the bare origin (forced). */
  push(sha: string, ...refs: string[]): void {
    this.git('push', '-q', '-f', this.bare, ...refs.map((r) => `${sha}:${r}`));
  }

  /** A file at `rev` of the bare origin. */
  show(rev: string, path: string): string {
    return this.gitIn(this.bare, 'show', `${rev}:${path}`);
  }

  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}
