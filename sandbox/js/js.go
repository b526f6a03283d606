// Package js is run_code's in-process isolation level: it runs a
// JavaScript (ES2023) script as an ES module in modernc.org/quickjs, a
// pure-Go interpreter, inside the server's own process. It works
// everywhere the server builds, with no cgo, no helper binary and no
// operating-system support.
//
// # What it guarantees
//
// The interpreter has no I/O by construction: a fresh QuickJS context per
// run, created without quickjs-libc's std and os modules, so it has no
// files, sockets, name resolution, processes, threads, timers or
// environment variables. The script sees the ECMAScript built-ins (Date
// and Math.random included: it may read the clock) and only these:
//
//   - console.log (and its aliases info, warn, error, debug), captured into
//     Result.Stdout up to Limits.OutputBytes. Past that the output is cut
//     (Result.Truncated) and the script is stopped, so printing without
//     end costs the host at most the limit.
//   - inputs, a frozen object mapping each Job input's name to its content.
//   - workspace.read(path), workspace.write(path, text) and
//     workspace.list(dir), only when the Job has a Workspace. Every path
//     passes [sandbox.CheckPath] before the Workspace sees it: absolute
//     paths, "..", control characters (NUL included) and Quiver's reserved
//     names are refused in the interpreter's host functions.
//
// import of any module, static or dynamic, is refused by a module loader
// that loads nothing. Atomics.wait cannot block. Nothing outlives Run: the
// VM and every pending promise job are freed when it returns, and a
// promise still pending then (an await on something that never settles)
// is reported in Result.Error.
//
// The script is a module: strict mode, top-level await, this undefined.
//
// Limits: the interpreter's allocations are capped at Limits.MemoryBytes
// (an allocation past it throws an out-of-memory error; uncaught, the run
// is reported as stopped for memory, and the next run starts afresh).
// The run is interrupted, past any try/catch, at Limits.Wall and as soon
// as the context ends: QuickJS polls for the interrupt in loops, calls and
// regular expressions alike. Recursion is bounded by the library's stack
// limit, a catchable "stack overflow" rather than a crashed process.
//
// # What it does not
//
//   - CPU time is wall time here: the script runs on the caller's
//     goroutine, so the wall limit bounds its CPU use too. No process
//     limit is needed: a script cannot start processes or threads.
//   - The memory limit counts the interpreter's heap, not the Go copies of
//     strings crossing into Go: a console.log argument (cut to the output
//     limit first), a workspace.write text (at most sandbox.MaxWriteBytes),
//     the message of an uncaught exception. Each is at most one string the
//     script could allocate, and garbage once the call returns.
//   - A promise the script does not await that rejects is not reported:
//     QuickJS's rejection tracker is not exposed by the library. Nor can
//     the runner see how a script ended that replaced Promise.prototype.then
//     (it watches the module's promise with it); such a script can only
//     misreport its own end, under the same limits.
//   - The interpreter shares the server's address space: a bug in QuickJS
//     or its Go translation is a bug in the server. The out-of-process
//     level is the one for code that must not share it.
//   - The Workspace's own quotas (file size, file count) are its business;
//     this package checks paths only.
package js

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"modernc.org/quickjs"

	"github.com/quiverhq/quiver/sandbox"
)

//go:embed boot.js
var bootJS string

// Runner is the in-process [sandbox.Runner]. The zero Runner is ready to
// use, holds no state and is safe for concurrent use: each Run creates
// its own VM and closes it before returning.
type Runner struct{}

var _ sandbox.Runner = Runner{}

