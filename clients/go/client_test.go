package submetrics

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const ownerKey = "owner-key-for-go-client-tests-0123456789"

// startService starts a real submetrics-server (SUBMETRICS_SERVER_BIN, else
// the workspace's debug build) on a free port with a fresh data directory.
func startService(t *testing.T) string {
	t.Helper()
	binary := os.Getenv("SUBMETRICS_SERVER_BIN")
	if binary == "" {
		target := os.Getenv("CARGO_TARGET_DIR")
		if target == "" {
			target = filepath.Join("..", "..", "target")
		}
		binary = filepath.Join(target, "debug", "submetrics-server")
	}
	if _, err := os.Stat(binary); err != nil {
		t.Fatalf("no server binary at %s: run cargo build -p submetrics-server or set SUBMETRICS_SERVER_BIN", binary)
	}
	command := exec.Command(binary, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir())
	command.Env = append(os.Environ(), "SUBMETRICS_OWNER_KEY="+ownerKey)
	stdout, err := command.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := command.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = command.Process.Kill(); _ = command.Wait() })
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if line := lines.Text(); strings.HasPrefix(line, "listening on ") {
			address := strings.TrimPrefix(line, "listening on ")
			go func() {
				for lines.Scan() {
				}
			}()
			return strings.TrimSpace(address)
		}
	}
	t.Fatal("the server stopped before it listened")
	return ""
}

