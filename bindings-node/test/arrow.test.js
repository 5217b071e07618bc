'use strict'
// Arrow IPC streams in and out: a table written by apache-arrow goes in with
// the per-record results of JS objects; movements and reports come back as
// IPC streams whose integers stay integers.
const test = require('node:test')
const assert = require('node:assert/strict')
const { tableFromArrays, tableFromIPC, tableToIPC, vectorFromArray, Table, DataType, Utf8, Int64, DateDay, MessageReader, MessageHeader } = require('apache-arrow')
const { Ledger, SubmetricsError } = require('..')

const INVOICES = [
  { id: 'a1', customer_id: 'A', type: 'subscription', plan_id: 'm', invoice_date: '2024-01-01', amount: 3000, currency: 'USD' },
  { id: 'b1', customer_id: 'B', type: 'subscription', plan_id: 'm', invoice_date: '2024-01-15', amount: 2000, currency: 'USD' },
  { id: 'a2', customer_id: 'A', type: 'subscription', plan_id: 'm', invoice_date: '2024-02-01', amount: 5000, currency: 'USD' },
  { id: 'bad', customer_id: 'A', type: 'refund', plan_id: null, invoice_date: '2024-02-03', amount: 700, currency: 'USD' },
  { id: 'who', customer_id: 'Z', type: 'subscription', plan_id: 'm', invoice_date: '2024-02-03', amount: 700, currency: 'USD' },
]

function ledger() {
  const l = new Ledger({ base_currency: 'USD' })
  l.upsertPlans({ id: 'm', name: 'Monthly', interval: 'month', currency: 'USD' })
  l.upsertCustomersArrow(tableToIPC(tableFromArrays({ id: ['A', 'B'], name: ['Acme', 'Beta'] })))
  return l
}

/** The invoices as an Arrow table: dates as days, amounts as int64. */
function invoiceTable() {
  const column = (name) => INVOICES.map((i) => i[name])
  return new Table({
    id: vectorFromArray(column('id'), new Utf8()),
    customer_id: vectorFromArray(column('customer_id'), new Utf8()),
    type: vectorFromArray(column('type'), new Utf8()),
    plan_id: vectorFromArray(column('plan_id'), new Utf8()),
    invoice_date: vectorFromArray(column('invoice_date').map((d) => new Date(`${d}T00:00:00Z`)), new DateDay()),
    amount: vectorFromArray(column('amount').map(BigInt), new Int64()),
    currency: vectorFromArray(column('currency'), new Utf8()),
  })
}

test('an Arrow IPC stream is written like objects, with the same results', () => {
  const fromObjects = ledger()
  const expected = fromObjects.upsertInvoices(INVOICES)
  const l = ledger()
  const results = tableFromIPC(l.upsertInvoicesArrow(tableToIPC(invoiceTable())))
  assert.deepEqual(results.schema.fields.map((f) => f.name), ['id', 'import_status', 'import_error'])
  assert.ok(DataType.isDictionary(results.schema.fields[1].type))
  assert.equal(results.batches.length, 1)
  const table = invoiceTable()
  const cut = new Table([...table.slice(0, 2).batches, ...table.slice(2).batches])
  const cutResults = tableFromIPC(ledger().upsertInvoicesArrow(tableToIPC(cut)))
  assert.deepEqual(cutResults.batches.map((b) => b.numRows), [2, INVOICES.length - 2])
  assert.deepEqual(cutResults.toArray().map((r) => r.import_status), results.toArray().map((r) => r.import_status))
  const rows = results.toArray().map((r) => {
    const row = { id: r.id, import_status: r.import_status }
    if (r.import_error !== null) row.import_error = r.import_error
    return row
  })
  assert.deepEqual(rows, expected)
  assert.deepEqual(rows.map((r) => r.import_error ?? null), [
    null, null, null,
    'invoice bad: field `amount`: must be 0 or less for a refund, got 700',
    'invoice who: field `customer_id`: customer `Z` does not exist; send the customer first',
  ])
  assert.deepEqual(l.movements('2024-02-15'), fromObjects.movements('2024-02-15'))
  assert.equal(l.getInvoice('a2').invoice_date, '2024-02-01')
})

