/** The `run_python` tool: what a step printed and made; its steps are notebook cells. */

import { defined, holds, objects, strings, text } from './read';
import type { ToolArguments } from './registry';
import { builtin, type ViewOf } from './view';

export type RunPythonView = ViewOf<'run_python', 'stdout' | 'artifacts'>;
type MadeArtifact = RunPythonView['artifacts'][number];

/** A step's first comment, shortened: what it says it is for. */
function firstComment(args: ToolArguments): string | null {
  const code = text(args.code);
  if (code === undefined) {
    return null;
  }
  const comment = /^#\s*(.+)$/.exec(code.replace(/^\s+/, '').split('\n')[0]);
  if (comment === null) {
    return null;
  }
  const words = comment[1].trim();
  return words.length > 60 ? words.slice(0, 59) + '…' : words;
}

export const RUN_PYTHON = builtin<'run_python', RunPythonView>({
  tool: 'run_python',
  label: 'Python',
  parse(r) {
    if (!holds(r, 'stdout', 'artifacts', 'stderr', 'result')) {
      return null;
    }
    const notStored = objects(r.files_not_stored).map(f => ({
      path: text(f.path) ?? '',
      reason: text(f.reason) ?? ''
    }));
    return defined<RunPythonView>({
      stdout: text(r.stdout) ?? '',
      stderr: text(r.stderr),
      result: text(r.result),
      artifacts: objects(r.artifacts).map(a => ({
        id: text(a.id) ?? '',
        name: text(a.name) ?? '',
        type: (text(a.type) ?? 'file') as MadeArtifact['type']
      })),
      files_not_stored: notStored.length ? notStored : undefined,
      files_note: text(r.files_note),
      output_notes: Array.isArray(r.output_notes) ? strings(r.output_notes) : undefined
    });
  },
  makesCell: true,
  purpose: firstComment,
  named: view => view.artifacts,
  makes: 'file'
});
