/**
 * The transport to the jupyter-analyst REST/SSE API under `{baseUrl}analyst/api/`.
 *
 * Every call goes through `ServerConnection.makeRequest` with the server settings of
 * the running JupyterLab, so the token, the XSRF cookie and the base URL (JupyterHub's
 * `/user/<name>/` included) are those of the page. Streams are read from the response
 * body: `EventSource` cannot send the token header.
 */

import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import type { EventBase } from '../model';
import type { components, operations } from '../model/api.generated';

/** The path of the API under the server's base URL. */
export const API_PATH = 'analyst/api';

// ------------------------------------------------------------------ wire types
// Generated from the OpenAPI description (`npm run gen:api`; `npm test` checks it is current).

type Schemas = components['schemas'];

/** A configured data source: its name and kind, never its path or credentials. */
export type ISource = Schemas['SourceInfo'];

/** A thread as the server lists it; `source` is a configured source's name. */
export type IThread = Schemas['Thread'];

export type TurnStatus = ITurn['status'];

/** One prompt and what was done to answer it. */
export type ITurn = Schemas['Turn'];

/** The thread's live kernel, to attach a console to. */
export type IKernelInfo = Schemas['KernelInfo'];

/** What deleting a thread removed. */
export type IThreadDeleted = Schemas['ThreadDeleted'];

/** `GET threads/{id}`: the thread with its turns, whether one runs, and its last event. */
export type IThreadDetail = Schemas['ThreadReply'];

/**
 * An event as it comes off the wire, before the view model's guard (`parseEvent`) reads it:
 * only its sequence number and type are checked here (a type this client does not know is
 * skipped there). The typed union is the view model's (src/model/events.ts).
 */
export type IRawEvent = Pick<EventBase, 'seq'> & { type: string; [field: string]: unknown };

/** An artifact of the inventory. */
export type IArtifact = Schemas['Artifact'];

/** Another form an artifact's content is served in: a dataset's rows as CSV. */
export type ContentFormat = NonNullable<
  NonNullable<operations['getArtifactsArtifactIdContent']['parameters']['query']>['format']
>;

/** The model the server runs turns with, as `GET config` shows it (never its key). */
export type IModelConfig = Schemas['ModelInfo'];

/** `GET config`: what a client shows of the server's set-up. */
export type IServerConfig = Schemas['ConfigReply'];

/** `GET threads/{id}/tables`: its source's tables and questions to start from. */
export type ITablesReply = Schemas['TablesReply'];

/** A MIME bundle, what a notebook output holds: `GET artifacts/{id}/preview` answers one. */
export interface IMimeBundle {
  data: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

/** What `POST threads/{id}/turns` takes. */
export type INewTurn = Schemas['NewTurn'];

/** One server-sent event frame, as sent: `data` is still text. */
export interface ISseFrame {
  id: string | null;
  event: string;
  data: string;
}

// ------------------------------------------------------------------ errors

/** The body of every refusal of the API. */
export type IApiErrorBody = Schemas['Error'];

/**
 * A refusal of the API (`{message, reason, hint}` and its HTTP status), or a request that
 * never got an answer (`status` 0, `reason` `network_error`).
 */
export class AnalystApiError extends Error {
  readonly status: number;
  readonly reason: string | null;
  readonly hint: string | null;
  readonly body: IApiErrorBody;

  constructor(status: number, body: IApiErrorBody) {
    super(body.message);
    this.name = 'AnalystApiError';
    this.status = status;
    this.reason = body.reason ?? null;
    this.hint = body.hint ?? null;
    this.body = body;
  }

  /** The server has no model configured: no turn can run until one is. */
  get isNoModel(): boolean {
    return this.reason === 'no_model';
  }

  /** A turn already runs on the thread. */
  get isBusy(): boolean {
    return this.status === 409;
  }

  /** The error answering a response that is not ok. */
  static async fromResponse(response: Response): Promise<AnalystApiError> {
    const text = await response.text().catch(() => '');
    let body: IApiErrorBody | null = null;
    try {
      const parsed: unknown = JSON.parse(text);
      if (isErrorBody(parsed)) {
        body = parsed;
      }
    } catch {
      // not JSON: a proxy's page, say; described below
    }
    return new AnalystApiError(
      response.status,
      body ?? {
        message: `${response.status} ${response.statusText}`.trim() || 'request failed',
        reason: null,
        hint: null
      }
    );
  }
}

function isErrorBody(value: unknown): value is IApiErrorBody {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { message?: unknown }).message === 'string'
  );
}

