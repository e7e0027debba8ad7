/**
 * The tools the panel knows: the built-ins (builtin.ts) and any a plugin registers with
 * `registerTool` and its card (components/tools).
 */

export { BUILTIN_TOOLS } from './builtin';
export { CLARIFY } from './clarify';
export { DESCRIBE_TABLE } from './describe_table';
export { FIND } from './find';
export { LIST_ARTIFACTS } from './list_artifacts';
export { LIST_TABLES } from './list_tables';
export { PLAN } from './plan';
export { PROPOSE_CELLS } from './propose_cells';
export { READ_CELLS } from './read_cells';
export { RUN_PYTHON } from './run_python';
export { RUN_SQL } from './run_sql';

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
export type { ProposeCellsView } from './propose_cells';
export type { ReadCellsView } from './read_cells';
export type { RunPythonView } from './run_python';
export type { RunSqlView } from './run_sql';
