package turnstream

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// streamOf is a Stream over body, as a response would give it.
func streamOf(body string) *Stream {
	return New(&http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader(body))})
}

// TestStreamReadsEvents: ids, names and data come back per event, a
// comment (the heartbeat) is skipped, data on several lines is joined,
// and the turn's text and stop are gathered.
func TestStreamReadsEvents(t *testing.T) {
	s := streamOf(": keep-alive\n\n" +
		"id: 1\nevent: text\ndata: {\"type\":\"text\",\"turn_id\":\"t1\",\"text\":\"he\"}\n\n" +
		": keep-alive\n\n" +
		"id: 2\nevent: text\ndata: {\"type\":\"text\",\n" + "data: \"turn_id\":\"t1\",\"text\":\"llo\"}\n\n" +
		"id: 3\nevent: done\ndata: {\"type\":\"done\",\"turn_id\":\"t1\",\"stop\":\"end\"}\n\n")
	turn, err := s.ReadTurn()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range turn.Events {
		ids = append(ids, e.ID+"/"+e.Name)
	}
	if diff := cmp.Diff([]string{"1/text", "2/text", "3/done"}, ids); diff != "" {
		t.Errorf("ids/names (-want +got):\n%s", diff)
	}
	if turn.ID != "t1" || turn.Text != "hello" || turn.Stop != "end" {
		t.Errorf("turn %q, text %q, stop %q", turn.ID, turn.Text, turn.Stop)
	}
	if string(turn.Events[1].Data) != "{\"type\":\"text\",\n\"turn_id\":\"t1\",\"text\":\"llo\"}" {
		t.Errorf("joined data %q", turn.Events[1].Data)
	}
}

// TestStreamReportsBrokenTurns: a stream cut inside an event, one that
// ends without done, and an error event are each an error, with the
// events before them kept.
func TestStreamReportsBrokenTurns(t *testing.T) {
	text := "id: 1\nevent: text\ndata: {\"type\":\"text\",\"text\":\"a\"}\n\n"
	tests := []struct {
		name, body, want string
		events           int
	}{
		{"cut inside an event", text + "id: 2\nevent: text\ndata: {\"type\":", "unexpected EOF", 1},
		{"no done", text, "ended without done", 1},
		{"error event", text + "id: 2\nevent: error\ndata: {\"type\":\"error\",\"error\":\"model down\"}\n\n", "model down", 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			turn, err := streamOf(tc.body).ReadTurn()
			if err == nil || !strings.Contains(err.Error(), tc.want) || len(turn.Events) != tc.events {
				t.Errorf("err %v, %d events; want an error saying %q after %d", err, len(turn.Events), tc.want, tc.events)
			}
		})
	}
	if _, err := streamOf("").Next(); !errors.Is(err, io.EOF) {
		t.Errorf("an empty stream: %v, want io.EOF", err)
	}
}
