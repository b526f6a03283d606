package storetest

import (
	"fmt"
	"slices"

	"github.com/quiverhq/quiver/store"
)

// SchemaTable is one table of a backend's schema as its catalog
// describes it (sqlite_master and table_info, information_schema), for
// ArchiveCoverage.
type SchemaTable struct {
	Name    string
	Columns []SchemaColumn
	// Key is the primary key's columns, in order.
	Key []string
}

// SchemaColumn is one column of a SchemaTable.
type SchemaColumn struct {
	Name string
	// Kinds are the archive kinds the column's SQL type can hold.
	Kinds []store.ColumnKind
	// Null is whether the column may hold NULL as the backend reads it
	// back (a NULL the backend reads as a zero value is not NULL).
	Null bool
}

// ArchiveCoverage compares a backend's schema with what an archive
// carries (store.ArchiveTables, store.SkippedTables) and returns every
// difference, or none: a table neither archived nor skipped with a
// reason, an archived table the schema lacks, a column added or missing,
// one whose SQL type cannot hold its archive kind or whose nullability
// differs, another primary key. A backend's tests call it on the schema
// its migrations build, so that a migration adding a table or a column
// fails them until ArchiveTables (or SkippedTables) says what an export
// does with it.
func ArchiveCoverage(schema []SchemaTable) []string {
	var problems []string
	archived := map[string]store.ArchiveTable{}
	for _, t := range store.ArchiveTables() {
		archived[t.Name] = t
	}
	skipped := store.SkippedTables()
	present := map[string]bool{}
	for _, t := range schema {
		present[t.Name] = true
		spec, isArchived := archived[t.Name]
		reason, isSkipped := skipped[t.Name]
		switch {
		case isArchived && isSkipped:
			problems = append(problems, fmt.Sprintf("table %s is both archived and skipped", t.Name))
		case isSkipped && reason == "":
			problems = append(problems, fmt.Sprintf("table %s is skipped with no reason", t.Name))
		case !isArchived && !isSkipped:
			problems = append(problems, fmt.Sprintf("table %s is neither archived (store.ArchiveTables) nor skipped with a reason (store.SkippedTables)", t.Name))
		case isArchived:
			problems = append(problems, compareTable(spec, t)...)
		}
	}
	for name := range archived {
		if !present[name] {
			problems = append(problems, fmt.Sprintf("archived table %s is not in the schema", name))
		}
	}
	slices.Sort(problems)
	return problems
}

// compareTable lists how t differs from the archive's spec of it.
func compareTable(spec store.ArchiveTable, t SchemaTable) []string {
	var problems []string
	cols := map[string]SchemaColumn{}
	for _, c := range t.Columns {
		cols[c.Name] = c
	}
	for _, c := range spec.Columns {
		sc, ok := cols[c.Name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s.%s is archived but not in the schema", t.Name, c.Name))
		case !slices.Contains(sc.Kinds, c.Kind):
			problems = append(problems, fmt.Sprintf("%s.%s is archived as %s, which its SQL type does not hold", t.Name, c.Name, c.Kind))
		case sc.Null != c.Null:
			problems = append(problems, fmt.Sprintf("%s.%s: NULL allowed %t in the schema, %t in the archive", t.Name, c.Name, sc.Null, c.Null))
		}
		delete(cols, c.Name)
	}
	for name := range cols {
		problems = append(problems, fmt.Sprintf("%s.%s is in the schema but not archived (add it to store.ArchiveTables)", t.Name, name))
	}
	if !slices.Equal(spec.Key, t.Key) {
		problems = append(problems, fmt.Sprintf("%s: archived in the order of %v, its primary key is %v", t.Name, spec.Key, t.Key))
	}
	return problems
}
