import { expect, test } from '@jupyterlab/galata';
import type { Locator, Page } from '@playwright/test';
import { execFileSync } from 'child_process';
import * as path from 'path';

import {
  ask,
  DEMO_ANSWER,
  DEMO_QUESTION,
  newThread,
  openPanel,
  PANEL_ID,
  SCREENSHOTS
} from './lab';
import { ITcpProxy, startProxy } from './tcpProxy';

/**
 * The conversation in a real JupyterLab with the scripted model (data/lab_script.json):
 * the demo question's cards, "continue" reusing everything, Stop in the middle of a slow
 * step, and a reload in the middle of a turn that picks up where it was.
 */

function turn(panel: Locator, index: number): Locator {
  return panel.locator('.jp-AnalystTurn').nth(index);
}

async function artifactIds(page: Page, threadId: string): Promise<string[]> {
  const reply = await page.request.get(`analyst/api/threads/${threadId}/artifacts`);
  expect(reply.ok()).toBe(true);
  const body = (await reply.json()) as { artifacts: { artifact_id: string }[] };
  return body.artifacts.map(a => a.artifact_id).sort();
}

/** The demo turn, asked and answered; its article. */
async function askDemo(panel: Locator): Promise<Locator> {
  await ask(panel, DEMO_QUESTION);
  const first = turn(panel, 0);
  await expect(first).toHaveAttribute('data-status', 'completed');
  return first;
}

