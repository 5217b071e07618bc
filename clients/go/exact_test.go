package submetrics

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

const beyond = "beyond 9007199254740991 (2^53 - 1), the largest integer a float64 holds exactly; " +
	"decode it into an int64 field or a json.Number"

// refused fails the test unless err is the out_of_range Error of the
// integer digits at place, with the hint naming the exact call (if any).
func refused(t *testing.T, err error, place, digits, hint string) {
	t.Helper()
	want := &Error{Message: "the answer's `" + place + "` is " + digits + ", " + beyond + hint, Code: "out_of_range", Field: place}
	if !reflect.DeepEqual(err, want) {
		t.Fatalf("got %#v, want %#v", err, want)
	}
}

func TestBigIntegersAreFoundByPlacePastStringsAndFloats(t *testing.T) {
	type found struct{ place, digits string }
	for _, c := range []struct {
		text string
		want []found
	}{
		{`{"a": 9007199254740991, "b": -9007199254740991, "c": 900719925474099}`, nil},
		{`[1.2345678901234567e300, 12345678901234567.5, 1e17, 90071992547409930E0]`, nil},
		{`{"12345678901234567890": "99999999999999999"}`, nil},
		{`["a \" 99999999999999999 \\", "\\\"", 1]`, nil},
		{`{"summary": {"mrr": 1, "arr": 9007199254740992}}`, []found{{"summary.arr", "9007199254740992"}}},
		{`{"result": [{"new": 1}, {"x": [1], "new": -90071992547409930}]}`, []found{{"result[1].new", "-90071992547409930"}}},
		{`{"by plan": {"a\"b": [0, 0, 10000000000000000000]}, "n": 9007199254740993}`,
			[]found{{`["by plan"]["a\"b"][2]`, "10000000000000000000"}, {"n", "9007199254740993"}}},
		{`[[], {}, 9007199254740993]`, []found{{"[2]", "9007199254740993"}}},
		{`{"$x_1": {"1st": {"": [{"<&>": -9007199254740992}]}}}`, []found{{`$x_1["1st"][""][0]["<&>"]`, "-9007199254740992"}}},
		{`{"\u00e9t\u00e9": {"a b": 12345678901234567, "a\\": [-12345678901234567]}}`,
			[]found{{`["été"]["a b"]`, "12345678901234567"}, {`["été"]["a\\"][0]`, "-12345678901234567"}}},
		{`{"a":[{"b":"}]"},{"c":{"d":12345678901234567}}],"e":99999999999999999}`,
			[]found{{"a[1].c.d", "12345678901234567"}, {"e", "99999999999999999"}}},
	} {
		var got []found
		for _, integer := range bigIntegers([]byte(c.text)) {
			got = append(got, found{placeOf(integer.path), integer.digits})
			if token := c.text[integer.start:integer.end]; token != integer.digits {
				t.Fatalf("%s: %s is written at %q", c.text, integer.digits, token)
			}
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Fatalf("%s: got %q, want %q", c.text, got, c.want)
		}
	}
}

func TestOnlySixteenDigitsInARowAreLookedAt(t *testing.T) {
	for text, want := range map[string]bool{
		`{"a": 900719925474099, "b": "123456789012345"}`: false,
		`[123456789012345.6789]`:                         false,
		`[1234567890123456]`:                             true,
		`{"id": "x1234567890123456"}`:                    true,
	} {
		if got := hasLongDigitRun([]byte(text)); got != want {
			t.Fatalf("%s: %v, want %v", text, got, want)
		}
	}
}

