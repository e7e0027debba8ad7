/**
 * The browser test of a server without a model: the same JupyterLab as the other tests
 * (`demo --lab`), its scripted model's address and key taken back, so the panel is on a
 * server that can answer nothing. Its test file is not a `*.spec.ts`, so the main
 * configuration does not pick it up.
 *
 *   npx playwright test -c playwright.nomodel.config.js
 */
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const shared = require('./playwright.config.js');

// Chosen once, by the main process: the workers inherit them through the environment.
if (!process.env.ANALYST_UI_NOMODEL_PORT) {
  process.env.ANALYST_UI_NOMODEL_PORT = execFileSync(
    process.env.ANALYST_PYTHON || 'python3',
    ['-c', 'from jupyter_analyst.testing.servers.jupyter import free_port; print(free_port())'],
    { encoding: 'utf-8' }
  ).trim();
}
if (!process.env.ANALYST_UI_NOMODEL_ROOT) {
  process.env.ANALYST_UI_NOMODEL_ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'analyst-nomodel-'));
}
const port = process.env.ANALYST_UI_NOMODEL_PORT;
const cli = process.env.ANALYST_CLI || 'jupyter-analyst';
const serverConfig = path.join(__dirname, 'jupyter_server_test_config.py');
// No model from the environment either.
const env = { ...process.env };
delete env.OPENAI_API_KEY;
delete env.OPENAI_BASE_URL;

module.exports = {
  ...shared,
  testDir: path.join(__dirname, 'nomodel'),
  testMatch: /.*\.nomodel\.ts$/,
  use: { ...shared.use, baseURL: `http://127.0.0.1:${port}` },
  webServer: {
    ...shared.webServer,
    command:
      `${cli} demo --lab --out ${process.env.ANALYST_UI_NOMODEL_ROOT} --port ${port} --no-browser ` +
      `-- --config=${serverConfig} --AnalystApp.model_base_url= --AnalystApp.api_key=`,
    url: `http://127.0.0.1:${port}/lab`,
    env
  }
};
