//! Reusing the reference ids a reader made last.

use super::{CustomerId, PlanId, SubscriptionId};
use std::borrow::Borrow;

/// The reference ids a reader of many records made most recently, handed
/// out again (a clone, no allocation) when the same text comes back. Bulk
/// data mostly lists a customer's invoices together and names a few plans
/// over and over, so a reader then allocates one id per run of a customer
/// and one per plan, instead of two or three per invoice. The ids are equal
/// either way; only whether they share a string differs.
#[derive(Debug, Default)]
pub(crate) struct RecentIds {
    customer: Option<CustomerId>,
    subscription: Option<SubscriptionId>,
    plans: Vec<PlanId>,
}

/// How many distinct plan ids a [`RecentIds`] keeps; later ones are made
/// anew each time.
const RECENT_PLANS: usize = 32;

impl RecentIds {
    /// The customer id `text`, the last one's when it is the same.
    pub(crate) fn customer(&mut self, text: &str) -> CustomerId {
        same_as_last(&mut self.customer, text)
    }

    /// The subscription id `text`, the last one's when it is the same.
    pub(crate) fn subscription(&mut self, text: &str) -> SubscriptionId {
        same_as_last(&mut self.subscription, text)
    }

    /// The plan id `text`, a kept one's when there is one. The one found
    /// moves to the front, where a customer's run of invoices finds it
    /// again first.
    pub(crate) fn plan(&mut self, text: &str) -> PlanId {
        if let Some(found) = self.plans.iter().position(|id| id.as_str() == text) {
            self.plans.swap(0, found);
            return self.plans[0].clone();
        }
        let id = PlanId::from(text);
        if self.plans.len() < RECENT_PLANS {
            self.plans.push(id.clone());
        }
        id
    }
}

fn same_as_last<T: Clone + Borrow<str> + for<'a> From<&'a str>>(
    last: &mut Option<T>,
    text: &str,
) -> T {
    match last {
        Some(id) if Borrow::<str>::borrow(&*id) == text => id.clone(),
        _ => last.insert(T::from(text)).clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_id_is_shared_and_a_new_one_is_made() {
        let mut recent = RecentIds::default();
        let first = recent.customer("c1");
        assert!(recent.customer("c1").shares(&first));
        let other = recent.customer("c2");
        assert_eq!(other.as_str(), "c2");
        assert!(!recent.customer("c1").shares(&first));

        let monthly = recent.plan("m");
        recent.plan("y");
        assert!(recent.plan("m").shares(&monthly));
        for n in 0..RECENT_PLANS {
            recent.plan(&format!("p{n}"));
        }
        let late = recent.plan("late");
        assert!(!recent.plan("late").shares(&late));
        assert_eq!(late.as_str(), "late");

        let subscription = recent.subscription("s1");
        assert!(recent.subscription("s1").shares(&subscription));
    }
}
