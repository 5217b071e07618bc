package submetrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// maxExact is 2^53 - 1, the largest integer that, with every integer below
// it, a float64 holds exactly.
const maxExact = "9007199254740991"

// probeDigits are 2^53 + 1, the smallest positive integer a float64 rounds.
const probeDigits = "9007199254740993"

// exactElsewhere names, by operation, the call that answers the same
// integers exactly.
var exactElsewhere = map[string]string{"getReport": "ReportArrow", "listMovements": "MovementsArrow"}

// bigInteger is an integer of an answer beyond 2^53 - 1 either way: its
// digits as written, where they are written, and its path from the top of
// the answer (object keys as strings, array indices as ints).
type bigInteger struct {
	digits     string
	start, end int
	path       []any
}

// decodeExact decodes answer into out as json.Unmarshal does, except that
// an integer beyond 2^53 - 1 either way that out would receive as a
// float64 (a float64 or float32 field, a number in an any) is refused with
// an out_of_range Error naming the first such one by its place, even when
// that value happens to be one a float64 holds (beyond 2^53 a float64
// cannot tell 10000000000000000 from 10000000000000001); out is then left
// as it was. The integer passes into anything that holds it exactly: an
// int64 or uint64 field, a json.Number, a json.RawMessage, a type of the
// caller's whose UnmarshalJSON keeps it. One that out has no place for
// passes too, as it is not decoded. An out whose value does not encode
// back to JSON cannot show it holds them, and is refused the first. An
// answer out cannot take fails with the plain decode's error. Answers
// without sixteen digits in a row hold no such integer and are decoded at
// once.
//
// Which integers out would round is found by decoding a probe into a
// fresh value of out's type: the answer with each big integer replaced by
// 2^53 + 1 of its sign, which a float64 always rounds. That value is
// encoded back to JSON, and an integer is refused where the encoding holds
// anything but those digits (as a number or a string).
func decodeExact(answer []byte, out any, operation string) error {
	if !hasLongDigitRun(answer) {
		return json.Unmarshal(answer, out)
	}
	big := bigIntegers(answer)
	target := reflect.ValueOf(out)
	if len(big) == 0 || target.Kind() != reflect.Pointer || target.IsNil() {
		return json.Unmarshal(answer, out)
	}
	probed := reflect.New(target.Type().Elem())
	if json.Unmarshal(withProbes(answer, big), probed.Interface()) != nil {
		// The probes change no integer's sign, so the answer itself fails
		// too; its own error says why.
		return json.Unmarshal(answer, out)
	}
	echoed, err := encodeBack(probed.Interface())
	if err != nil {
		return big[0].refusal(operation)
	}
	for _, integer := range big {
		if value, present := valueAt(echoed, integer.path); present && !holds(value, integer.probe()) {
			return integer.refusal(operation)
		}
	}
	return json.Unmarshal(answer, out)
}

// probe is 2^53 + 1 with the integer's sign.
func (b bigInteger) probe() string {
	if strings.HasPrefix(b.digits, "-") {
		return "-" + probeDigits
	}
	return probeDigits
}

// refusal is the out_of_range error of the integer, naming the call that
// answers it exactly when the operation has one.
func (b bigInteger) refusal(operation string) *Error {
	place := placeOf(b.path)
	message := fmt.Sprintf("the answer's `%s` is %s, beyond %s (2^53 - 1), the largest integer a float64 holds exactly; "+
		"decode it into an int64 field or a json.Number", place, b.digits, maxExact)
	if call, ok := exactElsewhere[operation]; ok {
		message += "; " + call + " answers it exactly as int64"
	}
	return &Error{Message: message, Code: "out_of_range", Field: place}
}

// encodeBack is value encoded as JSON and decoded again, numbers as
// json.Number.
func encodeBack(value any) (any, error) {
	encoded, err := json.Marshal(value)
	if err != nil {
		return nil, err
	}
	var echoed any
	decoder := json.NewDecoder(bytes.NewReader(encoded))
	decoder.UseNumber()
	err = decoder.Decode(&echoed)
	return echoed, err
}

// holds reports whether value, read back from an encoding, is the probe's
// digits as a number or as a string.
func holds(value any, digits string) bool {
	switch value := value.(type) {
	case json.Number:
		return string(value) == digits
	case string:
		return value == digits
	}
	return false
}

// withProbes is answer with each big integer replaced by its probe.
func withProbes(answer []byte, big []bigInteger) []byte {
	probed := make([]byte, 0, len(answer))
	from := 0
	for _, integer := range big {
		probed = append(probed, answer[from:integer.start]...)
		probed = append(probed, integer.probe()...)
		from = integer.end
	}
	return append(probed, answer[from:]...)
}

// valueAt is the value at path in a decoded JSON value, and whether there
// is one. A key is matched exactly, else without regard to case (as
// encoding/json matches a struct's fields, which encode under their own
// spelling); of several such keys the first in sorted order.
func valueAt(value any, path []any) (any, bool) {
	for _, step := range path {
		switch step := step.(type) {
		case int:
			items, ok := value.([]any)
			if !ok || step >= len(items) {
				return nil, false
			}
			value = items[step]
		case string:
			members, ok := value.(map[string]any)
			if !ok {
				return nil, false
			}
			if value, ok = members[step]; !ok {
				key, found := foldedKey(members, step)
				if !found {
					return nil, false
				}
				value = members[key]
			}
		}
	}
	return value, true
}

