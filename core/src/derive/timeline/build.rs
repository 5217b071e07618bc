//! Building a customer's events from its invoices: pricing each invoice,
//! ordering them, marking renewals, and turning them into the event list.

use super::*;

impl Timeline {
    /// Builds the events of one customer from its invoices. Void invoices and
    /// invoices whose plan is unknown are skipped; refunds are skipped when the
    /// settings ignore them. `ids_ascending` says the invoices already come in
    /// id order, which spares sorting them.
    pub fn build<'i, 'p>(
        customer_id: CustomerId,
        invoices: impl IntoIterator<Item = StoredInvoice<'i>>,
        ids_ascending: bool,
        plans: &dyn Fn(&PlanId) -> Option<&'p Plan>,
        settings: &Settings,
    ) -> Timeline {
        let tz = settings.timezone;
        let grace = i64::from(settings.churn_grace_days) * 86_400_000;
        // Sized for every invoice: growing it four at a time reallocates
        // twice for a customer of average length.
        let invoices = invoices.into_iter();
        let (fewest, most) = invoices.size_hint();
        let mut counted: Vec<StoredInvoice<'_>> = Vec::with_capacity(most.unwrap_or(fewest));
        counted.extend(invoices.filter(|i| i.counts()));
        // Subscription and plan indexes follow ids, never input order.
        if !ids_ascending {
            counted.sort_unstable_by(|a, b| a.id().cmp(b.id()));
        }
        debug_assert!(counted.is_sorted_by(|a, b| a.id() < b.id()));
        // The rank of the invoice a refund at `refund_rank` names. A refund
        // nearly always follows the invoice it refunds, so that neighbour is
        // compared first: each id read elsewhere in the list is a read of
        // memory the build has not touched.
        let rank_of = |id: &InvoiceId, refund_rank: usize| {
            if let Some(before) = refund_rank.checked_sub(1)
                && counted[before].id() == id.as_str()
            {
                return Some(before);
            }
            counted.binary_search_by(|i| i.id().cmp(id.as_str())).ok()
        };

        let mut subscription_ids: SmallVec<[Option<SubscriptionId>; 2]> = SmallVec::new();
        // The customer's plans in order of first use. An invoice's plan id
        // usually shares the plan record's string, so it is found here by
        // pointer before any lookup by name.
        let mut used_plans: SmallVec<[&Plan; 4]> = SmallVec::new();
        let mut priced: Vec<PricedInvoice> = Vec::with_capacity(counted.len());
        for (rank, invoice) in counted.iter().copied().enumerate() {
            if invoice.kind != InvoiceType::Subscription {
                continue;
            }
            let Some(plan_id) = invoice.plan_id.as_ref() else {
                continue;
            };
            let known = used_plans.iter().position(|p| p.id.shares(plan_id));
            let plan_slot = match known {
                Some(slot) => slot,
                None => {
                    let Some(plan) = plans(plan_id) else {
                        continue;
                    };
                    match used_plans.iter().position(|p| std::ptr::eq(*p, plan)) {
                        Some(slot) => slot,
                        None => {
                            used_plans.push(plan);
                            used_plans.len() - 1
                        }
                    }
                }
            };
            let plan = used_plans[plan_slot];
            let sub = index_of(&mut subscription_ids, &invoice.subscription_id);
            priced.push(PricedInvoice {
                sub,
                period: service_period(&invoice, plan, tz),
                rank: rank as u32,
                invoice,
                plan,
                plan_slot: plan_slot as u32,
                renewed: false,
            });
        }
        // Plan indexes order like plan ids.
        let mut by_id: SmallVec<[u32; 4]> = (0..used_plans.len() as u32).collect();
        by_id.sort_unstable_by(|a, b| used_plans[*a as usize].id.cmp(&used_plans[*b as usize].id));
        let plan_ids: SmallVec<[PlanId; 2]> = by_id
            .iter()
            .map(|&slot| used_plans[slot as usize].id.clone())
            .collect();
        let mut plan_index_of_slot: SmallVec<[u32; 4]> = smallvec::smallvec![0; used_plans.len()];
        for (index, &slot) in by_id.iter().enumerate() {
            plan_index_of_slot[slot as usize] = index as u32;
        }
        // Per subscription, by effective instant, then issue instant, then
        // id: of one subscription's invoices effective together the one
        // issued last stands and is the one tested for renewal. Such ties
        // are rare, so the issue instants are read only when there are some.
        priced.sort_unstable_by_key(|p| (p.sub, p.period.start, p.rank));
        if mark_renewals(&mut priced, grace) {
            order_ties_by_issue(
                &mut priced,
                |a, b| a.sub == b.sub && a.period.start == b.period.start,
                |p| (p.invoice.invoice_date.millis_and_day(tz).0, p.rank),
            );
            mark_renewals(&mut priced, grace);
        }
        let others = counted
            .iter()
            .filter(|i| matches!(i.kind, InvoiceType::Cancellation | InvoiceType::Refund))
            .count();
        let lapses = priced.iter().filter(|p| !p.renewed).count();
        let mut events = Vec::with_capacity(priced.len() + lapses + others);
        for p in &priced {
            let PricedInvoice {
                sub,
                period,
                rank,
                invoice,
                plan,
                plan_slot,
                renewed,
            } = p;
            events.push(Event {
                at: period.start,
                day: period.start_day,
                sub: *sub,
                source: *rank,
                kind: EventKind::Invoice {
                    monthly: monthly_amount_over(invoice, plan, period),
                    amount: invoice.amount,
                    plan: plan_index_of_slot[*plan_slot as usize],
                    quantity: i64::from(invoice.quantity),
                    currency: invoice.currency,
                },
            });
            if !*renewed {
                events.push(Event {
                    at: period.end,
                    day: period.end_day,
                    sub: *sub,
                    source: *rank,
                    kind: EventKind::Lapse,
                });
            }
        }
        for (rank, invoice) in counted.iter().enumerate() {
            // Read only for the cancellations and refunds that become events.
            let dated = || invoice.invoice_date.millis_and_day(tz);
            let source = rank as u32;
            match invoice.kind {
                InvoiceType::Cancellation => {
                    let (at, day) = dated();
                    let sub = invoice
                        .subscription_id
                        .as_ref()
                        .map(|id| index_of(&mut subscription_ids, &Some(id.clone())));
                    events.push(Event {
                        at,
                        day,
                        sub: sub.unwrap_or(0),
                        source,
                        kind: EventKind::Cancel { all: sub.is_none() },
                    });
                }
                InvoiceType::Refund if settings.refund_handling == RefundHandling::Reduce => {
                    // A named invoice must be a counted subscription invoice of
                    // this customer; refunding anything else (a one-time, void,
                    // unknown or other customer's invoice) never moves MRR.
                    let refunded = invoice
                        .details()
                        .refunded_invoice_id
                        .as_ref()
                        .map(|id| rank_of(id, rank).map(|r| counted[r]));
                    let (sub, target) = match refunded {
                        Some(None) => continue,
                        Some(Some(original)) if original.kind != InvoiceType::Subscription => {
                            continue;
                        }
                        Some(Some(original)) => (
                            index_of(&mut subscription_ids, &original.subscription_id),
                            RefundTarget::Invoice {
                                amount: original.amount,
                                currency: original.currency,
                            },
                        ),
                        None => match &invoice.subscription_id {
                            Some(id) => (
                                index_of(&mut subscription_ids, &Some(id.clone())),
                                RefundTarget::Subscription,
                            ),
                            None => (0, RefundTarget::Latest),
                        },
                    };
                    let (at, day) = dated();
                    events.push(Event {
                        at,
                        day,
                        sub,
                        source,
                        kind: EventKind::Refund {
                            target,
                            refunded: invoice.amount.abs(),
                            currency: invoice.currency,
                        },
                    });
                }
                _ => {}
            }
        }
        // A stable sort: events were written per subscription in the order
        // that subscription applies them (cancellations and refunds in id
        // order), and the ties it leaves keep that order.
        events.sort_by_key(|e| (e.at, e.priority(), e.sub));
        // Invoices (or refunds) of different subscriptions at one instant
        // apply by issue instant, then id, not by subscription. The order of
        // cancellations or of lapses at one instant changes nothing.
        if subscription_ids.len() > 1 {
            order_ties_by_issue(
                &mut events,
                |a, b| {
                    a.at == b.at
                        && matches!(
                            (a.kind, b.kind),
                            (EventKind::Invoice { .. }, EventKind::Invoice { .. })
                                | (EventKind::Refund { .. }, EventKind::Refund { .. })
                        )
                },
                |e| {
                    let issued = counted[e.source as usize].invoice_date;
                    (issued.millis_and_day(tz).0, e.source)
                },
            );
        }
        Timeline {
            customer_id,
            subscription_ids,
            plans: plan_ids,
            events,
            grace,
        }
    }
}
