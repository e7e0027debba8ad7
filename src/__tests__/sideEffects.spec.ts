/**
 * No module of the panel does anything by being imported: the bundler (package.json's
 * `sideEffects` lists only the styles) drops a module imported only for what it does when
 * loaded, so a registration done that way works under jest and is lost in JupyterLab. A
 * registry starts from a list it imports (src/model/tools/builtin.ts,
 * src/components/tools/builtin.ts); only the extension's entry (src/index.ts) runs code.
 */

import * as path from 'path';
import * as ts from 'typescript';

import { cardOf } from '../components/tools/registry';
import { toolModel } from '../model/tools/registry';
import { parse, SRC, sources, where } from './panelSources';

const ENTRY = path.join(SRC, 'index.ts');

/** The statements of `source` run when it is loaded, beyond declarations, as "file:line". */
function loadEffects(source: ts.SourceFile): string[] {
  return source.statements
    .filter(statement => ts.isExpressionStatement(statement) || ts.isImportDeclaration(statement))
    .filter(
      statement =>
        ts.isExpressionStatement(statement) ||
        // `import './x'`: imported for its side effects alone.
        ((statement as ts.ImportDeclaration).importClause === undefined &&
          !/\.css['"]$/.test((statement as ts.ImportDeclaration).moduleSpecifier.getText()))
    )
    .map(where);
}

describe('importing a module of the panel', () => {
  it('finds a call or a bare import run at load, and nothing in a declaration', () => {
    const probe = parse(
      path.join(SRC, 'components', 'probe.ts'),
      [
        "import './registers';",
        "import '../style/base.css';",
        "import { x } from './x';",
        'register(x);',
        'export const y = make(x);',
        'function f(): void { register(x); }'
      ].join('\n')
    );
    expect(loadEffects(probe)).toEqual(['components/probe.ts:1', 'components/probe.ts:4']);
  });

  it('runs nothing: no source but the entry has a statement that acts at load', () => {
    expect(
      sources()
        .filter(file => file !== ENTRY)
        .flatMap(file => loadEffects(parse(file)))
    ).toEqual([]);
  });

  it("gives the built-in tools' models and cards from their registries alone", () => {
    for (const tool of ['run_sql', 'run_python', 'plan', 'find', 'clarify']) {
      expect(toolModel(tool)?.tool).toBe(tool);
      expect(cardOf(tool)).toBeDefined();
    }
    // A tool with no card of its own gets the generic one.
    expect(toolModel('read_cells')?.tool).toBe('read_cells');
    expect(cardOf('read_cells')).toBeUndefined();
  });
});
