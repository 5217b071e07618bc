//! The commands that talk to the REST service.

use crate::args::{
    AccountAction, Command, CustomersAction, DataAction, Export, PlansAction, Resource,
    SettingsAction, not_blank, pairs,
};
use crate::body;
use crate::error::{CliError, Result};
use crate::http::{Client, encode};
use serde_json::{Map, Value, json};

/// Page size when exporting everything.
const EXPORT_PAGE: usize = 10_000;

fn paging(limit: Option<usize>, offset: Option<usize>) -> Vec<(String, String)> {
    let mut query = Vec::new();
    if let Some(limit) = limit {
        query.push(("limit".to_string(), limit.to_string()));
    }
    if let Some(offset) = offset {
        query.push(("offset".to_string(), offset.to_string()));
    }
    query
}

fn params(args: &[String]) -> Result<Vec<(String, String)>> {
    pairs(args).map_err(CliError::usage)
}

/// `as_of` as the service's query parameter, for the commands that compute
/// at an instant; any other command refuses `--as-of` rather than drop it.
fn instant(command: &Command, as_of: Option<String>) -> Result<Vec<(String, String)>> {
    let Some(as_of) = as_of else {
        return Ok(Vec::new());
    };
    match command {
        Command::Reports { .. }
        | Command::Customers {
            action: CustomersAction::List { .. } | CustomersAction::Get { .. },
        }
        | Command::Exports {
            what: Export::Movements,
            ..
        } => Ok(vec![("as_of".to_string(), as_of)]),
        _ => Err(CliError::usage(
            "--as-of applies to reports, customers list and get, exports movements and local",
        )),
    }
}

/// Runs an online command at `as_of` (default now); returns what to print.
pub fn run(client: &Client, command: Command, as_of: Option<String>) -> Result<Value> {
    let at = instant(&command, as_of)?;
    let value = match command {
        Command::Reports { name, params: args } => {
            let mut query = params(&args)?;
            query.extend(at);
            client.send("GET", &format!("/reports/{}", encode(&name)), &query, None)?
        }
        Command::Customers { action } => match action {
            CustomersAction::List {
                limit,
                offset,
                params: args,
            } => {
                let mut query = paging(limit, offset);
                query.extend(params(&args)?);
                query.extend(at);
                client.send("GET", "/customers", &query, None)?
            }
            CustomersAction::Get { id } => {
                client.send("GET", &format!("/customers/{}", encode(&id)), &at, None)?
            }
            CustomersAction::Resync { id } => client.send(
                "POST",
                &format!("/customers/{}/resync", encode(&id)),
                &[],
                None,
            )?,
        },
        Command::Plans {
            action: PlansAction::List { limit, offset },
        } => client.send("GET", "/data/plans", &paging(limit, offset), None)?,
        Command::Data { resource, action } => data(client, resource, action)?,
        Command::Import(args) => super::import::run(client, args)?,
        Command::Exports { what, params: args } => {
            let mut query = params(&args)?;
            query.extend(at);
            return export(client, what, &query);
        }
        Command::Settings { action } => match action {
            None | Some(SettingsAction::Show) => {
                client.send("GET", "/settings/notifications", &[], None)?
            }
            Some(SettingsAction::Update { body: given }) => client.send(
                "PUT",
                "/settings/notifications",
                &[],
                Some(&body::required(given.as_deref())?),
            )?,
        },
        Command::Integrations => json!({
            "payment_platform": client.send("GET", "/settings/payment-platform", &[], None)?,
            "crm": client.send("GET", "/settings/crm", &[], None)?,
        }),
        Command::Account { action } => match action {
            None | Some(AccountAction::Show) => client.send("GET", "/account", &[], None)?,
            Some(AccountAction::Billing) => client.send("GET", "/account/billing", &[], None)?,
            Some(AccountAction::Team) => client.send("GET", "/account/team", &[], None)?,
            Some(AccountAction::ApiKeys) => client.send("GET", "/account/api-keys", &[], None)?,
            Some(AccountAction::Update { body: given }) => client.send(
                "PUT",
                "/account",
                &[],
                Some(&body::required(given.as_deref())?),
            )?,
        },
        Command::Api {
            method,
            path,
            pairs: given,
            body: raw,
        } => api(client, &method, &path, &given, raw.as_deref())?,
        Command::Local(_) => return Err(CliError::usage("local runs offline")),
        Command::Stripe { .. } => {
            return Err(CliError::usage("stripe talks to Stripe, not the service"));
        }
    };
    Ok(value)
}

