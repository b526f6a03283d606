package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quiverhq/quiver/store"
)

// blobCases checks the Blobs repository.
func blobCases() []suiteCase {
	return []suiteCase{
		{"RoundTrip", testBlobRoundTrip},
		{"TooLarge", testBlobTooLarge},
		{"Invalid", testBlobInvalid},
		{"DuplicateID", testBlobDuplicateID},
		{"ConcurrentSameID", testBlobConcurrentSameID},
		{"Scoping", testBlobScoping},
		{"OddKeysFindNothing", testBlobOddKeys},
		{"ListOrderAndPaging", testBlobListOrder},
		{"PageBounds", testBlobPageBounds},
		{"Usage", testBlobUsage},
		{"Delete", testBlobDelete},
		{"DeleteConversation", testBlobDeleteConversation},
		{"Quota", testBlobQuota},
		{"ConcurrentQuota", testBlobConcurrentQuota},
		{"Cancelled", testBlobCancelled},
	}
}

// oddBytes is content no text column would keep: NUL bytes, invalid
// UTF-8, a lone continuation byte, CR LF, and a valid multi-byte rune.
var oddBytes = []byte("\x00head\x00\xff\xfe\x80 «ß» 🙂\r\n\x00\xc3\x28tail\x00")

// newBlob returns a blob with every caller-set field set, in the
// fixture's organisation "org", owned by "owner", in conversation "conv".
func (f *fixture) newBlob(id string, data []byte) store.Blob {
	return store.Blob{
		OrgID:          f.id("org"),
		ID:             f.id(id),
		OwnerID:        f.id("owner"),
		ConversationID: f.id("conv"),
		Name:           "report «final».pdf",
		MediaType:      "application/pdf",
		CreatedAt:      at(20),
		Data:           data,
	}
}

// putBlob stores b without a quota and returns it as stored, failing the
// test on error.
func (f *fixture) putBlob(t *testing.T, b store.Blob) store.Blob {
	t.Helper()
	got, err := f.PutBlob(t.Context(), b, store.BlobQuota{})
	if err != nil {
		t.Fatalf("PutBlob %s: %v", b.ID, err)
	}
	return got
}

// stored returns b as the store should give it back from StatBlob: Size
// and SHA256 of its data, CreatedAt in UTC, no Data.
func stored(b store.Blob) store.Blob {
	sum := sha256.Sum256(b.Data)
	b.Size, b.SHA256, b.CreatedAt, b.Data = int64(len(b.Data)), hex.EncodeToString(sum[:]), b.CreatedAt.UTC(), nil
	return b
}

// wantNoBlob fails unless the organisation holds no blob with that ID.
func (f *fixture) wantNoBlob(t *testing.T, what, orgID, id string) {
	t.Helper()
	got, err := f.StatBlob(t.Context(), orgID, id)
	wantNotFound(t, what+": StatBlob", err)
	if d := diff(store.Blob{}, got); d != "" {
		t.Errorf("%s: StatBlob revealed a blob (-want +got):\n%s", what, d)
	}
	_, err = f.GetBlob(t.Context(), orgID, id)
	wantNotFound(t, what+": GetBlob", err)
}

// usage returns the owner's usage, failing the test on error.
func (f *fixture) usage(t *testing.T, orgID, ownerID string) store.BlobUsage {
	t.Helper()
	u, err := f.BlobUsage(t.Context(), orgID, ownerID)
	if err != nil {
		t.Fatalf("BlobUsage: %v", err)
	}
	return u
}

