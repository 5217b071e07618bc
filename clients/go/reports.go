package submetrics

import (
	"context"
	"encoding/json"
	"net/url"
)

// queryAt is params as query parameters, plus asOf as as_of when not empty
// and format when not empty (the Arrow calls set it): an as_of given both
// ways, or a format among the parameters of a call that sets it, is an
// error naming it.
func queryAt(params map[string]string, asOf, format string) (url.Values, error) {
	query := url.Values{}
	for key, value := range params {
		query.Set(key, value)
	}
	if _, given := params["format"]; given && format != "" {
		return nil, &Error{Message: "parameter `format`: this call sets it to " + format, Code: "invalid_query", Field: "format"}
	}
	if _, given := params["as_of"]; given && asOf != "" {
		return nil, &Error{Message: "parameter `as_of`: is given twice (as the asOf argument and among the parameters); give it once",
			Code: "invalid_query", Field: "as_of"}
	}
	if format != "" {
		query.Set("format", format)
	}
	if asOf != "" {
		query.Set("as_of", asOf)
	}
	return query, nil
}

// Report runs the report name with its query parameters (see the
// service's docs/reports.md; "as_of" fixes the instant) and decodes the
// answer into out: a *SummaryReport, *MrrReport, *TableReport,
// *MovementTableReport, or *map[string]any for any report. The numbers of
// a map and a TableReport's values are float64s: an answer with an integer
// beyond 2^53 - 1 is refused into them with an out_of_range Error naming
// its place, never rounded (see the package doc); RawReport, decoded by a
// json.Decoder with UseNumber, or ReportArrow read it exactly.
func (c *Client) Report(ctx context.Context, name string, params map[string]string, out any) error {
	query, _ := queryAt(params, "", "") // it sets nothing, so it cannot fail
	return c.Call(ctx, "getReport", map[string]string{"name": name}, query, nil, out)
}

// RawReport runs a report and returns its answer as JSON text.
func (c *Client) RawReport(ctx context.Context, name string, params map[string]string) (json.RawMessage, error) {
	var out json.RawMessage
	err := c.Report(ctx, name, params, &out)
	return out, err
}

// ArrowStream is the media type of an Arrow IPC stream, as the service
// answers reports.
const ArrowStream = "application/vnd.apache.arrow.stream"

// ReportArrow runs a report and returns its record batch as an Arrow IPC
// stream (format=arrow), columns typed by the report's schema, for an
// Arrow reader (github.com/apache/arrow-go's ipc.NewReader, say).
func (c *Client) ReportArrow(ctx context.Context, name string, params map[string]string) ([]byte, error) {
	query, err := queryAt(params, "", "arrow")
	if err != nil {
		return nil, err
	}
	return c.send(ctx, "getReport", map[string]string{"name": name}, query, nil, ArrowStream)
}

// Summary runs the summary report at asOf (empty: now).
func (c *Client) Summary(ctx context.Context, asOf string) (SummaryReport, error) {
	var out SummaryReport
	query, _ := queryAt(nil, asOf, "") // no parameters to clash with asOf
	err := c.Call(ctx, "getReport", map[string]string{"name": "summary"}, query, nil, &out)
	return out, err
}

// MRR runs the mrr report with its parameters.
func (c *Client) MRR(ctx context.Context, params map[string]string) (MrrReport, error) {
	var out MrrReport
	err := c.Report(ctx, "mrr", params, &out)
	return out, err
}

// Table runs a *-table report (mrr-table, transactions-table, ...).
func (c *Client) Table(ctx context.Context, name string, params map[string]string) (TableReport, error) {
	var out TableReport
	err := c.Report(ctx, name, params, &out)
	return out, err
}

// MovementTable runs the movement-table report.
func (c *Client) MovementTable(ctx context.Context, params map[string]string) (MovementRowPage, error) {
	var out MovementTableReport
	err := c.Report(ctx, "movement-table", params, &out)
	return out.Result, err
}

// Movements lists the movements at asOf as the ledger does; filters are
// customer, start, end and kinds.
func (c *Client) Movements(ctx context.Context, asOf string, filters map[string]string) ([]Movement, error) {
	query, err := queryAt(filters, asOf, "")
	if err != nil {
		return nil, err
	}
	var out MovementList
	err = c.Call(ctx, "listMovements", nil, query, nil, &out)
	return out.Result, err
}

// MovementsArrow lists the movements as Movements does, as an Arrow IPC
// stream of the movement columns (format=arrow).
func (c *Client) MovementsArrow(ctx context.Context, asOf string, filters map[string]string) ([]byte, error) {
	query, err := queryAt(filters, asOf, "arrow")
	if err != nil {
		return nil, err
	}
	return c.send(ctx, "listMovements", nil, query, nil, ArrowStream)
}
