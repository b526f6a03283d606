package webui_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// The Markdown tests run markdown.js in Chromium: first the renderer on
// its own (each construct, then random input), then answers in the chat.

// renderMarkdown renders each source with markdown.js in the page and
// returns the HTML of the nodes it built.
func renderMarkdown(b *browser, srcs []string) []string {
	b.t.Helper()
	js, err := json.Marshal(srcs)
	if err != nil {
		b.t.Fatal(err)
	}
	return eval[[]string](b, fmt.Sprintf(`import('/assets/js/markdown.js').then(({ markdown }) => %s.map((src) => {
		const d = document.createElement('div');
		d.append(...markdown(src));
		return d.innerHTML;
	}))`, js), chromedp.EvalAwaitPromise)
}

// link is the HTML of a link as markdown.js makes it.
func link(href, text string) string {
	return `<a href="` + href + `" rel="noopener noreferrer nofollow" target="_blank" title="` + href + `">` + text + `</a>`
}

// codeBlock is the HTML of a fenced code block as markdown.js makes it:
// the header with the language (when there is one) and the copy button,
// then the code, html as highlight.js coloured it or escaped.
func codeBlock(lang, html string) string {
	head := `<div class="code-block hljs"><div class="code-head">`
	if lang != "" {
		head += `<span class="code-lang">` + lang + `</span>`
	}
	head += `<button type="button" class="code-copy" aria-label="Copy code">Copy</button></div><pre tabindex="0"><code`
	if lang != "" {
		head += ` data-lang="` + lang + `"`
	}
	return head + `>` + html + `</code></pre></div>`
}