// foldedKey is the key of members equal to name without regard to case
// that sorts first, and whether there is one.
func foldedKey(members map[string]any, name string) (string, bool) {
	first, found := "", false
	for key := range members {
		if strings.EqualFold(key, name) && (!found || key < first) {
			first, found = key, true
		}
	}
	return first, found
}

// hasLongDigitRun reports whether text has sixteen ASCII digits in a row:
// without them it holds no integer beyond 2^53 - 1.
func hasLongDigitRun(text []byte) bool {
	run := 0
	for _, char := range text {
		if char >= '0' && char <= '9' {
			run++
		} else {
			run = 0
		}
		if run == 16 {
			return true
		}
	}
	return false
}

// frame is where a scan is inside an array (the index of the current
// item) or an object (the current key as written, quotes and escapes
// included).
type frame struct {
	inArray bool
	index   int
	key     []byte
}

// bigIntegers are the integers of the JSON text beyond 2^53 - 1 either way,
// in the order they are written, found in one pass that skips strings
// whole. Numbers with a fraction or an exponent are floats and pass.
func bigIntegers(text []byte) []bigInteger {
	var found []bigInteger
	var frames []frame
	keyNext := false
	for at := 0; at < len(text); {
		switch char := text[at]; {
		case char == '"':
			end := stringEnd(text, at+1)
			if top := len(frames) - 1; keyNext && top >= 0 && !frames[top].inArray {
				frames[top].key = text[at:end]
				keyNext = false
			}
			at = end
		case char == '-' || (char >= '0' && char <= '9'):
			start := at
			for at < len(text) && strings.IndexByte("-+.eE0123456789", text[at]) >= 0 {
				at++
			}
			if token := string(text[start:at]); isBigInteger(token) {
				found = append(found, bigInteger{digits: token, start: start, end: at, path: pathAt(frames)})
			}
		case char == '{' || char == '[':
			frames = append(frames, frame{inArray: char == '['})
			keyNext = char == '{'
			at++
		case char == '}' || char == ']':
			if len(frames) > 0 {
				frames = frames[:len(frames)-1]
			}
			at++
		case char == ',':
			if top := len(frames) - 1; top >= 0 && frames[top].inArray {
				frames[top].index++
			} else if top >= 0 {
				keyNext = true
			}
			at++
		default:
			at++
		}
	}
	return found
}

// stringEnd is the position just past the closing quote of the string
// whose text starts at at.
func stringEnd(text []byte, at int) int {
	for at < len(text) {
		switch text[at] {
		case '\\':
			at += 2
		case '"':
			return at + 1
		default:
			at++
		}
	}
	return len(text)
}

// isBigInteger reports whether a JSON number token is an integer beyond
// 2^53 - 1 either way. JSON writes no leading zeros, so seventeen digits
// always are, and sixteen compare as text.
func isBigInteger(token string) bool {
	digits := strings.TrimPrefix(token, "-")
	if len(digits) < len(maxExact) || strings.Trim(digits, "0123456789") != "" {
		return false
	}
	return len(digits) > len(maxExact) || digits > maxExact
}

// pathAt is the path the frames describe, keys decoded.
func pathAt(frames []frame) []any {
	path := make([]any, len(frames))
	for i, f := range frames {
		if f.inArray {
			path[i] = f.index
			continue
		}
		var key string
		_ = json.Unmarshal(f.key, &key) // a key the scan found is a whole JSON string
		path[i] = key
	}
	return path
}

// placeOf writes a path as the error names it: `.key` for a key of
// letters, digits, `_` and `$` not starting with a digit, `["key"]` (the
// key as a JSON string) for any other, `[index]` in arrays; as in
// summary.mrr_current, result[3].new, ["by plan"]["a\"b"][2].
func placeOf(path []any) string {
	var place strings.Builder
	for _, step := range path {
		switch step := step.(type) {
		case int:
			fmt.Fprintf(&place, "[%d]", step)
		case string:
			if isPlainName(step) {
				if place.Len() > 0 {
					place.WriteByte('.')
				}
				place.WriteString(step)
				continue
			}
			var quoted bytes.Buffer
			encoder := json.NewEncoder(&quoted)
			encoder.SetEscapeHTML(false)
			_ = encoder.Encode(step) // a string always encodes
			fmt.Fprintf(&place, "[%s]", bytes.TrimSuffix(quoted.Bytes(), []byte("\n")))
		}
	}
	return place.String()
}

// isPlainName reports whether a place writes name after a dot.
func isPlainName(name string) bool {
	for i, char := range name {
		letter := char == '_' || char == '$' || (char >= 'a' && char <= 'z') || (char >= 'A' && char <= 'Z')
		if !letter && (i == 0 || char < '0' || char > '9') {
			return false
		}
	}
	return name != ""
}