func testBlobRoundTrip(t *testing.T, f *fixture) {
	tests := []struct {
		name string
		edit func(*store.Blob)
	}{
		{"AllFields", func(*store.Blob) {}},
		{"NULAndInvalidUTF8", func(b *store.Blob) { b.Data = oddBytes }},
		{"Empty", func(b *store.Blob) { b.Data = []byte{} }},
		{"NilData", func(b *store.Blob) { b.Data = nil }},
		{"EveryByte", func(b *store.Blob) {
			b.Data = make([]byte, 256*4)
			for i := range b.Data {
				b.Data[i] = byte(i)
			}
		}},
		{"NoConversation", func(b *store.Blob) { b.ConversationID = "" }},
		{"MediaTypeWithParameters", func(b *store.Blob) { b.MediaType = `text/csv; charset=utf-8; header=present` }},
		{"GivenSizeAndDigest", func(b *store.Blob) { b.Size, b.SHA256 = stored(*b).Size, stored(*b).SHA256 }},
		{"AtTheCap", func(b *store.Blob) { b.Data = bytes.Repeat([]byte{0, 0xff, 'q', 0x80}, store.MaxBlobBytes/4) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := f.newBlob(tc.name, []byte("%PDF-1.7\n\x00\x01 body\n"))
			tc.edit(&in)
			want := stored(in)
			put := f.putBlob(t, in)
			if d := diff(want, put); d != "" {
				t.Errorf("PutBlob returned (-want +got):\n%s", d)
			}
			got, err := f.GetBlob(t.Context(), in.OrgID, in.ID)
			if err != nil {
				t.Fatalf("GetBlob: %v", err)
			}
			if got.Data == nil || !bytes.Equal(got.Data, in.Data) {
				t.Errorf("GetBlob data differs: %d bytes (nil %t), want %d bytes byte for byte",
					len(got.Data), got.Data == nil, len(in.Data))
			}
			got.Data = nil
			if d := diff(want, got); d != "" {
				t.Errorf("GetBlob mismatch (-want +got):\n%s", d)
			}
			stat, err := f.StatBlob(t.Context(), in.OrgID, in.ID)
			if err != nil {
				t.Fatalf("StatBlob: %v", err)
			}
			if d := diff(want, stat); d != "" || stat.Data != nil {
				t.Errorf("StatBlob mismatch (data nil: %t) (-want +got):\n%s", stat.Data == nil, d)
			}
			wantUTC(t, "CreatedAt", put.CreatedAt, got.CreatedAt, stat.CreatedAt)
		})
	}
}

// testBlobTooLarge checks that a blob one byte over store.MaxBlobBytes is
// refused with ErrBlobTooLarge and leaves no trace: no blob, no usage, no
// list entry.
func testBlobTooLarge(t *testing.T, f *fixture) {
	if store.MaxBlobBytes > 64<<20 {
		t.Fatalf("store.MaxBlobBytes = %d, want at most 64 MiB: every replica reads a blob whole", store.MaxBlobBytes)
	}
	b := f.newBlob("big", bytes.Repeat([]byte{'x'}, store.MaxBlobBytes+1))
	_, err := f.PutBlob(t.Context(), b, store.BlobQuota{})
	if !errors.Is(err, store.ErrBlobTooLarge) {
		t.Fatalf("PutBlob of %d bytes: err = %v, want store.ErrBlobTooLarge", len(b.Data), err)
	}
	if msg := err.Error(); !strings.Contains(msg, fmt.Sprint(store.MaxBlobBytes+1)) || !strings.Contains(msg, fmt.Sprint(store.MaxBlobBytes)) {
		t.Errorf("PutBlob error %q does not give the size and the limit", msg)
	}
	f.wantNoBlob(t, "after a refused PutBlob", b.OrgID, b.ID)
	if u := f.usage(t, b.OrgID, b.OwnerID); u != (store.BlobUsage{}) {
		t.Errorf("BlobUsage after a refused PutBlob = %+v, want none", u)
	}
	l, err := f.ListOwnerBlobs(t.Context(), b.OrgID, b.OwnerID, store.BlobPage{})
	if err != nil || len(l.Blobs) != 0 {
		t.Errorf("ListOwnerBlobs after a refused PutBlob = %+v, %v; want none", l, err)
	}
}

