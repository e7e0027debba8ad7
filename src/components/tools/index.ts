/** The cards of the tools: the built-ins' (builtin.ts) and any a plugin registers. */

export { cardOf, registerCard, registerToolCard, unregisterCard } from './registry';
export type { IToolCardProps, ToolCardComponent } from './registry';
