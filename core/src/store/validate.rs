//! Cross-record rules of invoices: the customer exists; a subscription
//! invoice's plan exists and shares its currency; any other plan id named
//! must exist too. Checking also points the invoice's customer and plan ids
//! at the stored records' own ids, so a million invoices hold no copies of
//! them, and answers the customer's index, so storing needs no lookup.

use crate::error::{Error, Result};
use crate::ids::{CustomerId, PlanId};
use crate::model::{Customer, Invoice, InvoiceType, Plan};

/// The customer of the invoice checked last, as the invoice named it, as
/// it is stored and its index among the customers. The next invoice naming
/// the customer by the same shared id (as a bulk reader hands out for a run
/// of one customer's invoices) needs no lookup.
#[derive(Debug, Default)]
pub(super) struct LastCustomer(Option<(CustomerId, CustomerId, usize)>);

impl LastCustomer {
    /// The index and stored id of the customer `named`: the last one's, or
    /// looked up in `customers`.
    pub(super) fn find(
        &mut self,
        named: &CustomerId,
        customers: &super::Records<CustomerId, Customer>,
    ) -> Option<(usize, CustomerId)> {
        match &self.0 {
            Some((last, stored, owner)) if last.shares(named) => Some((*owner, stored.clone())),
            _ => {
                let (owner, stored, _) = customers.get_full(named)?;
                self.0 = Some((named.clone(), stored.clone(), owner));
                Some((owner, stored.clone()))
            }
        }
    }
}

/// Checks an invoice's references, given the index and stored id of the
/// customer it names (`None` when there is none); answers that index.
pub(super) fn invoice_references(
    invoice: &mut Invoice,
    customer: Option<(usize, CustomerId)>,
    plans: &super::Records<PlanId, Plan>,
) -> Result<usize> {
    let id = invoice.id.as_str();
    let Some((owner, customer_id)) = customer else {
        return Err(Error::invalid(
            Invoice::KIND,
            id,
            "customer_id",
            format!(
                "customer `{}` does not exist; send the customer first",
                invoice.customer_id
            ),
        ));
    };
    if let Some(plan_id) = &invoice.plan_id {
        let (shared_plan_id, plan) = plans.get_key_value(plan_id).ok_or_else(|| {
            Error::invalid(
                Invoice::KIND,
                id,
                "plan_id",
                format!("plan `{plan_id}` does not exist; send the plan first"),
            )
        })?;
        if invoice.kind == InvoiceType::Subscription && plan.currency != invoice.currency {
            return Err(Error::invalid(
                Invoice::KIND,
                id,
                "currency",
                format!(
                    "{} differs from plan `{plan_id}`'s currency {}",
                    invoice.currency, plan.currency
                ),
            ));
        }
        invoice.plan_id = Some(shared_plan_id.clone());
    }
    invoice.customer_id = customer_id;
    Ok(owner)
}
