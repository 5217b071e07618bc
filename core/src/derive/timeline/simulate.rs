//! Replaying a customer's events at an `as_of`: which events apply, the
//! window of `as_of` instants the replay serves, and the daily movements
//! and final state.

use super::*;

impl Timeline {
    /// Whether the customer has any event at all.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The `as_of` instants around `as_of` at which the same events apply and
    /// the same events lie ahead: an event switches both at its instant, and
    /// a lapse also one nanosecond after its grace period ends. Events are in
    /// time order, so the instants of the last event by `as_of` and the first
    /// after it (at `ahead`) bound the first part. Of the lapses, only the
    /// latest grace end `as_of` is past and the earliest it is not can
    /// narrow the window. All is compared in whole milliseconds (`as_of` is
    /// at or past an event's millisecond exactly when it is rounded down,
    /// and past a grace end exactly when it is rounded up, as in
    /// [`Timeline::applies`]); only the two ends become instants.
    fn window_around(&self, as_of: DateTime<Utc>, ahead: usize) -> ReplayWindow {
        let (as_of_floor, as_of_ceil) = (UnixMillis::floor(as_of).0, UnixMillis::ceil(as_of).0);
        let mut from: Option<WindowEnd> = None;
        let mut until: Option<WindowEnd> = None;
        let mut keep_side = |passed: bool, switch: WindowEnd| {
            if passed {
                from = from.max(Some(switch));
            } else {
                let before = (switch.0, switch.1 - 1);
                until = Some(until.map_or(before, |end| end.min(before)));
            }
        };
        for event in self.events[ahead.saturating_sub(1)..].iter().take(2) {
            keep_side(as_of_floor >= event.at.0, (event.at.0, 0));
        }
        let (mut latest_passed, mut earliest_ahead): (Option<i64>, Option<i64>) = (None, None);
        for event in &self.events {
            if matches!(event.kind, EventKind::Lapse)
                && let Some(grace_end) = event.at.0.checked_add(self.grace)
            {
                if as_of_ceil > grace_end {
                    latest_passed = latest_passed.max(Some(grace_end));
                } else {
                    earliest_ahead = Some(earliest_ahead.map_or(grace_end, |e| e.min(grace_end)));
                }
            }
        }
        if let Some(grace_end) = latest_passed {
            keep_side(true, (grace_end, 1));
        }
        if let Some(grace_end) = earliest_ahead {
            keep_side(false, (grace_end, 1));
        }
        ReplayWindow {
            from: from.map_or(DateTime::<Utc>::MIN_UTC, instant_at),
            until: until.map_or(DateTime::<Utc>::MAX_UTC, instant_at),
        }
    }

    /// Whether an event happens by `limit` (the last whole millisecond by
    /// the cutoff and `as_of`) and applies at `as_of` (a lapse only once
    /// `as_of` is past its grace period; `as_of_ceil` is `as_of` rounded up
    /// to a whole millisecond, which is past a whole millisecond exactly
    /// when `as_of` is).
    fn applies(&self, event: &Event, limit: UnixMillis, as_of_ceil: UnixMillis) -> bool {
        event.at <= limit
            && (!matches!(event.kind, EventKind::Lapse)
                || as_of_ceil > event.at.saturating_add(self.grace))
    }

