/// <reference types="node" />

/**
 * The event types are the generated ones (src/model/api.generated.ts, from the server's
 * OpenAPI description) and nothing else: no source of the panel declares a copy of an
 * event's fields, and the frame guard (`parseEvent`) reads each generated schema's fields,
 * with a fallback exactly where the schema has a default, and that default.
 *
 * The TypeScript compiler's own parser reads the generated file and every source of src/.
 */

import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

import { FIELDS, RECORD_FIELDS, type Fields } from '../../model/events';
import { GENERATED, nameOf, parse, sources, SRC } from '../panelSources';

/** The fields every event carries, which the guard reads on its own. */
const BASE = ['seq', 'thread_id', 'turn_id', 'ts'];

interface IProperty {
  /** The text of its `@default` tag ('' for an empty one); absent: it has no default. */
  default?: string;
  /** The string literal its type is, if it is one (an event's `type`). */
  literal?: string;
  /** The schemas its type names. */
  refs: string[];
}

type Schema = Map<string, IProperty>;

/** The schemas `node` names (`components["schemas"]["X"]`). */
function refsIn(node: ts.Node): string[] {
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (
      ts.isIndexedAccessTypeNode(n) &&
      ts.isLiteralTypeNode(n.indexType) &&
      ts.isStringLiteral(n.indexType.literal) &&
      n.objectType.getText().replace(/\s/g, '') === 'components["schemas"]'
    ) {
      out.push(n.indexType.literal.text);
    }
    ts.forEachChild(n, visit);
  };
  visit(node);
  return out;
}

/** The generated schemas that are objects, by name, and the members of the `Event` union. */
function readGenerated(): { schemas: Map<string, Schema>; events: string[] } {
  const file = parse(GENERATED);
  let members: ts.NodeArray<ts.TypeElement> | undefined;
  file.forEachChild(node => {
    if (ts.isInterfaceDeclaration(node) && node.name.text === 'components') {
      const schemas = node.members.find(m => nameOf(m) === 'schemas');
      if (schemas && ts.isPropertySignature(schemas) && schemas.type) {
        members = (schemas.type as ts.TypeLiteralNode).members;
      }
    }
  });
  if (members === undefined) {
    throw new Error('api.generated.ts has no components.schemas');
  }
  const schemas = new Map<string, Schema>();
  let events: string[] = [];
  for (const member of members) {
    const name = nameOf(member);
    if (name === undefined || !ts.isPropertySignature(member) || !member.type) {
      continue;
    }
    if (name === 'Event') {
      events = refsIn(member.type);
    }
    if (!ts.isTypeLiteralNode(member.type)) {
      continue;
    }
    const schema: Schema = new Map();
    for (const prop of member.type.members) {
      const propName = nameOf(prop);
      if (propName === undefined || !ts.isPropertySignature(prop) || !prop.type) {
        continue;
      }
      const tag = ts.getJSDocTags(prop).find(t => t.tagName.text === 'default');
      const literal =
        ts.isLiteralTypeNode(prop.type) && ts.isStringLiteral(prop.type.literal)
          ? prop.type.literal.text
          : undefined;
      schema.set(propName, {
        default: tag === undefined ? undefined : (ts.getTextOfJSDocComment(tag.comment) ?? ''),
        literal,
        refs: refsIn(prop.type)
      });
    }
    schemas.set(name, schema);
  }
  return { schemas, events };
}

const { schemas, events: EVENT_SCHEMAS } = readGenerated();

function schema(name: string): Schema {
  const found = schemas.get(name);
  if (found === undefined) {
    throw new Error(`no generated schema ${name}`);
  }
  return found;
}

/** An event schema's `type` literal. */
function typeOf(name: string): string {
  const literal = schema(name).get('type')?.literal;
  if (literal === undefined) {
    throw new Error(`${name} has no type literal`);
  }
  return literal;
}

/** The schemas events carry inside them (a turn's ledger, a plan's stages), however deep. */
function carried(): string[] {
  const seen = new Set<string>();
  const queue = EVENT_SCHEMAS.flatMap(name => [...schema(name).values()].flatMap(p => p.refs));
  while (queue.length) {
    const name = queue.pop() as string;
    if (!seen.has(name) && schemas.has(name)) {
      seen.add(name);
      queue.push(...[...schema(name).values()].flatMap(p => p.refs));
    }
  }
  return [...seen].sort();
}

/**
 * The generated event types a declaration of `code` copies by hand, each as
 * "Name (a copy of Schema)": one declaring an event's `type` literal, all the common event
 * fields, or the fields of an event (beyond the common ones and its type) or of a record an
 * event carries, when there are three or more of them: all of them, or all but one of five
 * or more (a copy the schema has outgrown).
 */
