// The real catalog templates of the test data and the catalogs committed as rendered from them.
import { join } from 'node:path';
import { SHARED_DATA } from './oracle.js';

export const REAL_TEMPLATES = join(SHARED_DATA, 'real-templates');
export const COP_TEMPLATES = join(REAL_TEMPLATES, 'community-operators-prod');

/** A real template and the catalog its repository committed as rendered from it. */
export interface TemplatePair {
  name: string;
  template: string;
  output: string;
  format: 'yaml' | 'json';
  /** The opm whose behaviour produced the committed output (see templates.test.ts, clusterpulse). */
  opm: string;
}
