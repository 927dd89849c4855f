// A package's own files (README "Who may change what", docs/security.md "A package's own
// files are its owners'"): where a repository keeps one directory per package, as
// community-operators-prod keeps `operators/<package>/`, the package's owners change what is
// in it. Pure: which package a path belongs to by its place, and whether a bundle directory's
// metadata names that package. The permissions decision (permissions.ts) says who owns it.
import { pathPattern } from '../catalog/edits/release.js';
import { bundleDirectories, type DirectoryFiles } from './bundle-pr.js';
import { metadataPackageNames } from './bundle-metadata.js';

export { PACKAGE_ANNOTATION } from './bundle-metadata.js';

/** The settings that say where a package's files are: both from the base's config. */
export interface PackageLayout {
  /** `bundles.path`, e.g. `operators/{package}/{version}`. */
  bundlesPath: string;
  /** `ownership.packageOwners`, e.g. `operators/{package}/ci.yaml`. */
  packageOwners: string;
}

/** Where a path sits as one package's file. */
export interface PackagePlace {
  package: string;
  /** The package's directory (`operators/<package>`), when the layout has one. */
  dir?: string;
  /** The bundle directory the path is in, when it is in one: its metadata must name the package. */
  bundleDir?: string;
}

/**
 * The templates of the directories that hold one package's files: `bundles.path` and the
 * `packageOwners` file's path, each cut after its first `{package}` segment (`operators/{package}`).
 * A template whose package is not a whole segment, or that has a `{version}` before it, names
 * no package directory.
 */
export function packageDirTemplates(layout: PackageLayout): string[] {
  const out = new Set<string>();
  for (const template of [layout.bundlesPath, layout.packageOwners]) {
    const parts = template.split('/');
    const at = parts.indexOf('{package}');
    if (at < 0 || at === parts.length - 1) continue; // no directory of its own
    const prefix = parts.slice(0, at + 1);
    if (prefix.some((p, i) => i < at && p.includes('{'))) continue;
    out.add(prefix.join('/'));
  }
  return [...out];
}

/**
 * A name that may stand for `{package}` in a path: one plain segment. Names starting with a dot
 * are never packages (`.github` is the repository's, whatever the layout says).
 */
function packageSegment(name: string): boolean {
  return name !== '' && !name.startsWith('.') && !/[/\\\0]/.test(name);
}

/**
 * The package whose own file `path` is by its place, or undefined. A path with an empty, `.`
 * or `..` segment or a backslash is no package's (it could name another directory once
 * resolved), nor is one directly in the package's directory template without a file under it.
 */
export function packagePlace(path: string, layout: PackageLayout): PackagePlace | undefined {
  const parts = path.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\\') || p.includes('\0')))
    return undefined;
  const bundle = bundleDirectories([path], layout.bundlesPath)[0];
  const dirs = packageDirTemplates(layout);
  const dirOf = (pkg: string): string | undefined =>
    dirs.map((t) => t.replaceAll('{package}', pkg)).find((d) => path.startsWith(`${d}/`));
  if (bundle) {
    if (!packageSegment(bundle.package)) return undefined;
    const dir = dirOf(bundle.package);
    return { package: bundle.package, bundleDir: bundle.dir, ...(dir !== undefined ? { dir } : {}) };
  }
  const owners = pathPattern(layout.packageOwners).exec(path)?.groups?.['package'];
  if (owners !== undefined) {
    if (!packageSegment(owners)) return undefined;
    const dir = dirOf(owners);
    return { package: owners, ...(dir !== undefined ? { dir } : {}) };
  }
  for (const template of dirs) {
    const depth = template.split('/').length;
    if (parts.length <= depth) continue;
    const pkg = pathPattern(template).exec(parts.slice(0, depth).join('/'))?.groups?.['package'];
    if (pkg !== undefined && packageSegment(pkg))
      return { package: pkg, dir: parts.slice(0, depth).join('/') };
  }
  return undefined;
}

/**
 * Does a bundle directory's `metadata/` (at one commit) name only `pkg`? `metadata/annotations.yaml`
 * must name it, and no other file there may name another package: opm takes the first
 * metadata file with annotations, whatever its name. Anything that is not read as opm reads it
 * (a file refused, a symlink out, too large to read) names no package.
 */
export function metadataNamesOnly(metadata: DirectoryFiles, pkg: string): boolean {
  if (metadata.unreadable.length > 0 || metadata.files.size === 0) return false;
  const { names, refused } = metadataPackageNames(metadata.files);
  if (refused.length > 0 || names.some((n) => n.package !== pkg)) return false;
  // The file the pipeline and the bundle check read, in its first document as opm reads it.
  return names.some((n) => n.path === 'annotations.yaml' && n.document === 0);
}
