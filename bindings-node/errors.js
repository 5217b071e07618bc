'use strict'
// The one error class of the package, shared by the embedded Ledger and the
// service Client (which loads no native code, so it lives apart).

/**
 * An error of the core or of the service, with its stable `code`,
 * `recordId` / `field` when known, and for the service the HTTP `status`.
 */
class SubmetricsError extends Error {
  constructor(message, code, recordId, field, status) {
    super(message)
    this.name = 'SubmetricsError'
    this.code = code
    this.recordId = recordId ?? undefined
    this.field = field ?? undefined
    this.status = status ?? undefined
  }
}

module.exports = { SubmetricsError }