// TestAnIntegerIsRefusedOnlyWhereAFloatWouldRoundIt: into a map, an any,
// a float64 or float32 field, an integer beyond 2^53 - 1 is refused (the
// first in the order written), even one a float64 holds, and out keeps what
// it had; an int64 or uint64 field, a json.Number, a json.RawMessage and a
// field out lacks take it as it is written, and an answer out cannot take
// fails as a plain decode fails.
func TestAnIntegerIsRefusedOnlyWhereAFloatWouldRoundIt(t *testing.T) {
	answer := []byte(`{"id": "12345678901234567890", "b": {"x": 1.5, "n": 9007199254740993}, "a": 10000000000000000}`)
	out := map[string]any{"kept": true}
	refused(t, decodeExact(answer, &out, "getReport"), "b.n", "9007199254740993", "; ReportArrow answers it exactly as int64")
	if !reflect.DeepEqual(out, map[string]any{"kept": true}) {
		t.Fatalf("out changed to %v", out)
	}
	var anything any
	refused(t, decodeExact(answer, &anything, "listMovements"), "b.n", "9007199254740993", "; MovementsArrow answers it exactly as int64")
	if anything != nil {
		t.Fatalf("out changed to %v", anything)
	}
	// 10^16 is a float64 exactly, but a float64 beyond 2^53 does not show it.
	var floats struct {
		B struct{ N int64 } `json:"b"`
		A *float64          `json:"a"`
	}
	refused(t, decodeExact(answer, &floats, "getAnalyticsCustomer"), "a", "10000000000000000", "")
	var table TableReport
	refused(t, decodeExact([]byte(`{"columns": ["2024-01-01"], "rows": [{"metric": "m", "values": [null, -90071992547409930]}]}`), &table, "getReport"),
		"rows[0].values[1]", "-90071992547409930", "; ReportArrow answers it exactly as int64")
	var small struct{ Total float32 }
	refused(t, decodeExact([]byte(`{"total": 9007199254740992}`), &small, ""), "total", "9007199254740992", "")
	var unencodable struct{ Total unencodable }
	refused(t, decodeExact([]byte(`{"total": 9007199254740992}`), &unencodable, ""), "total", "9007199254740992", "")

	answer = []byte(`{"a": -9223372036854775808, "b": [18446744073709551615], "c": 9007199254740993, "d": 1e300, "skip": 99999999999999999}`)
	var typed struct {
		A int64
		B []uint64
		C json.Number
		D float64
	}
	if err := decodeExact(answer, &typed, "getReport"); err != nil {
		t.Fatal(err)
	}
	if typed.A != -9223372036854775808 || !reflect.DeepEqual(typed.B, []uint64{18446744073709551615}) ||
		typed.C != "9007199254740993" || typed.D != 1e300 {
		t.Fatalf("%+v", typed)
	}
	var raw json.RawMessage
	if err := decodeExact(answer, &raw, "getReport"); err != nil || string(raw) != string(answer) {
		t.Fatalf("%s %v", raw, err)
	}
	var summary SummaryReport
	err := decodeExact([]byte(`{"summary": {"mrr_current": 9223372036854775807}, "currency": "USD"}`), &summary, "getReport")
	if err != nil || summary.Summary.MRRCurrent != 9223372036854775807 {
		t.Fatalf("%+v %v", summary, err)
	}
	// An answer out cannot take fails with the decode's own error.
	err = decodeExact([]byte(`{"summary": {"mrr_current": 9223372036854775808}}`), &summary, "getReport")
	if e, ok := err.(*json.UnmarshalTypeError); !ok || e.Value != "number 9223372036854775808" {
		t.Fatalf("%#v", err)
	}
	var name struct{ Name string }
	err = decodeExact([]byte(`{"name": 99999999999999999}`), &name, "")
	if e, ok := err.(*json.UnmarshalTypeError); !ok || e.Value != "number" || e.Field != "Name" {
		t.Fatalf("%#v", err)
	}
	var total struct{ Total float64 }
	err = decodeExact([]byte(`{"total": 99999999999999999,}`), &total, "")
	if e, ok := err.(*json.SyntaxError); !ok || e.Offset != 29 {
		t.Fatalf("%#v", err)
	}
}

// unencodable decodes an int64 and does not encode.
type unencodable int64

func (u *unencodable) UnmarshalJSON(text []byte) error {
	return json.Unmarshal(text, (*int64)(u))
}

func (unencodable) MarshalJSON() ([]byte, error) { return nil, errors.New("not encodable") }
