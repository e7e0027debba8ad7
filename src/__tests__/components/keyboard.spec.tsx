/**
 * The conversation by keyboard: each card of a turn one tab stop, its controls reached by
 * Enter and the arrows and left by Escape (cardStops.ts); a card's explanation behind a
 * focusable ⓘ, not a tooltip over the card; the prompt box saying the key that brings the
 * focus to it, kept as JupyterLab's registry changes it.
 */

import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';
import { act } from 'react';

import { cardsOf, controlsOf } from '../../components/cardStops';
import { PromptBox } from '../../components/PromptBox';
import { PROMPT_COMMAND } from '../../components/Sidebar';
import { TurnList } from '../../components/TurnList';
import { AnalystContext } from '../../context';
import { ariaKeys, useShortcut } from '../../hooks/useShortcut';
import { reduceAll } from '../../model/reducer';
import { initialThreadView } from '../../model/view';
import { mountedRoot } from '../dom';
import { FakeServer } from '../fakeServer';
import { demoTurn } from '../helpers';

const mounted = mountedRoot();
const view = reduceAll(initialThreadView(), demoTurn());

function turnList(): HTMLElement {
  const client = new FakeServer([]).client();
  act(() =>
    mounted.root().render(
      <AnalystContext.Provider
        value={{ client, rendermime: null, commands: null, notebooks: null }}
      >
        <TurnList view={view} threadId="thr_1" />
      </AnalystContext.Provider>
    )
  );
  return mounted.host().querySelector<HTMLElement>('.jp-AnalystTurns')!;
}

/** A key pressed where the focus is. */
function press(key: string): void {
  const target = document.activeElement ?? document.body;
  act(() => {
    target.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
  });
}

/** What the browser's Tab stops at inside `root`, in order. */
function tabStops(root: HTMLElement): HTMLElement[] {
  const focusable =
    'a[href], button:not(:disabled), input, select, textarea, summary, pre, [tabindex]';
  return [...root.querySelectorAll<HTMLElement>(focusable)].filter(
    e => e.getAttribute('tabindex') !== '-1'
  );
}

describe('the cards by keyboard', () => {
  it('makes each card of a turn one tab stop, its controls out of the Tab order', () => {
    const list = turnList();
    const stops = tabStops(list);
    expect(stops.map(s => s.getAttribute('data-card'))).toEqual([
      'text',
      'tool',
      'sql',
      'python',
      'answer'
    ]);
    expect(stops).toEqual(cardsOf(list));
    // Every link, fold and button is still there, one Enter away.
    const sql = list.querySelector<HTMLElement>('[data-card="sql"]')!;
    expect(sql.querySelectorAll('a[href], button, summary').length).toBeGreaterThan(3);
    expect(sql.getAttribute('aria-label')).toBe('SQL step revenue_by_region');
    expect(list.querySelector('[data-card="tool"]')?.getAttribute('aria-label')).toBe(
      'Tables step'
    );
  });

  it('moves into a card by Enter, among its controls by the arrows, and out by Escape', () => {
    const list = turnList();
    const sql = list.querySelector<HTMLElement>('[data-card="sql"]')!;
    const controls = controlsOf(sql);
    // The fold of the card, its ⓘ, the query's fold, the artifact's links and details...
    expect(controls[0].tagName).toBe('SUMMARY');
    expect(controls[1].getAttribute('aria-label')).toBe(
      'Size of the prompt that asked for this step'
    );
    // ... but nothing hidden in a closed fold (the ids behind "Details").
    expect(controls.some(c => c.closest('details:not([open]) dl'))).toBe(false);

    sql.focus();
    press('Enter');
    expect(document.activeElement).toBe(controls[0]);
    press('ArrowDown');
    expect(document.activeElement).toBe(controls[1]);
    press('ArrowUp');
    press('ArrowUp');
    // Round the card: from the first to the last.
    expect(document.activeElement).toBe(controls[controls.length - 1]);
    press('Home');
    expect(document.activeElement).toBe(controls[0]);
    press('Escape');
    expect(document.activeElement).toBe(sql);
    press('ArrowRight');
    expect(document.activeElement).toBe(controls[0]);
  });

  it('keeps a card that streams in one tab stop', () => {
    const list = turnList();
    const more = reduceAll(initialThreadView(), demoTurn().slice(0, 8));
    const client = new FakeServer([]).client();
    act(() =>
      mounted.root().render(
        <AnalystContext.Provider
          value={{ client, rendermime: null, commands: null, notebooks: null }}
        >
          <TurnList view={more} threadId="thr_1" />
        </AnalystContext.Provider>
      )
    );
    act(() =>
      mounted.root().render(
        <AnalystContext.Provider
          value={{ client, rendermime: null, commands: null, notebooks: null }}
        >
          <TurnList view={view} threadId="thr_1" />
        </AnalystContext.Provider>
      )
    );
    return Promise.resolve().then(() => {
      // The observer ran after the cards came in.
      expect(tabStops(list).map(s => s.getAttribute('data-card'))).toEqual([
        'text',
        'tool',
        'sql',
        'python',
        'answer'
      ]);
    });
  });
});

