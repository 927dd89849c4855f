import { describe, expect, it } from 'vitest';
import { addedCommands, MAX_COMMANDS, parseComment } from '../src/handlers/commands.js';

const names = (body: string) =>
  parseComment(body).commands.map((c) =>
    'cancel' in c && c.cancel
      ? `${c.name} cancel`
      : c.name === 'promote'
        ? `promote ${c.bundle} ${c.channel} ${c.root ?? '-'}`
        : c.name,
  );

describe('comment command parsing', () => {
  it('finds one command per line anywhere in the comment', () => {
    expect(names('Looks fine to me.\n/lgtm\n\nthanks!\n/approve\n  /hold  ')).toEqual([
      'lgtm',
      'approve',
      'hold',
    ]);
    expect(names('/APPROVE\r\n/Retest\r\n')).toEqual(['approve', 'retest']);
  });

  it('reads cancel forms and /unhold', () => {
    expect(names('/approve cancel\n/lgtm cancel\n/hold cancel\n/unhold')).toEqual([
      'approve cancel',
      'lgtm cancel',
      'hold cancel',
      'hold cancel',
    ]);
  });

  it('reads /approve <commit>: 7 to 40 hex digits of a sha, nothing shorter or other', () => {
    const parsed = parseComment(
      '/approve 1A2B3C4\n/approve ' + 'f'.repeat(40) + '\n/approve 1a2b3c\n/approve 1a2b3cg',
    );
    expect(parsed.commands).toMatchObject([
      { name: 'approve', cancel: false, sha: '1a2b3c4' },
      { name: 'approve', cancel: false, sha: 'f'.repeat(40) },
    ]);
    expect(parsed.problems.map((p) => p.text)).toEqual(['/approve 1a2b3c', '/approve 1a2b3cg']);
  });

  it('ignores commands inside fenced code, indented code and quotes', () => {
    const body = [
      '```',
      '/approve',
      '```',
      '~~~~',
      '/hold',
      '```',
      '/lgtm',
      '~~~~',
      '    /retest',
      '\t/retest',
      '> /approve',
      '   > /approve',
      'then /approve in the middle of a line',
      '`/approve`',
      '/help',
    ].join('\n');
    expect(names(body)).toEqual(['help']);
  });

  it('ignores commands inside HTML comments, on one line or several, and reads what is outside them', () => {
    const body = [
      '<!-- /approve -->',
      '<!--',
      '/hold',
      '  /lgtm',
      '-->',
      'text <!-- /retest --> more',
      '<!-- a --> /retest',
      '<!-->',
      '/help',
      '<!--->',
      '/render <!-- hidden',
      '/approve',
      'still hidden --> ',
      '```',
      '<!--',
      '```',
      '/lgtm',
      '<!-- never closed',
      '/approve',
    ].join('\n');
    // `<!-->` and `<!--->` close at once; `<!--` inside a code block is code, not a comment.
    expect(names(body)).toEqual(['retest', 'help', 'render', 'lgtm']);
    expect(parseComment('<!-- /aprove -->').problems).toEqual([]);
  });

  it('does not mistake paths or prose for commands', () => {
    expect(parseComment('/etc/hosts is odd\n/usr/bin/opm\n/ \n//approve\n/1abc').commands).toEqual([]);
    expect(parseComment('/etc/hosts is odd').problems).toEqual([]);
  });

  it('parses /promote with and without a catalog root, and refuses bad arguments', () => {
    expect(names('/promote etcd.v0.9.4 stable\n/promote etcd.v0.9.4 stable-v1.2 catalogs/v4.21')).toEqual([
      'promote etcd.v0.9.4 stable -',
      'promote etcd.v0.9.4 stable-v1.2 catalogs/v4.21',
    ]);
    const bad = parseComment(
      '/promote etcd.v0.9.4\n/promote a b c d\n/promote a b ../../etc\n/promote a `b`',
    );
    expect(bad.commands).toEqual([]);
    expect(bad.problems.map((p) => p.line)).toEqual([1, 2, 3, 4]);
    expect(bad.problems[0]!.reason).toContain('usage: `/promote <bundle-name> <channel> [<catalog-root>]`');
    expect(bad.problems[2]!.reason).toContain('is not a bundle, channel or catalog-root name');
  });

  it('reports unknown commands and wrong arguments with their line', () => {
    const parsed = parseComment('hi\n/approv\n/approve now\n/retest please\n/lgtm');
    expect(names('/lgtm')).toEqual(['lgtm']);
    expect(parsed.commands.map((c) => c.name)).toEqual(['lgtm']);
    expect(parsed.problems).toEqual([
      { line: 2, text: '/approv', reason: '`/approv` is not a catalog-bot command' },
      {
        line: 3,
        text: '/approve now',
        reason:
          '`/approve` takes no argument other than `cancel` or a commit (7 or more hex digits of its sha)',
      },
      { line: 4, text: '/retest please', reason: '`/retest` takes no argument' },
    ]);
  });

  it(`reads at most ${MAX_COMMANDS} commands and only the first 64 KiB of a huge comment`, () => {
    const many = parseComment(Array.from({ length: 50 }, () => '/lgtm').join('\n'));
    expect(many.commands).toHaveLength(MAX_COMMANDS);
    expect(many.problems).toHaveLength(1);
    const huge = parseComment('/hold\n' + 'x'.repeat(1024 * 1024) + '\n/approve');
    expect(huge.commands.map((c) => c.name)).toEqual(['hold']);
  });

  it('runs only the commands an edit added', () => {
    const added = addedCommands('/lgtm\n/hold', '/lgtm\n/hold\n/approve');
    expect(added.commands.map((c) => c.name)).toEqual(['approve']);
    expect(addedCommands('/lgtm', 'fixed a typo\n/lgtm').commands).toEqual([]);
  });
});
