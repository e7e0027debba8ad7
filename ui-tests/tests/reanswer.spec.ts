import { expect, test } from '@jupyterlab/galata';
import { execFileSync } from 'child_process';
import * as path from 'path';

import { ask, newThread, openPanel, SCREENSHOTS } from './lab';

/**
 * "Re-answer on today's data" at JupyterLab's default sidebar width: the scripted model's
 * 'earned the most' turn (data/lab_script.json) answers citing each region's revenue; once
 * its verify report shows, one of Central's orders is changed in the source, and the
 * re-answer restates Central's revenue and the gap derived from it, old -> new, and nothing
 * else. The order is set back afterwards: the other specs read the same source.
 */

const QUESTION = 'Which region earned the most?';
const SOURCE = path.join(process.env.ANALYST_UI_ROOT ?? '', 'sales.duckdb');
/** Central's first order. */
const ORDER =
  "(SELECT min(order_id) FROM orders o JOIN regions r ON o.region_id = r.region_id WHERE r.region = 'Central')";

/** Runs `sql` on the demo's source with DuckDB (in Python, as the server reads it); its output. */
function onSource(code: string): string {
  const python = process.env.ANALYST_PYTHON || 'python3';
  const script = `import duckdb, sys\ncon = duckdb.connect(sys.argv[1])\n${code}\ncon.close()`;
  return execFileSync(python, ['-c', script, SOURCE], { encoding: 'utf-8' }).trim();
}

test.describe('re-answer on today’s data at the default sidebar width', () => {
  let original: string | null = null;

  test.afterEach(() => {
    if (original !== null) {
      onSource(`con.execute("UPDATE orders SET revenue = ${original} WHERE order_id = ${ORDER}")`);
      original = null;
    }
  });

  test('beside the verify report, the answer restated with the changed numbers old → new', async ({
    page
  }) => {
    // Verify, then the re-answer, each re-run the notebook in a kernel of their own.
    test.setTimeout(300 * 1000);
    const panel = await openPanel(page, { widen: false });
    expect((await panel.boundingBox())?.width ?? 0).toBeLessThan(320);
    await newThread(panel);
    await ask(panel, QUESTION);
    await expect(panel.locator('.jp-AnalystTurn').last()).toHaveAttribute(
      'data-status',
      'completed'
    );
    const actions = panel.locator('.jp-AnalystThreadActions');
    // No report yet: nothing to re-answer beside.
    await expect(actions.getByRole('button', { name: 'Re-answer on today’s data' })).toHaveCount(0);
    await actions.getByRole('button', { name: 'Verify' }).click();
    await expect(actions.locator('.jp-AnalystVerify')).toBeVisible({ timeout: 120 * 1000 });

    // Today, one of Central's orders earned 1,000 more.
    original = onSource(
      `print(repr(con.execute("SELECT revenue FROM orders WHERE order_id = ${ORDER}").fetchone()[0]))`
    );
    onSource(`con.execute("UPDATE orders SET revenue = revenue + 1000 WHERE order_id = ${ORDER}")`);

    const button = actions.getByRole('button', { name: 'Re-answer on today’s data' });
    // Reached by the keyboard: focused, then pressed with Enter.
    await button.focus();
    await expect(button).toBeFocused();
    await page.keyboard.press('Enter');
    const progress = actions.locator('.jp-AnalystThreadActions-progress');
    await expect(progress).toContainText('Re-answering');
    await expect(progress.getByRole('progressbar')).toHaveAccessibleName(/Re-answering/);

    const reanswer = actions.getByRole('region', { name: 'Re-answer on today’s data' });
    await expect(reanswer).toBeVisible({ timeout: 120 * 1000 });
    await expect(reanswer.locator('.jp-AnalystReanswer-summary')).toContainText(
      'Today’s data changes the answer: 2 changed'
    );
    // The restated answer: Central's revenue and the gap, each new (was old).
    const text = reanswer.locator('.jp-AnalystReanswer-text');
    await expect(text).toContainText('193,506.67 (was 192,506.67)');
    await expect(text).toContainText('42,925.58 (was 41,925.58)');
    await expect(text).toContainText('North at 150,581.09,');
    // Highlighted where they stand, the rest of the text as written.
    await expect(text.locator('mark.jp-AnalystReanswer-changed')).toHaveText([
      '193,506.67 (was 192,506.67)',
      '42,925.58 (was 41,925.58)'
    ]);
    const claims = reanswer.getByRole('list', { name: 'Cited numbers, then and now' });
    const changed = claims.locator('li[data-status="changed"]');
    await expect(changed).toHaveCount(2);
    await expect(
      claims.getByRole('listitem', {
        name: '192,506.67 changed to 193,506.67 (row 1, column revenue)'
      })
    ).toBeVisible();
    await expect(
      claims.getByRole('listitem', { name: '41,925.58 changed to 42,925.58 (derived: difference)' })
    ).toBeVisible();
    await expect(claims.getByRole('listitem', { name: /^150,581\.09: unchanged/ })).toBeVisible();
    await expect(claims.getByRole('listitem', { name: '12%: not re-checked' })).toBeVisible();
    // Old and new each on screen, within the panel (no sideways scroll at this width).
    const first = changed.first();
    await expect(first.locator('del')).toHaveText('192,506.67');
    await expect(first.locator('ins')).toHaveText('193,506.67');
    const box = await reanswer.boundingBox();
    const panelBox = await panel.boundingBox();
    expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(
      (panelBox?.x ?? 0) + (panelBox?.width ?? 0) + 1
    );
    expect(await first.evaluate(e => e.scrollWidth <= e.clientWidth + 1)).toBe(true);
    // The re-answered notebook is in the user's folder, its link named for what it opens.
    await expect(
      reanswer.getByRole('link', { name: /^Open the re-answered notebook / })
    ).toHaveText(/\.reanswered\.ipynb$/);
    // The restated answer in view, then its numbers then and now.
    await button.scrollIntoViewIfNeeded();
    // The button's words wrap at this width; it grows to hold them (nothing cut off).
    expect(await button.evaluate(e => e.scrollHeight <= e.clientHeight + 1)).toBe(true);
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'reanswer-button.png') });
    await text.scrollIntoViewIfNeeded();
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'reanswer-panel.png') });
    await claims.scrollIntoViewIfNeeded();
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'reanswer-claims.png') });
  });
});
