// One `catalog-bot` command as a function, run through the CLI's dispatcher (src/cli.ts)
// exactly as `catalog-bot <name> ...args` runs it.
import { main } from '../../src/cli.js';

export function cliCommand(
  name: string,
): (
  args: string[],
  out: NodeJS.WritableStream,
  err?: NodeJS.WritableStream,
  env?: NodeJS.ProcessEnv,
) => Promise<number> {
  return (args, out, err, env) => main([name, ...args], out, err, env);
}
