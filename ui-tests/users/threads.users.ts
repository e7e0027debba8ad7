import { expect, test } from '@playwright/test';
import type { Browser, BrowserContext, Locator, Page } from '@playwright/test';
import * as path from 'path';

/**
 * Two users on one server (the header identity of jupyter_server_users_config.py): a
 * user's threads are not listed to another, nor readable by id.
 */

const PANEL_ID = 'jupyter-analyst-panel';
const HEADER = 'X-Analyst-Test-User';
const SCREENSHOTS = path.join(__dirname, '..', 'screenshots');
/** The server of playwright.users.config.js (given to the contexts made here by hand). */
const BASE_URL = `http://127.0.0.1:${process.env.ANALYST_UI_USERS_PORT}/`;

/** The JupyterLab app the galata server configuration exposes to the page. */
type LabWindow = Window & {
  jupyterapp?: {
    commands: { hasCommand(id: string): boolean; execute(id: string): Promise<unknown> };
  };
};

/**
 * Show the panel (the command activates it; a click on its tab would close it when the
 * restored layout already shows it).
 */
async function showPanel(page: Page): Promise<Locator> {
  await page.waitForFunction(
    () => (window as LabWindow).jupyterapp?.commands.hasCommand('jupyter-analyst:open') === true
  );
  await page.evaluate(() =>
    (window as LabWindow).jupyterapp!.commands.execute('jupyter-analyst:open')
  );
  const panel = page.locator(`#${PANEL_ID}`);
  await expect(panel).toBeVisible();
  return panel;
}

interface IUser {
  context: BrowserContext;
  page: Page;
  panel: Locator;
}

/** JupyterLab as `name` (every request carries the header), with the panel open. */
async function signIn(browser: Browser, name: string): Promise<IUser> {
  const context = await browser.newContext({
    baseURL: BASE_URL,
    viewport: { width: 1280, height: 800 },
    extraHTTPHeaders: { [HEADER]: name }
  });
  const page = await context.newPage();
  await page.goto('lab');
  return { context, page, panel: await showPanel(page) };
}

/** A new thread with a title, then back to the list; its id. */
async function newThread(user: IUser, title: string): Promise<string> {
  const { panel } = user;
  await expect(panel.locator('.jp-AnalystNewThread-source')).toHaveValue('sales');
  await panel.locator('.jp-AnalystNewThread-title').fill(title);
  await panel.getByRole('button', { name: 'New thread' }).click();
  const conversation = panel.locator('.jp-AnalystConversation');
  await expect(conversation).toBeVisible();
  const id = (await conversation.getAttribute('data-thread-id')) ?? '';
  await panel.getByRole('button', { name: 'Back to threads' }).click();
  await expect(panel.locator(`.jp-AnalystThreadList-item[data-thread-id="${id}"]`)).toBeVisible();
  return id;
}

test("a second user's thread is not listed, nor readable by its id", async ({ browser }) => {
  const alice = await signIn(browser, 'alice');
  const aliceThread = await newThread(alice, 'Alice’s revenue');

  const bob = await signIn(browser, 'bob');
  const bobThread = await newThread(bob, 'Bob’s margins');
  const bobList = bob.panel.locator('.jp-AnalystThreadList-item');
  // Bob's list is his thread alone: Alice's is not there.
  await expect(bobList).toHaveCount(1);
  await expect(bobList).toHaveAttribute('data-thread-id', bobThread);
  await expect(bob.panel).not.toContainText('Alice’s revenue');
  await bob.panel.screenshot({ path: path.join(SCREENSHOTS, 'users-bob.png') });

  // Nor can Bob read it by its id: the API answers as for a thread that does not exist.
  const peek = await bob.context.request.get(`analyst/api/threads/${aliceThread}`);
  expect(peek.status()).toBe(404);
  expect((await peek.json()).reason).toBe('thread_not_found');
  const artifacts = await bob.context.request.get(`analyst/api/threads/${aliceThread}/artifacts`);
  expect(artifacts.status()).toBe(404);

  // Alice, reloaded, sees hers and not Bob's.
  await alice.page.reload();
  await showPanel(alice.page);
  const aliceList = alice.panel.locator('.jp-AnalystThreadList-item');
  await expect(aliceList).toHaveCount(1);
  await expect(aliceList).toHaveAttribute('data-thread-id', aliceThread);
  await expect(alice.panel).not.toContainText('Bob’s margins');

  // Without the header, no user: the API refuses.
  const nobody = await browser.newContext({ baseURL: BASE_URL });
  const anonymous = await nobody.request.get('analyst/api/threads');
  expect(anonymous.status()).toBe(401);

  await Promise.all([alice.context.close(), bob.context.close(), nobody.close()]);
});
