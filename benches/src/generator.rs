//! A seeded generator of customers, plans and invoices over several years.
//!
//! Histories look like a SaaS business's: mostly monthly plans, some annual
//! and weekly ones, three currencies, trials (most convert), upgrades and
//! downgrades, cancellations and silent lapses, reactivations, partial
//! refunds, one-time setup fees, prorated first invoices and the odd failed
//! or void invoice. The same seed and size always give the same records.

use chrono::{DateTime, Datelike, Duration, Months, NaiveDate, Utc};
use serde_json::{Value, json};
use submetrics::{Ledger, Settings};

/// A small, fast, deterministic PRNG (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

/// Records of one generated data set, as JSON in the interface's import shapes.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    pub plans: Vec<Value>,
    pub customers: Vec<Value>,
    pub invoices: Vec<Value>,
    pub fx_rates: Vec<Value>,
}

/// What to generate.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Stop once at least this many invoices exist.
    pub invoices: usize,
    pub seed: u64,
    /// First day of the history.
    pub start: NaiveDate,
    /// Length of the history in months.
    pub months: u32,
}

impl Spec {
    /// About `invoices` invoices over four years from 2021-01-01.
    pub fn with_invoices(invoices: usize) -> Spec {
        Spec {
            invoices,
            seed: 42,
            start: NaiveDate::from_ymd_opt(2021, 1, 1).unwrap_or_default(),
            months: 48,
        }
    }

    /// The instant the history ends, used as `as_of`.
    pub fn end(&self) -> NaiveDate {
        self.start + Months::new(self.months)
    }

    /// The harnesses' `as_of`: the start of the day the history ends.
    pub fn as_of(&self) -> DateTime<Utc> {
        self.end().and_time(chrono::NaiveTime::MIN).and_utc()
    }
}

impl Dataset {
    /// A ledger with default settings holding the whole dataset: FX rates,
    /// plans, customers, then invoices in batches of 50,000.
    pub fn ledger(&self) -> Ledger {
        let mut ledger = Ledger::new(Settings::default());
        ledger
            .load_fx_rates(&self.fx_rates)
            .expect("generated FX rates are valid");
        ledger.upsert_plans(&self.plans);
        ledger.upsert_customers(&self.customers);
        for chunk in self.invoices.chunks(50_000) {
            ledger.upsert_invoices(chunk);
        }
        ledger
    }
}

const CURRENCIES: [(&str, u32); 3] = [("USD", 70), ("EUR", 20), ("GBP", 10)];
/// (id suffix, interval, count, price in cents of USD, tier)
const PLAN_TIERS: [(&str, &str, u32, i64, u8); 7] = [
    ("basic-m", "month", 1, 2_900, 0),
    ("pro-m", "month", 1, 7_900, 1),
    ("team-m", "month", 1, 19_900, 2),
    ("basic-y", "year", 1, 29_000, 0),
    ("pro-y", "year", 1, 79_000, 1),
    ("pro-w", "week", 1, 1_900, 1),
    ("pro-q", "month", 3, 21_900, 1),
];
const COUNTRIES: [&str; 8] = ["US", "GB", "DE", "FR", "CA", "AU", "NL", "BR"];
const INDUSTRIES: [&str; 5] = ["software", "retail", "finance", "health", "media"];

fn plan_id(tier: usize, currency: &str) -> String {
    format!("{}-{}", PLAN_TIERS[tier].0, currency.to_ascii_lowercase())
}

fn price(tier: usize, currency: &str) -> i64 {
    let usd = PLAN_TIERS[tier].3;
    match currency {
        "EUR" => usd * 9 / 10,
        "GBP" => usd * 8 / 10,
        _ => usd,
    }
}

/// Generates a data set: stops adding customers once `spec.invoices` is reached.
pub fn generate(spec: &Spec) -> Dataset {
    let mut invoices = Vec::new();
    let mut data = generate_streaming(spec, |chunk| invoices.extend_from_slice(chunk));
    data.invoices = invoices;
    data
}

