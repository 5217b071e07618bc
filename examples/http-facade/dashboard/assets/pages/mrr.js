// MRR and movements: the `mrr` report over a range and interval, in a
// currency, filtered and broken down as the report offers; the period
// table (`mrr-table`) below the chart; every bar, movement cell and
// breakdown row drills down into the `movement-table` rows behind it.

import { api, report } from '../api.js'
import { h, figure, section, table, paramSelect, paramInput, rangeControls, rangeParam, setParams, pageHref, viewHref, INTERVALS } from '../controls.js'
import { money, moneyChange, count, counted, percent, ratio, periodLabel, day } from '../format.js'
import { mrrChart, MOVEMENTS } from '../charts.js'

export const BREAKDOWNS = ['plan', 'currency', 'billing_freq', 'pricing_model', 'payment_method', 'country', 'industry', 'size', 'market', 'age']
/** URL parameter -> report parameter of the filters this page offers. */
export const FILTERS = ['baseCurrency', 'plan', 'country', 'billing_freq', 'industry', 'size', 'channel']

/** The report parameters of the page's URL. */
export function query (params) {
  const q = { date: rangeParam(params), interval: params.get('interval') || 'month', as_of: params.get('as_of') }
  for (const name of FILTERS) q[name] = params.get(name)
  return q
}

const MONEY_ROWS = new Set(['total_mrr', 'total_arr', 'new', 'expansion', 'contraction', 'churn', 'reactivation', 'fx_adjustment', 'mrr_diff', 'arpa', 'asp', 'ltv'])
const PERCENT_ROWS = new Set(['customer_churn_rate', 'mrr_churn_rate', 'net_mrr_churn_rate', 'nrr'])
const MOVEMENT_KEYS = new Set(MOVEMENTS.map((m) => m.key))

function cellText (metric, value, currency) {
  if (MONEY_ROWS.has(metric)) return money(value, currency)
  if (PERCENT_ROWS.has(metric)) return percent(value)
  if (metric === 'quick_ratio') return ratio(value)
  return count(value)
}

async function filterOptions () {
  const [plans, groups, account] = await Promise.all([
    api('GET', '/data/plans', { query: { limit: 10000 } }),
    api('GET', '/data/plan-groups', { query: { limit: 10000 } }),
    api('GET', '/data/fx-rates').catch(() => null)
  ])
  const currencies = new Set()
  for (const row of (account && account.result && account.result.list) || []) currencies.add(String(row.currency).toUpperCase())
  return { plans: plans.result.list, groups: groups.result.list, currencies: [...currencies].sort() }
}

/**
 * The page's controls: range, interval, filters and breakdown. Without the
 * answer's currency and the plans (when they failed to load), the
 * selects offer the values the URL names.
 */
export function controls (view, { currency, options } = {}) {
  const params = view.params
  const named = (name) => params.get(name) ? [params.get(name)] : []
  const currencies = options ? [currency, ...options.currencies] : named('baseCurrency')
  const plans = options
    ? [...options.plans.map((p) => [p.id, p.name]), ...options.groups.map((g) => [g.id, `Group: ${g.name}`])]
    : named('plan').map((id) => [id, id])
  return h('form', { class: 'controls', onsubmit: (e) => e.preventDefault() },
    ...rangeControls(),
    // A drill-down's period is one of the interval's; its value one of the breakdown's.
    paramSelect('interval', 'Interval', INTERVALS, 'month', { clears: ['selected', 'type', 'bvalue'] }),
    paramSelect('baseCurrency', 'Currency', [['', 'Account currency'], ...[...new Set(currencies)].map((c) => [c, c])]),
    paramSelect('plan', 'Plan', [['', 'All plans'], ...plans]),
    paramSelect('billing_freq', 'Billing frequency', [['', 'Any'], ['day', 'Daily'], ['week', 'Weekly'], ['month', 'Monthly'], ['year', 'Yearly']]),
    paramInput('country', 'Country', { placeholder: 'e.g. US DE' }),
    paramInput('industry', 'Industry', { placeholder: 'custom variable' }),
    paramInput('size', 'Size', { placeholder: 'custom variable' }),
    paramInput('channel', 'Channel', { placeholder: 'custom variable' }),
    paramSelect('breakdown', 'Breakdown', [['', 'None'], ...BREAKDOWNS.map((b) => [b, b.replace('_', ' ')])], '', { clears: ['bvalue'] }))
}

