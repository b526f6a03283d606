package intent

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Attachment kinds a message may carry.
const (
	AttachImage    = "image"
	AttachDocument = "document"
	AttachAudio    = "audio"
	AttachVideo    = "video"
)

// Roles of history messages.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Limits of the mode.
const (
	// FollowupWindow is how many recent messages a follow-up looks back.
	FollowupWindow = 8
	// MaxHistoryTurns bounds how many recent user messages are re-scanned.
	MaxHistoryTurns = 10
	// DefaultHistoryTurns is the default re-scan depth.
	DefaultHistoryTurns = 4
)

// Message is an earlier message of the conversation.
type Message struct {
	Role string
	Text string
	// Attachments are the kinds of files it carried (image, document,
	// audio, video): what an assistant sent tells a follow-up what to
	// repeat.
	Attachments []string
}

// Input is what Detect reads.
type Input struct {
	// Text is the triggering message.
	Text string
	// Attachments are the kinds of files on the triggering message.
	Attachments []string
	// History holds earlier messages, oldest first, without Text.
	History []Message
	// HistoryTurns is how many of the most recent user messages in
	// History are re-scanned (0–10).
	HistoryTurns int
	// Custom are the community's triggers; nil means none.
	Custom *Custom
	// Shift, when set, is the community's own shift of the classifier's
	// thresholds and vetoes (clamped to ±MaxShift; positive opens less)
	// in place of the detector's (WithClassifier); nil keeps the
	// detector's. Without a classifier it changes nothing.
	Shift *float64
}

// Match is one reason a target opened.
type Match struct {
	Target  string `json:"family"`
	Trigger string `json:"trigger"`
	// Source is pack, custom, follow-up, history, attachment, always,
	// classifier or semantic.
	Source string `json:"source"`
	// Lang is the pack's language, for pack matches.
	Lang string `json:"lang,omitempty"`
}

// Result is what Detect found.
type Result struct {
	// Targets are the opened targets, in documentation order.
	Targets []string
	// Matches explain them: the first match per target and source.
	Matches []Match
}

// Has reports whether target is open.
func (r Result) Has(target string) bool { return slices.Contains(r.Targets, target) }

// Detector finds the targets a message opens. It is immutable and safe for
// concurrent use.
type Detector struct {
	packs *matcher
	// learned, when set, is the classifier beside the packs, and shift
	// its thresholds' adjustment.
	learned *Classifier
	shift   float64
}

// New returns a Detector over packs (see BuiltinPacks).
func New(packs []Pack) *Detector { return &Detector{packs: newMatcher(packs, SourcePack)} }

// NewClassifierOnly returns a Detector that opens targets by c alone,
// with no phrase pack: the learned stage measured on its own.
func NewClassifierOnly(c *Classifier) (*Detector, error) {
	if c == nil {
		return nil, errors.New("intent: no classifier")
	}
	return New(nil).WithClassifier(c, 0), nil
}

// MaxShift bounds a classifier threshold adjustment.
const MaxShift = 0.5

// WithClassifier returns a copy of d that judges each message with c as
// well (see Classifier): a pack's phrase opens its family only when c's
// score of the message as a request reaches the family's veto, and c
// opens the targets it scores at or above their thresholds; shift
// (clamped to ±MaxShift, NaN read as 0; positive opens less) moves both. The packs' rules still apply: a
// capability question opens neither search nor memory. A nil c gives d
// without a classifier.
func (d *Detector) WithClassifier(c *Classifier, shift float64) *Detector {
	out := *d
	if math.IsNaN(shift) {
		shift = 0
	}
	out.learned, out.shift = c, max(-MaxShift, min(MaxShift, shift))
	return &out
}

// shiftFor is the classifier shift in's detection uses: in.Shift,
// clamped, when set, else the detector's.
func (d *Detector) shiftFor(in Input) float64 {
	if in.Shift == nil || math.IsNaN(*in.Shift) {
		return d.shift
	}
	return max(-MaxShift, min(MaxShift, *in.Shift))
}

// youtubeLink finds YouTube video links.
var youtubeLink = regexp.MustCompile(`(?i)(?:youtube\.com/(?:watch\?|shorts/|live/)|youtu\.be/)`)

// hasYouTubeLink reports whether text holds a YouTube video link. Both of
// youtubeLink's hosts begin with "youtu", so text without it (nearly every
// message) skips the regular expression.
func hasYouTubeLink(text string) bool {
	return containsFoldASCII(text, "youtu") && youtubeLink.MatchString(text)
}

