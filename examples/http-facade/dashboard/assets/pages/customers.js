// Customers: the searchable, sortable list of `GET /customers` (or the
// leads, trials or conversions of a period, days of it when the leads page
// links to a period its range cuts), and a
// customer's page: `GET /customers/{id}`, its MRR over time (`mrr` report
// for the customer), every invoice (`invoices-detail`) and every movement
// (`movement-table` for the customer).

import { api, report } from '../api.js'
import { h, figure, section, table, paramSelect, paramInput, setParams, viewHref, pageHref, rangeParam } from '../controls.js'
import { money, moneyChange, count, counted, day } from '../format.js'
import { lineChart } from '../charts.js'
import { onDays } from '../periods.js'

export const PAGE_SIZE = 50
export const SORTS = [['mrr', 'MRR'], ['name', 'Name'], ['created_date', 'Created'], ['paid_started', 'First payment'], ['cancel_date', 'Cancelled'], ['country', 'Country'], ['status', 'Status']]

/** The list parameters of the page's URL. */
export function query (params) {
  return {
    q: params.get('q'),
    status: params.get('status') || 'active',
    sort: params.get('sort') || 'mrr',
    order: params.get('order') || 'desc',
    limit: PAGE_SIZE,
    offset: params.get('offset') || 0,
    'selected-date': params.get('selected-date'),
    'selected-type': params.get('selected-type'),
    interval: params.get('selected-date') ? params.get('interval') : null,
    as_of: params.get('as_of')
  }
}

/** Of a funnel step (`selected-type`): its name and the customer's field holding its day. */
export const STEPS = {
  lead: { name: 'leads', day: 'created_date' },
  trials: { name: 'trials', day: 'trial_started' },
  converted: { name: 'conversions', day: 'paid_started' }
}

/**
 * The customers of the page: those `GET /customers` lists, or of a funnel
 * step, those whose step falls on the days `from`-`to` of the selected
 * period (the list takes whole periods, so it is read whole and narrowed
 * here); {list, total}.
 */
async function customerList (q, params) {
  const days = params.get('selected-date') && params.get('from') && params.get('to')
    ? { from: params.get('from'), to: params.get('to') }
    : null
  if (!days) {
    const answer = await api('GET', '/customers', { query: q })
    return { list: answer.result.list, total: answer.result.count }
  }
  const [everyone, account] = await Promise.all([allCustomers(q), api('GET', '/account')])
  const step = STEPS[q['selected-type'] || 'lead'] || STEPS.lead
  const matching = everyone.filter((c) => onDays(c[step.day], days, account.timezone))
  const offset = Number(q.offset)
  return { list: matching.slice(offset, offset + PAGE_SIZE), total: matching.length }
}

/** The longest page `GET /customers` answers. */
const LARGEST_PAGE = 10000

/** Every customer `GET /customers` lists for `q`, page after page. */
async function allCustomers (q) {
  const all = []
  for (;;) {
    const answer = await api('GET', '/customers', { query: { ...q, limit: LARGEST_PAGE, offset: all.length } })
    all.push(...answer.result.list)
    if (answer.result.list.length === 0 || all.length >= answer.result.count) return all
  }
}

/** The line saying which step and period the list is narrowed to. */
function stepNote (params) {
  const type = params.get('selected-type') || 'lead'
  const step = STEPS[type] ? STEPS[type].name : type
  const from = params.get('from')
  const to = params.get('to')
  const period = from && to
    ? `from ${from} to ${to}`
    : `of the ${params.get('interval') || 'month'} of ${params.get('selected-date')}`
  return h('p', { id: 'step-note' }, `Only the ${step} ${period}. `, h('a', { href: pageHref('customers') }, 'Show all'))
}

export async function render (view, context) {
  if (view.id) return detail(view.id, view.params)
  const params = view.params
  const q = query(params)
  // The list's MRR is in the account currency, which the summary names.
  const [{ list, total }, summary, account] = await Promise.all([customerList(q, params), report('summary', { as_of: q.as_of }), api('GET', '/account')])
  const currency = summary.currency
  const offset = Number(q.offset)
  const sortHeader = (key, label, numeric) => {
    const active = q.sort === key
    const next = active && q.order === 'desc' ? 'asc' : 'desc'
    return h('th', { scope: 'col', class: numeric ? 'num' : null, 'aria-sort': active ? (q.order === 'desc' ? 'descending' : 'ascending') : null },
      h('a', { href: viewHref('customers', null, { ...Object.fromEntries(params), sort: key, order: next, offset: null }) }, label, active ? (q.order === 'desc' ? ' ▼' : ' ▲') : ''))
  }
  const search = h('form', {
    class: 'controls',
    role: 'search',
    onsubmit: (event) => {
      event.preventDefault()
      setParams({ q: new FormData(event.target).get('q').trim(), offset: null })
    }
  },
  h('div', { class: 'field' }, h('label', { for: 'customer-search' }, 'Search'), h('input', { id: 'customer-search', name: 'q', type: 'search', value: q.q || '', placeholder: 'name, email or id' })),
  h('button', { type: 'submit' }, 'Search'),
  paramSelect('status', 'Status', [['active', 'Active'], ['cancelled', 'Cancelled'], ['trial', 'Trial'], ['lead', 'Lead'], ['all', 'All']], 'active'),
  paramSelect('sort', 'Sort by', SORTS, 'mrr'),
  paramSelect('order', 'Order', [['desc', 'Descending'], ['asc', 'Ascending']], 'desc'))
  const rows = list.map((c) => h('tr', { 'data-id': c.id },
    h('td', {}, h('a', { href: pageHref('customers', c.id) }, c.name || c.id)),
    h('td', {}, c.email || ''),
    h('td', {}, c.country || ''),
    h('td', {}, c.status),
    h('td', {}, day(c.created_date, account.timezone)),
    h('td', {}, day(c.paid_started, account.timezone)),
    h('td', { class: 'num' }, figure(money(c.mrr, currency), c.mrr))))
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of customers' },
    offset > 0 ? h('a', { href: viewHref('customers', null, { ...Object.fromEntries(params), offset: Math.max(0, offset - PAGE_SIZE) }) }, '← Previous') : null,
    h('span', {}, total ? `${offset + 1}–${offset + list.length} of ${count(total)}` : 'No customers'),
    offset + list.length < total ? h('a', { href: viewHref('customers', null, { ...Object.fromEntries(params), offset: offset + PAGE_SIZE }) }, 'Next →') : null)
  return h('div', {},
    h('h1', {}, 'Customers'),
    search,
    params.get('selected-date') ? stepNote(params) : null,
    h('div', { class: 'table-wrap' }, h('table', { id: 'customer-list' },
      h('caption', {}, `Customers (${count(total)}), MRR in ${currency}`),
      h('thead', {}, h('tr', {}, sortHeader('name', 'Name'), h('th', { scope: 'col' }, 'Email'), sortHeader('country', 'Country'), sortHeader('status', 'Status'), sortHeader('created_date', 'Created'), sortHeader('paid_started', 'First payment'), sortHeader('mrr', 'MRR', true))),
      h('tbody', {}, rows.length ? rows : h('tr', {}, h('td', { colspan: 7, class: 'empty' }, 'No customer matches.'))))),
    pager)
}

