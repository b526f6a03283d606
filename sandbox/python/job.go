package python

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/quiverhq/quiver/sandbox"
)

// frameFile is one file of a frame: its path and how many of the bytes
// after the header are its content.
type frameFile struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// header is the first line boot.py reads from stdin.
type header struct {
	Code         string            `json:"code"`
	Inputs       map[string]string `json:"inputs"`
	Files        []frameFile       `json:"files"`
	Limits       rlimits           `json:"limits"`
	MaxFiles     int               `json:"max_files"`
	MaxFileBytes int64             `json:"max_file_bytes"`
}

// rlimits are the limits boot.py sets on itself before the script.
type rlimits struct {
	CPU    int64 `json:"cpu"`    // seconds, RLIMIT_CPU
	AS     int64 `json:"as"`     // bytes, RLIMIT_AS
	NProc  int   `json:"nproc"`  // RLIMIT_NPROC
	FSize  int64 `json:"fsize"`  // bytes, RLIMIT_FSIZE
	NoFile int   `json:"nofile"` // RLIMIT_NOFILE
}

// stdin is what the sandbox reads first: the header, then the files.
type stdin struct {
	data   []byte
	copied int64 // bytes of workspace files in data
}

// input builds the job's stdin: the code, the inputs, the limits and a
// copy of the workspace's files. A file the Workspace does not let the
// script read is left out; a workspace holding more than CopyBytes is
// refused with a message for the model (refused is not empty).
func (r *Runner) input(job sandbox.Job, lim sandbox.Limits) (in stdin, refused string, err error) {
	h := header{
		Code: job.Code, Inputs: map[string]string{}, Files: []frameFile{},
		Limits:   r.rlimits(lim),
		MaxFiles: maxWriteBack, MaxFileBytes: sandbox.MaxWriteBytes,
	}
	for _, i := range job.Inputs {
		h.Inputs[i.Name] = i.Content
	}
	var body bytes.Buffer
	if job.Workspace != nil {
		names, err := job.Workspace.ListFiles(".")
		if err != nil {
			return stdin{}, "the workspace could not be listed: " + err.Error(), nil
		}
		for _, name := range names {
			if _, err := sandbox.CheckPath(name); err != nil {
				continue
			}
			data, err := job.Workspace.ReadFile(name)
			if err != nil {
				continue
			}
			if in.copied+int64(len(data)) > r.cfg.CopyBytes {
				return stdin{}, fmt.Sprintf("the workspace holds more than the %d MiB of files the Python sandbox copies in; delete files you no longer need", r.cfg.CopyBytes>>20), nil
			}
			in.copied += int64(len(data))
			h.Files = append(h.Files, frameFile{Path: name, Size: int64(len(data))})
			body.Write(data)
		}
	}
	head, err := json.Marshal(h)
	if err != nil {
		return stdin{}, "", fmt.Errorf("sandbox/python: encode the job: %w", err)
	}
	in.data = append(append(head, '\n'), body.Bytes()...)
	return in, "", nil
}

// rlimits are the limits of one run.
func (r *Runner) rlimits(lim sandbox.Limits) rlimits {
	cpu := r.cfg.CPU
	if cpu <= 0 {
		cpu = lim.Wall
	}
	return rlimits{
		CPU:    max(int64((cpu+time.Second-1)/time.Second), 1),
		AS:     lim.MemoryBytes,
		NProc:  r.cfg.Processes,
		FSize:  sandbox.MaxWriteBytes,
		NoFile: maxOpenFiles,
	}
}
