package intent

import (
	"fmt"
	"slices"
	"unicode/utf8"
)

// Limits on custom triggers.
const (
	MaxCustomPerTarget = 16
	MaxCustomChars     = 40
)

// Custom is a community's compiled custom triggers.
type Custom struct {
	m      *matcher
	always []string // targets opened every turn ("^")
}

// CheckCustom validates one custom trigger and returns it normalised (the
// stored form). "^" means: open the target every turn.
func CheckCustom(target, phrase string) (string, error) {
	if !validTarget(target) {
		return "", fmt.Errorf("unknown target %q", target)
	}
	if err := checkPhrase(phrase, true); err != nil {
		return "", err
	}
	p := Normalise(phrase)
	if utf8.RuneCountInString(p) > MaxCustomChars {
		return "", fmt.Errorf("trigger %q: at most %d characters", phrase, MaxCustomChars)
	}
	return p, nil
}

// CompileCustom compiles a community's triggers (target → phrases). Every
// phrase is checked as CheckCustom does.
func CompileCustom(triggers map[string][]string) (*Custom, error) {
	c := &Custom{}
	pk := Pack{Lang: "custom", Triggers: map[string][]string{}}
	for _, t := range Targets {
		phrases := triggers[t]
		if len(phrases) > MaxCustomPerTarget {
			return nil, fmt.Errorf("target %s: at most %d custom triggers", t, MaxCustomPerTarget)
		}
		for _, p := range phrases {
			norm, err := CheckCustom(t, p)
			if err != nil {
				return nil, err
			}
			if norm == "^" {
				if !slices.Contains(c.always, t) {
					c.always = append(c.always, t)
				}
				continue
			}
			pk.Triggers[t] = append(pk.Triggers[t], norm)
		}
	}
	for t := range triggers {
		if !validTarget(t) {
			return nil, fmt.Errorf("unknown target %q", t)
		}
	}
	c.m = newMatcher([]Pack{pk}, SourceCustom)
	return c, nil
}