func TestMarkdownRendersEachConstruct(t *testing.T) {
	b := newBrowser(t, newStubAPI())
	b.Do("open", chromedp.Navigate(b.srv.URL+"/"))
	origin := b.srv.URL // the page's own
	tests := []struct{ name, src, want string }{
		{"paragraphs and line breaks", "one\ntwo  \n\nthree", `<p>one<br>two</p><p>three</p>`},
		{"headings below the page's", "# A\n## B ##\n### C\n#### D\n##### E\n###### F\n####### G\n#no",
			`<h3>A</h3><h4>B</h4><h5>C</h5><h6>D</h6><h6>E</h6><h6>F</h6><p>####### G<br>#no</p>`},
		{"fenced code with a language", "```go\nfunc main() {\n\tfmt.Println(\"**hi**\")\n}\n```\nafter",
			codeBlock("go", `<span class="hljs-function"><span class="hljs-keyword">func</span> <span class="hljs-title">main</span><span class="hljs-params">()</span></span> {`+
				"\n\tfmt.Println(<span class=\"hljs-string\">\"**hi**\"</span>)\n}") + "<p>after</p>"},
		{"fenced code without a language", "~~~\n<b>x</b>\n```\n~~~", codeBlock("", "&lt;b&gt;x&lt;/b&gt;\n```")},
		{"unclosed fence", "text\n```py\nprint(1)", "<p>text</p>" +
			codeBlock("py", `<span class="hljs-built_in">print</span>(<span class="hljs-number">1</span>)`)},
		{"a language highlight.js does not know is a label only", "```klingon\nqapla' <b>\n```",
			codeBlock("klingon", "qapla' &lt;b&gt;")},
		{"the language is the info string's first word", "```c++ {.numbers} <b>\nint x;\n```",
			codeBlock("c++", `<span class="hljs-type">int</span> x;`)},
		{"an info string that is no language gives no label", "```<img src=x onerror=alert(1)>\nx\n```\n~~~a\"b\ny\n~~~",
			codeBlock("", "x") + codeBlock("", "y")},
		{"HTML in code is coloured as text", "```html\n<script>alert(1)</script>\n```",
			codeBlock("html", `<span class="hljs-tag">&lt;<span class="hljs-name">script</span>&gt;</span><span>`+
				`<span class="hljs-title function_">alert</span>(<span class="hljs-number">1</span>)</span><span class="hljs-tag">&lt;/<span class="hljs-name">script</span>&gt;</span>`)},
		{"bullet list", "- a\n- b **c**\n\nafter", `<ul><li>a</li><li>b <strong>c</strong></li></ul><p>after</p>`},
		{"numbered list with a nested list", "Steps:\n1. one\n   - x\n   - y\n2. two",
			`<p>Steps:</p><ol><li>one<ul><li>x</li><li>y</li></ul></li><li>two</li></ol>`},
		{"numbered list keeps its start", "3. c\n4) d\n5. e", `<ol start="3"><li>c</li></ol><ol start="4"><li>d</li></ol><ol start="5"><li>e</li></ol>`},
		{"loose list", "* a\n\n* b", `<ul><li><p>a</p></li><li><p>b</p></li></ul>`},
		{"blockquote", "> quoted **b**\n> more\n>\n> > inner\n\nafter",
			`<blockquote><p>quoted <strong>b</strong><br>more</p><blockquote><p>inner</p></blockquote></blockquote><p>after</p>`},
		{"horizontal rules", "a\n\n---\n* * *\n___\nb", `<p>a</p><hr><hr><hr><p>b</p>`},
		{"table", "| a | b | c |\n|:--|--:|:-:|\n| 1 | `x\\|y` |\n| **2** | 3 | 4 | 5 |\n\nafter",
			`<div class="table-wrap" tabindex="0"><table><thead><tr><th data-align="left">a</th><th data-align="right">b</th><th data-align="center">c</th></tr></thead>` +
				`<tbody><tr><td data-align="left">1</td><td data-align="right"><code>x|y</code></td><td data-align="center"></td></tr>` +
				`<tr><td data-align="left"><strong>2</strong></td><td data-align="right">3</td><td data-align="center">4</td></tr></tbody></table></div><p>after</p>`},
		{"a table needs its delimiter row", "| a | b |\n| 1 | 2 |", `<p>| a | b |<br>| 1 | 2 |</p>`},
		{"inline code", "`a*b*` and ``x ` y`` and ` spaced `", `<p><code>a*b*</code> and <code>x ` + "`" + ` y</code> and <code>spaced</code></p>`},
		{"emphasis", "**bold** *it* _it_ ~~gone~~ ***both*** **a *b* c**",
			`<p><strong>bold</strong> <em>it</em> <em>it</em> <del>gone</del> <em><strong>both</strong></em> <strong>a <em>b</em> c</strong></p>`},
		{"markers that stay text", "snake_case_name 2 * 3 * 4 **open ~one~ \\*escaped\\*",
			`<p>snake_case_name 2 * 3 * 4 **open ~one~ *escaped*</p>`},
		{"links", "[site](https://example.com/a?b=1&c=2) [mail](mailto:me@example.com) <https://example.org/x>",
			`<p>` + link("https://example.com/a?b=1&amp;c=2", "site") + ` ` + link("mailto:me@example.com", "mail") + ` ` +
				link("https://example.org/x", "https://example.org/x") + `</p>`},
		{"bare URLs", "See https://example.com/wiki/Foo_(bar). Or (http://example.com/a_b_c), **https://example.net**",
			`<p>See ` + link("https://example.com/wiki/Foo_(bar)", "https://example.com/wiki/Foo_(bar)") + `. Or (` +
				link("http://example.com/a_b_c", "http://example.com/a_b_c") + `), <strong>` + link("https://example.net/", "https://example.net") + `</strong></p>`},
		{"link text is formatted, not linked", "[**b** `c` https://a.example](https://b.example/)",
			`<p>` + link("https://b.example/", "<strong>b</strong> <code>c</code> https://a.example") + `</p>`},
		{"unsafe links stay text", "[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](data:text/html,hi) [r](/relative) <javascript:alert(1)> javascript:alert(1) ftp://example.com",
			`<p>[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](data:text/html,hi) [r](/relative) &lt;javascript:alert(1)&gt; javascript:alert(1) ftp://example.com</p>`},
		{"an image is a link, never loaded", "![chart](https://example.com/c.png)",
			`<p>!` + link("https://example.com/c.png", "chart") + `</p>`},
		{"HTML stays text", "<script>alert(1)</script>\n<img src=x onerror=alert(1)> <b>not bold</b>",
			`<p>&lt;script&gt;alert(1)&lt;/script&gt;<br>&lt;img src=x onerror=alert(1)&gt; &lt;b&gt;not bold&lt;/b&gt;</p>`},
		{"empty", "", ``},
		{"closing hashes need a space before them", "# C#\n# #\n# a \\#\n## b #\t \n# c \t#x",
			"<h3>C#</h3><h3></h3><h3>a #</h3><h4>b</h4><h3>c \t#x</h3>"},
		{"a delimiter row has only dashes and colons", "a | b\n|-|-|x\n\nc | d\n| - | :-: |\n\ne | f\n|-|\\-|",
			`<p>a | b<br>|-|-|x</p><div class="table-wrap" tabindex="0"><table><thead><tr><th>c</th><th data-align="center">d</th></tr></thead></table></div>` +
				`<p>e | f<br>|-|-|</p>`},
		{"a bare URL stops at quotes", "{\"u\":\"https://a.com\",\"v\":1} 'https://b.com/x' `https://c.com`x",
			`<p>{"u":"` + link("https://a.com/", "https://a.com") + `","v":1} '` + link("https://b.com/x", "https://b.com/x") +
				`' <code>https://c.com</code>x</p>`},
		{"a bare URL leaves out a bracket that closes nothing in it", "[https://x.com] (https://y.com/a) https://z.com/a_[b]] http://[::1]/]",
			`<p>[` + link("https://x.com/", "https://x.com") + `] (` + link("https://y.com/a", "https://y.com/a") + `) ` +
				link("https://z.com/a_%5Bb%5D", "https://z.com/a_[b]") + `] ` + link("http://[::1]/", "http://[::1]/") + `]</p>`},
		{"a bare URL not taken is text", "http:///**x** **http://**",
			`<p>http:///<strong>x</strong> <strong>http://</strong></p>`},
		{"only addresses with http, https or mailto become links", "www.example.com example.com me@example.com ftp://x.com //x.com mailto:me@example.com <mailto:you@example.com>",
			`<p>www.example.com example.com me@example.com ftp://x.com //x.com ` + link("mailto:me@example.com", "mailto:me@example.com") + ` ` +
				link("mailto:you@example.com", "mailto:you@example.com") + `</p>`},
		{"a link's title is its address", `[a](https://x.com/p "Click me") [b](<https://x.com/a b>)`,
			`<p>` + link("https://x.com/p", "a") + ` ` + link("https://x.com/a%20b", "b") + `</p>`},
		{"reference definitions and indented code stay text", "[a][r] [r]\n\n[r]: https://x.com\n\n    indented *code*",
			`<p>[a][r] [r]</p><p>[r]: ` + link("https://x.com/", "https://x.com") + `</p><p>indented <em>code</em></p>`},
		{"entities are their characters, escaped", "&lt;b&gt; &amp; &#60;i&#62; &copy; &bogus;",
			`<p>&lt;b&gt; &amp; &lt;i&gt; © &amp;bogus;</p>`},
		{"brackets in code spans do not close a link's text", "[`]`](https://x.com) [a`](https://y.com)`",
			`<p>` + link("https://x.com/", "<code>]</code>") + ` [a<code>](https://y.com)</code></p>`},
		{"this server's login links stay text", "[in](" + origin + "/login?token=s) " + origin + "/login?token=s <" + origin + "//LOGIN?token=s> " +
			"[x](" + origin + "/%6Cogin?token=s) [y](" + origin + "/a/../login) [ok](" + origin + "/#/chat) [other](https://example.com/login?token=s)",
			`<p>[in](` + origin + `/login?token=s) ` + origin + `/login?token=s &lt;` + origin + `//LOGIN?token=s&gt; ` +
				`[x](` + origin + `/%6Cogin?token=s) [y](` + origin + `/a/../login) ` + link(origin+"/#/chat", "ok") + ` ` +
				link("https://example.com/login?token=s", "other") + `</p>`},
	}
	srcs := make([]string, len(tests))
	for i, tt := range tests {
		srcs[i] = tt.src
	}
	got := renderMarkdown(b, srcs)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, got[i]); d != "" {
				t.Errorf("markdown(%q) (-want +got):\n%s", tt.src, d)
			}
		})
	}
}

