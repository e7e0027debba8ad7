/**
 * The card of each tool, by its name: a tool's own module (components/tools/<tool>.tsx)
 * makes the card that renders its view (its model's `parse`, src/model/tools/), builtin.ts
 * lists them, and a plugin adds its own with `registerCard`. A tool without a card gets the
 * generic one (its title, its error).
 */

import { registerTool, type ToolModel } from '../../model';
import { BUILTIN_CARDS } from './builtin';
import { toolCard, type ToolCardComponent } from './card';

export type { IToolCardProps, ToolCardComponent } from './card';

const CARDS = new Map<string, ToolCardComponent>(
  BUILTIN_CARDS.map(({ tool, Card }) => [tool, Card])
);

/** Make `Card` the card of `model`'s tool. */
export function registerCard<View>(model: ToolModel<View>, Card: ToolCardComponent<View>): void {
  const entry = toolCard(model, Card);
  CARDS.set(entry.tool, entry.Card);
}

/** A whole tool, its model and its card, in one registration (a tool the panel adds). */
export function registerToolCard<View>(
  tool: ToolModel<View> & { Card: ToolCardComponent<View> }
): void {
  registerTool(tool);
  registerCard(tool, tool.Card);
}

/** Forget a tool's card (a test's). */
export function unregisterCard(tool: string): void {
  CARDS.delete(tool);
}

/** The card of `tool`, if it has one of its own. */
export function cardOf(tool: string): ToolCardComponent | undefined {
  return CARDS.get(tool);
}
