// The view's state lives in the URL fragment (`#/page/id?name=value`), so
// every view is bookmarkable; controls read and write it, and DOM helpers
// build the pages.

/** A part of the fragment decoded; one that is not valid percent-encoding, as it is. */
function decodePart (part) {
  try {
    return decodeURIComponent(part)
  } catch {
    return part
  }
}

/** The current view: page, optional id and parameters. */
export function currentView () {
  const hash = location.hash.replace(/^#\/?/, '')
  const [path, query = ''] = hash.split('?')
  const [page = '', ...rest] = path.split('/').map(decodePart)
  return { page: page || 'overview', id: rest.join('/') || null, params: new URLSearchParams(query) }
}

/** The fragment of a view; empty parameters are left out. */
export function viewHref (page, id, params) {
  const query = new URLSearchParams()
  for (const [name, value] of params instanceof URLSearchParams ? params.entries() : Object.entries(params || {})) {
    if (value !== undefined && value !== null && value !== '') query.set(name, value)
  }
  const text = query.toString()
  return `#/${page}${id ? '/' + encodeURIComponent(id) : ''}${text ? '?' + text : ''}`
}

/**
 * Where to go after logging in: `next` when it is a view of the dashboard
 * (a fragment `#/page...` other than the login and invitation), else the
 * overview. Anything else (another site, a path of the service) is not
 * followed.
 */
export function nextView (next) {
  const view = typeof next === 'string' && /^#\/[a-z]/.test(next) ? next : null
  return view && !/^#\/(login|invite)\b/.test(view) ? view : '#/overview'
}

/** Moves to the current page with `patch` applied to its parameters. */
export function setParams (patch, { replace = false } = {}) {
  const view = currentView()
  for (const [name, value] of Object.entries(patch)) {
    if (value === undefined || value === null || value === '') view.params.delete(name)
    else view.params.set(name, value)
  }
  const href = viewHref(view.page, view.id, view.params)
  if (replace) history.replaceState(null, '', href)
  else location.hash = href
}

/** Link to another page keeping the global `as_of`. */
export function pageHref (page, id, params = {}) {
  const asOf = currentView().params.get('as_of')
  return viewHref(page, id, { as_of: asOf, ...params })
}

/** Creates an element: h('div', {class: 'x', onclick}, child, ...). */
export function h (tag, attributes = {}, ...children) {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value)
    else if (name === 'class') element.className = value
    else if (name === 'dataset') Object.assign(element.dataset, value)
    else if (value === true) element.setAttribute(name, '')
    else element.setAttribute(name, String(value))
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue
    element.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
  return element
}

let controlCount = 0
/** A labelled control; `input` gets an id tied to the label. */
export function field (label, input, hint) {
  const id = input.id || `control-${++controlCount}`
  input.id = id
  return h('div', { class: 'field' }, h('label', { for: id }, label), input, hint ? h('small', {}, hint) : null)
}

/**
 * A select bound to the URL parameter `name`; a change also clears the
 * page offset and the parameters named in `clears`, those that depend on
 * this one's value (a drill-down into a breakdown value, say).
 */
export function paramSelect (name, label, options, fallback = '', { clears = [] } = {}) {
  const value = currentView().params.get(name) ?? fallback
  const cleared = Object.fromEntries(clears.map((dependent) => [dependent, null]))
  const select = h('select', { name, onchange: (e) => setParams({ [name]: e.target.value, offset: null, ...cleared }) },
    options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)))
  return field(label, select)
}

/** A text input bound to the URL parameter `name` (applied on change). */
export function paramInput (name, label, { type = 'text', placeholder, hint } = {}) {
  const input = h('input', {
    type,
    name,
    placeholder,
    value: currentView().params.get(name) ?? '',
    onchange: (e) => setParams({ [name]: e.target.value.trim(), offset: null })
  })
  return field(label, input, hint)
}

/** "YYYY-MM-DD" -> "yyyyMMdd". */
export const compactDate = (date) => date.replaceAll('-', '')

/**
 * The `date` range parameter from the URL's `from`/`to`: both give that
 * range; `from` alone runs to the `as_of` date, else today (UTC, as the
 * service reads it); `to` alone ends the `fallback` window on that day;
 * neither is `fallback`, a `last-N-months` or `last-N-years` shortcut.
 */
export function rangeParam (params, fallback = 'last-12-months') {
  const from = params.get('from')
  const to = params.get('to')
  if (!from && !to) return fallback
  const end = to || (params.get('as_of') || new Date().toISOString()).slice(0, 10)
  return `${compactDate(from || windowStart(fallback, end))}-${compactDate(end)}`
}

/**
 * The first day of the `shortcut` window ending on `end` (YYYY-MM-DD), as
 * the service counts it: last-N-months starts on the first of the month
 * N - 1 months back, last-N-years on the first of January N - 1 years back.
 */
export function windowStart (shortcut, end) {
  const [, count, unit] = /^last-(\d+)-(months|years)$/.exec(shortcut)
  const [year, month] = end.split('-').map(Number)
  const back = unit === 'years' ? (count - 1) * 12 + month - 1 : count - 1
  return new Date(Date.UTC(year, month - 1 - back, 1)).toISOString().slice(0, 10)
}

/** From/to date inputs bound to the URL. */
export function rangeControls () {
  return [paramInput('from', 'From', { type: 'date' }), paramInput('to', 'To', { type: 'date' })]
}

export const INTERVALS = [['day', 'Day'], ['week', 'Week'], ['month', 'Month'], ['quarter', 'Quarter'], ['year', 'Year']]

/** A figure with its raw value for tests and screen readers alike. */
export function figure (text, value, attributes = {}) {
  return h('span', { class: 'figure', 'data-value': value === null || value === undefined ? '' : String(value), ...attributes }, text)
}

/**
 * A table from column definitions: {label, cell(row), numeric}; `empty`
 * is the line shown when there are no rows (the attributes' `empty`, by
 * default one about the page's range).
 */
export function table (caption, columns, rows, { empty = 'Nothing in this range.', ...attributes } = {}) {
  return h('div', { class: 'table-wrap' },
    h('table', attributes,
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.numeric ? 'num' : null }, c.label)))),
      h('tbody', {}, rows.length === 0
        ? h('tr', {}, h('td', { colspan: columns.length, class: 'empty' }, empty))
        : rows.map((row) => h('tr', {}, columns.map((c) => h('td', { class: c.numeric ? 'num' : null }, c.cell(row))))))))
}

/** A message shown in place of a part that failed to load. */
export function failure (error) {
  return h('p', { class: 'error', role: 'alert' }, error.message || String(error))
}

/** A section with a heading. */
export function section (title, ...children) {
  const id = `section-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`
  return h('section', { class: 'card', 'aria-labelledby': id }, h('h2', { id }, title), ...children)
}
