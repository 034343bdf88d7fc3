/**
 * OpenTelemetry for hookscope: {@linkcode instrument} turns a session's or a model's calls into
 * spans that follow the GenAI semantic conventions, with hook decisions as span events.
 *
 * Needs `@opentelemetry/api` (an optional peer dependency).
 *
 * @module
 */

export * from "./instrument.ts";
