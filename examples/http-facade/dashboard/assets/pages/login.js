// Log in with email and password, or accept an invitation
// (`#/invite/TOKEN`: the token never reaches a server log, a fragment is
// not sent).

import { api } from '../api.js'
import { h, field } from '../controls.js'

function form (title, intro, fields, submitLabel, onSubmit) {
  const message = h('p', { class: 'error', role: 'alert', hidden: true })
  const button = h('button', { type: 'submit' }, submitLabel)
  const element = h('form', {
    class: 'login card',
    onsubmit: async (event) => {
      event.preventDefault()
      message.hidden = true
      button.disabled = true
      try {
        await onSubmit(new FormData(element))
      } catch (error) {
        message.textContent = error.message
        message.hidden = false
      } finally {
        button.disabled = false
      }
    }
  }, h('h1', {}, title), intro ? h('p', {}, intro) : null, ...fields, message, button)
  return element
}

const input = (name, type, attributes = {}) => h('input', { name, type, required: true, ...attributes })

export async function render (view, { onLoggedIn }) {
  if (view.page === 'invite') return invitation(view.id, onLoggedIn)
  return form('Log in to submetrics', null, [
    field('Email', input('email', 'email', { autocomplete: 'username' })),
    field('Password', input('password', 'password', { autocomplete: 'current-password' }))
  ], 'Log in', async (data) => {
    await api('POST', '/session', { body: { email: data.get('email'), password: data.get('password') } })
    await onLoggedIn(view.params.get('next'))
  })
}

async function invitation (token, onLoggedIn) {
  let invitation
  try {
    invitation = await api('GET', `/invitations/${encodeURIComponent(token || '')}`)
  } catch (error) {
    return h('div', { class: 'login card' }, h('h1', {}, 'Invitation'), h('p', { class: 'error', role: 'alert' }, error.message), h('p', {}, h('a', { href: '#/login' }, 'Log in')))
  }
  if (invitation.status !== 'pending') {
    return h('div', { class: 'login card' }, h('h1', {}, 'Invitation'), h('p', { role: 'alert' }, `This invitation is ${invitation.status}. Ask an admin for a new one.`), h('p', {}, h('a', { href: '#/login' }, 'Log in')))
  }
  const setup = !invitation.email
  const intro = setup
    ? `Set up the ${invitation.role} login of the account “${invitation.account.name}”.`
    : `${invitation.email} is invited to “${invitation.account.name}” as ${invitation.role}.`
  return form(setup ? 'Set up your login' : 'Accept your invitation', intro, [
    setup ? field('Email', input('email', 'email', { autocomplete: 'username' })) : null,
    field('Name', h('input', { name: 'name', type: 'text', autocomplete: 'name', value: invitation.name || '' })),
    field('Password', input('password', 'password', { autocomplete: 'new-password', minlength: 10 }), 'At least 10 characters'),
    field('Repeat password', input('repeat', 'password', { autocomplete: 'new-password', minlength: 10 }))
  ], 'Create login', async (data) => {
    if (data.get('password') !== data.get('repeat')) throw new Error('The two passwords differ.')
    const body = { name: data.get('name'), password: data.get('password') }
    if (setup) body.email = data.get('email')
    await api('POST', `/invitations/${encodeURIComponent(token)}`, { body })
    await onLoggedIn('#/overview')
  })
}
