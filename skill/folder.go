package skill

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/quiverhq/quiver/store"
)

// Bounds of reading a folder or a zip, beyond store's.
const (
	// MaxEntries bounds the files and folders a folder or zip may hold,
	// those skipped included: what a read visits.
	MaxEntries = 1000
	// MaxZipBytes bounds a zip file's own size: 16 MiB, twice what a
	// skill's files may hold uncompressed.
	MaxZipBytes = 16 << 20
)

// skipped are names a folder or zip may hold that are not the skill's:
// version control and the litter of file managers and archivers. A path
// with one of them as a part is left out.
var skipped = []string{".git", ".svn", ".hg", "__MACOSX", ".DS_Store", "Thumbs.db", "desktop.ini"}

// isSkipped reports whether a slash-separated path has a skipped part.
func isSkipped(p string) bool {
	for part := range strings.SplitSeq(p, "/") {
		if slices.Contains(skipped, part) {
			return true
		}
	}
	return false
}

// reader gathers a bundle's files, checking the bounds as it goes.
type reader struct {
	b       Bundle
	doc     []byte
	entries int
	total   int64
}

// entry counts one entry visited, refusing past MaxEntries.
func (r *reader) entry() error {
	r.entries++
	if r.entries > MaxEntries {
		return fmt.Errorf("the skill's folder holds over %d files and folders: %w", MaxEntries, store.ErrSkillQuota)
	}
	return nil
}

// add reads one file at rel (slash-separated, relative to the skill's
// folder) from open, reading at most one byte past its bound.
func (r *reader) add(rel string, size int64, open func() (io.ReadCloser, error)) error {
	if rel == store.SkillDocument {
		data, err := readBounded(open, store.MaxSkillDocumentBytes)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		r.doc = data
		return nil
	}
	if err := store.CheckSkillPath(rel); err != nil {
		return err
	}
	if len(r.b.Files) == store.MaxSkillFiles {
		return fmt.Errorf("the skill has over %d files besides %s: %w", store.MaxSkillFiles, store.SkillDocument, store.ErrSkillQuota)
	}
	if size > store.MaxSkillFileBytes {
		return fmt.Errorf("file %q is %d bytes; the limit is %d (1 MiB): %w", rel, size, store.MaxSkillFileBytes, store.ErrSkillQuota)
	}
	data, err := readBounded(open, store.MaxSkillFileBytes)
	if err != nil {
		return fmt.Errorf("file %q: %w", rel, err)
	}
	r.total += int64(len(data))
	if r.total > store.MaxSkillTotalBytes {
		return fmt.Errorf("the skill's files are over %d bytes (8 MiB) together: %w", store.MaxSkillTotalBytes, store.ErrSkillQuota)
	}
	r.b.Files = append(r.b.Files, store.SkillFile{Path: rel, Size: int64(len(data)), Data: data})
	return nil
}

// readBounded reads what open gives, refusing more than limit bytes
// (store.ErrSkillQuota) without reading past limit+1.
func readBounded(open func() (io.ReadCloser, error), limit int64) ([]byte, error) {
	rc, err := open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("over %d bytes: %w", limit, store.ErrSkillQuota)
	}
	return data, nil
}

// finish parses SKILL.md, checks the name against folder ("" for none)
// and returns the bundle, files sorted by path.
func (r *reader) finish(folder string) (Bundle, error) {
	if r.doc == nil {
		return Bundle{}, invalid("no %s in the skill's folder", store.SkillDocument)
	}
	m, _, err := ParseDocument(r.doc)
	if err != nil {
		return Bundle{}, err
	}
	if err := checkFolder(m, folder); err != nil {
		return Bundle{}, err
	}
	r.b.Meta, r.b.Document = m, string(r.doc)
	slices.SortFunc(r.b.Files, func(a, b store.SkillFile) int { return strings.Compare(a.Path, b.Path) })
	return r.b, nil
}

// ReadDir reads the skill in the folder dir: SKILL.md, whose name must be
// the folder's, and every other regular file under it (skipping version
// control folders and file-manager litter such as .DS_Store). A symbolic
// link or any other file that is not regular is refused, never followed.
// Bounds are checked as it reads: errors wrap store.ErrSkillInvalid or
// store.ErrSkillQuota, or are the file system's.
func ReadDir(dir string) (Bundle, error) {
	dir = filepath.Clean(dir)
	fi, err := os.Stat(dir)
	if err != nil {
		return Bundle{}, fmt.Errorf("read skill: %w", err)
	}
	if !fi.IsDir() {
		return Bundle{}, fmt.Errorf("read skill: %s is not a folder", dir)
	}
	var r reader
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if isSkipped(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if err := r.entry(); err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return invalid("%q is not a regular file (a symbolic link or a device); a skill holds files only", rel)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return r.add(rel, info.Size(), func() (io.ReadCloser, error) { return os.Open(p) })
	})
	if err != nil {
		return Bundle{}, fmt.Errorf("read skill %s: %w", filepath.Base(dir), err)
	}
	b, err := r.finish(filepath.Base(dir))
	if err != nil {
		return Bundle{}, fmt.Errorf("read skill %s: %w", filepath.Base(dir), err)
	}
	return b, nil
}

