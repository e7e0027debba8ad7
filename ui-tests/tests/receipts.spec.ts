import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';
import * as path from 'path';

import { ask, newThread, openPanel, SCREENSHOTS } from './lab';

/**
 * An answer's receipts at JupyterLab's default sidebar width: a cited number is a link that
 * says its step and cell and brings the step's card into view with the cell marked; an
 * unsupported number is marked. The scripted model's 'earned the most' turn
 * (data/lab_script.json) queries each region's orders and revenue and answers citing them.
 */

const QUESTION = 'Which region earned the most?';
const ANSWER_START = '[scripted model] **Central** earned the most';

/** One event-stream frame: its lines, and its event's JSON. */
interface IFrame {
  head: string[];
  data: Record<string, unknown> | null;
}

function framesOf(body: string): IFrame[] {
  return body
    .split('\n\n')
    .filter(Boolean)
    .map(text => {
      const lines = text.split('\n');
      const data = lines.find(l => l.startsWith('data: '));
      return {
        head: lines.filter(l => !l.startsWith('data: ')),
        data: data ? (JSON.parse(data.slice(6)) as Record<string, unknown>) : null
      };
    });
}

/**
 * The receipts the server's matcher gives the scripted answer, as the panel reads them:
 * its numbers cited from the query's rows (Central is row 0, North row 1, West row 4), the
 * gap derived from two of them, 12% unsupported. Spans are found in the answer's own text.
 */
function receiptsOf(answer: string, callId: string, artifactId: string) {
  const span = (text: string) => {
    const start = answer.indexOf(text);
    return { start, end: start + text.length, text };
  };
  const cell = (text: string, value: number | string, row: number, column: string) => ({
    ...span(text),
    kind: typeof value === 'string' ? 'name' : 'number',
    value,
    call_id: callId,
    artifact_id: artifactId,
    row,
    column,
    derived: null
  });
  return {
    citations: [
      cell('Central', 'Central', 0, 'region'),
      cell('192,506.67', 192506.67, 0, 'revenue'),
      cell('792', 792, 0, 'orders'),
      cell('150,581.09', 150581.09, 1, 'revenue'),
      {
        ...span('41,925.58'),
        kind: 'number',
        value: 41925.58,
        call_id: null,
        artifact_id: null,
        row: null,
        column: null,
        derived: { operation: 'difference', of: [1, 3] }
      },
      cell('46,927.74', 46927.74, 4, 'revenue')
    ],
    unsupported: [{ ...span('12%'), kind: 'percent', value: 12 }]
  };
}

/**
 * The turn's events with these receipts on its end, in place of any the server sent: what
 * the panel does with receipts is tested here on its own, whether or not (and however) this
 * server's matcher runs; the next test reads the server's own. The turn's stream and the
 * thread's history are both rewritten (the panel fills a gap in a stream from the history).
 */
async function withReceipts(page: IJupyterLabPageFixture): Promise<void> {
  // What the rewrite needs, as it is seen (a history page may hold the end alone).
  let callId: string | null = null;
  let artifactId: string | null = null;
  let answer: string | null = null;
  const rewrite = (data: Record<string, unknown>): Record<string, unknown> => {
    if (data.type === 'tool_call' && data.tool === 'run_sql') {
      callId = data.call_id as string;
    } else if (data.type === 'tool_result' && data.call_id === callId) {
      artifactId = (data.result as { artifact_id: string }).artifact_id;
    } else if (data.type === 'answer') {
      answer = data.text as string;
    } else if (data.type === 'turn_ended' && callId && artifactId && answer) {
      return { ...data, ...receiptsOf(answer, callId, artifactId) };
    }
    return data;
  };
  await page.route(/\/analyst\/api\/threads\/[^/]+\/(turns|events)/, async route => {
    const response = await route.fetch();
    const text = await response.text();
    if (!(response.headers()['content-type'] ?? '').includes('text/event-stream')) {
      const page = JSON.parse(text) as { events?: Record<string, unknown>[] };
      const events = page.events?.map(rewrite);
      await route.fulfill({ response, body: JSON.stringify({ ...page, events }) });
      return;
    }
    const body = framesOf(text)
      .map(frame => {
        const data = frame.data ? rewrite(frame.data) : null;
        return [...frame.head, ...(data ? [`data: ${JSON.stringify(data)}`] : [])].join('\n');
      })
      .join('\n\n');
    await route.fulfill({ response, body: `${body}\n\n` });
  });
}

/** The answer card of the last turn, once it has its receipts. */
async function answered(panel: Locator): Promise<Locator> {
  const turn = panel.locator('.jp-AnalystTurn').last();
  await expect(turn).toHaveAttribute('data-status', 'completed');
  const answer = turn.locator('[data-card="answer"]');
  await expect(answer).toContainText('Central earned the most');
  await expect(answer.locator('.jp-AnalystReceipts-summary')).toBeVisible();
  return answer;
}

