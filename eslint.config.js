/**
 * ESLint for the panel's sources and its browser tests (`npm run eslint:check`, part of
 * `npm test`). Beyond the recommended rules, it holds the layering of src/:
 *
 *   model, untrusted   import nothing of ours (pure: the view model; the inert rendermime)
 *   transport          model (the API client, the thread stream, the artifact cache)
 *   context.ts         transport (the services the plugin gives the React tree)
 *   notebook           transport, model (JupyterLab notebook commands)
 *   hooks              transport, model, context, notebook
 *   components         hooks, model, context; from transport only types
 *   widgets            all but index.ts; index.ts (plugin wiring) imports everything
 *
 * and no import cycle anywhere in src/. A test (src/__tests__/layers.spec.ts) shows that
 * an upward import fails the lint.
 */

const js = require('@eslint/js');
const prettier = require('eslint-config-prettier');
const importPlugin = require('eslint-plugin-import');
const reactHooks = require('eslint-plugin-react-hooks');
const tseslint = require('typescript-eslint');

/** What a folder (or file) of src/ may import of src/, besides itself. */
const LAYERS = {
  model: [],
  untrusted: [],
  'icons.ts': ['svg.d.ts'],
  transport: ['model'],
  'context.ts': ['transport'],
  notebook: ['transport', 'model'],
  hooks: ['transport', 'model', 'context.ts', 'notebook'],
  components: ['hooks', 'model', 'context.ts', 'transport']
};

const zones = [
  ...Object.entries(LAYERS).map(([layer, allowed]) => ({
    target: `./src/${layer}`,
    from: './src',
    except: [layer, ...allowed].map(name => `./${name}`),
    message: allowed.length
      ? `src/${layer} imports of src/ only ${allowed.map(name => `src/${name}`).join(', ')} (see eslint.config.js).`
      : `src/${layer} imports nothing of src/ (see eslint.config.js).`
  })),
  {
    target: './src/widgets',
    from: './src/index.ts',
    message: 'Nothing imports the plugin (src/index.ts): it wires the rest.'
  }
];

module.exports = tseslint.config(
  {
    ignores: [
      '**/node_modules/',
      'lib/',
      'coverage/',
      // The documentation site (make docs).
      'build/',
      'jupyter_analyst/labextension/',
      'ui-tests/test-results/',
      'ui-tests/playwright-report/',
      '.venv*/',
      // Generated from jupyter_analyst/server/openapi.yaml (npm run gen:api).
      'src/model/api.generated.ts'
    ]
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Formatting is Prettier's: the rules it would fight are off (before those below, which
  // turn `curly` on again, as JupyterLab does).
  prettier,
  {
    files: ['**/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: {
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        process: 'readonly'
      }
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' }
  },
  {
    files: ['src/**/*.{ts,tsx}', 'ui-tests/**/*.ts'],
    plugins: { import: importPlugin, 'react-hooks': reactHooks },
    settings: {
      'import/parsers': { '@typescript-eslint/parser': ['.ts', '.tsx'] },
      'import/resolver': { node: { extensions: ['.ts', '.tsx', '.js', '.json'] } },
      // Packages are not ours: the cycle check follows src/ only (and stays fast).
      'import/ignore': ['node_modules']
    },
    rules: {
      ...reactHooks.configs.recommended.rules,
      // JupyterLab's way of naming command ids (`CommandIDs.open`).
      '@typescript-eslint/no-namespace': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { args: 'none' }],
      curly: ['error', 'all'],
      eqeqeq: ['error', 'smart']
    }
  },
  {
    files: ['src/**/*.{ts,tsx}'],
    ignores: ['src/__tests__/**'],
    rules: {
      'import/no-restricted-paths': ['error', { basePath: __dirname, zones }],
      'import/no-cycle': ['error', { ignoreExternal: true }]
    }
  },
  {
    files: ['src/components/**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/transport/*'],
              allowTypeImports: true,
              message:
                'Components take the API through hooks: from src/transport, import only types.'
            }
          ]
        }
      ]
    }
  }
);
