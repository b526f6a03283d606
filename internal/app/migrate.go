package app

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/secret"
	"github.com/quiverhq/quiver/store/archive"
	"github.com/quiverhq/quiver/store/backend"
	"github.com/quiverhq/quiver/surface/terminal"
)

// MigrateOptions are "quiver migrate"'s: Up applies the pending
// migrations, otherwise the status is printed (as JSON with JSON).
type MigrateOptions struct {
	Data     Data
	Up, JSON bool
}

// Migrate applies the configured store's pending migrations, or reports
// where its schema stands without writing anything (backend.Status).
func Migrate(ctx context.Context, o MigrateOptions, env Env) error {
	env = env.WithDefaults()
	op, err := o.Data.flags().open(ctx, needPlace, env)
	if err != nil {
		return err
	}
	if o.Up {
		applied, err := backend.Migrate(ctx, op.db)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", op.db, err)
		}
		fmt.Fprintf(env.Stdout, "store: %s\napplied %d migration(s) %v\n", op.db, len(applied), applied)
		return nil
	}
	st, err := backend.MigrationStatus(ctx, op.db)
	if err != nil {
		return err
	}
	return terminal.Emit(env.Stdout, o.JSON, st)
}

// ArchiveOptions are "quiver export"'s, or with Import "quiver import"'s.
type ArchiveOptions struct {
	Data
	File               string
	Import, Gzip, JSON bool
}

// Archive exports Data's store and workspaces to a new archive File, or
// with Import imports File into Data's empty store and data folder.
func Archive(ctx context.Context, o ArchiveOptions, env Env) error {
	env = env.WithDefaults()
	op, err := o.flags().open(ctx, needPlace, env)
	if err != nil {
		return err
	}
	run := archive.ExportFile
	if o.Import {
		run = archive.ImportFile
	}
	keys := func() (*secret.Keyring, error) { return loadKeyring(op.cfg, env.Getenv) }
	sum, err := run(ctx, o.File, archive.Options{Place: op.db, Keyring: keys, Quiver: Version, Now: env.Now(), Gzip: o.Gzip})
	if err != nil {
		return err
	}
	return terminal.Emit(env.Stdout, o.JSON, sum)
}
