import { expect, test } from '@jupyterlab/galata';
import type { Page } from '@playwright/test';
import * as path from 'path';

import { ask, DEMO_QUESTION, newThread, openPanel, SCREENSHOTS } from './lab';

/**
 * The panel by keyboard at JupyterLab's default sidebar width, as people first see it: a
 * turn is one tab stop per card (its links, folds and buttons one Enter away, Escape back
 * out), a card's explanation is behind a focusable ⓘ, and Accel Shift Y brings the focus to
 * the prompt box from anywhere, the panel closed or not.
 */

/** Where the focus is: the card it is on or in (`data-card` of the outermost), or the element. */
async function focused(page: Page): Promise<{ inTurn: boolean; card: string | null; tag: string }> {
  return page.evaluate(() => {
    const element = document.activeElement as HTMLElement;
    let card: HTMLElement | null = element.closest('[data-card]');
    while (card?.parentElement?.closest('[data-card]')) {
      card = card.parentElement.closest('[data-card]');
    }
    return {
      inTurn: element.closest('.jp-AnalystTurn') !== null,
      card: card?.getAttribute('data-card') ?? null,
      tag: element === card ? 'card' : element.tagName.toLowerCase()
    };
  });
}

test.describe('the panel by keyboard', () => {
  test('Tab goes card to card through a turn; Enter, the arrows and Escape reach what a card holds', async ({
    page
  }, testInfo) => {
    const panel = await openPanel(page, { widen: false });
    await newThread(panel);
    await ask(panel, DEMO_QUESTION);
    const turn = panel.locator('.jp-AnalystTurn').first();
    await expect(turn).toHaveAttribute('data-status', 'completed');
    await expect(turn.locator('[data-card="chart"] img')).toBeVisible();

    // From the control before the conversation, Tab through the turn to the prompt box.
    await panel.getByRole('tab', { name: 'Conversation' }).focus();
    const stops: string[] = [];
    for (let presses = 0; presses < 40; presses++) {
      await page.keyboard.press('Tab');
      const at = await focused(page);
      if (!at.inTurn) {
        break;
      }
      stops.push(`${at.card}:${at.tag}`);
    }
    // One stop a card: the text, the lookup, the query, the Python step and the answer (the
    // same turn had 18 before: each fold, "Details", link and scrolling code block).
    expect(stops).toEqual(['text:card', 'tool:card', 'sql:card', 'python:card', 'answer:card']);
    await expect(panel.getByRole('textbox', { name: 'Ask about your data' })).toBeFocused();

    // Into the SQL card: its fold, then its ⓘ, whose explanation shows on focus.
    const sql = turn.locator('[data-card="sql"]');
    await sql.focus();
    await page.keyboard.press('Enter');
    await expect(sql.locator('.jp-AnalystCard-fold > summary')).toBeFocused();
    await page.keyboard.press('ArrowDown');
    const info = sql.getByRole('button', { name: 'Size of the prompt that asked for this step' });
    await expect(info).toBeFocused();
    await expect(sql.getByRole('tooltip')).toBeVisible();
    await expect(info).toHaveAccessibleDescription(
      /^Model call \d+: prompt [\d,]+ tokens? · reply [\d,]+ tokens?, counted by the model server/
    );
    // The explanation stays inside the panel at this width.
    const tip = await sql.getByRole('tooltip').boundingBox();
    const box = await panel.boundingBox();
    expect(tip && box && tip.x >= box.x && tip.x + tip.width <= box.x + box.width + 1).toBe(true);
    const shot = path.join(SCREENSHOTS, 'keyboard-card.png');
    await panel.screenshot({ path: shot });
    await testInfo.attach('keyboard-card', { path: shot, contentType: 'image/png' });

    // Nothing else on a card pops a tooltip: the explanations are the ⓘ's alone.
    await expect(turn.locator('[data-card][title]')).toHaveCount(0);
    // A click on the ⓘ does not fold its card.
    await info.click();
    await expect(sql.locator('.jp-AnalystCard-fold')).toHaveAttribute('open', '');

    // All the card holds is reachable by the arrows, round the card: its folds, its links.
    await info.focus();
    const reached: string[] = [];
    for (let presses = 0; presses < 30; presses++) {
      await page.keyboard.press('ArrowDown');
      const name = await page.evaluate(() => {
        const element = document.activeElement as HTMLElement;
        return `${element.tagName.toLowerCase()} ${(element.getAttribute('aria-label') ?? element.textContent ?? '').trim().slice(0, 40)}`;
      });
      if (name.startsWith('button Size of the prompt')) {
        break;
      }
      reached.push(name);
    }
    expect(reached).toEqual(
      expect.arrayContaining([
        'summary Query',
        'a Open revenue_by_region',
        'a Download revenue_by_region',
        'summary Details'
      ])
    );
    await page.keyboard.press('Escape');
    await expect(sql).toBeFocused();
    // The card with the focus is outlined (the pointer moved off the ⓘ, its explanation gone).
    await page.mouse.move(0, 0);
    await expect(sql.getByRole('tooltip')).toBeHidden();
    expect(await sql.evaluate(card => getComputedStyle(card).outlineStyle)).toBe('solid');
    const cardShot = path.join(SCREENSHOTS, 'keyboard-card-focused.png');
    await panel.screenshot({ path: cardShot });
    await testInfo.attach('keyboard-card-focused', { path: cardShot, contentType: 'image/png' });
    // And Tab from the card goes on to the next card.
    await page.keyboard.press('Tab');
    await expect(turn.locator('[data-card="python"]')).toBeFocused();
  });

  test('Accel Shift Y opens the panel with the focus in the prompt box, and says so', async ({
    page
  }) => {
    const panel = await openPanel(page, { widen: false });
    await newThread(panel);
    const box = panel.getByRole('textbox', { name: 'Ask about your data' });
    await expect(box).toHaveAttribute('aria-keyshortcuts', 'Control+Shift+Y');
    await expect(box).toHaveAttribute('title', /Ctrl\+Shift\+Y brings you here from anywhere/);

    // The panel closed, the focus in the file browser: the key opens it and focuses the box.
    await page.sidebar.close('right');
    await expect(panel).toBeHidden();
    await page.sidebar.openTab('filebrowser');
    await page.locator('.jp-DirListing-content').focus();
    await page.keyboard.press('Control+Shift+Y');
    await expect(panel).toBeVisible();
    await expect(box).toBeFocused();

    // The command palette lists it with its key.
    await page.keyboard.press('Control+Shift+C');
    const search = page.locator('.lm-CommandPalette-input');
    await expect(search).toBeFocused();
    await search.fill('Ask the Data analyst');
    const item = page.locator('.lm-CommandPalette-item', { hasText: 'Ask the Data analyst' });
    await expect(item.locator('.lm-CommandPalette-itemShortcut')).toHaveText(/Ctrl\+Shift\+Y/);
  });
});
