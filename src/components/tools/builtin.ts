/**
 * The cards of the built-in tools. The registry starts from this list (a value it imports,
 * not a module's side effect: the bundler drops modules imported only for what they do when
 * loaded). A tool without a card of its own (`read_cells`) gets the generic one.
 */

import type { IToolCardEntry } from './card';
import { CLARIFY_CARD } from './clarify';
import { DESCRIBE_TABLE_CARD } from './describe_table';
import { FIND_CARD } from './find';
import { LIST_ARTIFACTS_CARD } from './list_artifacts';
import { LIST_TABLES_CARD } from './list_tables';
import { PLAN_CARD } from './plan';
import { PROPOSE_CELLS_CARD } from './propose_cells';
import { RUN_PYTHON_CARD } from './run_python';
import { RUN_SQL_CARD } from './run_sql';

export const BUILTIN_CARDS: readonly IToolCardEntry[] = [
  CLARIFY_CARD,
  DESCRIBE_TABLE_CARD,
  FIND_CARD,
  LIST_ARTIFACTS_CARD,
  LIST_TABLES_CARD,
  PLAN_CARD,
  PROPOSE_CELLS_CARD,
  RUN_PYTHON_CARD,
  RUN_SQL_CARD
];
