// `/undeprecate <bundle|channel|package> <name>`: remove the package's olm.deprecations entry
// (the flow: ./flow.ts; the edit: ./plan.ts); checked and written like `/deprecate`.
import { deprecationCommand } from './command.js';

export const undeprecate = deprecationCommand('undeprecate', {
  line: '`/undeprecate <bundle|channel|package> <name>` removes an olm.deprecations entry',
  rows: [
    {
      usage: '`/undeprecate <kind> <name>`',
      who: 'owners of the package, maintainers (decided as for a change the commenter made)',
      what: 'removes the entry `/deprecate` writes (the whole `olm.deprecations` blob when it was the last one), where it is kept; checked and written like `/promote`',
    },
  ],
});
