import { expect, test } from '@playwright/test';
import type { Browser, BrowserContext, Locator, Page } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

/**
 * What a team shares on one server (jupyter_server_team_config.py), in the panel at
 * JupyterLab's default sidebar width: "Verify this answer" writes ann's answer into the
 * context folder and refuses bob, who is no editor; the budget line says what each user has
 * left of the daily 3,700 tokens, and cal's second question ends `budget_exhausted` with the
 * server's message of when the budget resets. A measure eve's turn computed that the folder
 * lacks is offered: "Save as a definition" shows the file, and only "Save" writes it.
 */

const PANEL_ID = 'jupyter-analyst-panel';
const HEADER = 'X-Analyst-Test-User';
const SCREENSHOTS = path.join(__dirname, '..', 'screenshots');
const BASE_URL = `http://127.0.0.1:${process.env.ANALYST_UI_TEAM_PORT}/`;
/** The server's context folder (c.AnalystApp.context_dir of the test's server). */
const CONTEXT = path.join(process.env.ANALYST_UI_TEAM_ROOT ?? '', 'context');
/** A question the scripted model answers with one query (data/lab_script.json). */
const QUESTION = 'Which region earned the most?';
/** What is left once a turn and the thread summary after it were counted: under 500 of 3.7k. */
const LEFT_AFTER_A_TURN = /^([1-4]\d\d|\d{1,2}) of 3\.7k tokens left today$/;

type LabWindow = Window & {
  jupyterapp?: {
    commands: { hasCommand(id: string): boolean; execute(id: string): Promise<unknown> };
  };
};

interface IUser {
  context: BrowserContext;
  page: Page;
  panel: Locator;
}

/** JupyterLab as `name`, the panel open at the sidebar's default width. */
async function signIn(browser: Browser, name: string): Promise<IUser> {
  const context = await browser.newContext({
    baseURL: BASE_URL,
    viewport: { width: 1280, height: 800 },
    extraHTTPHeaders: { [HEADER]: name }
  });
  const page = await context.newPage();
  await page.goto('lab');
  // JupyterLab's "get notified about news?" toast would cover the panel's foot in the screenshots.
  await page.addStyleTag({ content: '.Toastify { display: none !important; }' });
  await page.waitForFunction(
    () => (window as LabWindow).jupyterapp?.commands.hasCommand('jupyter-analyst:open') === true
  );
  await page.evaluate(() =>
    (window as LabWindow).jupyterapp!.commands.execute('jupyter-analyst:open')
  );
  const panel = page.locator(`#${PANEL_ID}`);
  await expect(panel).toBeVisible();
  return { context, page, panel };
}

/** A new thread on the sample data, `QUESTION` asked in it; its finished turn. */
async function askInNewThread(user: IUser): Promise<Locator> {
  const { panel } = user;
  await expect(panel.locator('.jp-AnalystNewThread-source')).toHaveValue('sales');
  await panel.getByRole('button', { name: 'New thread', exact: true }).click();
  await expect(panel.locator('.jp-AnalystConversation')).toBeVisible();
  return ask(panel, QUESTION);
}

/** `prompt` sent in the open thread; the turn it made, once ended. */
async function ask(panel: Locator, prompt: string): Promise<Locator> {
  const turns = panel.locator('.jp-AnalystTurn');
  const before = await turns.count();
  const box = panel.getByRole('textbox', { name: 'Ask about your data' });
  await box.fill(prompt);
  await box.press('Enter');
  await expect(turns).toHaveCount(before + 1);
  const turn = turns.nth(before);
  await expect(turn).not.toHaveAttribute('data-status', 'running');
  return turn;
}