// containsFoldASCII reports whether s contains sub, ASCII letters compared
// without case; sub must be lower-case ASCII.
func containsFoldASCII(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		j := 0
		for j < len(sub) && s[i+j]|0x20 == sub[j] {
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return false
}

// Detect returns the targets in opens, with their matches.
func (d *Detector) Detect(in Input) Result {
	var c collector
	direct, followup := d.direct(in.Text, in.Custom, d.shiftFor(in))
	c.add(direct...)
	for _, a := range in.Attachments {
		if a == AttachImage || a == AttachDocument || a == AttachVideo {
			c.add(Match{Target: MediaAnalysis, Trigger: a + " attachment", Source: SourceAttachment})
		}
	}
	if hasYouTubeLink(in.Text) {
		c.add(Match{Target: MediaAnalysis, Trigger: "YouTube link", Source: SourceAttachment})
	}
	if followup != "" {
		c.add(d.followUp(in, followup)...)
	}
	c.add(d.recent(in)...)
	if in.Custom != nil {
		for _, t := range in.Custom.always {
			c.add(Match{Target: t, Trigger: "^", Source: SourceAlways})
		}
	}
	return c.result()
}

// collector keeps the first match per target and source.
type collector struct {
	matches []Match
}

func (c *collector) add(ms ...Match) {
	for _, m := range ms {
		dup := slices.ContainsFunc(c.matches, func(x Match) bool { return x.Target == m.Target && x.Source == m.Source })
		if !dup {
			c.matches = append(c.matches, m)
		}
	}
}

func (c *collector) result() Result {
	var r Result
	for _, t := range Targets {
		if slices.ContainsFunc(c.matches, func(m Match) bool { return m.Target == t }) {
			r.Targets = append(r.Targets, t)
		}
	}
	r.Matches = c.matches
	return r
}

// direct returns the matches of one message's own words (packs and custom
// triggers, combos, ignore spans, capability suppression) and the
// follow-up phrase it holds, if any.
func (d *Detector) direct(text string, custom *Custom, shift float64) (ms []Match, followup string) {
	norm := scanText(text)
	if norm == "" {
		return nil, ""
	}
	fs := d.packs.scan(norm)
	if custom != nil && custom.m != nil {
		fs = append(fs, custom.m.scan(norm)...)
	}
	fs = dropIgnored(fs)
	fs = firstPerEntry(fs)
	fs = dropContained(fs)
	ms = append(ms, triggerMatches(fs)...)
	ms = append(ms, comboMatches(norm, fs, d.packs.combos)...)
	if d.learned != nil {
		ms = d.learned.judge(norm, ms, validTarget, shift)
	}
	if slices.ContainsFunc(ms, func(m Match) bool { return m.Target == Capabilities }) {
		// "why can't you search?" asks about search, it does not ask
		// for one.
		ms = slices.DeleteFunc(ms, func(m Match) bool { return m.Target == Search || m.Target == Memory })
	}
	for _, f := range fs {
		if f.e.kind == kindFollowup {
			followup = f.e.raw
			break
		}
	}
	return ms, followup
}

// MaxScanBytes bounds how much of a message is matched: requests come
// early, and the work stays small whatever a message's length.
const MaxScanBytes = 16 << 10

// scanText is the normalised text of a message that is matched: at most
// MaxScanBytes, cut on a character boundary. (Normalising collapses line
// breaks too, so a phrase may span lines and a line break does not end a
// sentence for combos.)
func scanText(text string) string {
	if len(text) > 4*MaxScanBytes {
		text = text[:4*MaxScanBytes] // normalising may grow or shrink text; cut twice
	}
	out := Normalise(text)
	if len(out) > MaxScanBytes {
		cut := MaxScanBytes
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut]
	}
	return out
}

// firstPerEntry keeps each entry's first occurrence outside the ignore
// spans: later ones add nothing to what a message opens, and keeping them
// all would make the containment check quadratic in a long, repetitive
// message.
func firstPerEntry(fs []found) []found {
	seen := make(map[*entry]bool, len(fs))
	out := fs[:0]
	for _, f := range fs {
		if !seen[f.e] {
			seen[f.e] = true
			out = append(out, f)
		}
	}
	return out
}

// dropIgnored removes every phrase that lies inside an ignore phrase.
func dropIgnored(fs []found) []found {
	var spans [][2]int
	for _, f := range fs {
		if f.e.kind == kindIgnore {
			spans = append(spans, [2]int{f.start, f.end})
		}
	}
	if len(spans) == 0 {
		return fs
	}
	return slices.DeleteFunc(fs, func(f found) bool {
		if f.e.kind == kindIgnore {
			return true
		}
		for _, s := range spans {
			if f.start >= s[0] && f.end <= s[1] {
				return true
			}
		}
		return false
	})
}

