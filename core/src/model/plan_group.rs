//! Plan groups: named sets of existing plans, used as a report filter.

use crate::error::Result;
use crate::ids::{PlanGroupId, PlanId};
use crate::model::{Fields, Interval, Node, Plan, View};
use crate::money::Currency;
use serde::Serialize;
use serde_json::Value;

/// A plan group as stored; `plans` holds ids only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanGroup {
    /// The group's id, assigned by the ledger when the record gives none.
    pub id: PlanGroupId,
    /// Display name; required.
    pub name: String,
    /// The ids of its plans, each an existing plan (checked by the ledger).
    pub plans: Vec<PlanId>,
}

impl PlanGroup {
    /// The record kind errors name: `plan_group`.
    pub const KIND: &'static str = "plan_group";

    /// Reads one plan group; `plans` is an array of ids or of `{id}` objects.
    /// The id may be absent (the ledger then assigns one).
    pub fn from_json(value: &Value) -> Result<PlanGroup> {
        Self::from_node(value)
    }

    /// [`PlanGroup::from_json`] from any record representation (a JSON
    /// value or text, an Arrow row whose `plans` is a list of strings).
    pub fn from_node<'a, N: Node<'a>>(node: N) -> Result<PlanGroup> {
        let f = Fields::open(Self::KIND, node, false)?;
        let name = f.required_text(&["name"])?;
        let mut plans = Vec::new();
        let items = f.array(&["plans"])?.ok_or_else(|| {
            f.error(
                "plans",
                "is required: the ids of the group's plans (an empty array for none)",
            )
        })?;
        for (i, item) in items.into_iter().enumerate() {
            let id = match item.view() {
                View::String(id) => id.to_string(),
                View::Object(_) => f
                    .nested(format!("plans[{i}]"), item)?
                    .required_text(&["id"])?,
                _ => {
                    return Err(f.error(
                        &format!("plans[{i}]"),
                        "must be a plan id or an object with an id",
                    ));
                }
            };
            let id = PlanId::new(id);
            if !plans.contains(&id) {
                plans.push(id);
            }
        }
        Ok(PlanGroup {
            id: PlanGroupId::new(f.id()),
            name,
            plans,
        })
    }
}

/// A plan group as read (the interface's shape): its plans as summaries of
/// their records, in the group's order. Ids are what a group is written with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanGroupView<'a> {
    /// The group's id.
    pub id: &'a PlanGroupId,
    /// Its display name.
    pub name: &'a str,
    /// Its plans, in the order the group lists them.
    pub plans: Vec<PlanSummary<'a>>,
}

/// The fields of a plan a plan group shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlanSummary<'a> {
    /// The plan's id.
    pub id: &'a PlanId,
    /// Its display name.
    pub name: &'a str,
    /// The unit of its billing period.
    pub billing_freq: Interval,
    /// Units of `billing_freq` per billing period.
    pub billing_freq_count: u32,
    /// The product it prices (`null` when not given).
    pub product_name: Option<&'a str>,
    /// The currency it bills in.
    pub currency: Currency,
}

impl<'a> PlanGroupView<'a> {
    /// The group with each of its plans that `plan` finds (a group only
    /// names existing plans, and deleting a plan takes it out of its groups).
    pub(crate) fn of(group: &'a PlanGroup, plan: impl Fn(&str) -> Option<&'a Plan>) -> Self {
        let plans = group
            .plans
            .iter()
            .filter_map(|id| plan(id.as_str()))
            .map(|plan| PlanSummary {
                id: &plan.id,
                name: &plan.name,
                billing_freq: plan.billing_freq,
                billing_freq_count: plan.billing_freq_count,
                product_name: plan.product_name.as_deref(),
                currency: plan.currency,
            })
            .collect();
        PlanGroupView {
            id: &group.id,
            name: &group.name,
            plans,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A group names its plans, an empty list included; a group without
    /// `plans` (`plan_ids`, say) is refused, not stored with none.
    #[test]
    fn a_group_names_its_plans() {
        let group =
            PlanGroup::from_json(&json!({"name": "G", "plans": ["m", {"id": "y"}, "m"]})).unwrap();
        let ids: Vec<&str> = group.plans.iter().map(PlanId::as_str).collect();
        assert_eq!(ids, ["m", "y"]);
        let empty = PlanGroup::from_json(&json!({"name": "G", "plans": []})).unwrap();
        assert!(empty.plans.is_empty());
        let error =
            PlanGroup::from_json(&json!({"id": "g", "name": "G", "plan_ids": ["m"]})).unwrap_err();
        assert_eq!(
            error.to_string(),
            "plan_group g: field `plans`: is required: the ids of the group's plans (an empty array for none)"
        );
    }
}
