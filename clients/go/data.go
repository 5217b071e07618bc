package submetrics

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
)

// Page selects a page of a list: at most Limit items (0: the service's
// default of 100) after skipping Offset.
type Page struct {
	Limit  int
	Offset int
}

// query is the page as query parameters; a negative Limit or Offset is an
// error naming it.
func (p Page) query() (url.Values, error) {
	for _, field := range []struct {
		name  string
		value int
	}{{"limit", p.Limit}, {"offset", p.Offset}} {
		if field.value < 0 {
			return nil, &Error{Message: fmt.Sprintf("%s: must be a whole number from 0, got %d", field.name, field.value),
				Code: "invalid_argument", Field: field.name}
		}
	}
	q := url.Values{}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Offset > 0 {
		q.Set("offset", strconv.Itoa(p.Offset))
	}
	return q, nil
}

// UpsertPlans stores plans; one result per record.
func (c *Client) UpsertPlans(ctx context.Context, plans []PlanInput) ([]ImportResult, error) {
	var out ImportResults
	err := c.Call(ctx, "upsertPlans", nil, nil, plans, &out)
	return out.Result, err
}

// UpsertCustomers stores customers; one result per record.
func (c *Client) UpsertCustomers(ctx context.Context, customers []CustomerInput) ([]ImportResult, error) {
	var out CustomerImportResults
	err := c.Call(ctx, "upsertCustomers", nil, nil, customers, &out)
	return out.Result.List, err
}

// UpsertInvoices stores invoices; one result per record.
func (c *Client) UpsertInvoices(ctx context.Context, invoices []InvoiceInput) ([]ImportResult, error) {
	var out ImportResults
	err := c.Call(ctx, "upsertInvoices", nil, nil, invoices, &out)
	return out.Result, err
}

// UpsertDataSources stores data sources; one result per record.
func (c *Client) UpsertDataSources(ctx context.Context, sources []DataSourceInput) ([]ImportResult, error) {
	var out ImportResults
	err := c.Call(ctx, "upsertDataSources", nil, nil, sources, &out)
	return out.Result, err
}

// LoadFxRates loads FX rate rows, each the units of its currency per one
// unit of the account's pivot from its date on (a rate as float64; one
// needing more digits goes through Call with the rate as text); it answers
// how many rows were loaded.
func (c *Client) LoadFxRates(ctx context.Context, rates []FxRate) (int64, error) {
	var out FxRatesLoaded
	err := c.Call(ctx, "loadFxRates", nil, nil, rates, &out)
	return out.Loaded, err
}

// The media types of import bodies besides JSON (ArrowStream is the third).
const (
	// NDJSON is one JSON record per line.
	NDJSON = "application/x-ndjson"
	// CSV is a header row naming the columns, then one record per row.
	CSV = "text/csv"
)

// Body is a request body sent as it is under its media type, rather than
// encoded as JSON.
type Body struct {
	ContentType string
	Data        []byte
}

// ImportRecords stores records (customers, plans, plan_groups or invoices,
// by collection; any value that encodes as a JSON record or an array of
// them) into the data source source, tagging each with it; one result per
// record.
func (c *Client) ImportRecords(ctx context.Context, source, collection string, records any) ([]ImportResult, error) {
	var out ImportResults
	err := c.Call(ctx, "importRecords", map[string]string{"source": source, "collection": collection}, nil, records, &out)
	return out.Result, err
}

// ImportBody stores the records of a body in another format than JSON, as
// ImportRecords does: contentType is NDJSON, CSV or ArrowStream (an Arrow
// IPC stream, one record per row). The body is one write of at most
// 100,000 records.
func (c *Client) ImportBody(ctx context.Context, source, collection, contentType string, data []byte) ([]ImportResult, error) {
	body, err := recordsBody(contentType, data)
	if err != nil {
		return nil, err
	}
	return c.ImportRecords(ctx, source, collection, body)
}

// UpsertBody upserts the records of a body in another format than JSON
// (as ImportBody reads them) without a data source: collection is
// customers, plans or invoices; one result per record.
func (c *Client) UpsertBody(ctx context.Context, collection, contentType string, data []byte) ([]ImportResult, error) {
	body, err := recordsBody(contentType, data)
	if err != nil {
		return nil, err
	}
	switch collection {
	case "customers":
		var out CustomerImportResults
		err := c.Call(ctx, "upsertCustomers", nil, nil, body, &out)
		return out.Result.List, err
	case "plans", "invoices":
		var out ImportResults
		operation := map[string]string{"plans": "upsertPlans", "invoices": "upsertInvoices"}[collection]
		err := c.Call(ctx, operation, nil, nil, body, &out)
		return out.Result, err
	}
	return nil, &Error{Message: fmt.Sprintf("UpsertBody writes customers, plans or invoices, not %q", collection),
		Code: "invalid_argument", Field: "collection"}
}

// recordsBody is data as a Body of contentType, one of the record formats
// besides JSON.
func recordsBody(contentType string, data []byte) (Body, error) {
	if contentType != NDJSON && contentType != CSV && contentType != ArrowStream {
		return Body{}, &Error{Message: fmt.Sprintf("a records body is %s, %s or %s, not %q", NDJSON, CSV, ArrowStream, contentType),
			Code: "invalid_argument", Field: "contentType"}
	}
	return Body{ContentType: contentType, Data: data}, nil
}

