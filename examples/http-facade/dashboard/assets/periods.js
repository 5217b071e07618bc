// A report's period clipped to the page's range. The reports count the
// first and last period of a range from its start and to its end only,
// while the `-detail` reports and the customer list take a whole period
// (`selected-date`, no range): a drill-down keeps the rows of the days the
// figure counted, so that its rows add up to the figure clicked.

import { windowStart } from './controls.js'
import { dayIn } from './format.js'

/** One day later or earlier than a "YYYY-MM-DD" day. */
function addDays (date, days) {
  const [y, m, d] = date.split('-').map(Number)
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10)
}

/** The last day of the `interval` period starting on `start` (YYYY-MM-DD). */
export function periodEnd (start, interval) {
  const [y, m] = start.split('-').map(Number)
  const firstAfter = (months) => new Date(Date.UTC(y, m - 1 + months, 1)).toISOString().slice(0, 10)
  switch (interval) {
    case 'day': return start
    case 'week': return addDays(start, 6)
    case 'quarter': return addDays(firstAfter(3), -1)
    case 'year': return `${y}-12-31`
    default: return addDays(firstAfter(1), -1)
  }
}

/**
 * The first and last day of the page's range, as `rangeParam` asks the
 * service for it: From and To; From alone to the as-of day (else today);
 * else the `fallback` window ending on To, the as-of day or today.
 */
export function rangeDays (params, fallback = 'last-12-months') {
  const to = params.get('to') || (params.get('as_of') || new Date().toISOString()).slice(0, 10)
  return { from: params.get('from') || windowStart(fallback, to), to }
}

/**
 * The days of the `interval` period starting on `start` that fall in the
 * page's range: {from, to, whole}, `whole` when no day is cut off.
 */
export function clippedPeriod (params, start, interval, fallback) {
  const range = rangeDays(params, fallback)
  const end = periodEnd(start, interval)
  const from = range.from > start ? range.from : start
  const to = range.to < end ? range.to : end
  return { from, to, whole: from === start && to === end }
}

/** Whether the instant's day in `timeZone` is within the days {from, to}. */
export function onDays (instant, days, timeZone) {
  if (!instant) return false
  const day = dayIn(instant, timeZone)
  return day >= days.from && day <= days.to
}
