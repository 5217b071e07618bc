"""Monthly MRR movements computed with Polars' lazy API: the same rules as
movements.sql, step for step (each step below names the query's), so that
Polars does what DuckDB and submetrics do in the files comparison, and
gives the same rows: (month, currency, kind, sum of mrr_change, count).

`monthly_movements(invoices, plans, as_of, grace)` takes lazy frames of
the invoices (dates as `Date`) and the plans, as_of a `datetime.date` and
the grace in days, and answers the rows ordered as the query orders them."""

import datetime

import polars as pl

DAY = "day"
CUSTOMER = "customer_id"


def rdiv(p: pl.Expr, q: pl.Expr) -> pl.Expr:
    """p / q rounded to the nearest integer, halves to even (the query's
    `rdiv` macro); p >= 0 and q > 0 in every use here."""
    quotient, remainder = p // q, p % q
    return quotient + (
        pl.when(2 * remainder > q).then(1).when(2 * remainder == q).then(quotient % 2).otherwise(0)
    )


def days_between(later: str, earlier: str) -> pl.Expr:
    return (pl.col(later) - pl.col(earlier)).dt.total_days()


def event(frame: pl.LazyFrame, day: str, priority: int, **values: pl.Expr) -> pl.LazyFrame:
    """One kind of event: its day, its priority within the day, its
    source invoice, and the values it carries (the others null)."""
    columns = ("set_to", "invoice_amount", "refunded", "refund_den")
    return frame.select(
        CUSTOMER,
        pl.col(day).alias(DAY),
        pl.lit(priority, dtype=pl.Int32).alias("priority"),
        pl.col("id").alias("source"),
        *(values.get(name, pl.lit(None)).cast(pl.Int64).alias(name) for name in columns),
    )


