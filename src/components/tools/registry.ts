/**
 * The card of each tool, by its name: a tool's own module (components/tools/<tool>.tsx)
 * registers the card that renders its view (its model's `parse`, src/model/tools/). A tool
 * without a card gets the generic one (its title, its error).
 */

import type * as React from 'react';

import { registerTool, type ThreadView, type ToolCard, type ToolModel } from '../../model';

/** What a tool's card is given. */
export interface IToolCardProps<View = unknown> {
  card: ToolCard;
  /** The tool's view of the card's result (null before it comes, or when it holds none of the tool's fields). */
  detail: View | null;
  view: ThreadView;
  threadId: string;
  /** The size of the prompt of the model call that asked for the step (an ⓘ explains it). */
  context?: string;
}

export type ToolCardComponent<View = unknown> = (props: IToolCardProps<View>) => React.ReactElement;

const CARDS = new Map<string, ToolCardComponent>();

/** Make `Card` the card of `model`'s tool. */
export function registerCard<View>(model: ToolModel<View>, Card: ToolCardComponent<View>): void {
  // Kept without its view's type: the card is only ever given its own tool's view.
  CARDS.set(model.tool, Card as unknown as ToolCardComponent);
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