// ------------------------------------------------------------------ SSE frames

/**
 * Splits an event-stream's text into frames as it arrives (the parts of the SSE format
 * our server sends: `id`, `event`, `data`, comments). Text may be cut anywhere.
 */
export class SseFrameSplitter {
  private _buffer = '';
  /** A `\r` that ended the last chunk: a line end, maybe the first half of `\r\n`. */
  private _pendingCR = false;
  private _ending = false;

  /** The frames completed by `text`. */
  push(text: string): ISseFrame[] {
    if (this._pendingCR) {
      text = '\r' + text;
      this._pendingCR = false;
    }
    if (text.endsWith('\r') && !this._ending) {
      text = text.slice(0, -1);
      this._pendingCR = true;
    }
    this._buffer += text.replace(/\r\n?/g, '\n');
    const frames: ISseFrame[] = [];
    let end: number;
    while ((end = this._buffer.indexOf('\n\n')) >= 0) {
      const block = this._buffer.slice(0, end);
      this._buffer = this._buffer.slice(end + 2);
      const frame = parseFrame(block);
      if (frame) {
        frames.push(frame);
      }
    }
    return frames;
  }

  /** The last frame when the stream ended without its blank line. */
  end(): ISseFrame[] {
    this._ending = true;
    const frames = this.push('');
    this._ending = false;
    const rest = this._buffer;
    this._buffer = '';
    const frame = rest.trim() ? parseFrame(rest) : null;
    return frame ? [...frames, frame] : frames;
  }
}

function parseFrame(block: string): ISseFrame | null {
  let id: string | null = null;
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (!line || line.startsWith(':')) {
      continue; // a heartbeat or comment
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) {
      value = value.slice(1);
    }
    if (field === 'id') {
      id = value;
    } else if (field === 'event') {
      event = value;
    } else if (field === 'data') {
      data.push(value);
    }
  }
  return data.length ? { id, event, data: data.join('\n') } : null;
}

/** The frames of a response's event stream, as they arrive. */
export async function* readFrames(response: Response): AsyncGenerator<ISseFrame, void, undefined> {
  if (!response.body) {
    yield* new SseFrameSplitter().push(await response.text());
    return;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const splitter = new SseFrameSplitter();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        break;
      }
      yield* splitter.push(decoder.decode(value, { stream: true }));
    }
    yield* splitter.push(decoder.decode());
    yield* splitter.end();
  } finally {
    // The consumer stopped early (a thread switch, a stop): let the connection go.
    reader.cancel().catch(() => undefined);
  }
}

// ------------------------------------------------------------------ the client

/** Options of a stream: an `AbortSignal` ends it from the client's side. */
export interface IStreamOptions {
  signal?: AbortSignal;
}

/**
 * Typed calls of the API. One per panel; `settings` default to the page's server
 * settings (`ServerConnection.makeSettings()`).
 */
export class AnalystClient {
  readonly settings: ServerConnection.ISettings;

  constructor(settings?: ServerConnection.ISettings) {
    this.settings = settings ?? ServerConnection.makeSettings();
  }

  /** The full URL of an API path (segments are URL-encoded by the caller's helpers). */
  url(path: string, query?: Record<string, string | number>): string {
    const url = URLExt.join(this.settings.baseUrl, API_PATH, path);
    if (!query || !Object.keys(query).length) {
      return url;
    }
    const search = Object.entries(query)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
      .join('&');
    return `${url}?${search}`;
  }

  /** The server's set-up: its model (never the key), sources and request limits. */
  async config(): Promise<IServerConfig> {
    return this.json<IServerConfig>('config');
  }

  /** The configured data sources. */
  async sources(): Promise<ISource[]> {
    return (await this.json<{ sources: ISource[] }>('sources')).sources;
  }

  /** The caller's threads, newest first. */
  async threads(): Promise<IThread[]> {
    return (await this.json<{ threads: IThread[] }>('threads')).threads;
  }

  /** A new thread on a configured source (the default one when absent). */
  async createThread(options: { source?: string; title?: string } = {}): Promise<IThread> {
    return this.json<IThread>('threads', {
      method: 'POST',
      body: JSON.stringify(options)
    });
  }

  /** Give a thread the user's own title; the thread as it now is. */
  async renameThread(threadId: string, title: string): Promise<IThread> {
    return this.json<IThread>(threadPath(threadId), {
      method: 'PATCH',
      body: JSON.stringify({ title })
    });
  }

