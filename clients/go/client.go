// Package submetrics is the Go client of a deployed submetrics service.
//
// Every operation is looked up by its id in the table generated from the
// service's OpenAPI description (api_gen.go, with the record and report
// structs); this file adds the transport: the key, timeouts, retries on
// 429 and 503 as Retry-After asks, and errors carrying the service's code.
// Standard library only.
//
// Answers are decoded as encoding/json decodes them, except that an
// integer beyond 2^53 - 1 (9007199254740991) either way is never rounded:
// report sums in cents are 64-bit, and a float64 holds no larger integer
// exactly. Where out would receive such an integer as a float64 (a float64
// field such as a TableRow's values, or a number in an any, as in a
// map[string]any), the call fails with an Error of Code out_of_range
// naming the value's place in Field (summary.mrr_current,
// rows[0].values[0], ["by plan"]["a\"b"][2]), even if the value is one a
// float64 happens to hold, and out is left as it was. An int64 field (the
// other amounts of the typed records and reports), a json.Number or a
// json.RawMessage receives it exactly, and one out has no place for is not
// decoded and passes. RawReport, ReportArrow and MovementsArrow answer
// such integers exactly.
package submetrics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Error is an error answer of the service: its message, stable code
// (one of ErrorCodes, or "timeout" / "unreachable" / "http_<status>"), the record id
// and field at fault when one is, and the HTTP status.
type Error struct {
	Message  string
	Code     string
	RecordID string
	Field    string
	Status   int
}

func (e *Error) Error() string { return e.Message }

// Client talks to one service with one key. It is safe for concurrent use.
type Client struct {
	// BaseURL is the service, e.g. https://analytics.example.com.
	BaseURL string
	// APIKey is sent as a bearer token.
	APIKey string
	// HTTPClient sends the requests; its Timeout bounds each one.
	HTTPClient *http.Client
	// MaxRetries is how often a 429 or 503 is retried.
	MaxRetries int
	// MaxRetryWait caps one pause between retries.
	MaxRetryWait time.Duration
}

// NewClient returns a client of baseURL (SUBMETRICS_API_URL, else
// http://localhost:8080, when empty) with apiKey (SUBMETRICS_API_KEY when
// empty), a 30 s timeout and 3 retries.
func NewClient(baseURL, apiKey string) *Client {
	if baseURL == "" {
		baseURL = os.Getenv("SUBMETRICS_API_URL")
	}
	if baseURL == "" {
		baseURL = "http://localhost:8080"
	}
	if apiKey == "" {
		apiKey = os.Getenv("SUBMETRICS_API_KEY")
	}
	return &Client{
		BaseURL:      strings.TrimRight(baseURL, "/"),
		APIKey:       apiKey,
		HTTPClient:   &http.Client{Timeout: 30 * time.Second},
		MaxRetries:   3,
		MaxRetryWait: 30 * time.Second,
	}
}

// Call runs the operation with id operation, filling path parameters,
// adding query parameters and sending body as JSON (when not nil; a Body
// goes as it is, under its ContentType), and decodes the answer into out
// (when not nil), refusing an integer beyond 2^53 - 1 that out would round
// (see the package doc). An operation that answers
// another type than JSON (AnswerTypes, e.g. the HTML of getApiReference)
// is asked for that type and needs a *string out, which gets its text.
func (c *Client) Call(ctx context.Context, operation string, pathParams map[string]string, query url.Values, body, out any) error {
	media, text := AnswerTypes[operation]
	if !text {
		media = "application/json"
	}
	answer, err := c.send(ctx, operation, pathParams, query, body, media)
	if err != nil || out == nil {
		return err
	}
	if text {
		target, ok := out.(*string)
		if !ok {
			return &Error{Message: operation + " answers " + media + ": pass a *string", Code: "invalid_argument"}
		}
		*target = string(answer)
		return nil
	}
	if len(answer) == 0 {
		return nil
	}
	return decodeExact(answer, out, operation)
}

