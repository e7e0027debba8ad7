/**
 * A component rendered to static markup inside the panel's context (a client of a server
 * that is never called, no rendermime or commands): effects do not run, so what the
 * markup shows is what the view model alone makes.
 */

import { ServerConnection } from '@jupyterlab/services';
import * as React from 'react';
import { renderToStaticMarkup } from 'react-dom/server';

import { AnalystClient } from '../transport/api';
import { AnalystContext } from '../context';

export function renderStatic(element: JSX.Element): HTMLElement {
  const client = new AnalystClient(
    ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' })
  );
  const host = document.createElement('div');
  host.innerHTML = renderToStaticMarkup(
    <AnalystContext.Provider value={{ client, rendermime: null, commands: null, notebooks: null }}>
      {element}
    </AnalystContext.Provider>
  );
  return host;
}
