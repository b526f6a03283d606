package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzCheckBlob checks CheckBlob's contract on any fields: it never
// panics; what it refuses wraps ErrBlobInvalid (or ErrBlobTooLarge); what
// it accepts has valid keys, a file name without a path, Size and SHA256
// of its data, a UTC CreatedAt and non-nil Data.
func FuzzCheckBlob(f *testing.F) {
	f.Add("org", "id", "owner", "conv", "a.pdf", "application/pdf", int64(0), "", []byte("%PDF"))
	f.Add("org", "id", "owner", "", "notes «1».txt", "text/plain; charset=utf-8", int64(3), "", []byte("abc"))
	f.Add("o\x00", "id", "owner", "", "a", "text/plain", int64(0), "", []byte(nil))
	f.Add("org", "id", "owner", "c\xff", "../x", "pdf", int64(9), strings.Repeat("0", 64), []byte{0, 0xff})
	f.Fuzz(func(t *testing.T, org, id, owner, conv, name, mediaType string, size int64, digest string, data []byte) {
		in := Blob{OrgID: org, ID: id, OwnerID: owner, ConversationID: conv, Name: name, MediaType: mediaType,
			Size: size, SHA256: digest, CreatedAt: time.Unix(1, 0).In(time.FixedZone("x", 3600)), Data: data}
		got, err := CheckBlob(in)
		if err != nil {
			if !errors.Is(err, ErrBlobInvalid) && !errors.Is(err, ErrBlobTooLarge) {
				t.Fatalf("CheckBlob refused with %v, which wraps neither ErrBlobInvalid nor ErrBlobTooLarge", err)
			}
			return
		}
		for _, k := range []string{got.OrgID, got.ID, got.OwnerID, got.ConversationID} {
			if !ValidBlobKey(k) {
				t.Errorf("accepted key %q", k)
			}
		}
		if got.OrgID == "" || got.ID == "" || got.OwnerID == "" {
			t.Errorf("accepted an empty key: %+v", got)
		}
		if !utf8.ValidString(got.Name) || strings.ContainsAny(got.Name, "/\\\x00\n") || got.Name == "" {
			t.Errorf("accepted name %q", got.Name)
		}
		sum := sha256.Sum256(data)
		if got.Size != int64(len(data)) || got.SHA256 != hex.EncodeToString(sum[:]) || got.Data == nil {
			t.Errorf("accepted blob has Size %d, SHA256 %s, nil data %t; want %d, the data's digest, non-nil",
				got.Size, got.SHA256, got.Data == nil, len(data))
		}
		if got.CreatedAt.Location() != time.UTC || !got.CreatedAt.Equal(in.CreatedAt) {
			t.Errorf("CreatedAt = %v, want %v in UTC", got.CreatedAt, in.CreatedAt)
		}
	})
}
