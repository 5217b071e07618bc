// The one way the pages reach the service: the same REST endpoints any API
// client calls, authenticated by the session cookie. Writes carry the
// session's CSRF token.

let csrfToken = null

/** Remembers the CSRF token of the current session (null after logout). */
export function setCsrfToken (token) { csrfToken = token }

/** An error answer of the service: `status` and its `{error, code}` body. */
export class ApiError extends Error {
  constructor (status, body) {
    super(body && body.error ? body.error : `the service answered ${status}`)
    this.status = status
    this.code = body && body.code
  }
}

/** A request that got no answer: the service is down or the network is. */
export class UnreachableError extends Error {
  constructor () {
    super('The service cannot be reached. Check the connection and try again.')
  }
}

/** Query parameters without empty values, as a query string. */
export function queryString (query = {}) {
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value))
  }
  const text = params.toString()
  return text ? `?${text}` : ''
}

/**
 * Sends a request; resolves to the JSON body, rejects with ApiError. The
 * body goes as JSON, or as it is (a File, say) under `contentType`. A
 * request without an answer rejects with UnreachableError.
 */
export async function api (method, path, { query, body, contentType } = {}) {
  const headers = { Accept: 'application/json' }
  if (body !== undefined) headers['Content-Type'] = contentType || 'application/json'
  if (method !== 'GET' && csrfToken) headers['X-CSRF-Token'] = csrfToken
  let response
  try {
    response = await fetch(path + queryString(query), {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined || contentType ? body : JSON.stringify(body)
    })
  } catch {
    throw new UnreachableError()
  }
  const data = await response.json().catch(() => null)
  if (!response.ok) throw new ApiError(response.status, data)
  return data
}

/** A report by name, as `GET /reports/{name}` answers it. */
export function report (name, query) {
  return api('GET', `/reports/${encodeURIComponent(name)}`, { query })
}