// markdownPieces are what the random tests make their Markdown of; ORIGIN
// stands for the page's origin.
var markdownPieces = []string{"*", "**", "_", "__", "~~", "`", "```", "```js", "~~~", "\n", "\n\n", "  ", "\t", "# ", "### ",
	"- ", "* ", "1. ", "7) ", "> ", "|", " | ", "---", ":-:", "[", "]", "(", ")", "<", ">", "\\", "word",
	"https://example.com/a_(b)", "mailto:a@example.com", "javascript:alert(1)", "data:text/html,x", "//evil.example",
	"<script>alert(1)</script>", "<img src=x onerror=alert(1)>", `" onclick="alert(1)`, "&amp;", "é", "\u2028",
	"ORIGIN/login?token=x", "(ORIGIN//login)", "<ORIGIN/%6cogin>", "```go\nfunc f() { return \"<b>\" }\n", "```html\n<img src=x onerror=alert(1)>\n```\n",
	"```<b>", "[r]: https://example.com", "[r]", "    ", "www.example.com", "&lt;b&gt;", "&#0;", "![x](https://example.com/i.png)",
	"[t](https://example.com \"title\")", "\x00"}

// TestMarkdownMakesOnlyKnownElements renders random mixes of Markdown,
// HTML and URLs, and every prefix of the streamed answer: whatever the
// input, only the renderer's own elements, attributes and classes come
// out, every link is http, https or mailto with rel, target and title
// set, and the only button is a code block's copy button.
func TestMarkdownMakesOnlyKnownElements(t *testing.T) {
	pieces := markdownPieces
	r := rand.New(rand.NewPCG(1, 2))
	var srcs []string
	for range 500 {
		var sb strings.Builder
		for range 1 + r.IntN(40) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		srcs = append(srcs, sb.String())
	}
	answer := strings.Join(markdownDeltas, "") + markdownTail
	for i := range answer {
		srcs = append(srcs, answer[:i])
	}
	js, err := json.Marshal(srcs)
	if err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, newStubAPI())
	b.Do("open", chromedp.Navigate(b.srv.URL+"/"))
	problems := eval[[]string](b, fmt.Sprintf(`import('/assets/js/markdown.js').then(({ markdown }) => {
		const attrs = { P: [], BR: [], H3: [], H4: [], H5: [], H6: [], PRE: ['tabindex'], CODE: ['data-lang'],
			SPAN: ['class'], UL: [], OL: ['start'], LI: [], BLOCKQUOTE: [], HR: [], DIV: ['class', 'tabindex'], TABLE: [], THEAD: [], TBODY: [],
			TR: [], TH: ['data-align'], TD: ['data-align'], STRONG: [], EM: [], DEL: [], A: ['href', 'rel', 'target', 'title'],
			BUTTON: ['type', 'class', 'aria-label'] };
		const classes = { DIV: /^(table-wrap|code-block hljs|code-head)$/, SPAN: /^(code-lang|hljs-[a-z_-]+( [a-z]+_+)*|)$/, BUTTON: /^code-copy$/ };
		const problems = [];
		for (const src of %s.map((s) => s.replaceAll('ORIGIN', location.origin))) {
			const d = document.createElement('div');
			try {
				d.append(...markdown(src));
			} catch (e) {
				problems.push(JSON.stringify(src) + ': ' + e);
				continue;
			}
			for (const el of d.querySelectorAll('*')) {
				const bad = !attrs[el.tagName] || el.getAttributeNames().some((a) => !attrs[el.tagName].includes(a)) ||
					(classes[el.tagName] && !classes[el.tagName].test(el.className)) ||
					(el.tagName === 'BUTTON' && (el.parentElement?.className !== 'code-head' || el.type !== 'button')) ||
					(el.tagName === 'SPAN' && el.className === 'code-lang' && el.children.length) ||
					(el.tagName === 'SPAN' && el.className !== 'code-lang' && !el.closest('pre > code')) ||
					(el.tagName === 'A' && (!['http:', 'https:', 'mailto:'].includes(new URL(el.href).protocol) ||
						el.rel !== 'noopener noreferrer nofollow' || el.target !== '_blank' || el.title !== el.href ||
						(new URL(el.href).origin === location.origin && new URL(el.href).pathname.startsWith('/login'))));
				if (bad) problems.push(JSON.stringify(src) + ': ' + el.outerHTML);
			}
		}
		return problems.slice(0, 10);
	})`, js), chromedp.EvalAwaitPromise)
	for _, p := range problems {
		t.Error(p)
	}
}