// testBlobInvalid checks that every rule of store.CheckBlob is kept by the
// store, with ErrBlobInvalid and nothing written.
func testBlobInvalid(t *testing.T, f *fixture) {
	tests := []struct {
		name string
		edit func(*store.Blob)
	}{
		{"EmptyOrg", func(b *store.Blob) { b.OrgID = "" }},
		{"EmptyID", func(b *store.Blob) { b.ID = "" }},
		{"EmptyOwner", func(b *store.Blob) { b.OwnerID = "" }},
		{"NULInID", func(b *store.Blob) { b.ID += "\x00x" }},
		{"InvalidUTF8Owner", func(b *store.Blob) { b.OwnerID += "\xff" }},
		{"NULInConversation", func(b *store.Blob) { b.ConversationID += "\x00" }},
		{"LongID", func(b *store.Blob) { b.ID = strings.Repeat("i", store.MaxBlobKeyBytes+1) }},
		{"EmptyName", func(b *store.Blob) { b.Name = "" }},
		{"NameIsAPath", func(b *store.Blob) { b.Name = "../etc/passwd" }},
		{"NameWithBackslash", func(b *store.Blob) { b.Name = `a\b.txt` }},
		{"NameWithNewline", func(b *store.Blob) { b.Name = "a\nb.txt" }},
		{"NameNotUTF8", func(b *store.Blob) { b.Name = "a\xffb.txt" }},
		{"LongName", func(b *store.Blob) { b.Name = strings.Repeat("n", store.MaxBlobNameBytes+1) }},
		{"EmptyMediaType", func(b *store.Blob) { b.MediaType = "" }},
		{"BadMediaType", func(b *store.Blob) { b.MediaType = "pdf file" }},
		{"ZeroCreatedAt", func(b *store.Blob) { b.CreatedAt = time.Time{} }},
		{"WrongSize", func(b *store.Blob) { b.Size = int64(len(b.Data)) - 1 }},
		{"WrongDigest", func(b *store.Blob) { b.SHA256 = strings.Repeat("0", 64) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := f.newBlob(tc.name, []byte("content"))
			tc.edit(&b)
			_, err := f.PutBlob(t.Context(), b, store.BlobQuota{})
			if !errors.Is(err, store.ErrBlobInvalid) {
				t.Fatalf("PutBlob: err = %v, want store.ErrBlobInvalid", err)
			}
			if store.ValidBlobKey(b.OrgID) && store.ValidBlobKey(b.ID) {
				f.wantNoBlob(t, "after a refused PutBlob", b.OrgID, b.ID)
			}
			if u := f.usage(t, f.id("org"), f.id("owner")); u != (store.BlobUsage{}) {
				t.Errorf("BlobUsage after a refused PutBlob = %+v, want none", u)
			}
		})
	}
}

// testBlobDuplicateID checks that an ID taken in the organisation is
// refused with ErrExists and the stored blob left unchanged, while the
// same ID in another organisation is free.
func testBlobDuplicateID(t *testing.T, f *fixture) {
	first := f.newBlob("blob", []byte("first"))
	f.putBlob(t, first)
	tests := []struct {
		name string
		edit func(*store.Blob)
	}{
		{"Identical", func(*store.Blob) {}},
		{"OtherData", func(b *store.Blob) { b.Data = []byte("second, longer") }},
		{"OtherOwnerAndConversation", func(b *store.Blob) { b.OwnerID, b.ConversationID = f.id("other-owner"), f.id("other-conv") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dup := first
			tc.edit(&dup)
			_, err := f.PutBlob(t.Context(), dup, store.BlobQuota{})
			if !errors.Is(err, store.ErrExists) {
				t.Errorf("PutBlob with a taken ID: err = %v, want store.ErrExists", err)
			}
			got, err := f.GetBlob(t.Context(), first.OrgID, first.ID)
			if err != nil {
				t.Fatalf("GetBlob: %v", err)
			}
			if !bytes.Equal(got.Data, first.Data) || got.OwnerID != first.OwnerID {
				t.Errorf("refused PutBlob changed the stored blob: %+v", got)
			}
		})
	}
	if u := f.usage(t, first.OrgID, f.id("other-owner")); u != (store.BlobUsage{}) {
		t.Errorf("refused PutBlobs counted for their owner: %+v", u)
	}
	other := first
	other.OrgID, other.Data = f.id("other-org"), []byte("other org's")
	f.putBlob(t, other)
	got, err := f.GetBlob(t.Context(), first.OrgID, first.ID)
	if err != nil || !bytes.Equal(got.Data, first.Data) {
		t.Errorf("the same ID in another organisation changed this one: %q, %v", got.Data, err)
	}
}

