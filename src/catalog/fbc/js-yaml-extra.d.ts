// js-yaml 4.1+ features that @types/js-yaml does not describe yet.
import 'js-yaml';

declare module 'js-yaml' {
  interface LoadOptions {
    /** Deepest collection nesting accepted before an error (js-yaml >= 4.1.1). */
    maxDepth?: number;
  }
  interface State {
    /** Anchor of the node being composed (set at `close` for anchored nodes). */
    anchor: string | null;
  }
  export const types: Record<
    | 'binary'
    | 'float'
    | 'map'
    | 'null'
    | 'pairs'
    | 'set'
    | 'timestamp'
    | 'bool'
    | 'int'
    | 'merge'
    | 'omap'
    | 'seq'
    | 'str',
    Type
  >;
}