// One id as a list parameter names it: in double quotes, its quotes doubled,
// when it holds a space or comma or starts with a quote (`acme corp` would
// name the customers `acme` and `corp`).
function oneId (id) {
  return /[ ,]/.test(id) || id.startsWith('"') ? `"${id.replaceAll('"', '""')}"` : id
}

async function detail (id, params) {
  const asOf = params.get('as_of')
  const customerParam = oneId(id)
  const [customer, history, invoices, movements, account] = await Promise.all([
    api('GET', `/customers/${encodeURIComponent(id)}`, { query: { as_of: asOf } }),
    report('mrr', { customer: customerParam, interval: 'month', date: rangeParam(params, 'last-24-months'), as_of: asOf }),
    report('invoices-detail', { customer: customerParam, as_of: asOf }),
    report('movement-table', { customer: customerParam, date: rangeParam(params, 'last-10-years'), as_of: asOf, sort: 'date', order: 'desc' }),
    api('GET', '/account')
  ])
  const dayOf = (text) => day(text, account.timezone)
  const currency = history.currency
  const subscriptions = customer.current_subscriptions || []
  return h('div', { id: 'customer', 'data-id': id },
    h('p', {}, h('a', { href: pageHref('customers') }, '← Customers')),
    h('h1', {}, customer.name || id),
    h('dl', { class: 'facts' },
      h('dt', {}, 'Id'), h('dd', {}, id),
      h('dt', {}, 'Email'), h('dd', {}, customer.email || '–'),
      h('dt', {}, 'Country'), h('dd', {}, customer.country || '–'),
      h('dt', {}, 'Status'), h('dd', {}, customer.status),
      h('dt', {}, 'MRR'), h('dd', { 'data-metric': 'converted_mrr' }, figure(money(customer.converted_mrr, customer.converted_currency || currency), customer.converted_mrr)),
      h('dt', {}, 'Created'), h('dd', {}, dayOf(customer.created_date)),
      h('dt', {}, 'First payment'), h('dd', {}, dayOf(customer.paid_started)),
      h('dt', {}, 'Cancelled'), h('dd', {}, dayOf(customer.cancel_date))),
    section('MRR over time',
      lineChart(history.result.map((p) => p.date), [{ label: 'MRR', values: history.result.map((p) => p.total_mrr), color: '#0969da', kind: 'money' }], { currency, label: `MRR of ${customer.name || id}` })),
    section('Current subscriptions', table('Subscriptions', [
      { label: 'Plan', cell: (s) => s.name || s.plan_id },
      { label: 'Billing', cell: (s) => `${s.billing_freq_count || 1} × ${s.billing_freq}` },
      { label: 'Quantity', numeric: true, cell: (s) => count(s.quantity) },
      { label: 'MRR', numeric: true, cell: (s) => figure(money(s.mrr, s.currency), s.mrr) }
    ], subscriptions, { id: 'subscriptions' })),
    section('Invoices', table(counted(invoices.result.count, 'invoice'), [
      { label: 'Date', cell: (i) => dayOf(i.invoice_date) },
      { label: 'Invoice', cell: (i) => i.invoice_number || i.invoice_ref },
      { label: 'Type', cell: (i) => i.type },
      { label: 'Status', cell: (i) => i.invoice_status },
      { label: 'Description', cell: (i) => i.description || '' },
      { label: 'Total', numeric: true, cell: (i) => figure(money(i.total, i.currency), i.total) }
    ], invoices.result.list, { id: 'invoices' })),
    section('Movements', table(`${counted(movements.result.count, 'movement')}, in ${currency}`, [
      { label: 'Day', cell: (m) => day(m.movement_date || m.date) },
      { label: 'Type', cell: (m) => m.type },
      { label: 'Description', cell: (m) => m.description || '' },
      { label: 'MRR change', numeric: true, cell: (m) => figure(moneyChange(m.mrr_change_base_currency, currency), m.mrr_change_base_currency) }
    ], movements.result.list, { id: 'movements' })))
}