  /**
   * Delete a thread with its turns, events, artifacts, audit notebook and kernel (409
   * `turn_in_progress` while a turn runs on it); how many artifacts it held.
   */
  async deleteThread(threadId: string): Promise<IThreadDeleted> {
    return this.json<IThreadDeleted>(threadPath(threadId), { method: 'DELETE' });
  }

  /** A thread with its turns, whether a turn runs, and its last event's number. */
  async thread(threadId: string): Promise<IThreadDetail> {
    return this.json<IThreadDetail>(threadPath(threadId));
  }

  /**
   * The tables of the thread's source as the model is told of them (row counts when read
   * in time), and questions to start the thread with.
   */
  async tables(threadId: string): Promise<ITablesReply> {
    return this.json<ITablesReply>(`${threadPath(threadId)}/tables`);
  }

  /** The thread's events after sequence number `after` (its history). */
  async events(threadId: string, after = 0): Promise<IRawEvent[]> {
    const path = `${threadPath(threadId)}/events`;
    return (await this.json<{ events: IRawEvent[] }>(path, {}, { after })).events;
  }

  /**
   * The thread's events after `after` as a stream: the backlog, then live events
   * until the running turn ends (or at once, when none runs).
   */
  async *followEvents(
    threadId: string,
    after = 0,
    options: IStreamOptions = {}
  ): AsyncGenerator<ISseFrame, void, undefined> {
    const response = await this.request(
      `${threadPath(threadId)}/events`,
      {
        headers: { Accept: 'text/event-stream' },
        signal: options.signal
      },
      { after }
    );
    yield* readFrames(response);
  }

  /**
   * Start a turn and stream its events. Refusals before the turn starts (no model
   * configured, a busy thread, an empty prompt) throw an {@link AnalystApiError}.
   */
  async *startTurn(
    threadId: string,
    turn: INewTurn,
    options: IStreamOptions = {}
  ): AsyncGenerator<ISseFrame, void, undefined> {
    const response = await this.request(`${threadPath(threadId)}/turns`, {
      method: 'POST',
      body: JSON.stringify(turn),
      headers: { Accept: 'text/event-stream' },
      signal: options.signal
    });
    yield* readFrames(response);
  }

  /** Stop the thread's running turn; whether one was running. */
  async cancel(threadId: string): Promise<boolean> {
    const reply = await this.json<{ cancelled: boolean }>(`${threadPath(threadId)}/cancel`, {
      method: 'POST',
      body: '{}'
    });
    return reply.cancelled;
  }

  /** The thread's artifact inventory, optionally of one type. */
  async artifacts(threadId: string, type?: IArtifact['type']): Promise<IArtifact[]> {
    const path = `${threadPath(threadId)}/artifacts`;
    const reply = await this.json<{ artifacts: IArtifact[] }>(
      path,
      {},
      type ? { type } : undefined
    );
    return reply.artifacts;
  }

  /** One artifact's metadata. */
  async artifact(artifactId: string): Promise<IArtifact> {
    return this.json<IArtifact>(`artifacts/${encodeURIComponent(artifactId)}`);
  }

  /**
   * The URL of an artifact's bytes (for a link; fetch it with {@link artifactContent}); a
   * dataset's rows as CSV with `format` `'csv'`.
   */
  artifactContentUrl(artifactId: string, format?: ContentFormat): string {
    return this.url(
      `artifacts/${encodeURIComponent(artifactId)}/content`,
      format ? { format } : undefined
    );
  }

  /** An artifact's bytes; a dataset's rows as CSV with `format` `'csv'` (400 for anything else). */
  async artifactContent(artifactId: string, format?: ContentFormat): Promise<Blob> {
    const response = await this.request(
      `artifacts/${encodeURIComponent(artifactId)}/content`,
      {},
      format ? { format } : undefined
    );
    return response.blob();
  }

  /** An artifact as a notebook output shows it (a dataset's first `rows` rows, an image). */
  async preview(artifactId: string, rows?: number): Promise<IMimeBundle> {
    return this.json<IMimeBundle>(
      `artifacts/${encodeURIComponent(artifactId)}/preview`,
      {},
      rows === undefined ? undefined : { rows }
    );
  }

  /** The thread's audit notebook (nbformat JSON); 409 `notebook_not_found` before its first turn. */
  async notebook(threadId: string): Promise<Record<string, unknown>> {
    return this.json<Record<string, unknown>>(`${threadPath(threadId)}/notebook`);
  }

