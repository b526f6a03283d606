package app

import (
	"context"
	"fmt"

	"github.com/quiverhq/quiver/store/backend"
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
	df := o.Data.flags()
	cfg, err := df.loadConfig()
	if err != nil {
		return err
	}
	db, err := df.store(cfg, env)
	if err != nil {
		return err
	}
	if o.Up {
		applied, err := backend.Migrate(ctx, db)
		if err != nil {
			return fmt.Errorf("migrate %s: %w", db, err)
		}
		fmt.Fprintf(env.Stdout, "store: %s\napplied %d migration(s) %v\n", db, len(applied), applied)
		return nil
	}
	st, err := backend.MigrationStatus(ctx, db)
	if err != nil {
		return err
	}
	return emit(env.Stdout, o.JSON, st)
}
