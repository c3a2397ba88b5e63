/**
 * Large JSON answers sent in pieces as they are made, so memory holds a piece and never the
 * whole text (a million providers is ~770 MB of JSON, past what one string may hold).
 */
import {placementJson, type AppOptions} from './context.js'

/** Answers holding more entries than this are streamed, unless AppOptions.streamAbove says otherwise. */
export const STREAM_ABOVE = 10_000

/** Whether an answer of `entries` entries is streamed. */
export const streams = (options: AppOptions, entries: number) => entries > (options.streamAbove ?? STREAM_ABOVE)

/** A JSON answer as its pieces, in order: concatenated, they are the document. */
export class JsonStream {
  constructor(readonly pieces: () => Iterable<string | Uint8Array>) {}
}

/** An array answer `{key: [...]}` rendered `batch` items at a time. */
export function jsonArrayStream<T>(key: string, items: T[], render: (item: T) => unknown, batch = 2000): JsonStream {
  return new JsonStream(function* () {
    yield `{${JSON.stringify(key)}:[`
    for (let i = 0; i < items.length; i += batch) {
      const part = items.slice(i, i + batch).map((item) => placementJson(render(item)))
      yield (i ? ',' : '') + part.join(',')
    }
    yield ']}'
  })
}