// CreatePlanGroup stores a plan group; returns the id the service gave it.
func (c *Client) CreatePlanGroup(ctx context.Context, group PlanGroupInput) (string, error) {
	var out Success
	err := c.Call(ctx, "createPlanGroup", nil, nil, group, &out)
	return out.ID, err
}

// GetPlan reads a plan; an unknown id is an Error with code not_found.
func (c *Client) GetPlan(ctx context.Context, id string) (Plan, error) {
	var out Plan
	err := c.Call(ctx, "getPlan", map[string]string{"id": id}, nil, nil, &out)
	return out, err
}

// GetCustomer reads a customer with its current MRR per currency.
func (c *Client) GetCustomer(ctx context.Context, id string) (CustomerDetail, error) {
	var out CustomerDetail
	err := c.Call(ctx, "getCustomer", map[string]string{"id": id}, nil, nil, &out)
	return out, err
}

// GetInvoice reads an invoice.
func (c *Client) GetInvoice(ctx context.Context, id string) (Invoice, error) {
	var out Invoice
	err := c.Call(ctx, "getInvoice", map[string]string{"id": id}, nil, nil, &out)
	return out, err
}

// GetPlanGroup reads a plan group with its plans.
func (c *Client) GetPlanGroup(ctx context.Context, id string) (PlanGroup, error) {
	var out PlanGroup
	err := c.Call(ctx, "getPlanGroup", map[string]string{"id": id}, nil, nil, &out)
	return out, err
}

// GetDataSource reads a data source.
func (c *Client) GetDataSource(ctx context.Context, id string) (DataSource, error) {
	var out DataSource
	err := c.Call(ctx, "getDataSource", map[string]string{"id": id}, nil, nil, &out)
	return out, err
}

// ListPlans reads a page of plans and how many there are.
func (c *Client) ListPlans(ctx context.Context, page Page) (PlanPage, error) {
	query, err := page.query()
	if err != nil {
		return PlanPage{}, err
	}
	var out PlanList
	err = c.Call(ctx, "listPlans", nil, query, nil, &out)
	return out.Result, err
}

// ListFxRates reads a page of the FX rate rows and how many there are.
func (c *Client) ListFxRates(ctx context.Context, page Page) (FxRatePage, error) {
	query, err := page.query()
	if err != nil {
		return FxRatePage{}, err
	}
	var out FxRateList
	err = c.Call(ctx, "listFxRates", nil, query, nil, &out)
	return out.Result, err
}

// ListCustomers reads a page of customers and how many there are.
func (c *Client) ListCustomers(ctx context.Context, page Page) (CustomerPage, error) {
	query, err := page.query()
	if err != nil {
		return CustomerPage{}, err
	}
	var out CustomerList
	err = c.Call(ctx, "listCustomers", nil, query, nil, &out)
	return out.Result, err
}

// ListInvoices reads a page of invoices (of one customer when customer is
// not empty) and how many there are.
func (c *Client) ListInvoices(ctx context.Context, page Page, customer string) (InvoicePage, error) {
	query, err := page.query()
	if err != nil {
		return InvoicePage{}, err
	}
	if customer != "" {
		query.Set("customer", customer)
	}
	var out InvoiceList
	err = c.Call(ctx, "listInvoices", nil, query, nil, &out)
	return out.Result, err
}

// AllCustomers reads every customer, pageSize at a time.
func (c *Client) AllCustomers(ctx context.Context, pageSize int) ([]Customer, error) {
	var all []Customer
	for {
		page, err := c.ListCustomers(ctx, Page{Limit: pageSize, Offset: len(all)})
		if err != nil {
			return all, err
		}
		all = append(all, page.List...)
		if len(page.List) == 0 || int64(len(all)) >= page.Count {
			return all, nil
		}
	}
}

// DeleteInvoice deletes an invoice.
func (c *Client) DeleteInvoice(ctx context.Context, id string) error {
	return c.Call(ctx, "deleteInvoice", map[string]string{"id": id}, nil, nil, nil)
}

// DeletePlan deletes a plan; while invoices use it, an Error with code conflict.
func (c *Client) DeletePlan(ctx context.Context, id string) error {
	return c.Call(ctx, "deletePlan", map[string]string{"id": id}, nil, nil, nil)
}

// DeleteCustomer deletes a customer and its invoices.
func (c *Client) DeleteCustomer(ctx context.Context, id string) error {
	return c.Call(ctx, "deleteCustomer", map[string]string{"id": id}, nil, nil, nil)
}

// CreateAPIKey makes a key of role (owner, admin, readonly); its Key is shown only here.
func (c *Client) CreateAPIKey(ctx context.Context, name, role string) (NewApiKey, error) {
	var out NewApiKey
	err := c.Call(ctx, "createApiKey", nil, nil, ApiKeyInput{Name: &name, Role: &role}, &out)
	return out, err
}

// Account reads the account and its settings.
func (c *Client) Account(ctx context.Context) (Account, error) {
	var out Account
	err := c.Call(ctx, "getAccount", nil, nil, nil, &out)
	return out, err
}
