/**
 * The built-in tools, in the order the server offers them. The registry starts from this
 * list (a value it imports, not a module's side effect: the bundler drops modules imported
 * only for what they do when loaded).
 */

import { CLARIFY } from './clarify';
import { DESCRIBE_TABLE } from './describe_table';
import { FIND } from './find';
import { LIST_ARTIFACTS } from './list_artifacts';
import { LIST_TABLES } from './list_tables';
import { PLAN } from './plan';
import { PROPOSE_CELLS } from './propose_cells';
import { READ_CELLS } from './read_cells';
import { RUN_PYTHON } from './run_python';
import { RUN_SQL } from './run_sql';

export const BUILTIN_TOOLS = [
  LIST_TABLES,
  DESCRIBE_TABLE,
  RUN_SQL,
  RUN_PYTHON,
  PLAN,
  LIST_ARTIFACTS,
  FIND,
  READ_CELLS,
  PROPOSE_CELLS,
  CLARIFY
] as const;