// Run validates job (see [sandbox.Job.Validate]), runs its code in a
// fresh VM and returns what it printed and how it ended. The script's
// errors and the limits it hit are in the Result; the error is non-nil for
// an invalid job, a VM that failed to start, a Workspace that panicked, or
// a ctx that ended before the script did (the Result then says
// sandbox.StopCancelled).
func (Runner) Run(ctx context.Context, job sandbox.Job) (res sandbox.Result, err error) {
	if err := job.Validate(); err != nil {
		return sandbox.Result{}, err
	}
	start := time.Now()
	vm, err := quickjs.NewVM()
	if err != nil {
		return sandbox.Result{}, fmt.Errorf("sandbox/js: start the VM: %w", err)
	}
	defer func() {
		if cerr := vm.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("sandbox/js: close the VM: %w", cerr)
		}
	}()
	done := make(chan struct{})
	defer close(done)
	stop := context.AfterFunc(ctx, func() { interruptUntil(vm, done) })
	defer stop()

	r := &run{vm: vm, job: job, lim: job.Limits.WithDefaults()}
	r.deadline = start.Add(r.lim.Wall)
	res, err = r.exec(ctx)
	res.Elapsed = time.Since(start)
	return res, err
}

// interruptUntil interrupts vm until done is closed. Once is not enough:
// each call into the VM clears a pending interrupt, so one landing between
// two calls would be lost. Interrupt is safe from any goroutine, also
// while and after the VM closes.
func interruptUntil(vm *quickjs.VM, done <-chan struct{}) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		vm.Interrupt()
		select {
		case <-done:
			return
		case <-tick.C:
		}
	}
}

// run is the state of one Run, used from its goroutine only (host
// functions run on it too).
type run struct {
	vm       *quickjs.VM
	job      sandbox.Job
	lim      sandbox.Limits
	deadline time.Time
	out      output
	// infra is a failure of the host side (a Workspace that panicked); the
	// script was interrupted and Run returns it.
	infra error
	// settled and rejected record how the module's evaluation promise
	// ended; rejected is nil when it was fulfilled.
	settled  bool
	rejected error
}

// exec sets the VM up, evaluates the module, drains its promise jobs and
// reports.
func (r *run) exec(ctx context.Context) (sandbox.Result, error) {
	if err := r.setup(ctx); err != nil {
		// Inputs too large for the memory limit, or no time left, are the
		// job's to report; anything else is the runner's failure.
		if !isOOM(err) && !errors.Is(err, errWall) && ctx.Err() == nil {
			return sandbox.Result{}, fmt.Errorf("sandbox/js: set up the VM: %w", err)
		}
		return r.report(ctx, err)
	}
	err := r.evaluate(ctx)
	if err == nil {
		err = r.drain(ctx)
	}
	return r.report(ctx, err)
}

// setup applies the limits, registers the host functions and runs
// boot.js, which hides them behind console, inputs and workspace.
func (r *run) setup(ctx context.Context) error {
	r.vm.SetMemoryLimit(uintptr(r.lim.MemoryBytes))
	r.vm.SetCanBlock(false) // Atomics.wait would block past every limit
	r.vm.SetModuleLoader(refuseModule, nil)
	if err := r.register(); err != nil {
		return err
	}
	inputs := make(map[string]string, len(r.job.Inputs))
	for _, in := range r.job.Inputs {
		inputs[in.Name] = in.Content
	}
	inputsJSON, err := json.Marshal(inputs)
	if err != nil {
		return fmt.Errorf("encode the inputs: %w", err)
	}
	if err := r.arm(ctx); err != nil {
		return err
	}
	if _, err := r.vm.Eval(bootJS, quickjs.EvalGlobal); err != nil {
		return fmt.Errorf("boot: %w", err)
	}
	if err := r.arm(ctx); err != nil {
		return err
	}
	if _, err := r.vm.Call("__quiver_boot", r.lim.OutputBytes, sandbox.MaxWriteBytes, string(inputsJSON), r.job.Workspace != nil); err != nil {
		return fmt.Errorf("boot: %w", err)
	}
	if err := r.arm(ctx); err != nil {
		return err
	}
	return r.warmThen()
}

