// Catalog image publishing: build (native OCI) and push to any distribution-API registry.
export * from './oci.js';
export * from './tar.js';
export * from './layer.js';
export * from './cache.js';
export * from './image.js';
export * from './layout.js';
export * from './registry.js';
export * from './publish.js';
export * from './exists.js';
export * from './report.js';
