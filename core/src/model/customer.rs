//! Customer records, read from either the data-API shape or the import shape
//! (`created` -> `created_date`, `metadata` -> `custom_variables`).

use crate::error::Result;
use crate::ids::{CustomerId, DataSourceId};
use crate::model::{CustomVariables, DATA_SOURCE_NAMES, Fields, ID_NAMES, Node, Timestamp};
use crate::money::Currency;
use serde::Serialize;
use serde_json::Value;

/// A customer as stored. Lifecycle fields given by the sender are kept as
/// given; the analytics views derive them from invoices when absent. Text
/// is held in boxed strings (a pointer and a length, no spare capacity) and
/// the custom variables packed, as a ledger holds hundreds of thousands of
/// customers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Customer {
    /// The customer's external id.
    pub id: CustomerId,
    /// Display name; required.
    pub name: Box<str>,
    /// Contact email, as given (not checked).
    pub email: Option<Box<str>>,
    /// When the customer was created (`created` in the data-API shape).
    pub created_date: Option<Timestamp>,
    /// Upper-case country code.
    pub country: Option<Box<str>>,
    /// Absent means the ledger's base currency.
    pub currency: Option<Currency>,
    /// The sender's status text, kept as given; the profile's status is derived from invoices.
    pub status: Option<Box<str>>,
    /// When the trial started, as the sender gives it; the profile prefers what the invoices
    /// say.
    pub trial_started: Option<Timestamp>,
    /// When paying started, as the sender gives it; the profile prefers what the invoices say.
    pub paid_started: Option<Timestamp>,
    /// When the trial ends, when the sender gives it.
    pub trial_end_date: Option<Timestamp>,
    /// When the customer cancelled, as the sender gives it; the profile prefers what the
    /// invoices say.
    pub cancel_date: Option<Timestamp>,
    /// Since when payment is overdue, when the sender gives it.
    pub overdue_date: Option<Timestamp>,
    /// Why the customer cancelled, as given (an empty text is kept).
    pub cancel_reason: Option<Box<str>>,
    /// String pairs for filters and breakdowns (`metadata` in the data-API shape, values
    /// stringified).
    pub custom_variables: CustomVariables,
    /// The data source the customer came from (`data_source` or `data_source_id`).
    pub data_source: Option<DataSourceId>,
}

const CREATED: &[&str] = &["created_date", "created"];
/// The names a customer's custom variables go by; in a table, also the
/// prefix of a column holding one variable (`custom_variables.industry`).
pub(crate) const CUSTOM_VARIABLES: &[&str] = &["custom_variables", "metadata"];

impl Customer {
    /// The record kind errors name: `customer`.
    pub const KIND: &'static str = "customer";

    /// Each field by the names a record may give it, the name it is stored
    /// (and serialized) under first.
    pub const FIELD_NAMES: &'static [&'static [&'static str]] = &[
        ID_NAMES,
        &["name"],
        &["email"],
        CREATED,
        &["country"],
        &["currency"],
        &["status"],
        &["trial_started"],
        &["paid_started"],
        &["trial_end_date"],
        &["cancel_date"],
        &["overdue_date"],
        &["cancel_reason"],
        CUSTOM_VARIABLES,
        DATA_SOURCE_NAMES,
    ];

    /// Reads and validates one customer record.
    pub fn from_json(value: &Value) -> Result<Customer> {
        Self::from_node(value)
    }

    /// Reads and validates one customer record from any record
    /// representation (a JSON value or text, an Arrow row).
    pub fn from_node<'a, N: Node<'a>>(node: N) -> Result<Customer> {
        let f = Fields::open(Self::KIND, node, true)?;
        Ok(Customer {
            id: CustomerId::new(f.id()),
            name: f.required_text_ref(&["name"])?.into(),
            email: boxed(f.text_ref(&["email"])?),
            created_date: f.timestamp(CREATED)?,
            country: f.country(&["country"])?,
            currency: f.currency(&["currency"])?,
            status: boxed(f.text_ref(&["status"])?),
            trial_started: f.timestamp(&["trial_started"])?,
            paid_started: f.timestamp(&["paid_started"])?,
            trial_end_date: f.timestamp(&["trial_end_date"])?,
            cancel_date: f.timestamp(&["cancel_date"])?,
            overdue_date: f.timestamp(&["overdue_date"])?,
            cancel_reason: boxed(f.text_ref(&["cancel_reason"])?),
            custom_variables: f.string_map(CUSTOM_VARIABLES)?.unwrap_or_default(),
            data_source: f.text(DATA_SOURCE_NAMES)?.map(DataSourceId::new),
        })
    }

    /// A custom variable by name, matched case-insensitively as reports
    /// lower-case names (`RÉGION` is `région`).
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.custom_variables
            .iter()
            .find(|(key, _)| same_ignoring_case(key, name))
            .map(|(_, value)| value)
    }
}

