package webui_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// csvCase is one input of TestArtifactCSVParser: text, and the records it
// holds (nil: arbitrary text, whose records are not known).
type csvCase struct {
	Text    string     `json:"text"`
	Records [][]string `json:"records"`
}

// csvRecords makes n random records of 1 to 5 fields drawn from letters,
// commas, quotes, line breaks, spaces and a non-ASCII letter, encoded
// with quotes where a field needs them (and sometimes where it does
// not), records ended by LF or CRLF and the last one sometimes not at
// all.
func csvRecords(r *rand.Rand, n int) csvCase {
	const alphabet = "ab,\"\n\r é"
	var text strings.Builder
	var records [][]string
	for i := range n {
		var rec []string
		for range 1 + r.IntN(5) {
			var f strings.Builder
			for range r.IntN(6) {
				f.WriteByte(alphabet[r.IntN(len(alphabet)-2)]) // ASCII only: bytes are runes
			}
			if r.IntN(6) == 0 {
				f.WriteString("é")
			}
			rec = append(rec, f.String())
		}
		if len(rec) == 1 && rec[0] == "" {
			rec[0] = "x" // an empty line is no record
		}
		for k, f := range rec {
			if k > 0 {
				text.WriteByte(',')
			}
			if strings.ContainsAny(f, ",\"\r\n") || r.IntN(4) == 0 {
				f = `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
			}
			text.WriteString(f)
		}
		if i < n-1 || r.IntN(2) == 0 {
			text.WriteString([]string{"\n", "\r\n"}[r.IntN(2)])
		}
		records = append(records, rec)
	}
	return csvCase{Text: text.String(), Records: records}
}

// TestArtifactCSVParser runs the panel's CSV parser (artifacts.js'
// parseCSV) in the page on 200 random encodings, each of which it must
// read back record for record, with keep bounding the records returned
// but not the count; and on 200 random strings of the same characters,
// which it must read without failing, within keep.
func TestArtifactCSVParser(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 26))
	var cases []csvCase
	for range 200 {
		cases = append(cases, csvRecords(r, 1+r.IntN(8)))
	}
	for range 200 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = "ab,\"\n\r "[r.IntN(7)]
		}
		cases = append(cases, csvCase{Text: string(b)})
	}
	cases = append(cases, csvCase{Text: "\ufeffa,b\n\n\nc,d\n", Records: [][]string{{"a", "b"}, {"c", "d"}}},
		csvCase{Text: "a,\"b\nc", Records: [][]string{{"a", "b\nc"}}}, // an unclosed quote runs to the end
		csvCase{Text: "x\"y\",z\r\r", Records: [][]string{{"x\"y\"", "z"}}})
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, newStubAPI())
	b.login()
	type outcome struct {
		Rows  [][]string `json:"rows"`
		Total int        `json:"total"`
		Kept  int        `json:"kept"`
		Error string     `json:"error"`
	}
	got := eval[[]outcome](b, fmt.Sprintf(`import('/assets/js/artifacts.js').then((m) => %s.map((c) => {
		try {
			const all = m.parseCSV(c.text, 1e9);
			return { rows: all.rows, total: all.total, kept: m.parseCSV(c.text, 2).rows.length, error: '' };
		} catch (e) { return { rows: [], total: 0, kept: 0, error: String(e) }; }
	}))`, in), chromedp.EvalAwaitPromise)
	if len(got) != len(cases) {
		t.Fatalf("%d outcomes for %d cases", len(got), len(cases))
	}
	for i, c := range cases {
		o := got[i]
		switch {
		case o.Error != "":
			t.Errorf("%q: %s", c.Text, o.Error)
		case o.Total != len(o.Rows) || o.Kept != min(2, o.Total):
			t.Errorf("%q: %d records, %d counted, %d kept of 2", c.Text, len(o.Rows), o.Total, o.Kept)
		case c.Records != nil:
			if d := cmp.Diff(c.Records, o.Rows); d != "" {
				t.Errorf("%q (-want +got):\n%s", c.Text, d)
			}
		}
		for _, row := range o.Rows {
			if len(row) == 0 {
				t.Errorf("%q: a record of no fields", c.Text)
			}
		}
	}
}