// send runs the operation as Call does, asking for accept, and returns the
// body of its successful answer.
func (c *Client) send(ctx context.Context, operation string, pathParams map[string]string, query url.Values, body any, accept string) ([]byte, error) {
	op, ok := Operations[operation]
	if !ok {
		return nil, &Error{Message: "no operation " + operation + ": an operation is an operationId of the API description",
			Code: "invalid_argument", Field: "operation"}
	}
	path, err := pathOf(operation, op.Path, pathParams)
	if err != nil {
		return nil, err
	}
	target := c.BaseURL + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var payload []byte
	contentType := "application/json"
	if raw, ok := body.(Body); ok {
		payload, contentType = raw.Data, raw.ContentType
	} else if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return nil, &Error{Message: "the body is not JSON: " + err.Error(), Code: "invalid_argument"}
		}
	}
	for attempt := 0; ; attempt++ {
		var reader io.Reader
		if body != nil {
			reader = bytes.NewReader(payload)
		}
		request, err := http.NewRequestWithContext(ctx, op.Method, target, reader)
		if err != nil {
			return nil, &Error{Message: err.Error(), Code: "invalid_argument"}
		}
		request.Header.Set("Accept", accept)
		if body != nil {
			request.Header.Set("Content-Type", contentType)
		}
		if c.APIKey != "" {
			request.Header.Set("Authorization", "Bearer "+c.APIKey)
		}
		response, err := c.HTTPClient.Do(request)
		if err != nil {
			if timedOut(err) {
				return nil, c.timeout(ctx)
			}
			return nil, &Error{Message: fmt.Sprintf("the service at %s could not be reached: %v", c.BaseURL, err), Code: "unreachable"}
		}
		answer, err := io.ReadAll(response.Body)
		response.Body.Close()
		if err != nil {
			if timedOut(err) {
				return nil, c.timeout(ctx)
			}
			return nil, &Error{Message: "the answer could not be read: " + err.Error(), Code: "unreachable"}
		}
		if response.StatusCode < 300 {
			return answer, nil
		}
		if (response.StatusCode == 429 || response.StatusCode == 503) && attempt < c.MaxRetries {
			wait := retryAfter(response.Header.Get("Retry-After"), attempt)
			if wait > c.MaxRetryWait {
				wait = c.MaxRetryWait
			}
			select {
			case <-time.After(wait):
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		var details struct {
			Error string `json:"error"`
			Code  string `json:"code"`
			ID    string `json:"id"`
			Field string `json:"field"`
		}
		if json.Unmarshal(answer, &details) != nil || details.Code == "" {
			text := string(answer)
			if len(text) > 200 {
				text = text[:200]
			}
			return nil, &Error{Message: fmt.Sprintf("the service answered %d: %s", response.StatusCode, text),
				Code: fmt.Sprintf("http_%d", response.StatusCode), Status: response.StatusCode}
		}
		return nil, &Error{Message: details.Error, Code: details.Code, RecordID: details.ID, Field: details.Field, Status: response.StatusCode}
	}
}

// timedOut reports whether err is a request's time running out: the
// HTTPClient's Timeout or the context's deadline, waiting for the answer or
// reading its body.
func timedOut(err error) bool {
	var timeout interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &timeout) && timeout.Timeout())
}

// timeout is the Error of a request whose time ran out, with Code
// "timeout" as the Python and Node clients give it.
func (c *Client) timeout(ctx context.Context) *Error {
	within := "in time (the context's deadline passed)"
	if ctx.Err() == nil && c.HTTPClient != nil && c.HTTPClient.Timeout > 0 {
		within = "within " + c.HTTPClient.Timeout.String()
	}
	return &Error{Message: fmt.Sprintf("the service at %s did not answer %s", c.BaseURL, within), Code: "timeout"}
}

// pathOf is template, the path of operation, with pathParams filled in
// (each escaped); a parameter the path lacks, or one of its parameters not
// given, is an error naming it.
func pathOf(operation, template string, pathParams map[string]string) (string, error) {
	var wanted []string
	for rest := template; strings.Contains(rest, "{"); {
		open := strings.Index(rest, "{")
		end := strings.Index(rest[open:], "}")
		if end < 0 {
			break
		}
		wanted = append(wanted, rest[open+1:open+end])
		rest = rest[open+end+1:]
	}
	names := make([]string, 0, len(pathParams))
	for name := range pathParams {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !contains(wanted, name) {
			has := "it has no path parameters"
			if len(wanted) > 0 {
				has = "its path parameters are " + strings.Join(wanted, ", ")
			}
			return "", &Error{Message: fmt.Sprintf("%s has no path parameter `%s` (%s); %s", operation, name, template, has),
				Code: "invalid_argument", Field: name}
		}
	}
	path := template
	for _, name := range wanted {
		value, given := pathParams[name]
		if !given {
			return "", &Error{Message: fmt.Sprintf("%s needs the path parameter `%s` (%s)", operation, name, template),
				Code: "invalid_argument", Field: name}
		}
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(value))
	}
	return path, nil
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// retryAfter is the pause a Retry-After header asks for (seconds or an
// HTTP date), else a growing one.
func retryAfter(header string, attempt int) time.Duration {
	if seconds, err := strconv.ParseFloat(strings.TrimSpace(header), 64); err == nil && seconds >= 0 {
		return time.Duration(seconds * float64(time.Second))
	}
	if when, err := http.ParseTime(header); err == nil {
		if wait := time.Until(when); wait > 0 {
			return wait
		}
		return 0
	}
	return time.Duration(500<<attempt) * time.Millisecond
}

// IsCode reports whether err is a service Error with the given code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