def monthly_movements(invoices: pl.LazyFrame, plans: pl.LazyFrame, as_of: datetime.date, grace: int) -> list[tuple]:
    as_of_day = pl.lit(as_of, dtype=pl.Date)
    counted = invoices.filter(pl.col("status").fill_null("paid") != "void")
    plan_units = plans.select(
        pl.col("id").alias("plan_id"),
        pl.col("interval").alias("unit"),
        pl.col("interval_count").fill_null(1).cast(pl.Int64).alias("n"),
    )
    subscription_invoices = (
        counted.filter(pl.col("type") == "subscription")
        .join(plan_units, on="plan_id", how="inner")
        .select(
            "id", CUSTOMER, "currency", "amount", "period_end", "unit", "n",
            pl.coalesce("period_start", "invoice_date").alias("start_day"),
        )
    )
    start, unit, n = pl.col("start_day"), pl.col("unit"), pl.col("n")
    with_nominal = subscription_invoices.with_columns(
        pl.when(unit == "month").then(start.dt.offset_by(pl.format("{}mo", n)))
        .when(unit == "year").then(start.dt.offset_by(pl.format("{}mo", 12 * n)))
        .when(unit == "week").then(start + pl.duration(days=7 * n))
        .otherwise(start + pl.duration(days=n))
        .alias("nominal_end"),
        pl.when(unit == "month").then(n).otherwise(12 * n).alias("months_num"),
        pl.when(unit == "week").then(52).when(unit == "day").then(365).otherwise(1).cast(pl.Int64).alias("months_den"),
    )
    priced = with_nominal.with_columns(
        pl.when(pl.col("period_end") > start).then(pl.col("period_end")).otherwise(pl.col("nominal_end")).alias("end_day")
    )
    nominal_days, covered_days = days_between("nominal_end", "start_day"), days_between("end_day", "start_day")
    amount, den, num = pl.col("amount").cast(pl.Int64), pl.col("months_den"), pl.col("months_num")
    monthly = priced.sort(CUSTOMER, "start_day", "id").with_columns(
        pl.when(nominal_days - covered_days > 1)
        .then(rdiv(amount * nominal_days * den, covered_days * num))
        .otherwise(rdiv(amount * den, num))
        .alias("mrr"),
        pl.col("start_day").shift(-1).over(CUSTOMER).alias("next_start"),
    )

    grace_end = pl.col("end_day") + pl.duration(days=grace)
    lapses = monthly.filter((pl.col("next_start").is_null() | (pl.col("next_start") > grace_end)) & (as_of_day > grace_end))
    cancellations = counted.filter((pl.col("type") == "cancellation") & (pl.col("invoice_date") <= as_of_day))
    refunded_invoices = subscription_invoices.select(
        pl.col("id").alias("refunded_invoice_id"), CUSTOMER, pl.col("amount").alias("refunded_amount"), pl.lit(True).alias("found")
    )
    refunds = (
        counted.filter((pl.col("type") == "refund") & (pl.col("invoice_date") <= as_of_day))
        .join(refunded_invoices, on=["refunded_invoice_id", CUSTOMER], how="left")
        # A refund naming an invoice that is not a counted subscription invoice never moves MRR.
        .filter(pl.col("refunded_invoice_id").is_null() | pl.col("found").is_not_null())
    )
    zero = pl.lit(0, dtype=pl.Int64)
    events = pl.concat([
        event(monthly.filter(start <= as_of_day), "start_day", 1, set_to=pl.col("mrr"), invoice_amount=pl.col("amount")),
        event(lapses, "end_day", 3, set_to=zero),
        event(cancellations, "invoice_date", 0, set_to=zero),
        event(refunds, "invoice_date", 2, refunded=-pl.col("amount"), refund_den=pl.col("refunded_amount")),
    ])
    ordered = events.sort(CUSTOMER, DAY, "priority", "source").with_columns(
        pl.col("set_to").forward_fill().over(CUSTOMER).alias("value_before"),
        pl.col("invoice_amount").forward_fill().over(CUSTOMER).alias("latest_amount"),
    )
    base = pl.coalesce("refund_den", "latest_amount", zero)
    before = pl.col("value_before").fill_null(0)
    valued = ordered.select(
        CUSTOMER, DAY, "priority", "source",
        pl.when(pl.col("set_to").is_not_null()).then(pl.col("set_to"))
        .when((base > 0) & (before > 0))
        .then(pl.max_horizontal(zero, before - rdiv(before * pl.col("refunded"), base)))
        .otherwise(before)
        .alias("value"),
    )
    # The last event of each day (highest priority, then source) holds.
    end_of_day = valued.unique(subset=[CUSTOMER, DAY], keep="last", maintain_order=True).select(CUSTOMER, DAY, "value")
    daily = end_of_day.with_columns(
        pl.col("value").alias("b"),
        pl.col("value").shift(1).over(CUSTOMER).fill_null(0).alias("a"),
        (pl.col("value").cum_max().shift(1).over(CUSTOMER).fill_null(0) > 0).alias("paid_before"),
    )
    currency = subscription_invoices.group_by(CUSTOMER).agg(pl.col("currency").first())
    a, b = pl.col("a"), pl.col("b")
    kind = (
        pl.when((a == 0) & (b > 0)).then(pl.when(pl.col("paid_before")).then(pl.lit("reactivation")).otherwise(pl.lit("new")))
        .when((a > 0) & (b == 0)).then(pl.lit("churn"))
        .when(b > a).then(pl.lit("expansion"))
        .otherwise(pl.lit("contraction"))
    )
    movements = (
        daily.filter(b != a)
        .join(currency, on=CUSTOMER, how="inner")
        .group_by(pl.col(DAY).dt.strftime("%Y-%m").alias("month"), "currency", kind.alias("kind"))
        .agg((b - a).sum().cast(pl.Int64).alias("mrr_change"), pl.len().cast(pl.Int64).alias("movements"))
        .sort("month", "currency", "kind")
    )
    return movements.collect().rows()
