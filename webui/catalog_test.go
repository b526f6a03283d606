package webui_test

import (
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The pages' words come from one catalog per language (assets/i18n/*.json,
// read by assets/js/i18n.js). These tests read the sources: every key the
// code or the page uses is in every catalog, the catalogs hold the same
// keys with the same placeholders, and no key is used that the scan
// cannot see (keys are string literals).

var (
	// keyCall is a catalog lookup with a literal key: t('…'), tn('…'), tx('…').
	keyCall = regexp.MustCompile(`\b(t|tn|tx)\(\s*'([^']+)'`)
	// dynamicCall is a lookup whose key is not a literal.
	dynamicCall = regexp.MustCompile(`\b(t|tn|tx)\(\s*[^'\s)]`)
	// staticKey is a key of the static page: data-i18n="…", data-i18n-label="…".
	staticKey   = regexp.MustCompile(`data-i18n(?:-label)?="([^"]+)"`)
	placeholder = regexp.MustCompile(`\{(\w+)\}`)
	// pluralForm is a plural form's suffix other than .other, which a
	// language whose rules lack that form leaves out.
	pluralForm = regexp.MustCompile(`\.(zero|one|two|few|many)$`)
)

// usedKeys returns every key the sources use, with where, and the
// lookups whose key is not a literal.
func usedKeys(t *testing.T) (keys map[string]string, plural map[string]bool, dynamic []string) {
	t.Helper()
	keys, plural = map[string]string{}, map[string]bool{}
	err := filepath.WalkDir("assets", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p == filepath.Join("assets", "vendor") {
			return fs.SkipDir // npm's files as published: no lookup of ours
		}
		if err != nil || d.IsDir() {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch filepath.Ext(p) {
		case ".js":
			for i, line := range strings.Split(string(src), "\n") {
				where := p + ":" + strconv.Itoa(i+1)
				for _, m := range keyCall.FindAllStringSubmatch(line, -1) {
					if m[1] == "tn" {
						plural[m[2]] = true
						keys[m[2]+".other"] = where
						continue
					}
					keys[m[2]] = where
				}
				// i18n.js looks keys up for the others (the static page's,
				// a plural's form); comments name the functions.
				code := !strings.HasPrefix(strings.TrimSpace(line), "//") && !strings.Contains(line, "function ")
				if code && filepath.Base(p) != "i18n.js" && dynamicCall.MatchString(line) {
					dynamic = append(dynamic, where+": "+strings.TrimSpace(line))
				}
			}
		case ".html":
			for _, m := range staticKey.FindAllStringSubmatch(string(src), -1) {
				keys[m[1]] = p
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys, plural, dynamic
}

// catalogs reads every catalog, by language code.
func catalogs(t *testing.T) map[string]map[string]string {
	t.Helper()
	files, err := filepath.Glob("assets/i18n/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no catalogs (%v)", err)
	}
	out := map[string]map[string]string{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c map[string]string
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = c
	}
	return out
}

func TestCatalogsHoldEveryKeyUsed(t *testing.T) {
	used, plural, dynamic := usedKeys(t)
	for _, d := range dynamic {
		t.Errorf("a lookup whose key is not a string literal (the catalogs cannot be checked): %s", d)
	}
	cats := catalogs(t)
	en, ok := cats["en"]
	if !ok {
		t.Fatal("no English catalog (assets/i18n/en.json): the fallback")
	}
	for _, key := range slices.Sorted(maps.Keys(used)) {
		for lang, c := range cats {
			if _, ok := c[key]; !ok {
				t.Errorf("%s: key %q is missing from %s.json", used[key], key, lang)
			}
		}
	}
	for key := range plural {
		if _, ok := en[key+".one"]; !ok {
			t.Errorf("plural key %q has no .one form in en.json", key)
		}
	}
	// Every catalog has the English keys, and only those, each with the
	// English text's placeholders.
	for lang, c := range cats {
		for key, text := range en {
			other, ok := c[key]
			if !ok {
				if !pluralForm.MatchString(key) {
					t.Errorf("%s.json lacks %q", lang, key)
				}
				continue
			}
			if a, b := placeholders(text), placeholders(other); !slices.Equal(a, b) {
				t.Errorf("%s.json %q has placeholders %q, English %q", lang, key, b, a)
			}
			if strings.TrimSpace(other) == "" && strings.TrimSpace(text) != "" {
				t.Errorf("%s.json %q is empty", lang, key)
			}
		}
		for key := range c {
			if _, ok := en[key]; !ok && !pluralForm.MatchString(key) {
				t.Errorf("%s.json has %q, which en.json has not", lang, key)
			}
		}
	}
	// No key is kept that nothing uses.
	for key := range en {
		base := pluralForm.ReplaceAllString(key, "")
		base = strings.TrimSuffix(base, ".other")
		if _, ok := used[key]; !ok && !plural[base] {
			t.Errorf("en.json has %q, which no page uses", key)
		}
	}
}

// TestLanguagesListEveryCatalog: the language switch offers each catalog.
func TestLanguagesListEveryCatalog(t *testing.T) {
	src, err := os.ReadFile("assets/js/i18n.js")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, m := range regexp.MustCompile(`\{ code: '([a-z-]+)', name: '[^']+' \}`).FindAllStringSubmatch(string(src), -1) {
		listed = append(listed, m[1])
	}
	slices.Sort(listed)
	have := slices.Sorted(maps.Keys(catalogs(t)))
	if !slices.Equal(listed, have) {
		t.Errorf("i18n.js lists languages %q, the catalogs are %q", listed, have)
	}
}

func placeholders(s string) []string {
	var out []string
	for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return slices.Compact(out)
}
