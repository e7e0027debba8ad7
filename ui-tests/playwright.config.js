/**
 * Browser tests of the Data analyst panel: galata's Playwright defaults, headless Debian
 * Chromium, and a real JupyterLab started as `make lab` starts it (the sample data and
 * the scripted model), on a free port, its root in a new temporary folder.
 */
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

// Chosen once, by the main process: the workers inherit them through the environment.
if (!process.env.ANALYST_UI_PORT) {
  process.env.ANALYST_UI_PORT = execFileSync(
    process.env.ANALYST_PYTHON || 'python3',
    ['-c', 'from jupyter_analyst.testing.servers.jupyter import free_port; print(free_port())'],
    { encoding: 'utf-8' }
  ).trim();
}
if (!process.env.ANALYST_UI_ROOT) {
  process.env.ANALYST_UI_ROOT = fs.mkdtempSync(path.join(os.tmpdir(), 'analyst-ui-'));
}
const port = process.env.ANALYST_UI_PORT;
const cli = process.env.ANALYST_CLI || 'jupyter-analyst';
const serverConfig = path.join(__dirname, 'jupyter_server_test_config.py');

module.exports = {
  ...baseConfig,
  reporter: [['list'], ['html', { open: 'never' }]],
  // One JupyterLab, one scripted model: tests run one after another.
  workers: 1,
  timeout: 120 * 1000,
  expect: { timeout: 60 * 1000 },
  use: {
    ...baseConfig.use,
    baseURL: `http://127.0.0.1:${port}`,
    headless: true,
    screenshot: 'on',
    trace: 'retain-on-failure',
    video: 'off',
    launchOptions: {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic'
      ]
    }
  },
  webServer: {
    command:
      `${cli} demo --lab --out ${process.env.ANALYST_UI_ROOT} --port ${port} --no-browser ` +
      `-- --config=${serverConfig}`,
    url: `http://127.0.0.1:${port}/lab`,
    timeout: 120 * 1000,
    reuseExistingServer: false,
    // Jupyter stops its kernels on SIGTERM (a SIGKILL would leave them running).
    gracefulShutdown: { signal: 'SIGTERM', timeout: 20 * 1000 },
    stdout: 'pipe',
    stderr: 'pipe'
  }
};
