// The repository's `bundles` settings as onboarding reads them (README "Repository
// configuration"): shared by `catalog-bot onboard` and `/onboard`, so both convert alike.
import type { BundleSettings } from '../../catalog/edits/release.js';
import type { RepoConfig } from '../../checks/config.js';

export function onboardSettings(config: RepoConfig): Partial<BundleSettings> {
  const { bundles } = config;
  return {
    path: bundles.path,
    imageTemplate: bundles.imageTemplate,
    opmVersion: bundles.renderer.opmVersion,
    ...(bundles.renderer.csvMetadataFrom !== undefined
      ? { csvMetadataFrom: bundles.renderer.csvMetadataFrom }
      : {}),
  };
}

/** The package's directory (`operators/<package>`): `bundles.path` up to `{version}`. */
export function packageDirOf(path: string | undefined, pkg: string): string | undefined {
  const dir = (path ?? 'operators/{package}/{version}')
    .split('{version}')[0]!
    .replaceAll('{package}', pkg)
    .replace(/\/$/, '');
  return dir === '' || dir.includes('{') ? undefined : dir;
}