fn data(client: &Client, resource: Resource, action: DataAction) -> Result<Value> {
    let base = resource.path();
    match action {
        DataAction::List {
            limit,
            offset,
            customer,
            source,
        } => {
            let mut query = paging(limit, offset);
            let filters = [
                ("customer", customer, Resource::Invoices, "invoices"),
                ("source", source, Resource::Plans, "plans"),
            ];
            for (name, value, applies_to, list) in filters {
                let Some(value) = value else { continue };
                if resource != applies_to {
                    return Err(CliError::usage(format!(
                        "--{name} applies to data {list} list"
                    )));
                }
                not_blank(&format!("--{name}"), &value).map_err(CliError::usage)?;
                query.push((name.to_string(), value));
            }
            known_source(client, &query)?;
            client.send("GET", base, &query, None)
        }
        DataAction::Get { id } => client.send("GET", &format!("{base}/{}", encode(&id)), &[], None),
        DataAction::Create { body: given } => {
            client.send("POST", base, &[], Some(&body::required(given.as_deref())?))
        }
        DataAction::Update { id, body: given } => client.send(
            "PUT",
            &format!("{base}/{}", encode(&id)),
            &[],
            Some(&body::required(given.as_deref())?),
        ),
        DataAction::Delete { id } => {
            client.send("DELETE", &format!("{base}/{}", encode(&id)), &[], None)
        }
    }
}

/// Refuses a `source` filter naming a data source the service does not
/// have, with the service's own not-found error: its plan list answers such
/// a filter with no plans, where an unknown `customer` of the invoice list
/// is not found.
fn known_source(client: &Client, query: &[(String, String)]) -> Result<()> {
    if let Some((_, source)) = query.iter().find(|(name, _)| name == "source") {
        client.send(
            "GET",
            &format!("/data/data-sources/{}", encode(source)),
            &[],
            None,
        )?;
    }
    Ok(())
}

/// Every record of a kind, page by page, with the list's own parameters
/// (`--customer` of invoices, `--source` of plans; the service refuses
/// one its list does not read), or the movements of movement-table: a
/// list of rows, whatever the format it is written in. An export reads
/// every page, so `--limit` and `--offset` are an error.
fn export(client: &Client, what: Export, query: &[(String, String)]) -> Result<Value> {
    let path = match what {
        Export::Customers => "/data/customers",
        Export::Plans => "/data/plans",
        Export::Invoices => "/data/invoices",
        Export::Movements => {
            let mut answer = client.send("GET", "/reports/movement-table", query, None)?;
            return match answer["result"]["list"].take() {
                list @ Value::Array(_) => Ok(list),
                _ => Err(CliError::Io(
                    "the service's movement-table answer holds no `result.list`".to_string(),
                )),
            };
        }
    };
    if let Some((name, _)) = query
        .iter()
        .find(|(name, _)| name == "limit" || name == "offset")
    {
        return Err(CliError::usage(format!(
            "--{name}: an export reads every page; `data <resource> list` reads one"
        )));
    }
    if let Export::Plans = what {
        known_source(client, query)?;
    }
    let mut all = Vec::new();
    loop {
        let mut page_query = query.to_vec();
        page_query.push(("limit".to_string(), EXPORT_PAGE.to_string()));
        page_query.push(("offset".to_string(), all.len().to_string()));
        let page = client.send("GET", path, &page_query, None)?;
        let list = page["result"]["list"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let count = page["result"]["count"].as_u64().unwrap_or(0) as usize;
        let done = list.is_empty();
        all.extend(list);
        if done || all.len() >= count {
            break;
        }
    }
    Ok(Value::Array(all))
}

/// The generic passthrough: key=value pairs are query parameters for GET and
/// DELETE, JSON body fields otherwise (numbers and booleans as such). GET
/// and HEAD take no body; DELETE sends one only when --body is given, and
/// any other method only when --body or a field is: an endpoint that reads
/// no body (a resync, a redelivery) refuses even `{}`.
fn api(
    client: &Client,
    method: &str,
    path: &str,
    given: &[String],
    raw: Option<&str>,
) -> Result<Value> {
    let method = method.to_ascii_uppercase();
    let path = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    let mut fields = Vec::new();
    for pair in given {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| CliError::usage(format!("`{pair}` is not key=value")))?;
        fields.push((key.to_string(), value.to_string()));
    }
    if method == "GET" || method == "HEAD" {
        if raw.is_some() {
            return Err(CliError::usage(format!(
                "{method} sends no body: pass query parameters as key=value"
            )));
        }
        return client.send(&method, &path, &fields, None);
    }
    if method == "DELETE" {
        let payload = match raw {
            Some(given) => body::read(Some(given))?,
            None => None,
        };
        return client.send(&method, &path, &fields, payload.as_ref());
    }
    let mut payload = match body::read(raw)? {
        Some(value) => value,
        None if fields.is_empty() => return client.send(&method, &path, &[], None),
        None => Value::Object(Map::new()),
    };
    if !fields.is_empty() {
        let map = payload
            .as_object_mut()
            .ok_or_else(|| CliError::usage("key=value fields need a JSON object body"))?;
        // A field given twice, or in the body and as a pair, would be read
        // as one of its values without a word.
        for (key, value) in fields {
            if map.contains_key(&key) {
                return Err(CliError::usage(format!(
                    "the body field `{key}` is given twice (in --body or as key=value); give it once"
                )));
            }
            let typed = serde_json::from_str::<Value>(&value).unwrap_or(Value::String(value));
            map.insert(key, typed);
        }
    }
    client.send(&method, &path, &[], Some(&payload))
}
