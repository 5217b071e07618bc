// Cash flow: money that moved (`transactions`), failed payments
// (`cashflow-failed-payments`) and the failure rate
// (`cashflow-failure-rate`), refunds (`cashflow-refunds`) and what is still
// owed (`cashflow-outstanding-unpaid`). Failed and refunded amounts drill
// down into their `-detail` rows, those of the days in the page's range.

import { api, report } from '../api.js'
import { h, figure, section, table, paramSelect, rangeControls, rangeParam, pageHref, viewHref, INTERVALS } from '../controls.js'
import { money, count, counted, percent, periodLabel, day, dayIn } from '../format.js'
import { lineChart } from '../charts.js'
import { clippedPeriod, onDays } from '../periods.js'

export function query (params) {
  return { date: rangeParam(params), interval: params.get('interval') || 'month', as_of: params.get('as_of') }
}

const DETAILS = { failed: 'cashflow-failed-payments-detail', refunds: 'cashflow-refunds-detail' }

/** The page's controls: range and interval. */
export function controls () {
  // A drill-down's period is one of the interval's.
  return h('form', { class: 'controls', onsubmit: (e) => e.preventDefault() }, ...rangeControls(),
    paramSelect('interval', 'Interval', INTERVALS, 'month', { clears: ['detail', 'selected'] }))
}

export async function render (view) {
  const params = view.params
  const q = query(params)
  const [transactions, failed, rate, refunds, unpaid, account] = await Promise.all([
    report('transactions', q), report('cashflow-failed-payments', q), report('cashflow-failure-rate', q),
    report('cashflow-refunds', q), report('cashflow-outstanding-unpaid', { as_of: q.as_of, limit: 100 }),
    api('GET', '/account')
  ])
  const currency = transactions.currency
  const periods = transactions.result.map((p, i) => ({ ...p, failed: failed.result[i], rate: rate.result[i], refunds: refunds.result[i] }))
  const drill = (p, kind, value) => value
    ? h('a', { href: viewHref('cashflow', null, { ...Object.fromEntries(params), detail: kind, selected: p.date }) }, figure(money(value, currency), value))
    : figure(money(value, currency), value)
  const parts = [
    h('h1', {}, 'Cash flow'),
    controls(),
    section('Transactions',
      lineChart(periods.map((p) => p.date), [
        { label: 'Payments', values: periods.map((p) => p.payments), color: '#1a7f37', kind: 'money' },
        { label: 'Refunds', values: periods.map((p) => p.refund), color: '#cf222e', kind: 'money' },
        { label: 'Failed', values: periods.map((p) => p.failed.failed), color: '#bc4c00', kind: 'money' }
      ], { currency, bars: true, label: 'Payments, refunds and failed payments per period' }),
      table(`Per ${q.interval}, in ${currency}`, [
        { label: 'Period', cell: (p) => periodLabel(p.date, q.interval) },
        { label: 'Net', numeric: true, cell: (p) => figure(money(p.net, currency), p.net) },
        { label: 'Payments', numeric: true, cell: (p) => figure(money(p.payments, currency), p.payments) },
        { label: 'Payments (count)', numeric: true, cell: (p) => figure(count(p.payments_count), p.payments_count) },
        { label: 'Refunds', numeric: true, cell: (p) => drill(p, 'refunds', p.refunds.refunds) },
        { label: 'Failed', numeric: true, cell: (p) => drill(p, 'failed', p.failed.failed) },
        { label: 'Failed (count)', numeric: true, cell: (p) => figure(count(p.failed.failed_count), p.failed.failed_count) },
        { label: 'Failure rate', numeric: true, cell: (p) => figure(percent(p.rate.failure_rate), p.rate.failure_rate) }
      ], periods, { id: 'cashflow-table' }))
  ]
  if (params.get('detail') && DETAILS[params.get('detail')]) parts.push(await detail(params, q, currency))
  parts.push(section('Outstanding unpaid',
    h('div', { class: 'kpis small' },
      h('div', { class: 'kpi card', 'data-metric': 'unpaid_total' }, h('h3', {}, 'Total owed'), h('p', { class: 'value' }, figure(money(unpaid.total.amount, unpaid.currency), unpaid.total.amount)), h('p', {}, counted(unpaid.total.count, 'invoice'))),
      unpaid.buckets.map((b) => h('div', { class: 'kpi card', 'data-metric': `unpaid_${b.bucket}` }, h('h3', {}, `${b.bucket} days`), h('p', { class: 'value' }, figure(money(b.amount, unpaid.currency), b.amount)), h('p', {}, counted(b.count, 'invoice'))))),
    table('Unpaid invoices, newest first', [
      { label: 'Invoice date', cell: (r) => day(r.invoice_date, account.timezone) },
      { label: 'Customer', cell: (r) => h('a', { href: pageHref('customers', r.customer_id) }, r.customer_name || r.customer_id) },
      { label: 'Invoice', cell: (r) => r.invoice_number || r.invoice_id },
      { label: 'Status', cell: (r) => r.status },
      { label: 'Days past due', numeric: true, cell: (r) => count(r.days_past_due) },
      { label: 'Owed', numeric: true, cell: (r) => figure(money(r.amount_base_currency, unpaid.currency), r.amount_base_currency) }
    ], unpaid.result.list, { id: 'unpaid' })))
  return h('div', {}, ...parts)
}

async function detail (params, q, currency) {
  const kind = params.get('detail')
  const selected = params.get('selected')
  // A detail report lists a whole period (it takes no range); the figure
  // clicked counts the days of it in the page's range, so only their rows
  // are shown, each on its day in the account's time zone.
  const [answer, account] = await Promise.all([
    report(DETAILS[kind], { interval: q.interval, as_of: q.as_of, 'selected-date': selected }),
    api('GET', '/account')
  ])
  const days = clippedPeriod(params, selected, q.interval)
  const rows = answer.result.list.filter((r) => onDays(r.date, days, account.timezone))
  const total = rows.reduce((sum, r) => sum + r.amount_base_currency, 0)
  const close = { ...Object.fromEntries(params) }
  delete close.detail
  delete close.selected
  const what = kind === 'failed' ? 'Failed payments' : 'Refunds'
  return h('section', { class: 'card drilldown', id: 'drilldown', 'aria-labelledby': 'drilldown-title' },
    h('h2', { id: 'drilldown-title' }, days.whole ? `${what} in the ${q.interval} of ${selected}` : `${what} from ${days.from} to ${days.to}`),
    h('p', {}, h('a', { href: viewHref('cashflow', null, close) }, 'Close')),
    table(`${counted(rows.length, 'row')}, total ${money(total, currency)}`, [
      { label: 'Date', cell: (r) => dayIn(r.date, account.timezone) },
      { label: 'Customer', cell: (r) => h('a', { href: pageHref('customers', r.customer_id) }, r.customer_name || r.customer_id) },
      { label: 'Type', cell: (r) => r.type },
      { label: 'Description', cell: (r) => r.description || '' },
      { label: 'Amount', numeric: true, cell: (r) => figure(money(r.amount_base_currency, currency), r.amount_base_currency) }
    ], rows, { id: 'detail-rows' }))
}