/// Whether two texts are the same once lower-cased by `str::to_lowercase`
/// (Unicode's lower case, a final `Σ` as `ς`); ASCII texts are compared
/// in place.
fn same_ignoring_case(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        return a.eq_ignore_ascii_case(b);
    }
    a.to_lowercase() == b.to_lowercase()
}

fn boxed(text: Option<std::borrow::Cow<'_, str>>) -> Option<Box<str>> {
    text.map(Into::into)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn import_shape_maps_onto_the_data_api_shape() {
        let c = Customer::from_json(&json!({
            "id": "c1", "name": "Acme", "created": "2024-01-05",
            "metadata": {"industry": "retail", "seats": 12}
        }))
        .unwrap();
        assert_eq!(c.created_date, Timestamp::parse("2024-01-05"));
        assert_eq!(c.custom_variables.get("seats"), Some("12"));
        assert_eq!(c.attribute("Industry"), Some("retail"));
    }

    #[test]
    fn variables_may_come_flattened_a_field_per_key_but_not_both_ways() {
        // As `pandas.read_csv(...).to_dict("records")` gives a CSV export.
        let c = Customer::from_json(&json!({
            "id": "c1", "name": "Acme", "custom_variables.industry": "retail",
            "metadata.seats": 12, "custom_variables.region": null, "notes.x": "y"
        }))
        .unwrap();
        let pairs: Vec<(&str, &str)> = c.custom_variables.iter().collect();
        assert_eq!(pairs, [("industry", "retail"), ("seats", "12")]);
        let both = Customer::from_json(&json!({
            "id": "c1", "name": "Acme", "custom_variables": {"industry": "retail"},
            "custom_variables.seats": 12
        }));
        assert_eq!(
            both.unwrap_err().to_string(),
            "customer c1: field `custom_variables`: `custom_variables.seats` gives a variable \
             too; give the variables one way"
        );
        let nested = Customer::from_json(&json!({"id": "c1", "name": "A", "metadata.x": [1]}));
        assert_eq!(
            nested.unwrap_err().to_string(),
            "customer c1: field `metadata.x`: must be a string, number or boolean"
        );
    }

    #[test]
    fn attributes_are_found_by_their_name_lower_cased() {
        let c = Customer::from_json(&json!({
            "id": "c1", "name": "Acme",
            "custom_variables": {"RÉGION": "Bretagne", "ΟΔΟΣ": "Αθηνάς"}
        }))
        .unwrap();
        assert_eq!(c.attribute("région"), Some("Bretagne"));
        assert_eq!(c.attribute("Région"), Some("Bretagne"));
        // A final capital sigma lower-cases to ς, as `str::to_lowercase` writes it.
        assert_eq!(c.attribute(&"ΟΔΟΣ".to_lowercase()), Some("Αθηνάς"));
        assert_eq!(c.attribute("οδοσ"), None);
        assert_eq!(c.attribute("region"), None);
    }

    #[test]
    fn text_fields_read_back() {
        let c = Customer::from_json(&json!({
            "id": "c1", "name": "Acme", "email": "ops@acme.test", "country": " de ",
            "status": "active", "cancel_reason": ""
        }))
        .unwrap();
        assert_eq!(
            (&*c.name, c.email.as_deref(), c.country.as_deref()),
            ("Acme", Some("ops@acme.test"), Some("DE"))
        );
        assert_eq!(
            (c.status.as_deref(), c.cancel_reason.as_deref()),
            (Some("active"), Some(""))
        );
        assert_eq!(std::mem::size_of::<Customer>(), 168);
    }

    #[test]
    fn a_country_is_a_two_letter_code() {
        let country = |value: serde_json::Value| {
            Customer::from_json(&json!({"id": "c1", "name": "Acme", "country": value}))
                .map(|c| c.country.as_deref().map(str::to_string))
                .map_err(|e| e.to_string())
        };
        assert_eq!(country(json!("gb")), Ok(Some("GB".to_string())));
        assert_eq!(country(json!("  ")), Ok(None));
        assert_eq!(country(json!(null)), Ok(None));
        assert_eq!(
            country(json!("Germany")),
            Err("customer c1: field `country`: `Germany` is not a two-letter country code (ISO 3166-1, such as DE)".to_string())
        );
        assert_eq!(
            country(json!("DEU")),
            Err("customer c1: field `country`: `DEU` is not a two-letter country code (ISO 3166-1, such as DE)".to_string())
        );
        assert_eq!(
            country(json!(49)),
            Err("customer c1: field `country`: `49` is not a two-letter country code (ISO 3166-1, such as DE)".to_string())
        );
    }

    #[test]
    fn missing_name_is_named() {
        let err = Customer::from_json(&json!({"id": "c1"})).unwrap_err();
        assert_eq!(err.to_string(), "customer c1: field `name`: is required");
    }
}
