// Leads and trials: the funnel per period (`leads`), the current period
// against the previous (`leads-summary`, which takes no date range) and
// the days between steps
// (`leads-days`). Each count links to the customers behind it: those of
// its period, of the days in the page's range when the range cuts it.

import { report } from '../api.js'
import { h, figure, section, table, paramSelect, rangeControls, rangeParam, pageHref, INTERVALS } from '../controls.js'
import { count, countChange, percent, percentChange, periodLabel, ratio } from '../format.js'
import { lineChart } from '../charts.js'
import { clippedPeriod } from '../periods.js'

export function query (params) {
  return { date: rangeParam(params), interval: params.get('interval') || 'month', as_of: params.get('as_of') }
}

const STEPS = [['leads', 'Leads', 'lead'], ['trials', 'Trials', 'trials'], ['conversions', 'Conversions', 'converted']]

/** The page's controls: range and interval. */
export function controls () {
  return h('form', { class: 'controls', onsubmit: (e) => e.preventDefault() }, ...rangeControls(), paramSelect('interval', 'Interval', INTERVALS, 'month'))
}

export async function render (view) {
  const params = view.params
  const q = query(params)
  const [series, summary, days] = await Promise.all([report('leads', q), report('leads-summary', { interval: q.interval, as_of: q.as_of }), report('leads-days', q)])
  const periods = series.result
  const link = (p, key, type) => {
    const span = clippedPeriod(params, p.date, q.interval)
    const cut = span.whole ? {} : { from: span.from, to: span.to }
    return h('a', {
      href: pageHref('customers', null, { status: 'all', 'selected-date': p.date, 'selected-type': type, interval: q.interval, ...cut }),
      'aria-label': `${key} of ${periodLabel(p.date, q.interval)}: customers`
    }, figure(count(p[key]), p[key]))
  }
  const current = summary.current
  return h('div', {},
    h('h1', {}, 'Leads & trials'),
    controls(),
    h('div', { class: 'kpis' }, [...STEPS.map(([key, label]) => [key, label, count, countChange]),
      ['lead_to_paid_rate', 'Lead to paid', percent, percentChange], ['trial_to_paid_rate', 'Trial to paid', percent, percentChange]]
      .map(([key, label, show, showChange]) => h('div', { class: 'kpi card', 'data-metric': key },
        h('h2', {}, label),
        h('p', { class: 'value' }, figure(show(current[key]), current[key])),
        h('p', { class: 'change' }, figure(showChange(summary.change[key]), summary.change[key], { class: 'figure change-value' }), ' vs previous period')))),
    section('Funnel',
      lineChart(periods.map((p) => p.date), STEPS.map(([key, label], i) => ({ label, values: periods.map((p) => p[key]), color: ['#0969da', '#8250df', '#1a7f37'][i] })), { bars: true, label: 'Leads, trials and conversions per period' }),
      table('Funnel per period', [
        { label: 'Period', cell: (p) => periodLabel(p.date, q.interval) },
        ...STEPS.map(([key, label, type]) => ({ label, numeric: true, cell: (p) => link(p, key, type) })),
        { label: 'Lead to paid', numeric: true, cell: (p) => figure(percent(p.lead_to_paid_rate), p.lead_to_paid_rate) },
        { label: 'Trial to paid', numeric: true, cell: (p) => figure(percent(p.trial_to_paid_rate), p.trial_to_paid_rate) }
      ], periods, { id: 'funnel' })),
    section('Days between steps', table('Average and median days', [
      { label: 'Period', cell: (p) => periodLabel(p.date, q.interval) },
      ...['lead_to_trial', 'trial_to_paid', 'lead_to_paid'].flatMap((step) => [
        { label: `${step.replaceAll('_', ' ')} (avg)`, numeric: true, cell: (p) => figure(ratio(p[`${step}_days_avg`]), p[`${step}_days_avg`]) },
        { label: 'median', numeric: true, cell: (p) => figure(ratio(p[`${step}_days_median`]), p[`${step}_days_median`]) }
      ])
    ], days.result, { id: 'lead-days' })))
}
