// boot.js runs before the script, in the same VM. It takes the Go host
// functions the runner registered as globals, removes those globals and
// exposes them only through console, inputs and workspace, so the script
// reaches nothing else and cannot call the raw host functions.
globalThis.__quiver_boot = function (cap, writeCap, inputsJSON, hasWorkspace) {
	"use strict";
	const g = globalThis;
	const print = g.__quiver_print, read = g.__quiver_read,
		write = g.__quiver_write, list = g.__quiver_list;
	for (const name of ["__quiver_boot", "__quiver_print", "__quiver_read", "__quiver_write", "__quiver_list"]) {
		delete g[name];
	}
	// Captured now, so a script that replaces them changes nothing here.
	const stringify = JSON.stringify, toText = String, ErrorType = Error;

	function show(v) {
		if (typeof v === "string") {
			return v;
		}
		try {
			if (typeof v === "object" && v !== null && !(v instanceof ErrorType)) {
				const s = stringify(v);
				if (s !== undefined) {
					return s;
				}
			}
			return toText(v);
		} catch (e) {
			return "[unprintable value]";
		}
	}

	// log joins its arguments as console.log does and hands Go at most
	// cap+1 characters: enough for Go to see the output is over its limit,
	// never a gigabyte string to copy.
	function log(...args) {
		let s = "";
		for (let i = 0; i < args.length; i++) {
			s += (i > 0 ? " " : "") + show(args[i]);
			if (s.length > cap) {
				break;
			}
		}
		if (s.length > cap) {
			s = s.slice(0, cap + 1);
		}
		print(s);
	}
	g.console = Object.freeze({ log, info: log, warn: log, error: log, debug: log });

	g.inputs = Object.freeze(JSON.parse(inputsJSON));

	// The host functions throw TypeErrors; the script gets plain Errors
	// with the Go message.
	function call(f, args) {
		try {
			return f(...args);
		} catch (e) {
			throw new ErrorType(e && e.message !== undefined ? e.message : toText(e));
		}
	}
	if (hasWorkspace) {
		g.workspace = Object.freeze({
			read(path) { return call(read, [path]); },
			// A string longer than writeCap characters is more than writeCap
			// bytes: refused here, it is never copied out to Go.
			write(path, text) {
				if (typeof text === "string" && text.length > writeCap) {
					throw new ErrorType("workspace.write: the text is " + text.length +
						" characters long; the limit is " + writeCap + " bytes");
				}
				call(write, [path, text]);
			},
			list(dir) { return call(list, [dir === undefined ? "." : dir]); },
		});
	}
};