describe('the explanation of a card', () => {
  it('is behind a focusable ⓘ that describes it, not a title over the card', () => {
    const list = turnList();
    expect(list.querySelectorAll('[data-card][title]')).toHaveLength(0);
    const answer = list.querySelector('[data-card="answer"]')!;
    const icon = answer.querySelector<HTMLButtonElement>('.jp-AnalystInfo-icon')!;
    expect(icon.tagName).toBe('BUTTON');
    expect(icon.getAttribute('aria-label')).toBe('Size of the prompt that wrote this text');
    const tip = document.getElementById(icon.getAttribute('aria-describedby')!);
    expect(tip?.getAttribute('role')).toBe('tooltip');
    expect(tip?.textContent).toMatch(/^Model call 4: /);
  });
  it('is hidden by Escape while the pointer rests on the ⓘ, and shown again once it leaves', () => {
    const list = turnList();
    const tip = list.querySelector<HTMLElement>('[data-card="sql"] .jp-AnalystInfo')!;
    const icon = tip.querySelector('button')!;
    act(() => {
      icon.dispatchEvent(
        new MouseEvent('mouseover', { bubbles: true, relatedTarget: document.body })
      );
    });
    // The focus is elsewhere (the prompt box): the key reaches the page, not the icon.
    act(() => {
      document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    });
    expect(tip.classList.contains('jp-mod-dismissed')).toBe(true);
    act(() => {
      icon.dispatchEvent(
        new MouseEvent('mouseout', { bubbles: true, relatedTarget: document.body })
      );
    });
    expect(tip.classList.contains('jp-mod-dismissed')).toBe(false);
    // Away from the icon, Escape is not its business.
    act(() => {
      document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    });
    expect(tip.classList.contains('jp-mod-dismissed')).toBe(false);
  });
});

describe('the shortcut to the prompt box', () => {
  it('is written as aria-keyshortcuts wants it', () => {
    expect(ariaKeys(['Ctrl Shift Y'])).toBe('Control+Shift+Y');
    expect(ariaKeys(['Cmd Shift Y'])).toBe('Meta+Shift+Y');
    expect(ariaKeys(['Ctrl K', 'Ctrl B'])).toBeNull();
    expect(ariaKeys([])).toBeNull();
  });

  it("is said by the box's hover text, and follows the registry's changes", () => {
    const commands = new CommandRegistry();
    commands.addCommand(PROMPT_COMMAND, { execute: () => undefined });
    function Box(): JSX.Element {
      const shortcut = useShortcut(commands, PROMPT_COMMAND);
      return <PromptBox busy={false} onSubmit={() => undefined} shortcut={shortcut} />;
    }
    act(() => mounted.root().render(<Box />));
    const box = mounted.host().querySelector('textarea')!;
    // No binding yet (the settings load after the panel renders): no key is claimed; the
    // hover text says only how to send (the placeholder is short for the sidebar).
    expect(box.getAttribute('title')).toBe(
      'Ask about your data: Enter sends, Shift+Enter starts a new line.'
    );
    expect(box.getAttribute('placeholder')).toBe('Ask about your data (Enter sends)');
    expect(box.getAttribute('aria-keyshortcuts')).toBeNull();

    let binding: { dispose(): void } = { dispose: () => undefined };
    act(() => {
      binding = commands.addKeyBinding({
        command: PROMPT_COMMAND,
        keys: ['Ctrl Shift Y'],
        selector: 'body'
      });
    });
    expect(box.getAttribute('aria-keyshortcuts')).toBe('Control+Shift+Y');
    expect(box.getAttribute('title')).toBe(
      'Ask about your data: Enter sends, Shift+Enter starts a new line. ' +
        `${CommandRegistry.formatKeystroke(['Ctrl Shift Y'])} brings you here from anywhere in JupyterLab.`
    );

    act(() => {
      binding.dispose();
      binding = commands.addKeyBinding({
        command: PROMPT_COMMAND,
        keys: ['Alt Shift Q'],
        selector: 'body'
      });
    });
    expect(box.getAttribute('aria-keyshortcuts')).toBe('Alt+Shift+Q');
    act(() => binding.dispose());
    expect(box.getAttribute('aria-keyshortcuts')).toBeNull();
  });
});
