// Bundle property values that validation only type-checks are checked as they are read and
// not kept (`catalog-bot validate`, LoadOptions.validationOnly): a placeholder that passes the
// same check stands in for each, so memory stays small and validation finds the same first
// failing property of each bundle (README, "Benchmarks").
import { checkBundleBlob } from '../blob-check.js';
import type { CheckedValues } from './fastyaml.js';
import { GO_PROPERTY_VALUES, SCHEMA_BUNDLE, type Bundle } from '../declcfg.js';
import { checkGo, goRaw, type GoType } from '../../go/gojson.js';
import { PROPERTY_BUNDLE_OBJECT, PROPERTY_PACKAGE } from '../../property.js';

/** Stands in for a property value that passed its type check when read (`validationOnly`). */
const CHECKED_VALUE = Object.freeze({ '<checked when read>': true });

/**
 * The Go type a bundle property value of this type is only checked against in validation
 * (any value, for a type opm does not know), or undefined for the values validation reads.
 */
function checkedOnlyShape(type: string): GoType | undefined {
  if (type === PROPERTY_PACKAGE || type === PROPERTY_BUNDLE_OBJECT) return undefined;
  return GO_PROPERTY_VALUES[type] ?? goRaw;
}

/** The fast reader checks these values as it reads them and builds only those that fail. */
export const CHECKED_WHEN_READ: CheckedValues = {
  schema: SCHEMA_BUNDLE,
  shape: checkedOnlyShape,
  placeholder: CHECKED_VALUE,
};

/**
 * Replace bundle property values that validation only type-checks, and that pass, with
 * CHECKED_VALUE, which passes the same check (no Go struct has a field of that name):
 * validation finds the same first failing property of each bundle. (Most were replaced
 * when read: CHECKED_WHEN_READ.)
 */
function dropCheckedValues(bundle: Bundle): void {
  for (const prop of bundle.properties) {
    if (prop.value === undefined || prop.value === CHECKED_VALUE) continue;
    const shape = checkedOnlyShape(prop.type);
    if (shape !== undefined && checkGo(prop.value, shape) === undefined) prop.value = CHECKED_VALUE;
  }
}

/**
 * Keep of a bundle only what validation reads (validationOnly): values it only type-checks
 * give way to the placeholder, and the bundle's own blob checks run here, on the thread that
 * read it, rather than all on one thread later.
 */
export function keepForValidation(bundle: Bundle): void {
  dropCheckedValues(bundle);
  bundle.checked = checkBundleBlob(bundle);
}