func TestChatRendersMarkdownAnswer(t *testing.T) {
	api := newStubAPI()
	hold := make(chan struct{})
	api.markdownHeld = hold
	b := newBrowser(t, api)
	b.login()
	b.open("#/chat/"+stubConv, `#message`)

	// The stored transcript: the agent's message as Markdown, the user's as text.
	stored := eval[[]string](b, `[...document.querySelectorAll('.transcript .msg .text')].map(e => e.innerHTML)`)
	if d := cmp.Diff([]string{"Hi there", "<p>Hello <strong>Ana</strong>. How can I help?</p>"}, stored); d != "" {
		t.Errorf("stored transcript (-want +got):\n%s", d)
	}

	// Probes: calls to alert, and the animation frame of each render of
	// an answer (frames counts frames; a render records the count).
	b.Do("install probes", chromedp.Evaluate[chromedp.Void](`(() => {
		window.alerts = [];
		window.alert = (m) => window.alerts.push(String(m));
		window.frames_ = 0;
		(function tick() { window.frames_++; requestAnimationFrame(tick); })();
		window.renders = [];
		new MutationObserver((records) => {
			if (records.some((r) => r.target.matches?.('.text.md'))) window.renders.push(window.frames_);
		}).observe(document.querySelector('.transcript'), { childList: true, subtree: true });
	})()`))

	// The code block as markdown() renders it: labelled and coloured
	// (TestMarkdownRendersEachConstruct checks the colouring itself).
	code := renderMarkdown(b, []string{"```sh\n" + markdownCode + "\n```"})[0]
	for _, part := range []string{`<span class="code-lang">sh</span>`, `<code data-lang="sh">`, `<span class="hljs-built_in">test</span>`} {
		if !strings.Contains(code, part) {
			t.Errorf("the code block %s lacks %s", code, part)
		}
	}

	b.send(msgMarkdown)
	// Held with the fence open: an open code block, the bold complete.
	busy := `.transcript .msg.assistant[aria-busy="true"] .text`
	b.WaitText(busy+` pre code[data-lang="sh"]`, markdownCode)
	head := `<h4>Steps</h4><p>Run it <em>now</em>, with <strong>care</strong>:</p>`
	if d := cmp.Diff(head+code, eval[string](b, `document.querySelector('`+busy+`').innerHTML`)); d != "" {
		t.Errorf("answer while its fence is open (-want +got):\n%s", d)
	}
	b.Shot("open-fence")
	close(hold)

	b.Do("turn ends", chromedp.WaitNotVisible(chromedp.CSS(`#cancel`)),
		chromedp.WaitVisible(chromedp.CSS(`.transcript .msg.assistant:last-child:not([aria-busy]) .md ol`)))
	want := head + code +
		`<div class="table-wrap" tabindex="0"><table><thead><tr><th>step</th><th data-align="center">command</th><th>expected</th><th data-align="right">owner</th></tr></thead>` +
		`<tbody><tr><td>1</td><td data-align="center"><code>go vet ./webui/</code></td><td>NothingOnACleanWorkingTree</td><td data-align="right">TheWebInterfaceMaintainers</td></tr></tbody></table></div>` +
		`<ol start="3"><li>` + link("https://example.com/docs/web-ui", "the docs") + `</li><li>[not a link](javascript:alert(1))</li></ol>` +
		`<p>&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt;</p>`
	answer := `.transcript .msg.assistant:last-child .text`
	if d := cmp.Diff(want, eval[string](b, `document.querySelector('`+answer+`').innerHTML`)); d != "" {
		t.Errorf("answer (-want +got):\n%s", d)
	}
	if got := eval[string](b, `document.querySelector('.transcript .msg.user:nth-last-child(2) .text').innerHTML`); got != msgMarkdown {
		t.Errorf("the user's message is %q, want the text %q", got, msgMarkdown)
	}

	type anchor struct{ Href, Rel, Target, Text string }
	links := eval[[]anchor](b, `[...document.querySelectorAll('`+answer+` a')].map(a => ({
		Href: a.getAttribute('href'), Rel: a.getAttribute('rel'), Target: a.getAttribute('target'), Text: a.textContent }))`)
	if d := cmp.Diff([]anchor{{"https://example.com/docs/web-ui", "noopener noreferrer nofollow", "_blank", "the docs"}}, links); d != "" {
		t.Errorf("links (-want +got):\n%s", d)
	}
	if n := eval[int](b, `document.querySelectorAll('main script, main img, main iframe, main [onerror], a[href^="javascript"]').length`); n != 0 {
		t.Errorf("the answer made %d elements out of its HTML or unsafe link", n)
	}
	if got := eval[[]string](b, `window.alerts`); len(got) != 0 {
		t.Errorf("alert called: %q", got)
	}

	// One render per animation frame at most, and the final one on done.
	renders := eval[[]int](b, `window.renders`)
	perFrame := map[int]int{}
	for _, f := range renders {
		perFrame[f]++
	}
	if extra := len(renders) - len(perFrame); extra > 1 || len(renders) < 2 {
		t.Errorf("%d renders in %d frames for %d deltas, want at most one per frame and one on done",
			len(renders), len(perFrame), len(markdownDeltas)+len([]rune(markdownTail)))
	}
	b.Shot("answer")
	b.checkHeaders(stubCSRF)
}

