/**
 * A chat's "Open in the Data analyst panel" (the Analyst persona's last line) opens the panel
 * on its thread, with no trust dialog: the page's real CommandLinker is connected as
 * JupyterLab connects it, and a command link in the same untrusted message would ask.
 */

import { CommandLinker } from '@jupyterlab/apputils';
import { CommandRegistry } from '@lumino/commands';
import * as fs from 'fs';
import * as path from 'path';

import { THREAD_LINK, listenForThreadLinks, threadOfLink } from '../../widgets/threadLinks';

/** A chat message as the chat shows it: untrusted markdown, rendered. */
function message(html: string): HTMLElement {
  const node = document.createElement('div');
  node.className = 'jp-chat-rendered-markdown';
  node.innerHTML = html;
  document.body.appendChild(node);
  return node;
}

function click(node: Element): MouseEvent {
  const event = new MouseEvent('click', { bubbles: true, cancelable: true, button: 0 });
  node.dispatchEvent(event);
  return event;
}

/** Wait for the command linker's click handler (async: it awaits its trust dialog). */
async function settled(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await Promise.resolve();
  }
}

describe('links to a thread', () => {
  let commands: CommandRegistry;
  let linker: CommandLinker;
  let opened: string[];
  let stop: () => void;

  beforeEach(() => {
    commands = new CommandRegistry();
    opened = [];
    commands.addCommand('jupyter-analyst:open', {
      label: 'Open the Data analyst panel',
      execute: args => {
        opened.push(String(args.thread));
      }
    });
    linker = new CommandLinker({ commands });
    stop = listenForThreadLinks(threadId => {
      void commands.execute('jupyter-analyst:open', { thread: threadId });
    });
  });

  afterEach(() => {
    stop();
    linker.dispose();
    document.body.innerHTML = '';
    window.history.replaceState(null, '', '/lab');
  });

  it("are the persona's own link, read back as the thread it names", () => {
    const reply = fs.readFileSync(
      path.join(__dirname, '../../../jupyter_analyst/persona/chat_message.py'),
      'utf-8'
    );
    expect(reply).toContain(`PANEL_LINK = "${THREAD_LINK}"`);
    expect(threadOfLink('#jupyter-analyst-thread=thr_1')).toBe('thr_1');
    expect(threadOfLink('http://127.0.0.1:8888/lab#jupyter-analyst-thread=thr_2')).toBe('thr_2');
    for (const other of [
      null,
      '',
      '#other=thr_1',
      '#jupyter-analyst-thread=',
      '#jupyter-analyst-thread=a%2Fb',
      '#jupyter-analyst-thread=%E0%A4%A',
      'http://x/?q=#jupyter-analyst-thread=thr_1#y',
      'http://x/lab#a#jupyter-analyst-thread=thr_1'
    ]) {
      expect(threadOfLink(other)).toBeNull();
    }
  });

  it('open the panel on the thread when clicked, with no trust dialog and no navigation', async () => {
    const node = message(
      '<p><a href="#jupyter-analyst-thread=thr_1">Open in the Data analyst panel</a></p>'
    );
    const event = click(node.querySelector('a')!);
    await settled();
    expect(opened).toEqual(['thr_1']);
    expect(event.defaultPrevented).toBe(true);
    expect(document.querySelector('.jp-Dialog')).toBeNull();
    expect(window.location.hash).toBe('');
  });

  it('where a command link in the same untrusted message asks first', async () => {
    const node = message(
      '<button data-commandlinker-command="jupyter-analyst:open" ' +
        'data-commandlinker-args=\'{"thread": "thr_1"}\'>Open in the Data analyst panel</button>'
    );
    click(node.querySelector('button')!);
    await settled();
    expect(opened).toEqual([]);
    const dialog = document.querySelector('.jp-Dialog');
    expect(dialog?.textContent).toContain('This document is not trusted');
  });

  it('open the thread a page is opened at, once, and leave other links alone', () => {
    stop();
    window.history.replaceState(null, '', '/lab?reset#jupyter-analyst-thread=thr_3');
    stop = listenForThreadLinks(threadId => opened.push(threadId));
    expect(opened).toEqual(['thr_3']);
    expect(window.location.pathname + window.location.search + window.location.hash).toBe(
      '/lab?reset'
    );
    const node = message('<a href="#section-2">Section 2</a><a href="notes.md">notes</a>');
    for (const anchor of Array.from(node.querySelectorAll('a'))) {
      expect(click(anchor).defaultPrevented).toBe(false);
    }
    expect(opened).toEqual(['thr_3']);
  });
});
