'use strict'
// Integers beyond 2^53 - 1, which a JavaScript number rounds: an answer
// holding one is refused naming its place (the addon's check, and the
// client's `parseExact`), and the Arrow calls answer it exactly.
const test = require('node:test')
const assert = require('node:assert/strict')
const { tableFromIPC } = require('apache-arrow')
const { Ledger, SubmetricsError } = require('..')
const { parseExact, unsafeIntegers } = require('../client/exact.js')

const AS_OF = '2024-01-15T00:00:00Z'
const BEYOND = 'beyond 9007199254740991 (2^53 - 1), the largest integer a JavaScript number holds exactly'

// One customer paying 10^10 cents of gold a month, at 10^-6 gold per
// dollar: 10^16 US cents of MRR, beyond 2^53; another paying $10, whose
// name holds quotes, a backslash and seventeen digits.
function goldLedger(options) {
  const ledger = new Ledger({ base_currency: 'USD' }, options)
  ledger.loadFxRates([{ date: '2024-01-01', currency: 'XAU', rate: '0.000001' }])
  ledger.upsertPlans([
    { id: 'gold', name: 'Gold', interval: 'month', currency: 'XAU' },
    { id: 'small', name: 'Small', interval: 'month', currency: 'USD' },
  ])
  ledger.upsertCustomers([{ id: 'G1', name: 'Gold' }, { id: 'S1', name: 'Small \\" 99999999999999999 "' }])
  ledger.upsertInvoices([
    { id: 'g1', customer_id: 'G1', type: 'subscription', invoice_date: '2024-01-01', currency: 'XAU', plan_id: 'gold', amount: 1e10 },
    { id: 's1', customer_id: 'S1', type: 'subscription', invoice_date: '2024-01-01', currency: 'USD', plan_id: 'small', amount: 1000 },
  ])
  return ledger
}

function refusal(place, digits, exactElsewhere) {
  const message = `the answer's \`${place}\` is ${digits}, ${BEYOND}` + (exactElsewhere
    ? `; \`${exactElsewhere}\` answers it exactly, as a BigInt, and so does this call with the option \`bigints: true\``
    : '; with the option `bigints: true` this call answers it as a BigInt')
  return { name: 'SubmetricsError', code: 'out_of_range', field: place, message }
}

test('a ledger answer with an integer beyond 2^53 is refused naming its place; Arrow answers it exactly', async () => {
  const ledger = goldLedger()
  assert.throws(() => ledger.report('summary', {}, AS_OF), refusal('summary.mrr_current', '10000000000001000', 'reportArrow'))
  await assert.rejects(ledger.reportAsync('summary', {}, AS_OF), refusal('summary.mrr_current', '10000000000001000', 'reportArrow'))
  assert.throws(() => ledger.report('mrr', { date: '20240101-20240131', interval: 'month' }, AS_OF),
    refusal('result[0].new', '10000000000001000', 'reportArrow'))
  assert.throws(() => ledger.movements(AS_OF), refusal('[0].mrr_change_base_currency', '10000000000000000', 'movementsArrow'))
  await assert.rejects(ledger.movementsAsync(AS_OF), refusal('[0].mrr_change_base_currency', '10000000000000000', 'movementsArrow'))
  assert.throws(() => ledger.customers({}, AS_OF), refusal('result.list[0].mrr', '10000000000000000'))
  assert.throws(() => ledger.customer('G1', AS_OF), refusal('converted_mrr', '10000000000000000'))

  const summary = tableFromIPC(ledger.reportArrow('summary', {}, AS_OF)).get(0).summary
  assert.equal(summary.mrr_current, 10000000000001000n)
  assert.equal(summary.arr_current, 120000000000012000n)
  const movements = tableFromIPC(ledger.movementsArrow(AS_OF))
  assert.deepEqual([...movements.getChild('mrr_change_base_currency')], [10000000000000000n, 1000n])
  assert.deepEqual([...movements.getChild('mrr_change')], [10000000000n, 1000n])
})

