// Jest transforms the ES modules of JupyterLab's packages with babel (see jest.config.js).
module.exports = require('@jupyterlab/testing/lib/babel-config');
