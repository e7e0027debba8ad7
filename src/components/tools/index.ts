/**
 * The cards of the built-in tools, each registered by its tool's module; a tool without a
 * card of its own (`read_cells`) gets the generic one.
 */

import './clarify';
import './describe_table';
import './find';
import './list_artifacts';
import './list_tables';
import './plan';
import './run_python';
import './run_sql';

export { cardOf, registerCard, registerToolCard, unregisterCard } from './registry';
export type { IToolCardProps, ToolCardComponent } from './registry';
