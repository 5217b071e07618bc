//! Plan groups: named sets of existing plans, used as a report filter.

use crate::error::Result;
use crate::ids::{PlanGroupId, PlanId};
use crate::model::{Fields, Node, View};
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
        for (i, item) in f.array(&["plans"])?.into_iter().flatten().enumerate() {
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
