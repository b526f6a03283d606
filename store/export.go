package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Archiver copies a whole store, every table of ArchiveTables, to and
// from a neutral form that any backend reads back (package store/archive
// writes it as a file): what `quiver export` and `quiver import` move
// between SQLite and PostgreSQL. It is part of Store, not a repository:
// only the composition root, which holds a Store, calls it, and each
// backend implements it over SQL directly, since the backends' schemas are
// equivalent by design.
type Archiver interface {
	// ExportTables calls fn once with a read-only snapshot of the store:
	// every count and row fn reads comes from one consistent state, even
	// while others write. The snapshot ends when fn returns.
	ExportTables(ctx context.Context, fn func(TableSnapshot) error) error
	// CheckEmpty returns an error wrapping ErrNotEmpty, naming the tables
	// that hold rows, unless every table but schema_migrations is empty.
	CheckEmpty(ctx context.Context) error
	// ImportTables writes the tables r yields into the store, in one
	// transaction: all of them, or nothing. The store must be empty (as
	// CheckEmpty says, checked inside the transaction; otherwise an error
	// wrapping ErrNotEmpty and nothing written). Derived state is rebuilt
	// from the rows (a backend's per-conversation Seq counters, identity
	// sequences), so that the store goes on as the one exported would
	// have. The transaction spans reading r, which must therefore be
	// local and quick (a file, not a network peer).
	ImportTables(ctx context.Context, r TableReader) error
}

// ErrNotEmpty reports an import into a store that already holds records.
var ErrNotEmpty = errors.New("the database is not empty")

// TableSnapshot reads one table of a snapshot at a time.
type TableSnapshot interface {
	// Count returns how many rows t holds.
	Count(ctx context.Context, t ArchiveTable) (int64, error)
	// Rows calls fn with each row of t, in the order of t.Key (byte order
	// on every backend), values in t.Columns' order and of the types
	// their kinds name (see ColumnKind), nil for NULL. The slice is fn's
	// until it returns. An error from fn stops the rows and is returned.
	Rows(ctx context.Context, t ArchiveTable, fn func(row []any) error) error
}

// TableReader yields the tables of an archive to ImportTables.
type TableReader interface {
	// NextTable returns the next table whose rows follow, in
	// ArchiveTables' order (a table may be missing: it has no rows), or
	// io.EOF after the last one.
	NextTable() (ArchiveTable, error)
	// NextRow returns the next row of the table NextTable returned last,
	// or io.EOF after its last row. Each value has passed its column's
	// Check. The slice is valid until the next call.
	NextRow() ([]any, error)
}

// ColumnKind is how an archive carries a column's values, the same for
// every backend whatever its SQL type. Each kind names the Go type of its
// values in a row: NULL is nil, in a column that allows it.
type ColumnKind uint8

// The kinds of column.
const (
	// KindText is a string: valid UTF-8 without NUL (see PlainText).
	KindText ColumnKind = iota + 1
	// KindBytes is a []byte, never nil: any bytes (message content, a
	// blob, a document).
	KindBytes
	// KindInt is an int64.
	KindInt
	// KindBool is a bool.
	KindBool
	// KindTime is a time.Time in UTC.
	KindTime
	// KindJSON is a string holding one JSON value, kept byte for byte.
	KindJSON
	// KindNames is a []string, never nil, each a KindText, order kept.
	KindNames
)

