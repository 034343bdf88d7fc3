// The byte half of the OpenAI-compatible stream: a TransformStream from response bytes to
// Server-Sent Events, on eventsource-parser's parser, with a bound on an unfinished event.

import { createParser, type EventSourceMessage } from "eventsource-parser";

/** Why the byte stream is not a usable event stream. */
export type SseFailure = "overflow" | "not_sse";

/** Options of {@linkcode SseEventStream}. */
export interface SseEventStreamOptions {
  /** The longest line or unfinished event buffered, in characters. */
  maxEventChars: number;
  /** How much of the start of the body is kept for an error excerpt, in characters. */
  headChars: number;
  /** Makes the error the stream fails with; `head` is the start of the body. */
  fail: (failure: SseFailure, head: string) => unknown;
}

/**
 * Response bytes → events. An event or line that grows past `maxEventChars` errors the stream
 * (`overflow`); a body that ends without a single event or comment but with some text errors it
 * (`not_sse`: a server that ignored `stream: true`, an HTML page).
 */
export class SseEventStream extends TransformStream<Uint8Array, EventSourceMessage> {
  /** Makes the transform. */
  constructor(options: SseEventStreamOptions) {
    const decoder = new TextDecoder();
    let sawSSE = false;
    let head = "";
    let overflow = false;
    let queue: EventSourceMessage[] = [];
    const parser = createParser({
      onEvent: (event) => {
        sawSSE = true;
        queue.push(event);
      },
      onComment: () => {
        sawSSE = true;
      },
      onError: (error) => {
        if (error.type === "max-buffer-size-exceeded") overflow = true;
      },
      maxBufferSize: options.maxEventChars,
    });
    const feed = (
      text: string,
      controller: TransformStreamDefaultController<EventSourceMessage>,
    ): void => {
      if (!sawSSE && head.length < options.headChars) head += text.slice(0, options.headChars);
      parser.feed(text);
      if (overflow) throw options.fail("overflow", head);
      const events = queue;
      queue = [];
      for (const event of events) controller.enqueue(event);
    };
    super({
      transform(bytes, controller) {
        feed(decoder.decode(bytes, { stream: true }), controller);
      },
      flush(controller) {
        feed(decoder.decode(), controller);
        feed("\n\n", controller);
        if (!sawSSE && head.trim() !== "") throw options.fail("not_sse", head);
      },
    });
  }
}
