// Module hooks for the check worker when catalog-bot runs from its TypeScript sources
// (the tests): `./x.js` imported from a `.ts` file loads `./x.ts`, stripped of its types.
// The built App (dist/) never uses this file.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'rolldown/utils';

export async function resolve(specifier, context, next) {
  if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
    const url = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
    if (existsSync(fileURLToPath(url))) return { url: url.href, format: 'module', shortCircuit: true };
  }
  return next(specifier, context);
}

export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  const file = fileURLToPath(url);
  const out = transformSync(file, readFileSync(file, 'utf8'));
  if (out.errors?.length) throw new Error(`${file}: ${out.errors[0].message}`);
  return { format: 'module', source: out.code, shortCircuit: true };
}
