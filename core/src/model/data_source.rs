//! Data sources: where records come from (a billing platform, the API).

use crate::error::Result;
use crate::ids::DataSourceId;
use crate::model::{Fields, Node};
use serde::Serialize;
use serde_json::Value;

/// A data source as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DataSource {
    /// The source's id.
    pub id: DataSourceId,
    /// Display name; the id when absent.
    pub name: String,
    /// Kind of source, such as `api`, `stripe`, `import`; `api` when absent.
    #[serde(rename = "type")]
    pub kind: String,
}

impl DataSource {
    /// The record kind errors name: `data_source`.
    pub const KIND: &'static str = "data_source";

    /// Every field an update may name, each with its other names.
    pub const FIELD_NAMES: &'static [&'static [&'static str]] =
        &[crate::model::ID_NAMES, &["name"], &["type", "kind"]];

    /// Reads one data source: `id` is required, `name` and `type` (or `kind`) are optional.
    pub fn from_json(value: &Value) -> Result<DataSource> {
        Self::from_node(value)
    }

    /// Reads one data source from any record representation.
    pub fn from_node<'a, N: Node<'a>>(node: N) -> Result<DataSource> {
        let f = Fields::open(Self::KIND, node, true)?;
        Ok(DataSource {
            id: DataSourceId::new(f.id()),
            name: f.text(&["name"])?.unwrap_or_else(|| f.id().to_string()),
            kind: f
                .text(&["type", "kind"])?
                .unwrap_or_else(|| "api".to_string()),
        })
    }
}
