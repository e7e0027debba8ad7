/**
 * An incremental parser of `text/event-stream` bodies (the WHATWG "event stream
 * interpretation"), for the streams jupyter_analyst/server/sse.py writes: `id:` is the
 * event's sequence number, `event:` its type, `data:` its JSON; `: heartbeat` comments
 * keep an idle connection open; a last `event: error` frame (no id) says why a stream
 * ended without its turn's end.
 *
 * Text goes in as it arrives (a chunk may end anywhere, even between CR and LF); whole
 * frames come out. Decoding bytes to text is the caller's (a streaming TextDecoder).
 */

/** One dispatched event of the stream. */
export interface SseFrame {
  /** The last event id seen on the stream (kept across frames, as the standard says). */
  id: string;
  /** The event type (`message` when the frame named none). */
  event: string;
  /** The data lines, joined with LF. */
  data: string;
}

/** Reads an event stream chunk by chunk. */
export class SseParser {
  private line = '';
  private afterCR = false;
  private started = false;
  private data: string[] = [];
  private hasData = false;
  private eventType = '';
  private idBuffer = '';
  private lastId = '';
  private reconnect: number | null = null;
  private commentCount = 0;

  /** The frames completed by this chunk of text, in order. */
  push(chunk: string): SseFrame[] {
    const frames: SseFrame[] = [];
    let text = chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) {
        text = text.slice(1); // one leading byte order mark is not part of the stream
      }
    }
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10 /* LF */ && this.afterCR && i === start && this.line === '') {
        // The LF of a CRLF whose CR ended the previous line (maybe in the previous chunk).
        this.afterCR = false;
        start = i + 1;
        continue;
      }
      this.afterCR = false;
      if (c === 10 || c === 13 /* CR */) {
        this.line += text.slice(start, i);
        this.take(this.line, frames);
        this.line = '';
        this.afterCR = c === 13;
        start = i + 1;
      }
    }
    this.line += text.slice(start);
    return frames;
  }

  /**
   * The stream has ended: a frame not closed by a blank line is discarded (the standard's
   * rule, so a cut connection never delivers half an event). The parser can be reused.
   */
  end(): void {
    this.line = '';
    this.afterCR = false;
    this.started = false;
    this.data = [];
    this.hasData = false;
    this.eventType = '';
    this.idBuffer = this.lastId; // the id of a frame that never completed does not count
  }

  /** The id of the last completed frame: what `Last-Event-ID` sends on reconnection. */
  get lastEventId(): string {
    return this.lastId;
  }

  /** The reconnection time the server asked for with `retry:` (ms), or null. */
  get retry(): number | null {
    return this.reconnect;
  }

  /** Comment lines seen (heartbeats): a sign that an idle stream is alive. */
  get comments(): number {
    return this.commentCount;
  }

  private take(line: string, frames: SseFrame[]): void {
    if (line === '') {
      this.dispatch(frames);
      return;
    }
    if (line.startsWith(':')) {
      this.commentCount += 1;
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) {
      value = value.slice(1);
    }
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data.push(value);
        this.hasData = true;
        break;
      case 'id':
        if (!value.includes('\u0000')) {
          this.idBuffer = value;
        }
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) {
          this.reconnect = Number(value);
        }
        break;
      default:
        break; // other fields are ignored
    }
  }

  private dispatch(frames: SseFrame[]): void {
    this.lastId = this.idBuffer;
    if (this.hasData) {
      frames.push({
        id: this.idBuffer,
        event: this.eventType || 'message',
        data: this.data.join('\n')
      });
    }
    this.data = [];
    this.hasData = false;
    this.eventType = '';
  }
}

/** The frames of a whole event-stream body. */
export function parseSse(body: string): SseFrame[] {
  const parser = new SseParser();
  return parser.push(body);
}
