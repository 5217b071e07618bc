// Overview: the headline figures of the selected period (the last period
// of the range, the one holding as_of) with their change and trend, and
// the MRR chart. Every figure is a field of one `GET /reports/mrr` answer.

import { report } from '../api.js'
import { h, figure, section, paramSelect, rangeControls, rangeParam, pageHref, INTERVALS } from '../controls.js'
import { money, moneyChange, count, countChange, percent, percentChange, ratio, ratioChange, periodLabel } from '../format.js'
import { mrrChart, sparkline } from '../charts.js'

/**
 * The headline figures: field of a period, how it is shown, and where its
 * change comes from (a field of the period, else the difference between
 * the previous period's field and this one's, shown as is).
 */
export const KPIS = [
  { key: 'total_mrr', label: 'MRR', kind: 'money', change: 'mrr_diff' },
  { key: 'total_arr', label: 'ARR', kind: 'money' },
  { key: 'total_customers', label: 'Customers', kind: 'count', change: 'customers_diff' },
  { key: 'arpa', label: 'ARPA', kind: 'money' },
  { key: 'customer_churn_rate', label: 'Customer churn', kind: 'percent', lowerIsBetter: true },
  { key: 'net_mrr_churn_rate', label: 'Net MRR churn', kind: 'percent', lowerIsBetter: true },
  { key: 'nrr', label: 'NRR', kind: 'percent' },
  { key: 'quick_ratio', label: 'Quick ratio', kind: 'ratio' }
]

export const SHOW = {
  money: [money, moneyChange],
  count: [count, countChange],
  percent: [percent, percentChange],
  ratio: [ratio, ratioChange]
}

/** The change of a headline figure between two periods, or null. */
export function changeOf (kpi, period, previous) {
  if (kpi.change) return period[kpi.change]
  if (!previous || period[kpi.key] === null || previous[kpi.key] === null) return null
  return period[kpi.key] - previous[kpi.key]
}

export function query (params) {
  return {
    date: rangeParam(params),
    interval: params.get('interval') || 'month',
    as_of: params.get('as_of')
  }
}

/** The page's controls: interval and range. */
export function controls () {
  return h('form', { class: 'controls', onsubmit: (e) => e.preventDefault() },
    paramSelect('interval', 'Interval', INTERVALS, 'month'), ...rangeControls())
}

export async function render (view) {
  const params = view.params
  const q = query(params)
  const answer = await report('mrr', q)
  const periods = answer.result
  const currency = answer.currency
  const last = periods[periods.length - 1]
  const previous = periods[periods.length - 2]
  const dates = periods.map((p) => p.date)
  const cards = h('div', { class: 'kpis' }, KPIS.map((kpi) => {
    const [show, showChange] = SHOW[kpi.kind]
    const change = last ? changeOf(kpi, last, previous) : null
    const better = kpi.lowerIsBetter ? change < 0 : change > 0
    const worse = kpi.lowerIsBetter ? change > 0 : change < 0
    return h('div', { class: 'kpi card', 'data-metric': kpi.key },
      h('h2', {}, kpi.label),
      h('p', { class: 'value' }, figure(last ? show(last[kpi.key], currency) : '–', last ? last[kpi.key] : null)),
      h('p', { class: `change ${better ? 'up' : worse ? 'down' : ''}` },
        figure(showChange(change, currency), change, { class: 'figure change-value' }), ' vs previous period'),
      sparkline(dates, periods.map((p) => p[kpi.key]), kpi.label))
  }))
  const pick = (index) => {
    location.hash = pageHref('mrr', null, { interval: q.interval, from: params.get('from'), to: params.get('to'), selected: periods[index].date })
  }
  return h('div', {},
    h('h1', {}, 'Overview'),
    controls(),
    h('p', { class: 'period' }, last
      ? `Selected period: ${periodLabel(last.date, q.interval)} (${last.date} to ${last.end_date}), in ${currency}.`
      : 'No periods in this range.'),
    cards,
    section('MRR and movements',
      h('p', { class: 'hint' }, 'Click a period to see the movements behind it.'),
      mrrChart(periods, { currency, onPick: pick, label: 'MRR over the range' }),
      h('ul', { class: 'legend-list' }, periods.length
        ? h('li', {}, h('a', { href: pageHref('mrr', null, { interval: q.interval, from: params.get('from'), to: params.get('to') }) }, 'All movements of the range →'))
        : null)))
}
