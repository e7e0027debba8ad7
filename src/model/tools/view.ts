/**
 * A built-in tool's view type: its generated result type (`ToolResults[K]`), with the
 * fields its card counts on (`Sure`) always there (read with care: an empty list when the
 * result had none) and the others where the result had them.
 */

import type { BuiltinTool, ToolName, ToolResults } from './registry';

export type ViewOf<K extends ToolName, Sure extends keyof ToolResults[K]> = Pick<
  ToolResults[K],
  Sure
> &
  Partial<ToolResults[K]>;

/** A built-in tool with its view, checked against the API's tool names and result types. */
export function builtin<K extends ToolName, View extends Partial<ToolResults[K]>>(
  model: BuiltinTool<K, View>
): BuiltinTool<K, View> {
  return model;
}
