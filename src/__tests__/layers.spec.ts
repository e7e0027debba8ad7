/// <reference types="node" />

/**
 * The layering of src/ (eslint.config.js) holds: files written into a layer with an
 * import it may not make fail the lint, with the rule that says why, and the same
 * files with allowed imports pass. The real ESLint runs on real files, as `npm test`
 * runs it.
 */

import { execFile } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.resolve(__dirname, '..', '..');
const ESLINT = path.join(path.dirname(require.resolve('eslint')), '..', 'bin', 'eslint.js');

/** A file to write into src/ for the lint, and what the lint should say of it. */
interface IProbe {
  /** Where, under src/ (its name gets a unique suffix). */
  at: string;
  code: string;
  /** The rule that must refuse it; null when it must pass. */
  refusedBy: string | null;
}

const PROBES: Record<string, IProbe> = {
  'model imports transport': {
    at: 'model/probe.ts',
    code: "import { AnalystClient } from '../transport/api';\nexport const probe = AnalystClient;\n",
    refusedBy: 'import/no-restricted-paths'
  },
  'model imports model': {
    at: 'model/probe.ts',
    code: "import { reduce } from './reducer';\nexport const probe = reduce;\n",
    refusedBy: null
  },
  'transport imports a hook': {
    at: 'transport/probe.ts',
    code: "import { useThread } from '../hooks/useThread';\nexport const probe = useThread;\n",
    refusedBy: 'import/no-restricted-paths'
  },
  'hooks import a component': {
    at: 'hooks/probe.ts',
    code: "import { Sidebar } from '../components/Sidebar';\nexport const probe = Sidebar;\n",
    refusedBy: 'import/no-restricted-paths'
  },
  'hooks import transport, model, context and notebook': {
    at: 'hooks/probe.ts',
    code: [
      "import { useAnalyst } from '../context';",
      "import { reduce } from '../model';",
      "import { insertIntoNotebook } from '../notebook/insert';",
      "import { stepCell } from '../transport/api';",
      'export const probe = [useAnalyst, reduce, insertIntoNotebook, stepCell];',
      ''
    ].join('\n'),
    refusedBy: null
  },
  'a component imports a notebook command': {
    at: 'components/probe.ts',
    code: "import { insertIntoNotebook } from '../notebook/insert';\nexport const probe = insertIntoNotebook;\n",
    refusedBy: 'import/no-restricted-paths'
  },
  'a card calls the API itself': {
    at: 'components/cards/probe.ts',
    code: "import { stepCell } from '../../transport/api';\nexport const probe = stepCell;\n",
    refusedBy: '@typescript-eslint/no-restricted-imports'
  },
  'a card names a type of the API': {
    at: 'components/cards/probe.ts',
    code: "import type { IStepCell } from '../../transport/api';\nexport type Probe = IStepCell;\n",
    refusedBy: null
  },
  'untrusted imports the model': {
    at: 'untrusted/probe.ts',
    code: "import { reduce } from '../model';\nexport const probe = reduce;\n",
    refusedBy: 'import/no-restricted-paths'
  },
  'a widget imports the plugin': {
    at: 'widgets/probe.ts',
    code: "import plugin from '../index';\nexport const probe = plugin;\n",
    refusedBy: 'import/no-restricted-paths'
  }
};

interface ILintMessage {
  ruleId: string | null;
  message: string;
}

interface ILintResult {
  filePath: string;
  messages: ILintMessage[];
}

/** ESLint's JSON report on `files` (its exit status is 1 when it found problems). */
function lint(files: string[]): Promise<ILintResult[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [ESLINT, '--format', 'json', '--no-warn-ignored', ...files],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error && error.code !== 1) {
          reject(new Error(`eslint failed (${error.code}): ${stderr}`));
          return;
        }
        resolve(JSON.parse(stdout) as ILintResult[]);
      }
    );
  });
}

/** The problems found in each probe, by name; also those of a module cycle's two files. */
const found = new Map<string, ILintMessage[]>();
const written: string[] = [];

function write(relative: string, code: string): string {
  const file = path.join(ROOT, 'src', relative);
  fs.writeFileSync(file, code, { flag: 'wx' });
  written.push(file);
  return file;
}

beforeAll(async () => {
  const byFile = new Map<string, string>();
  try {
    Object.entries(PROBES).forEach(([name, probe], index) => {
      const unique = probe.at.replace(/\.ts$/, `Layer${process.pid}x${index}.ts`);
      byFile.set(write(unique, probe.code), name);
    });
    const a = `model/cycleLayer${process.pid}a`;
    const b = `model/cycleLayer${process.pid}b`;
    const name = (file: string): string => path.basename(file);
    byFile.set(
      write(`${a}.ts`, `import { b } from './${name(b)}';\nexport const a = (): unknown => b;\n`),
      'cycle a'
    );
    byFile.set(
      write(`${b}.ts`, `import { a } from './${name(a)}';\nexport const b = (): unknown => a;\n`),
      'cycle b'
    );
    for (const result of await lint([...byFile.keys()])) {
      found.set(byFile.get(result.filePath)!, result.messages);
    }
  } finally {
    for (const file of written) {
      fs.rmSync(file, { force: true });
    }
  }
}, 180_000);

describe('the layers of src/', () => {
  it.each(Object.entries(PROBES))('%s', (name, probe) => {
    const rules = (found.get(name) ?? []).map(m => m.ruleId);
    expect(found.has(name)).toBe(true);
    if (probe.refusedBy === null) {
      expect(found.get(name)).toEqual([]);
    } else {
      expect(rules).toEqual([probe.refusedBy]);
    }
  });

  it('refuses a cycle of imports within a layer', () => {
    expect(found.get('cycle a')?.map(m => m.ruleId)).toEqual(['import/no-cycle']);
    expect(found.get('cycle b')?.map(m => m.ruleId)).toEqual(['import/no-cycle']);
  });

  it('says which layers the refused import may use', () => {
    const [refusal] = found.get('transport imports a hook') ?? [];
    expect(refusal.message).toContain('src/transport imports of src/ only src/model');
  });

  it('leaves no probe behind', () => {
    expect(written.filter(file => fs.existsSync(file))).toEqual([]);
  });
});
