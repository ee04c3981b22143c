"""jikken_track: the trial side of jikken for Python, standard library only.

A trial run by ``jikken run`` finds ``$JIKKEN_OUTPUT_DIR`` set; everything written here goes into
that folder and the runner uploads it to the run's store (a folder or an S3 bucket). The trial
needs no credentials and no network. Run by hand, without ``$JIKKEN_OUTPUT_DIR``, the files go to
``./jikken-out/<time>-<pid>`` and the path is printed once on stderr.

Files (the formats are documented in docs/tracking.md):

* ``metrics.jsonl``: one line per call of :func:`log_metric`,
  ``{"name":"loss","value":0.12,"step":3,"ts":1767225600123}``
* ``result.json``: a JSON object of final values, merged by :func:`result` and ``@track``
* ``logged_params.json``: a JSON object merged by :func:`log_params`
* ``artifacts/``: files copied by :func:`save_artifact`

NaN and infinities, which JSON cannot hold, are written as the strings ``"NaN"``,
``"Infinity"`` and ``"-Infinity"``.

Example::

    import jikken_track as jt

    for epoch in range(10):
        with jt.track.path(f"epoch{epoch}/"):
            jt.log_metric("loss", loss, step=epoch)

    @jt.track
    def evaluate():
        return {"accuracy": 0.93}

    evaluate()              # result.json gets {"evaluate": {"accuracy": 0.93}}
    jt.result(score=0.93)
"""

import contextlib
import contextvars
import functools
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time

__all__ = [
    "log_metric",
    "log_params",
    "save_artifact",
    "result",
    "track",
    "path",
    "output_dir",
    "encode",
]

METRICS_FILE = "metrics.jsonl"
RESULT_FILE = "result.json"
LOGGED_PARAMS_FILE = "logged_params.json"
ARTIFACTS_DIR = "artifacts"

_lock = threading.RLock()
_dir = None
_metrics_fd = None
_scope = contextvars.ContextVar("jikken_track_scope", default="")


def output_dir():
    """Return the folder this process writes into, choosing it on first use."""
    global _dir
    with _lock:
        if _dir is None:
            d = os.environ.get("JIKKEN_OUTPUT_DIR", "")
            if not d:
                stamp = time.strftime("%Y%m%d-%H%M%S")
                d = os.path.join("jikken-out", "%s-%d" % (stamp, os.getpid()))
                print(
                    "jikken_track: $JIKKEN_OUTPUT_DIR is not set (not under 'jikken run'); "
                    "writing metrics and results to %s" % d,
                    file=sys.stderr,
                )
            os.makedirs(d, exist_ok=True)
            _dir = d
        return _dir


def encode(value):
    """Return value with every float NaN or infinity replaced by its string form.

    Lists, tuples and dicts are walked; objects with ``tolist()`` or ``item()`` (numpy arrays
    and scalars) are converted first.
    """
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if hasattr(value, "tolist"):
        return encode(value.tolist())
    if hasattr(value, "item"):
        return encode(value.item())
    return value


def _dumps(obj, **kw):
    return json.dumps(encode(obj), allow_nan=False, ensure_ascii=False, **kw)


def _check_name(name):
    if not isinstance(name, str) or not name.strip():
        raise ValueError("jikken_track: a name must be a non-empty string, got %r" % (name,))
    if "\n" in name or "\r" in name:
        raise ValueError("jikken_track: name %r has a line break" % (name,))
    return name


def log_metric(name, value, step=None):
    """Append one metric line: name (scoped by track.path), a number, an optional int step."""
    name = _check_name(_scope.get() + name)
    if isinstance(value, str) or value is None:
        raise TypeError("jikken_track: metric %s: value must be a number, got %r" % (name, value))
    if hasattr(value, "item"):
        value = value.item()
    line = {"name": name, "value": float(value)}
    if step is not None:
        line["step"] = int(step)
    line["ts"] = int(time.time() * 1000)
    data = (_dumps(line, separators=(",", ":")) + "\n").encode("utf-8")
    global _metrics_fd
    with _lock:
        if _metrics_fd is None:
            _metrics_fd = os.open(
                os.path.join(output_dir(), METRICS_FILE),
                os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                0o644,
            )
        # One write per line on an O_APPEND descriptor: lines of concurrent writers stay whole.
        os.write(_metrics_fd, data)


def _merge(file, values):
    scope = _scope.get()
    scoped = {}
    for k, v in values.items():
        scoped[_check_name(scope + k)] = encode(v)
    with _lock:
        p = os.path.join(output_dir(), file)
        current = {}
        try:
            with open(p, encoding="utf-8") as f:
                current = json.load(f)
        except FileNotFoundError:
            pass
        if not isinstance(current, dict):
            raise ValueError("jikken_track: %s does not hold a JSON object" % p)
        current.update(scoped)
        _write_atomic(p, _dumps(current, indent=2, sort_keys=True) + "\n")


def _write_atomic(p, text):
    fd, tmp = tempfile.mkstemp(prefix=".tmp-" + os.path.basename(p) + "-", dir=os.path.dirname(p))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def log_params(params=None, **kw):
    """Merge parameters (a dict and/or keywords) into logged_params.json."""
    values = dict(params or {})
    values.update(kw)
    _merge(LOGGED_PARAMS_FILE, values)


def result(**values):
    """Merge final values into result.json; 'jikken results' shows them as columns."""
    _merge(RESULT_FILE, values)


def _check_rel(name):
    if not name or name.startswith("/") or "\\" in name:
        raise ValueError("jikken_track: artifact name %r: want a relative slash-separated path" % (name,))
    for seg in name.split("/"):
        if seg in ("", ".", ".."):
            raise ValueError("jikken_track: artifact name %r: empty, '.' or '..' segment" % (name,))
    return name


def save_artifact(src, name=None):
    """Copy the file or folder at src to artifacts/<name> (default: its base name, scoped by
    track.path) and return the name it got."""
    src = os.fspath(src)
    name = _check_rel(_scope.get() + (name or os.path.basename(os.path.normpath(src))))
    dst = os.path.join(output_dir(), ARTIFACTS_DIR, *name.split("/"))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.isdir(src):
        shutil.copytree(src, dst, dirs_exist_ok=True)
    else:
        shutil.copyfile(src, dst)
    return name


class _Track:
    """The ``@track`` decorator; ``track.path(prefix)`` scopes keys."""

    def __call__(self, fn=None, *, key=None):
        if isinstance(fn, str):
            return self.__call__(key=fn)
        if fn is None:
            return functools.partial(self.__call__, key=key)
        k = key or fn.__name__

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            value = fn(*args, **kwargs)
            result(**{k: value})
            return value

        return wrapper

    @contextlib.contextmanager
    def path(self, prefix):
        """Within the block, names and keys start with prefix (nested blocks join theirs)."""
        token = _scope.set(_scope.get() + prefix)
        try:
            yield
        finally:
            _scope.reset(token)


track = _Track()
path = track.path