export async function render (view) {
  const params = view.params
  const q = query(params)
  const breakdown = params.get('breakdown') || ''
  const selected = params.get('selected')
  const [answer, pivot, options] = await Promise.all([
    report('mrr', { ...q, breakdown }),
    report('mrr-table', q),
    filterOptions()
  ])
  const currency = answer.currency
  const periods = answer.result
  const pick = (index, type) => setParams({ selected: periods[index].date, type: type || null, bvalue: null })

  const columns = pivot.columns
  const movementTable = h('div', { class: 'table-wrap' }, h('table', { id: 'mrr-table' },
    h('caption', {}, `Per ${q.interval}, in ${pivot.currency}`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Metric'), columns.map((c) => h('th', { scope: 'col', class: 'num' }, periodLabel(c, q.interval))))),
    h('tbody', {}, pivot.rows.map((row) => h('tr', { 'data-metric': row.metric },
      h('th', { scope: 'row' }, row.label),
      row.values.map((value, i) => {
        const text = figure(cellText(row.metric, value, pivot.currency), value)
        return h('td', { class: 'num' }, MOVEMENT_KEYS.has(row.metric) && value
          ? h('a', { href: viewHref('mrr', null, mergeParams(params, { selected: columns[i], type: row.metric, bvalue: null })), 'aria-label': `${row.label} ${periodLabel(columns[i], q.interval)}: movements` }, text)
          : text)
      }))))))

  const parts = [
    h('h1', {}, 'MRR & movements'),
    controls(view, { currency, options }),
    section('MRR chart',
      h('p', { class: 'hint' }, 'Click a period (or a figure in the table) to list its movements.'),
      mrrChart(periods, { currency, onPick: (i) => pick(i), label: 'MRR and movements' })),
    section('Movement table', movementTable)
  ]
  if (breakdown) parts.push(section(`Breakdown by ${breakdown.replace('_', ' ')}`, breakdownTable(periods, selected, currency, params)))
  if (selected) parts.push(await drilldown(params, q, breakdown, currency))
  return h('div', {}, ...parts)
}

function mergeParams (params, patch) {
  const merged = new URLSearchParams(params)
  for (const [name, value] of Object.entries(patch)) {
    if (value === null || value === undefined || value === '') merged.delete(name)
    else merged.set(name, value)
  }
  return merged
}

function breakdownTable (periods, selected, currency, params) {
  const period = periods.find((p) => p.date === selected) || periods[periods.length - 1]
  if (!period || !period.breakdown) return h('p', {}, 'No breakdown.')
  const rows = Object.entries(period.breakdown).map(([key, entry]) => ({ key, ...entry }))
  return table(`${period.date} to ${period.end_date}`, [
    { label: 'Value', cell: (r) => h('a', { href: viewHref('mrr', null, mergeParams(params, { selected: period.date, bvalue: r.key, type: null })) }, r.label || r.key) },
    { label: 'MRR', numeric: true, cell: (r) => figure(money(r.total_mrr, currency), r.total_mrr) },
    { label: 'Customers', numeric: true, cell: (r) => figure(count(r.total_customers), r.total_customers) },
    ...MOVEMENTS.map((m) => ({ label: m.label, numeric: true, cell: (r) => figure(money(r[m.key], currency), r[m.key]) }))
  ], rows, { id: 'breakdown-table' })
}

async function drilldown (params, q, breakdown, currency) {
  const type = params.get('type')
  const bvalue = params.get('bvalue')
  const answer = await report('movement-table', {
    ...q,
    'selected-date': params.get('selected'),
    'selected-type': type,
    breakdown: bvalue ? breakdown : null,
    'breakdown-value': bvalue,
    sort: 'mrr_change',
    order: 'desc'
  })
  const rows = answer.result.list
  const what = [type ? MOVEMENTS.find((m) => m.key === type)?.label || type : 'All movements', bvalue ? `${breakdown} ${bvalue}` : null].filter(Boolean).join(', ')
  const close = h('a', { href: viewHref('mrr', null, mergeParams(params, { selected: null, type: null, bvalue: null })) }, 'Close')
  return h('section', { class: 'card drilldown', id: 'drilldown', 'aria-labelledby': 'drilldown-title' },
    h('h2', { id: 'drilldown-title', tabindex: '-1' }, `${what} in the ${q.interval} of ${params.get('selected')}`),
    h('p', {}, `${counted(answer.result.count, 'movement')}. `, close),
    table('Movements', [
      { label: 'Day', cell: (r) => day(r.movement_date || r.date) },
      { label: 'Customer', cell: (r) => h('a', { href: pageHref('customers', r.customer_id) }, r.customer_name || r.customer_id) },
      { label: 'Type', cell: (r) => r.type },
      { label: 'Description', cell: (r) => r.description || '' },
      { label: 'MRR change', numeric: true, cell: (r) => figure(moneyChange(r.mrr_change_base_currency, currency), r.mrr_change_base_currency) }
    ], rows, { id: 'movement-rows' }))
}