test.describe('the conversation', () => {
  test('the demo question shows the SQL card, the table, the chart and the answer', async ({
    page
  }) => {
    const panel = await openPanel(page);
    await expect(panel.locator('.jp-AnalystModel')).toContainText(
      'scripted model (offline, canned replies)'
    );
    await newThread(panel);

    await ask(panel, DEMO_QUESTION);
    const first = turn(panel, 0);
    // Stop is there from the first moment, and the turn's progress is shown.
    await expect(panel.getByRole('button', { name: 'Stop the turn' })).toBeVisible();
    await expect(first.locator('.jp-AnalystTurn-prompt')).toHaveText(DEMO_QUESTION);

    const sql = first.locator('[data-card="sql"]');
    await expect(sql).toHaveAttribute('data-status', 'ok');
    await expect(sql.locator('.jp-AnalystCard-shape')).toContainText('60 rows × 3 columns');
    // The query, highlighted by JupyterLab's markdown renderer (CodeMirror's classes).
    await expect(sql.locator('.jp-AnalystCard-code pre')).toContainText('DATE_TRUNC');
    // The table preview, rendered as a notebook renders a data frame.
    await expect(sql.locator('.jp-AnalystCard-table table')).toBeVisible();
    await expect(sql.locator('.jp-AnalystCard-table table')).toContainText('Central');
    await expect(sql.locator('[data-card="artifact"][data-artifact-type="dataset"]')).toContainText(
      'revenue_by_region'
    );

    const python = first.locator('[data-card="python"]');
    await expect(python).toHaveAttribute('data-status', 'ok');
    await expect(python.locator('.jp-AnalystCard-stdout')).toContainText('Central');
    const chart = python.locator('[data-card="chart"] img');
    await expect(chart).toBeVisible();
    await expect
      .poll(() => chart.evaluate(img => (img as HTMLImageElement).naturalWidth))
      .toBeGreaterThan(0);

    const answer = first.locator('[data-card="answer"]');
    await expect(answer).toContainText(DEMO_ANSWER);
    // "Completed" once (the last state, no end marker saying it again); what ran in one line.
    await expect(first.locator('.jp-AnalystStates-end')).toHaveCount(0);
    await expect(first.locator('.jp-AnalystStates')).toContainText('Completed');
    await expect(first.locator('.jp-AnalystTurn-summary')).toHaveText('3 steps run');
    // Each card once: one SQL step, one Python step, one answer; the text streamed once.
    await expect(first.locator('[data-card="sql"]')).toHaveCount(1);
    await expect(first.locator('[data-card="python"]')).toHaveCount(1);
    await expect(first.locator('[data-card="answer"]')).toHaveCount(1);
    await expect(first.locator('[data-card="text"]')).toHaveCount(1);
    // The state strip went through the turn's states.
    await expect(first.locator('.jp-AnalystStates-step[data-state="data_fetching"]')).toHaveCount(
      1
    );
    // Context usage of the model call behind the step's ⓘ: the model server's count (the
    // scripted one counts too), and the estimate the prompt was assembled to, said apart.
    const info = sql.getByRole('button', { name: 'Size of the prompt that asked for this step' });
    await info.hover();
    await expect(sql.getByRole('tooltip')).toBeVisible();
    expect(await sql.getByRole('tooltip').textContent()).toMatch(
      /^Model call \d+: prompt [\d,]+ tokens? · reply [\d,]+ tokens?, counted by the model server\nEstimated before sending: [\d,]+ of [\d,]+ tokens/
    );
    // Escape hides it, the pointer still on the ⓘ (the focus stays in the prompt box).
    await page.keyboard.press('Escape');
    await expect(sql.getByRole('tooltip')).toBeHidden();
    await page.mouse.move(0, 0);
    // The turn over: Stop gone, the prompt has the focus back.
    await expect(panel.getByRole('button', { name: 'Stop the turn' })).toHaveCount(0);
    await expect(panel.getByRole('textbox', { name: 'Ask about your data' })).toBeFocused();

    await panel.screenshot({ path: path.join(SCREENSHOTS, 'conversation-answer.png') });
    await sql.screenshot({ path: path.join(SCREENSHOTS, 'card-sql.png') });
    await python.screenshot({ path: path.join(SCREENSHOTS, 'card-python-chart.png') });
  });

  test('"continue" reuses the steps, each folded to one line, and creates no artifact', async ({
    page
  }) => {
    const panel = await openPanel(page);
    const threadId = await newThread(panel);
    await askDemo(panel);
    const before = await artifactIds(page, threadId);
    expect(before.length).toBeGreaterThan(0);

    await ask(panel, 'continue');
    const second = turn(panel, 1);
    await expect(second).toHaveAttribute('data-status', 'completed');
    const steps = second.locator('[data-card="sql"], [data-card="python"]');
    await expect(steps).toHaveCount(2);
    await expect(second.locator('.jp-AnalystTurn-summary')).toHaveText('2 steps reused');
    for (const step of await steps.all()) {
      await expect(step).toHaveAttribute('data-reused', 'true');
      // One line: the header alone, "reused" its only badge, nothing of the step below it.
      const header = step.locator('.jp-AnalystCard-header');
      await expect(header.locator('.jp-AnalystBadge')).toHaveText(['reused']);
      await expect(step.locator('.jp-AnalystCard-code')).toBeHidden();
    }
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'continue-folded.png') });
    // Opened on demand: the earlier artifacts, marked reused, and the table.
    for (const step of await steps.all()) {
      await step.locator('.jp-AnalystCard-header').click();
    }
    const shown = second.locator('[data-card="artifact"]');
    await expect(shown.first()).toBeVisible();
    for (const artifact of await shown.all()) {
      await expect(artifact).toHaveAttribute('data-reused', 'true');
    }
    await expect(second.locator('[data-card="sql"] .jp-AnalystCard-table table')).toBeVisible();
    await expect(second.locator('[data-card="answer"]')).toContainText('Nothing new was needed');
    expect(await artifactIds(page, threadId)).toEqual(before);

    await panel.screenshot({ path: path.join(SCREENSHOTS, 'continue-reused.png') });
  });

  test("a staged plan shows its card with each step done, then each step's own card", async ({
    page
  }) => {
    const panel = await openPanel(page);
    await newThread(panel);
    await ask(panel, 'Orders and revenue per region, side by side');
    const first = turn(panel, 0);
    await expect(first).toHaveAttribute('data-status', 'completed');

    const plan = first.locator('[data-card="plan"]');
    await expect(plan).toHaveAttribute('data-status', 'ok');
    await expect(plan.locator('.jp-AnalystPlan-goal')).toHaveText(
      'orders and revenue per region, side by side'
    );
    await expect(plan.locator('.jp-AnalystPlan-stage')).toHaveCount(2);
    await expect(plan.locator('.jp-AnalystPlan-stage').first()).toHaveAttribute(
      'data-mode',
      'parallel'
    );
    for (const id of ['orders', 'revenue', 'side_by_side']) {
      await expect(plan.locator(`[data-step-id="${id}"]`)).toHaveAttribute('data-status', 'ok');
    }
    await expect(plan.locator('[data-step-id="side_by_side"] .jp-AnalystPlan-needs')).toHaveText(
      'needs orders, revenue'
    );
    await expect(plan.locator('.jp-AnalystCard-summary')).toHaveText('3 of 3 steps succeeded');
    // Each step's own card, with its dataset on it though the two queries ran together.
    const queries = first.locator('[data-card="sql"]');
    await expect(queries).toHaveCount(2);
    await expect(
      first.locator(
        '[data-card="sql"]:has([data-artifact-type="dataset"]:has-text("orders_per_region"))'
      )
    ).toHaveCount(1);
    await expect(
      first.locator(
        '[data-card="sql"]:has([data-artifact-type="dataset"]:has-text("revenue_per_region"))'
      )
    ).toHaveCount(1);
    await expect(first.locator('[data-card="python"] .jp-AnalystCard-stdout')).toContainText(
      'revenue_per_order'
    );

    await plan.screenshot({ path: path.join(SCREENSHOTS, 'plan-card.png') });
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'plan.png') });
  });

  test('an answer with remote images loads nothing and says where they pointed', async ({
    page
  }) => {
    // Every request to the attacker's host is answered here (nothing leaves the machine)
    // and recorded: the answer must make none.
    const beacons: string[] = [];
    await page.route(/attacker\.example/, route => {
      beacons.push(route.request().url());
      return route.fulfill({ status: 200, contentType: 'image/png', body: Buffer.alloc(0) });
    });
    const panel = await openPanel(page);
    await newThread(panel);
    await ask(panel, 'Show a hostile answer');
    const first = turn(panel, 0);
    await expect(first).toHaveAttribute('data-status', 'completed');

    const answer = first.locator('[data-card="answer"]');
    await expect(answer).toContainText('North leads with 1,204.');
    // Each remote image is written as text naming its address, as the server words it.
    await expect(answer).toContainText(
      '[image: revenue chart, http://attacker.example/beacon.png?d=North-1204]'
    );
    await expect(answer).toContainText(
      '[image: totals, https://attacker.example/html.png?d=secret]'
    );
    // The embedded image is shown, and is the only image.
    const images = answer.locator('img');
    await expect(images).toHaveCount(1);
    await expect(images).toHaveAttribute('src', /^data:image\/png;base64,/);
    await expect
      .poll(() => images.evaluate(img => (img as HTMLImageElement).naturalWidth))
      .toBe(48);
    // Links: to the web in a new tab, without opener or referrer; the others are text.
    const report = answer.getByRole('link', { name: 'the report' });
    await expect(report).toHaveAttribute('href', 'https://example.org/report');
    await expect(report).toHaveAttribute('target', '_blank');
    await expect(report).toHaveAttribute('rel', 'noopener noreferrer');
    await expect(answer.getByText('a file', { exact: true })).not.toHaveAttribute('href');
    await expect(answer.getByText('a script', { exact: true })).not.toHaveAttribute('href');
    // Nothing in the answer loads: no source, poster or style with an address, math
    // included once MathJax has typeset it (its cursor would load on hover).
    const math = answer.locator('mjx-container');
    await expect(math).toHaveCount(1);
    await math.hover();
    await expect
      .poll(() =>
        answer.evaluate(node =>
          Array.from(node.querySelectorAll('*')).flatMap(element =>
            Array.from(element.attributes)
              .filter(a => /attacker\.example/.test(a.value))
              .map(a => `${element.localName}[${a.name}=${a.value}]`)
          )
        )
      )
      .toEqual([]);
    expect(beacons).toEqual([]);

    await answer.screenshot({ path: path.join(SCREENSHOTS, 'hostile-answer.png') });
  });

  test('Stop in the middle of a slow step ends the turn as stopped', async ({ page }) => {
    const panel = await openPanel(page);
    await newThread(panel);
    await ask(panel, 'count slowly');
    const stop = panel.getByRole('button', { name: 'Stop the turn' });
    await expect(stop).toBeVisible();

    const first = turn(panel, 0);
    const python = first.locator('[data-card="python"]');
    await expect(python).toHaveAttribute('data-status', 'pending');
    await expect(python.locator('.jp-AnalystCard-code pre')).toContainText('counted');
    // While it runs: how long, and the lines it printed so far.
    const progress = python.locator('.jp-AnalystStepProgress');
    await expect(progress.locator('.jp-AnalystStepProgress-running')).toContainText(/Running · \d/);
    await expect(progress.getByLabel('Output so far')).toContainText('counted 2 of 90');
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'stop-running.png') });

    await stop.click();
    await expect(first).toHaveAttribute('data-status', 'interrupted');
    await expect(python).toHaveAttribute('data-status', 'unfinished');
    // What it printed before the stop is kept on the card.
    await expect(progress).toHaveAttribute('data-live', 'stopped');
    await expect(progress).toContainText('Printed before the turn stopped');
    await expect(progress.getByLabel('Output so far')).toContainText('counted 2 of 90');
    await expect(first.locator('.jp-AnalystTurn-end')).toContainText('Stopped');
    await expect(first.locator('.jp-AnalystStates-end')).toHaveText('Stopped');
    await expect(stop).toHaveCount(0);
    await expect(panel.getByRole('textbox', { name: 'Ask about your data' })).toBeFocused();

    await panel.screenshot({ path: path.join(SCREENSHOTS, 'stop-stopped.png') });
  });

  test('a model thinking is said, with for how long, never with what it thinks', async ({
    page
  }) => {
    // The sidebar at its default width, as a user first sees the panel.
    await page.sidebar.openTab(PANEL_ID);
    const panel = page.locator(`#${PANEL_ID}`);
    await expect(panel).toBeVisible();
    await newThread(panel);
    await ask(panel, 'think it over'); // a reasoning model thinking a line a second, for 90 s

    const first = turn(panel, 0);
    const thinking = first.locator('.jp-AnalystThinking');
    await expect(thinking).toContainText('Thinking…');
    await expect(thinking.locator('.jp-AnalystThinking-elapsed')).toHaveText(/^[1-9]\d* s$/);
    await expect(first).not.toContainText('what the panel must never show');
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'thinking.png') });

    await panel.getByRole('button', { name: 'Stop the turn' }).click();
    await expect(first).toHaveAttribute('data-status', 'interrupted');
    await expect(thinking).toHaveCount(0);
  });

  test('a thread busy with a turn started elsewhere says so and shows that turn', async ({
    page
  }) => {
    const panel = await openPanel(page);
    // Opening the new thread, the panel asks whether a turn runs on it. The turn elsewhere
    // starts only once the panel has been told no: told yes (a loaded server answering late),
    // it follows that turn from the start, the question below is never sent, and there is
    // no refusal to show.
    const toldIdle = page.waitForResponse(
      response =>
        response.request().method() === 'GET' &&
        /\/analyst\/api\/threads\/[^/]+$/.test(new URL(response.url()).pathname)
    );
    const threadId = await newThread(panel);
    expect(((await (await toldIdle).json()) as { active: boolean }).active).toBe(false);
    // Another tab (here: a plain request) starts a slow turn on the same thread.
    const elsewhere = page.request
      .post(`analyst/api/threads/${threadId}/turns`, {
        data: { prompt: 'count slowly' },
        headers: { Accept: 'text/event-stream' },
        timeout: 0
      })
      .catch(() => null);
    await expect
      .poll(
        async () =>
          (
            (await (await page.request.get(`analyst/api/threads/${threadId}`)).json()) as {
              active: boolean;
            }
          ).active
      )
      .toBe(true);

    await ask(panel, 'count slowly');
    const banner = panel.locator('.jp-AnalystBanner-error');
    await expect(banner).toHaveAttribute('data-reason', 'turn_in_progress');
    await expect(banner).toContainText('This thread is busy: a turn is already running on it.');
    // The question the server refused stays in the box, to send again.
    await expect(panel.getByRole('textbox', { name: 'Ask about your data' })).toHaveValue(
      'count slowly'
    );
    // The running turn is followed, and can be stopped from here.
    const first = turn(panel, 0);
    await expect(first.locator('[data-card="python"]')).toHaveAttribute('data-status', 'pending');
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'busy-thread.png') });
    await panel.getByRole('button', { name: 'Stop the turn' }).click();
    await expect(first).toHaveAttribute('data-status', 'interrupted');
    await expect(panel.locator('.jp-AnalystTurn')).toHaveCount(1);
    await elsewhere;
  });

  test('a reload in the middle of a turn picks it up with no duplicate', async ({ page }) => {
    let panel = await openPanel(page);
    const threadId = await newThread(panel);
    await ask(panel, 'count slowly');
    let first = turn(panel, 0);
    await expect(first.locator('[data-card="python"]')).toHaveAttribute('data-status', 'pending');
    await expect(first.locator('[data-card="text"]')).toContainText('Counting slowly');

    await page.reload();
    await page.locator('#jupyterlab-splash').waitFor({ state: 'detached' });
    panel = await openPanel(page);
    // The panel reopens the thread that was open.
    await expect(panel.locator('.jp-AnalystConversation')).toHaveAttribute(
      'data-thread-id',
      threadId
    );

    // The running turn is followed again: its events once each, and Stop is offered.
    first = turn(panel, 0);
    await expect(panel.locator('.jp-AnalystTurn')).toHaveCount(1);
    await expect(first).toHaveAttribute('data-status', 'running');
    await expect(first.locator('[data-card="python"]')).toHaveAttribute('data-status', 'pending');
    await expect(first.locator('[data-card="python"]')).toHaveCount(1);
    await expect(first.locator('[data-card="text"]')).toHaveCount(1);
    // The text itself (the card's ⓘ holds the size of its prompt).
    await expect(first.locator('[data-card="text"] .jp-AnalystText-body')).toHaveText(
      'Counting slowly, one number a second.'
    );
    await expect(first.locator('.jp-AnalystStates-step[data-state="planning"]')).toHaveCount(1);
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'resume-after-reload.png') });

    // What arrives after the reload lands on the same cards.
    await panel.getByRole('button', { name: 'Stop the turn' }).click();
    await expect(first).toHaveAttribute('data-status', 'interrupted');
    await expect(first.locator('[data-card="python"]')).toHaveCount(1);
    await expect(first.locator('[data-card="text"]')).toHaveCount(1);
  });
});

