//! Records from CSV text, as `submetrics local` reads `.csv` files and the
//! service reads `text/csv` import bodies: a header of field names;
//! `custom_variables.<key>` and `metadata.<key>` columns fill those objects;
//! a cell of a field that holds an object or a list (`custom_variables`,
//! `metadata`, `lines`, `transactions`) is that JSON, as `submetrics
//! exports` writes it; a cell is a number only in a field known to hold one
//! (amounts, counts, rates); digits alone in a date field are a day
//! (`yyyyMMdd`) or Unix seconds (see [`whole_number_date`]), passed on as
//! ISO 8601 text; everything else, ids and codes
//! included, stays text as written; empty cells are left out. Quoted fields
//! (RFC 4180) may hold commas, quotes (`""`) and newlines.

use crate::error::{Error, Result};
use crate::model::customer::CUSTOM_VARIABLES;
use serde_json::{Map, Value};

/// The records of a CSV text, one JSON object per row. A malformed row is an
/// error naming its line (`csv line 3: field `(row)`: ...`).
pub fn records(text: &str) -> Result<Vec<Value>> {
    records_by_line(text)
        .map_err(|(line, reason)| Error::invalid("csv", &format!("line {line}"), "(row)", reason))
}

/// A row's cells and the line it starts on.
type LineRow = (usize, Vec<String>);

/// RFC 4180 rows, each with the line it starts on (the text's first line is
/// 1): quoted fields may hold commas, quotes ("") and newlines; blank lines
/// are skipped but counted. Lines end in `\r\n`, `\n` or a lone `\r`.
fn csv_rows(text: &str) -> std::result::Result<Vec<LineRow>, (usize, String)> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut line = 1;
    let mut row_line = 1;
    let mut quote_line = 1;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => {
                let lone_cr = c == '\r' && chars.peek() != Some(&'\n');
                if c == '\n' || lone_cr {
                    line += 1;
                }
                field.push(c);
            }
            (false, '"') if field.is_empty() => {
                quoted = true;
                quote_line = line;
            }
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') if chars.peek() == Some(&'\n') => {}
            // A lone \r ends a line as \n does (classic Mac text, as
            // Excel's "CSV (Macintosh)" writes it).
            (false, '\n' | '\r') => {
                row.push(std::mem::take(&mut field));
                if row.iter().any(|f| !f.is_empty()) {
                    rows.push((row_line, std::mem::take(&mut row)));
                } else {
                    row.clear();
                }
                line += 1;
                row_line = line;
            }
            (false, c) => field.push(c),
        }
    }
    if quoted {
        return Err((
            quote_line,
            "a quoted field that opens on this line never ends".to_string(),
        ));
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push((row_line, row));
    }
    Ok(rows)
}

/// Fields whose values are numbers: amounts in cents, counts, FX rates.
pub const NUMERIC_FIELDS: &[&str] = &[
    "amount",
    "amount_in_cents",
    "tax_amount",
    "tax",
    "discount_amount",
    "discount",
    "quantity",
    "interval_count",
    "billing_freq_count",
    "rate",
];

/// Date fields: digits alone there are a day or Unix seconds (see
/// [`whole_number_date`]), written out as ISO 8601 text (records take dates
/// only as ISO 8601 text).
pub const DATE_FIELDS: &[&str] = &[
    "invoice_date",
    "date",
    "due_date",
    "payment_date",
    "paid_date",
    "period_start",
    "period_end",
    "service_period_start",
    "service_period_end",
    "created_date",
    "created",
    "trial_started",
    "paid_started",
    "trial_end_date",
    "cancel_date",
    "overdue_date",
];

/// Fields whose values are objects or lists, written in a CSV cell as JSON.
pub const JSON_FIELDS: &[&str] = &["custom_variables", "metadata", "lines", "transactions"];