// TestMarkdownAdversarialInputs renders pathological inputs of about
// 100 KB (the families TestMarkdownWorkIsLinear measures, at full size)
// and checks what they render to: deep nesting stops at its bound with
// the rest as text, nothing is lost, and a code block too long to colour
// is shown plain. How much work each takes is TestMarkdownWorkIsLinear's.
func TestMarkdownAdversarialInputs(t *testing.T) {
	const n = 100_000
	spaces := strings.Repeat(" ", n)
	parens := strings.Repeat(")", n)
	noHost := strings.Repeat("http:///", n/8)
	nest := func(open, close string, k int, inner string) string {
		return strings.Repeat(open, k) + inner + strings.Repeat(close, k)
	}
	rows := strings.Repeat("| x | y |\n", n/10)
	var runs string // a, then runs of 1, 2, 3… backticks, each length once
	for k := 1; len(runs) < n; k++ {
		runs += "a" + strings.Repeat("`", k)
	}
	tests := []struct{ name, src, want string }{
		{"bare URLs that are not taken", noHost, `<p>` + noHost + `</p>`},
		{"a URL then unbalanced parentheses", "https://x.com" + parens, `<p>` + link("https://x.com/", "https://x.com") + parens + `</p>`},
		{"a heading with a long run of spaces", "# a" + spaces + "x", `<h3>a` + spaces + `x</h3>`},
		{"a delimiter row with a long run of spaces", "a | b\n|-" + spaces + "x", `<p>a | b<br>|-` + spaces + `x</p>`},
		{"link destinations in angle brackets never closed", strings.Repeat("[a](<", n/5), `<p>` + strings.Repeat("[a](&lt;", n/5) + `</p>`},
		{"link destinations never closed", strings.Repeat("[a](", n/4), `<p>` + strings.Repeat("[a](", n/4) + `</p>`},
		{"brackets and code spans", strings.Repeat("[`", n/2), `<p>` + strings.Repeat("[<code>[</code>", n/4) + `</p>`},
		{"nested brackets", nest("[", "]", n/2, "a"), `<p>` + nest("[", "]", n/2, "a") + `</p>`},
		{"nested brackets, then a link", strings.Repeat("[", n) + "a](https://x.com)",
			`<p>` + strings.Repeat("[", n-1) + link("https://x.com/", "a") + `</p>`},
		{"a run of backticks", "a " + strings.Repeat("`", n), `<p>a ` + strings.Repeat("`", n) + `</p>`},
		{"backtick runs that close nothing", runs, `<p>` + runs + `</p>`},
		{"emphasis never closed", strings.Repeat("*a_", n/3), `<p>` + strings.Repeat("*a_", n/3) + `</p>`},
		{"a long run of emphasis markers", strings.Repeat("*", n) + "a", `<p>` + strings.Repeat("*", n) + `a</p>`},
		{"emphasis opened and closed in turn", strings.Repeat("**a** ", n/6), `<p>` + strings.Repeat("<strong>a</strong> ", n/6-1) + `<strong>a</strong></p>`},
		{"quotes nested deep", strings.Repeat("> ", n/2) + "x",
			nest("<blockquote>", "</blockquote>", 16, `<p>`+strings.Repeat("&gt; ", n/2-16)+`x</p>`)},
		{"lists nested deep", strings.Repeat("- ", n/2) + "x",
			nest("<ul><li>", "</li></ul>", 8, strings.Repeat("- ", n/2-8)+"x")},
		{"a table of many rows", "| a | b |\n|---|---|\n" + rows,
			`<div class="table-wrap" tabindex="0"><table><thead><tr><th>a</th><th>b</th></tr></thead><tbody>` +
				strings.Repeat(`<tr><td>x</td><td>y</td></tr>`, n/10) + `</tbody></table></div>`},
		{"lone ampersands and angle brackets", strings.Repeat("&<", n/2), `<p>` + strings.Repeat("&amp;&lt;", n/2) + `</p>`},
		{"a code block too long to colour", "```js\n" + strings.Repeat("let a;", 3334) + "\n```", // 20,004 characters
			codeBlock("js", strings.Repeat("let a;", 3334))},
	}
	b := newBrowser(t, newStubAPI())
	b.Do("open", chromedp.Navigate(b.srv.URL+"/"))
	for _, tt := range tests {
		got := renderMarkdown(b, []string{tt.src})[0]
		if got != tt.want {
			t.Errorf("%s: got %.300q…, want %.300q…", tt.name, got, tt.want)
		}
	}
	// The longest code block that is coloured.
	if got := renderMarkdown(b, []string{"```js\n" + strings.Repeat("let a;", 3333) + "\n```"})[0]; !strings.Contains(got, `<span class="hljs-keyword">let</span>`) {
		t.Errorf("a code block of 19,998 characters is not coloured: %.300q…", got)
	}
}