// String names the kind as the archive format's documentation does.
func (k ColumnKind) String() string {
	switch k {
	case KindText:
		return "text"
	case KindBytes:
		return "bytes"
	case KindInt:
		return "int"
	case KindBool:
		return "bool"
	case KindTime:
		return "time"
	case KindJSON:
		return "json"
	case KindNames:
		return "names"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ArchiveColumn is one column of an ArchiveTable.
type ArchiveColumn struct {
	Name string
	Kind ColumnKind
	// Null is whether the column holds NULL (nil), which means what the
	// record says it means ("not yet", "unknown").
	Null bool
	// Fill, when set, is the column's value in a row of an archive
	// written before the column existed (the row lacks it), from the
	// row's other values (decoded; Fill columns are nil in it). A column
	// without Fill is required.
	Fill func(t ArchiveTable, row []any) any
}

// Check reports whether v is a value of c: nil only when c.Null, else of
// the Go type c.Kind names and within its rules. The error names the
// column and never quotes the value.
func (c ArchiveColumn) Check(v any) error {
	if v == nil {
		if c.Null {
			return nil
		}
		return fmt.Errorf("column %s: NULL where a value is required", c.Name)
	}
	if err := checkKind(c.Kind, v); err != nil {
		return fmt.Errorf("column %s: %w", c.Name, err)
	}
	return nil
}

// checkKind checks a non-nil value against kind.
func checkKind(kind ColumnKind, v any) error {
	ok := true
	switch kind {
	case KindText:
		s, is := v.(string)
		if ok = is; is {
			return checkText(s)
		}
	case KindBytes:
		b, is := v.([]byte)
		ok = is && b != nil
	case KindInt:
		_, ok = v.(int64)
	case KindBool:
		_, ok = v.(bool)
	case KindTime:
		t, is := v.(time.Time)
		ok = is && t.Location() == time.UTC
	case KindJSON:
		s, is := v.(string)
		if ok = is; is && (!utf8.ValidString(s) || !json.Valid([]byte(s))) {
			return errors.New("not one JSON value")
		}
	case KindNames:
		names, is := v.([]string)
		if ok = is && names != nil; ok {
			for _, n := range names {
				if err := checkText(n); err != nil {
					return err
				}
			}
		}
	default:
		return fmt.Errorf("unknown kind %s", kind)
	}
	if !ok {
		return fmt.Errorf("a %T is not a %s value", v, kind)
	}
	return nil
}

// checkText refuses what PostgreSQL's text type would: invalid UTF-8 and
// NUL.
func checkText(s string) error {
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return errors.New("text that is not valid UTF-8 or holds a NUL")
	}
	return nil
}

// ArchiveTable is one table as an archive carries it: the same name and
// columns on every backend.
type ArchiveTable struct {
	Name    string
	Columns []ArchiveColumn
	// Key is the primary key's columns: rows are archived in its order.
	Key []string
	// Rule, when set, checks what ties a row's values together (a blob's
	// size and digest are those of its data), after each value passed
	// its column's check; the error never quotes a value.
	Rule func(t ArchiveTable, row []any) error
	// Unique, when set, is a key of the current schema that older ones
	// did not enforce: see ArchiveUnique.
	Unique *ArchiveUnique
}

// ArchiveUnique is a key a migration added to a table whose rows could
// repeat it before: an archive whose source schema is older than the
// migration (Since, by backend) may hold rows repeating the key's
// Columns, and an import keeps the first of them (in the table's Key
// order) and leaves out the rest, as the migration itself did. An archive
// of a schema with the key holds no such rows; one that does is refused
// by the target's index, writing nothing.
type ArchiveUnique struct {
	Columns []string
	// Since is, by backend name ("sqlite", "postgres"), the first
	// migration whose schema enforces the key.
	Since map[string]int
}

// Applies reports whether rows of an archive exported from backend at
// schema version may repeat the key.
func (u *ArchiveUnique) Applies(backend string, version int) bool {
	return u != nil && version < u.Since[backend]
}

// ColumnNames returns the names of t's columns, in order.
func (t ArchiveTable) ColumnNames() []string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return names
}

// CheckRow checks each value of row against its column (ArchiveColumn.Check).
func (t ArchiveTable) CheckRow(row []any) error {
	if len(row) != len(t.Columns) {
		return fmt.Errorf("table %s: a row of %d values, want %d", t.Name, len(row), len(t.Columns))
	}
	for i, c := range t.Columns {
		if err := c.Check(row[i]); err != nil {
			return fmt.Errorf("table %s: %w", t.Name, err)
		}
	}
	if t.Rule != nil {
		if err := t.Rule(t, row); err != nil {
			return fmt.Errorf("table %s: %w", t.Name, err)
		}
	}
	return nil
}

// Value is row's value of the column named name (nil when t has none).
func (t ArchiveTable) Value(row []any, name string) any {
	for i, c := range t.Columns {
		if c.Name == name {
			return row[i]
		}
	}
	return nil
}