/// The date a date field's cell of digits alone stands for, as ISO 8601
/// text: eight digits that name a day (`20240301`, as report parameters
/// write dates) are that day; nine or more are Unix seconds (every instant
/// since 1973); fewer (a year, `1`) name no date plainly and are refused.
/// `None` for a cell that is not digits alone.
pub fn whole_number_date(text: &str) -> Option<std::result::Result<String, String>> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    if digits.len() == 8
        && !text.starts_with('-')
        && let Ok(day) = chrono::NaiveDate::parse_from_str(text, "%Y%m%d")
    {
        return Some(Ok(day.format("%Y-%m-%d").to_string()));
    }
    let instant = text
        .parse::<i64>()
        .ok()
        .filter(|&seconds| is_unix_seconds(seconds))
        .and_then(|seconds| chrono::DateTime::from_timestamp(seconds, 0));
    Some(instant
        .map(|instant| instant.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .ok_or_else(|| {
            format!("`{text}` is not a date: write YYYY-MM-DD, yyyyMMdd or Unix seconds (nine digits or more)")
        }))
}

/// Whether a whole number in a date column is Unix seconds: nine digits or
/// more (see [`whole_number_date`]).
pub fn is_unix_seconds(number: i64) -> bool {
    number.unsigned_abs() >= 100_000_000
}

/// A cell typed by what its field means: numbers only where the field
/// holds one, text otherwise (`007`, zip codes, invoice numbers unchanged).
fn typed(field: &str, text: &str) -> std::result::Result<Value, String> {
    if JSON_FIELDS.contains(&field) {
        return serde_json::from_str(text)
            .map_err(|e| format!("field `{field}`: the cell is not JSON: {e}"));
    }
    let whole = || text.parse::<i64>().ok().map(Value::from);
    let number = if NUMERIC_FIELDS.contains(&field) {
        whole().or_else(|| {
            text.parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
        })
    } else if DATE_FIELDS.contains(&field) {
        match whole_number_date(text) {
            None => None,
            Some(Ok(date)) => Some(Value::String(date)),
            Some(Err(reason)) => return Err(format!("field `{field}`: {reason}")),
        }
    } else {
        None
    };
    Ok(number.unwrap_or_else(|| Value::String(text.to_string())))
}

/// Refuses a header that is one column holding another separator
/// (`id;name;currency`, as spreadsheets in many locales write CSV, or tabs):
/// every row would lack its fields; one that names a column twice, whose
/// two cells in a row would leave the field's value to chance; and JSON
/// text read as CSV (a header starting with `{` or `[`), whose records
/// would be read as a header of no known field.
pub fn check_header<S: AsRef<str>>(names: &[S]) -> std::result::Result<(), String> {
    if let Some(first) = names.first().map(|name| name.as_ref().trim_start())
        && (first.starts_with('{') || first.starts_with('['))
    {
        return Err(
            "the header is JSON text, not field names: send JSON as JSON (or JSONL), \
             or CSV with a header of field names"
                .to_string(),
        );
    }
    if let Some((first, second)) = crate::model::first_repeated(names) {
        return Err(format!(
            "column `{}` is in the header twice (columns {} and {})",
            names[first].as_ref(),
            first + 1,
            second + 1
        ));
    }
    let [only] = names else {
        return Ok(());
    };
    let only = only.as_ref();
    match [(';', "`;`"), ('\t', "tabs"), ('|', "`|`")]
        .into_iter()
        .find(|(separator, _)| only.contains(*separator))
    {
        Some((_, name)) => Err(format!(
            "the header is one column, {only:?}: separate fields with commas, not {name}"
        )),
        None => Ok(()),
    }
}

/// [`records`] with a malformed row's error as its line and the reason.
pub fn records_by_line(text: &str) -> std::result::Result<Vec<Value>, (usize, String)> {
    let rows = csv_rows(text)?;
    let Some(((header_line, header), body)) = rows.split_first() else {
        return Ok(Vec::new());
    };
    check_header(header).map_err(|reason| (*header_line, reason))?;
    let body = body.iter().map(|(line, row)| (*line, row.as_slice()));
    records_from_rows(header, body)
}

