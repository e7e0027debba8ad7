/**
 * The sidebar's view model: pure TypeScript, no browser or JupyterLab API, so it is
 * unit-tested on its own. Transport (src/transport) feeds it; the React cards render it.
 */

export * from './events';
export * from './sse';
export * from './results';
export * from './tools';
export * from './view';
export * from './reasons';
export * from './reducer';
export * from './delivery';
export * from './receipts';
export * from './proposals';
export * from './diffRows';
