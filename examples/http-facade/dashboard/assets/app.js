// The dashboard shell: who is logged in, the page navigation, the global
// `as_of` control and the router over URL fragments. Pages are modules in
// pages/ exporting `render(view, context)` that resolves to an element.

import { api, setCsrfToken, ApiError } from './api.js'
import { currentView, setParams, viewHref, nextView, h, failure } from './controls.js'
import * as login from './pages/login.js'
import * as overview from './pages/overview.js'
import * as mrr from './pages/mrr.js'
import * as retention from './pages/retention.js'
import * as leads from './pages/leads.js'
import * as cashflow from './pages/cashflow.js'
import * as customers from './pages/customers.js'
import * as settings from './pages/settings.js'

const PAGES = { overview, mrr, retention, leads, cashflow, customers, settings }
const TITLES = {
  overview: 'Overview',
  mrr: 'MRR & movements',
  retention: 'Retention',
  leads: 'Leads & trials',
  cashflow: 'Cash flow',
  customers: 'Customers',
  settings: 'Settings'
}

const main = document.getElementById('main')
let session = null
let rendering = 0
let rendered = 0

/** Marks the end of a render: a value no earlier render of this document had. */
function done (page) {
  main.dataset.page = page
  main.dataset.render = `${performance.timeOrigin}:${++rendered}`
  main.removeAttribute('aria-busy')
}

/** What every page may use: the session, role and whether it may write. */
function context () {
  const role = session.account.role
  return { session, role, canWrite: role === 'owner' || role === 'admin', refresh: render }
}

async function loadSession () {
  session = await api('GET', '/session')
  setCsrfToken(session.csrf_token)
  return session
}

function showShell (visible) {
  document.getElementById('top').hidden = !visible
  document.getElementById('nav').hidden = !visible
  if (!visible) return
  document.getElementById('account-name').textContent = session.account.name
  const user = session.user
  document.getElementById('who').textContent = user ? `${user.email} (${session.account.role})` : session.account.role
  const view = currentView()
  document.getElementById('as-of').value = view.params.get('as_of') || ''
  for (const link of document.querySelectorAll('#nav a')) {
    const page = link.dataset.page
    link.href = viewHref(page, null, { as_of: view.params.get('as_of') })
    if (page === view.page) link.setAttribute('aria-current', 'page')
    else link.removeAttribute('aria-current')
  }
}

async function render () {
  const ticket = ++rendering
  main.setAttribute('aria-busy', 'true')
  let view = currentView()
  const loggedIn = Boolean(session && session.account)
  if (view.page === 'invite' || !loggedIn) {
    if (view.page !== 'invite' && view.page !== 'login') {
      history.replaceState(null, '', viewHref('login', null, { next: location.hash }))
      view = currentView()
    }
    showShell(false)
    document.title = view.page === 'invite' ? 'Accept invitation · submetrics' : 'Log in · submetrics'
    const content = await login.render(view, { onLoggedIn })
    if (ticket !== rendering) return
    main.replaceChildren(content)
    done(view.page)
    return
  }
  if (view.page === 'login') {
    history.replaceState(null, '', nextView(view.params.get('next')))
    view = currentView()
  }
  const page = PAGES[view.page]
  showShell(true)
  document.title = `${TITLES[view.page] || 'Not found'} · submetrics`
  if (!page) {
    main.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/overview' }, 'Go to the overview')))
    done(view.page)
    return
  }
  let content
  try {
    content = await page.render(view, context())
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      session = null
      try {
        await loadSession()
        return render()
      } catch (sessionError) {
        error = sessionError
      }
    }
    // The page's controls stay, to change what was asked for.
    content = h('div', {}, h('h1', {}, TITLES[view.page]), page.controls ? page.controls(view) : null, failure(error))
  }
  if (ticket !== rendering) return
  main.replaceChildren(content)
  done(view.page)
}

async function onLoggedIn (next) {
  await loadSession()
  history.replaceState(null, '', nextView(next))
  render()
}

document.getElementById('as-of').addEventListener('change', (event) => setParams({ as_of: event.target.value }))
/** Shows a failure of the shell (logging out, say) above the page; null hides it. */
function showShellError (error) {
  const message = document.getElementById('shell-error')
  message.textContent = error ? error.message || String(error) : ''
  message.hidden = !error
}

/**
 * Ends the session and shows the login. A session already ended (the
 * service answers 401) is logged out all the same; any other failure is
 * shown, and the page stays.
 */
async function logOut () {
  showShellError(null)
  try {
    await api('DELETE', '/session')
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) {
      showShellError(error)
      return
    }
  }
  session = null
  setCsrfToken(null)
  let failed = null
  await loadSession().catch((error) => { failed = error })
  history.pushState(null, '', '#/login')
  await render()
  showShellError(failed)
}

/** "Skip to content" moves the focus to the page, leaving the route as it is. */
document.getElementById('skip').addEventListener('click', (event) => {
  event.preventDefault()
  main.focus()
})
document.getElementById('logout').addEventListener('click', logOut)
window.addEventListener('hashchange', () => {
  showShellError(null)
  render()
})

loadSession().then(render, (error) => main.replaceChildren(failure(error)))
