package postgres

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quiverhq/quiver/store"
)

// Seqs. message_counters holds, per conversation, the last Seq handed
// out. An append increments the counter row and inserts the message in
// one transaction: the row's lock queues appends to one conversation
// (and only to that one) until the appending transaction ends, so Seqs
// are distinct, increasing, and committed in order — a reader listing the
// conversation never sees Seq n+1 before Seq n, which a shared sequence
// or MAX(seq)+1 under READ COMMITTED would not promise. A rolled-back
// append gives its Seq back with the row's old version.

// appendMessageSQL appends one message ($1 its organisation, $2..$11
// its columns, $12 searchText) and returns its Seq, in one statement.
const appendMessageSQL = `WITH counter AS (
			INSERT INTO message_counters AS c (org_id, conversation_id, last_seq)
			VALUES ($1, $2, 1)
			ON CONFLICT (org_id, conversation_id) DO UPDATE SET last_seq = c.last_seq + 1
			RETURNING last_seq),
		searched AS (
			INSERT INTO conversation_search (org_id, conversation_id, seq, text)
			SELECT $1, $2, last_seq, $12 FROM counter WHERE $4 = '` + store.RoleUser + `')
		INSERT INTO messages (org_id, conversation_id, seq, turn_id, role,
			content, tool_name, tool_call_id, ref, is_error, refused, created_at)
		SELECT $1, $2, last_seq, $3, $4, $5, $6, $7, $8, $9, $10, $11 FROM counter
		RETURNING seq`

// AppendMessage appends m to its conversation in orgID and returns the Seq
// it assigned: one more than the conversation's highest, starting at 1.
// m.Seq is ignored. Concurrent appends get distinct, increasing Seqs.
func (s *Store) AppendMessage(ctx context.Context, orgID string, m store.Message) (int64, error) {
	// One statement, so one transaction and one round trip: the counter's
	// increment and the insert commit together.
	// A user message's search row ($12, its folded text) is written by
	// the same statement.

	var seq int64
	err := s.pool.QueryRow(ctx, appendMessageSQL, orgID, m.ConversationID, m.TurnID, m.Role, []byte(m.Content),
		m.ToolName, m.ToolCallID, m.Ref, m.IsError, m.Refused, m.CreatedAt, searchText(m)).Scan(&seq)
	if err != nil {
		return 0, wrapErr("append message", err)
	}
	return seq, nil
}

// appendBatchSQL appends a batch in one statement: it numbers each
// conversation's messages in the batch, advances every conversation's
// counter by its count (locking the counters in conversation order, the
// same in every batch, so two batches never deadlock), and inserts the
// messages with Seqs counter - count + nth, and the user messages' search
// rows. $1 is the organisation; $2..$12 are the messages' columns as
// arrays, in batch order, the last the search text (searchText). The
// batch is appended only when guard (a WHERE clause over parameters after
// $12) holds.
func appendBatchSQL(guard string) string {
	return appendBatchWith("", guard)
}

// appendBatchWith is appendBatchSQL with the common table expressions
// before (each "name AS (...),") running first, in the same statement.
func appendBatchWith(before, guard string) string {
	return `WITH ` + before + ` input AS (
		SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::bytea[], $6::text[],
				$7::text[], $8::text[], $9::boolean[], $10::boolean[], $11::timestamptz[], $12::text[])
			WITH ORDINALITY AS m(conversation_id, turn_id, role, content, tool_name,
				tool_call_id, ref, is_error, refused, created_at, search, ord)
		` + guard + `),
	numbered AS (
		SELECT *, row_number() OVER (PARTITION BY conversation_id ORDER BY ord) AS nth,
			count(*) OVER (PARTITION BY conversation_id) AS n
		FROM input),
	counter AS (
		INSERT INTO message_counters AS c (org_id, conversation_id, last_seq)
		SELECT $1, conversation_id, count(*) FROM input
		GROUP BY conversation_id ORDER BY conversation_id COLLATE "C"
		ON CONFLICT (org_id, conversation_id) DO UPDATE SET last_seq = c.last_seq + excluded.last_seq
		RETURNING conversation_id, last_seq),
	searched AS (
		INSERT INTO conversation_search (org_id, conversation_id, seq, text)
		SELECT $1, m.conversation_id, c.last_seq - m.n + m.nth, m.search
		FROM numbered m JOIN counter c ON c.conversation_id = m.conversation_id
		WHERE m.role = '` + store.RoleUser + `')
	INSERT INTO messages (org_id, conversation_id, seq, turn_id, role, content,
		tool_name, tool_call_id, ref, is_error, refused, created_at)
	SELECT $1, m.conversation_id, c.last_seq - m.n + m.nth, m.turn_id, m.role, m.content,
		m.tool_name, m.tool_call_id, m.ref, m.is_error, m.refused, m.created_at
	FROM numbered m JOIN counter c ON c.conversation_id = m.conversation_id
	RETURNING conversation_id, seq`
}

// stepAppendSQL is a model step's usage record and messages in one
// statement: the record (parameters $13..$25) is inserted as
// putUsageSQL(13, guard) does, and the messages ($1..$12, as
// appendBatchSQL) are appended only when it was, so a repeated step (its
// record there already) appends nothing and answers no row. guard is over
// the parameters after $25.
func stepAppendSQL(guard string) string {
	return appendBatchWith(`step AS (`+putUsageSQL(13, guard)+` RETURNING 1),`, `WHERE EXISTS (SELECT 1 FROM step)`)
}

// appendBatch is appendBatchSQL unguarded: AppendMessages's statement.
var appendBatch = appendBatchSQL(unguarded)

