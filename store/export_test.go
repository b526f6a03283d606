package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// TestArchiveColumnCheck: a value passes only as its kind's Go type and
// rules, NULL only where the column allows it.
func TestArchiveColumnCheck(t *testing.T) {
	col := func(k store.ColumnKind, null bool) store.ArchiveColumn {
		return store.ArchiveColumn{Name: "c", Kind: k, Null: null}
	}
	tests := []struct {
		name string
		c    store.ArchiveColumn
		v    any
		want string // "" for none
	}{
		{"Text", col(store.KindText, false), "héllo", ""},
		{"TextNUL", col(store.KindText, false), "a\x00b", "not valid UTF-8 or holds a NUL"},
		{"TextInvalid", col(store.KindText, false), "a\xffb", "not valid UTF-8 or holds a NUL"},
		{"NullAllowed", col(store.KindTime, true), nil, ""},
		{"NullRefused", col(store.KindTime, false), nil, "NULL where a value is required"},
		{"Bytes", col(store.KindBytes, false), []byte{0, 0xff}, ""},
		{"BytesNil", col(store.KindBytes, false), []byte(nil), "is not a bytes value"},
		{"IntAsInt", col(store.KindInt, false), 3, "a int is not a int value"},
		{"Bool", col(store.KindBool, false), true, ""},
		{"TimeUTC", col(store.KindTime, false), time.Unix(0, 0).UTC(), ""},
		{"TimeLocal", col(store.KindTime, false), time.Unix(0, 0).In(time.FixedZone("X", 3600)), "is not a time value"},
		{"JSON", col(store.KindJSON, true), `[{"name":"a","reason":"\u0000"}]`, ""},
		{"JSONInvalid", col(store.KindJSON, true), `[{`, "not one JSON value"},
		{"Names", col(store.KindNames, false), []string{}, ""},
		{"NamesNil", col(store.KindNames, false), []string(nil), "is not a names value"},
		{"NamesBad", col(store.KindNames, false), []string{"ok", "x\x00"}, "holds a NUL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.c.Check(tc.v)
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Check(%#v) = %v; want %q", tc.v, err, tc.want)
			}
		})
	}
}
