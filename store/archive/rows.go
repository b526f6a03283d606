package archive

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/quiverhq/quiver/store"
)

// timeLayout is how a time is written: RFC 3339 in UTC with nanoseconds,
// fixed width. SQLite keeps nanoseconds, so a SQLite archive restored into
// SQLite loses none; PostgreSQL keeps microseconds (its values end in
// 000), and truncates an imported time to them, as it does every time the
// store writes.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// encodeRow returns row as one line: a JSON object with t's column names
// as keys in t's order, then a newline. Each kind is written as:
//
//	text, json   a JSON string (a json column's text, byte for byte)
//	bytes        a JSON string, standard base64 with padding
//	int          a JSON number
//	bool         true or false
//	time         a JSON string, timeLayout
//	names        a JSON array of strings
//	NULL         null
//
// A row that fails t.CheckRow, or whose line would pass MaxLineBytes, is
// refused: every line written must import.
func encodeRow(buf *bytes.Buffer, t store.ArchiveTable, row []any) error {
	if err := t.CheckRow(row); err != nil {
		return fmt.Errorf("%w (the row with key %s)", err, keyOf(t, row))
	}
	start := buf.Len()
	buf.WriteByte('{')
	for i, c := range t.Columns {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString(strconv.Quote(c.Name)) // column names are ASCII
		buf.WriteByte(':')
		if err := encodeValue(buf, row[i]); err != nil {
			return fmt.Errorf("table %s: column %s: %w", t.Name, c.Name, err)
		}
	}
	buf.WriteString("}\n")
	if n := buf.Len() - start - 1; n > MaxLineBytes {
		return fmt.Errorf("table %s: a row of %d bytes archived; the limit is %d", t.Name, n, MaxLineBytes)
	}
	return nil
}

// keyOf names a row by its key's values, for an error.
func keyOf(t store.ArchiveTable, row []any) string {
	var parts []string
	for _, k := range t.Key {
		for i, c := range t.Columns {
			if c.Name == k && i < len(row) {
				parts = append(parts, fmt.Sprintf("%s=%q", k, fmt.Sprint(row[i])))
			}
		}
	}
	return strings.Join(parts, ", ")
}

// encodeValue writes one checked value.
func encodeValue(buf *bytes.Buffer, v any) error {
	var b []byte
	var err error
	switch v := v.(type) {
	case nil:
		b = []byte("null")
	case []byte:
		b, err = json.Marshal(base64.StdEncoding.EncodeToString(v))
	case time.Time:
		b, err = json.Marshal(v.UTC().Format(timeLayout))
	default: // string, int64, bool, []string
		b, err = json.Marshal(v)
	}
	buf.Write(b)
	return err
}

// decodeRow parses one line of t into a row whose values pass t.CheckRow.
// The line must be valid UTF-8 (JSON's decoder would replace bad bytes
// silently) and name each of t's columns once and nothing else.
func decodeRow(t store.ArchiveTable, line []byte) ([]any, error) {
	if !utf8.Valid(line) {
		return nil, fmt.Errorf("table %s: a line that is not UTF-8", t.Name)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return nil, fmt.Errorf("table %s: a line that is not a JSON object: %w", t.Name, err)
	}
	row := make([]any, len(t.Columns))
	var missing []int
	for i, c := range t.Columns {
		raw, ok := obj[c.Name]
		if !ok && c.Fill != nil {
			missing = append(missing, i)
			continue
		}
		if !ok {
			return nil, fmt.Errorf("table %s: a row without column %s (an archive of an older schema, which this build cannot fill in)", t.Name, c.Name)
		}
		v, err := decodeValue(c.Kind, raw)
		if err != nil {
			return nil, fmt.Errorf("table %s: column %s: %w", t.Name, c.Name, err)
		}
		row[i] = v
	}
	for _, i := range missing {
		row[i] = t.Columns[i].Fill(t, row)
	}
	if len(obj)+len(missing) != len(t.Columns) {
		for k := range obj {
			if !hasColumn(t, k) {
				return nil, fmt.Errorf("table %s: unknown column %q", t.Name, k)
			}
		}
	}
	if err := t.CheckRow(row); err != nil {
		return nil, err
	}
	return row, nil
}

// hasColumn reports whether t has a column named name.
func hasColumn(t store.ArchiveTable, name string) bool {
	for _, c := range t.Columns {
		if c.Name == name {
			return true
		}
	}
	return false
}

// decodeValue parses one value of kind; null is nil (CheckRow then says
// whether the column allows it).
func decodeValue(kind store.ColumnKind, raw json.RawMessage) (any, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	switch kind {
	case store.KindText, store.KindJSON:
		return decodeString(raw)
	case store.KindBytes:
		s, err := decodeString(raw)
		if err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.Strict().DecodeString(s)
		if err != nil {
			return nil, errors.New("bytes that are not base64")
		}
		if b == nil {
			b = []byte{}
		}
		return b, nil
	case store.KindInt:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return nil, errors.New("not an integer")
		}
		return n, nil
	case store.KindBool:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return nil, errors.New("not true or false")
		}
		return b, nil
	case store.KindTime:
		return decodeTime(raw)
	case store.KindNames:
		names := []string{}
		if err := json.Unmarshal(raw, &names); err != nil || names == nil {
			return nil, errors.New("not an array of strings")
		}
		return names, nil
	}
	return nil, fmt.Errorf("unknown kind %s", kind)
}

// decodeString parses a JSON string. raw comes from a line that decoded
// as a whole, so a string without an escape is its bytes between the
// quotes.
func decodeString(raw json.RawMessage) (string, error) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : n-1]), nil
	}
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", errors.New("not a string")
	}
	return s, nil
}

// decodeTime parses an RFC 3339 time into UTC.
func decodeTime(raw json.RawMessage) (time.Time, error) {
	s, err := decodeString(raw)
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errors.New("not an RFC 3339 time")
	}
	return t.UTC(), nil
}