// testBlobConcurrentSameID puts one ID from several goroutines at once:
// exactly one wins, the others get ErrExists, and the stored data is the
// winner's.
func testBlobConcurrentSameID(t *testing.T, f *fixture) {
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = f.PutBlob(t.Context(), f.newBlob("blob", fmt.Appendf(nil, "writer %d", i)), store.BlobQuota{})
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("writers %d and %d both stored the blob", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, store.ErrExists):
			t.Errorf("writer %d: err = %v, want nil or store.ErrExists", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer stored the blob")
	}
	b := f.newBlob("blob", nil)
	got, err := f.GetBlob(t.Context(), b.OrgID, b.ID)
	if want := fmt.Sprintf("writer %d", winner); err != nil || string(got.Data) != want {
		t.Errorf("GetBlob = %q, %v; want the winner's %q", got.Data, err, want)
	}
	if u := f.usage(t, b.OrgID, b.OwnerID); u.Count != 1 {
		t.Errorf("BlobUsage count = %d, want 1", u.Count)
	}
}

// testBlobScoping checks that another organisation sees nothing of a
// blob: not by ID, not in lists, not in usage, and cannot delete it.
func testBlobScoping(t *testing.T, f *fixture) {
	b := f.newBlob("blob", []byte("org A's secret"))
	f.putBlob(t, b)
	others := []struct{ name, org string }{
		{"OtherOrg", f.id("other-org")}, {"EmptyOrg", ""}, {"LongerOrg", b.OrgID + "x"}, {"UpperCaseOrg", strings.ToUpper(b.OrgID)},
	}
	for _, o := range others {
		org := o.org
		t.Run(o.name, func(t *testing.T) {
			f.wantNoBlob(t, "another organisation", org, b.ID)
			conv, err := f.ListConversationBlobs(t.Context(), org, b.ConversationID, store.BlobPage{})
			if err != nil || len(conv.Blobs) != 0 || conv.More {
				t.Errorf("ListConversationBlobs = %+v, %v; want none", conv, err)
			}
			own, err := f.ListOwnerBlobs(t.Context(), org, b.OwnerID, store.BlobPage{})
			if err != nil || len(own.Blobs) != 0 || own.More {
				t.Errorf("ListOwnerBlobs = %+v, %v; want none", own, err)
			}
			if u := f.usage(t, org, b.OwnerID); u != (store.BlobUsage{}) {
				t.Errorf("BlobUsage = %+v, want none", u)
			}
			wantNotFound(t, "DeleteBlob", f.DeleteBlob(t.Context(), org, b.ID))
			if n, err := f.DeleteConversationBlobs(t.Context(), org, b.ConversationID); err != nil || n != 0 {
				t.Errorf("DeleteConversationBlobs = %d, %v; want 0", n, err)
			}
		})
	}
	got, err := f.GetBlob(t.Context(), b.OrgID, b.ID)
	if err != nil || !bytes.Equal(got.Data, b.Data) {
		t.Errorf("the blob after other organisations' calls: %q, %v", got.Data, err)
	}
}

