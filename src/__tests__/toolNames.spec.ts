/// <reference types="node" />

/**
 * Only a tool's own modules name it: no string literal that is a built-in tool's name is in
 * src/ outside src/model/tools/<tool>.ts and src/components/tools/<tool>.tsx (tests and the
 * generated file aside), so what the panel does with a tool is found in its modules, and
 * everything else asks the registry. The names are the generated `ToolResults` schema's
 * (the server's tool registry, through the OpenAPI description), read by the TypeScript
 * compiler's own parser, as is every source of src/.
 *
 * One use of such a string is not a tool's name: the `plan` event's type (a case of a switch
 * on an event's `type`), which its tool shares.
 */

import * as path from 'path';
import * as ts from 'typescript';

import { toolModel } from '../model';
import { GENERATED, nameOf, parse, SRC, sources, where } from './panelSources';

/** The property names of the generated `ToolResults` schema: the built-in tools. */
function toolNames(): string[] {
  let names: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isPropertySignature(node) && nameOf(node) === 'ToolResults' && node.type) {
      names = (node.type as ts.TypeLiteralNode).members.map(m => nameOf(m) ?? '');
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(parse(GENERATED));
  return names;
}

const TOOLS = toolNames();

/** Whether `file` is one of `tool`'s own modules. */
function ownModule(file: string, tool: string): boolean {
  const relative = path.relative(SRC, file).split(path.sep).join('/');
  return relative === `model/tools/${tool}.ts` || relative === `components/tools/${tool}.tsx`;
}

/** A case of a switch on something's `type`: an event's type, not a tool's name. */
function eventTypeCase(node: ts.Node): boolean {
  const clause = node.parent;
  if (!ts.isCaseClause(clause) || clause.expression !== node) {
    return false;
  }
  const switched = clause.parent.parent.expression;
  return ts.isPropertyAccessExpression(switched) && switched.name.text === 'type';
}

/** Each string literal of `source` that names a built-in tool outside its own modules, as "file:line 'name'". */
function namesIn(source: ts.SourceFile): string[] {
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) &&
      TOOLS.includes(node.text) &&
      !ownModule(source.fileName, node.text) &&
      !eventTypeCase(node)
    ) {
      out.push(`${where(node)} '${node.text}'`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe("a tool's name", () => {
  it('is read from the generated types: the ten built-in tools, each registered', () => {
    expect(TOOLS).toHaveLength(10);
    expect(TOOLS).toEqual(expect.arrayContaining(['run_sql', 'run_python', 'plan', 'find']));
    for (const tool of TOOLS) {
      expect(toolModel(tool)?.tool).toBe(tool);
    }
  });

  it('is found wherever a source names it: a comparison, a list, a case, a key, a type', () => {
    const probe = parse(
      path.join(SRC, 'components', 'probe.tsx'),
      [
        "if (card.tool === 'run_sql') {}",
        "const CELL_TOOLS = ['run_python'];",
        "switch (card.tool) { case 'plan': break; }",
        "const LABELS = { 'list_tables': 'Tables' };",
        'type Kind = `clarify` | "find";',
        "switch (event.type) { case 'plan': break; }"
      ].join('\n')
    );
    expect(namesIn(probe).map(found => found.replace(/^.*:(\d+) /, '$1 '))).toEqual([
      "1 'run_sql'",
      "2 'run_python'",
      "3 'plan'",
      "4 'list_tables'",
      "5 'clarify'",
      "5 'find'"
    ]);
    // In the tool's own module, it is its name.
    expect(
      namesIn(parse(path.join(SRC, 'model', 'tools', 'run_sql.ts'), "tool: 'run_sql'"))
    ).toEqual([]);
  });

  it("is in no source of src/ but that tool's own modules", () => {
    expect(sources().flatMap(file => namesIn(parse(file)))).toEqual([]);
  });
});