// blobRule is the blobs table's Rule: size and sha256 are those of data,
// as PutBlob computes them (an archive could claim others, and SQLite's
// constraints, unlike PostgreSQL's, do not check the digest's form).
func blobRule(t ArchiveTable, row []any) error {
	data, _ := t.Value(row, "data").([]byte)
	size, _ := t.Value(row, "size").(int64)
	sum, _ := t.Value(row, "sha256").(string)
	if size != int64(len(data)) {
		return errors.New("a blob's size is not its data's")
	}
	if d := sha256.Sum256(data); sum != hex.EncodeToString(d[:]) {
		return errors.New("a blob's sha256 is not its data's")
	}
	return nil
}

// memoryRule is the memories table's Rule: what CheckMemory accepts (a
// text within MaxMemoryRunes, a vector of its model's dimension that
// embed.Packed.Check reads).
func memoryRule(t ArchiveTable, row []any) error {
	m := Memory{CreatedAt: time.Unix(1, 0)}
	m.OrgID, _ = t.Value(row, "org_id").(string)
	m.ID, _ = t.Value(row, "id").(string)
	m.OwnerID, _ = t.Value(row, "owner_id").(string)
	m.Text, _ = t.Value(row, "text").(string)
	m.Model, _ = t.Value(row, "model").(string)
	v, _ := t.Value(row, "vector").([]byte)
	m.Vector = v
	if _, err := CheckMemory(m); err != nil {
		return fmt.Errorf("a memory: %w", err)
	}
	return nil
}

// shortTermRule is the short_term_memories table's Rule: what
// CheckShortTerm accepts, with a text that is not blank.
func shortTermRule(t ArchiveTable, row []any) error {
	m := ShortTerm{UpdatedAt: time.Unix(1, 0)}
	m.OrgID, _ = t.Value(row, "org_id").(string)
	m.Thread, _ = t.Value(row, "thread").(string)
	m.ConversationID, _ = t.Value(row, "conversation_id").(string)
	m.Text, _ = t.Value(row, "text").(string)
	n, err := CheckShortTerm(m)
	if err != nil {
		return fmt.Errorf("a short-term memory: %w", err)
	}
	if n.Text == "" {
		return errors.New("a short-term memory is blank")
	}
	return nil
}

// knowledgeChunkRule is the knowledge_chunks table's Rule: a text within
// MaxKnowledgeChunkRunes, and no model with no vector or a vector of its
// model's dimension that embed.Packed.Check reads.
func knowledgeChunkRule(t ArchiveTable, row []any) error {
	var c KnowledgeChunk
	c.Text, _ = t.Value(row, "text").(string)
	c.Model, _ = t.Value(row, "model").(string)
	if v, _ := t.Value(row, "vector").([]byte); len(v) > 0 {
		c.Vector = v
	}
	if err := checkKnowledgeChunk(c); err != nil {
		return fmt.Errorf("a knowledge chunk: %w", err)
	}
	return nil
}

// taskRule is the scheduled_tasks table's Rule: a task CheckTask
// accepts (its instruction, title, schedule and state).
func taskRule(t ArchiveTable, row []any) error {
	str := func(name string) string { v, _ := t.Value(row, name).(string); return v }
	tk := Task{OrgID: "o", ID: "t", UserID: "u", Agent: "a", ConversationID: "c", ChannelID: str("channel_id"),
		Title: str("title"), Instruction: str("instruction"), Kind: str("kind"), Spec: str("spec"),
		Timezone: str("timezone"), State: str("state")}
	every, _ := t.Value(row, "every_seconds").(int64)
	tk.Every = time.Duration(every) * time.Second
	if next, ok := t.Value(row, "next_run_at").(time.Time); ok {
		tk.NextRunAt = next
	}
	if tools, ok := t.Value(row, "tools").([]string); ok {
		tk.Tools = tools
	}
	if _, err := CheckTask(tk); err != nil {
		return fmt.Errorf("a scheduled task: %w", err)
	}
	return nil
}