// ReadZip reads the skill in a zip of size bytes: SKILL.md at the zip's
// root, or in the one folder every entry is under (whose name the skill's
// must then be), with the other files beside it. Entries that leave the
// folder ("..", absolute paths, backslashes) are refused, symbolic links
// too; skipped names are left out as ReadDir leaves them. A zip over
// MaxZipBytes is refused before it is read.
func ReadZip(ra io.ReaderAt, size int64) (Bundle, error) {
	if size > MaxZipBytes {
		return Bundle{}, fmt.Errorf("read skill zip: %d bytes; the limit is %d (16 MiB): %w", size, MaxZipBytes, store.ErrSkillQuota)
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return Bundle{}, fmt.Errorf("read skill zip: %w: not a zip file: %v", store.ErrSkillInvalid, err)
	}
	if len(zr.File) > MaxEntries {
		return Bundle{}, fmt.Errorf("read skill zip: %d entries; the limit is %d: %w", len(zr.File), MaxEntries, store.ErrSkillQuota)
	}
	root, err := zipRoot(zr.File)
	if err != nil {
		return Bundle{}, fmt.Errorf("read skill zip: %w", err)
	}
	var r reader
	for _, f := range zr.File {
		if isSkipped(f.Name) {
			continue
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(f.Name, root), "/")
		if err := r.entry(); err != nil {
			return Bundle{}, fmt.Errorf("read skill zip: %w", err)
		}
		switch mode := f.Mode(); {
		case mode.IsDir() || rel == "":
			continue
		case !mode.IsRegular():
			return Bundle{}, fmt.Errorf("read skill zip: %w", invalid("%q is not a regular file (a symbolic link or a device); a skill holds files only", f.Name))
		}
		size := int64(f.UncompressedSize64)
		if f.UncompressedSize64 > uint64(MaxZipBytes) {
			size = MaxZipBytes
		}
		if err := r.add(rel, size, f.Open); err != nil {
			return Bundle{}, fmt.Errorf("read skill zip: %w", err)
		}
	}
	b, err := r.finish(strings.TrimSuffix(root, "/"))
	if err != nil {
		return Bundle{}, fmt.Errorf("read skill zip: %w", err)
	}
	return b, nil
}

// zipRoot returns the prefix of the skill's folder in a zip: "" when
// SKILL.md is at the root, "name/" when every entry (skipped ones aside)
// is under one folder holding it. A name that is not a clean relative
// path is refused here, before any file is read.
func zipRoot(files []*zip.File) (string, error) {
	top := map[string]bool{}
	for _, f := range files {
		if isSkipped(f.Name) {
			continue
		}
		name := strings.TrimSuffix(f.Name, "/")
		if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, `\`) || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") {
			return "", invalid("entry %q is not a path inside the skill's folder", f.Name)
		}
		if name == store.SkillDocument {
			return "", nil
		}
		first, _, _ := strings.Cut(name, "/")
		top[first] = true
	}
	if len(top) == 1 {
		for first := range top {
			for _, f := range files {
				if f.Name == first+"/"+store.SkillDocument {
					return first + "/", nil
				}
			}
		}
	}
	return "", invalid("no %s at the zip's root or in the one folder at its root", store.SkillDocument)
}

// ReadPath reads the skill at path: a folder (ReadDir) or a .zip file
// (ReadZip, refused over MaxZipBytes before it is read).
func ReadPath(p string) (Bundle, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return Bundle{}, fmt.Errorf("read skill: %w", err)
	}
	if fi.IsDir() {
		return ReadDir(p)
	}
	if !strings.EqualFold(filepath.Ext(p), ".zip") {
		return Bundle{}, fmt.Errorf("read skill: %s is neither a folder nor a .zip file: %w", p, store.ErrSkillInvalid)
	}
	if fi.Size() > MaxZipBytes {
		return Bundle{}, fmt.Errorf("read skill zip: %d bytes; the limit is %d (16 MiB): %w", fi.Size(), MaxZipBytes, store.ErrSkillQuota)
	}
	f, err := os.Open(p)
	if err != nil {
		return Bundle{}, fmt.Errorf("read skill: %w", err)
	}
	defer f.Close()
	return ReadZip(f, fi.Size())
}
