//! Cross-record rules of invoices: the customer exists; a subscription
//! invoice's plan exists and shares its currency; any other plan id named
//! must exist too.

use crate::error::{Error, Result};
use crate::ids::{CustomerId, PlanId};
use crate::model::{Customer, Invoice, InvoiceType, Plan};

pub(super) fn invoice_references(
    invoice: &Invoice,
    customers: &super::Records<CustomerId, Customer>,
    plans: &super::Records<PlanId, Plan>,
) -> Result<()> {
    let id = invoice.id.as_str();
    if !customers.contains_key(&invoice.customer_id) {
        return Err(Error::invalid(
            Invoice::KIND,
            id,
            "customer_id",
            format!(
                "customer `{}` does not exist; send the customer first",
                invoice.customer_id
            ),
        ));
    }
    if let Some(plan_id) = &invoice.plan_id {
        let plan = plans.get(plan_id).ok_or_else(|| {
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
    }
    Ok(())
}