function copiesIn(code: string, fileName = 'probe.ts'): string[] {
  const file = parse(fileName, code);
  const byLiteral = new Map(EVENT_SCHEMAS.map(name => [typeOf(name), name]));
  const fieldSets: [string, string[]][] = [
    ...EVENT_SCHEMAS.map((name): [string, string[]] => [
      name,
      [...schema(name).keys()].filter(f => f !== 'type' && !BASE.includes(f))
    ]),
    ...carried().map((name): [string, string[]] => [name, [...schema(name).keys()]])
  ].filter(([, fields]) => fields.length >= 3);
  const out = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isInterfaceDeclaration(node) || ts.isTypeLiteralNode(node)) {
      const label = ts.isInterfaceDeclaration(node)
        ? node.name.text
        : `a type at line ${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
      const members = new Map<string, ts.TypeElement>();
      node.members.forEach(m => {
        const name = nameOf(m);
        if (name !== undefined) {
          members.set(name, m);
        }
      });
      const type = members.get('type');
      if (type && ts.isPropertySignature(type) && type.type && ts.isLiteralTypeNode(type.type)) {
        const literal = type.type.literal;
        if (ts.isStringLiteral(literal) && byLiteral.has(literal.text)) {
          out.add(`${label} (a copy of ${byLiteral.get(literal.text)})`);
        }
      }
      if (BASE.every(f => members.has(f))) {
        out.add(`${label} (a copy of the common event fields)`);
      }
      for (const [name, fields] of fieldSets) {
        const copied = fields.filter(f => members.has(f)).length;
        if (copied === fields.length || (fields.length >= 5 && copied === fields.length - 1)) {
          out.add(`${label} (a copy of ${name})`);
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return [...out];
}

describe('the generated schemas this spec reads', () => {
  it('are the seventeen events and the records they carry', () => {
    expect(EVENT_SCHEMAS).toHaveLength(17);
    expect(carried()).toEqual([
      'Citation',
      'DefinitionCitation',
      'Derivation',
      'Ledger',
      'MetricSuggestion',
      'OperandCell',
      'PlanStageView',
      'PlanStepView',
      'Price',
      'Saved',
      'UnsupportedClaim',
      'Usage'
    ]);
  });
});

describe('no hand-written event type', () => {
  it('is declared anywhere in the panel’s sources', () => {
    const found = sources().flatMap(file =>
      copiesIn(fs.readFileSync(file, 'utf8'), file).map(
        copy => `${path.relative(SRC, file)}: ${copy}`
      )
    );
    expect(found).toEqual([]);
  });

  it.each<[string, string, string[]]>([
    [
      'an event interface',
      "interface TurnStarted extends Base { type: 'turn_started'; prompt: string; model: string; rerun: boolean }",
      ['TurnStarted (a copy of TurnStarted)']
    ],
    [
      'an event as a type literal, its type left out',
      'export type Done = Base & { call_id: string; step_id: string; step_call_id: string; status: string; reused: boolean };',
      ['a type at line 1 (a copy of PlanStepChanged)']
    ],
    [
      'the common fields',
      'interface Base { seq: number; thread_id: string; turn_id: string; ts: string }',
      ['Base (a copy of the common event fields)']
    ],
    [
      'a record an event carries, a field short',
      'interface Tokens { prompt_tokens: number; completion_tokens: number; counted_by: string; cost_usd: number | null }',
      ['Tokens (a copy of Usage)']
    ]
  ])('is found when one is: %s', (_what, code, expected) => {
    expect(copiesIn(code)).toEqual(expected);
  });

  it('is not found in a view of an event (its own names) or a name for a generated one', () => {
    expect(
      copiesIn(
        [
          "type Started = components['schemas']['TurnStarted'];",
          'interface Card { kind: "tool"; callId: string; tool: string; status: string }'
        ].join('\n')
      )
    ).toEqual([]);
  });
});

/** A fallback as the generated file's `@default` tag writes it. */
function sameDefault(fallback: unknown, tag: string): boolean {
  if (typeof fallback === 'string') {
    return tag === fallback;
  }
  try {
    return JSON.stringify(JSON.parse(tag)) === JSON.stringify(fallback);
  } catch {
    return false;
  }
}

/** Where `table` differs from generated `schema` (fields left out of it: `skip`). */
function differences(table: Fields, name: string, skip: string[]): string[] {
  const fields = [...schema(name).entries()].filter(([field]) => !skip.includes(field));
  const out: string[] = [];
  const missing = fields.map(([f]) => f).filter(f => !(f in table));
  const extra = Object.keys(table).filter(f => !fields.some(([g]) => g === f));
  if (missing.length || extra.length) {
    out.push(`${name}: the guard lacks [${missing}] and reads [${extra}]`);
  }
  for (const [field, prop] of fields) {
    const fallback = table[field]?.fallback;
    if (prop.default === undefined && fallback !== undefined) {
      out.push(`${name}.${field}: a fallback where the server has no default`);
    } else if (prop.default !== undefined && fallback === undefined) {
      out.push(`${name}.${field}: no fallback for the server's default ${prop.default}`);
    } else if (prop.default !== undefined && !sameDefault(fallback, prop.default)) {
      out.push(
        `${name}.${field}: falls back to ${JSON.stringify(fallback)}, the server's default is ${prop.default}`
      );
    }
  }
  return out;
}

describe('the frame guard', () => {
  it.each(EVENT_SCHEMAS)(
    'reads the fields of %s, with the server’s defaults where it has them',
    name => {
      const table = (FIELDS as Record<string, Fields>)[typeOf(name)];
      expect(table).toBeDefined();
      expect(differences(table, name, [...BASE, 'type'])).toEqual([]);
    }
  );

  it.each(carried())('reads the fields of %s, with the server’s defaults', name => {
    expect(RECORD_FIELDS[name]).toBeDefined();
    expect(differences(RECORD_FIELDS[name], name, [])).toEqual([]);
  });

  it('reads no event type the server does not send', () => {
    expect(Object.keys(FIELDS).sort()).toEqual(EVENT_SCHEMAS.map(typeOf).sort());
  });
});