// testBlobOddKeys looks blobs up by keys PutBlob refuses (a NUL, invalid
// UTF-8, too long): every lookup finds nothing, with no other error.
func testBlobOddKeys(t *testing.T, f *fixture) {
	b := f.newBlob("blob", []byte("x"))
	f.putBlob(t, b)
	odd := []struct{ name, key string }{
		{"TrailingNUL", b.ID + "\x00"}, {"NUL", "\x00"}, {"InvalidUTF8", b.ID[:len(b.ID)-1] + "\xff"},
		{"TooLong", strings.Repeat("k", store.MaxBlobKeyBytes+1)},
	}
	for _, o := range odd {
		k := o.key
		t.Run(o.name, func(t *testing.T) {
			f.wantNoBlob(t, "an odd ID", b.OrgID, k)
			f.wantNoBlob(t, "an odd organisation", k, b.ID)
			wantNotFound(t, "DeleteBlob", f.DeleteBlob(t.Context(), b.OrgID, k))
			for name, list := range map[string]func(context.Context, string, string, store.BlobPage) (store.BlobList, error){
				"ListConversationBlobs": f.ListConversationBlobs, "ListOwnerBlobs": f.ListOwnerBlobs,
			} {
				if l, err := list(t.Context(), b.OrgID, k, store.BlobPage{}); err != nil || len(l.Blobs) != 0 {
					t.Errorf("%s by an odd key = %+v, %v; want none", name, l, err)
				}
				if l, err := list(t.Context(), k, b.OwnerID, store.BlobPage{}); err != nil || len(l.Blobs) != 0 {
					t.Errorf("%s in an odd organisation = %+v, %v; want none", name, l, err)
				}
			}
			if u, err := f.BlobUsage(t.Context(), b.OrgID, k); err != nil || u != (store.BlobUsage{}) {
				t.Errorf("BlobUsage of an odd owner = %+v, %v; want none", u, err)
			}
			if n, err := f.DeleteConversationBlobs(t.Context(), b.OrgID, k); err != nil || n != 0 {
				t.Errorf("DeleteConversationBlobs of an odd conversation = %d, %v; want 0", n, err)
			}
		})
	}
	if _, err := f.StatBlob(t.Context(), b.OrgID, b.ID); err != nil {
		t.Errorf("StatBlob of the blob after odd lookups: %v", err)
	}
}

// ids returns the IDs of blobs, in order.
func ids(blobs []store.Blob) []string {
	out := make([]string, len(blobs))
	for i, b := range blobs {
		out[i] = b.ID
	}
	return out
}

// collect lists every page of a list by pages of size, checking that each
// page but the last says More and that no blob comes with its data.
func collect(t *testing.T, size int, list func(store.BlobPage) (store.BlobList, error)) ([]store.Blob, int) {
	t.Helper()
	var all []store.Blob
	p := store.BlobPage{Limit: size}
	for pages := 1; ; pages++ {
		l, err := list(p)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		if len(l.Blobs) > size || (l.More && len(l.Blobs) != size) {
			t.Fatalf("page %d holds %d blobs, More %t; want %d per page", pages, len(l.Blobs), l.More, size)
		}
		for _, b := range l.Blobs {
			if b.Data != nil {
				t.Errorf("a list returned the data of %s", b.ID)
			}
		}
		all = append(all, l.Blobs...)
		if !l.More {
			return all, pages
		}
		last := l.Blobs[len(l.Blobs)-1]
		p.AfterCreatedAt, p.AfterID = last.CreatedAt, last.ID
		if pages > 100 {
			t.Fatal("more than 100 pages")
		}
	}
}

