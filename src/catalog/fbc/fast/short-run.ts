// `catalog-bot validate` is a short run: a catalog of the usual size (10-20 MB) is checked in
// about half a second, and over so short a run Node's optimizing compiler (TurboFan) costs
// more than it saves: its compile jobs compete with both loading threads for the cores, and
// the code it makes has little time left to pay that back. The command starts with it off,
// and it is turned on again once the run turns out to be long enough for it to pay: a large
// catalog, or YAML the fast reader leaves to the full one (several times slower, and slower
// still without the optimizing compiler). README, "Benchmarks", has the measurements.
import { setFlagsFromString } from 'node:v8';

/** Work in one run (bytes, as the fast reader reads them) above which optimizing pays. */
export const OPTIMIZE_ABOVE_BYTES = 24 * 1024 * 1024;
/** A character the full YAML reader reads weighs this many of the fast reader's (1 MB turns it on). */
const FULL_READER_WEIGHT = 24;

let held = false;
let released = false;
let work = 0;

/**
 * Turn the optimizing compiler off for this process (the command line does this first thing
 * for `validate`, before any code has had time to get hot). V8's flags are process-wide: the
 * loading thread is covered too.
 */
export function holdOptimizingCompiler(): void {
  setFlagsFromString('--no-opt');
  held = true;
}

/** The run is about to read `bytes` of catalog files (the listing's total). */
export function noteCatalogBytes(bytes: number): void {
  if (held) addWork(bytes);
}

/**
 * The full YAML reader read `chars` characters on this thread. Called on either thread: a
 * thread that did not hold the compiler may still turn it on, which is its default anyway.
 */
export function noteFullReaderChars(chars: number): void {
  addWork(chars * FULL_READER_WEIGHT);
}

function addWork(bytes: number): void {
  work += bytes;
  if (!released && work > OPTIMIZE_ABOVE_BYTES) {
    released = true;
    held = false;
    setFlagsFromString('--opt');
  }
}