test('with the option bigints, an integer beyond 2^53 is a BigInt and every other number a number', async () => {
  const ledger = goldLedger({ bigints: true })
  const summary = ledger.report('summary', {}, AS_OF).summary
  assert.deepEqual(summary, {
    mrr_current: 10000000000001000n, arr_current: 120000000000012000n, subscribers_current: 2, arpa_current: 5000000000000500,
  })
  assert.deepEqual((await ledger.reportAsync('summary', {}, AS_OF)).summary, summary)
  assert.deepEqual(ledger.movements(AS_OF).map((m) => [m.mrr_change, m.mrr_change_base_currency]),
    [[10000000000, 10000000000000000n], [1000, 1000]])
  assert.deepEqual((await ledger.movementsAsync(AS_OF)).map((m) => m.mrr_change_base_currency), [10000000000000000n, 1000])
  assert.deepEqual(ledger.customers({}, AS_OF).result.list.map((c) => [c.id, c.mrr]), [['G1', 10000000000000000n], ['S1', 1000]])
  assert.equal(ledger.customer('G1', AS_OF).converted_mrr, 10000000000000000n)
  assert.throws(() => new Ledger({}, { bigint: true }), {
    name: 'SubmetricsError', code: 'invalid_argument', field: 'bigint', message: 'unknown Ledger option `bigint`; the options are bigints',
  })
  assert.throws(() => new Ledger({}, { bigints: 'yes' }), {
    name: 'SubmetricsError', code: 'invalid_argument', field: 'bigints', message: 'bigints: `yes` is not true or false',
  })
})

test('digits in strings and integers a number holds are answered as they are', () => {
  const ledger = goldLedger()
  const small = ledger.customer('S1', AS_OF)
  assert.deepEqual([small.name, small.converted_mrr], ['Small \\" 99999999999999999 "', 1000])
  assert.deepEqual(ledger.movements(AS_OF, { customer: 'S1' }).map((m) => m.mrr_change_base_currency), [1000])
})

test('the client finds the first integer beyond 2^53 either way by its place, past strings and floats', () => {
  const places = (text) => unsafeIntegers(text).map(({ place, digits }) => [place, digits])
  assert.deepEqual(places('{"a": 9007199254740991, "b": -9007199254740991}'), [])
  assert.deepEqual(places('[1.2345678901234567e300, 12345678901234567.5, 1e17]'), [])
  assert.deepEqual(places('{"12345678901234567890": "99999999999999999"}'), [])
  assert.deepEqual(places('["a \\" 99999999999999999 \\\\", 1]'), [])
  assert.deepEqual(places('{"summary": {"mrr": 1, "arr": 9007199254740992}}'), [['summary.arr', '9007199254740992']])
  assert.deepEqual(places('{"result": [{"new": 1}, {"x": [1], "new": -90071992547409930}]}'),
    [['result[1].new', '-90071992547409930']])
  assert.deepEqual(places('{"by plan": {"a\\"b": [0, 0, 10000000000000000000]}, "n": 9007199254740993}'),
    [['["by plan"]["a\\"b"][2]', '10000000000000000000'], ['n', '9007199254740993']])
  assert.deepEqual(places('[[], {}, 9007199254740993]'), [['[2]', '9007199254740993']])
  assert.deepEqual(unsafeIntegers('[9007199254740993, 9007199254740994]', 1).length, 1)
})

test('parseExact parses what a number holds and refuses the rest, naming the exact call', () => {
  assert.deepEqual(parseExact('{"id": "12345678901234567890", "mrr": 9007199254740991}'),
    { id: '12345678901234567890', mrr: 9007199254740991 })
  assert.throws(() => parseExact('{"result": [{"mrr": 9007199254740992}]}', 'reportArrow'),
    refusal('result[0].mrr', '9007199254740992', 'reportArrow'))
  const parsed = parseExact('{"result": [{"mrr": 9007199254740992, "n": 1}], "__proto__": [-9007199254740993]}', undefined, true)
  assert.deepEqual(parsed.result, [{ mrr: 9007199254740992n, n: 1 }])
  assert.deepEqual(Object.getOwnPropertyDescriptor(parsed, '__proto__').value, [-9007199254740993n])
  assert.equal(parseExact('90071992547409930', undefined, true), 90071992547409930n)
  assert.throws(() => parseExact('[-9999999999999999]'), (error) => error instanceof SubmetricsError &&
    error.message === `the answer's \`[0]\` is -9999999999999999, ${BEYOND}; with the option \`bigints: true\` this call answers it as a BigInt`)
})