// warmThen calls Value.Then once on a settled promise, so the library
// registers its callback class now, not when evaluate watches a module
// that may have used up the memory limit.
func (r *run) warmThen() error {
	p, err := r.vm.EvalValue("Promise.resolve()", quickjs.EvalGlobal)
	if err != nil {
		return fmt.Errorf("boot: %w", err)
	}
	defer p.Free()
	then, err := p.Then(func(quickjs.Value) {}, nil)
	if err != nil {
		return fmt.Errorf("boot: %w", err)
	}
	then.Free()
	return nil
}

// register makes the host functions globals for boot.js to take.
func (r *run) register() error {
	type host struct {
		name string
		fn   quickjs.HostFunc
	}
	fns := []host{{"__quiver_print", r.print}}
	if r.job.Workspace != nil {
		fns = append(fns, host{"__quiver_read", r.read}, host{"__quiver_write", r.write}, host{"__quiver_list", r.list})
	}
	for _, h := range fns {
		if err := r.vm.RegisterHostFunc(h.name, h.fn); err != nil {
			return fmt.Errorf("register %s: %w", h.name, err)
		}
	}
	return nil
}

// refuseModule is the module loader: there are no modules to import.
func refuseModule(_ *quickjs.VM, name string) (string, error) {
	return "", fmt.Errorf("cannot import %q: the sandbox has no modules (no std, os, fs, net or packages)", name)
}

// arm sets the VM's eval timeout to what is left of the wall limit. The
// library restarts the timeout on every call into JavaScript, so each call
// is armed with the remainder; ctx is checked first (interruptUntil stops
// a call it ends during). errWall means nothing is left.
func (r *run) arm(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	left := time.Until(r.deadline)
	if left <= 0 {
		return errWall
	}
	return r.vm.SetEvalTimeout(left)
}

// errWall reports that the wall limit passed between calls into the VM;
// errMemory that the host side could not allocate in the VM.
var (
	errWall   = errors.New("wall limit reached")
	errMemory = errors.New("out of memory")
)

// evaluate runs the script as a module and watches its evaluation promise,
// which settles once the module's top-level code (awaits included) ends.
func (r *run) evaluate(ctx context.Context) error {
	if err := r.arm(ctx); err != nil {
		return err
	}
	v, err := r.vm.EvalValue(r.job.Code, quickjs.EvalModule)
	if err != nil {
		return err
	}
	defer v.Free()
	if err := r.arm(ctx); err != nil { // Then runs JavaScript: a then the script replaced
		return err
	}
	then, err := v.Then(func(quickjs.Value) { r.settled = true }, func(e quickjs.Value) {
		r.settled = true
		r.rejected = errors.New("the script's promise was rejected")
		if qe := quickjs.ErrorFromValue(e); qe != nil {
			r.rejected = qe
		}
	})
	if err != nil {
		var qe *quickjs.Error
		if errors.As(err, &qe) {
			return err // thrown by the engine (out of memory) or a replaced then
		}
		// The library could not allocate its callbacks: the script has
		// used up the memory limit.
		return fmt.Errorf("watch the module: %w (%v)", errMemory, err)
	}
	then.Free()
	return nil
}

// drainBound is how many jobs the library runs in one ExecutePendingJobs
// before it gives up with a plain error; drain then calls it again, as the
// wall limit is what bounds a script.
const drainBound = 1 << 20

// drain runs the promise jobs (await continuations, then callbacks) until
// none is left, the script is stopped, or a job throws.
func (r *run) drain(ctx context.Context) error {
	for {
		if r.out.full || r.infra != nil {
			return nil
		}
		if err := r.arm(ctx); err != nil {
			return err
		}
		n, err := r.vm.ExecutePendingJobs()
		var qe *quickjs.Error
		switch {
		case err != nil && !errors.As(err, &qe) && n >= drainBound:
			continue // a self-feeding queue; the wall limit stops it
		case err != nil:
			return err
		case n == 0:
			return nil
		}
	}
}
