import type { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { Widget } from '@lumino/widgets';
import * as React from 'react';
import { act } from 'react';

import { MimeOutput } from '../../components/MimeOutput';
import { AnalystContext } from '../../context';
import type { AnalystClient } from '../../transport/api';
import { mountedRoot } from '../dom';

const mounted = mountedRoot();

/** A renderer as JupyterLab's are: a Lumino widget that renders a model into its node. */
class FakeRenderer extends Widget {
  async renderModel(model: { data: Record<string, unknown> }): Promise<void> {
    this.node.textContent = String(model.data['text/plain']);
  }
}

describe('MimeOutput', () => {
  it('lets go of its renderer when a whole conversation leaves the page at once', async () => {
    const made: FakeRenderer[] = [];
    const rendermime = {
      preferredMimeType: () => 'text/plain',
      createRenderer: () => {
        const renderer = new FakeRenderer();
        made.push(renderer);
        return renderer;
      }
    } as unknown as IRenderMimeRegistry;
    const services = { client: {} as AnalystClient, rendermime, commands: null, notebooks: null };
    function Conversation({ shown }: { shown: boolean }): JSX.Element {
      // "Back to threads": the conversation, and every output in it, goes in one render.
      return (
        <AnalystContext.Provider value={services}>
          {shown ? (
            <section>
              <MimeOutput bundle={{ data: { 'text/plain': 'a chart' } }} />
            </section>
          ) : (
            <p>threads</p>
          )}
        </AnalystContext.Provider>
      );
    }
    await act(async () => mounted.root().render(<Conversation shown={true} />));
    expect(mounted.host().textContent).toBe('a chart');
    expect(made).toHaveLength(1);
    expect(made[0].isAttached).toBe(true);

    await act(async () => mounted.root().render(<Conversation shown={false} />));
    expect(mounted.host().textContent).toBe('threads');
    expect(made[0].isDisposed).toBe(true);
  });
});
