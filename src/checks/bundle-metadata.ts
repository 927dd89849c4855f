// What a bundle directory's `metadata/` files say its package is, read as opm reads them:
// opm takes the annotations of the first file in `metadata/` that has them, whatever its
// name, so every file there counts, not only `annotations.yaml` (docs/bundles.md). The
// permissions decision (package-files.ts) and the bundle check (bundle.ts) both read it here.
import { decodeBundleFile } from '../catalog/bundle.js';
import { READ_REFUSALS } from '../catalog/fbc/decode.js';

/** The bundle annotation that names a bundle's package (what opm and the pipeline read). */
export const PACKAGE_ANNOTATION = 'operators.operatorframework.io.bundle.package.v1';

/** One package annotation in a metadata file. */
export interface MetadataPackageName {
  /** Path relative to `metadata/`. */
  path: string;
  /** 0-based YAML document of the file (opm reads the first). */
  document: number;
  /** The annotation's value (not always a string). */
  package: unknown;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Every package annotation in the files of `metadata/` (paths relative to it), in path order,
 * and the files catalog-bot refuses to read (opm could read them differently: they name no
 * package anyone may rely on).
 */
export function metadataPackageNames(files: ReadonlyMap<string, Buffer>): {
  names: MetadataPackageName[];
  refused: string[];
} {
  const names: MetadataPackageName[] = [];
  const refused: string[] = [];
  for (const path of [...files.keys()].sort()) {
    const decoded = decodeBundleFile(files.get(path)!);
    if (decoded.problems.some((p) => p.rule in READ_REFUSALS)) {
      refused.push(path);
      continue;
    }
    for (const [document, { value }] of decoded.values.entries()) {
      const annotations = isMap(value) ? value['annotations'] : undefined;
      if (isMap(annotations) && PACKAGE_ANNOTATION in annotations)
        names.push({ path, document, package: annotations[PACKAGE_ANNOTATION] });
    }
  }
  return { names, refused };
}