    /// Replays the events that apply at `as_of` and happen no later than
    /// `cutoff`, producing daily movements in the ledger's time zone.
    pub fn simulate(
        &self,
        cutoff: DateTime<Utc>,
        as_of: DateTime<Utc>,
        settings: &Settings,
        fx: &FxTable,
    ) -> Result<Replay> {
        let mut live: SmallVec<[Live; 2]> =
            smallvec::smallvec![Live::default(); self.subscription_ids.len()];
        // Indexed as a slice: a small vector checks where its items are on
        // every access.
        let subs = live.as_mut_slice();
        let mut replay = Replay::default();
        let mut rows = ROWS_IN_PROGRESS.take();
        rows.clear();
        let mut trial_seen = false;
        let mut paid_before = false;
        // The subscription of the subscription invoice applied last: the
        // target of a refund that names neither an invoice nor a
        // subscription.
        let mut last_applied: Option<usize> = None;
        let mut invoices_applied: u32 = 0;
        let limit = UnixMillis::floor(cutoff.min(as_of));
        let as_of_ceil = UnixMillis::ceil(as_of);
        let applies = |e: &Event| self.applies(e, limit, as_of_ceil);
        let mut before = DayState::default();
        let mut after = DayState::default();
        let mut events = self.events.iter().filter(|e| applies(e)).peekable();
        while let Some(first) = events.peek() {
            let day = first.day;
            let mut causes = DayCauses::default();
            let mut trial_before = trial_seen;
            // The first positive amount applied this day: when the customer
            // first pays, if the day ends paying.
            let mut first_payment_today: Option<UnixMillis> = None;
            // Whether any subscription's paying state changed: most days
            // renew at the same price, and the day's comparison is skipped.
            let mut changed = false;
            while let Some(event) = events.next_if(|e| e.day == day) {
                let touched = match event.kind {
                    EventKind::Cancel { all: true } => None,
                    EventKind::Refund {
                        target: RefundTarget::Latest,
                        ..
                    } => None,
                    _ => Some(event.sub as usize),
                };
                let paying_before = touched.map(|i| subs[i].paying());
                let any_paying_before = touched.is_none() && subs.iter().any(|s| s.mrr > 0);
                match event.kind {
                    EventKind::Cancel { all } => {
                        for (index, state) in subs.iter_mut().enumerate() {
                            if all || index as u32 == event.sub {
                                causes.cancellation |= state.mrr > 0;
                                state.mrr = 0;
                                state.trial = false;
                            }
                        }
                    }
                    EventKind::Invoice {
                        monthly,
                        amount,
                        plan,
                        quantity,
                        currency,
                    } => {
                        let state = &mut subs[event.sub as usize];
                        causes.cancellation |= monthly == 0 && state.mrr > 0;
                        // Trials are per subscription, whatever the others did.
                        let trial = monthly == 0 && !state.paid;
                        state.mrr = monthly;
                        state.currency = Some(currency);
                        state.plan = Some(plan);
                        state.quantity = quantity;
                        state.last_invoice_amount = amount;
                        state.paid |= monthly > 0;
                        state.trial = trial;
                        last_applied = Some(event.sub as usize);
                        invoices_applied += 1;
                        state.applied = invoices_applied;
                        if trial && !paid_before {
                            trial_seen = true;
                            trial_before = true;
                            replay.trial_started.get_or_insert(event.at.to_datetime());
                        }
                        if monthly > 0 {
                            first_payment_today.get_or_insert(event.at);
                        }
                    }
                    EventKind::Refund {
                        target,
                        refunded,
                        currency: refund_currency,
                    } => {
                        let index = match target {
                            RefundTarget::Latest => last_applied,
                            _ => Some(event.sub as usize),
                        };
                        if let Some(state) = index.map(|i| &mut subs[i]) {
                            let (denominator, currency) = match target {
                                RefundTarget::Invoice { amount, currency } => (amount, currency),
                                _ => (
                                    state.last_invoice_amount,
                                    state.currency.unwrap_or(refund_currency),
                                ),
                            };
                            if denominator > 0 && state.mrr > 0 {
                                // The ratio of two amounts in one currency.
                                let refunded = if currency == refund_currency {
                                    refunded
                                } else {
                                    fx.convert(refunded, refund_currency, currency, day)?
                                };
                                let reduction = round_ratio(
                                    i128::from(state.mrr) * i128::from(refunded),
                                    i128::from(denominator),
                                );
                                state.mrr = (state.mrr - reduction).max(0);
                                causes.refund = true;
                            }
                        }
                    }
                    EventKind::Lapse => {
                        let state = &mut subs[event.sub as usize];
                        causes.lapse |= state.mrr > 0;
                        state.mrr = 0;
                        state.trial = false;
                    }
                }
                changed |= match touched {
                    Some(i) => paying_before != Some(subs[i].paying()),
                    // Every subscription may have changed.
                    None => any_paying_before || subs.iter().any(|s| s.mrr > 0),
                };
            }
            if !changed {
                // The day ends as the day before did: nothing moved.
                continue;
            }
            after.fill(subs.iter().map(|s| (s.mrr, s.currency, s.plan, s.quantity)));
            let first_row = rows.len();
            classify(
                &DayChange {
                    customer_id: &self.customer_id,
                    date: day,
                    before: &before,
                    after: &after,
                    plans: &self.plans,
                    causes,
                    paid_before,
                    trial_before,
                },
                settings.base_currency,
                fx,
                &mut rows,
            )?;
            if rows[first_row..]
                .iter()
                .any(|m| m.customer_count_change < 0)
            {
                replay.last_churn = Some(day);
            }
            let paying = after.is_paying();
            if paying && replay.paid_started.is_none() {
                replay.paid_started = first_payment_today.map(UnixMillis::to_datetime);
            }
            paid_before |= paying;
            std::mem::swap(&mut before, &mut after);
        }
        replay.trial_open = subs.iter().any(|s| s.trial) && !paid_before;
        // Events are in time order: those after `as_of` start at `ahead`.
        let as_of_floor = UnixMillis::floor(as_of);
        let ahead = self.events.partition_point(|e| e.at <= as_of_floor);
        replay.events_ahead = ahead < self.events.len();
        replay.next_cancellation = self.events[ahead..]
            .iter()
            .find(|e| matches!(e.kind, EventKind::Cancel { .. }))
            .map(|e| e.at.to_datetime());
        replay.window = self.window_around(as_of, ahead);
        let mut kept = Vec::with_capacity(rows.len());
        kept.append(&mut rows);
        replay.movements = kept;
        if rows.capacity() <= ROWS_KEPT_BETWEEN_REPLAYS {
            ROWS_IN_PROGRESS.set(rows);
        }
        let state_of = |(live, id): (&Live, &Option<SubscriptionId>)| SubscriptionState {
            subscription_id: id.clone(),
            mrr: live.mrr,
            currency: live.currency,
            plan_id: live.plan.map(|p| self.plans[p as usize].clone()),
            quantity: live.quantity,
        };
        let in_index_order = subs.iter().zip(&self.subscription_ids);
        replay.subscriptions = if subs.len() > 1 {
            let mut in_applied_order: SmallVec<[_; 4]> = in_index_order.collect();
            in_applied_order.sort_by_key(|(live, _)| live.applied);
            in_applied_order.into_iter().map(state_of).collect()
        } else {
            in_index_order.map(state_of).collect()
        };
        Ok(replay)
    }
}