// stream is an answer streamed in deltas of the sizes Chunks (in UTF-16
// code units), over and over.
type stream struct {
	Src    string
	Chunks []int
}

// TestMarkdownStreamsIncrementally streams answers into a Turn in chunks
// of several sizes, rendering after each chunk as an animation frame
// would: a block once kept is never replaced, an open code block that
// grows keeps its node, and the bubble when the turn ends is the same as
// markdown() of the whole text.
func TestMarkdownStreamsIncrementally(t *testing.T) {
	doc := "para one\nline **two\n\n- a\n- b\n\n- c\n\n  more c\n\nafter\n\n```go\ncode\n\n\nmore code\n```\n\n" +
		"| a | b |\n|---|:-:|\n| 1 | 2 |\n\n> q\n\n> r\n>\n> s\n\n# H #\n\n1. x\n\n   y\n2. z\n\n" +
		"3) w\n\ntext **bold\n\nend** [a](https://example.com/x)\n\n---\n\nb | c\n-|-\n\nlast"
	srcs := []string{
		doc,
		strings.ReplaceAll(doc, "\n", "\r\n"),
		strings.ReplaceAll(doc, "\n", "\r"),
		"- a\n\n  - b\n\n    c\n\n- d\n\npara\n\n  - e\n\n* f\n\n+ g\n\n  h",
		"~~~\n\n~~~~\n\n~~~~\nx\n\ny\n\n````\n```\n\n````\n\nz",
		"a\n\n| x |\n|---|\n\nb\n\n| y\n\n|-\n\nc",
		"a\n| x | y |\n|---|---x\n# h\n- i\n1. j\n> k\n```\nl\n```\nm",
		"> a\n\n> - b\n>\n>   c\n\nd\n\n    e\n\n\tf",
		"text\n\n```sh\nopen fence\n\nstill open\n",
		"```js\nconst a = 'open string\n\nlet b = 2; // more\n```\n\nafter",
		strings.Join(markdownDeltas, "") + markdownTail,
	}
	r := rand.New(rand.NewPCG(3, 4))
	var streams []stream
	for _, src := range srcs {
		for _, c := range [][]int{{1}, {3}, {7, 2, 13}, {64}, {1 + r.IntN(20), 1 + r.IntN(20), 1 + r.IntN(20)}} {
			streams = append(streams, stream{src, c})
		}
	}
	checkStreams(t, streams)
}

