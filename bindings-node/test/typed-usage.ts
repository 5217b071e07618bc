// Compiled with `tsc --noEmit` in the test command: the declarations must
// describe a typed use of the package.
import { Ledger, SubmetricsError, reportNames, type MrrReport, type Movement } from '..'

const ledger = new Ledger({ base_currency: 'USD', first_day_of_week: 1 })
const results = ledger.upsertPlans({ id: 'm', name: 'Monthly', interval: 'month', currency: 'USD' })
const inserted: boolean = results[0].import_status === 'inserted'
const mrr: MrrReport = ledger.report('mrr', { date: '20240101-20240331', fix_fx: true }, new Date('2024-04-01'))
const totals: number[] = mrr.result.map((p) => p.total_mrr)
const moves: Movement[] = ledger.movements('2024-04-01', { kinds: ['new'] })
async function later(): Promise<number> {
  const report = await ledger.reportAsync('mrr', {}, '2024-04-01')
  return report.result.length
}
try {
  ledger.getPlan('missing')
} catch (error) {
  if (error instanceof SubmetricsError) {
    const code: string = error.code
    void code
  }
}
void inserted
void totals
void moves
void later
void reportNames().length