// skillRule is the skills table's Rule: a name, description and
// document CheckSkill accepts.
func skillRule(t ArchiveTable, row []any) error {
	sk := Skill{OrgID: "o", UpdatedAt: time.Unix(1, 0)}
	sk.Name, _ = t.Value(row, "name").(string)
	sk.Description, _ = t.Value(row, "description").(string)
	sk.Document, _ = t.Value(row, "document").(string)
	if _, err := CheckSkill(sk); err != nil {
		return fmt.Errorf("a skill: %w", err)
	}
	return nil
}

// skillFileRule is the skill_files table's Rule: a path CheckSkillPath
// accepts and at most MaxSkillFileBytes.
func skillFileRule(t ArchiveTable, row []any) error {
	p, _ := t.Value(row, "path").(string)
	if err := CheckSkillPath(p); err != nil {
		return fmt.Errorf("a skill file: %w", err)
	}
	if d, _ := t.Value(row, "data").([]byte); len(d) > MaxSkillFileBytes {
		return fmt.Errorf("a skill file: %q is %d bytes; the limit is %d", p, len(d), MaxSkillFileBytes)
	}
	return nil
}

// SkippedTables are the tables of either backend that an archive does not
// carry, each with why. Every table of a backend's schema is in
// ArchiveTables or here (each backend's tests enumerate its schema), so a
// migration that adds a table must decide which.
func SkippedTables() map[string]string {
	return map[string]string{
		"schema_migrations":       "the importing build's own: opening the store fills it",
		"runs":                    "transient: the lease of a turn running in a live process; a deployment is moved stopped, and a turn left running is marked interrupted",
		"turn_events":             "transient: a running turn's event stream, kept a bounded time so that a reconnecting client resumes; the transcript (messages) keeps what each turn said",
		"message_counters":        "derived (PostgreSQL): rebuilt on import as each conversation's highest Seq",
		"rate_buckets":            "transient: the HTTP API's per-user token buckets; a bucket left out starts full, as an idle one would be",
		"leases":                  "transient: which live replica does work only one may do (the Discord gateway); the importing deployment's replicas take them again",
		"conversation_search":     "derived: what conversation search reads, rebuilt on import from the titles and the user messages",
		"memory_search":           "derived: what memory search reads (each memory's terms), rebuilt on import from the memories",
		"memory_search_rows":      "derived (SQLite): which full-text row holds a memory's terms, rebuilt on import with them",
		"attachment_chunk_search": "derived: what attachment search reads (each chunk's terms), rebuilt on import from the chunks",
		"knowledge_search":        "derived: what knowledge search reads (each ready document's chunks' terms), rebuilt on import from the chunks",
		"knowledge_search_rows":   "derived (SQLite): which full-text rows hold a document's terms, rebuilt on import with them",
		"memory_generations":      "derived: each owner's memory generation for the vector cache, written anew on import",
		"usage_months":            "derived: each person's spend per month, kept by a trigger on usage as its records are imported",
	}
}

// usageStepKey is the usage table's step key: a turn's (org_id, turn_id,
// step) is stored once since SQLite's migration 16 and PostgreSQL's 8;
// before them a step sent again after a lost answer could store its
// record twice.
var usageStepKey = &ArchiveUnique{
	Columns: []string{"org_id", "turn_id", "step"},
	Since:   map[string]int{"sqlite": 16, "postgres": 8},
}

// Column constructors, to keep ArchiveTables readable.
func text(name string) ArchiveColumn { return ArchiveColumn{Name: name, Kind: KindText} }
func maybeText(name string) ArchiveColumn {
	return ArchiveColumn{Name: name, Kind: KindText, Null: true}
}
func bytesCol(name string) ArchiveColumn { return ArchiveColumn{Name: name, Kind: KindBytes} }
func intCol(name string) ArchiveColumn   { return ArchiveColumn{Name: name, Kind: KindInt} }
func boolCol(name string) ArchiveColumn  { return ArchiveColumn{Name: name, Kind: KindBool} }
func at(name string) ArchiveColumn       { return ArchiveColumn{Name: name, Kind: KindTime} }
func maybeAt(name string) ArchiveColumn  { return ArchiveColumn{Name: name, Kind: KindTime, Null: true} }

