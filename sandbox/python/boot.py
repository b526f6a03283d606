# boot.py runs inside the sandbox, before the script, in the same Python
# process (sandbox/python). It reads the job from stdin (a JSON header line,
# then the workspace files' bytes), writes the files into the scratch
# workspace, sets the resource limits on itself (so they hold for the
# script and everything it starts), runs the script, and writes the report
# to fd 3 (a JSON header line, then the bytes of the files the script
# created or changed). The host trusts none of what comes back: every path
# and size is checked again before anything reaches the real workspace.
import hashlib, json, os, resource, signal, stat, sys, traceback

def _read_job():
    header = json.loads(sys.stdin.buffer.readline())
    seen = {}
    for f in header["files"]:
        data = sys.stdin.buffer.read(f["size"])
        d = os.path.dirname(f["path"])
        if d:
            os.makedirs(d, exist_ok=True)
        with open(f["path"], "wb") as out:
            out.write(data)
        seen[f["path"]] = hashlib.sha256(data).digest()
    return header, seen

def _limit(header):
    lim = header["limits"]
    # SIGXCPU at the soft limit, SIGKILL a second later at the hard one.
    resource.setrlimit(resource.RLIMIT_CPU, (lim["cpu"], lim["cpu"] + 1))
    resource.setrlimit(resource.RLIMIT_AS, (lim["as"], lim["as"]))
    resource.setrlimit(resource.RLIMIT_NPROC, (lim["nproc"], lim["nproc"]))
    resource.setrlimit(resource.RLIMIT_FSIZE, (lim["fsize"], lim["fsize"]))
    resource.setrlimit(resource.RLIMIT_NOFILE, (lim["nofile"], lim["nofile"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # A write past RLIMIT_FSIZE raises OSError (EFBIG) instead of killing.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

def _changed(seen, max_files, max_bytes):
    out = []
    for d, dirs, files in os.walk(".", followlinks=False):
        dirs.sort()
        for name in sorted(files):
            p = os.path.normpath(os.path.join(d, name))
            st = os.lstat(p)
            if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
                continue
            with open(p, "rb") as f:
                data = f.read(max_bytes + 1)
            if seen.get(p) == hashlib.sha256(data).digest():
                continue
            out.append((p, data))
            if len(out) == max_files:
                return out
    return out

def _main():
    report = os.fdopen(3, "wb")
    os.set_inheritable(3, False)
    os.closerange(4, 1 << 16)
    header, seen = _read_job()
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdin = open(0, "r", closefd=False)
    _limit(header)
    result = {"error": "", "stop": ""}
    g = {"__name__": "__main__", "__builtins__": __builtins__, "inputs": header["inputs"]}
    try:
        exec(compile(header["code"], "<script>", "exec"), g)
    except SystemExit as e:
        if e.code not in (None, 0):
            result["error"] = "the script exited with status %s" % (e.code,)
    except MemoryError:
        result["stop"] = "memory"
    except BaseException as e:
        tb = e.__traceback__.tb_next if e.__traceback__ else None
        result["error"] = "".join(traceback.format_exception(type(e), e, tb))[-4096:]
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    try:
        files = _changed(seen, header["max_files"], header["max_file_bytes"])
    except BaseException as e:
        files = []
        result["error"] += "\nthe files written could not be collected: %s" % e
    result["files"] = [{"path": p, "size": len(d)} for p, d in files]
    report.write(json.dumps(result).encode() + b"\n")
    for _, d in files:
        report.write(d)
    report.flush()
    os._exit(0)

_main()