/// The records of rows already cut from a CSV text, each row with the line
/// it starts on, under the header's field names; a malformed row's error is
/// its line and the reason, as in [`records_by_line`].
pub fn records_from_rows<'r, S: AsRef<str> + 'r>(
    header: &[S],
    rows: impl IntoIterator<Item = (usize, &'r [S])>,
) -> std::result::Result<Vec<Value>, (usize, String)> {
    rows.into_iter()
        .map(|(line, row)| {
            if row.len() != header.len() {
                return Err((
                    line,
                    format!("{} fields where the header has {}", row.len(), header.len()),
                ));
            }
            let mut record = Map::new();
            for (name, cell) in header.iter().zip(row) {
                let (name, cell) = (name.as_ref(), cell.as_ref());
                if cell.is_empty() {
                    continue;
                }
                match name.split_once('.') {
                    Some((object, key)) if CUSTOM_VARIABLES.contains(&object) => {
                        let entry = record
                            .entry(object.to_string())
                            .or_insert_with(|| Value::Object(Map::new()));
                        if let Some(map) = entry.as_object_mut() {
                            map.insert(key.to_string(), Value::String(cell.to_string()));
                        }
                    }
                    _ => {
                        record.insert(name.to_string(), typed(name, cell).map_err(|e| (line, e))?);
                    }
                }
            }
            Ok(Value::Object(record))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csv_quotes_commas_and_nested_columns() {
        let text = "id,name,amount,custom_variables.industry\r\n\"c1\",\"Acme, Inc.\",3000,Retail\r\nc2,\"Say \"\"hi\"\"\",,\r\n";
        let records = records_by_line(text).unwrap();
        assert_eq!(records[0]["name"], "Acme, Inc.");
        assert_eq!(records[0]["amount"], 3000);
        assert_eq!(records[0]["custom_variables"]["industry"], "Retail");
        assert_eq!(records[1]["name"], "Say \"hi\"");
        assert!(records[1].get("amount").is_none());
    }

    /// A header of one column holding another separator is refused at its
    /// line; one column of a plain name is a header like any other.
    #[test]
    fn a_header_split_by_another_separator_is_refused() {
        assert_eq!(
            records("id;name\nc1;Acme\n").unwrap_err().to_string(),
            "csv line 1: field `(row)`: the header is one column, \"id;name\": separate \
             fields with commas, not `;`"
        );
        assert_eq!(
            records_by_line("id\tname\nc1\tAcme\n").unwrap_err(),
            (
                1,
                "the header is one column, \"id\\tname\": separate fields with commas, not tabs"
                    .to_string()
            )
        );
        assert_eq!(
            check_header(&["a|b"]).unwrap_err(),
            "the header is one column, \"a|b\": separate fields with commas, not `|`"
        );
        assert_eq!(records_by_line("id\nc1\n").unwrap(), [json!({"id": "c1"})]);
        assert_eq!(check_header(&["id", "a;b"]), Ok(()));
    }

    #[test]
    fn a_column_named_twice_in_the_header_is_refused() {
        // The first cell used to win in the CLI's reader, the last in the
        // service's.
        assert_eq!(
            records_by_line("id,amount,currency,amount\ni1,3000,USD,5000\n").unwrap_err(),
            (
                1,
                "column `amount` is in the header twice (columns 2 and 4)".to_string()
            )
        );
        assert_eq!(check_header(&["id", "amount", "amount_in_cents"]), Ok(()));
    }

    /// JSON sent or saved as CSV is refused at its header, not read as a
    /// header of unknown fields and no rows.
    #[test]
    fn json_text_as_a_header_is_refused() {
        let refused = "the header is JSON text, not field names: send JSON as JSON (or JSONL), \
                       or CSV with a header of field names";
        for text in ["{\"id\":\"c1\",\"name\":\"Acme\"}\n", " [{\"id\": \"c1\"}]"] {
            assert_eq!(
                records_by_line(text).unwrap_err(),
                (1, refused.to_string()),
                "{text}"
            );
        }
        assert_eq!(check_header(&["id", "{notes}"]), Ok(()));
    }

    /// Digits alone in a date column: a day in eight, Unix seconds in nine
    /// or more, refused in fewer (they used to be seconds after 1970).
    #[test]
    fn digits_in_a_date_column_are_a_day_or_unix_seconds() {
        let read = |cell: &str| records_by_line(&format!("id,invoice_date\ni1,{cell}\n"));
        assert_eq!(read("20240301").unwrap()[0]["invoice_date"], "2024-03-01");
        assert_eq!(
            read("1704067200").unwrap()[0]["invoice_date"],
            "2024-01-01T00:00:00Z"
        );
        for cell in ["2024", "1", "20241301"] {
            assert_eq!(
                read(cell).unwrap_err(),
                (
                    2,
                    format!(
                        "field `invoice_date`: `{cell}` is not a date: write YYYY-MM-DD, \
                         yyyyMMdd or Unix seconds (nine digits or more)"
                    )
                ),
                "{cell}"
            );
        }
    }

    #[test]
    fn cells_are_typed_by_the_field_they_are_in() {
        let text = "id,customer_id,invoice_number,amount,tax_amount,quantity,invoice_date,zip,flag,rate\n007,0042,000123,3000,-150,2,1704067200,01234,true,0.9\n";
        let records = records_by_line(text).unwrap();
        assert_eq!(
            records[0],
            serde_json::json!({
                "id": "007",
                "customer_id": "0042",
                "invoice_number": "000123",
                "amount": 3000,
                "tax_amount": -150,
                "quantity": 2,
                "invoice_date": "2024-01-01T00:00:00Z",
                "zip": "01234",
                "flag": "true",
                "rate": 0.9
            })
        );
    }

    #[test]
    fn object_and_list_fields_are_json_cells_as_exports_write_them() {
        let text = "id,custom_variables,lines\r\nA,\"{\"\"industry\"\":\"\"Retail\"\"}\",\"[{\"\"amount\"\":100}]\"\r\nB,{},[]\r\n";
        let records = records_by_line(text).unwrap();
        assert_eq!(
            records,
            vec![
                serde_json::json!({"id": "A", "custom_variables": {"industry": "Retail"}, "lines": [{"amount": 100}]}),
                serde_json::json!({"id": "B", "custom_variables": {}, "lines": []}),
            ]
        );
        assert_eq!(
            records_by_line("id,lines\nA,seats\n").unwrap_err(),
            (
                2,
                "field `lines`: the cell is not JSON: expected value at line 1 column 1"
                    .to_string()
            )
        );
    }

    #[test]
    fn a_short_row_names_its_line() {
        assert_eq!(
            records_by_line("id,name\nc1\n").unwrap_err(),
            (2, "1 fields where the header has 2".to_string())
        );
    }

    /// Lines are counted as the text counts them: blank lines and the line
    /// breaks inside quoted cells move the rows after them down.
    #[test]
    fn errors_name_the_line_a_row_starts_on() {
        let text = "\nid,name,lines\n\n\nc2,\"two\nlines\",[]\r\nc3,x\n";
        assert_eq!(
            records_by_line(text).unwrap_err(),
            (7, "2 fields where the header has 3".to_string())
        );
        // The same lines ending in a lone \r (classic Mac text).
        let mac = text.replace("\r\n", "\n").replace('\n', "\r");
        assert_eq!(
            records_by_line(&mac).unwrap_err(),
            (7, "2 fields where the header has 3".to_string())
        );
        let text = "id,lines\nA,\"[\n]\"\n\nB,\"[\n\"\n";
        assert_eq!(
            records_by_line(text).unwrap_err(),
            (
                5,
                "field `lines`: the cell is not JSON: EOF while parsing a list at line 2 column 0"
                    .to_string()
            )
        );
        assert_eq!(
            records_by_line("id\tname\n").unwrap_err().0,
            1,
            "the header's own line"
        );
        assert_eq!(
            records_by_line("\n\nid;name\n").unwrap_err().0,
            3,
            "the header after blank lines"
        );
    }

    /// An unterminated quote swallows the rest of the text: the error names
    /// the line it opens on, not the last one.
    #[test]
    fn an_unterminated_quote_names_the_line_it_opens_on() {
        assert_eq!(
            records_by_line("id,name\nc1,\"open\nc2,B\nc3,C\n").unwrap_err(),
            (
                2,
                "a quoted field that opens on this line never ends".to_string()
            )
        );
        assert_eq!(
            records_by_line("id,name\nc1,\"closed\non two lines\"\nc2,\"open").unwrap_err(),
            (
                4,
                "a quoted field that opens on this line never ends".to_string()
            )
        );
    }

    #[test]
    fn rows_cut_elsewhere_keep_their_lines() {
        let header = ["id", "amount"];
        let rows: [(usize, &[&str]); 2] = [(4, &["i1", "3000"]), (9, &["i2"])];
        assert_eq!(
            records_from_rows(&header, rows[..1].iter().copied()).unwrap(),
            [json!({"id": "i1", "amount": 3000})]
        );
        assert_eq!(
            records_from_rows(&header, rows).unwrap_err(),
            (9, "1 fields where the header has 2".to_string())
        );
    }
}