test('an editor verifies an answer by keyboard: the query file and the suite task are written', async ({
  browser
}) => {
  const ann = await signIn(browser, 'ann');
  const turn = await askInNewThread(ann);
  await expect(turn).toHaveAttribute('data-status', 'completed');

  // What the turn and the thread's summary spent is said above the prompt box.
  const budget = ann.panel.locator('.jp-AnalystBudget');
  await expect(budget.locator('.jp-AnalystBudget-text')).toHaveText(LEFT_AFTER_A_TURN);
  await expect(budget).toHaveAttribute('data-exhausted', 'false');

  // The action follows the answer's card in the Tab order.
  const button = turn.getByRole('button', { name: 'Verify this answer' });
  await expect(button).toBeVisible();
  await turn.locator('[data-card="answer"]').focus();
  await ann.page.keyboard.press('Tab');
  await expect(button).toBeFocused();
  await ann.page.keyboard.press('Enter');

  const outcome = turn.locator('.jp-AnalystVerifyAnswer-outcome');
  await expect(outcome).toHaveText(
    /^Verified: queries\/which_region_earned_the_most\.sql and task “which_region_earned_the_most” of suite\.jsonl \(answer 5 rows, by ann\)$/
  );
  await expect(button).toHaveCount(0);
  await ann.panel.screenshot({ path: path.join(SCREENSHOTS, 'team-verified.png') });

  // Both are in the server's context folder: the query with its header, the suite's task.
  const query = fs.readFileSync(
    path.join(CONTEXT, 'queries', 'which_region_earned_the_most.sql'),
    'utf-8'
  );
  expect(query).toContain(`-- question: ${QUESTION}`);
  expect(query).toContain('-- verified_by: ann');
  expect(query).toContain('GROUP BY r.region');
  const tasks = fs
    .readFileSync(path.join(CONTEXT, 'suite.jsonl'), 'utf-8')
    .trim()
    .split('\n')
    .map(line => JSON.parse(line));
  expect(tasks.map(t => [t.id, t.question, t.source])).toEqual([
    ['which_region_earned_the_most', QUESTION, 'sales']
  ]);
  expect(tasks[0].answer).toHaveLength(5);
  await ann.context.close();
});

test('a user who is not an editor is told they may not verify, and who may', async ({
  browser
}) => {
  const bob = await signIn(browser, 'bob');
  const turn = await askInNewThread(bob);
  await expect(turn).toHaveAttribute('data-status', 'completed');
  const suite = path.join(CONTEXT, 'suite.jsonl');
  const before = fs.existsSync(suite) ? fs.readFileSync(suite, 'utf-8') : null;

  await turn.getByRole('button', { name: 'Verify this answer' }).click();
  const outcome = turn.locator('.jp-AnalystVerifyAnswer-outcome');
  await expect(outcome).toHaveText(
    'You may not verify answers: only the context folder’s editors may. ' +
      'An administrator names them in c.AnalystApp.context_editors.'
  );
  await expect(turn.locator('.jp-AnalystVerifyAnswer')).toHaveAttribute('data-outcome', 'refused');
  await expect(turn.getByRole('button', { name: 'Verify this answer' })).toHaveCount(0);
  await bob.panel.screenshot({ path: path.join(SCREENSHOTS, 'team-not-an-editor.png') });
  // Nothing was written.
  expect(fs.existsSync(suite) ? fs.readFileSync(suite, 'utf-8') : null).toBe(before);
  await bob.context.close();
});