// testBlobListOrder lists a conversation's and an owner's blobs by pages:
// (CreatedAt, ID) order, oldest first, IDs breaking ties, every blob once,
// only those of that conversation or owner.
func testBlobListOrder(t *testing.T, f *fixture) {
	type spec struct {
		id, owner, conv string
		minute          int
	}
	specs := []spec{
		{"e", "owner", "conv", 30}, {"b", "owner", "conv", 10}, {"d", "owner", "conv", 20},
		{"a", "owner", "conv", 20}, {"g", "other-owner", "conv", 15}, {"c", "owner", "conv", 40},
		{"f", "owner", "other-conv", 5}, {"h", "owner", "", 25}, {"i", "owner", "conv", 20},
	}
	for _, s := range specs {
		b := f.newBlob(s.id, []byte(s.id))
		b.OwnerID, b.CreatedAt = f.id(s.owner), at(s.minute)
		if b.ConversationID = ""; s.conv != "" {
			b.ConversationID = f.id(s.conv)
		}
		f.putBlob(t, b)
	}
	want := func(names ...string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = f.id(n)
		}
		return out
	}
	tests := []struct {
		name  string
		list  func(store.BlobPage) (store.BlobList, error)
		want  []string
		pages int
	}{
		{"Conversation", func(p store.BlobPage) (store.BlobList, error) {
			return f.ListConversationBlobs(t.Context(), f.id("org"), f.id("conv"), p)
		}, want("b", "g", "a", "d", "i", "e", "c"), 3},
		{"Owner", func(p store.BlobPage) (store.BlobList, error) {
			return f.ListOwnerBlobs(t.Context(), f.id("org"), f.id("owner"), p)
		}, want("f", "b", "a", "d", "i", "h", "e", "c"), 3},
		{"NoConversation", func(p store.BlobPage) (store.BlobList, error) {
			return f.ListConversationBlobs(t.Context(), f.id("org"), "", p)
		}, nil, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, pages := collect(t, 3, tc.list)
			if d := diff(tc.want, ids(got)); d != "" {
				t.Errorf("listed IDs (-want +got):\n%s", d)
			}
			if pages != tc.pages {
				t.Errorf("listed in %d pages of 3, want %d", pages, tc.pages)
			}
			for _, b := range got {
				wantUTC(t, "CreatedAt", b.CreatedAt)
				if b.Size != 1 || b.Name == "" || b.SHA256 == "" {
					t.Errorf("listed %s without its fields: %+v", b.ID, b)
				}
			}
			all, err := tc.list(store.BlobPage{})
			if err != nil || all.More || len(all.Blobs) != len(tc.want) {
				t.Errorf("one page of the default size = %d blobs, More %t, %v; want %d", len(all.Blobs), all.More, err, len(tc.want))
			}
		})
	}
}

// testBlobPageBounds checks that a page holds at most store.MaxBlobPage
// blobs whatever Limit asks, and that a zero or negative Limit means that.
func testBlobPageBounds(t *testing.T, f *fixture) {
	n := store.MaxBlobPage + 1
	for i := range n {
		b := f.newBlob(fmt.Sprintf("b%04d", i), []byte{byte(i)})
		b.CreatedAt = at(0).Add(time.Duration(i) * time.Millisecond)
		f.putBlob(t, b)
	}
	for _, limit := range []int{0, -1, store.MaxBlobPage + 1, 1 << 30} {
		l, err := f.ListConversationBlobs(t.Context(), f.id("org"), f.id("conv"), store.BlobPage{Limit: limit})
		if err != nil || len(l.Blobs) != store.MaxBlobPage || !l.More {
			t.Errorf("Limit %d: %d blobs, More %t, %v; want %d and More", limit, len(l.Blobs), l.More, err, store.MaxBlobPage)
		}
	}
	l, err := f.ListOwnerBlobs(t.Context(), f.id("org"), f.id("owner"), store.BlobPage{Limit: 1})
	if err != nil || len(l.Blobs) != 1 || !l.More || l.Blobs[0].ID != f.id("b0000") {
		t.Errorf("Limit 1: %v, More %t, %v; want [b0000] and More", ids(l.Blobs), l.More, err)
	}
}

// testBlobUsage checks that usage sums the owner's blobs in the
// organisation, whatever their conversation, and follows deletes.
func testBlobUsage(t *testing.T, f *fixture) {
	org, owner := f.id("org"), f.id("owner")
	if u := f.usage(t, org, owner); u != (store.BlobUsage{}) {
		t.Fatalf("BlobUsage before any blob = %+v", u)
	}
	sizes := map[string]int{"a": 10, "b": 0, "c": 1000}
	for id, size := range sizes {
		b := f.newBlob(id, bytes.Repeat([]byte{0}, size))
		if id == "c" {
			b.ConversationID = ""
		}
		f.putBlob(t, b)
	}
	other := f.newBlob("other", bytes.Repeat([]byte{1}, 500))
	other.OwnerID = f.id("other-owner")
	f.putBlob(t, other)
	if got, want := f.usage(t, org, owner), (store.BlobUsage{Bytes: 1010, Count: 3}); got != want {
		t.Errorf("BlobUsage = %+v, want %+v", got, want)
	}
	if got, want := f.usage(t, org, other.OwnerID), (store.BlobUsage{Bytes: 500, Count: 1}); got != want {
		t.Errorf("BlobUsage of the other owner = %+v, want %+v", got, want)
	}
	if err := f.DeleteBlob(t.Context(), org, f.id("c")); err != nil {
		t.Fatalf("DeleteBlob: %v", err)
	}
	if got, want := f.usage(t, org, owner), (store.BlobUsage{Bytes: 10, Count: 2}); got != want {
		t.Errorf("BlobUsage after a delete = %+v, want %+v", got, want)
	}
}

