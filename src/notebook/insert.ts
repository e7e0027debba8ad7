/**
 * "Insert as cell": one SQL or Python step of a thread as runnable code cells of the
 * user's notebook, below its active cell.
 *
 * A step's cell reads the source through the runtime helper (`analyst.sql(...)`), as the
 * exported notebook's cells do, so it needs `analyst.connect(...)` to have run in the
 * kernel. When no cell at or above the insertion point calls it, a set-up cell goes first:
 * a cell of its own (not lines in the step's cell) because the helper names the dataset
 * after the assignment that opens its cell's code (`name = analyst.sql(...)`).
 *
 * The step's code is the model's, and here it runs in the user's own kernel, outside the
 * sandbox: its cell opens with a comment saying so (seen by whoever reads or runs it,
 * unlike metadata) and is tagged as the exported notebooks tag such cells.
 */

import type { INotebookModel, NotebookPanel } from '@jupyterlab/notebook';

import { toolModel } from '../model';
import { IStepCell } from '../transport/api';

/** The set-up cell's first line, as in exported notebooks. */
export const SETUP_COMMENT = '# Set-up: the data source this thread queried.';

/** The first line of a step's cell: whose code it is, and where it will run. */
export const MODEL_WRITTEN_COMMENT =
  '# Written by a language model (jupyter-analyst); it runs here, outside the sandbox: read it first.';

/** The tag of a cell whose code the model wrote (as in exported notebooks). */
export const MODEL_WRITTEN_TAG = 'model-written';

const CONNECT = /\banalyst\s*\.\s*connect\s*\(/;

/** Whether a cell's code opens a source with the runtime helper (comments do not count). */
export function callsConnect(source: string): boolean {
  return source.split('\n').some(line => !/^\s*#/.test(line) && CONNECT.test(line));
}

/** A notebook cell as far as insertion cares. */
export interface ICellText {
  cell_type: string;
  source: string;
}

/**
 * Whether the step needs a set-up cell: no code cell up to `active` (the cell the new
 * ones go below; -1 for an empty notebook) calls `analyst.connect(`. A connect below the
 * insertion point would run after the step, so it does not count.
 */
export function needsSetup(cells: readonly ICellText[], active: number): boolean {
  return !cells
    .slice(0, active + 1)
    .some(cell => cell.cell_type === 'code' && callsConnect(cell.source));
}

/**
 * The sources of the cells to insert: the set-up cell when needed, then the step's cell,
 * which opens with {@link MODEL_WRITTEN_COMMENT}. The cell of a step that binds a dataset
 * (a query) ends with its name, so running it shows the DataFrame.
 */
export function stepCellSources(step: IStepCell, withSetup: boolean): string[] {
  let source = `${MODEL_WRITTEN_COMMENT}\n${step.source.replace(/\s+$/, '')}`;
  if (step.name && toolModel(step.tool)?.binds !== undefined) {
    source += `\n${step.name}`;
  }
  return withSetup ? [`${SETUP_COMMENT}\n${step.setup}`, source] : [source];
}

/** The text of a notebook model's cells. */
export function cellTexts(model: INotebookModel): ICellText[] {
  const cells: ICellText[] = [];
  for (let i = 0; i < model.cells.length; i++) {
    const cell = model.cells.get(i);
    cells.push({ cell_type: cell.type, source: cell.sharedModel.getSource() });
  }
  return cells;
}

/**
 * Insert the step's cells below cell `active` of `model` (at the end when it is out of
 * range); the index of the step's cell, the last inserted.
 */
export function insertStepCells(model: INotebookModel, active: number, step: IStepCell): number {
  const count = model.cells.length;
  const below = active >= 0 && active < count ? active : count - 1;
  const sources = stepCellSources(step, needsSetup(cellTexts(model), below));
  const at = below + 1;
  const last = sources.length - 1;
  model.sharedModel.transact(() => {
    model.sharedModel.insertCells(
      at,
      sources.map((source, i) => ({
        cell_type: 'code' as const,
        source,
        metadata: i === last ? { tags: [MODEL_WRITTEN_TAG] } : {}
      }))
    );
  });
  return at + sources.length - 1;
}

/** Insert the step into the notebook panel below its active cell, and select the step's cell. */
export function insertIntoNotebook(panel: NotebookPanel, step: IStepCell): number {
  const notebook = panel.content;
  const model = notebook.model;
  if (!model) {
    throw new Error(`${panel.title.label} is not loaded yet`);
  }
  const index = insertStepCells(model, notebook.activeCellIndex, step);
  notebook.deselectAll();
  notebook.activeCellIndex = index;
  notebook.mode = 'command';
  const cell = notebook.widgets[index];
  if (cell) {
    void notebook.scrollToCell(cell);
  }
  return index;
}
