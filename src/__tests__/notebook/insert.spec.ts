// The model's module alone: the package's index pulls in widgets jsdom does not need.
import { NotebookModel } from '@jupyterlab/notebook/lib/model';

import { IStepCell } from '../../transport/api';
import {
  callsConnect,
  cellTexts,
  insertStepCells,
  MODEL_WRITTEN_COMMENT,
  MODEL_WRITTEN_TAG,
  needsSetup,
  SETUP_COMMENT,
  stepCellSources
} from '../../notebook/insert';

/** A step's cell as inserted: the model's code under the line that says whose it is. */
const modelWritten = (code: string): string => `${MODEL_WRITTEN_COMMENT}\n${code}`;

/** A step cell as `GET threads/{id}/steps/{call_id}/cell` answers for the demo's SQL step. */
const SQL_STEP: IStepCell = {
  tool: 'run_sql',
  call_id: 'call_sql_1',
  name: 'revenue_by_region',
  source: 'revenue_by_region = analyst.sql("""\nselect 1 as x\n""")',
  setup: "from jupyter_analyst import runtime as analyst\nanalyst.connect('/data/sales.duckdb')"
};

const PYTHON_STEP: IStepCell = {
  tool: 'run_python',
  call_id: 'call_py_1',
  name: null,
  source: 'revenue_by_region.head()\n\n',
  setup: SQL_STEP.setup
};

function notebookOf(...cells: Array<[string, string]>): NotebookModel {
  const model = new NotebookModel();
  model.sharedModel.insertCells(
    0,
    cells.map(([cell_type, source]) => ({
      cell_type: cell_type as 'code' | 'markdown',
      source,
      metadata: {}
    }))
  );
  return model;
}

describe('callsConnect', () => {
  it('finds the runtime helper opening a source', () => {
    expect(callsConnect(SQL_STEP.setup)).toBe(true);
    expect(callsConnect('analyst . connect (source)')).toBe(true);
    expect(callsConnect('x = 1\nanalyst.connect(source)  # the set-up')).toBe(true);
  });

  it('does not count comments, other names or mere mentions', () => {
    expect(callsConnect('# analyst.connect(source)')).toBe(false);
    expect(callsConnect('   # analyst.connect(source)')).toBe(false);
    expect(callsConnect('myanalyst.connect(source)')).toBe(false);
    expect(callsConnect('analyst.sql("select 1")')).toBe(false);
    expect(callsConnect('')).toBe(false);
  });
});

describe('needsSetup', () => {
  it('is needed in an empty notebook and one that never connects', () => {
    expect(needsSetup([], -1)).toBe(true);
    expect(needsSetup([{ cell_type: 'code', source: 'import pandas as pd' }], 0)).toBe(true);
  });

  it('is not needed when a code cell at or above the insertion point connects', () => {
    const cells = [
      { cell_type: 'code', source: SQL_STEP.setup },
      { cell_type: 'code', source: 'x = 1' }
    ];
    expect(needsSetup(cells, 1)).toBe(false);
    expect(needsSetup(cells, 0)).toBe(false);
  });

  it('is needed when the only connect is below the insertion point (it would run after)', () => {
    const cells = [
      { cell_type: 'code', source: 'x = 1' },
      { cell_type: 'code', source: SQL_STEP.setup }
    ];
    expect(needsSetup(cells, 0)).toBe(true);
  });

  it('does not count markdown that shows the set-up', () => {
    expect(needsSetup([{ cell_type: 'markdown', source: SQL_STEP.setup }], 0)).toBe(true);
  });
});

describe('stepCellSources', () => {
  it('puts the set-up in a cell of its own before the step when needed', () => {
    expect(stepCellSources(SQL_STEP, true)).toEqual([
      `${SETUP_COMMENT}\n${SQL_STEP.setup}`,
      modelWritten(`${SQL_STEP.source}\nrevenue_by_region`)
    ]);
  });

  it("opens the step's cell with one comment line saying the model wrote it and it runs unsandboxed", () => {
    for (const step of [SQL_STEP, PYTHON_STEP]) {
      const [source] = stepCellSources(step, false);
      const [first, ...rest] = source.split('\n');
      expect(first).toBe(MODEL_WRITTEN_COMMENT);
      expect(first.startsWith('# ')).toBe(true);
      expect(first).toMatch(/language model/);
      expect(first).toMatch(/outside the sandbox/);
      expect(rest.join('\n')).toContain(step.source.trim());
    }
  });

  it('ends a SQL step with its dataset, so running it shows the DataFrame', () => {
    const [source] = stepCellSources(SQL_STEP, false);
    expect(source.split('\n').pop()).toBe('revenue_by_region');
    // The assignment still opens the cell's code: the helper names the dataset after it.
    expect(source.split('\n')[1].startsWith('revenue_by_region = analyst.sql(')).toBe(true);
  });

  it('keeps a Python step as it ran, trailing blank lines trimmed', () => {
    expect(stepCellSources(PYTHON_STEP, false)).toEqual([modelWritten('revenue_by_region.head()')]);
  });
});

describe('insertStepCells (a real notebook model)', () => {
  it('inserts the set-up and the step below the active cell of a notebook that never connected', () => {
    const model = notebookOf(
      ['markdown', '# Notes'],
      ['code', 'import pandas as pd'],
      ['code', 'last']
    );
    const index = insertStepCells(model, 1, SQL_STEP);
    expect(index).toBe(3);
    expect(cellTexts(model).map(c => c.source)).toEqual([
      '# Notes',
      'import pandas as pd',
      `${SETUP_COMMENT}\n${SQL_STEP.setup}`,
      modelWritten(`${SQL_STEP.source}\nrevenue_by_region`),
      'last'
    ]);
    expect(
      cellTexts(model)
        .slice(2, 4)
        .every(c => c.cell_type === 'code')
    ).toBe(true);
    // The step's cell is tagged as the model's; the set-up (the product's own code) is not.
    expect(model.cells.get(3).sharedModel.getMetadata('tags')).toEqual([MODEL_WRITTEN_TAG]);
    expect(model.cells.get(2).sharedModel.getMetadata('tags')).toBeUndefined();
  });

  it('inserts the step alone once a cell above connects', () => {
    const model = notebookOf(['code', SQL_STEP.setup], ['code', 'x = 1']);
    const index = insertStepCells(model, 1, PYTHON_STEP);
    expect(index).toBe(2);
    expect(cellTexts(model).map(c => c.source)).toEqual([
      SQL_STEP.setup,
      'x = 1',
      modelWritten('revenue_by_region.head()')
    ]);
  });

  it('appends at the end when no cell is active', () => {
    const model = notebookOf(['code', SQL_STEP.setup]);
    expect(insertStepCells(model, -1, PYTHON_STEP)).toBe(1);
    expect(model.cells.length).toBe(2);
  });

  it('fills an empty notebook with the set-up and the step', () => {
    const model = new NotebookModel();
    // A new notebook's model may hold no cells until its widget adds one.
    const before = model.cells.length;
    const index = insertStepCells(model, -1, SQL_STEP);
    expect(model.cells.length).toBe(before + 2);
    expect(index).toBe(before + 1);
    expect(callsConnect(model.cells.get(before).sharedModel.getSource())).toBe(true);
  });
});
