// The GitHub Action's entry point (action.yml): runs `catalog-bot check` or `validate` with
// `--format github` in the workspace, so findings show as annotations on the pull request.
// It reads what GitHub Actions sets: GITHUB_WORKSPACE, GITHUB_EVENT_PATH (the pull_request
// payload: base commit and author), GITHUB_BASE_REF, and the action's inputs as INPUT_*.
// Plain JavaScript: it runs before anything is built, and only starts the built CLI.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli.js');
const env = process.env;
const input = (name, fallback = '') => (env[`INPUT_${name.toUpperCase()}`] ?? '').trim() || fallback;

/** `catalogs/*` or `catalogs/*\/`: the directories under `catalogs`; anything else as given. */
function expand(pattern, workspace) {
  const star = /^(.*?)\/\*\/?$/.exec(pattern);
  if (!star) return [pattern];
  const parent = join(workspace, star[1]);
  if (!existsSync(parent)) return [pattern];
  return readdirSync(parent)
    .filter((name) => statSync(join(parent, name)).isDirectory())
    .sort()
    .map((name) => `${star[1]}/${name}/`);
}

function event() {
  if (!env.GITHUB_EVENT_PATH || !existsSync(env.GITHUB_EVENT_PATH)) return {};
  return JSON.parse(readFileSync(env.GITHUB_EVENT_PATH, 'utf8'));
}

export function actionArgs() {
  const workspace = env.GITHUB_WORKSPACE || process.cwd();
  const command = input('command', 'check');
  if (command === 'validate') {
    const paths = input('paths', 'catalogs/*/').split(/\s+/).filter(Boolean);
    return {
      workspace,
      args: ['validate', '--format', 'github', ...paths.flatMap((p) => expand(p, workspace))],
    };
  }
  if (command !== 'check') throw new Error(`input command must be check or validate; got ${command}`);
  const pr = event().pull_request;
  // The pull request's base commit; without a pull_request event, the base branch's tip.
  const base = input('base', pr?.base?.sha ?? (env.GITHUB_BASE_REF ? `origin/${env.GITHUB_BASE_REF}` : ''));
  if (!base) throw new Error('no base commit: run on pull_request, or set the base input');
  // actions/checkout checks out the pull request's merge commit: HEAD is what would merge.
  const head = input('head', 'HEAD');
  const author = input('author', pr?.user?.login ?? '');
  return {
    workspace,
    args: [
      'check',
      '--repo',
      workspace,
      '--base',
      base,
      '--head',
      head,
      '--format',
      'github',
      ...(author ? ['--author', author] : []),
    ],
  };
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  let run;
  try {
    run = actionArgs();
  } catch (error) {
    // Escaped as every workflow command is (src/commands/output.ts githubAnnotation): a line
    // break in the message must not start a command of its own.
    const data = String(error.message).replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
    console.log(`::error::${data}`);
    process.exit(2);
  }
  const result = spawnSync(process.execPath, [cli, ...run.args], { cwd: run.workspace, stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
