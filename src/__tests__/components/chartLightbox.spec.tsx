/**
 * A chart opens at full size: a click on its thumbnail or its "Enlarge" button shows it in a
 * modal dialog over the page (not inside the narrow panel), which Escape, its close button
 * or a click on the backdrop closes, the focus going back to where it was.
 */

import { ServerConnection } from '@jupyterlab/services';
import * as React from 'react';
import { act } from 'react';

import { ChartCard } from '../../components/cards/ChartCard';
import { AnalystContext } from '../../context';
import type { ArtifactView } from '../../model';
import { AnalystClient, IArtifact, IMimeBundle } from '../../transport/api';
import { mountedRoot } from '../dom';

const mounted = mountedRoot();

const CHART: ArtifactView = {
  artifactId: 'art_chart_lightbox',
  name: 'outputs/figure_1.png',
  artifactType: 'image',
  fingerprint: `sha256:${'b'.repeat(64)}`,
  shortFingerprint: 'bbbbbbbbbbbb',
  created: true,
  at: '2026-11-23T20:58:55.523Z',
  seq: 1
};

const BUNDLE: IMimeBundle = {
  data: { 'image/png': 'iVBORw0KGgo=', 'text/plain': '<Figure size 800x400 with 1 Axes>' },
  metadata: {}
};

async function mountChart(): Promise<void> {
  const client = new AnalystClient(
    ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' })
  );
  jest.spyOn(client, 'preview').mockResolvedValue(BUNDLE);
  jest.spyOn(client, 'artifact').mockResolvedValue({
    artifact_id: CHART.artifactId,
    size: 4096
  } as IArtifact);
  await act(async () =>
    mounted.root().render(
      <AnalystContext.Provider
        value={{ client, rendermime: null, commands: null, notebooks: null }}
      >
        <ChartCard artifact={CHART} reused={false} />
      </AnalystContext.Provider>
    )
  );
}

function dialog(): HTMLElement | null {
  return document.querySelector<HTMLElement>('[role="dialog"]');
}

describe('a chart at full size', () => {
  it('opens from its Enlarge button over the page, and Escape closes it, the focus coming back', async () => {
    await mountChart();
    const enlarge = mounted.host().querySelector<HTMLButtonElement>('.jp-AnalystChart-enlarge')!;
    expect(enlarge.getAttribute('aria-label')).toMatch(/^Enlarge /);
    expect(dialog()).toBeNull();
    enlarge.focus();
    await act(async () => enlarge.click());
    const shown = dialog()!;
    expect(shown.getAttribute('aria-modal')).toBe('true');
    // On the page, not inside the panel's narrow card.
    expect(mounted.host().contains(shown)).toBe(false);
    expect(shown.textContent).toContain('<Figure size 800x400 with 1 Axes>');
    expect(document.activeElement?.getAttribute('aria-label')).toBe('Close');

    act(() => {
      document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    });
    expect(dialog()).toBeNull();
    expect(document.activeElement).toBe(enlarge);
  });

  it('opens from a click on the thumbnail; its close button and the backdrop close it', async () => {
    await mountChart();
    const thumb = mounted.host().querySelector<HTMLElement>('.jp-AnalystChart-thumb')!;
    await act(async () => thumb.click());
    expect(dialog()).not.toBeNull();
    await act(async () =>
      dialog()!.querySelector<HTMLButtonElement>('.jp-AnalystLightbox-close')!.click()
    );
    expect(dialog()).toBeNull();

    await act(async () => thumb.click());
    // A click inside the chart keeps it open; one on the backdrop closes it.
    await act(async () =>
      dialog()!.querySelector<HTMLElement>('.jp-AnalystLightbox-body')!.click()
    );
    expect(dialog()).not.toBeNull();
    await act(async () => document.querySelector<HTMLElement>('.jp-AnalystLightbox')!.click());
    expect(dialog()).toBeNull();
  });
});