// recordingServer answers every request with an empty result and keeps the
// query strings it was sent, in order.
func recordingServer() (*httptest.Server, *[]string) {
	queries := &[]string{}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*queries = append(*queries, r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"result":[]}`))
	}))
	return server, queries
}

func text(s string) *string { return &s }

func load(t *testing.T, ctx context.Context, c *Client) {
	t.Helper()
	month, year := "month", "year"
	if _, err := c.UpsertPlans(ctx, []PlanInput{
		{ID: "m", Name: "Monthly", BillingFreq: &month, Currency: "USD"},
		{ID: "y", Name: "Yearly", BillingFreq: &year, Currency: "USD"},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpsertCustomers(ctx, []CustomerInput{{ID: "acme", Name: text("Acme")}, {ID: "beta", Name: text("Beta")}}); err != nil {
		t.Fatal(err)
	}
	sub := func(id, customer, plan, date string, amount int64) InvoiceInput {
		return InvoiceInput{ID: id, CustomerID: customer, Type: "subscription", PlanID: &plan, InvoiceDate: date, Amount: amount, Currency: "USD"}
	}
	results, err := c.UpsertInvoices(ctx, []InvoiceInput{
		sub("a1", "acme", "m", "2024-01-01", 3000),
		sub("a2", "acme", "m", "2024-02-01", 5000),
		sub("a3", "acme", "m", "2024-03-01", 5000),
		sub("b1", "beta", "y", "2024-01-10", 120000),
		{ID: "b2", CustomerID: "beta", Type: "cancellation", InvoiceDate: "2024-04-05", Amount: 0, Currency: "USD"},
	})
	if err != nil || len(results) != 5 || results[4].ImportStatus != "inserted" {
		t.Fatalf("invoices: %v %+v", err, results)
	}
}

func TestRecordsReportsAndPaging(t *testing.T) {
	ctx := context.Background()
	c := NewClient(startService(t), ownerKey)
	load(t, ctx, c)

	plan, err := c.GetPlan(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	want := Plan{ID: "m", Name: "Monthly", BillingFreq: "month", BillingFreqCount: 1, Currency: "USD", PricingModel: "licensed"}
	if !reflect.DeepEqual(plan, want) {
		t.Fatalf("plan %+v, want %+v", plan, want)
	}
	var reference string
	if err := c.Call(ctx, "getApiReference", nil, nil, nil, &reference); err != nil || !strings.HasPrefix(reference, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>submetrics API reference</title>`) {
		t.Fatalf("reference %.120q %v", reference, err)
	}
	var notText map[string]any
	if err := c.Call(ctx, "getApiReference", nil, nil, nil, &notText); err == nil || err.Error() != "getApiReference answers text/html: pass a *string" {
		t.Fatalf("reference into a map: %v", err)
	}
	invoice, err := c.GetInvoice(ctx, "b2")
	if err != nil || invoice.Type != "cancellation" || invoice.PlanID != nil {
		t.Fatalf("invoice %+v %v", invoice, err)
	}
	group, err := c.CreatePlanGroup(ctx, PlanGroupInput{Name: "All", Plans: []string{"m", "y"}})
	if err != nil || group != "pg_1" {
		t.Fatalf("group %q %v", group, err)
	}
	if g, err := c.GetPlanGroup(ctx, group); err != nil || len(g.Plans) != 2 || g.Plans[1].ID != "y" {
		t.Fatalf("group %+v %v", g, err)
	}
	if page, err := c.ListInvoices(ctx, Page{}, "beta"); err != nil || page.Count != 2 {
		t.Fatalf("invoices of beta: %+v %v", page, err)
	}

	asOf := map[string]string{"as_of": "2024-06-15", "date": "20240101-20240531"}
	mrr, err := c.MRR(ctx, asOf)
	if err != nil {
		t.Fatal(err)
	}
	var totals []int64
	for _, period := range mrr.Result {
		totals = append(totals, period.TotalMRR)
	}
	if !reflect.DeepEqual(totals, []int64{13000, 15000, 15000, 0, 0}) {
		t.Fatalf("total MRR %v", totals)
	}
	// The same periods as an Arrow IPC stream: a stream's start and end
	// markers, the column's name in its schema and its values, as
	// little-endian int64s, one after another in its data buffer.
	stream, err := c.ReportArrow(ctx, "mrr", asOf)
	if err != nil {
		t.Fatal(err)
	}
	values := make([]byte, 0, 8*len(totals))
	for _, total := range totals {
		values = binary.LittleEndian.AppendUint64(values, uint64(total))
	}
	marker := []byte{0xff, 0xff, 0xff, 0xff}
	if !bytes.HasPrefix(stream, marker) || !bytes.HasSuffix(stream, append(marker, 0, 0, 0, 0)) ||
		!bytes.Contains(stream, []byte("total_mrr")) || !bytes.Contains(stream, values) {
		t.Fatalf("the mrr report's Arrow stream (%d bytes) lacks its periods", len(stream))
	}
	if _, err := c.ReportArrow(ctx, "nope", nil); err == nil || err.(*Error).Code != "unknown_report" {
		t.Fatalf("an unknown report as Arrow: %v", err)
	}
	// Acme's movements: its mrr_change column holds them in order.
	moves, err := c.MovementsArrow(ctx, "2024-06-15", map[string]string{"customer": "acme"})
	acmeChanges := []byte{}
	for _, change := range []int64{3000, 2000, -5000} {
		acmeChanges = binary.LittleEndian.AppendUint64(acmeChanges, uint64(change))
	}
	if err != nil || !bytes.HasPrefix(moves, marker) || !bytes.Contains(moves, []byte("mrr_change")) ||
		!bytes.Contains(moves, acmeChanges) {
		t.Fatalf("acme's movements as Arrow (%d bytes): %v", len(moves), err)
	}
	summary, err := c.Summary(ctx, "2024-02-15")
	if err != nil || summary.Summary.MRRCurrent != 15000 || summary.Currency != "USD" {
		t.Fatalf("summary %+v %v", summary, err)
	}
	// An empty asOf is now: it used to send `as_of=`, which the service refuses.
	now, err := c.Summary(ctx, "")
	var nowReport SummaryReport
	if err == nil {
		err = c.Report(ctx, "summary", nil, &nowReport)
	}
	if err != nil || now.Currency != "USD" || now.Summary != nowReport.Summary {
		t.Fatalf("summary now %+v %v", now, err)
	}
	table, err := c.Table(ctx, "mrr-table", asOf)
	if err != nil || table.Rows[0].Metric != "total_mrr" || len(table.Columns) != 5 {
		t.Fatalf("mrr-table %+v %v", table, err)
	}
	rows, err := c.MovementTable(ctx, asOf)
	if err != nil || rows.Count != 5 || rows.List[0].Type != "churn" {
		t.Fatalf("movement-table %+v %v", rows, err)
	}
	movements, err := c.Movements(ctx, "2024-06-15", map[string]string{"customer": "acme"})
	if err != nil {
		t.Fatal(err)
	}
	var changes []int64
	for _, m := range movements {
		changes = append(changes, m.MRRChange)
	}
	if !reflect.DeepEqual(changes, []int64{3000, 2000, -5000}) {
		t.Fatalf("movements %v", changes)
	}
	// Every report answers through the generic call (with the parameters
	// every report takes: a summary report has no date range).
	at := map[string]string{"as_of": "2024-06-15"}
	for _, name := range []string{"cohort", "transactions", "leads-summary", "cashflow-refunds", "churn-scheduled-summary", "map"} {
		var any map[string]any
		if err := c.Report(ctx, name, at, &any); err != nil || len(any) == 0 {
			t.Fatalf("%s: %v %v", name, any, err)
		}
	}

	customers := make([]CustomerInput, 250)
	for i := range customers {
		id := "c" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		customers[i] = CustomerInput{ID: id, Name: text(id)}
	}
	if _, err := c.UpsertCustomers(ctx, customers); err != nil {
		t.Fatal(err)
	}
	page, err := c.ListCustomers(ctx, Page{Limit: 100, Offset: 200})
	if err != nil || page.Count != 252 || len(page.List) != 52 {
		t.Fatalf("page %d of %d: %v", len(page.List), page.Count, err)
	}
	all, err := c.AllCustomers(ctx, 60)
	if err != nil || len(all) != 252 || all[0].ID != "acme" || all[251].ID != customers[249].ID {
		t.Fatalf("all customers: %d %v", len(all), err)
	}
}