// testBlobDelete checks that DeleteBlob removes that blob only, and that
// deleting it again is ErrNotFound.
func testBlobDelete(t *testing.T, f *fixture) {
	gone, kept := f.newBlob("gone", []byte("gone")), f.newBlob("kept", []byte("kept"))
	f.putBlob(t, gone)
	f.putBlob(t, kept)
	if err := f.DeleteBlob(t.Context(), gone.OrgID, gone.ID); err != nil {
		t.Fatalf("DeleteBlob: %v", err)
	}
	f.wantNoBlob(t, "after DeleteBlob", gone.OrgID, gone.ID)
	wantNotFound(t, "DeleteBlob again", f.DeleteBlob(t.Context(), gone.OrgID, gone.ID))
	if got, err := f.GetBlob(t.Context(), kept.OrgID, kept.ID); err != nil || string(got.Data) != "kept" {
		t.Errorf("the other blob after DeleteBlob: %q, %v", got.Data, err)
	}
	f.putBlob(t, gone) // the ID is free again
}

// testBlobDeleteConversation checks that DeleteConversationBlobs removes
// the conversation's blobs, whoever owns them, and nothing else.
func testBlobDeleteConversation(t *testing.T, f *fixture) {
	in1, in2 := f.newBlob("in1", []byte("1")), f.newBlob("in2", []byte("2"))
	in2.OwnerID = f.id("other-owner")
	out := f.newBlob("out", []byte("3"))
	out.ConversationID = f.id("other-conv")
	none := f.newBlob("none", []byte("4"))
	none.ConversationID = ""
	for _, b := range []store.Blob{in1, in2, out, none} {
		f.putBlob(t, b)
	}
	if n, err := f.DeleteConversationBlobs(t.Context(), in1.OrgID, ""); err != nil || n != 0 {
		t.Errorf("DeleteConversationBlobs of \"\" = %d, %v; want 0", n, err)
	}
	n, err := f.DeleteConversationBlobs(t.Context(), in1.OrgID, in1.ConversationID)
	if err != nil || n != 2 {
		t.Fatalf("DeleteConversationBlobs = %d, %v; want 2", n, err)
	}
	f.wantNoBlob(t, "a deleted conversation's blob", in1.OrgID, in1.ID)
	f.wantNoBlob(t, "a deleted conversation's blob of another owner", in2.OrgID, in2.ID)
	for _, b := range []store.Blob{out, none} {
		if _, err := f.StatBlob(t.Context(), b.OrgID, b.ID); err != nil {
			t.Errorf("StatBlob %s after deleting another conversation: %v", b.ID, err)
		}
	}
	if n, err := f.DeleteConversationBlobs(t.Context(), in1.OrgID, in1.ConversationID); err != nil || n != 0 {
		t.Errorf("DeleteConversationBlobs again = %d, %v; want 0", n, err)
	}
}

// testBlobQuota checks the byte and count quotas of PutBlob: a blob that
// reaches a quota exactly is stored, one past it refused with
// ErrBlobQuota and nothing written, another owner unaffected.
func testBlobQuota(t *testing.T, f *fixture) {
	q := store.BlobQuota{MaxBytes: 100, MaxCount: 3}
	put := func(id string, size int, owner string) error {
		b := f.newBlob(id, bytes.Repeat([]byte{'q'}, size))
		b.OwnerID = f.id(owner)
		_, err := f.PutBlob(t.Context(), b, q)
		return err
	}
	for _, s := range []struct {
		id, owner string
		size      int
		want      error
	}{
		{"a", "owner", 60, nil},
		{"b", "owner", 41, store.ErrBlobQuota}, // 101 bytes
		{"c", "owner", 40, nil},                // exactly 100
		{"d", "owner", 1, store.ErrBlobQuota},
		{"e", "owner", 0, nil}, // three blobs
		{"f", "owner", 0, store.ErrBlobQuota},
		{"g", "other-owner", 100, nil},
	} {
		if err := put(s.id, s.size, s.owner); !errors.Is(err, s.want) || (s.want == nil) != (err == nil) {
			t.Errorf("PutBlob %s (%d bytes): err = %v, want %v", s.id, s.size, err, s.want)
		}
		if s.want != nil {
			f.wantNoBlob(t, "a blob refused by the quota", f.id("org"), f.id(s.id))
		}
	}
	if got, want := f.usage(t, f.id("org"), f.id("owner")), (store.BlobUsage{Bytes: 100, Count: 3}); got != want {
		t.Errorf("BlobUsage = %+v, want %+v", got, want)
	}
}