/// Generates the same records as [`generate`], but hands the invoices to
/// `sink` one customer at a time instead of keeping them (the returned set
/// has no invoices): ten million invoices never sit in memory as JSON.
pub fn generate_streaming(spec: &Spec, mut sink: impl FnMut(&[Value])) -> Dataset {
    let mut rng = Rng::new(spec.seed);
    let mut data = Dataset::default();
    let mut invoices = 0;
    let mut customer_invoices = Vec::new();
    for (currency, _) in CURRENCIES {
        for (tier, (_, interval, count, _, _)) in PLAN_TIERS.iter().enumerate() {
            data.plans.push(json!({
                "id": plan_id(tier, currency), "name": plan_id(tier, currency), "interval": interval,
                "interval_count": count, "currency": currency,
            }));
        }
    }
    for month in 0..=spec.months {
        let date = spec.start + Months::new(month);
        let wobble = (rng.below(40) as f64 - 20.0) / 1000.0;
        data.fx_rates
            .push(json!({"date": date.to_string(), "currency": "EUR", "rate": 0.9 + wobble}));
        data.fx_rates.push(
            json!({"date": date.to_string(), "currency": "GBP", "rate": 0.78 + wobble / 2.0}),
        );
    }
    let end = spec.end();
    let span_days = (end - spec.start).num_days();
    let mut customer = 0usize;
    while invoices < spec.invoices {
        customer += 1;
        let id = format!("cus_{customer:08}");
        let created = spec.start + Duration::days(rng.below(span_days as u64 - 30) as i64);
        let currency = pick_currency(&mut rng);
        let size = ["small", "medium", "large"][rng.below(3) as usize];
        let channel = ["organic", "paid", "partner"][rng.below(3) as usize];
        data.customers.push(json!({
            "id": id, "name": format!("Customer {customer}"), "email": format!("billing{customer}@example.com"),
            "created": created.to_string(), "country": COUNTRIES[rng.below(8) as usize], "currency": currency,
            "metadata": {"industry": INDUSTRIES[rng.below(5) as usize], "size": size, "channel": channel},
        }));
        customer_invoices.clear();
        history(
            &mut rng,
            &mut customer_invoices,
            &id,
            created,
            end,
            currency,
        );
        invoices += customer_invoices.len();
        sink(&customer_invoices);
    }
    data
}

fn pick_currency(rng: &mut Rng) -> &'static str {
    let roll = rng.below(100) as u32;
    let mut acc = 0;
    for (currency, weight) in CURRENCIES {
        acc += weight;
        if roll < acc {
            return currency;
        }
    }
    "USD"
}

fn pick_tier(rng: &mut Rng) -> usize {
    match rng.below(100) {
        0..=34 => 0,
        35..=59 => 1,
        60..=71 => 2,
        72..=81 => 3,
        82..=89 => 4,
        90..=94 => 5,
        _ => 6,
    }
}

fn next_period(start: NaiveDate, tier: usize) -> NaiveDate {
    let (_, interval, count, _, _) = PLAN_TIERS[tier];
    match interval {
        "year" => start + Months::new(12 * count),
        "week" => start + Duration::weeks(i64::from(count)),
        _ => start + Months::new(count),
    }
}