func TestEachKindOfError(t *testing.T) {
	ctx := context.Background()
	base := startService(t)
	c := NewClient(base, ownerKey)
	load(t, ctx, c)
	expect := func(err error, code string, status int) {
		t.Helper()
		e, ok := err.(*Error)
		if !ok || e.Code != code || e.Status != status {
			t.Fatalf("got %#v, want code %s status %d", err, code, status)
		}
	}
	_, err := NewClient(base, "sm_not_a_key").ListPlans(ctx, Page{})
	expect(err, "unauthorized", 401)
	key, err := c.CreateAPIKey(ctx, "reader", "readonly")
	if err != nil || key.Role != "readonly" {
		t.Fatalf("key %+v %v", key, err)
	}
	_, err = NewClient(base, key.Key).UpsertPlans(ctx, []PlanInput{{ID: "x", Name: "X", Currency: "USD"}})
	expect(err, "forbidden", 403)
	_, err = c.GetPlan(ctx, "nobody")
	expect(err, "not_found", 404)
	_, err = c.RawReport(ctx, "nope", nil)
	expect(err, "unknown_report", 404)
	_, err = c.MRR(ctx, map[string]string{"interval": "hour"})
	expect(err, "invalid_query", 400)
	if err.(*Error).Field != "interval" || err.Error() != "parameter `interval`: `hour` is not one of day, week, month, quarter, year" {
		t.Fatalf("invalid_query: %#v", err)
	}
	expect(c.DeletePlan(ctx, "m"), "conflict", 409)
	_, err = c.UpsertInvoices(ctx, make([]InvoiceInput, 100001))
	expect(err, "payload_too_large", 413)
	if !IsCode(err, "payload_too_large") {
		t.Fatal("IsCode")
	}
}

func TestRetriesHonourRetryAfter(t *testing.T) {
	var calls int32
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if atomic.AddInt32(&calls, 1) <= 2 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":"busy","code":"unavailable"}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer server.Close()
	var health Health
	if err := NewClient(server.URL, "").Call(context.Background(), "getHealth", nil, nil, nil, &health); err != nil || health.Status != "ok" {
		t.Fatalf("%+v %v", health, err)
	}
	if calls != 3 {
		t.Fatalf("%d calls, want 3", calls)
	}
}