// TestMarkdownStreamsRandomIncrementally does as
// TestMarkdownStreamsIncrementally with random mixes of markdownPieces,
// each in deltas of random sizes.
func TestMarkdownStreamsRandomIncrementally(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var streams []stream
	for range 200 {
		var sb strings.Builder
		for range 1 + r.IntN(60) {
			sb.WriteString(markdownPieces[r.IntN(len(markdownPieces))])
		}
		streams = append(streams, stream{sb.String(), []int{1 + r.IntN(12), 1 + r.IntN(12), 1 + r.IntN(12)}})
	}
	checkStreams(t, streams)
}

// checkStreams streams each of streams in a browser of its own, a few a
// step (a loaded machine is slow), and reports streamCheck's problems.
func checkStreams(t *testing.T, streams []stream) {
	t.Helper()
	b := newBrowser(t, newStubAPI())
	b.Do("open", chromedp.Navigate(b.srv.URL+"/"))
	b.Do("install the check", chromedp.Evaluate[chromedp.Void](streamCheck, chromedp.EvalAwaitPromise))
	const batch = 10
	for i := 0; i < len(streams); i += batch {
		js, err := json.Marshal(streams[i:min(i+batch, len(streams))])
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range eval[[]string](b, `checkStreams(`+string(js)+`)`) {
			t.Error(p)
		}
	}
}

