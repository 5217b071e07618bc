// How figures are shown. Pure functions, also imported by the browser
// tests, which compare what a page shows with the API's answer through them.

const LOCALE = 'en-US'
const moneyFormats = new Map()

/** Integer cents in `currency` as money text, e.g. 123456 USD -> "$1,234.56". */
export function money (cents, currency) {
  if (cents === null || cents === undefined) return '–'
  const code = (currency || 'USD').toUpperCase()
  if (!moneyFormats.has(code)) {
    let format
    try {
      format = new Intl.NumberFormat(LOCALE, { style: 'currency', currency: code })
    } catch {
      format = new Intl.NumberFormat(LOCALE, { minimumFractionDigits: 2, maximumFractionDigits: 2 })
    }
    moneyFormats.set(code, format)
  }
  return moneyFormats.get(code).format(cents / 100)
}

/** A signed money change, "+$10.00" or "−$5.00". */
export function moneyChange (cents, currency) {
  if (cents === null || cents === undefined) return '–'
  return (cents > 0 ? '+' : cents < 0 ? '−' : '±') + money(Math.abs(cents), currency)
}

const countFormat = new Intl.NumberFormat(LOCALE)
/** A whole number with grouping, e.g. 12345 -> "12,345". */
export function count (value) {
  return value === null || value === undefined ? '–' : countFormat.format(value)
}

/** A count with its noun, singular for one, e.g. (1, 'invoice') -> "1 invoice", (2, 'invoice') -> "2 invoices". */
export function counted (value, noun) {
  return `${count(value)} ${value === 1 ? noun : noun + 's'}`
}

export function countChange (value) {
  if (value === null || value === undefined) return '–'
  return (value > 0 ? '+' : value < 0 ? '−' : '±') + count(Math.abs(value))
}

/** `value` with two decimals, a value that rounds to zero without a sign ("0.00", never "-0.00"). */
function twoDecimals (value) {
  return (Number(value.toFixed(2)) || 0).toFixed(2)
}

/** A change with two decimals and its sign, "±" when it rounds to zero (never "−0.00"). */
function signedTwoDecimals (value) {
  const rounded = Number(value.toFixed(2))
  return (rounded > 0 ? '+' : rounded < 0 ? '−' : '±') + twoDecimals(Math.abs(rounded))
}

/** A percentage with two decimals, e.g. 12.3456 -> "12.35%"; null -> "–". */
export function percent (value) {
  return value === null || value === undefined ? '–' : `${twoDecimals(value)}%`
}

/** A change of a percentage in points, e.g. "+1.20 pts". */
export function percentChange (value) {
  if (value === null || value === undefined) return '–'
  return `${signedTwoDecimals(value)} pts`
}

/** A ratio with two decimals, e.g. 2 -> "2.00"; null -> "–". */
export function ratio (value) {
  return value === null || value === undefined ? '–' : twoDecimals(value)
}

export function ratioChange (value) {
  if (value === null || value === undefined) return '–'
  return signedTwoDecimals(value)
}

const dayFormats = new Map()
/** The day (YYYY-MM-DD) of an ISO instant in the IANA `timeZone`. */
export function dayIn (instant, timeZone = 'UTC') {
  if (!dayFormats.has(timeZone)) {
    dayFormats.set(timeZone, new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }))
  }
  const parts = Object.fromEntries(dayFormats.get(timeZone).formatToParts(new Date(instant)).map((p) => [p.type, p.value]))
  return `${parts.year}-${parts.month}-${parts.day}`
}

/**
 * The day of an ISO date or instant, "2024-03-01": an instant on its day in
 * `timeZone` (the account's, where the service answers a record's date as
 * the instant its day starts: 2024-01-01 in Tokyo is 2023-12-31T15:00:00Z),
 * a date as it is.
 */
export function day (text, timeZone) {
  if (!text) return '–'
  const value = String(text)
  return timeZone && value.includes('T') ? dayIn(value, timeZone) : value.slice(0, 10)
}

/** A period start as a short label: "Mar 2024" for months, else the day. */
export function periodLabel (date, interval) {
  if (!date) return '–'
  if (interval === 'month') {
    const [y, m] = date.split('-').map(Number)
    return new Date(Date.UTC(y, m - 1, 1)).toLocaleString(LOCALE, { month: 'short', year: 'numeric', timeZone: 'UTC' })
  }
  if (interval === 'year') return date.slice(0, 4)
  if (interval === 'quarter') {
    const [y, m] = date.split('-').map(Number)
    return `Q${Math.floor((m - 1) / 3) + 1} ${y}`
  }
  return date.slice(0, 10)
}

/** Seconds since the epoch of a "YYYY-MM-DD" day (the x values of charts). */
export function epochSeconds (date) {
  const [y, m, d] = date.slice(0, 10).split('-').map(Number)
  return Date.UTC(y, m - 1, d) / 1000
}