/** A free port for the relay, chosen as the configuration chooses the server's. */
const RELAY_PORT = Number(
  execFileSync(
    process.env.ANALYST_PYTHON || 'python3',
    ['-c', 'from jupyter_analyst.testing.servers.jupyter import free_port; print(free_port())'],
    { encoding: 'utf-8' }
  ).trim()
);

test.describe('the conversation over a network that drops', () => {
  // The page reaches JupyterLab through a relay the test can cut.
  test.use({ baseURL: `http://127.0.0.1:${RELAY_PORT}` });
  let relay: ITcpProxy;
  test.beforeAll(async () => {
    relay = await startProxy(RELAY_PORT, Number(process.env.ANALYST_UI_PORT));
  });
  test.afterAll(async () => {
    await relay.close();
  });

  test('a lost network in the middle of a turn reconnects from the last event', async ({
    page
  }) => {
    const panel = await openPanel(page);
    await newThread(panel);
    await ask(panel, 'count slowly');
    const first = turn(panel, 0);
    await expect(first.locator('[data-card="python"]')).toHaveAttribute('data-status', 'pending');
    const status = panel.locator('.jp-AnalystConversation-status');

    relay.cut();
    await expect(status).toHaveAttribute('data-connection', 'reconnecting');
    await expect(status).toHaveText('Connection lost: reconnecting…');
    await panel.screenshot({ path: path.join(SCREENSHOTS, 'reconnecting.png') });
    relay.restore();
    await expect(status).toHaveAttribute('data-connection', 'live');

    // The turn goes on from where it was: Stop reaches it, and nothing shows twice.
    await panel.getByRole('button', { name: 'Stop the turn' }).click();
    await expect(first).toHaveAttribute('data-status', 'interrupted');
    await expect(panel.locator('.jp-AnalystTurn')).toHaveCount(1);
    await expect(first.locator('[data-card="python"]')).toHaveCount(1);
    await expect(first.locator('[data-card="text"]')).toHaveCount(1);
    // The text itself (the card's ⓘ holds the size of its prompt).
    await expect(first.locator('[data-card="text"] .jp-AnalystText-body')).toHaveText(
      'Counting slowly, one number a second.'
    );
    await expect(first.locator('.jp-AnalystStates-end')).toHaveCount(1);
  });
});
