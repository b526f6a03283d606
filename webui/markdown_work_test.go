package webui_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The work tests count work instead of timing it: workProbe wraps the
// string and regular-expression primitives that a parser scans text with,
// adds up how many characters each call looked at, and so tells linear
// work (twice the text, twice the work) from quadratic (four times),
// whatever the machine's load. It cannot see a regular expression
// backtracking inside one call; TestMarkdownAdversarialInputs renders the
// same families at 100 KB, where that would show as a test that does not
// finish.

// workProbe defines probe(f): it runs f and returns the characters its
// scans looked at. charCodeAt, codePointAt and charAt look at one;
// indexOf at those from its start to the match or the end; a regular
// expression's exec (which test, match, replace, split and search call
// once it is wrapped) at those up to the end of its match, or to the end
// of the text when it fails, or one when it is anchored (sticky, or ^
// without m) and fails. slice and the like cost nothing: the engine
// shares the characters.
const workProbe = `window.probe = (f) => {
	let work = 0;
	const undo = [];
	const wrap = (proto, name, cost) => {
		const orig = proto[name];
		undo.push(() => { proto[name] = orig; });
		proto[name] = function (...args) {
			const r = orig.apply(this, args);
			work += cost(this, args, r);
			return r;
		};
	};
	for (const name of ['charCodeAt', 'codePointAt', 'charAt']) wrap(String.prototype, name, () => 1);
	wrap(String.prototype, 'indexOf', (s, [needle, from], r) => {
		const start = Math.min(Math.max(0, Math.trunc(from) || 0), s.length);
		return r >= 0 ? r - start + String(needle).length : s.length - start;
	});
	const exec = RegExp.prototype.exec;
	undo.push(() => { RegExp.prototype.exec = exec; });
	RegExp.prototype.exec = function (text) {
		const start = this.global || this.sticky ? this.lastIndex : 0;
		const m = exec.call(this, text);
		const anchored = this.sticky || (this.source.startsWith('^') && !this.multiline);
		work += m ? m.index + m[0].length - start + 1 : anchored ? 1 : String(text).length - start;
		return m;
	};
	try {
		f();
	} finally {
		for (const u of undo.reverse()) u();
	}
	return work;
}`

// growth is how much more work per character a text twice as long takes:
// about 1 when the work is linear, about 2 when it is quadratic.
type growth struct {
	Name        string
	Small, Big  float64 // work per character at n and at 2n
	SizeS, Size int     // the two texts' lengths
}

func (g growth) ratio() float64 { return g.Big / g.Small }

// maxGrowth is the most a linear renderer may show: the work per character
// of a text twice as long may grow by a quarter (fixed costs and JIT
// warm-up shrink it; a quadratic step doubles it).
const maxGrowth = 1.25

// measureGrowth renders each family's text at sizes n and 2n with render
// (a JavaScript function of the source) inside probe, one text a step,
// and returns the growth of the work per character, by family name.
func measureGrowth(b *browser, families map[string][2]string, render string) []growth {
	b.t.Helper()
	b.Do("install the renderer", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`Promise.all([import('/assets/js/markdown.js'), import('/assets/js/turn.js')]).then(([{ markdown }, { Turn }]) => {
		window.render = %s;
		render('warm up: **a** [b](https://example.com) `+"`c`"+`');
	})`, render), chromedp.EvalAwaitPromise))
	names := slices.Sorted(maps.Keys(families))
	var out []growth
	per := func(src string) float64 { // the work per character of src
		js, err := json.Marshal(src)
		if err != nil {
			b.t.Fatal(err)
		}
		return eval[float64](b, fmt.Sprintf(`((src) => probe(() => render(src)) / src.length)(%s)`, js))
	}
	for _, name := range names {
		small, big := families[name][0], families[name][1]
		out = append(out, growth{Name: name, Small: per(small), Big: per(big), SizeS: len(small), Size: len(big)})
	}
	return out
}

