import * as React from 'react';
import { act } from 'react';

import { AnalystApiError } from '../../transport/api';
import { ErrorBanner, MODEL_FIX } from '../../components/ErrorBanner';
import { PromptBox } from '../../components/PromptBox';
import { mountedRoot } from '../dom';

const mounted = mountedRoot();

function render(element: React.ReactElement): void {
  act(() => mounted.root().render(element));
}

/** Type into a controlled textarea as a user does (React listens to `input`). */
function type(textarea: HTMLTextAreaElement, text: string): void {
  const setter = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value')!.set!;
  act(() => {
    setter.call(textarea, text);
    textarea.dispatchEvent(new Event('input', { bubbles: true }));
  });
}

function press(target: Element, init: KeyboardEventInit): boolean {
  let notCancelled = true;
  act(() => {
    notCancelled = target.dispatchEvent(
      new KeyboardEvent('keydown', { bubbles: true, cancelable: true, ...init })
    );
  });
  return notCancelled;
}

describe('PromptBox', () => {
  it('sends on Enter, and Shift+Enter is a new line', () => {
    const sent: string[] = [];
    render(<PromptBox busy={false} onSubmit={p => void sent.push(p)} />);
    const box = mounted.host().querySelector('textarea')!;

    type(box, 'Revenue by region');
    // Shift+Enter: the browser's default (a new line) happens, nothing is sent.
    expect(press(box, { key: 'Enter', shiftKey: true })).toBe(true);
    expect(sent).toEqual([]);

    expect(press(box, { key: 'Enter' })).toBe(false);
    expect(sent).toEqual(['Revenue by region']);
    expect(box.value).toBe('');
  });

  it('sends nothing blank, nor while a turn runs', () => {
    const sent: string[] = [];
    render(<PromptBox busy={false} onSubmit={p => void sent.push(p)} />);
    const box = mounted.host().querySelector('textarea')!;
    type(box, '   ');
    press(box, { key: 'Enter' });
    expect(sent).toEqual([]);

    render(<PromptBox busy={true} onSubmit={p => void sent.push(p)} />);
    type(box, 'continue');
    press(box, { key: 'Enter' });
    expect(sent).toEqual([]);
    expect(box.value).toBe('continue');
    expect(mounted.host().querySelector('button')!.disabled).toBe(true);
  });

  it('sends on Ctrl+Enter only, when Enter is set not to send', () => {
    const sent: string[] = [];
    render(<PromptBox busy={false} submitOnEnter={false} onSubmit={p => void sent.push(p)} />);
    const box = mounted.host().querySelector('textarea')!;
    type(box, 'continue');
    press(box, { key: 'Enter' });
    expect(sent).toEqual([]);
    press(box, { key: 'Enter', ctrlKey: true });
    expect(sent).toEqual(['continue']);
  });
});

describe('PromptBox never loses a question', () => {
  function deferred(): { promise: Promise<boolean>; settle: (accepted: boolean) => void } {
    let settle: (accepted: boolean) => void = () => undefined;
    const promise = new Promise<boolean>(resolve => (settle = resolve));
    return { promise, settle };
  }

  it('keeps the text until the server takes the turn, and after a refusal', async () => {
    const answers = [deferred(), deferred()];
    const sent: string[] = [];
    render(
      <PromptBox
        busy={false}
        onSubmit={p => {
          sent.push(p);
          return answers[sent.length - 1].promise;
        }}
      />
    );
    const box = mounted.host().querySelector('textarea')!;
    const button = mounted.host().querySelector('button')!;
    type(box, 'Revenue by region');
    press(box, { key: 'Enter' });
    // Sent, not yet taken: the text stays and Ask waits.
    expect(box.value).toBe('Revenue by region');
    expect(button.disabled).toBe(true);
    expect(button.textContent).toBe('Sending…');
    await act(async () => answers[0].settle(false));
    // Refused (a 409, no model, a lost network): the question is still there to send again.
    expect(box.value).toBe('Revenue by region');
    expect(button.disabled).toBe(false);

    press(box, { key: 'Enter' });
    await act(async () => answers[1].settle(true));
    expect(sent).toEqual(['Revenue by region', 'Revenue by region']);
    expect(box.value).toBe('');
  });

  it('keeps what the user typed meanwhile', async () => {
    const answer = deferred();
    render(<PromptBox busy={false} onSubmit={() => answer.promise} />);
    const box = mounted.host().querySelector('textarea')!;
    type(box, 'first question');
    press(box, { key: 'Enter' });
    type(box, 'first question, and a second thought');
    await act(async () => answer.settle(true));
    expect(box.value).toBe('first question, and a second thought');
  });

  it('says why nothing can be asked, and Ask is off', () => {
    const sent: string[] = [];
    render(
      <PromptBox
        busy={false}
        unavailable="Nothing can be answered: no model is configured for this server."
        onSubmit={p => {
          sent.push(p);
        }}
      />
    );
    const box = mounted.host().querySelector('textarea')!;
    type(box, 'anything');
    press(box, { key: 'Enter' });
    expect(sent).toEqual([]);
    expect(box.value).toBe('anything');
    const button = mounted.host().querySelector('button')!;
    expect(button.disabled).toBe(true);
    const reason = mounted.host().querySelector('.jp-AnalystPrompt-unavailable')!;
    expect(reason.textContent).toContain('no model is configured');
    expect(button.getAttribute('aria-describedby')).toBe(reason.id);
  });
});

describe('ErrorBanner', () => {
  it('says that no model is configured, with the fix', () => {
    const error = new AnalystApiError(400, {
      message: 'no model is configured for the server',
      reason: 'no_model',
      hint: 'set OPENAI_API_KEY / OPENAI_BASE_URL or c.AnalystApp.model_base_url'
    });
    render(<ErrorBanner error={error} />);
    const banner = mounted.host().querySelector('[role="alert"]')!;
    expect(banner.getAttribute('data-reason')).toBe('no_model');
    expect(banner.textContent).toContain('No model is configured');
    expect(banner.textContent).toContain('set OPENAI_API_KEY');
    expect(banner.textContent).toContain(MODEL_FIX);
  });

  it('shows any other refusal by its message and hint', () => {
    const error = new AnalystApiError(409, {
      message: 'a turn is already running on this thread',
      reason: 'turn_in_progress',
      hint: 'wait for it, or cancel it'
    });
    expect(error.isBusy).toBe(true);
    render(<ErrorBanner error={error} />);
    const banner = mounted.host().querySelector('[role="alert"]')!;
    expect(banner.textContent).toContain('a turn is already running on this thread');
    expect(banner.textContent).toContain('wait for it, or cancel it');
    expect(banner.textContent).not.toContain('No model');
  });
});