  /** A request to the API; a response that is not ok throws its {@link AnalystApiError}. */
  async request(
    path: string,
    init: RequestInit = {},
    query?: Record<string, string | number>
  ): Promise<Response> {
    const headers = new Headers(init.headers);
    if (init.body !== undefined && !headers.has('Content-Type')) {
      headers.set('Content-Type', 'application/json');
    }
    let response: Response;
    try {
      response = await ServerConnection.makeRequest(
        this.url(path, query),
        { ...init, headers },
        this.settings
      );
    } catch (error) {
      if (error instanceof DOMException && error.name === 'AbortError') {
        throw error;
      }
      throw new AnalystApiError(0, {
        message: `the server cannot be reached: ${String(error)}`,
        reason: 'network_error',
        hint: 'check that JupyterLab is still running'
      });
    }
    if (!response.ok) {
      throw await AnalystApiError.fromResponse(response);
    }
    return response;
  }

  private async json<T>(
    path: string,
    init: RequestInit = {},
    query?: Record<string, string | number>
  ): Promise<T> {
    const response = await this.request(path, init, query);
    return (await response.json()) as T;
  }
}

function threadPath(threadId: string): string {
  return `threads/${encodeURIComponent(threadId)}`;
}

/** The event a frame carries, or `null` for frames that are not events (e.g. `error`). */
export function eventOf(frame: ISseFrame): IRawEvent | null {
  if (frame.event === 'error') {
    return null;
  }
  try {
    const value: unknown = JSON.parse(frame.data);
    if (
      typeof value === 'object' &&
      value !== null &&
      typeof (value as IRawEvent).seq === 'number' &&
      typeof (value as IRawEvent).type === 'string'
    ) {
      return value as IRawEvent;
    }
  } catch {
    // a malformed frame is skipped; the history (GET events) has every event
  }
  return null;
}

/** The error an `event: error` frame reports (the stream ended without its turn's end). */
export function streamErrorOf(frame: ISseFrame): AnalystApiError | null {
  if (frame.event !== 'error') {
    return null;
  }
  let detail: { reason?: string; message?: string } = {};
  try {
    detail = JSON.parse(frame.data) as typeof detail;
  } catch {
    // keep the raw text as the message
  }
  return new AnalystApiError(200, {
    message: detail.message ?? frame.data,
    reason: detail.reason ?? 'stream_error',
    hint: null
  });
}

// ------------------------------------------------------------------ the audit notebook

/** `POST threads/{id}/export`: where the notebook was written in the user's Jupyter folder. */
export type IExportResult = Schemas['ExportReply'];

/** One row of the verify report: what re-executing the notebook made of one artifact. */
export type IArtifactCheck = Schemas['ArtifactCheck'];

/** What re-executing the notebook made of one artifact of its manifest. */
export type CheckStatus = IArtifactCheck['status'];

/** A finished verification's report: `jupyter analyst verify --json`'s. */
export type IVerifyReport = Schemas['VerifyReply'];

/**
 * One re-execution of the thread's notebook (`POST threads/{id}/verify` answers it at once):
 * `queued`, `running`, then `done` with its report or `failed` with its error.
 */
export type IVerification = Schemas['Verification'];

/** A finished re-answer: the thread's answers restated on today's data. */
export type IReanswerReport = Schemas['ReanswerReply'];

/** One answer restated: today's text, and each of its claims then and now. */
export type IReansweredAnswer = Schemas['ReansweredAnswer'];

/** One claim of an answer, then and now (`changed`, `unchanged`, `gone`, `not_rechecked`). */
export type IClaimCheck = Schemas['ClaimCheck'];

/** `GET threads/{id}/steps/{call_id}/cell`: one SQL or Python step as a runnable cell. */
export type IStepCell = Schemas['StepCell'];

async function postJson<T>(
  client: AnalystClient,
  path: string,
  body: Record<string, unknown>
): Promise<T> {
  const response = await client.request(path, {
    method: 'POST',
    body: JSON.stringify(body)
  });
  return (await response.json()) as T;
}

/** Write the thread's audit notebook into the user's folder (`analyst/{title}-{thread}.ipynb` by default). */
export function exportThread(
  client: AnalystClient,
  threadId: string,
  path?: string
): Promise<IExportResult> {
  return postJson(client, `${threadPath(threadId)}/export`, path ? { path } : {});
}

