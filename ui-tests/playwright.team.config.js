/**
 * The team browser test: its own JupyterLab (jupyter_server_team_config.py) with users named
 * by the `X-Analyst-Test-User` header, a context folder only ann may verify answers into, and
 * a daily token budget per user. Its test file is not a `*.spec.ts`, so the other
 * configurations do not pick it up.
 *
 *   npx playwright test -c playwright.team.config.js
 */
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const shared = require('./playwright.config.js');

// Chosen once, by the main process: the workers inherit them through the environment.
if (!process.env.ANALYST_UI_TEAM_PORT) {
  process.env.ANALYST_UI_TEAM_PORT = execFileSync(
    process.env.ANALYST_PYTHON || 'python3',
    ['-c', 'from jupyter_analyst.testing.servers.jupyter import free_port; print(free_port())'],
    { encoding: 'utf-8' }
  ).trim();
}
if (!process.env.ANALYST_UI_TEAM_ROOT) {
  process.env.ANALYST_UI_TEAM_ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'analyst-team-'));
}
const port = process.env.ANALYST_UI_TEAM_PORT;
const cli = process.env.ANALYST_CLI || 'jupyter-analyst';
const serverConfig = path.join(__dirname, 'jupyter_server_team_config.py');

module.exports = {
  ...shared,
  testDir: path.join(__dirname, 'team'),
  testMatch: /.*\.team\.ts$/,
  use: { ...shared.use, baseURL: `http://127.0.0.1:${port}` },
  webServer: {
    ...shared.webServer,
    command:
      `${cli} demo --lab --out ${process.env.ANALYST_UI_TEAM_ROOT} --port ${port} --no-browser ` +
      `-- --config=${serverConfig}`,
    url: `http://127.0.0.1:${port}/lab`
  }
};