// TestPathParametersAndPagesAreCheckedBeforeSending: a path parameter the
// operation lacks, one of its own not given, or a negative page bound is
// an error naming it, and nothing is sent.
func TestPathParametersAndPagesAreCheckedBeforeSending(t *testing.T) {
	var paths []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.EscapedPath())
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer server.Close()
	client := NewClient(server.URL, "key")
	ctx := context.Background()
	refused := func(err error, field, message string) {
		t.Helper()
		e, ok := err.(*Error)
		if !ok || e.Code != "invalid_argument" || e.Field != field || e.Message != message {
			t.Fatalf("got %#v, want invalid_argument on %s: %s", err, field, message)
		}
	}
	refused(client.Call(ctx, "listPlan", nil, nil, nil, nil), "operation",
		"no operation listPlan: an operation is an operationId of the API description")
	refused(client.Call(ctx, "getCustomer", nil, nil, nil, nil), "id",
		"getCustomer needs the path parameter `id` (/data/customers/{id})")
	// A misspelt name used to leave `{id}` in the path it sent.
	refused(client.Call(ctx, "getCustomer", map[string]string{"ID": "c1"}, nil, nil, nil), "ID",
		"getCustomer has no path parameter `ID` (/data/customers/{id}); its path parameters are id")
	refused(client.Call(ctx, "listPlans", map[string]string{"id": "p1"}, nil, nil, nil), "id",
		"listPlans has no path parameter `id` (/data/plans); it has no path parameters")
	_, err := client.ListCustomers(ctx, Page{Limit: -1})
	refused(err, "limit", "limit: must be a whole number from 0, got -1")
	_, err = client.ListInvoices(ctx, Page{Offset: -100}, "c1")
	refused(err, "offset", "offset: must be a whole number from 0, got -100")
	if len(paths) != 0 {
		t.Fatalf("sent %v", paths)
	}
	if err := client.Call(ctx, "getCustomer", map[string]string{"id": "c 1/2"}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(paths, []string{"/data/customers/c%201%2F2"}) {
		t.Fatalf("sent %v", paths)
	}
}