/** How {@link verifyThread} goes about it. */
export interface IVerifyOptions {
  /** An export of the thread in the user's folder; absent: a fresh export. */
  path?: string;
  /** Stops following the verification (it goes on on the server). */
  signal?: AbortSignal;
  /** Told each state of the verification as it is read (`queued`, `running`, ...). */
  onProgress?: (verification: IVerification) => void;
  /** Milliseconds between two reads when the server names no `Retry-After`. */
  pollMs?: number;
}

/** Milliseconds to wait before reading a verification again, as its answer says. */
function retryAfterMs(response: Response, fallback: number): number {
  const seconds = Number(response.headers.get('Retry-After'));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : fallback;
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new DOMException('the verification is no longer followed', 'AbortError'));
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stop);
      resolve();
    }, ms);
    const stop = (): void => {
      clearTimeout(timer);
      reject(new DOMException('the verification is no longer followed', 'AbortError'));
    };
    signal?.addEventListener('abort', stop, { once: true });
  });
}

/**
 * Starts a verification of the thread's notebook with `body` and follows it: the server
 * answers at once, and the verification is read again every `Retry-After` seconds until it
 * is done (returned) or failed (thrown as an {@link AnalystApiError}). A verification of the
 * thread already under way is followed instead of refused.
 */
async function followVerification(
  client: AnalystClient,
  threadId: string,
  body: Record<string, unknown>,
  options: IVerifyOptions
): Promise<IVerification> {
  const { signal, onProgress, pollMs = 1000 } = options;
  let response: Response;
  try {
    response = await client.request(`${threadPath(threadId)}/verify`, {
      method: 'POST',
      body: JSON.stringify(body),
      signal
    });
  } catch (error) {
    const running =
      error instanceof AnalystApiError && error.reason === 'verify_in_progress'
        ? error.body.verification_id
        : null;
    if (!running) {
      throw error;
    }
    response = await client.request(
      `${threadPath(threadId)}/verifications/${encodeURIComponent(running)}`,
      { signal }
    );
  }
  for (;;) {
    const verification = (await response.json()) as IVerification;
    onProgress?.(verification);
    if (verification.status === 'done' && verification.report) {
      return verification;
    }
    if (verification.status === 'failed' || verification.status === 'done') {
      throw new AnalystApiError(
        200,
        verification.error ?? {
          message: 'the verification made no report',
          reason: 'verify_failed',
          hint: null
        }
      );
    }
    await pause(retryAfterMs(response, pollMs), signal);
    response = await client.request(
      `${threadPath(threadId)}/verifications/${encodeURIComponent(verification.verification_id)}`,
      { signal }
    );
  }
}

/**
 * Re-execute the thread's notebook (a fresh export unless `path`) and compare fingerprints;
 * the report once done (see {@link followVerification}).
 */
export async function verifyThread(
  client: AnalystClient,
  threadId: string,
  options: IVerifyOptions = {}
): Promise<IVerifyReport> {
  const { path } = options;
  const verification = await followVerification(client, threadId, path ? { path } : {}, options);
  return verification.report!;
}

/** A re-answer, done: the re-run's verify report and the answers restated. */
export interface IReanswered {
  report: IVerifyReport;
  reanswer: IReanswerReport;
}

/**
 * Re-answer the thread's answers on today's data: its notebook re-run on its source, each
 * cited number restated with today's value, the re-answered notebook written beside it.
 */
export async function reanswerThread(
  client: AnalystClient,
  threadId: string,
  options: IVerifyOptions = {}
): Promise<IReanswered> {
  const { path } = options;
  const body = path ? { path, reanswer: true } : { reanswer: true };
  const verification = await followVerification(client, threadId, body, options);
  if (!verification.reanswer) {
    // The verification followed was a plain one, under way when this was asked.
    throw new AnalystApiError(200, {
      message: 'a verification of this thread was under way: it ended without a re-answer',
      reason: 'verify_in_progress',
      hint: 'ask for the re-answer again'
    });
  }
  return { report: verification.report!, reanswer: verification.reanswer };
}

/** One step of the thread as a runnable cell. */
export async function stepCell(
  client: AnalystClient,
  threadId: string,
  callId: string
): Promise<IStepCell> {
  const path = `${threadPath(threadId)}/steps/${encodeURIComponent(callId)}/cell`;
  return (await (await client.request(path)).json()) as IStepCell;
}
