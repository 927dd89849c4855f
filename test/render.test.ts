import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { DirectorySource, loadCatalog, renderJson } from '../src/catalog/index.js';
import { haveOpm, OPM, removeTree, writeTree } from './helpers/oracle.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeTree));

// Corners of opm render: optional fields, properties of packages and channels, other
// schemas with and without a package, deprecations, relatedImages order, case-insensitive
// field names, YAML 1.1 values inside property payloads, heavy properties moved last.
const files = {
  'b/catalog.yaml': `---
schema: olm.package
name: bar
defaultChannel: beta
description: "<b>HTML</b> & unicode \\u00e9 \\u2028"
properties:
  - type: custom.note
    value: {z: 1, a: [true, "on", on, 4.10, null]}
---
schema: olm.channel
package: bar
name: beta
properties:
  - {type: olm.x, value: 1}
entries:
  - name: bar.v2.0.0
    REPLACES: bar.v1.0.0
    skipRange: '>=1.0.0 <2.0.0'
  - name: bar.v1.0.0
---
schema: olm.channel
package: bar
name: alpha
entries:
  - {name: bar.v1.0.0, skips: [bar.v0.9.0]}
---
schema: olm.bundle
package: bar
name: bar.v2.0.0
image: quay.io/x/bar:v2
relatedImages:
  - {name: z, image: quay.io/x/z:1}
  - {name: a, image: quay.io/x/a:1}
  - {image: ""}
properties:
  - {type: olm.csv.metadata, value: {displayName: Bar, keywords: [a, b]}}
  - {type: olm.package, value: {packageName: bar, version: 2.0.0}}
  - {type: olm.gvk, value: {group: bar.io, kind: Bar, version: v1}}
---
schema: olm.bundle
package: bar
name: bar.v1.0.0
image: quay.io/x/bar:v1
properties:
  - {type: olm.package, value: {packageName: bar, version: 1.0.0}}
---
schema: olm.deprecations
package: bar
entries:
  - {reference: {schema: olm.bundle, name: bar.v1.0.0}, message: old}
  - {reference: {schema: olm.package}, message: use foo}
---
schema: my.template
package: bar
name: t
data: {b: 2, a: 1}
---
schema: a.first
package: bar
---
schema: root.blob
name: no-package
`,
  'a.json': JSON.stringify({
    schema: 'olm.package',
    name: 'aaa',
    defaultChannel: 'x',
    icon: { base64data: 'aGk=', mediatype: 'image/png' },
  }),
};

describe.skipIf(!haveOpm)('render', () => {
  it('writes exactly what opm render -o json writes', async () => {
    const dir = writeTree(files);
    dirs.push(dir);
    const loaded = await loadCatalog(new DirectorySource(dir), { keepBundleObjects: true });
    expect(loaded.diagnostics.filter((d) => d.level === 'error')).toEqual([]);
    const ours = [...renderJson(loaded.config)].join('');
    const opm = spawnSync(OPM, ['render', dir, '-o', 'json'], { encoding: 'utf8' });
    expect(opm.status).toBe(0);
    expect(ours).toBe(opm.stdout);
  });
});