test('movements and reports come back as IPC streams with exact integers', () => {
  const l = ledger()
  l.upsertInvoicesArrow(tableToIPC(invoiceTable()))
  const moves = tableFromIPC(l.movementsArrow('2024-02-15'))
  assert.equal(String(moves.schema.fields.find((f) => f.name === 'mrr_change').type), 'Int64')
  assert.deepEqual(moves.getChild('customer_id').toArray(), ['A', 'B', 'A'])
  assert.deepEqual(Array.from(moves.getChild('mrr_change').toArray()), [3000n, 2000n, 2000n])
  // No movement yet: no record batch, the same schema.
  const none = tableFromIPC(l.movementsArrow('2023-12-31'))
  assert.equal(none.numRows, 0)
  assert.deepEqual(none.schema.fields.map((f) => f.name), moves.schema.fields.map((f) => f.name))
  assert.equal(String(none.schema.fields.find((f) => f.name === 'quantity_change').type), 'Int64')
  const mrr = tableFromIPC(l.reportArrow('mrr', { date: '20240101-20240229' }, '2024-02-15'))
  assert.deepEqual(mrr.getChild('date').toArray(), ['2024-01-01', '2024-02-01'])
  assert.deepEqual(Array.from(mrr.getChild('total_mrr').toArray()), [5000n, 7000n])
  const table = tableFromIPC(l.reportArrow('mrr-table', { date: '20240101-20240229' }, '2024-02-15'))
  assert.deepEqual(table.schema.fields.map((f) => f.name), ['metric', '2024-01-01', '2024-02-01'])
  const total = table.toArray().find((r) => r.metric === 'total_mrr')
  // A period column holds every metric (money, counts, rates): each is Float64.
  assert.deepEqual(table.schema.fields.slice(1).map((f) => String(f.type)), ['Float64', 'Float64'])
  assert.deepEqual([total['2024-01-01'], total['2024-02-01']], [5000, 7000])
})

test('bytes that are not an IPC stream, and unreadable columns, are errors', () => {
  const l = ledger()
  const cut = 'parameter `body`: is not an Arrow IPC stream: it ends inside a message'
  assert.throws(() => l.upsertInvoicesArrow(new Uint8Array([1, 2, 3])), (error) =>
    error instanceof SubmetricsError && error.message === cut)
  // A message claiming 2 GB of metadata is refused, not allocated.
  const claiming = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0x7f, 1, 2, 3])
  assert.throws(() => l.upsertInvoicesArrow(claiming), (error) =>
    error instanceof SubmetricsError && error.message === cut)
  assert.throws(() => l.upsertInvoicesArrow('text'), SubmetricsError)
  // The file format used to be called a stream cut short.
  const file = tableToIPC(tableFromArrays({ id: ['i1'] }), 'file')
  assert.throws(() => l.upsertInvoicesArrow(file), (error) =>
    error instanceof SubmetricsError && error.message ===
      "parameter `body`: is not an Arrow IPC stream: it is an Arrow IPC file (Feather); send the stream format " +
      "(apache-arrow's tableToIPC(table, 'stream'), pyarrow's ipc.new_stream)")
  // A validity bitmap stated empty under a column with a null: the arrow
  // reader panics on it, which aborted the process.
  const shortBitmap = withBufferLength(
    tableToIPC(tableFromArrays({ n: vectorFromArray([1n, null], new Int64()) }), 'stream'), 0, 0)
  assert.throws(() => l.upsertInvoicesArrow(shortBitmap), (error) =>
    error instanceof SubmetricsError && error.message ===
      'parameter `body`: is not an Arrow IPC stream: it is malformed ' +
      '(buffer not large enough (bit_offset: 0, bit_len: 2, buffer_len: 0))')
  assert.equal(l.listInvoices().count, 0)
})

/** The IPC stream `bytes` with buffer `index` of its record batch stated
 * `length` bytes long (the batch's buffers are stated one after another,
 * an offset and a length of 8 bytes each). */
function withBufferLength (bytes, index, length) {
  const reader = new MessageReader(bytes)
  let message
  while ((message = reader.readMessage()) && message.headerType !== MessageHeader.RecordBatch);
  const stated = message.header().buffers
  const pairs = Buffer.alloc(16 * stated.length)
  stated.forEach(({ offset, length }, i) => {
    pairs.writeBigInt64LE(BigInt(offset), 16 * i)
    pairs.writeBigInt64LE(BigInt(length), 16 * i + 8)
  })
  const patched = Buffer.from(bytes)
  const at = patched.indexOf(pairs)
  assert.ok(at >= 0 && patched.indexOf(pairs, at + 1) < 0, 'the buffers are stated once')
  patched.writeBigInt64LE(BigInt(length), at + 16 * index + 8)
  return patched
}
