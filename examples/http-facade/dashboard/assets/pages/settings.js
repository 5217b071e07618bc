// Settings: the account's settings (`/account`), API keys
// (`/account/api-keys`), the team (`/account/team`: users and
// invitations), data sources (`/data/data-sources`, and files of records
// imported into them) and FX rates
// (`/data/fx-rates`). Everything but the caller's own profile needs an
// owner or admin; a readonly member sees the profile and a note.

import { api } from '../api.js'
import { h, field, section, table, failure } from '../controls.js'
import { day } from '../format.js'

/** A form whose submit runs `action(formData)` and re-renders the page. */
function actionForm (label, fields, action, context, { result } = {}) {
  const message = h('p', { role: 'status', class: 'form-message' })
  const form = h('form', {
    class: 'controls',
    'aria-label': label,
    onsubmit: async (event) => {
      event.preventDefault()
      message.className = 'form-message'
      try {
        const answer = await action(new FormData(form))
        if (result) {
          message.replaceChildren(result(answer))
        } else {
          await context.refresh()
        }
      } catch (error) {
        message.className = 'form-message error'
        message.textContent = error.message
      }
    }
  }, ...fields, h('button', { type: 'submit' }, label), message)
  return form
}

const input = (name, attributes = {}) => h('input', { name, ...attributes })
const select = (name, options, value) => h('select', { name }, options.map((o) => h('option', { value: o, selected: o === value }, o)))
const SHOWN = 1000
/** How many rows a list answer holds, when it holds fewer than there are. */
const shownOf = ({ count, list }, which = 'first') => count > list.length ? `; the ${which} ${list.length} of ${count}` : ''

/** The latest FX rates (the list is in date order): the last page of `SHOWN`. */
async function latestRates () {
  const first = await api('GET', '/data/fx-rates', { query: { limit: SHOWN } })
  const { count } = first.result
  return count > SHOWN ? api('GET', '/data/fx-rates', { query: { limit: SHOWN, offset: count - SHOWN } }) : first
}
/** The media type a data source's import reads a file as, by its extension. */
const IMPORT_TYPES = { csv: 'text/csv', jsonl: 'application/x-ndjson', ndjson: 'application/x-ndjson', json: 'application/json' }
/** Rejected records listed after an import; the rest are counted. */
const REJECTIONS_SHOWN = 100

/**
 * Sends a file of records, as one write, to a data source's import, or
 * without one to the records' upsert (plan groups get their ids from the
 * service, so they go into a data source only).
 */
function importFile (data) {
  const file = data.get('file')
  const type = IMPORT_TYPES[file.name.split('.').pop().toLowerCase()]
  if (!type) throw new Error(`${file.name}: import reads .csv, .jsonl, .ndjson or .json files`)
  const source = data.get('source')
  const collection = data.get('collection')
  if (!source && collection === 'plan_groups') throw new Error('Plan groups are imported into a data source: choose one.')
  const path = source ? `/data-sources/${encodeURIComponent(source)}/${collection}` : `/data/${collection}`
  return api('POST', path, { body: file, contentType: type })
}

/** What an import answered: how many records were stored, and why others were not. */
function importResult ({ result }) {
  result = result.list || result // customers answer {count, list}
  const rejected = result.filter((r) => r.import_status === 'error')
  const stored = `${result.length - rejected.length} of ${result.length} records stored`
  if (!rejected.length) return h('span', { id: 'import-result' }, `${stored}.`)
  const more = rejected.length - REJECTIONS_SHOWN
  return h('span', { id: 'import-result' }, `${stored}; ${rejected.length} rejected:`,
    h('ul', { id: 'import-rejected' }, rejected.slice(0, REJECTIONS_SHOWN).map((r) => h('li', {}, r.import_error)),
      more > 0 ? h('li', {}, `and ${more} more`) : null))
}

/** Every first day of week the service takes, by its number. */
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']

