import {ErrorCode, PlacementError, type ErrorCodeValue} from '../core/errors.js'

/** Status titles and the explanations webob puts before an error's detail. */
const STATUS: Record<number, [title: string, explanation: string]> = {
  400: ['Bad Request', 'The server could not comply with the request since it is either malformed or otherwise incorrect.'],
  401: ['Unauthorized', 'This server could not verify that you are authorized to access the document you requested.'],
  403: ['Forbidden', 'Access was denied to this resource.'],
  404: ['Not Found', 'The resource could not be found.'],
  405: ['Method Not Allowed', ''],
  406: ['Not Acceptable', 'The resource could not be generated that was acceptable to your browser.'],
  408: ['Request Timeout', 'The server has waited too long for the request to be sent by the client.'],
  409: ['Conflict', 'There was a conflict when trying to complete your request.'],
  413: ['Request Entity Too Large', 'The body of your request was too large for this server.'],
  414: ['Request-URI Too Long', 'The request-URI was too long for this server.'],
  415: ['Unsupported Media Type', 'The request media type is not supported by this server.'],
  500: ['Internal Server Error', 'The server has either erred or is incapable of performing the requested operation.'],
  503: ['Service Unavailable', 'The server is currently unavailable. Please try again at a later time.'],
}

export const statusTitle = (status: number): string => STATUS[status]?.[0] ?? 'Error'

/** No error text is longer than this: messages quote input, and input can be huge. */
export const MAX_DETAIL = 16 * 1024

/** The detail text as Placement renders it: webob's explanation, a blank line, then the message. */
export function detailText(status: number, fullMessage: string, method?: string): string {
  const rawMessage = fullMessage.length > MAX_DETAIL ? fullMessage.slice(0, MAX_DETAIL) + '...' : fullMessage
  // webob's strip_tags: newlines become spaces and anything tag-like goes.
  const message = stripTags(rawMessage.replace(/\n/g, ' ').replace(/\r/g, ''))
  if (status === 405) return `The method ${method} is not allowed for this resource.\n\n ${message}  `
  const explanation = STATUS[status]?.[1] ?? ''
  return message ? `${explanation}\n\n ${message}  ` : `${explanation}\n\n   `
}

/** Drops every `<...>` (shortest match), in one pass: a regex would rescan after each unclosed '<'. */
function stripTags(text: string): string {
  let out = ''
  let from = 0
  for (;;) {
    const open = text.indexOf('<', from)
    const close = open < 0 ? -1 : text.indexOf('>', open + 1)
    if (close < 0) return out + text.slice(from)
    out += text.slice(from, open)
    from = close + 1
  }
}

export interface ErrorBody {
  errors: Array<{
    status: number
    title: string
    detail: string
    request_id: string
    code?: ErrorCodeValue
    max_version?: string
    min_version?: string
  }>
}

export function errorBody(
  status: number,
  detail: string,
  requestId: string,
  code: ErrorCodeValue | null,
  extra: {max_version?: string; min_version?: string} = {},
  title = statusTitle(status),
): ErrorBody {
  const e: ErrorBody['errors'][0] = {status, title, detail, request_id: requestId}
  if (code) e.code = code
  Object.assign(e, extra)
  return {errors: [e]}
}

export function toPlacementError(err: unknown): PlacementError | null {
  if (err instanceof PlacementError) return err
  const e = err as {statusCode?: number; code?: string; message?: string}
  if (e && typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new PlacementError(413, 'Request body is too large.')
    return new PlacementError(e.statusCode, e.message ?? '', ErrorCode.DEFAULT)
  }
  return null
}
