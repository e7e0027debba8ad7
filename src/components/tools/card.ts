/**
 * What a tool's card is: the component that renders its view (its model's `parse`,
 * src/model/tools/), paired with the tool it renders.
 */

import type * as React from 'react';

import type { ThreadView, ToolCard, ToolModel } from '../../model';

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

/** A tool's card, by its tool's name. */
export interface IToolCardEntry {
  tool: string;
  Card: ToolCardComponent;
}

/** `Card` as the card of `model`'s tool (its view's type checked here, then kept without it). */
export function toolCard<View>(
  model: ToolModel<View>,
  Card: ToolCardComponent<View>
): IToolCardEntry {
  // Kept without its view's type: the card is only ever given its own tool's view.
  return { tool: model.tool, Card: Card as unknown as ToolCardComponent };
}
