package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// document is a fetched page turned into text for the model.
type document struct {
	// URL is the address the content came from, after redirects.
	URL string
	// Title is the page title; empty when the page has none.
	Title string
	// Format names the text: "markdown", "text" or "json".
	Format string
	// Text is the converted content, valid UTF-8.
	Text string
	// Truncated reports that the body was cut at the byte cap before
	// conversion.
	Truncated bool
}

// boilerplate lists the elements dropped before a whole-body conversion:
// they hold navigation, scripts and chrome, never the article.
var boilerplate = []string{"nav", "header", "footer", "aside", "form", "button", "svg", "canvas", "template", "select", "dialog"}

// newConverter builds the HTML-to-Markdown converter: CommonMark output with
// scripts, styles and the boilerplate elements removed. A Converter is safe
// for concurrent use.
func newConverter() *converter.Converter {
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin(table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal), table.WithSkipEmptyRows(true))))
	for _, tag := range boilerplate {
		conv.Register.TagType(tag, converter.TagTypeRemove, converter.PriorityStandard)
	}
	return conv
}

// binaryError reports content fetch_url does not read; its message names
// the content type.
type binaryError struct{ mediaType string }

func (e binaryError) Error() string {
	return fmt.Sprintf("cannot read %s content: fetch_url reads HTML, PDF, plain text and JSON only", e.mediaType)
}

// mediaType returns the lower-case media type of a response, sniffing the
// body when the header is missing or says only "application/octet-stream".
func mediaType(header string, body []byte) string {
	if mt := declaredType(header); mt != "" {
		return mt
	}
	mt, _, _ := mime.ParseMediaType(http.DetectContentType(body))
	return strings.ToLower(mt)
}

// declaredType returns the media type a Content-Type header names, or ""
// when it names none worth trusting (absent, malformed, octet-stream).
// The old "application/x-pdf" is read as "application/pdf".
func declaredType(header string) string {
	mt, _, err := mime.ParseMediaType(header)
	if err != nil || mt == "application/octet-stream" {
		return ""
	}
	if mt = strings.ToLower(mt); mt == "application/x-pdf" {
		return pdfType
	}
	return mt
}

// format names how content of media type mt is shown: "markdown" for HTML,
// "json", "text" for PDF and other textual types, "" for binary types.
func format(mt string) string {
	switch {
	case mt == pdfType:
		return "text"
	case mt == "text/html" || mt == "application/xhtml+xml":
		return "markdown"
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return "json"
	case strings.HasPrefix(mt, "text/") || mt == "application/xml" || strings.HasSuffix(mt, "+xml") ||
		mt == "application/javascript" || mt == "application/x-ndjson" || mt == "application/x-yaml" || mt == "application/yaml":
		return "text"
	}
	return ""
}

// textual reports whether fetch_url reads content of media type mt.
func textual(mt string) bool { return format(mt) != "" }

// convert turns a response body into a document according to its content
// type. Binary types give a binaryError; a PDF that cannot be read gives
// an error saying why.
func (f *fetcher) convert(ctx context.Context, body []byte, contentType string, page *url.URL) (document, error) {
	mt := mediaType(contentType, body)
	d := document{URL: page.String(), Format: format(mt)}
	if mt == pdfType {
		read := f.cfg.ReadPDF
		if read == nil {
			read = func(_ context.Context, body []byte) (string, string, error) { return ReadPDF(body) }
		}
		var err error
		if d.Title, d.Text, err = read(ctx, body); err != nil {
			if cause := errors.Unwrap(err); cause != nil {
				f.log.Info("pdf not read", "host", page.Host, "err", cause)
			}
			return document{}, err
		}
		if n := strings.Count(d.Text, UnreadablePages); n > 0 {
			d.Format = fmt.Sprintf("text, %d of %d pages unreadable", n, strings.Count(d.Text, "--- page "))
		}
		return d, nil
	}
	switch d.Format {
	case "markdown":
		d.Title, d.Text = f.htmlToMarkdown(body, contentType, page)
	case "json":
		d.Text = prettyJSON(decode(body, contentType))
	case "text":
		d.Text = strings.TrimSpace(decode(body, contentType))
	default:
		return document{}, binaryError{mediaType: mt}
	}
	return d, nil
}

// decode converts body to valid UTF-8, using the charset the header, a BOM
// or an HTML meta tag declares (Windows-1252 when the bytes are not UTF-8
// and nothing is declared, as browsers do).
func decode(body []byte, contentType string) string {
	enc, name, _ := charset.DetermineEncoding(body, contentType)
	if name != "utf-8" {
		if out, err := enc.NewDecoder().Bytes(body); err == nil {
			body = out
		}
	}
	body = bytes.TrimPrefix(body, []byte("\uFEFF"))
	if utf8.Valid(body) {
		return string(body)
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// prettyJSON indents valid JSON by one space per level; anything else is
// returned as it came.
func prettyJSON(s string) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(strings.TrimSpace(s)), "", " "); err != nil {
		return strings.TrimSpace(s)
	}
	return buf.String()
}

// htmlToMarkdown extracts the readable part of an HTML page and converts it
// to Markdown. When readability finds no article the whole body is
// converted with the boilerplate elements removed. It never fails: a page
// with no text gives "".
func (f *fetcher) htmlToMarkdown(body []byte, contentType string, page *url.URL) (title, md string) {
	root, err := html.Parse(strings.NewReader(decode(body, contentType)))
	if err != nil {
		return "", ""
	}
	title = documentTitle(root)
	domain := page.Scheme + "://" + page.Host
	parser := readability.NewParser()
	if art, err := parser.ParseDocument(root, page); err == nil && art.Node != nil {
		if t := strings.TrimSpace(art.Title()); t != "" {
			title = t
		}
		if out, err := f.conv.ConvertNode(art.Node, converter.WithDomain(domain)); err == nil {
			md = tidy(string(out))
		}
	}
	if md == "" {
		if out, err := f.conv.ConvertNode(root, converter.WithDomain(domain)); err == nil {
			md = tidy(string(out))
		}
	}
	return oneLine(title), md
}

// documentTitle returns the text of the first <title> element.
func documentTitle(n *html.Node) string {
	if n.Type == html.ElementNode && n.DataAtom == atom.Title {
		if n.FirstChild != nil && n.FirstChild.Type == html.TextNode {
			return n.FirstChild.Data
		}
		return ""
	}
	if n.Type == html.ElementNode && (n.DataAtom == atom.Body || n.DataAtom == atom.Svg) {
		return ""
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if t := documentTitle(c); t != "" {
			return t
		}
	}
	return ""
}

var blankLines = regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`)

// tidy makes converter output compact and valid UTF-8: no runs of blank
// lines, no trailing spaces at either end.
func tidy(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.TrimSpace(blankLines.ReplaceAllString(s, "\n\n"))
}

// oneLine collapses whitespace so a title stays on one header line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ToValidUTF8(s, "\uFFFD")), " ")
}
