-- Monthly MRR movements computed in SQL, the peer of submetrics' engine in
-- the benchmark. It implements the SEMANTICS rules the generated data
-- exercises: implicit subscriptions, monthly normalization with proration,
-- continuous renewal within the grace period, lapses at coverage end once
-- as_of is past the grace, cancellations, proportional refunds, void invoices,
-- and the daily classification into new / expansion / contraction / churn /
-- reactivation. Parameters: {as_of} (a DATE literal), {grace} (days).

CREATE OR REPLACE MACRO rdiv(p, q) AS
    (p // q) + CASE WHEN 2 * (p % q) > q THEN 1 WHEN 2 * (p % q) = q THEN (p // q) % 2 ELSE 0 END;

WITH counted AS (
    SELECT * FROM invoices WHERE coalesce(status, 'paid') <> 'void'
), subscription_invoices AS (
    SELECT i.id, i.customer_id, i.currency, i.amount, i.period_end,
           coalesce(i.period_start, i.invoice_date) AS start_day,
           p.interval AS unit, coalesce(p.interval_count, 1) AS n
    FROM counted i JOIN plans p ON p.id = i.plan_id
    WHERE i.type = 'subscription'
), with_nominal AS (
    SELECT *,
        CAST(CASE unit WHEN 'month' THEN start_day + to_months(n) WHEN 'year' THEN start_day + to_months(12 * n)
                       WHEN 'week' THEN start_day + to_days(7 * n) ELSE start_day + to_days(n) END AS DATE) AS nominal_end,
        CASE unit WHEN 'month' THEN n WHEN 'year' THEN 12 * n ELSE 12 * n END AS months_num,
        CASE unit WHEN 'week' THEN 52 WHEN 'day' THEN 365 ELSE 1 END AS months_den
    FROM subscription_invoices
), priced AS (
    SELECT *,
        CASE WHEN period_end > start_day THEN period_end ELSE nominal_end END AS end_day
    FROM with_nominal
), monthly AS (
    SELECT *,
        CASE WHEN (nominal_end - start_day) - (end_day - start_day) > 1
             THEN rdiv(CAST(amount AS BIGINT) * (nominal_end - start_day) * months_den, (end_day - start_day) * months_num)
             ELSE rdiv(CAST(amount AS BIGINT) * months_den, months_num) END AS mrr,
        lead(start_day) OVER (PARTITION BY customer_id ORDER BY start_day, id) AS next_start
    FROM priced
), events AS (
    SELECT customer_id, start_day AS day, 1 AS priority, id AS source, mrr AS set_to, amount AS invoice_amount,
           NULL::BIGINT AS refunded, NULL::BIGINT AS refund_den
    FROM monthly WHERE start_day <= {as_of}
    UNION ALL
    SELECT customer_id, end_day, 3, id, 0, NULL, NULL, NULL
    FROM monthly
    WHERE (next_start IS NULL OR next_start > end_day + {grace}) AND {as_of} > end_day + {grace}
    UNION ALL
    SELECT customer_id, invoice_date, 0, id, 0, NULL, NULL, NULL
    FROM counted WHERE type = 'cancellation' AND invoice_date <= {as_of}
    UNION ALL
    SELECT r.customer_id, r.invoice_date, 2, r.id, NULL, NULL, -r.amount, s.amount
    FROM counted r LEFT JOIN subscription_invoices s
        ON s.id = r.refunded_invoice_id AND s.customer_id = r.customer_id
    -- A refund naming an invoice that is not a counted subscription invoice never moves MRR.
    WHERE r.type = 'refund' AND r.invoice_date <= {as_of}
        AND (r.refunded_invoice_id IS NULL OR s.id IS NOT NULL)
), ordered AS (
    SELECT *,
        last_value(set_to IGNORE NULLS) OVER w AS value_before,
        last_value(invoice_amount IGNORE NULLS) OVER w AS latest_amount
    FROM events
    WINDOW w AS (PARTITION BY customer_id ORDER BY day, priority, source ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
), valued AS (
    SELECT customer_id, day, priority, source,
        CASE WHEN set_to IS NOT NULL THEN set_to
             WHEN coalesce(refund_den, latest_amount, 0) > 0 AND coalesce(value_before, 0) > 0
                  THEN greatest(0, value_before - rdiv(value_before * refunded, coalesce(refund_den, latest_amount)))
             ELSE coalesce(value_before, 0) END AS value
    FROM ordered
), end_of_day AS (
    SELECT customer_id, day, value FROM (
        SELECT *, row_number() OVER (PARTITION BY customer_id, day ORDER BY priority DESC, source DESC) AS last_first
        FROM valued)
    WHERE last_first = 1
), daily AS (
    SELECT customer_id, day, value AS b,
        coalesce(lag(value) OVER (PARTITION BY customer_id ORDER BY day), 0) AS a,
        coalesce(max(value) OVER (PARTITION BY customer_id ORDER BY day ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) > 0 AS paid_before
    FROM end_of_day
), currency AS (
    SELECT customer_id, any_value(currency) AS currency FROM subscription_invoices GROUP BY customer_id
)
SELECT strftime(date_trunc('month', day), '%Y-%m') AS month, c.currency,
    CASE WHEN a = 0 AND b > 0 THEN (CASE WHEN paid_before THEN 'reactivation' ELSE 'new' END)
         WHEN a > 0 AND b = 0 THEN 'churn'
         WHEN b > a THEN 'expansion' ELSE 'contraction' END AS kind,
    sum(b - a)::BIGINT AS mrr_change, count(*)::BIGINT AS movements
FROM daily d JOIN currency c USING (customer_id)
WHERE b <> a
GROUP BY ALL
ORDER BY month, currency, kind;
