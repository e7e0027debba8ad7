/**
 * Jest on the JupyterLab preset of @jupyterlab/testing (ts-jest for TypeScript, a jsdom
 * environment with JupyterLab's shims); tests are the .spec.ts(x) files under src/__tests__,
 * one folder per layer of src/.
 */
const jestJupyterLab = require('@jupyterlab/testing/lib/jest-config');

const esModules = [
  '@codemirror',
  '@jupyter/react-components',
  '@jupyter/web-components',
  '@jupyter/ydoc',
  '@microsoft/',
  'exenv-es6',
  '@jupyterlab/',
  'lib0',
  'marked',
  'nanoid',
  'vscode-ws-jsonrpc',
  'y-protocols',
  'y-websocket',
  'yjs'
].join('|');

const baseConfig = jestJupyterLab(__dirname);

module.exports = {
  ...baseConfig,
  automock: false,
  reporters: ['default'],
  collectCoverageFrom: ['src/**/*.{ts,tsx}', '!src/**/*.d.ts'],
  coverageReporters: ['text'],
  testRegex: 'src/__tests__/.*\\.spec\\.tsx?$',
  // The built extension and the browser tests have package.json files of their own, and so
  // do the JupyterLab packages in the venvs (.venv, .venv-jupyter-ai, ...).
  modulePathIgnorePatterns: [
    '<rootDir>/jupyter_analyst/',
    '<rootDir>/ui-tests/',
    '<rootDir>/\\.venv'
  ],
  transformIgnorePatterns: [`/node_modules/(?!${esModules}).+`]
};