test('an editor saves a measure the team lacks as a definition, after seeing its file', async ({
  browser
}) => {
  // The team keeps a context folder (made here when the tests before have not made it).
  fs.mkdirSync(CONTEXT, { recursive: true });
  const file = path.join(CONTEXT, 'models', 'units_shipped.yml');
  const eve = await signIn(browser, 'eve');
  await expect(eve.panel.locator('.jp-AnalystNewThread-source')).toHaveValue('sales');
  await eve.panel.getByRole('button', { name: 'New thread', exact: true }).click();
  const turn = await ask(eve.panel, 'How many units shipped to the second region?');
  await expect(turn).toHaveAttribute('data-status', 'completed');

  const suggestion = turn.locator('.jp-AnalystSuggestion');
  await expect(suggestion.locator('.jp-AnalystSuggestion-measure')).toHaveText(
    'Not defined in the team’s context: SUM(quantity) FROM orders WHERE quantity > 0 AND region_id = 2'
  );
  expect(fs.existsSync(file)).toBe(false);
  await suggestion.getByRole('button', { name: 'Save as a definition' }).click();

  // The confirm step: the file as it would be written, and nothing written yet.
  const confirm = suggestion.getByRole('dialog', { name: 'Save as a definition' });
  await expect(confirm.locator('.jp-AnalystSuggestion-file')).toHaveText(
    'models/units_shipped.yml'
  );
  const yaml = confirm.locator('.jp-AnalystSuggestion-yaml');
  await expect(yaml).toContainText('filter:');
  await expect(yaml).toContainText("{{ Dimension('orders__region_id') }} = 2");
  expect(fs.existsSync(file)).toBe(false);
  // It fits the sidebar: the YAML scrolls within the card, the card within the panel.
  const [panelBox, cardBox] = [await eve.panel.boundingBox(), await suggestion.boundingBox()];
  expect(cardBox!.x + cardBox!.width).toBeLessThanOrEqual(panelBox!.x + panelBox!.width + 1);
  await suggestion.scrollIntoViewIfNeeded();
  await eve.panel.screenshot({ path: path.join(SCREENSHOTS, 'team-save-definition.png') });
  const shown = await yaml.textContent();

  await confirm.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(suggestion.locator('.jp-AnalystSuggestion-outcome')).toHaveText(
    'Saved as models/units_shipped.yml of the team’s context: SUM(quantity) FROM orders WHERE quantity > 0 AND region_id = 2'
  );
  await expect(suggestion.getByRole('button', { name: 'Save as a definition' })).toHaveCount(0);
  await eve.panel.screenshot({ path: path.join(SCREENSHOTS, 'team-definition-saved.png') });
  expect(fs.readFileSync(file, 'utf-8')).toBe(shown);
  await eve.context.close();
});

test('past the daily budget a turn ends budget_exhausted with when it resets; the line says so', async ({
  browser
}) => {
  const cal = await signIn(browser, 'cal');
  const budget = cal.panel.locator('.jp-AnalystBudget');
  const first = await askInNewThread(cal);
  await expect(first).toHaveAttribute('data-status', 'completed');
  await expect(budget.locator('.jp-AnalystBudget-text')).toHaveText(LEFT_AFTER_A_TURN);
  await cal.panel.screenshot({ path: path.join(SCREENSHOTS, 'team-budget-left.png') });

  // The second question's first call fits what is left; the next is past the limit.
  const second = await ask(cal.panel, QUESTION);
  await expect(second).toHaveAttribute('data-status', 'budget_exhausted');
  const said =
    /^Budget spent: the daily budget of user 'cal' is spent: [\d,]+ tokens used of 3,700 today; it resets at \d{4}-\d\d-\d\d 00:00 UTC$/;
  await expect(second.locator('.jp-AnalystTurn-end')).toHaveText(said);
  await expect(budget).toHaveAttribute('data-exhausted', 'true');
  await expect(budget.locator('.jp-AnalystBudget-text')).toHaveText(
    /^Budget spent until \d{4}-\d\d-\d\d 00:00 UTC$/
  );
  await cal.panel.screenshot({ path: path.join(SCREENSHOTS, 'team-budget-exhausted.png') });

  // Another user's budget is their own: ann still has what her one turn left.
  const ann = await cal.context.browser()!.newContext({
    baseURL: BASE_URL,
    extraHTTPHeaders: { [HEADER]: 'ann' }
  });
  const hers = await (await ann.request.get('analyst/api/budget')).json();
  expect([hers.exhausted, hers.budgets[0].left_tokens > 0]).toEqual([false, true]);
  await Promise.all([cal.context.close(), ann.close()]);
});