test.describe('an answer’s receipts at the default sidebar width', () => {
  test('a cited number is a link to its card; an unsupported one is marked', async ({ page }) => {
    await withReceipts(page);
    const panel = await openPanel(page, { widen: false });
    expect((await panel.boundingBox())?.width ?? 0).toBeLessThan(320);
    await newThread(panel);
    await ask(panel, QUESTION);
    const answer = await answered(panel);

    await expect(answer.locator('.jp-AnalystReceipts-summary')).toHaveText(
      'Receipts: 5 from their steps, 1 derived · 1 no step shows'
    );
    const link = answer.getByRole('link', { name: /^46,927\.74 — from step 1/ });
    await expect(link).toHaveAccessibleName(
      "46,927.74 — from step 1 'region_totals', row 5, column revenue"
    );
    await expect(answer.getByRole('link', { name: /^41,925\.58/ })).toHaveAccessibleName(
      '41,925.58 — derived: difference of 192,506.67 and 150,581.09'
    );
    const unsupported = answer.locator('mark[data-receipt="unsupported"]');
    await expect(unsupported).toHaveText('12%');
    await expect(unsupported).toHaveAttribute('aria-label', '12% — no step shows this number');
    // Marked for the eye: a dotted underline, not the links' solid one.
    // Read again until it holds: the marks are placed anew once the answer's math is typeset.
    await expect(async () => {
      expect(await unsupported.evaluate(m => getComputedStyle(m).textDecorationStyle)).toBe(
        'dotted'
      );
      expect(await link.evaluate(a => getComputedStyle(a).textDecorationStyle)).toBe('solid');
    }).toPass();
    // The answer reads as written: the bold name stays bold, its link inside.
    await expect(answer.locator('strong a[data-receipt]')).toHaveText('Central');
    // Hovered again until the tip shows: the answer's marks are placed anew once its math is
    // typeset (off the page), and a pointer already resting on the old node sees no new enter.
    await expect(async () => {
      await unsupported.hover();
      await expect(answer.locator('.jp-AnalystReceipt-tip')).toHaveText(
        /No step shows this number/,
        {
          timeout: 2000
        }
      );
    }).toPass();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'receipts-answer.png') });

    const tip = answer.locator('.jp-AnalystReceipt-tip');
    await expect(async () => {
      await link.hover();
      await expect(tip).toContainText('Step 1 · SQL · region_totals', { timeout: 2000 });
    }).toPass();
    await expect(tip).toContainText('Row 5, column revenue');
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'receipts-hover.png') });

    // The answer is below the card: following the link scrolls up to it.
    const card = panel.locator('[data-card="sql"]').last();
    const cell = card.locator('td.jp-mod-cited');
    await link.click();
    await expect(card).toHaveClass(/jp-mod-cited/);
    await expect(card).toBeFocused();
    await expect(cell).toHaveText('46927.74');
    await expect(cell).toBeInViewport();
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'receipts-card.png') });

    // By keyboard: back to the answer card, Enter into it, the arrows to a link, Enter on it.
    await answer.focus();
    await page.keyboard.press('Enter');
    // The card's first control may be its ⓘ (the size of the prompt): the arrows go on.
    const central = answer.getByRole('link', { name: /^Central/ });
    for (let i = 0; i < 3 && !(await central.evaluate(e => e === document.activeElement)); i++) {
      await page.keyboard.press('ArrowDown');
    }
    await expect(central).toBeFocused();
    await page.keyboard.press('ArrowDown');
    await expect(answer.getByRole('link', { name: /^192,506\.67/ })).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(card).toBeFocused();
    await expect(cell).toHaveText('192506.67');
  });

  test('the server’s own receipts of the scripted answer', async ({ page }) => {
    const panel = await openPanel(page, { widen: false });
    const threadId = await newThread(panel);
    await ask(panel, QUESTION);
    const turn = panel.locator('.jp-AnalystTurn').last();
    await expect(turn).toHaveAttribute('data-status', 'completed');
    const reply = await page.request.get(`analyst/api/threads/${threadId}/events`);
    const { events } = (await reply.json()) as { events: Record<string, unknown>[] };
    const end = events.find(e => e.type === 'turn_ended') as { citations?: unknown[] };
    const answer = events.find(e => e.type === 'answer') as { text: string };
    expect(answer.text.startsWith(ANSWER_START)).toBe(true);
    expect(end.citations?.length ?? 0).toBeGreaterThan(0);
    const card = turn.locator('[data-card="answer"]');
    await expect(card.getByRole('link', { name: /^192,506\.67 — from step 1/ })).toBeVisible();
    await expect(card.locator('mark[data-receipt="unsupported"]')).toHaveText('12%');
    // The draft the answer check sent back to the model is not shown beside the answer.
    await expect(turn.locator('[data-card="text"]')).toHaveCount(0);
    await expect(turn.locator('[data-card="answer"]')).toHaveCount(1);
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'receipts-server.png') });
    await card.getByRole('link', { name: /^46,927\.74/ }).click();
    await expect(turn.locator('[data-card="sql"] td.jp-mod-cited')).toHaveText('46927.74');
  });
});
