/// <reference types="node" />

/**
 * The panel's sources as the TypeScript compiler's own parser reads them, for the specs that
 * hold a rule over every source of src/ (tool names, event types, import side effects).
 */

import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

/** src/. */
export const SRC = path.resolve(__dirname, '..');
/** The types generated from the server's OpenAPI description. */
export const GENERATED = path.join(SRC, 'model', 'api.generated.ts');

/** `file` parsed (its text, or `code` in its place). */
export function parse(file: string, code = fs.readFileSync(file, 'utf8')): ts.SourceFile {
  return ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true);
}

/** The name a declaration or member has, when it is an identifier or a string. */
export function nameOf(node: ts.Node): string | undefined {
  const name = (node as { name?: ts.Node }).name;
  return name !== undefined && (ts.isIdentifier(name) || ts.isStringLiteral(name))
    ? name.text
    : undefined;
}

/** The panel's sources under `dir`: src/ but its tests and the generated file. */
export function sources(dir: string = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const at = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      return entry.name === '__tests__' ? [] : sources(at);
    }
    return /\.tsx?$/.test(entry.name) && at !== GENERATED ? [at] : [];
  });
}

/** Where `node` is in its file, as "file:line" relative to src/. */
export function where(node: ts.Node): string {
  const file = node.getSourceFile();
  const line = file.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  return `${path.relative(SRC, file.fileName)}:${line}`;
}
