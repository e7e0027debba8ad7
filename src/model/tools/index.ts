/**
 * The tools the panel knows, registered in the order the server offers them; a tool is
 * added by registering its model (`registerTool`) and its card (components/tools).
 */

import { CLARIFY } from './clarify';
import { DESCRIBE_TABLE } from './describe_table';
import { FIND } from './find';
import { LIST_ARTIFACTS } from './list_artifacts';
import { LIST_TABLES } from './list_tables';
import { PLAN } from './plan';
import { READ_CELLS } from './read_cells';
import { registerTool, type ToolModel } from './registry';
import { RUN_PYTHON } from './run_python';
import { RUN_SQL } from './run_sql';

export { registerTool, toolModel, unregisterTool } from './registry';
export type {
  BuiltinTool,
  NamedArtifact,
  ToolArguments,
  ToolModel,
  ToolName,
  ToolResults
} from './registry';
export type { ViewOf } from './view';
export type { ClarifyView } from './clarify';
export type { DescribeTableView } from './describe_table';
export type { FindView } from './find';
export type { ListArtifactsView } from './list_artifacts';
export type { ListTablesView } from './list_tables';
export type { PlanResultView } from './plan';
export type { ReadCellsView } from './read_cells';
export type { RunPythonView } from './run_python';
export type { RunSqlView } from './run_sql';
export {
  CLARIFY,
  DESCRIBE_TABLE,
  FIND,
  LIST_ARTIFACTS,
  LIST_TABLES,
  PLAN,
  READ_CELLS,
  RUN_PYTHON,
  RUN_SQL
};

/** The built-in tools. */
export const BUILTIN_TOOLS = [
  LIST_TABLES,
  DESCRIBE_TABLE,
  RUN_SQL,
  RUN_PYTHON,
  PLAN,
  LIST_ARTIFACTS,
  FIND,
  READ_CELLS,
  CLARIFY
] as const;

BUILTIN_TOOLS.forEach(model => registerTool<unknown>(model as unknown as ToolModel));