// AppendMessages appends ms in one statement, so one transaction and one
// round trip: all of them, in order, or none. It returns their Seqs; the
// messages may belong to different conversations.
func (s *Store) AppendMessages(ctx context.Context, orgID string, ms []store.Message) ([]int64, error) {
	if len(ms) == 0 {
		if err := ctx.Err(); err != nil {
			return nil, wrapErr("append messages", err)
		}
		return []int64{}, nil
	}
	cols := batchColumns(ms)
	var seqs []int64
	err := retrying(ctx, func() error {
		rows, err := s.pool.Query(ctx, appendBatch, cols.args(orgID)...)
		if err != nil {
			return err
		}
		seqs, err = seqsInOrder(rows, ms)
		return err
	})
	if err != nil {
		return nil, wrapErr("append messages", err)
	}
	return seqs, nil
}

// messageColumns are a batch's messages column by column.
type messageColumns struct {
	conversation, turn, role, toolName, toolCallID, ref []string
	content                                             [][]byte
	isError, refused                                    []bool
	createdAt                                           []time.Time
	search                                              []string
}

// args are appendBatchSQL's 12 parameters.
func (c messageColumns) args(orgID string) []any {
	return []any{orgID, c.conversation, c.turn, c.role, c.content, c.toolName, c.toolCallID, c.ref, c.isError, c.refused, c.createdAt, c.search}
}

// searchText is what conversation search reads of m: a user message's
// folded content, "" for any other (which no search row holds).
func searchText(m store.Message) string {
	if m.Role != store.RoleUser {
		return ""
	}
	return store.FoldText(m.Content)
}

// batchColumns returns ms column by column, in order.
func batchColumns(ms []store.Message) messageColumns {
	var c messageColumns
	for _, m := range ms {
		c.conversation = append(c.conversation, m.ConversationID)
		c.turn = append(c.turn, m.TurnID)
		c.role = append(c.role, m.Role)
		c.content = append(c.content, []byte(m.Content))
		c.toolName = append(c.toolName, m.ToolName)
		c.toolCallID = append(c.toolCallID, m.ToolCallID)
		c.ref = append(c.ref, m.Ref)
		c.isError = append(c.isError, m.IsError)
		c.refused = append(c.refused, m.Refused)
		c.createdAt = append(c.createdAt, m.CreatedAt)
		c.search = append(c.search, searchText(m))
	}
	return c
}

// seqsInOrder reads appendBatch's (conversation, seq) rows, which come in
// no promised order, and returns the Seq of each of ms: a conversation's
// Seqs, ascending, belong to its messages in batch order.
func seqsInOrder(rows pgx.Rows, ms []store.Message) ([]int64, error) {
	byConv, _, err := readSeqs(rows)
	if err != nil {
		return nil, err
	}
	return assignSeqs(byConv, ms)
}

// readSeqs reads appendBatch's (conversation, seq) rows: each
// conversation's Seqs, ascending, and how many rows there were.
func readSeqs(rows pgx.Rows) (map[string][]int64, int, error) {
	byConv := map[string][]int64{}
	var conv string
	var seq int64
	n := 0
	_, err := pgx.ForEachRow(rows, []any{&conv, &seq}, func() error {
		byConv[conv] = append(byConv[conv], seq)
		n++
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	for _, s := range byConv {
		slices.Sort(s)
	}
	return byConv, n, nil
}

// assignSeqs gives each of ms the next of its conversation's Seqs.
func assignSeqs(byConv map[string][]int64, ms []store.Message) ([]int64, error) {
	seqs := make([]int64, len(ms))
	for i, m := range ms {
		got := byConv[m.ConversationID]
		if len(got) == 0 {
			return nil, fmt.Errorf("no Seq returned for message %d", i)
		}
		seqs[i], byConv[m.ConversationID] = got[0], got[1:]
	}
	return seqs, nil
}

// ListMessages returns the messages of that conversation in that
// organisation with Seq < beforeSeq (all of them when beforeSeq <= 0),
// oldest first. A conversation with no messages there yields none and no
// error.
func (s *Store) ListMessages(ctx context.Context, orgID, conversationID string, beforeSeq int64) ([]store.Message, error) {
	if beforeSeq <= 0 {
		beforeSeq = math.MaxInt64
	}
	const q = `SELECT seq, turn_id, role, content, tool_name, tool_call_id, ref,
			is_error, refused, created_at
		FROM messages WHERE org_id = $1 AND conversation_id = $2 AND seq < $3
		ORDER BY seq`
	rows, err := s.pool.Query(ctx, q, orgID, conversationID, beforeSeq)
	if err != nil {
		return nil, wrapErr("list messages", err)
	}
	var out []store.Message
	var m store.Message
	var content []byte
	_, err = pgx.ForEachRow(rows, []any{&m.Seq, &m.TurnID, &m.Role, &content, &m.ToolName,
		&m.ToolCallID, &m.Ref, &m.IsError, &m.Refused, &m.CreatedAt}, func() error {
		m.ConversationID, m.Content, m.CreatedAt = conversationID, string(content), utc(m.CreatedAt)
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, wrapErr("list messages", err)
	}
	return out, nil
}

// LastMessageSeq returns the Seq of the conversation's last message in
// that organisation, 0 when it has none (one index probe).
func (s *Store) LastMessageSeq(ctx context.Context, orgID, conversationID string) (int64, error) {
	const q = `SELECT COALESCE(MAX(seq), 0) FROM messages WHERE org_id = $1 AND conversation_id = $2`
	var seq int64
	if err := s.pool.QueryRow(ctx, q, orgID, conversationID).Scan(&seq); err != nil {
		return 0, wrapErr("last message seq", err)
	}
	return seq, nil
}
