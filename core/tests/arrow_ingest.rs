//! The Arrow batch writes read typed columns (dates, timestamps, floats,
//! dictionaries, lists of structs) as their JSON counterparts, with the same
//! per-record errors; `arrow_scenarios` runs every scenario file through
//! them.

mod common;

use arrow_array::builder::{Int32Builder, StringDictionaryBuilder};
use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, BinaryArray, Date32Array, Float64Array, Int64Array, ListArray, RecordBatch,
    StringArray, StructArray, TimestampMillisecondArray,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::Field;
use common::batch_of;
use serde_json::json;
use std::sync::Arc;
use submetrics::{Ledger, RecordKind, WriteReport};

fn ledger() -> Ledger {
    let mut ledger = Ledger::default();
    ledger.upsert_plans(&[
        json!({"id": "m", "name": "Monthly", "billing_freq": "month", "currency": "USD"}),
    ]);
    ledger.upsert_customers(&[json!({"id": "a", "name": "A"})]);
    ledger
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(columns).unwrap()
}

fn errors(report: &WriteReport) -> Vec<(String, Option<String>)> {
    report
        .results
        .iter()
        .map(|r| (r.id.to_string(), r.import_error.clone()))
        .collect()
}

#[test]
fn typed_columns_read_as_their_json_counterparts() {
    let dates = Date32Array::from(vec![19723, 19724]); // 2024-01-01, 2024-01-02
    let issued = TimestampMillisecondArray::from(vec![1_704_103_200_000, 1_704_189_600_000])
        .with_timezone("UTC");
    let mut types = StringDictionaryBuilder::<Int32Type>::new();
    types.append_value("subscription");
    types.append_value("one-time");
    let lines = {
        let amount: ArrayRef = Arc::new(Int64Array::from(vec![3000, 100]));
        let description: ArrayRef = Arc::new(StringArray::from(vec!["seat", "setup"]));
        let items =
            StructArray::try_from(vec![("description", description), ("amount", amount)]).unwrap();
        let field = Arc::new(Field::new("item", items.data_type().clone(), true));
        ListArray::new(
            field,
            OffsetBuffer::from_lengths([1, 1]),
            Arc::new(items),
            None,
        )
    };
    let mut quantity = Int32Builder::new();
    quantity.append_value(2);
    quantity.append_null();
    let records = batch(vec![
        ("id", Arc::new(Int64Array::from(vec![1, 2]))),
        ("customer_id", Arc::new(StringArray::from(vec!["a", "a"]))),
        ("type", Arc::new(types.finish())),
        (
            "plan_id",
            Arc::new(StringArray::from(vec![Some("m"), None])),
        ),
        ("invoice_date", Arc::new(issued)),
        ("period_start", Arc::new(dates)),
        ("amount", Arc::new(Float64Array::from(vec![3000.0, 100.0]))),
        ("currency", Arc::new(StringArray::from(vec!["usd", "USD"]))),
        ("quantity", Arc::new(quantity.finish())),
        ("lines", Arc::new(lines)),
    ]);
    let json = [
        json!({"id": 1, "customer_id": "a", "type": "subscription", "plan_id": "m",
               "invoice_date": "2024-01-01T10:00:00.000Z", "period_start": "2024-01-01",
               "amount": 3000, "currency": "usd", "quantity": 2,
               "lines": [{"description": "seat", "amount": 3000}]}),
        json!({"id": 2, "customer_id": "a", "type": "one-time",
               "invoice_date": "2024-01-02T10:00:00Z", "period_start": "2024-01-02",
               "amount": 100, "currency": "USD", "lines": [{"description": "setup", "amount": 100}]}),
    ];
    let mut from_batch = ledger();
    let mut from_json = ledger();
    let report = from_batch
        .upsert_arrow(RecordKind::Invoices, &records)
        .unwrap();
    assert_eq!(report, from_json.upsert_invoices(&json));
    assert_eq!(report.accepted(), 2);
    for id in ["1", "2"] {
        assert_eq!(
            from_batch.invoice(id).unwrap(),
            from_json.invoice(id).unwrap()
        );
    }
    let stored = serde_json::to_value(from_batch.invoice("1").unwrap()).unwrap();
    assert_eq!(stored["invoice_date"], "2024-01-01T10:00:00Z");
    assert_eq!(stored["period_start"], "2024-01-01");
    assert_eq!(stored["quantity"], 2);
    assert_eq!(stored["lines"][0]["description"], "seat");
}