/// One customer's invoices from `created` to `end`.
fn history(
    rng: &mut Rng,
    out: &mut Vec<Value>,
    customer: &str,
    created: NaiveDate,
    end: NaiveDate,
    currency: &str,
) {
    let mut n = 0;
    let next_id = |n: &mut u32| {
        *n += 1;
        format!("{customer}-inv{:04}", *n)
    };
    let mut tier = pick_tier(rng);
    let mut date = created;
    let base = |id: String, kind: &str, date: NaiveDate, amount: i64| {
        json!({"id": id, "customer_id": customer, "type": kind, "invoice_date": date.to_string(),
               "amount": amount, "currency": currency})
    };
    if rng.chance(0.3) {
        let mut trial = base(next_id(&mut n), "subscription", date, 0);
        trial["plan_id"] = json!(plan_id(tier, currency));
        trial["period_end"] = json!((date + Duration::days(14)).to_string());
        out.push(trial);
        if !rng.chance(0.7) {
            return;
        }
        date += Duration::days(14);
    }
    if rng.chance(0.1) {
        out.push(base(next_id(&mut n), "one-time", date, 4_900));
    }
    // A prorated first invoice up to the first of next month, for some monthly plans.
    if PLAN_TIERS[tier].1 == "month" && PLAN_TIERS[tier].2 == 1 && date.day() > 1 && rng.chance(0.2)
    {
        let first = (date + Months::new(1)).with_day(1).unwrap_or(date);
        let days = (first - date).num_days();
        let mut prorated = base(
            next_id(&mut n),
            "subscription",
            date,
            price(tier, currency) * days / 30,
        );
        prorated["plan_id"] = json!(plan_id(tier, currency));
        prorated["period_start"] = json!(date.to_string());
        prorated["period_end"] = json!(first.to_string());
        out.push(prorated);
        date = first;
    }
    let mut last_amount = price(tier, currency);
    while date < end {
        let mut invoice = base(next_id(&mut n), "subscription", date, price(tier, currency));
        invoice["plan_id"] = json!(plan_id(tier, currency));
        invoice["quantity"] = json!(1 + rng.below(3));
        if rng.chance(0.02) {
            invoice["status"] = json!("failed");
        } else if rng.chance(0.005) {
            invoice["status"] = json!("void");
        }
        let invoice_id = invoice["id"].clone();
        last_amount = invoice["amount"].as_i64().unwrap_or(last_amount);
        out.push(invoice);
        if rng.chance(0.01) {
            let mut refund = base(
                next_id(&mut n),
                "refund",
                date + Duration::days(3),
                -(last_amount / 2),
            );
            refund["refunded_invoice_id"] = invoice_id;
            out.push(refund);
        }
        let period_end = next_period(date, tier);
        // Churn: cancellation, or a silent lapse; some come back later.
        if rng.chance(if PLAN_TIERS[tier].1 == "year" {
            0.2
        } else {
            0.03
        }) {
            if rng.chance(0.5) {
                out.push(base(
                    next_id(&mut n),
                    "cancellation",
                    date + Duration::days(rng.below(20) as i64),
                    0,
                ));
            }
            if !rng.chance(0.25) {
                return;
            }
            date = period_end + Months::new(1 + rng.below(6) as u32);
            continue;
        }
        if rng.chance(0.04) {
            tier = match PLAN_TIERS[tier].4 {
                0 => tier + 1,
                2 => tier - 1,
                _ if rng.chance(0.5) => tier - 1,
                _ => tier + 1,
            }
            .min(PLAN_TIERS.len() - 1);
        }
        date = period_end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_data() {
        let a = generate(&Spec::with_invoices(2_000));
        let b = generate(&Spec::with_invoices(2_000));
        assert_eq!(a.invoices, b.invoices);
        assert!(a.invoices.len() >= 2_000);
    }

    #[test]
    fn every_generated_record_is_accepted() {
        let data = generate(&Spec::with_invoices(3_000));
        let mut ledger = submetrics::Ledger::default();
        ledger.load_fx_rates(&data.fx_rates).unwrap();
        assert_eq!(ledger.upsert_plans(&data.plans).rejected().count(), 0);
        assert_eq!(
            ledger.upsert_customers(&data.customers).rejected().count(),
            0
        );
        let report = ledger.upsert_invoices(&data.invoices);
        let rejected: Vec<_> = report.rejected().take(3).collect();
        assert!(rejected.is_empty(), "{rejected:?}");
    }
}