// TestMarkdownWorkIsLinear renders pathological families of input at 4 KB
// and 8 KB and checks that the work per character does not grow: nested
// brackets, link openers, runs of backticks, emphasis that never closes,
// quotes and lists nested deep, wide and long tables, bare URLs, entities,
// fences, and code that highlight.js colours. A quadratic control shows
// the probe would tell.
func TestMarkdownWorkIsLinear(t *testing.T) {
	const n = 4000
	runs := func(n int) string { // runs of 1, 2, 3… backticks, each length once
		var sb strings.Builder
		for k := 1; sb.Len() < n; k++ {
			sb.WriteString("a" + strings.Repeat("`", k))
		}
		return sb.String()
	}
	lines := func(n int, line func(i int) string) string {
		var sb strings.Builder
		for i := 0; sb.Len() < n; i++ {
			sb.WriteString(line(i) + "\n")
		}
		return sb.String()
	}
	rep := func(s string) func(int) string {
		return func(n int) string { return strings.Repeat(s, n/len(s)) }
	}
	families := map[string]func(n int) string{
		"nested brackets":        func(n int) string { return strings.Repeat("[", n/2) + "a" + strings.Repeat("]", n/2) },
		"open brackets":          rep("["),
		"brackets then a link":   func(n int) string { return strings.Repeat("[", n) + "a](https://x.com)" },
		"link openers":           rep("[a]("),
		"angle link openers":     rep("[a](<"),
		"link titles never shut": rep(`[a](b "`),
		"nested parentheses":     func(n int) string { return "[a](" + strings.Repeat("(", n) },
		"brackets and backticks": rep("[`"),
		"a run of backticks":     rep("`"),
		"backtick runs":          runs,
		"emphasis never closed":  rep("*a_"),
		"emphasis markers":       func(n int) string { return strings.Repeat("*", n) + "a" },
		"emphasis mixed":         rep("**a*"),
		"underscores":            rep("_a"),
		"strikethrough":          rep("~~a"),
		"quotes nested deep":     func(n int) string { return strings.Repeat("> ", n/2) + "x" },
		"quotes on many lines":   func(n int) string { return lines(n, func(i int) string { return strings.Repeat("> ", i%20) + "x" }) },
		"lists nested deep":      func(n int) string { return strings.Repeat("- ", n/2) + "x" },
		"numbered nested deep":   func(n int) string { return strings.Repeat("1. ", n/3) + "x" },
		"lists indented deep":    func(n int) string { return lines(n, func(i int) string { return strings.Repeat("  ", i%40) + "- x" }) },
		"a heading of spaces":    func(n int) string { return "# a" + strings.Repeat(" ", n) + "x" },
		"a delimiter row":        func(n int) string { return "a | b\n|-" + strings.Repeat(" ", n) + "x" },
		"a wide table": func(n int) string {
			return strings.Repeat("|a", n/6) + "|\n" + strings.Repeat("|-", n/6) + "|\n" + strings.Repeat("|x", n/6) + "|"
		},
		"a long table":        func(n int) string { return "a|b\n-|-\n" + lines(n, func(int) string { return "x|y" }) },
		"a URL, parentheses":  func(n int) string { return "https://x.com" + strings.Repeat(")", n) },
		"bare URLs not taken": rep("http:///"),
		"bare URLs":           rep("https://a.com/x "),
		"mailto addresses":    rep("mailto:a@b.co "),
		"autolink openers":    rep("<http://"),
		"entities":            rep("&amp;"),
		"ampersands":          rep("&"),
		"angle brackets":      rep("<"),
		"escapes":             rep(`\*`),
		"fences":              rep("```\n"),
		"a fence left open":   func(n int) string { return "```\n" + strings.Repeat("a\n", n/2) },
		"setext underlines":   func(n int) string { return strings.Repeat("a\n", n/2) + "===" },
		"lazy quote lines":    rep("> a\n"),
		"hard breaks":         rep("a  \n"),
		"code in Go": func(n int) string {
			return "```go\n" + lines(n, func(i int) string { return fmt.Sprintf(`x%d := f("s", 'c', 0x1f) // note`, i) }) + "```"
		},
		"code in JavaScript": func(n int) string {
			return "```js\n" + lines(n, func(int) string { return "const a = [1, 'b', /c+/g, `d${e}`]; /* f */" }) + "```"
		},
		"code, an open string": func(n int) string { return "```python\n" + strings.Repeat(`"\`, n/2) },
		"code, HTML tags":      func(n int) string { return "```html\n" + strings.Repeat("<a b='", n/6) },
	}
	texts := map[string][2]string{}
	for name, f := range families {
		texts[name] = [2]string{f(n), f(2 * n)}
	}
	// The control: a scan from each character to the end.
	texts["control: quadratic"] = [2]string{strings.Repeat("a", n), strings.Repeat("a", 2*n)}
	b := newBrowser(t, newStubAPI())
	b.Do("open", chromedp.Navigate(b.srv.URL+"/"))
	b.Do("install the probe", chromedp.Evaluate[chromedp.Void](workProbe))
	got := measureGrowth(b, texts, `(src) => src.startsWith('aaaa') ? [...src].forEach((_, i) => src.indexOf('b', i)) : markdown(src)`)
	if len(got) != len(texts) {
		t.Fatalf("measured %d families, want %d", len(got), len(texts))
	}
	for _, g := range got {
		t.Logf("%-24s %7.1f → %7.1f per character (×%.2f)", g.Name, g.Small, g.Big, g.ratio())
		switch {
		case g.Name == "control: quadratic":
			if g.ratio() < 1.8 {
				t.Errorf("the quadratic control grew ×%.2f per character, want about 2: the probe does not see the work", g.ratio())
			}
		case g.Small <= 0:
			t.Errorf("%s: no work measured", g.Name)
		case g.ratio() > maxGrowth:
			t.Errorf("%s: the work per character grew ×%.2f from %d to %d characters, want at most ×%.2f (linear)",
				g.Name, g.ratio(), g.SizeS, g.Size, maxGrowth)
		}
	}
}

// TestMarkdownStreamingWorkIsLinear streams answers of 30 and 60 blocks
// into a Turn, three characters a delta, rendering after every delta, and
// checks that the work per character does not grow with the answer's
// length: each delta renders only the open block, never the blocks
// already kept. The control renders the whole text so far at each delta
// (of answers of 12 and 24 blocks), which is quadratic, and the probe must
// say so.
func TestMarkdownStreamingWorkIsLinear(t *testing.T) {
	block := []string{
		"A paragraph with **bold**, `code` and https://example.com/x.\nIts second line.\n\n",
		"- one\n- two **2**\n  - nested\n\n",
		"```go\nfunc f() int {\n\treturn 1 // one\n}\n```\n\n",
		"| a | b |\n|---|:-:|\n| 1 | 2 |\n\n",
		"> quoted *text*\n> more\n\n",
		"### A heading\n\n",
	}
	answer := func(blocks int) string {
		var sb strings.Builder
		for i := range blocks {
			sb.WriteString(block[i%len(block)])
		}
		return sb.String()
	}
	texts := map[string][2]string{
		"streamed":                          {answer(30), answer(60)},
		"control: whole text at each delta": {"whole:" + answer(12), "whole:" + answer(24)},
	}
	b := newBrowser(t, newStubAPI())
	b.Do("open", chromedp.Navigate(b.srv.URL+"/"))
	b.Do("install the probe", chromedp.Evaluate[chromedp.Void](workProbe))
	got := measureGrowth(b, texts, `(src) => {
		const whole = src.startsWith('whole:');
		if (whole) src = src.slice(6);
		const turn = new Turn(document.createElement('ol'), 'c', {});
		for (let i = 0; i < src.length; i += 3) {
			turn.event({ type: 'text', text: src.slice(i, i + 3) });
			if (whole) markdown(src.slice(0, i + 3));
			else turn.bubble.render();
		}
		turn.event({ type: 'done', stop: 'answer' });
	}`)
	for _, g := range got {
		t.Logf("%-34s %7.1f → %7.1f per character (×%.2f)", g.Name, g.Small, g.Big, g.ratio())
		if strings.HasPrefix(g.Name, "control") {
			if g.ratio() < 1.8 {
				t.Errorf("rendering the whole text at each delta grew ×%.2f per character, want about 2: the probe does not see it", g.ratio())
			}
		} else if g.ratio() > maxGrowth {
			t.Errorf("streaming %d characters instead of %d grew the work per character ×%.2f, want at most ×%.2f: deltas render more than the open block",
				g.Size, g.SizeS, g.ratio(), maxGrowth)
		}
	}
}
