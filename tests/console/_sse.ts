// Reads the console's live stream (`GET /api/events`) as a client does: one fetch, events parsed
// from the body as they arrive.

/** One Server-Sent Event. */
export interface StreamEvent {
  readonly event: string;
  readonly data: unknown;
}

/** An open stream: events in order, read on demand. */
export interface OpenStream {
  /** The response's headers. */
  readonly headers: Headers;
  /** Waits (up to `timeoutMs`) for the next event matching `match`; earlier ones are kept. */
  next(match: (event: StreamEvent) => boolean, timeoutMs?: number): Promise<StreamEvent>;
  /** Every event seen so far. */
  readonly seen: StreamEvent[];
  /** Resolves once the server ended the stream. */
  readonly ended: Promise<void>;
  /** Cancels the request. */
  close(): void;
}

/** Opens `url` (a `/api/events` address) with `token`; rejects on a non-2xx answer. */
export async function openStream(url: string, token?: string): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  if (!response.ok) {
    const text = await response.text();
    throw new Error(`HTTP ${response.status}: ${text}`);
  }
  const seen: StreamEvent[] = [];
  let cursor = 0;
  const waker: { wake: (() => void) | null } = { wake: null };
  const ended = (async () => {
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let at: number;
        while ((at = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          let event = "message";
          let data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("event: ")) event = line.slice(7);
            else if (line.startsWith("data: ")) data += line.slice(6);
          }
          if (data !== "") seen.push({ event, data: JSON.parse(data) });
          waker.wake?.();
        }
      }
    } catch {
      // cancelled
    } finally {
      waker.wake?.();
    }
  })();
  let done = false;
  void ended.then(() => (done = true));
  return {
    headers: response.headers,
    seen,
    ended,
    close: () => controller.abort(),
    async next(match, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        while (cursor < seen.length) {
          const event = seen[cursor++];
          if (match(event)) return event;
        }
        if (done) throw new Error("the stream ended");
        const left = until - Date.now();
        if (left <= 0) throw new Error(`no matching event in ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waker.wake = () => {
            clearTimeout(timer);
            waker.wake = null;
            resolve();
          };
        });
      }
    },
  };
}
