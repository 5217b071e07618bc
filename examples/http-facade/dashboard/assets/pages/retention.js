// Retention: churn and retention rates per period (`mrr`), the cohort heat
// map (`cohort`, customers or MRR by month of first payment), committed
// MRR (`cmrr-summary`) and scheduled churn (`churn-scheduled-movements`).

import { report } from '../api.js'
import { h, figure, section, table, paramSelect, rangeControls, rangeParam, pageHref, INTERVALS } from '../controls.js'
import { money, moneyChange, count, percent, periodLabel, day } from '../format.js'
import { lineChart } from '../charts.js'

export const RATES = [
  { key: 'customer_churn_rate', label: 'Customer churn', color: '#cf222e' },
  { key: 'mrr_churn_rate', label: 'MRR churn', color: '#bc4c00' },
  { key: 'net_mrr_churn_rate', label: 'Net MRR churn', color: '#8250df' },
  { key: 'customer_retention_rate', label: 'Customer retention', color: '#1a7f37' },
  { key: 'mrr_retention_rate', label: 'MRR retention', color: '#0969da' }
]

export function query (params) {
  return { date: rangeParam(params), interval: params.get('interval') || 'month', as_of: params.get('as_of') }
}

/** Background of a heat map cell: darker blue for a higher percentage. */
function heat (percentValue) {
  if (percentValue === null || percentValue === undefined) return 'heat-none'
  const step = Math.max(0, Math.min(5, Math.floor(Math.min(percentValue, 100) / 20)))
  return `heat-${step}`
}

/** The page's controls: range, interval and the cohorts' metric. */
export function controls () {
  return h('form', { class: 'controls', onsubmit: (e) => e.preventDefault() },
    ...rangeControls(), paramSelect('interval', 'Interval', INTERVALS, 'month'),
    paramSelect('metric', 'Cohort metric', [['customers', 'Customers'], ['mrr', 'MRR']], 'customers'))
}

export async function render (view) {
  const params = view.params
  const q = query(params)
  const metric = params.get('metric') || 'customers'
  const [series, cohorts, cmrr, scheduled] = await Promise.all([
    report('mrr', q),
    report('cohort', { date: q.date, interval: 'month', metric, as_of: q.as_of }),
    report('cmrr-summary', { as_of: q.as_of }),
    report('churn-scheduled-movements', { as_of: q.as_of, sort: 'date', order: 'asc' })
  ])
  const currency = series.currency
  const periods = series.result
  const width = Math.max(0, ...cohorts.result.map((c) => c.periods.length))
  const heatmap = h('div', { class: 'table-wrap' }, h('table', { id: 'cohorts', class: 'heatmap' },
    h('caption', {}, `${metric === 'mrr' ? 'MRR' : 'Customers'} retained by month of first payment (percent of the first month; value below)`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Cohort'), h('th', { scope: 'col', class: 'num' }, 'New'),
      Array.from({ length: width }, (_, i) => h('th', { scope: 'col', class: 'num' }, `M${i}`)))),
    h('tbody', {}, cohorts.result.map((c) => h('tr', { 'data-cohort': c.cohort },
      h('th', { scope: 'row' }, periodLabel(c.cohort, 'month')),
      h('td', { class: 'num' }, figure(count(c.new_customers), c.new_customers)),
      Array.from({ length: width }, (_, i) => {
        const p = c.periods[i]
        if (!p) return h('td', { class: 'heat-none' })
        const value = metric === 'mrr' ? money(p.value, cohorts.currency || currency) : count(p.value)
        return h('td', { class: `num ${heat(p.percent)}`, title: `${periodLabel(p.date, 'month')}: ${value}` },
          figure(percent(p.percent), p.percent), h('br'), h('small', {}, value))
      }))))))
  const summary = cmrr.summary
  const cmrrFigures = [
    ['mrr_current', 'MRR now', money], ['cmrr', 'Committed MRR', money], ['change', 'Scheduled change', moneyChange],
    ['scheduled_churn', 'Scheduled churn', moneyChange], ['customers_committed', 'Customers committed', count]
  ]
  return h('div', {},
    h('h1', {}, 'Retention'),
    controls(),
    section('Churn and retention rates',
      lineChart(periods.map((p) => p.date), RATES.map((r) => ({ label: r.label, values: periods.map((p) => p[r.key]), color: r.color, kind: 'percent' })), { label: 'Churn and retention rates' }),
      table('Rates per period', [
        { label: 'Period', cell: (p) => periodLabel(p.date, q.interval) },
        ...RATES.map((r) => ({ label: r.label, numeric: true, cell: (p) => figure(percent(p[r.key]), p[r.key]) })),
        { label: 'NRR', numeric: true, cell: (p) => figure(percent(p.nrr), p.nrr) }
      ], periods, { id: 'rates' })),
    section('Cohorts', heatmap),
    section('Committed MRR',
      h('div', { class: 'kpis small' }, cmrrFigures.map(([key, label, show]) => h('div', { class: 'kpi card', 'data-metric': key },
        h('h3', {}, label), h('p', { class: 'value' }, figure(show(summary[key], cmrr.currency), summary[key])))))),
    section('Scheduled churn', table('Churn already scheduled after as_of', [
      { label: 'Day', cell: (r) => day(r.date) },
      { label: 'Customer', cell: (r) => h('a', { href: pageHref('customers', r.customer_id) }, r.customer_name || r.customer_id) },
      { label: 'Description', cell: (r) => r.description || '' },
      { label: 'MRR change', numeric: true, cell: (r) => figure(moneyChange(r.mrr_change_base_currency, currency), r.mrr_change_base_currency) }
    ], scheduled.result.list, { id: 'scheduled-churn' })))
}
