/**
 * The GenAI client metrics, as the semantic conventions define them: histograms
 * `gen_ai.client.operation.duration` (s), `gen_ai.client.token.usage` ({token}) and, for streamed
 * calls, `gen_ai.client.operation.time_to_first_chunk` and `…time_per_output_chunk` (s), with the
 * conventions' advised bucket boundaries.
 *
 * @module
 */

/** What {@linkcode GenAiMetrics} needs of an OpenTelemetry `Meter` (`metrics.getMeter(name)`). */
export interface MeterLike {
  /** Makes a histogram. */
  createHistogram(
    name: string,
    options?: {
      description?: string;
      unit?: string;
      advice?: { explicitBucketBoundaries?: number[] };
    },
  ): { record(value: number, attributes?: Record<string, string | number | boolean>): void };
}

type Histogram = ReturnType<MeterLike["createHistogram"]>;
type Attrs = Record<string, string | number | boolean>;

const DURATION_BUCKETS = [
  0.01,
  0.02,
  0.04,
  0.08,
  0.16,
  0.32,
  0.64,
  1.28,
  2.56,
  5.12,
  10.24,
  20.48,
  40.96,
  81.92,
];
const TOKEN_BUCKETS = [
  1,
  4,
  16,
  64,
  256,
  1024,
  4096,
  16384,
  65536,
  262144,
  1048576,
  4194304,
  16777216,
  67108864,
];
const CHUNK_BUCKETS = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5];

/** The four client histograms of one `instrument()`. */
export class GenAiMetrics {
  readonly #duration: Histogram;
  readonly #tokens: Histogram;
  readonly #firstChunk: Histogram;
  readonly #perChunk: Histogram;

  constructor(meter: MeterLike) {
    this.#duration = meter.createHistogram("gen_ai.client.operation.duration", {
      description: "GenAI operation duration.",
      unit: "s",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.#tokens = meter.createHistogram("gen_ai.client.token.usage", {
      description: "Number of input and output tokens used.",
      unit: "{token}",
      advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
    });
    this.#firstChunk = meter.createHistogram("gen_ai.client.operation.time_to_first_chunk", {
      description: "Time to receive the first chunk of a streamed response.",
      unit: "s",
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.#perChunk = meter.createHistogram("gen_ai.client.operation.time_per_output_chunk", {
      description: "Time between output chunks of a streamed response.",
      unit: "s",
      advice: { explicitBucketBoundaries: CHUNK_BUCKETS },
    });
  }

  /** One finished operation: its duration and, when known, its input and output tokens. */
  operation(seconds: number, attributes: Attrs, tokens: { input?: number; output?: number }) {
    this.#duration.record(seconds, attributes);
    // error.type belongs to the duration only.
    const { ["error.type"]: _error, ...base } = attributes;
    if (tokens.input !== undefined) {
      this.#tokens.record(tokens.input, { ...base, "gen_ai.token.type": "input" });
    }
    if (tokens.output !== undefined) {
      this.#tokens.record(tokens.output, { ...base, "gen_ai.token.type": "output" });
    }
  }

  /** The first chunk of a stream arrived `seconds` after the request. */
  firstChunk(seconds: number, attributes: Attrs): void {
    this.#firstChunk.record(seconds, attributes);
  }

  /** An output chunk after the first arrived `seconds` after the previous one. */
  nextChunk(seconds: number, attributes: Attrs): void {
    this.#perChunk.record(seconds, attributes);
  }
}