#[test]
fn rejected_rows_have_the_errors_of_json_records() {
    let invalid = [
        json!({"id": "i1", "customer_id": "a", "type": "subscription", "plan_id": "m",
               "invoice_date": "2024-01-01", "amount": 1.5, "currency": "USD"}),
        json!({"id": "i2", "customer_id": "a", "type": "gift", "plan_id": "m",
               "invoice_date": "2024-01-01", "amount": 3000.0, "currency": "USD"}),
        json!({"id": "i3", "customer_id": "a", "type": "subscription", "plan_id": null,
               "invoice_date": "soon", "amount": 3000.0, "currency": "USD"}),
        json!({"id": "i4", "customer_id": "nobody", "type": "subscription", "plan_id": "m",
               "invoice_date": "2024-01-01", "amount": 3000.0, "currency": "USD"}),
        json!({"id": null, "customer_id": "a", "type": "refund", "plan_id": null,
               "invoice_date": "2024-01-01", "amount": -5.0, "currency": "dollars"}),
        json!({"id": "i6", "customer_id": "a", "type": "refund", "plan_id": null,
               "invoice_date": "2024-01-01", "amount": 5.0, "currency": "USD"}),
        json!({"id": "i7", "customer_id": "a", "type": "subscription", "plan_id": "m",
               "invoice_date": "2024-01-01", "amount": 3000.0, "currency": "USD"}),
    ];
    let records = batch_of(&invalid).unwrap();
    assert_eq!(
        records
            .schema()
            .field_with_name("amount")
            .unwrap()
            .data_type(),
        &arrow_schema::DataType::Float64
    );
    let mut from_batch = ledger();
    let mut from_json = ledger();
    let report = from_batch
        .upsert_arrow(RecordKind::Invoices, &records)
        .unwrap();
    assert_eq!(report, from_json.upsert_invoices(&invalid));
    let none = |id: &str| (id.to_string(), None);
    let error = |id: &str, text: &str| (id.to_string(), Some(text.to_string()));
    assert_eq!(
        errors(&report),
        [
            error(
                "i1",
                "invoice i1: field `amount`: must be an integer, got 1.5"
            ),
            error(
                "i2",
                "invoice i2: field `type`: `gift` is not one of subscription, one-time, refund, cancellation"
            ),
            error(
                "i3",
                "invoice i3: field `invoice_date`: must be an ISO 8601 date or timestamp string in the years 1900 to 2200, got \"soon\""
            ),
            error(
                "i4",
                "invoice i4: field `customer_id`: customer `nobody` does not exist; send the customer first"
            ),
            error("", "invoice ?: field `id`: is required"),
            error(
                "i6",
                "invoice i6: field `amount`: must be 0 or less for a refund, got 5"
            ),
            none("i7"),
        ]
    );

    // A column missing altogether is a field missing from every record.
    let without_currency = batch(vec![
        ("id", Arc::new(StringArray::from(vec!["c1"]))),
        ("customer_id", Arc::new(StringArray::from(vec!["a"]))),
        ("type", Arc::new(StringArray::from(vec!["one-time"]))),
        (
            "invoice_date",
            Arc::new(StringArray::from(vec!["2024-01-01"])),
        ),
        ("amount", Arc::new(Int64Array::from(vec![100]))),
    ]);
    let report = from_batch
        .upsert_arrow(RecordKind::Invoices, &without_currency)
        .unwrap();
    assert_eq!(
        errors(&report),
        [error("c1", "invoice c1: field `currency`: is required")]
    );

    // Customers, plans and plan groups too.
    let customers = batch(vec![
        (
            "id",
            Arc::new(StringArray::from(vec![Some("b"), Some("c")])),
        ),
        ("name", Arc::new(StringArray::from(vec![Some("B"), None]))),
    ]);
    let report = from_batch
        .upsert_arrow(RecordKind::Customers, &customers)
        .unwrap();
    assert_eq!(
        errors(&report),
        [
            none("b"),
            error("c", "customer c: field `name`: is required")
        ]
    );
    let plans = batch(vec![
        ("id", Arc::new(StringArray::from(vec!["w", "y"]))),
        (
            "name",
            Arc::new(StringArray::from(vec!["Weekly", "Yearly"])),
        ),
        (
            "interval",
            Arc::new(StringArray::from(vec!["week", "decade"])),
        ),
        ("currency", Arc::new(StringArray::from(vec!["USD", "USD"]))),
    ]);
    let report = from_batch.upsert_arrow(RecordKind::Plans, &plans).unwrap();
    assert_eq!(
        errors(&report),
        [
            none("w"),
            error(
                "y",
                "plan y: field `interval`: `decade` is not one of day, week, month, year"
            )
        ]
    );
    let plan_ids = {
        let ids: ArrayRef = Arc::new(StringArray::from(vec!["m", "w", "gone"]));
        let field = Arc::new(Field::new("item", arrow_schema::DataType::Utf8, true));
        ListArray::new(field, OffsetBuffer::from_lengths([2, 1]), ids, None)
    };
    let groups = batch(vec![
        ("name", Arc::new(StringArray::from(vec!["Core", "Old"]))),
        ("plans", Arc::new(plan_ids)),
    ]);
    let report = from_batch
        .upsert_arrow(RecordKind::PlanGroups, &groups)
        .unwrap();
    assert_eq!(
        errors(&report),
        [
            none("pg_1"),
            error(
                "",
                "plan_group ?: field `plans`: plan `gone` does not exist"
            )
        ]
    );
    assert_eq!(from_batch.plan_group("pg_1").unwrap().plans.len(), 2);
}

