// A deterministic demo account: four plans in two currencies, a plan group,
// FX rates and about fifty customers over 2024 with trials, upgrades,
// downgrades, churn (cancellations and lapses), a reactivation, failed
// payments, refunds, unpaid invoices and cancellations scheduled after
// AS_OF. Every figure the browser tests check is read from the API's
// answer over this data, never written down here.

export const AS_OF = '2024-12-31'

export const PLANS = [
  { id: 'basic', name: 'Basic', interval: 'month', currency: 'USD' },
  { id: 'pro', name: 'Pro', interval: 'month', currency: 'USD' },
  { id: 'pro-annual', name: 'Pro annual', interval: 'year', currency: 'USD' },
  { id: 'team-eur', name: 'Team (EUR)', interval: 'month', currency: 'EUR' }
]
const PRICE = { basic: 2900, pro: 9900, 'pro-annual': 99000, 'team-eur': 19900 }
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'CA', 'US', 'US', 'NL']
const INDUSTRIES = ['saas', 'retail', 'media']
const SIZES = ['small', 'mid', 'large']
const NAMES = ['Acme', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark', 'Wayne', 'Wonka', 'Tyrell', 'Cyberdyne', 'Soylent', 'Vandelay']

/** A small linear congruential generator: the same data on every run. */
function random (seed) {
  let state = seed
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648
    return state / 2147483648
  }
}

function addDays (date, days) {
  const d = new Date(`${date}T00:00:00Z`)
  d.setUTCDate(d.getUTCDate() + days)
  return d.toISOString().slice(0, 10)
}

function addMonths (date, months) {
  const d = new Date(`${date}T00:00:00Z`)
  d.setUTCMonth(d.getUTCMonth() + months)
  return d.toISOString().slice(0, 10)
}

/** The records of the demo account: {plans, planGroup, fxRates, customers, invoices}. */
export function demoData (count = 48) {
  const r = random(20240101)
  const customers = []
  const invoices = []
  let n = 0
  let scheduled = 0
  const invoice = (fields) => invoices.push({ id: `inv-${++n}`, ...fields })
  for (let i = 0; i < count; i++) {
    const id = `cus-${String(i + 1).padStart(3, '0')}`
    const created = addDays('2024-01-02', Math.floor(i * 6.5))
    const name = `${NAMES[i % NAMES.length]} ${Math.floor(i / NAMES.length) + 1}`
    customers.push({
      id,
      name,
      email: `billing@${name.toLowerCase().replace(' ', '-')}.test`,
      country: COUNTRIES[i % COUNTRIES.length],
      created,
      metadata: { industry: INDUSTRIES[i % 3], size: SIZES[Math.floor(i / 3) % 3] }
    })
    const roll = r()
    if (roll < 0.12) continue // a lead that never started
    let plan = roll < 0.55 ? 'basic' : roll < 0.8 ? 'pro' : roll < 0.9 ? 'pro-annual' : 'team-eur'
    const currency = plan === 'team-eur' ? 'EUR' : 'USD'
    let start = created
    if (r() < 0.35) {
      invoice({ customer_id: id, type: 'subscription', plan_id: plan, invoice_date: start, amount: 0, currency, period_start: start, period_end: addDays(start, 14) })
      if (r() < 0.2) continue // a trial that never converted
      start = addDays(start, 14)
    }
    const step = plan === 'pro-annual' ? 12 : 1
    const churnAfter = r() < 0.3 ? 1 + Math.floor(r() * 6) : null
    const lapse = churnAfter !== null && r() < 0.3
    const changeAt = r() < 0.3 ? 2 + Math.floor(r() * 4) : null
    let month = 0
    for (let date = start; date <= AS_OF; date = addMonths(start, (month += step))) {
      if (churnAfter !== null && month >= churnAfter * step) {
        if (!lapse) invoice({ customer_id: id, type: 'cancellation', invoice_date: date, amount: 0, currency })
        if (i % 9 === 0) {
          const back = addMonths(date, 2)
          if (back <= AS_OF) invoice({ customer_id: id, type: 'subscription', plan_id: plan, invoice_date: back, amount: PRICE[plan], currency, period_start: back, period_end: addMonths(back, step) })
        }
        break
      }
      if (changeAt !== null && month === changeAt && plan !== 'pro-annual') {
        plan = plan === 'basic' ? 'pro' : plan === 'pro' ? 'basic' : plan
      }
      const fields = { customer_id: id, type: 'subscription', plan_id: plan, invoice_date: date, amount: PRICE[plan], currency, period_start: date, period_end: addMonths(date, step) }
      const fate = r()
      if (fate < 0.06) {
        fields.transactions = [
          { id: `t-${n + 1}-a`, type: 'payment', result: 'failed', date, amount: PRICE[plan] },
          { id: `t-${n + 1}-b`, type: 'payment', result: 'successful', date: addDays(date, 3), amount: PRICE[plan] }
        ]
      } else if (fate < 0.09 && addMonths(date, step) > AS_OF) {
        fields.status = 'open'
        fields.due_date = addDays(date, 14)
      } else if (fate < 0.1) {
        fields.status = 'failed'
      }
      invoice(fields)
      if (fate > 0.97) {
        invoice({ customer_id: id, type: 'refund', plan_id: plan, invoice_date: addDays(date, 5), amount: -Math.round(PRICE[plan] / 2), currency })
      }
    }
    // Two customers paying at AS_OF have cancelled for a day after it.
    if (churnAfter === null && scheduled < 2 && plan !== 'pro-annual') {
      scheduled += 1
      invoice({ customer_id: id, type: 'cancellation', invoice_date: '2025-01-01', amount: 0, currency })
    }
  }
  return {
    plans: PLANS,
    planGroup: { name: 'Pro plans', plans: [{ id: 'pro' }, { id: 'pro-annual' }] },
    fxRates: [{ date: '2023-01-01', currency: 'EUR', rate: 0.92 }, { date: '2024-06-01', currency: 'EUR', rate: 0.9 }],
    customers,
    invoices
  }
}

/** Loads the demo account through the REST API with an owner key. */
export async function seed (base, key) {
  const data = demoData()
  const call = async (method, path, body) => {
    const response = await fetch(base + path, {
      method,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body)
    })
    const answer = await response.json()
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`)
    return answer
  }
  await call('POST', '/data/fx-rates', data.fxRates)
  await call('POST', '/data/plans', data.plans)
  await call('POST', '/data/plan-groups', data.planGroup)
  await call('POST', '/data/customers', data.customers)
  const stored = await call('POST', '/data/invoices', data.invoices)
  const rejected = stored.result.filter((row) => row.import_status !== 'inserted' && row.import_status !== 'updated')
  if (rejected.length) throw new Error(`invoices rejected: ${JSON.stringify(rejected.slice(0, 3))}`)
  return data
}
