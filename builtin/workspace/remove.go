package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
)

// Remove deletes the workspace of userID in orgID under root (a Config's
// Root), with everything in it: what erasing a person does once the
// store has erased them. A workspace, or a root, never made is no error.
// IDs that are not single path segments are refused, deleting nothing;
// nothing outside the workspace is reached (the removal goes through an
// os.Root, which follows no link out of it). The caller makes sure no
// turn of the person is writing meanwhile.
func Remove(root, orgID, userID string) error {
	if root == "" {
		return errors.New("workspace: remove: empty root")
	}
	if err := checkSegment("OrgID", orgID); err != nil {
		return err
	}
	if err := checkSegment("UserID", userID); err != nil {
		return err
	}
	base, err := os.OpenRoot(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("workspace: open root: %w", err)
	}
	defer base.Close()
	dir := path.Join(orgID, userID)
	if err := base.RemoveAll(dir); err != nil {
		return fmt.Errorf("workspace: remove %s: %w", dir, err)
	}
	return nil
}