#[test]
fn a_column_of_an_unreadable_type_fails_the_batch() {
    let records = batch(vec![
        ("id", Arc::new(StringArray::from(vec!["i1"]))),
        ("amount", Arc::new(BinaryArray::from(vec![&b"12"[..]]))),
    ]);
    let mut ledger = ledger();
    let error = ledger
        .upsert_arrow(RecordKind::Invoices, &records)
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "invoice ?: field `amount`: column type Binary cannot be read (strings, numbers, booleans, \
         dates, timestamps, lists, structs and string-keyed maps can)"
    );
    assert_eq!(ledger.invoices().len(), 0);
}

#[test]
fn fx_rates_load_from_a_batch_whole_or_not_at_all() {
    let rates = batch(vec![
        ("date", Arc::new(Date32Array::from(vec![19723, 19723]))),
        ("currency", Arc::new(StringArray::from(vec!["EUR", "GBP"]))),
        ("rate", Arc::new(Float64Array::from(vec![0.9, 0.0]))),
    ]);
    let mut ledger = Ledger::default();
    let error = ledger
        .load_fx_rates_arrow(std::slice::from_ref(&rates))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "fx_rate row 2: field `rate`: must be a positive number"
    );
    // Two batches are one table: the bad row is row 3 of it, and the good
    // batch before it is not loaded either.
    let error = ledger
        .load_fx_rates_arrow(&[rates.slice(0, 1), rates.clone()])
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "fx_rate row 3: field `rate`: must be a positive number"
    );
    assert!(ledger.fx().is_empty());
    let rates = rates.slice(0, 1);
    assert_eq!(ledger.load_fx_rates_arrow(&[rates]).unwrap(), 1);
}

