/**
 * What the panel knows of each tool, by its name, in one registry: how its result reads
 * (`parse`, into the tool's generated result type), whether its steps are notebook cells,
 * the dataset a call binds, what a step is for. The reducer, the result views and the cards
 * ask the registry; only a tool's own modules (src/model/tools/<tool>.ts and
 * src/components/tools/<tool>.tsx) name it. A tool the registry does not know gets a
 * generic card.
 */

import type { components } from '../api.generated';
import type { ToolCallStarted, ToolResult } from '../events';
import { BUILTIN_TOOLS } from './builtin';

/** What each built-in tool's `ok` result holds, by tool name (the server's result models). */
export type ToolResults = components['schemas']['ToolResults'];
/** The name of a built-in tool. */
export type ToolName = keyof ToolResults;

/** A result as its event carries it: free-form JSON. */
export type ResultObject = ToolResult['result'];

/** A call's arguments, as its event carries them. */
export type ToolArguments = ToolCallStarted['arguments'];

/** An artifact a result names: its id, name and type. */
export interface NamedArtifact {
  id: string;
  name: string;
  type: string;
}

/** One tool, as the panel's model knows it. */
export interface ToolModel<View = unknown> {
  tool: string;
  /** How a card's title names the tool ("SQL", "Search"); its name when not given. */
  label?: string;
  /**
   * The typed view of a result that holds the tool's fields (an `ok` one, or a failed step
   * that says what it did); null when it holds none of them. Reads only what is of the
   * expected kind: a result of an unexpected shape gives a thinner card, never a broken one.
   */
  parse(result: ResultObject): View | null;
  /** A step that succeeded is offered as a notebook cell ("Insert as cell"). */
  makesCell?: boolean;
  /** The name a call binds in the kernel (a query's dataset), from its arguments. */
  binds?(args: ToolArguments): string | undefined;
  /** What a step is for, in a few words, from its arguments (null: nothing to say). */
  purpose?(args: ToolArguments): string | null;
  /** The artifacts its result names. */
  named?(view: View): NamedArtifact[];
  /** The type of an artifact of the step known only by its id. */
  makes?: string;
}

/** A built-in tool: its name is one of the API's, its view read into the API's type of its result. */
export type BuiltinTool<
  K extends ToolName,
  View extends Partial<ToolResults[K]>
> = ToolModel<View> & {
  tool: K;
};

// Stored without their views' types: each tool's parse makes the view its own parts read.
const REGISTRY = new Map<string, ToolModel>(
  BUILTIN_TOOLS.map(model => [model.tool, model as unknown as ToolModel])
);

/** Make `model` what the panel knows of its tool (replacing what it knew). */
export function registerTool<View>(model: ToolModel<View>): ToolModel<View> {
  // Stored without its view's type: each tool's parse makes the view its own parts read.
  REGISTRY.set(model.tool, model as unknown as ToolModel);
  return model;
}

/** Forget a tool (a test's). */
export function unregisterTool(tool: string): void {
  REGISTRY.delete(tool);
}

/** What the panel knows of `tool`, if anything. */
export function toolModel(tool: string): ToolModel | undefined {
  return REGISTRY.get(tool);
}