// streamCheck defines checkStreams(streams), which streams each source
// into a Turn in its chunks, rendering after each chunk as an animation
// frame would, and returns the first problems: a kept block replaced, a
// growing code block (or its <pre>) replaced, or the bubble at the end
// other than markdown() of the whole text.
const streamCheck = `Promise.all([import('/assets/js/turn.js'), import('/assets/js/markdown.js')]).then(([{ Turn }, { markdown }]) => {
	window.checkStreams = (streams) => {
		const problems = [];
		const codeOf = (n) => n?.classList?.contains('code-block') ? n.querySelector('pre > code') : null;
		for (const { Src, Chunks } of streams) {
			const src = Src.replaceAll('ORIGIN', location.origin);
			const say = (what) => problems.push(JSON.stringify(src) + ' in chunks of ' + Chunks + ': ' + what);
			const turn = new Turn(document.createElement('ol'), 'c', {});
			let kept = [];
			let block = null; // the code block at the end, as last rendered
			for (let i = 0, k = 0; i < src.length; i += Chunks[k++ % Chunks.length]) {
				turn.event({ type: 'text', text: src.slice(i, i + Chunks[k % Chunks.length]) });
				turn.bubble.render();
				const nodes = [...turn.bubble.body.childNodes];
				if (kept.some((n, j) => nodes[j] !== n)) say('a kept block was replaced after ' + i);
				kept = nodes.slice(0, nodes.length - turn.bubble.tail.length);
				const last = nodes[nodes.length - 1];
				const code = codeOf(last);
				if (block && code && nodes.length === block.at + 1 && code.textContent.startsWith(block.text) &&
					code.getAttribute('data-lang') === block.lang) {
					if (last !== block.node) say('a growing code block was replaced after ' + i);
					else if (last.querySelector('pre') !== block.pre) say('a growing code block\'s <pre> was replaced after ' + i);
				}
				block = code ? { node: last, pre: last.querySelector('pre'), at: nodes.length - 1, text: code.textContent, lang: code.getAttribute('data-lang') } : null;
			}
			const body = turn.bubble?.body ?? document.createElement('div');
			turn.event({ type: 'done', stop: 'answer' });
			const nodes = [...body.childNodes];
			if (kept.some((n, j) => nodes[j] !== n)) say('a kept block was replaced at the end');
			const want = document.createElement('div');
			want.append(...markdown(src));
			if (body.innerHTML !== want.innerHTML) say('got ' + body.innerHTML + ', want ' + want.innerHTML);
		}
		return problems.slice(0, 10);
	};
})`