#[test]
fn customers_of_many_batches_stream_in_row_order() {
    let customers = |ids: Vec<&str>, names: Vec<Option<&str>>| {
        batch(vec![
            ("id", Arc::new(StringArray::from(ids))),
            ("name", Arc::new(StringArray::from(names))),
        ])
    };
    let batches = [
        customers(vec!["b", "c"], vec![Some("B"), Some("C")]),
        customers(vec!["b", "d"], vec![Some("B2"), None]),
    ];
    let mut ledger = ledger();
    let report = ledger
        .upsert_arrow_batches(RecordKind::Customers, &batches)
        .unwrap();
    let rejected = Some("customer d: field `name`: is required".to_string());
    assert_eq!(
        errors(&report),
        [
            ("b".to_string(), None),
            ("c".to_string(), None),
            ("b".to_string(), None),
            ("d".to_string(), rejected.clone())
        ]
    );
    assert_eq!(&*ledger.customer("b").unwrap().name, "B2");
    assert!(ledger.customer("d").is_none());

    // The same batches read apart from the ledger and stored as a stream.
    let mut streamed = self::ledger();
    let mut chunks = batches.iter();
    let mut reports = Vec::new();
    streamed
        .upsert_customer_stream(
            || chunks.next().map(Ledger::read_customer_batch).transpose(),
            |report| reports.push(errors(&report)),
        )
        .unwrap();
    assert_eq!(
        reports,
        [
            vec![("b".to_string(), None), ("c".to_string(), None)],
            vec![("b".to_string(), None), ("d".to_string(), rejected)]
        ]
    );
    assert_eq!(&*streamed.customer("b").unwrap().name, "B2");
}

/// Small batches are stored together, as one chunk with one report (see
/// the store's unit tests for where chunks end).
#[test]
fn invoice_results_come_a_chunk_at_a_time_and_as_a_table_cut_like_the_input() {
    let invoice = |id: &str, customer: &str| {
        json!({"id": id, "customer_id": customer, "type": "one-time",
               "invoice_date": "2024-01-01", "amount": 500, "currency": "USD"})
    };
    let batches = [
        batch_of(&[invoice("i1", "a"), invoice("i2", "nobody")]).unwrap(),
        batch_of(&[invoice("i3", "a"), invoice("i1", "a")]).unwrap(),
    ];
    let mut chunked = ledger();
    let mut chunks = Vec::new();
    chunked
        .upsert_arrow_chunks(RecordKind::Invoices, &batches, |chunk| {
            chunks.push(errors(&chunk))
        })
        .unwrap();
    let unknown = Some(
        "invoice i2: field `customer_id`: customer `nobody` does not exist; send the customer first"
            .to_string(),
    );
    assert_eq!(
        chunks,
        [vec![
            ("i1".to_string(), None),
            ("i2".to_string(), unknown),
            ("i3".to_string(), None),
            ("i1".to_string(), None),
        ]]
    );

    let mut tabled = ledger();
    let table = tabled
        .upsert_arrow_table(RecordKind::Invoices, &batches)
        .unwrap();
    let gathered = ledger()
        .upsert_arrow_batches(RecordKind::Invoices, &batches)
        .unwrap();
    // A results batch per input batch, naming the records with the input's
    // own `id` column (its text buffer shared, not copied).
    let whole = gathered.to_batch();
    assert_eq!(table, [whole.slice(0, 2), whole.slice(2, 2)]);
    for (results, input) in table.iter().zip(&batches) {
        let text = |column: &ArrayRef| column.to_data().buffers()[1].as_ptr();
        assert_eq!(
            text(results.column(0)),
            text(input.column_by_name("id").unwrap())
        );
    }
    assert_eq!(tabled.invoices().len(), 2);
}

