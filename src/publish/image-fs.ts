// An image's root file system in memory, built from its layers (uncompressed tars) as a
// container runtime would: whiteouts and opaque directories honoured, symlinks followed
// inside the image. Bundle rendering reads `manifests/` and `metadata/` through it.
import { goStringCompare } from '../catalog/go/gostrings.js';
import type { BundleFiles } from '../catalog/bundle.js';
import { tarItems } from './tar.js';

type Node = { type: 'file'; data: Buffer } | { type: 'dir' } | { type: 'symlink'; target: string };

/** The image's root file system: slash paths without a leading slash. */
export class ImageFs implements BundleFiles {
  readonly nodes = new Map<string, Node>();

  private remove(path: string, keepSelf = false): void {
    for (const p of [...this.nodes.keys()]) {
      if ((!keepSelf && p === path) || p.startsWith(path === '' ? '' : `${path}/`)) this.nodes.delete(p);
    }
  }

  /** Apply one layer (an uncompressed tar), honouring whiteouts. */
  applyLayer(tar: Buffer): void {
    for (const entry of tarItems(tar)) {
      const path = normalise(entry.path);
      if (path === '') continue;
      const slash = path.lastIndexOf('/');
      const dir = slash < 0 ? '' : path.slice(0, slash);
      const base = path.slice(slash + 1);
      if (base === '.wh..wh..opq') {
        this.remove(dir, true);
        continue;
      }
      if (base.startsWith('.wh.')) {
        this.remove(dir === '' ? base.slice(4) : `${dir}/${base.slice(4)}`);
        continue;
      }
      if (entry.type === 'dir') {
        if (this.nodes.get(path)?.type !== 'dir') this.remove(path);
        this.nodes.set(path, { type: 'dir' });
      } else if (entry.type === 'file') {
        this.remove(path);
        // A copy: the layer's tar is let go once applied.
        this.nodes.set(path, { type: 'file', data: Buffer.from(entry.data) });
      } else if (entry.type === 'symlink') {
        this.remove(path);
        this.nodes.set(path, { type: 'symlink', target: entry.link });
      } else if (entry.type === 'hardlink') {
        const target = this.nodes.get(normalise(entry.link));
        this.remove(path);
        if (target) this.nodes.set(path, target);
      }
    }
  }

  /** Follow symlinks (inside the image) to the node a path names. */
  resolve(path: string): { path: string; node: Node } | undefined {
    let parts = normalise(path).split('/').filter(Boolean);
    for (let hops = 0; hops < 40; hops++) {
      let done = true;
      for (let i = 1; i <= parts.length; i++) {
        const prefix = parts.slice(0, i).join('/');
        const node = this.nodes.get(prefix);
        if (node?.type !== 'symlink') continue;
        const base = node.target.startsWith('/') ? [] : parts.slice(0, i - 1);
        parts = resolveDots([...base, ...node.target.split('/'), ...parts.slice(i)]);
        done = false;
        break;
      }
      if (done) {
        const p = parts.join('/');
        const node = p === '' ? ({ type: 'dir' } as Node) : this.nodes.get(p);
        if (!node) {
          // A directory may exist only through its entries' paths.
          if ([...this.nodes.keys()].some((k) => k.startsWith(`${p}/`)))
            return { path: p, node: { type: 'dir' } };
          return undefined;
        }
        return { path: p, node };
      }
    }
    return undefined;
  }

  /** Names directly inside a directory, sorted as Go's fs.ReadDir sorts them. */
  readDir(path: string): { name: string; isDir: boolean }[] | undefined {
    const dir = this.resolve(path);
    if (!dir || dir.node.type !== 'dir') return undefined;
    const prefix = dir.path === '' ? '' : `${dir.path}/`;
    const names = new Map<string, boolean>();
    for (const [p, node] of this.nodes) {
      if (!p.startsWith(prefix) || p === dir.path) continue;
      const rest = p.slice(prefix.length);
      const slash = rest.indexOf('/');
      const name = slash < 0 ? rest : rest.slice(0, slash);
      names.set(name, (names.get(name) ?? false) || slash >= 0 || node.type === 'dir');
    }
    return [...names].sort(([a], [b]) => goStringCompare(a, b)).map(([name, isDir]) => ({ name, isDir }));
  }

  readFile(path: string): Buffer | undefined {
    const got = this.resolve(path);
    return got?.node.type === 'file' ? got.node.data : undefined;
  }
}

function normalise(path: string): string {
  return resolveDots(path.split('/')).join('/');
}

function resolveDots(parts: string[]): string[] {
  const out: string[] = [];
  for (const p of parts) {
    if (p === '' || p === '.') continue;
    if (p === '..') out.pop();
    else out.push(p);
  }
  return out;
}
