package python

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/quiverhq/quiver/sandbox"
)

// maxErrorBytes bounds Result.Error.
const maxErrorBytes = 4 << 10

// report is what boot.py writes to fd 3 once the script has ended.
type report struct {
	Error string      `json:"error"`
	Stop  string      `json:"stop"`
	Files []frameFile `json:"files"`
}

// Exit statuses of a script killed by its CPU limit: SIGXCPU at the soft
// limit, SIGKILL at the hard one (128 + signal, as bwrap reports them).
const (
	exitXCPU = 128 + 24
	exitKill = 128 + 9
)

// report turns the outcome into a Result and writes the files the script
// wrote back through ws.
func (p *proc) report(ctx context.Context, o outcome, ws sandbox.Workspace) sandbox.Result {
	res := sandbox.Result{Stdout: text(o.out), Truncated: o.truncated}
	p.mu.Lock()
	killed := p.killed
	p.mu.Unlock()
	switch killed {
	case sandbox.StopOutput:
		res.Stop, res.Error = killed, fmt.Sprintf("stopped: the script printed more than its %s output limit", size(int64(p.lim.OutputBytes)))
		return res
	case sandbox.StopWall:
		res.Stop, res.Error = killed, fmt.Sprintf("stopped: the script ran past its %v limit", p.lim.Wall)
		return res
	case sandbox.StopCancelled:
		res.Stop, res.Error = killed, "stopped: the run was cancelled"
		return res
	}
	rep, files, ok := parseReport(o.report)
	switch {
	case !ok && (o.exit == exitXCPU || o.exit == exitKill):
		res.Stop, res.Error = sandbox.StopCPU, fmt.Sprintf("stopped: the script used more than its %d s of CPU time", p.r.rlimits(p.lim).CPU)
		return res
	case !ok:
		res.Error = fmt.Sprintf("the sandbox ended without a report (exit status %d); the script may have closed its report channel or crashed the interpreter", o.exit)
		return res
	case rep.Stop == "memory":
		res.Stop, res.Error = sandbox.StopMemory, fmt.Sprintf("stopped: the script ran out of memory (MemoryError; its limit is %s)", size(p.lim.MemoryBytes))
	default:
		res.Error = cut(rep.Error, maxErrorBytes)
	}
	if ws != nil && ctx.Err() == nil {
		res.Error = joinLines(res.Error, writeBack(ws, rep.Files, files))
	}
	return res
}

// parseReport splits boot.py's report into its header and the files'
// contents, checking that the sizes add up.
func parseReport(b []byte) (report, [][]byte, bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return report{}, nil, false
	}
	var rep report
	if err := json.Unmarshal(b[:i], &rep); err != nil || len(rep.Files) > maxWriteBack {
		return report{}, nil, false
	}
	body := b[i+1:]
	files := make([][]byte, len(rep.Files))
	for k, f := range rep.Files {
		if f.Size < 0 || f.Size > int64(len(body)) {
			return report{}, nil, false
		}
		files[k], body = body[:f.Size], body[f.Size:]
	}
	return rep, files, len(body) == 0
}

// writeBack writes each file the script created or changed through ws,
// after the sandbox's own path check; it returns a line per file that
// could not be saved.
func writeBack(ws sandbox.Workspace, meta []frameFile, files [][]byte) string {
	var errs []string
	for k, f := range meta {
		p, err := sandbox.CheckPath(f.Path)
		if err == nil && len(files[k]) > sandbox.MaxWriteBytes {
			err = fmt.Errorf("%s is %d bytes; the limit is %d", p, len(files[k]), sandbox.MaxWriteBytes)
		}
		if err == nil {
			err = ws.WriteFile(p, files[k])
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("not saved to the workspace: %v", err))
		}
	}
	return strings.Join(errs, "\n")
}

func joinLines(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

// text is the output as valid UTF-8: a character the output limit cut in
// two is dropped, and any other invalid byte replaced.
func text(b []byte) string {
	s := string(b)
	for i := 1; i < utf8.UTFMax && i <= len(s); i++ {
		if utf8.RuneStart(s[len(s)-i]) {
			if !utf8.FullRuneInString(s[len(s)-i:]) {
				s = s[:len(s)-i]
			}
			break
		}
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// cut returns the longest prefix of s of at most n bytes that ends on a
// character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// size renders a byte count for messages: "64 KiB", "512 MiB".
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
