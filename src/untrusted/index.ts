/** What the model wrote, rendered inert wherever the panel shows it. */
export * from './html';
export * from './rendermime';