// filled is c with Fill set: a column an older archive may lack.
func filled(c ArchiveColumn, fill func(ArchiveTable, []any) any) ArchiveColumn {
	c.Fill = fill
	return c
}

// ArchiveTables lists every table an archive carries, in the order an
// import writes them (a table after those its foreign keys name), with
// the columns of the current schema. A migration that adds a column adds
// it here in the same change (each backend's tests compare this list with
// its schema); an archive from before it then lacks the column, which an
// import refuses until the column is given a default for older archives.
func ArchiveTables() []ArchiveTable {
	return []ArchiveTable{
		{Name: "orgs", Key: []string{"id"}, Columns: []ArchiveColumn{
			text("id"), text("name"), at("created_at")}},
		{Name: "users", Key: []string{"org_id", "id"}, Columns: []ArchiveColumn{
			text("org_id"), text("id"), text("display_name"), text("department"), text("timezone"),
			text("role"), at("created_at"), at("updated_at"), maybeAt("disabled_at")}},
		{Name: "credentials", Key: []string{"kind", "hash"}, Columns: []ArchiveColumn{
			text("kind"), text("hash"), text("org_id"), text("user_id"), text("label"), text("csrf"),
			at("created_at"), maybeAt("expires_at")}},
		{Name: "agents", Key: []string{"org_id", "name"}, Columns: []ArchiveColumn{
			text("org_id"), text("name"), bytesCol("definition"), at("created_at"), at("updated_at")}},
		{Name: "org_settings", Key: []string{"org_id"}, Columns: []ArchiveColumn{
			text("org_id"), bytesCol("doc"), intCol("version"), at("updated_at")}},
		{Name: "org_secrets", Key: []string{"org_id", "name"}, Columns: []ArchiveColumn{
			text("org_id"), text("name"), text("sealed")}},
		{Name: "conversations", Key: []string{"org_id", "id"}, Columns: []ArchiveColumn{
			text("org_id"), text("id"), text("user_id"), text("agent"), text("title"),
			at("created_at"), at("updated_at"),
			// Added with the model per conversation: an older archive's
			// conversations follow their agent's model.
			filled(text("model"), func(ArchiveTable, []any) any { return "" }),
			// Added with branches: an older archive's conversations are
			// marked unlinked ('') and linked in order on import (each
			// turn after the one before, the head their last turn), as
			// the migrations link them.
			filled(maybeText("head_turn_id"), func(ArchiveTable, []any) any { return "" })}},
		{Name: "turns", Key: []string{"org_id", "id"}, Columns: []ArchiveColumn{
			text("org_id"), text("id"), text("user_id"), text("conversation_id"), text("agent"),
			text("model"), text("timezone"), text("payer"), {Name: "tools", Kind: KindNames},
			{Name: "exclusions", Kind: KindJSON, Null: true}, {Name: "declarations", Kind: KindJSON, Null: true},
			intCol("selected"), text("status"), text("question"), text("suggested"), intCol("steps"),
			at("started_at"), maybeAt("ended_at"),
			filled(maybeText("parent_turn_id"), func(ArchiveTable, []any) any { return nil })}},
		{Name: "messages", Key: []string{"org_id", "conversation_id", "seq"}, Columns: []ArchiveColumn{
			text("org_id"), text("conversation_id"), intCol("seq"), text("turn_id"), text("role"),
			bytesCol("content"), text("tool_name"), text("tool_call_id"), text("ref"), boolCol("is_error"),
			at("created_at"),
			// Added with the structural refusal mark: an older archive's
			// refusals are the tool results that begin "Not run: ", the
			// text every refusal began with (as the migrations mark them).
			filled(boolCol("refused"), func(t ArchiveTable, row []any) any {
				role, _ := t.Value(row, "role").(string)
				content, _ := t.Value(row, "content").([]byte)
				return role == "tool" && bytes.HasPrefix(content, []byte("Not run: "))
			})}},
		{Name: "results", Key: []string{"ref"}, Columns: []ArchiveColumn{
			text("ref"), text("org_id"), text("conversation_id"), text("turn_id"), text("tool"),
			bytesCol("body"), at("created_at"),
			// Added by the stored results quota: an older archive's results
			// count their body's size against their conversation's quota
			// and against no user's (user_id "", which the migrations give
			// only a result whose conversation is gone; a row does not know
			// its conversation's owner), and none was evicted.
			filled(text("user_id"), func(ArchiveTable, []any) any { return "" }),
			filled(intCol("size"), func(t ArchiveTable, row []any) any {
				b, _ := t.Value(row, "body").([]byte)
				return int64(len(b))
			}),
			filled(maybeAt("evicted_at"), func(ArchiveTable, []any) any { return nil })}},
		{Name: "usage", Key: []string{"id"}, Unique: usageStepKey, Columns: []ArchiveColumn{
			intCol("id"), text("org_id"), text("conversation_id"), text("turn_id"), text("payer"),
			text("model"), intCol("step"), intCol("input_tokens"), intCol("cached_input_tokens"),
			intCol("cache_write_tokens"), intCol("output_tokens"), intCol("cost_micros"), at("created_at"),
			// Added with budgets: an older archive's records count against
			// their organisation's budget only, no person's.
			filled(text("user_id"), func(ArchiveTable, []any) any { return "" })}},
		{Name: "budgets", Key: []string{"org_id", "user_id"}, Columns: []ArchiveColumn{
			text("org_id"), text("user_id"), intCol("cost_micros"), intCol("tokens"), at("updated_at")}},
		{Name: "mcp_servers", Key: []string{"org_id", "id"}, Columns: []ArchiveColumn{
			text("org_id"), text("id"), text("name"), text("url"), text("token"), text("type"),
			boolCol("enabled"), {Name: "tools", Kind: KindNames, Null: true}, at("created_at"),
			at("updated_at"), maybeAt("discovered_at")}},
		{Name: "intent_settings", Key: []string{"org_id"}, Columns: []ArchiveColumn{
			text("org_id"), boolCol("enabled"), intCol("history_turns"), boolCol("gate_always_on"),
			at("updated_at"), filled(ArchiveColumn{Name: "classifier_shift", Kind: KindInt, Null: true},
				func(ArchiveTable, []any) any { return nil })}},
		{Name: "intent_triggers", Key: []string{"org_id", "target", "phrase"}, Columns: []ArchiveColumn{
			text("org_id"), text("target"), text("phrase"), at("created_at")}},
		{Name: "intent_user_modes", Key: []string{"org_id", "user_id"}, Columns: []ArchiveColumn{
			text("org_id"), text("user_id"), text("mode")}},
		{Name: "conversation_intent_targets", Key: []string{"org_id", "conversation_id", "target"}, Columns: []ArchiveColumn{
			text("org_id"), text("conversation_id"), text("target"), intCol("position")}},
		{Name: "blobs", Key: []string{"org_id", "id"}, Rule: blobRule, Columns: []ArchiveColumn{
			text("org_id"), text("id"), text("owner_id"), text("conversation_id"), text("name"),
			text("media_type"), intCol("size"), text("sha256"), at("created_at"), bytesCol("data")}},
		{Name: "memories", Key: []string{"org_id", "id"}, Rule: memoryRule, Columns: []ArchiveColumn{
			text("org_id"), text("id"), text("owner_id"), text("text"), text("model"), bytesCol("vector"),
			at("created_at"), at("updated_at")}},
		{Name: "short_term_memories", Key: []string{"org_id", "thread"}, Rule: shortTermRule, Columns: []ArchiveColumn{
			text("org_id"), text("thread"), text("conversation_id"), text("text"), at("updated_at")}},
		{Name: "message_reactions", Key: []string{"org_id", "conversation_id", "seq", "emoji", "actor"}, Columns: []ArchiveColumn{
			text("org_id"), text("conversation_id"), intCol("seq"), text("emoji"), text("actor"), at("created_at")}},
		{Name: "message_pins", Key: []string{"org_id", "conversation_id", "seq"}, Columns: []ArchiveColumn{
			text("org_id"), text("conversation_id"), intCol("seq"), text("pinned_by"), at("pinned_at")}},
		{Name: "message_marks", Key: []string{"org_id", "conversation_id", "seq"}, Columns: []ArchiveColumn{
			text("org_id"), text("conversation_id"), intCol("seq"), maybeAt("edited_at"), maybeAt("deleted_at")}},
		{Name: "conversation_threads", Key: []string{"org_id", "conversation_id"}, Columns: []ArchiveColumn{
			text("org_id"), text("conversation_id"), text("parent_id"), intCol("parent_seq"), at("created_at")}},
		{Name: "attachments", Key: []string{"org_id", "id"}, Columns: []ArchiveColumn{
			text("org_id"), text("id"), text("conversation_id"), text("kind"), text("status"), text("error"),
			intCol("chars"), intCol("chunks"), text("model"), text("text")}},
		{Name: "attachment_chunks", Key: []string{"org_id", "attachment_id", "seq"}, Columns: []ArchiveColumn{
			text("org_id"), text("conversation_id"), text("attachment_id"), intCol("seq"), text("text"), bytesCol("vector")}},
		{Name: "artifacts", Key: []string{"org_id", "id"}, Columns: []ArchiveColumn{
			text("org_id"), text("id"), text("conversation_id"), text("owner_id"), text("title"), text("kind"),
			text("language"), intCol("version"), at("created_at"), at("updated_at"), maybeText("draft"),
			intCol("draft_rev"), intCol("inspected_rev"), text("draft_title"), text("draft_change"), text("draft_patch"),
			maybeAt("draft_updated_at")}},
		{Name: "artifact_versions", Key: []string{"org_id", "artifact_id", "version"}, Columns: []ArchiveColumn{
			text("org_id"), text("conversation_id"), text("artifact_id"), intCol("version"), text("title"), text("change"),
			text("patch"), text("content"), boolCol("checked"), text("turn_id"), at("created_at")}},
		{Name: "knowledge_documents", Key: []string{"org_id", "id"}, Columns: []ArchiveColumn{
			text("org_id"), text("agent"), text("id"), text("name"), text("media_type"), intCol("size"),
			text("status"), text("reason"), intCol("chunks"), intCol("total"), at("created_at"), at("updated_at")}},
		{Name: "knowledge_chunks", Key: []string{"org_id", "document_id", "seq"}, Rule: knowledgeChunkRule, Columns: []ArchiveColumn{
			text("org_id"), text("document_id"), intCol("seq"), text("agent"), text("text"), text("model"),
			bytesCol("vector")}},
		{Name: "skills", Key: []string{"org_id", "name"}, Rule: skillRule, Columns: []ArchiveColumn{
			text("org_id"), text("name"), text("description"), text("document"), at("created_at"), at("updated_at")}},
		{Name: "skill_files", Key: []string{"org_id", "skill", "path"}, Rule: skillFileRule, Columns: []ArchiveColumn{
			text("org_id"), text("skill"), text("path"), bytesCol("data")}},
		{Name: "agent_skills", Key: []string{"org_id", "agent", "skill"}, Columns: []ArchiveColumn{
			text("org_id"), text("agent"), text("skill"), at("created_at")}},
		{Name: "scheduled_tasks", Key: []string{"org_id", "id"}, Rule: taskRule, Columns: []ArchiveColumn{
			text("org_id"), text("id"), text("user_id"), text("agent"), text("conversation_id"), text("channel_id"),
			text("title"), text("instruction"), text("kind"), text("spec"), intCol("every_seconds"), text("timezone"),
			{Name: "tools", Kind: KindNames}, text("state"), maybeAt("next_run_at"), maybeAt("claimable_at"), intCol("version"),
			text("lease_owner"), maybeAt("lease_until"), intCol("attempts"), intCol("runs"), maybeAt("last_due_at"),
			maybeAt("last_run_at"), text("last_status"), text("last_error"), text("last_turn_id"), intCol("last_late_ms"),
			text("created_turn_id"), at("created_at"), at("updated_at")}},
		{Name: "blocks", Key: []string{"org_id", "agent", "user_id"}, Columns: []ArchiveColumn{
			text("org_id"), text("agent"), text("user_id"), text("reason"), text("blocked_by"), at("created_at")}},
		{Name: "deployment", Key: []string{"name"}, Columns: []ArchiveColumn{
			text("name"), text("value")}},
	}
}