// dropContained removes a trigger lying strictly inside a longer trigger of
// another target: the longer phrase says more about what is asked.
func dropContained(fs []found) []found {
	keep := fs[:0:0]
	for i, f := range fs {
		inside := false
		if f.e.kind == kindTrigger {
			for j, g := range fs {
				if i != j && g.e.kind == kindTrigger && g.e.target != f.e.target &&
					g.start <= f.start && g.end >= f.end && g.end-g.start > f.end-f.start {
					inside = true
					break
				}
			}
		}
		if !inside {
			keep = append(keep, f)
		}
	}
	return keep
}

func triggerMatches(fs []found) []Match {
	var ms []Match
	for _, f := range fs {
		if f.e.kind == kindTrigger {
			ms = append(ms, Match{Target: f.e.target, Trigger: f.e.raw, Source: f.e.source, Lang: f.e.lang})
		}
	}
	return ms
}

// comboMatches opens a combo's target when one of its verbs and one of its
// nouns fall in the same sentence.
func comboMatches(text string, fs []found, combos []Combo) []Match {
	bounds := sentenceBounds(text)
	sentence := func(pos int) int {
		i, _ := slices.BinarySearch(bounds, pos+1)
		return i
	}
	type key struct{ combo, sentence int }
	verbs, nouns := map[key]*entry{}, map[key]*entry{}
	for _, f := range fs {
		k := key{f.e.combo, sentence(f.start)}
		switch f.e.kind {
		case kindVerb:
			if verbs[k] == nil {
				verbs[k] = f.e
			}
		case kindNoun:
			if nouns[k] == nil {
				nouns[k] = f.e
			}
		}
	}
	var ms []Match
	for k, v := range verbs {
		if n := nouns[k]; n != nil {
			ms = append(ms, Match{Target: combos[k.combo].Target, Trigger: v.raw + " … " + n.raw, Source: v.source, Lang: v.lang})
		}
	}
	slices.SortFunc(ms, func(a, b Match) int { return strings.Compare(a.Target+a.Trigger, b.Target+b.Trigger) })
	return ms
}

// sentenceBounds returns the byte offsets just after each sentence end.
// ASCII '.', '!', '?' and ';' end a sentence only before a space or the end
// of the text, so "todo.txt", "2.400.000" and a URL's "?v=" stay in one.
func sentenceBounds(text string) []int {
	var out []int
	for i, r := range text {
		switch r {
		case '。', '！', '？', '；':
			out = append(out, i+utf8.RuneLen(r))
		case '.', '!', '?', ';':
			if next := i + 1; next == len(text) || text[next] == ' ' {
				out = append(out, next)
			}
		}
	}
	return out
}

// followUp re-opens the targets of the most recent affordance in the last
// FollowupWindow messages: a user request's targets, or what an assistant
// sent (audio → voice, image → image, video → video). Nothing to follow
// opens nothing.
func (d *Detector) followUp(in Input, phrase string) []Match {
	h := in.History
	for i := len(h) - 1; i >= 0 && i >= len(h)-FollowupWindow; i-- {
		m := h[i]
		var targets []string
		switch m.Role {
		case RoleUser:
			ms, _ := d.direct(m.Text, in.Custom, d.shiftFor(in))
			for _, x := range ms {
				targets = append(targets, x.Target)
			}
		case RoleAssistant:
			for _, a := range m.Attachments {
				switch a {
				case AttachAudio:
					targets = append(targets, Voice)
				case AttachImage:
					targets = append(targets, Image)
				case AttachVideo:
					targets = append(targets, Video)
				}
			}
		}
		if len(targets) > 0 {
			var out []Match
			for _, t := range targets {
				out = append(out, Match{Target: t, Trigger: fmt.Sprintf("%s (after %q)", phrase, excerpt(m.Text)), Source: SourceFollowUp})
			}
			return out
		}
	}
	return nil
}

// recent re-scans the last HistoryTurns user messages, so a target stays
// open while its request is recent.
func (d *Detector) recent(in Input) []Match {
	n := min(max(in.HistoryTurns, 0), MaxHistoryTurns)
	var out []Match
	for i := len(in.History) - 1; i >= 0 && n > 0; i-- {
		m := in.History[i]
		if m.Role != RoleUser {
			continue
		}
		n--
		ms, _ := d.direct(m.Text, in.Custom, d.shiftFor(in))
		for _, x := range ms {
			out = append(out, Match{Target: x.Target, Trigger: fmt.Sprintf("%s (recent message %q)", x.Trigger, excerpt(m.Text)), Source: SourceHistory, Lang: x.Lang})
		}
	}
	return out
}

// excerpt shortens a message for a match's explanation.
func excerpt(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 60 {
		return string([]rune(s)[:59]) + "…"
	}
	return s
}
