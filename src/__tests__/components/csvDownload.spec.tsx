/**
 * A dataset downloads as CSV too: "CSV" beside Download on a dataset (in the Artifacts view
 * and on its card in the conversation), asking the server for `?format=csv` and saving the
 * file as `<name>.csv`; a chart or file has no such button. Download saves a dataset's
 * Parquet bytes as `<name>.parquet`.
 */

import { ServerConnection } from '@jupyterlab/services';
import * as React from 'react';
import { act } from 'react';

import { ArtifactsPanel } from '../../components/artifacts';
import { csvName } from '../../components/artifacts/format';
import { ArtifactCard } from '../../components/cards/ArtifactCard';
import { AnalystContext } from '../../context';
import type { ArtifactView } from '../../model';
import { AnalystClient, IArtifact } from '../../transport/api';
import { mountedRoot } from '../dom';
import { renderStatic } from '../staticMarkup';

const mounted = mountedRoot();

function artifact(id: string, name: string, type: IArtifact['type'], mime: string): IArtifact {
  return {
    artifact_id: id,
    thread_id: 'thr_1',
    name,
    type,
    mime,
    created_at: '2026-11-23T20:58:55.523Z',
    source_call_id: null,
    producer: 'python',
    logical_key: null,
    fingerprint: `sha256:${'a'.repeat(64)}`,
    size: 2048
  } as IArtifact;
}

const DATASET = artifact(
  'art_dataset',
  'revenue_by_region',
  'dataset',
  'application/vnd.apache.parquet'
);
const FIGURE = artifact('art_figure', 'outputs/chart.png', 'image', 'image/png');

function view(a: IArtifact): ArtifactView {
  return {
    artifactId: a.artifact_id,
    name: a.name,
    artifactType: a.type,
    fingerprint: a.fingerprint,
    shortFingerprint: 'aaaaaaaaaaaa',
    created: true,
    at: a.created_at,
    seq: 1
  };
}

describe('the CSV of a dataset', () => {
  it('is saved under the name the server gives it', () => {
    expect(csvName({ name: 'revenue_by_region' })).toBe('revenue_by_region.csv');
    expect(csvName({ name: 'outputs/sales.parquet' })).toBe('sales.csv');
    expect(csvName({ name: 'outputs/A.PQ' })).toBe('A.csv');
    expect(csvName({ name: 'outputs/' })).toBe('dataset.csv');
  });

  it("is a link to the dataset's rows as CSV on its card, and absent on a chart's", () => {
    const host = renderStatic(
      <>
        <ArtifactCard artifact={view(DATASET)} reused={false} />
        <ArtifactCard artifact={view(FIGURE)} reused={false} />
      </>
    );
    const [dataset, figure] = Array.from(host.querySelectorAll('[data-card="artifact"]'));
    const csv = dataset.querySelector('a.jp-AnalystArtifact-csv')!;
    expect(csv.textContent).toBe('CSV');
    expect(csv.getAttribute('download')).toBe('revenue_by_region.csv');
    expect(csv.getAttribute('href')).toBe(
      'http://127.0.0.1:9/analyst/api/artifacts/art_dataset/content?format=csv'
    );
    expect(csv.getAttribute('aria-label')).toBe('Download revenue_by_region as CSV');
    // Download stays the Parquet bytes, saved with their extension (the name has none).
    const parquet = dataset.querySelector('a.jp-AnalystArtifact-download')!;
    expect(parquet.getAttribute('href')).toBe(
      'http://127.0.0.1:9/analyst/api/artifacts/art_dataset/content'
    );
    expect(parquet.getAttribute('download')).toBe('revenue_by_region.parquet');
    expect(figure.querySelector('a.jp-AnalystArtifact-download')!.getAttribute('download')).toBe(
      'chart.png'
    );
    expect(figure.querySelector('.jp-AnalystArtifact-csv')).toBeNull();
  });

  it('is fetched as CSV and saved as <name>.csv from the Artifacts view', async () => {
    const client = new AnalystClient(
      ServerConnection.makeSettings({ baseUrl: 'http://127.0.0.1:9/' })
    );
    const asked: [string, string | undefined][] = [];
    jest.spyOn(client, 'artifacts').mockResolvedValue([DATASET, FIGURE]);
    jest.spyOn(client, 'artifactContent').mockImplementation(async (id, format) => {
      asked.push([id, format]);
      return new Blob(['region,total\n']);
    });
    const saved: string[] = [];
    const click = jest.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (
      this: HTMLAnchorElement
    ) {
      saved.push(this.download);
    });
    const url = URL as unknown as Record<string, unknown>;
    url.createObjectURL = () => 'blob:csv';
    url.revokeObjectURL = () => undefined;
    try {
      await act(async () =>
        mounted.root().render(
          <AnalystContext.Provider
            value={{ client, rendermime: null, commands: null, notebooks: null }}
          >
            <ArtifactsPanel threadId="thr_1" running={false} turns={[]} />
          </AnalystContext.Provider>
        )
      );
      const items = Array.from(mounted.host().querySelectorAll('.jp-AnalystInventory-item'));
      expect(items).toHaveLength(2);
      const [dataset, figure] = items;
      expect(figure.querySelector('.jp-AnalystInventory-csv')).toBeNull();
      const button = dataset.querySelector<HTMLButtonElement>('button.jp-AnalystInventory-csv')!;
      expect(button.textContent).toBe('CSV');
      await act(async () => button.click());
      expect(asked).toEqual([['art_dataset', 'csv']]);
      expect(saved).toEqual(['revenue_by_region.csv']);
      const download = Array.from(dataset.querySelectorAll('button')).find(
        b => b.textContent === 'Download'
      )!;
      await act(async () => download.click());
      expect(asked[1]).toEqual(['art_dataset', undefined]);
      expect(saved[1]).toBe('revenue_by_region.parquet');
    } finally {
      click.mockRestore();
    }
  });
});
