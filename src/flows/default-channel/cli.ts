// `catalog-bot default-channel <package> <channel> [--root <root>] [--repo <dir>] [--dry-run]`:
// set a package's default channel where it is written, checked before anything is written.
import { CONFIG_PATH } from '../../checks/config.js';
import { setDefaultChannel } from './plan.js';
import { defineCliCommand } from '../../commands/command.js';
import { CHANNEL_EDIT_OPTIONS, editChannel } from '../promote/cli.js';

const DEFAULT_CHANNEL_USAGE = `catalog-bot default-channel <package> <channel> [--root <root>] [--repo <dir>] [--dry-run]
      [--format text|json]
  Set the package's defaultChannel where it is written: its olm.package object in every
  catalog root that has the package (or only --root), or the olm.template.basic template
  the catalog is rendered from (operators/<package>/ci.yaml), whose outputs are then
  re-rendered. Every result is validated first; prints the diff. Catalog roots come from
  ${CONFIG_PATH} (catalogs:, default catalogs/*). --dry-run prints the diff and writes nothing.
  Exit 0 done (or nothing to do: it is the default channel already), 1 refused, 2 usage/IO.
`;

export const command = defineCliCommand({
  usage: DEFAULT_CHANNEL_USAGE,
  options: CHANNEL_EDIT_OPTIONS,
  formats: ['text', 'json'],
  positionals: { min: 2, message: 'default-channel needs a package name and a channel name' },
  run: ({ values, positionals }, io) => {
    const [pkg, channel] = positionals as [string, string];
    return editChannel(
      { repo: values.repo, dryRun: values['dry-run'], format: values.format },
      io,
      (input) =>
        setDefaultChannel(
          { package: pkg, channel, ...(values.root !== undefined ? { root: values.root } : {}) },
          input,
        ),
      (files) => `default channel of ${pkg} set to "${channel}": ${files} file(s) written`,
    );
  },
});