export async function render (view, context) {
  const profile = await api('GET', '/profile')
  const profileSection = section('Your profile', h('dl', { class: 'facts' },
    h('dt', {}, 'Email'), h('dd', { id: 'profile-email' }, profile.email || '–'),
    h('dt', {}, 'Name'), h('dd', {}, [profile.first_name, profile.last_name].filter(Boolean).join(' ') || '–'),
    h('dt', {}, 'Role'), h('dd', { id: 'profile-role' }, context.role),
    h('dt', {}, 'Last login'), h('dd', {}, profile.last_login || '–')))
  if (!context.canWrite) {
    return h('div', {}, h('h1', {}, 'Settings'), profileSection,
      h('p', { class: 'note', id: 'readonly-note' }, 'Your login is readonly: account settings, keys and the team need an owner or admin.'))
  }
  const [account, keys, team, sources, rates] = await Promise.all([
    api('GET', '/account'), api('GET', '/account/api-keys'), api('GET', '/account/team'),
    api('GET', '/data/data-sources', { query: { limit: SHOWN } }), latestRates()
  ])
  const accountForm = actionForm('Save settings', [
    field('Account name', input('name', { value: account.name, required: true })),
    field('Base currency', input('base_currency', { value: account.base_currency, required: true, pattern: '[A-Za-z]{3}', size: 4 })),
    field('Time zone', input('timezone', { value: account.timezone, required: true })),
    field('First day of week', h('select', { name: 'first_day_of_week' }, WEEKDAYS.map((day, number) =>
      h('option', { value: String(number), selected: number === account.first_day_of_week }, day)))),
    field('Churn grace (days)', input('churn_grace_days', { type: 'number', min: 0, max: 3650, step: 1, required: true, value: account.churn_grace_days })),
    field('Refund handling', select('refund_handling', ['reduce', 'ignore'], account.refund_handling), 'reduce: a refund lowers MRR; ignore: it does not')
  ], (data) => api('PUT', '/account', {
    body: {
      name: data.get('name'),
      base_currency: data.get('base_currency').toUpperCase(),
      timezone: data.get('timezone'),
      first_day_of_week: Number(data.get('first_day_of_week')),
      churn_grace_days: Number(data.get('churn_grace_days')),
      refund_handling: data.get('refund_handling')
    }
  }), context)
  accountForm.id = 'account-form'
  const revoke = (path, id, label) => h('button', {
    type: 'button',
    class: 'link',
    'aria-label': `${label} ${id}`,
    onclick: async (event) => {
      try {
        await api('DELETE', `${path}/${encodeURIComponent(id)}`)
        await context.refresh()
      } catch (error) {
        event.target.replaceWith(failure(error))
      }
    }
  }, label)
  return h('div', {},
    h('h1', {}, 'Settings'),
    profileSection,
    section('Account', accountForm),
    section('Team',
      table('Members and invitations', [
        { label: 'Email', cell: (m) => m.email || '(set on acceptance)' },
        { label: 'Name', cell: (m) => m.name || '' },
        { label: 'Role', cell: (m) => m.role },
        { label: 'Status', cell: (m) => m.status },
        { label: 'Last login', cell: (m) => m.last_login ? m.last_login.replace('T', ' ').replace('Z', ' UTC') : 'never' },
        { label: '', cell: (m) => m.status === 'disabled' || (context.session.user && m.id === context.session.user.id) ? '' : revoke('/account/team', m.id, m.status === 'pending' ? 'Revoke' : 'Disable') }
      ], team.result.list, { id: 'team' }),
      h('h3', {}, 'Invite a member'),
      actionForm('Invite', [
        field('Email', input('email', { type: 'email', required: true })),
        field('Name', input('name')),
        field('Role', select('role', context.role === 'owner' ? ['readonly', 'admin', 'owner'] : ['readonly', 'admin'], 'readonly'))
      ], (data) => api('POST', '/account/team', { body: { email: data.get('email'), name: data.get('name'), role: data.get('role') } }), context, {
        result: (answer) => h('span', {}, `Send this link to ${answer.email} (valid until ${day(answer.expires)}, shown once): `,
          h('input', { id: 'invite-link', readonly: true, value: location.origin + answer.path, size: 60, 'aria-label': 'Invitation link' }))
      })),
    section('API keys',
      table('Keys (the keys themselves are shown once, at creation)', [
        { label: 'Id', cell: (k) => k.id },
        { label: 'Name', cell: (k) => k.name },
        { label: 'Role', cell: (k) => k.role },
        { label: 'Created', cell: (k) => day(k.created) },
        { label: 'Status', cell: (k) => k.revoked ? 'revoked' : 'active' },
        { label: '', cell: (k) => k.revoked ? '' : revoke('/account/api-keys', k.id, 'Revoke') }
      ], keys.result.list, { id: 'api-keys' }),
      actionForm('Create key', [
        field('Name', input('name', { required: true })),
        field('Role', select('role', ['readonly', 'admin'], 'readonly'))
      ], (data) => api('POST', '/account/api-keys', { body: { name: data.get('name'), role: data.get('role') } }), context, {
        result: (answer) => h('span', {}, 'The new key (shown once): ', h('code', { id: 'new-key' }, answer.key))
      })),
    section('Data sources',
      table(`Data sources${shownOf(sources.result)}`, [
        { label: 'Id', cell: (s) => s.id }, { label: 'Name', cell: (s) => s.name }, { label: 'Type', cell: (s) => s.type || '' }
      ], sources.result.list, { id: 'data-sources', empty: 'No data sources yet.' }),
      actionForm('Add data source', [
        field('Id', input('id', { required: true })), field('Name', input('name', { required: true })), field('Type', input('type', { value: 'custom' }))
      ], (data) => api('POST', '/data/data-sources', { body: { id: data.get('id'), name: data.get('name'), type: data.get('type') } }), context),
      h('h3', {}, 'Import records'),
      actionForm('Import', [
        field('Data source', h('select', { name: 'source' }, h('option', { value: '' }, '(none)'),
          sources.result.list.map((s) => h('option', { value: s.id }, s.id)))),
        field('Records', select('collection', ['customers', 'plans', 'plan_groups', 'invoices'], 'invoices')),
        field('File', input('file', { type: 'file', required: true, accept: Object.keys(IMPORT_TYPES).map((e) => `.${e}`).join(',') }),
          'CSV with a header of field names, JSONL (one record per line) or JSON; up to 100,000 records and 64 MiB')
      ], importFile, context, { result: importResult })),
    section('FX rates',
      table(`Units of each currency per unit of the FX pivot, the base currency the account was created with (the latest rate on or before a day applies)${shownOf(rates.result, 'latest')}`, [
        { label: 'Date', cell: (r) => day(r.date) }, { label: 'Currency', cell: (r) => r.currency }, { label: 'Rate', numeric: true, cell: (r) => String(r.rate) }
      ], rates.result.list, { id: 'fx-rates', empty: 'No FX rates yet.' }),
      actionForm('Add rate', [
        field('Date', input('date', { type: 'date', required: true })),
        field('Currency', input('currency', { required: true, pattern: '[A-Za-z]{3}', size: 4 })),
        field('Rate', input('rate', { type: 'number', step: 'any', min: 0, required: true }))
      ], (data) => api('POST', '/data/fx-rates', { body: { date: data.get('date'), currency: data.get('currency').toUpperCase(), rate: Number(data.get('rate')) } }), context)))
}
