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

/// Checks an invoice's references; answers its customer's index in
/// `customers`.
pub(super) fn invoice_references(
    invoice: &mut Invoice,
    customers: &super::Records<CustomerId, Customer>,
    plans: &super::Records<PlanId, Plan>,
    last: &mut LastCustomer,
) -> Result<usize> {
    let id = invoice.id.as_str();
    let (customer_id, owner) = match &last.0 {
        Some((named, stored, owner)) if named.shares(&invoice.customer_id) => {
            (stored.clone(), *owner)
        }
        _ => {
            let Some((owner, stored, _)) = customers.get_full(&invoice.customer_id) else {
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
            last.0 = Some((invoice.customer_id.clone(), stored.clone(), owner));
            (stored.clone(), owner)
        }
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