// TestAParameterTheCallSetsIsRefusedAmongTheParameters: as_of both as the
// argument and among the filters, or format to an Arrow call, is an error
// naming it, and nothing is sent.
func TestAParameterTheCallSetsIsRefusedAmongTheParameters(t *testing.T) {
	server, queries := recordingServer()
	defer server.Close()
	client := NewClient(server.URL, "key")
	ctx := context.Background()
	_, err := client.Movements(ctx, "2024-03-01", map[string]string{"as_of": "2024-02-01"})
	if e, ok := err.(*Error); !ok || e.Code != "invalid_query" || e.Field != "as_of" ||
		e.Message != "parameter `as_of`: is given twice (as the asOf argument and among the parameters); give it once" {
		t.Fatalf("%#v", err)
	}
	_, err = client.ReportArrow(ctx, "mrr", map[string]string{"format": "csv"})
	if e, ok := err.(*Error); !ok || e.Field != "format" || e.Message != "parameter `format`: this call sets it to arrow" {
		t.Fatalf("%#v", err)
	}
	if len(*queries) != 0 {
		t.Fatalf("sent %v", *queries)
	}
	if _, err := client.Movements(ctx, "", map[string]string{"as_of": "2024-02-01"}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(*queries, []string{"as_of=2024-02-01"}) {
		t.Fatalf("sent %v", *queries)
	}
}

// TestImportsInEachBodyFormat: records go into a data source as JSON,
// NDJSON and CSV, each tagged with it, with the results of JSON records; a
// body of any other media type is refused before anything is sent.
func TestImportsInEachBodyFormat(t *testing.T) {
	ctx := context.Background()
	c := NewClient(startService(t), ownerKey)
	load(t, ctx, c)
	if _, err := c.UpsertDataSources(ctx, []DataSourceInput{{ID: "files", Name: text("Files"), Type: text("stripe")}}); err != nil {
		t.Fatal(err)
	}
	inserted := func(ids ...string) []ImportResult {
		results := make([]ImportResult, len(ids))
		for i, id := range ids {
			results[i] = ImportResult{ID: id, ImportStatus: "inserted"}
		}
		return results
	}
	check := func(results []ImportResult, err error, want []ImportResult) {
		t.Helper()
		if err != nil || !reflect.DeepEqual(results, want) {
			t.Fatalf("got %+v %v, want %+v", results, err, want)
		}
	}
	results, err := c.ImportRecords(ctx, "files", "customers", []CustomerInput{{ID: "gamma", Name: text("Gamma")}})
	check(results, err, inserted("gamma"))
	results, err = c.ImportBody(ctx, "files", "customers", CSV, []byte("id,name\ndelta,Delta\n"))
	check(results, err, inserted("delta"))
	lines := `{"id":"g1","customer_id":"gamma","type":"subscription","plan_id":"m","invoice_date":"2024-01-01","amount":3000,"currency":"USD"}
{"id":"bad","customer_id":"gamma","type":"refund","invoice_date":"2024-02-03","amount":700,"currency":"USD"}
`
	results, err = c.ImportBody(ctx, "files", "invoices", NDJSON, []byte(lines))
	refused := "invoice bad: field `amount`: must be 0 or less for a refund, got 700"
	check(results, err, append(inserted("g1"), ImportResult{ID: "bad", ImportStatus: "error", ImportError: &refused}))
	invoice, err := c.GetInvoice(ctx, "g1")
	if err != nil || invoice.DataSource == nil || *invoice.DataSource != "files" {
		t.Fatalf("invoice %+v %v", invoice, err)
	}
	if customer, err := c.GetCustomer(ctx, "delta"); err != nil || customer.DataSource == nil || *customer.DataSource != "files" {
		t.Fatalf("customer %+v %v", customer, err)
	}
	_, err = c.ImportBody(ctx, "nowhere", "customers", CSV, []byte("id,name\nx,X\n"))
	if !IsCode(err, "not_found") {
		t.Fatalf("an unknown data source: %v", err)
	}
	_, err = c.ImportBody(ctx, "files", "customers", "application/json", []byte(`[]`))
	if e, ok := err.(*Error); !ok || e.Code != "invalid_argument" || e.Field != "contentType" {
		t.Fatalf("a JSON body to ImportBody: %#v", err)
	}
	// The upserts read the same bodies, with no data source.
	results, err = c.UpsertBody(ctx, "customers", CSV, []byte("id,name\nepsilon,Epsilon\n"))
	check(results, err, inserted("epsilon"))
	results, err = c.UpsertBody(ctx, "plans", NDJSON, []byte(`{"id":"w","name":"Weekly","interval":"week","currency":"USD"}`))
	check(results, err, inserted("w"))
	results, err = c.UpsertBody(ctx, "invoices", NDJSON, []byte(lines))
	check(results, err, append(inserted("g1"), ImportResult{ID: "bad", ImportStatus: "error", ImportError: &refused}))
	if invoice, err := c.GetInvoice(ctx, "g1"); err != nil || invoice.DataSource != nil {
		t.Fatalf("invoice %+v %v", invoice, err)
	}
	_, err = c.UpsertBody(ctx, "plan_groups", CSV, []byte("name\nAll\n"))
	if e, ok := err.(*Error); !ok || e.Code != "invalid_argument" || e.Field != "collection" {
		t.Fatalf("plan groups to UpsertBody: %#v", err)
	}
}

// TestAnswersBeyond2To53AreExactOrRefused: one customer paying 10^10 cents
// of gold a month, at 10^-6 gold per dollar, is 10^16 US cents of MRR,
// beyond 2^53 - 1. The typed reports hold it as int64s; a map or a
// TableReport, whose numbers are float64s, is refused naming its place;
// the raw answer has its digits.
func TestAnswersBeyond2To53AreExactOrRefused(t *testing.T) {
	ctx := context.Background()
	c := NewClient(startService(t), ownerKey)
	if account, err := c.Account(ctx); err != nil || account.BaseCurrency != "USD" {
		t.Fatalf("account %+v %v", account, err)
	}
	loaded, err := c.LoadFxRates(ctx, []FxRate{{Date: "2024-01-01", Currency: "XAU", Rate: 0.000001}})
	if err != nil || loaded != 1 {
		t.Fatalf("fx rates %d %v", loaded, err)
	}
	rates, err := c.ListFxRates(ctx, Page{})
	if err != nil || len(rates.List) != 1 || rates.List[0] != (FxRate{Date: "2024-01-01", Currency: "XAU", Rate: 0.000001}) {
		t.Fatalf("fx rates read back %+v %v", rates, err)
	}
	month, gold := "month", "gold"
	if _, err := c.UpsertPlans(ctx, []PlanInput{{ID: gold, Name: "Gold", BillingFreq: &month, Currency: "XAU"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpsertCustomers(ctx, []CustomerInput{{ID: "G1", Name: text("Gold")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UpsertInvoices(ctx, []InvoiceInput{{ID: "g1", CustomerID: "G1", Type: "subscription",
		InvoiceDate: "2024-01-01", Currency: "XAU", PlanID: &gold, Amount: 10000000000}}); err != nil {
		t.Fatal(err)
	}
	const at = "2024-01-15T00:00:00Z"
	summary, err := c.Summary(ctx, at)
	if err != nil || summary.Summary.MRRCurrent != 10000000000000000 || summary.Summary.ARRCurrent != 120000000000000000 {
		t.Fatalf("summary %+v %v", summary, err)
	}
	movements, err := c.Movements(ctx, at, nil)
	if err != nil || len(movements) != 1 || movements[0].MRRChangeBaseCurrency != 10000000000000000 {
		t.Fatalf("movements %+v %v", movements, err)
	}

	var report map[string]any
	err = c.Report(ctx, "summary", map[string]string{"as_of": at}, &report)
	refused(t, err, "summary.mrr_current", "10000000000000000", "; ReportArrow answers it exactly as int64")
	if report != nil {
		t.Fatalf("the refused report was decoded: %v", report)
	}
	_, err = c.Table(ctx, "mrr-table", map[string]string{"as_of": at, "date": "20240101-20240131"})
	refused(t, err, "rows[0].values[0]", "10000000000000000", "; ReportArrow answers it exactly as int64")
	var listed map[string]any
	err = c.Call(ctx, "listMovements", nil, url.Values{"as_of": {at}}, nil, &listed)
	refused(t, err, "result[0].mrr_change_base_currency", "10000000000000000", "; MovementsArrow answers it exactly as int64")

	raw, err := c.RawReport(ctx, "summary", map[string]string{"as_of": at})
	if err != nil {
		t.Fatal(err)
	}
	var exact struct {
		Summary map[string]any `json:"summary"`
	}
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	if err := decoder.Decode(&exact); err != nil || exact.Summary["mrr_current"] != json.Number("10000000000000000") ||
		exact.Summary["arr_current"] != json.Number("120000000000000000") {
		t.Fatalf("raw summary %s %v", raw, err)
	}
}

// TestAnEmptyAsOfIsNow: Summary, Movements and MovementsArrow leave an
// empty asOf out of the query (the service's now), and send any other.
func TestAnEmptyAsOfIsNow(t *testing.T) {
	server, queries := recordingServer()
	defer server.Close()
	client := NewClient(server.URL, "key")
	ctx := context.Background()
	for _, asOf := range []string{"", "2024-01-01"} {
		if _, err := client.Summary(ctx, asOf); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Movements(ctx, asOf, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := client.MovementsArrow(ctx, asOf, nil); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"", "", "format=arrow", "as_of=2024-01-01", "as_of=2024-01-01", "as_of=2024-01-01&format=arrow"}
	if !reflect.DeepEqual(*queries, want) {
		t.Fatalf("sent %q, want %q", *queries, want)
	}
}

// TestATimeoutIsCodeTimeout: a request whose time runs out, waiting for
// the answer or reading its body, is an Error with Code timeout (it was
// unreachable), as the Python and Node clients say; a service that is not
// there stays unreachable.
func TestATimeoutIsCodeTimeout(t *testing.T) {
	release := make(chan struct{})
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status": `))
			w.(http.Flusher).Flush()
		}
		<-release
	}))
	defer server.Close()
	defer close(release)
	client := NewClient(server.URL, "key")
	client.HTTPClient.Timeout = 100 * time.Millisecond
	ctx := context.Background()
	want := "the service at " + server.URL + " did not answer within 100ms"
	for _, operation := range []string{"getAccount", "getHealth"} {
		err := client.Call(ctx, operation, nil, nil, nil, nil)
		if e, ok := err.(*Error); !ok || e.Code != "timeout" || e.Message != want {
			t.Fatalf("%s: %#v", operation, err)
		}
	}
	client.HTTPClient.Timeout = 0
	deadline, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	err := client.Call(deadline, "getAccount", nil, nil, nil, nil)
	if e, ok := err.(*Error); !ok || e.Code != "timeout" ||
		e.Message != "the service at "+server.URL+" did not answer in time (the context's deadline passed)" {
		t.Fatalf("deadline: %#v", err)
	}
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	if err := NewClient(gone.URL, "key").Call(ctx, "getHealth", nil, nil, nil, nil); !IsCode(err, "unreachable") {
		t.Fatalf("gone: %#v", err)
	}
}