/// A float cell of infinity is refused naming it, where a NaN reads as a
/// missing value (pandas writes NaN for one).
#[test]
fn an_infinite_float_is_refused_by_name_and_a_nan_is_missing() {
    let ids = Arc::new(StringArray::from(vec!["i1", "i2", "i3"]));
    let invoices = batch(vec![
        ("id", ids),
        ("customer_id", Arc::new(StringArray::from(vec!["a"; 3]))),
        ("type", Arc::new(StringArray::from(vec!["subscription"; 3]))),
        ("plan_id", Arc::new(StringArray::from(vec!["m"; 3]))),
        (
            "invoice_date",
            Arc::new(StringArray::from(vec!["2024-01-01"; 3])),
        ),
        (
            "amount",
            Arc::new(Float64Array::from(vec![
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NAN,
            ])),
        ),
        ("currency", Arc::new(StringArray::from(vec!["USD"; 3]))),
    ]);
    let report = ledger()
        .upsert_arrow(RecordKind::Invoices, &invoices)
        .unwrap();
    let error = |id: &str, text: &str| (id.to_string(), Some(text.to_string()));
    assert_eq!(
        errors(&report),
        [
            error(
                "i1",
                "invoice i1: field `amount`: must be an integer, got Infinity"
            ),
            error(
                "i2",
                "invoice i2: field `amount`: must be an integer, got -Infinity"
            ),
            error("i3", "invoice i3: field `amount`: is required"),
        ]
    );
    let score: ArrayRef = Arc::new(Float64Array::from(vec![f64::INFINITY]));
    let variables = StructArray::try_from(vec![("score", score)]).unwrap();
    let customers = batch(vec![
        ("id", Arc::new(StringArray::from(vec!["c9"]))),
        ("name", Arc::new(StringArray::from(vec!["Nine"]))),
        ("custom_variables", Arc::new(variables)),
    ]);
    let report = ledger()
        .upsert_arrow(RecordKind::Customers, &customers)
        .unwrap();
    assert_eq!(
        errors(&report),
        [error(
            "c9",
            "customer c9: field `custom_variables.score`: must be a finite number, got Infinity"
        )]
    );
}

#[test]
fn flattened_custom_variable_columns_are_one_object_as_in_csv() {
    // pandas.read_csv of a file with `custom_variables.<key>` columns.
    let mut ledger = ledger();
    let customers = batch(vec![
        ("id", Arc::new(StringArray::from(vec!["b", "c"]))),
        ("name", Arc::new(StringArray::from(vec!["B", "C"]))),
        (
            "custom_variables.industry",
            Arc::new(StringArray::from(vec![Some("Retail"), None])),
        ),
        (
            "custom_variables.seats",
            Arc::new(Int64Array::from(vec![Some(12), Some(3)])),
        ),
    ]);
    let report = ledger
        .upsert_arrow(RecordKind::Customers, &customers)
        .unwrap();
    assert_eq!(report.accepted(), 2);
    let variables = |ledger: &Ledger, id: &str| -> Vec<(String, String)> {
        ledger
            .customer(id)
            .unwrap()
            .custom_variables
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    assert_eq!(
        variables(&ledger, "b"),
        [pair("industry", "Retail"), pair("seats", "12")]
    );
    // A null cell is a variable not given, as an empty CSV cell is.
    assert_eq!(variables(&ledger, "c"), [pair("seats", "3")]);

    // The object given both ways in one row is refused for that row; a
    // row with its object alone, beside the flattened columns, is read.
    let both = batch(vec![
        ("id", Arc::new(StringArray::from(vec!["d", "f"]))),
        ("name", Arc::new(StringArray::from(vec!["D", "F"]))),
        (
            "custom_variables",
            Arc::new(StringArray::from(vec![Some("{}"), None])),
        ),
        (
            "custom_variables.industry",
            Arc::new(StringArray::from(vec![Some("Retail"), Some("Media")])),
        ),
    ]);
    let report = ledger.upsert_arrow(RecordKind::Customers, &both).unwrap();
    assert_eq!(
        errors(&report),
        [
            (
                "d".to_string(),
                Some(
                    "customer d: field `custom_variables`: `custom_variables.industry` gives a \
                     variable too; give the variables one way"
                        .to_string()
                )
            ),
            ("f".to_string(), None)
        ]
    );
    assert_eq!(variables(&ledger, "f"), [pair("industry", "Media")]);
    // A key without a name is refused per record, as in CSV.
    let unnamed = batch(vec![
        ("id", Arc::new(StringArray::from(vec!["e"]))),
        ("name", Arc::new(StringArray::from(vec!["E"]))),
        ("metadata.", Arc::new(StringArray::from(vec!["x"]))),
    ]);
    let report = ledger
        .upsert_arrow(RecordKind::Customers, &unnamed)
        .unwrap();
    assert_eq!(
        errors(&report),
        [(
            "e".to_string(),
            Some(
                "customer e: field `metadata`: holds a variable without a name; name each one"
                    .to_string()
            )
        )]
    );
}
