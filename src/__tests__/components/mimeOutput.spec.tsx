/**
 * A rendered output unmounted with its card (a thread closed, a card folded when its step
 * turns out reused): React removes the nodes before the clean-up disposes the renderer,
 * and the panel must not throw.
 */

import { Sanitizer } from '@jupyterlab/apputils';
import { RenderMimeRegistry, standardRendererFactories } from '@jupyterlab/rendermime';
import { ServerConnection } from '@jupyterlab/services';
import * as React from 'react';
import { act } from 'react';

import { MimeOutput } from '../../components/MimeOutput';
import { AnalystContext } from '../../context';
import { AnalystClient } from '../../transport/api';
import { mountedRoot } from '../dom';

const { host, root } = mountedRoot();

it('unmounts a rendered output without throwing', async () => {
  const rendermime = new RenderMimeRegistry({
    initialFactories: standardRendererFactories,
    sanitizer: new Sanitizer()
  });
  const client = new AnalystClient(
    ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' })
  );
  const errors: unknown[] = [];
  const onError = (event: ErrorEvent): void => {
    errors.push(event.error);
    event.preventDefault();
  };
  window.addEventListener('error', onError);
  try {
    await act(async () => {
      root().render(
        <AnalystContext.Provider value={{ client, rendermime, commands: null, notebooks: null }}>
          <MimeOutput bundle={{ data: { 'text/plain': 'region  revenue' } }} />
        </AnalystContext.Provider>
      );
    });
    await act(async () => {
      await new Promise(resolve => setTimeout(resolve, 0));
    });
    expect(host().textContent).toContain('region  revenue');
    await act(async () => {
      root().render(<div>gone</div>);
    });
    expect(host().textContent).toBe('gone');
  } finally {
    window.removeEventListener('error', onError);
  }
  expect(errors).toEqual([]);
});
