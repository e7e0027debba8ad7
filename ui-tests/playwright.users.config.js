/**
 * The two-user browser test: its own JupyterLab, whose user is the one the
 * `X-Analyst-Test-User` header names (jupyter_server_users_config.py), so each browser
 * context, given its header with `extraHTTPHeaders`, is a different user. The other tests
 * run on a server without it (playwright.config.js), where no header is needed; this one's
 * test file is not a `*.spec.ts`, so that configuration does not pick it up.
 *
 *   npx playwright test -c playwright.users.config.js
 */
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const shared = require('./playwright.config.js');

// Chosen once, by the main process: the workers inherit them through the environment.
if (!process.env.ANALYST_UI_USERS_PORT) {
  process.env.ANALYST_UI_USERS_PORT = execFileSync(
    process.env.ANALYST_PYTHON || 'python3',
    ['-c', 'from jupyter_analyst.testing.servers.jupyter import free_port; print(free_port())'],
    { encoding: 'utf-8' }
  ).trim();
}
if (!process.env.ANALYST_UI_USERS_ROOT) {
  process.env.ANALYST_UI_USERS_ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'analyst-users-'));
}
const port = process.env.ANALYST_UI_USERS_PORT;
const cli = process.env.ANALYST_CLI || 'jupyter-analyst';
const serverConfig = path.join(__dirname, 'jupyter_server_users_config.py');

module.exports = {
  ...shared,
  testDir: path.join(__dirname, 'users'),
  testMatch: /.*\.users\.ts$/,
  use: { ...shared.use, baseURL: `http://127.0.0.1:${port}` },
  webServer: {
    ...shared.webServer,
    command:
      `${cli} demo --lab --out ${process.env.ANALYST_UI_USERS_ROOT} --port ${port} --no-browser ` +
      `-- --config=${serverConfig}`,
    url: `http://127.0.0.1:${port}/lab`
  }
};
