// `catalog-bot validate` is a short run: a catalog of the usual size (10-20 MB) is checked in
// about half a second, and over so short a run Node's optimizing compiler (TurboFan) costs
// more than it saves: its compile jobs compete with both loading threads for the cores, and
// the code it makes has little time left to pay that back. The command starts with it off,
// and turns it on again once the catalog turns out to be large enough for it to pay
// (README, "Benchmarks", has the measurements and the crossover).
import { setFlagsFromString } from 'node:v8';

/** Catalog bytes in one run above which the optimizing compiler pays for itself. */
export const OPTIMIZE_ABOVE_BYTES = 24 * 1024 * 1024;

let held = false;
let bytesSeen = 0;

/**
 * Turn the optimizing compiler off for this process (the command line does this first thing
 * for `validate`, before any code has had time to get hot). V8's flags are process-wide: the
 * loading thread is covered too.
 */
export function holdOptimizingCompiler(): void {
  setFlagsFromString('--no-opt');
  held = true;
}

/** Is the optimizing compiler held off in this process? */
export function optimizingCompilerHeld(): boolean {
  return held;
}

/**
 * The run is about to read `bytes` more of catalog files: past OPTIMIZE_ABOVE_BYTES in all,
 * the optimizing compiler is turned on again. Does nothing unless it was held.
 */
export function noteCatalogBytes(bytes: number): void {
  bytesSeen += bytes;
  if (held && bytesSeen > OPTIMIZE_ABOVE_BYTES) {
    setFlagsFromString('--opt');
    held = false;
  }
}