// testBlobConcurrentQuota puts blobs for one owner from many goroutines
// at once against a quota that fits only some: exactly those are stored.
func testBlobConcurrentQuota(t *testing.T, f *fixture) {
	const writers, size, fits = 12, 100, 5
	q := store.BlobQuota{MaxBytes: fits * size}
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			_, errs[i] = f.PutBlob(t.Context(), f.newBlob(fmt.Sprint("w", i), bytes.Repeat([]byte{'c'}, size)), q)
		})
	}
	wg.Wait()
	ok := 0
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, store.ErrBlobQuota):
			t.Errorf("writer %d: err = %v, want nil or store.ErrBlobQuota", i, err)
		}
	}
	u := f.usage(t, f.id("org"), f.id("owner"))
	if ok != fits || u != (store.BlobUsage{Bytes: fits * size, Count: fits}) {
		t.Errorf("%d writers stored, usage %+v; want %d and %d bytes: the quota was raced", ok, u, fits, fits*size)
	}
}

// testBlobCancelled calls every Blobs method with a cancelled context:
// each fails with context.Canceled and nothing is written or deleted.
func testBlobCancelled(t *testing.T, f *fixture) {
	kept := f.newBlob("kept", []byte("kept"))
	f.putBlob(t, kept)
	fresh := f.newBlob("fresh", []byte("fresh"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	org, p := kept.OrgID, store.BlobPage{}
	calls := []call{
		{"PutBlob", func(ctx context.Context) error { _, err := f.PutBlob(ctx, fresh, store.BlobQuota{}); return err }},
		{"PutBlobWithQuota", func(ctx context.Context) error {
			_, err := f.PutBlob(ctx, fresh, store.BlobQuota{MaxBytes: 1 << 20})
			return err
		}},
		{"GetBlob", func(ctx context.Context) error { _, err := f.GetBlob(ctx, org, kept.ID); return err }},
		{"StatBlob", func(ctx context.Context) error { _, err := f.StatBlob(ctx, org, kept.ID); return err }},
		{"ListConversationBlobs", func(ctx context.Context) error {
			_, err := f.ListConversationBlobs(ctx, org, kept.ConversationID, p)
			return err
		}},
		{"ListOwnerBlobs", func(ctx context.Context) error { _, err := f.ListOwnerBlobs(ctx, org, kept.OwnerID, p); return err }},
		{"DeleteBlob", func(ctx context.Context) error { return f.DeleteBlob(ctx, org, kept.ID) }},
		{"DeleteConversationBlobs", func(ctx context.Context) error {
			_, err := f.DeleteConversationBlobs(ctx, org, kept.ConversationID)
			return err
		}},
		{"BlobUsage", func(ctx context.Context) error { _, err := f.BlobUsage(ctx, org, kept.OwnerID); return err }},
	}
	for _, c := range calls {
		if err := c.call(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: err = %v, want context.Canceled", c.name, err)
		}
	}
	f.wantNoBlob(t, "after a cancelled PutBlob", fresh.OrgID, fresh.ID)
	if got, err := f.GetBlob(t.Context(), org, kept.ID); err != nil || string(got.Data) != "kept" {
		t.Errorf("the blob after cancelled deletes: %q, %v", got.Data, err)
	}
}
